import FoundationEssentials
import Synchronization

/// Ctrl-C (or SIGTERM), as something a command can wait for.
///
/// Commands that download or play stop by themselves when it comes (parts kept, the position
/// saved): they run those phases inside `handling(_:)`. Any other work (a feed being fetched,
/// parsed or stored) is cancelled by `MonsoonCLI.run`, which then exits 130 at once.
public final class Interruption: Sendable {
    private struct State {
        var triggered = false
        var nextWaiter = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        /// Phases under way that stop by themselves.
        var handlers = 0
        /// Whether one was under way when the interruption came (what decides who stops the work:
        /// a phase that then ends quickly must not leave the rest of the command to be cancelled).
        var handledWhenTriggered = false
    }

    private let state = Mutex(State())

    public init() {}

    public var isTriggered: Bool { state.withLock { $0.triggered } }

    /// A phase that stops by itself was under way when the interruption came (or, before it came,
    /// is under way now): the interruption is left to it.
    var isHandled: Bool { state.withLock { $0.triggered ? $0.handledWhenTriggered : $0.handlers > 0 } }

    public func trigger() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            if !state.triggered { state.handledWhenTriggered = state.handlers > 0 }
            state.triggered = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Runs `body`, a phase that watches for the interruption itself and stops cleanly.
    func handling<T>(_ body: () async throws -> T) async rethrows -> T {
        state.withLock { $0.handlers += 1 }
        defer { state.withLock { $0.handlers -= 1 } }
        return try await body()
    }

    /// Returns once triggered, or when the waiting task is cancelled.
    public func wait() async {
        let ticket = state.withLock { state -> Int in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.triggered || Task.isCancelled { return true }
                    state.waiters[ticket] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: ticket) }?.resume()
        }
    }

    /// Whether the interruption came before `task` ended (false: the task ended first).
    func comesBefore<T: Sendable>(_ task: Task<T, Error>) async -> Bool {
        await Self.first(of: { _ = await task.result; return false }, { [self] in
            await wait()
            return isTriggered
        })
    }

    /// Whether `task` ends within `seconds`.
    static func ends<T: Sendable>(_ task: Task<T, Error>, within seconds: Double) async -> Bool {
        await first(of: { _ = await task.result; return true }, {
            try? await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))   // cancelled: the task ended first
            return false
        })
    }

    /// The answer of whichever of `a` and `b` answers first; the other is cancelled (a task's end
    /// cannot be: waiting for it goes on unseen, and ends with it).
    private static func first(of a: @escaping @Sendable () async -> Bool, _ b: @escaping @Sendable () async -> Bool) async -> Bool {
        let race = Race()
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            for side in [a, b] {
                race.add(Task {
                    let answer = await side()
                    if race.win() {
                        continuation.resume(returning: answer)
                        race.cancelAll()
                    }
                })
            }
            // One that answered before the other was made could not cancel it: done here.
            if race.isWon { race.cancelAll() }
        }
    }

    /// Who answered first, and the tasks to cancel then.
    private final class Race: Sendable {
        private let state = Mutex((won: false, tasks: [Task<Void, Never>]()))

        var isWon: Bool { state.withLock { $0.won } }

        func add(_ task: Task<Void, Never>) { state.withLock { $0.tasks.append(task) } }

        /// True for the first caller only.
        func win() -> Bool {
            state.withLock { state in
                defer { state.won = true }
                return !state.won
            }
        }

        func cancelAll() {
            for task in state.withLock({ $0.tasks }) { task.cancel() }
        }
    }
}
