import FoundationEssentials

/// One attempt of an in-memory fetch, waiting for its answer.
final class FetchJob: Sendable {
    enum Outcome: Sendable {
        case response(FetchResponse)
        case failure(RetryPolicy.Failure)
        case cancelled
    }

    let request: FetchRequest
    let token: Int
    /// Not started before this time of the engine's clock (a retry's backoff); nil: at once.
    let notBefore: Date?
    private let continuation: Locked<CheckedContinuation<Outcome, Never>?>

    init(request: FetchRequest, token: Int, notBefore: Date?, continuation: CheckedContinuation<Outcome, Never>) {
        self.request = request
        self.token = token
        self.notBefore = notBefore
        self.continuation = Locked(continuation)
    }

    /// Whether the fetch has had its answer (then a late start is skipped).
    var isCompleted: Bool { continuation.withLock { $0 == nil } }

    /// Answers the waiting fetch; later calls do nothing (a cancel can race the end).
    func complete(_ outcome: Outcome) {
        let waiter = continuation.withLock { state -> CheckedContinuation<Outcome, Never>? in
            defer { state = nil }
            return state
        }
        waiter?.resume(returning: outcome)
    }
}
