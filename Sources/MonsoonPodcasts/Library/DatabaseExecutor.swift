import Dispatch
import Synchronization

/// A task executor with a thread of its own (a serial dispatch queue), for a library's database
/// work. SQLite's writes, and its waits of up to the busy timeout (10 s) for another process's
/// lock, block the thread they run on, which must never be one of Swift's cooperative pool: there
/// are only as many of those as cores, and every task of the process shares them.
///
/// Work run here stays in its task (cancellation, task-locals), only on this thread: see
/// `PodcastLibrary.onDatabase`.
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

    /// Whether a job runs on the thread now (database work, or its wait for a lock), for the
    /// tests that need to know a call is under way. Nothing else reads it.
    var isBusy: Bool { running.load(ordering: .relaxed) > 0 }
}
