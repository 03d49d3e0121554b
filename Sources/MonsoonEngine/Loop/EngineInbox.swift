
import Dispatch

/// The one way into the transfer thread from any other thread: a locked list
/// of jobs, and `curl_multi_wakeup` to interrupt the thread's poll (a semaphore before
/// there is a multi handle: while curl loads, or before an engine in memory needs it).
final class EngineInbox: Sendable {
    typealias Job = @Sendable (EngineLoop) -> Void

    /// The multi handle's address, only ever passed to `curl_multi_wakeup`,
    /// which libcurl documents as safe from any thread.
    private struct Wakeup: @unchecked Sendable {
        let raw: UnsafeMutableRawPointer
    }

    private struct State {
        var jobs: [Job] = []
        var wakeup: Wakeup?
        var closed = false
    }

    private let state = Locked(State())
    /// Signalled for the first job posted since the loop last took them, until a multi handle is attached.
    private let arrived = DispatchSemaphore(value: 0)
    /// Every failure to save the queue, still there once the inbox is closed.
    let saveFailures = SaveFailures()

    /// Posts a job for the transfer thread; false once the engine has shut down.
    @discardableResult
    func post(_ job: @escaping Job) -> Bool {
        state.withLock { state in
            guard !state.closed else { return false }
            state.jobs.append(job)
            // Only the first job since the loop last took them needs to wake it: the loop takes
            // every job at once, and that wakeup is still pending until it does. Woken under the
            // lock so the handle cannot be cleaned up meanwhile (see `close`).
            if state.jobs.count == 1 {
                if let wakeup = state.wakeup { MultiHandle.wakeup(wakeup.raw) } else { arrived.signal() }
            }
            return true
        }
    }

    /// Called on the transfer thread once its multi handle exists. Jobs posted since the loop last
    /// took them signalled the semaphore: the handle is woken for them, or its first poll would wait.
    func attach(_ multi: MultiHandle) {
        state.withLock { state in
            state.wakeup = Wakeup(raw: multi.raw)
            if !state.jobs.isEmpty { MultiHandle.wakeup(multi.raw) }
        }
    }

    /// Waits for a job, before a multi handle is attached (transfer thread). It may return with none:
    /// a signal can outlast the jobs it was for, taken meanwhile.
    func waitForJobs() {
        arrived.wait()
    }

    /// Takes every waiting job (transfer thread).
    func takeJobs() -> [Job] {
        state.withLock { state in
            defer { state.jobs = [] }   // handed off whole: keeping capacity would allocate another buffer that size
            return state.jobs
        }
    }

    /// Refuses further jobs and forgets the multi handle, before it is cleaned up.
    /// Returns the jobs that were still waiting.
    func close() -> [Job] {
        state.withLock { state in
            state.closed = true
            state.wakeup = nil
            defer { state.jobs.removeAll() }
            return state.jobs
        }
    }
}
