import Dispatch
import Synchronization

/// A task executor with a thread of its own, for a library's database work: SQLite's writes, and its waits of up to 10 s
/// for another process's lock, must never block one of Swift's cooperative threads (only as many as cores). Work run
/// here stays in its task (cancellation, task-locals): see `PodcastLibrary.onDatabase`.
package final class DatabaseExecutor: TaskExecutor {
    private let queue: DispatchQueue
    private let running = Atomic(0)
    /// Set on the executor's queue to its label: `DispatchQueue.getSpecific(key: queueLabel)` says
    /// which one the calling code runs on (nil: none of these).
    static let queueLabel = DispatchSpecificKey<String>()

    /// - Parameter label: the queue's name, as a debugger or a crash report shows it.
    package init(label: String) {
        queue = DispatchQueue(label: label)
        queue.setSpecific(key: Self.queueLabel, value: label)
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async {
            self.running.add(1, ordering: .relaxed)
            job.runSynchronously(on: executor)
            self.running.subtract(1, ordering: .relaxed)
        }
    }

    /// Whether a job runs on the thread now, for the tests that need to know a call is under way.
    var isBusy: Bool { running.load(ordering: .relaxed) > 0 }
}
