import CCurl
import Foundation

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


/// In-memory fetches: small bodies (feeds) on the same multi handle as downloads,
/// with their own concurrency limit so a refresh never waits behind media. A retry waits for
/// its time on the engine's clock in the `FetchLine`, as a download's does.
extension EngineCore {
    func submitFetch(_ job: FetchJob) {
        guard !stopping else { job.complete(.cancelled); return }
        if fetches.submit(job, now: configuration.clock.now) { scheduler.needsScheduling = true }
    }

    func cancelFetch(token: Int) {
        if fetches.cancelWaiting(token: token) { return }
        for (raw, transfer) in transfers.byHandle {
            guard case .fetch(let job) = transfer.purpose, job.token == token else { continue }
            multi.remove(transfer.easy)
            transfers.removeHandle(raw)
            fetches.ended()
            scheduler.needsScheduling = true
            job.complete(.cancelled)
            return
        }
    }

    func startQueuedFetches() {
        while let job = fetches.next(limit: configuration.maxConcurrentFetches) {
            let transfer = Transfer.fetch(job, configuration: configuration, handles: transfers.easyHandles)
            guard multi.add(transfer.easy) else {
                fetches.ended()
                job.complete(.failure(RetryPolicy.Failure(error: DownloadError(.network, "libcurl refused to start the transfer"), isTransient: false, retryAfter: nil, madeProgress: false)))
                continue
            }
            transfers.started(transfer)
        }
    }

    func finishFetch(_ transfer: Transfer, job: FetchJob, code: CURLcode) {
        fetches.ended()
        scheduler.needsScheduling = true
        let outcome = fetchOutcome(transfer, job: job, code: code)
        // With a WARC, the result may wait for the fetch's record (`WARCArchive.record(fetch:body:then:)`).
        guard let archive = configuration.warc, let exchanges = transfer.warcExchanges else { return job.complete(outcome) }
        archive.record(fetch: exchanges, body: code == CURLE_OK && transfer.state.phase.abort == nil ? transfer.memory : nil) { job.complete(outcome) }
    }

    private func fetchOutcome(_ transfer: Transfer, job: FetchJob, code: CURLcode) -> FetchJob.Outcome {
        if let error = transfer.state.phase.abort?.error {
            return .failure(RetryPolicy.Failure(error: error, isTransient: false, retryAfter: nil, madeProgress: false))
        }
        guard code == CURLE_OK else {
            return .failure(FailureClassifier.curlFailure(code: Int(code.rawValue), text: transfer.errorText(code), stall: configuration.stall))
        }
        guard transfer.head.isComplete || transfer.head.status == 0 else {
            let error = DownloadError(.truncated, "the connection closed in the middle of the response's head")
            return .failure(RetryPolicy.Failure(error: error, isTransient: true, retryAfter: nil, madeProgress: false))
        }
        let finalURL = transfer.easy.string(CURLINFO_EFFECTIVE_URL).flatMap(URL.init(string:)) ?? job.request.url
        return .response(FetchResponse(
            status: transfer.head.status,
            headers: transfer.head.fields.map { FetchResponse.Header(name: $0.name, value: $0.value) },
            finalURL: finalURL,
            redirects: transfer.redirects,
            body: Data(transfer.memory)))
    }
}
