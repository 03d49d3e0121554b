import CCurl
import FoundationEssentials

/// The in-memory fetches waiting to start: those queued now, those whose retry waits for its
/// time on the engine's clock, and how many run.
///
/// The loop owns one and routes to it; only the transfer thread touches it. The loop starts the
/// transfers (`next(limit:)` says which job) and tells it when one ends; fetches have their own
/// limit, so a feed's refresh never waits behind media.
struct FetchLine {
    private(set) var queued: [FetchJob] = []
    /// Fetches posted to retry later, until their `notBefore` on the engine's clock.
    private(set) var waiting: [FetchJob] = []
    private(set) var running = 0

    /// Takes in a posted fetch.
    /// - Returns: whether it is queued now (false: it waits for its time, or was cancelled).
    mutating func submit(_ job: FetchJob, now: Date) -> Bool {
        guard !job.isCompleted else { return false }   // cancelled before it got here
        if let at = job.notBefore, at > now {
            waiting.append(job)   // the poll wakes for it (`nextDue`)
            return false
        }
        queued.append(job)
        return true
    }

    /// Queues the waiting fetches whose time has come, in the order they were posted.
    /// - Returns: whether any was due.
    mutating func promoteDue(now: Date) -> Bool {
        guard let due = nextDue, due <= now else { return false }
        let isDue = { (job: FetchJob) in (job.notBefore ?? now) <= now }
        queued += waiting.filter(isDue)   // one cancelled meanwhile is skipped at its start
        waiting.removeAll(where: isDue)
        return true
    }

    /// Whether a fetch is queued or waits for its time (curl is needed then).
    var hasWork: Bool { !queued.isEmpty || !waiting.isEmpty }

    /// When the first waiting fetch is due, if one waits.
    var nextDue: Date? {
        waiting.compactMap(\.notBefore).min()
    }

    /// Cancels the fetch `token` if it has not started.
    /// - Returns: whether it was found here (false: it runs, or has ended).
    mutating func cancelWaiting(token: Int) -> Bool {
        if let index = queued.firstIndex(where: { $0.token == token }) {
            queued.remove(at: index).complete(.cancelled)
            return true
        }
        if let index = waiting.firstIndex(where: { $0.token == token }) {
            waiting.remove(at: index).complete(.cancelled)
            return true
        }
        return false
    }

    /// The next fetch to start while fewer than `limit` run, counted as running (a cancelled one
    /// is skipped); nil when none may start.
    mutating func next(limit: Int) -> FetchJob? {
        while running < limit, !queued.isEmpty {
            let job = queued.removeFirst()
            if job.isCompleted { continue }
            running += 1
            return job
        }
        return nil
    }

    /// A running fetch ended (or its transfer never started): its slot is free.
    mutating func ended() {
        running -= 1
    }

    /// Starts the queued fetches while fewer than the limit run, on `multi`, kept in `transfers`.
    mutating func start(configuration: EngineConfiguration, transfers: TransferTable, multi: MultiHandle) {
        while let job = next(limit: configuration.maxConcurrentFetches) {
            let transfer = Transfer.fetch(job, configuration: configuration, handles: transfers.easyHandles)
            guard multi.add(transfer.easy) else {
                ended()
                job.complete(.failure(RetryPolicy.Failure(error: DownloadError(.network, "libcurl refused to start the transfer"), isTransient: false, retryAfter: nil, madeProgress: false)))
                continue
            }
            transfers.started(transfer)
        }
    }

    /// Cancels the fetch `token`, stopping its transfer if it runs.
    /// - Returns: whether a running fetch stopped (its slot is free).
    mutating func cancel(token: Int, transfers: TransferTable, multi: MultiHandle?) -> Bool {
        if cancelWaiting(token: token) { return false }
        for (raw, transfer) in transfers.byHandle {
            guard case .fetch(let job) = transfer.purpose, job.token == token else { continue }
            multi?.remove(transfer.easy)   // there since the fetch started
            transfers.removeHandle(raw)
            ended()
            job.complete(.cancelled)
            return true
        }
        return false
    }

    /// A fetch's transfer ended: its slot is free, and its job has its answer (with a WARC, once
    /// the fetch's record is written: `WARCArchive.record(fetch:body:then:)`).
    mutating func finished(_ transfer: Transfer, job: FetchJob, code: CURLcode, configuration: EngineConfiguration) {
        ended()
        let outcome = Self.outcome(of: transfer, request: job.request, code: code, stall: configuration.stall)
        guard let archive = configuration.warc, let exchanges = transfer.warcExchanges else { return job.complete(outcome) }
        archive.record(fetch: exchanges, body: code == CURLE_OK && transfer.state.phase.abort == nil ? transfer.memory : nil) { job.complete(outcome) }
    }

    /// What a fetch answers, from how its transfer ended.
    static func outcome(of transfer: Transfer, request: FetchRequest, code: CURLcode, stall: EngineConfiguration.Stall) -> FetchJob.Outcome {
        if let error = transfer.state.phase.abort?.error {
            return .failure(RetryPolicy.Failure(error: error, isTransient: false, retryAfter: nil, madeProgress: false))
        }
        guard code == CURLE_OK else {
            return .failure(FailureClassifier.curlFailure(code: Int(code.rawValue), text: transfer.errorText(code), stall: stall))
        }
        guard transfer.head.isComplete || transfer.head.status == 0 else {
            let error = DownloadError(.truncated, "the connection closed in the middle of the response's head")
            return .failure(RetryPolicy.Failure(error: error, isTransient: true, retryAfter: nil, madeProgress: false))
        }
        let finalURL = transfer.easy.string(CURLINFO_EFFECTIVE_URL).flatMap(URL.init(string:)) ?? request.url
        return .response(FetchResponse(
            status: transfer.head.status,
            headers: transfer.head.fields.map { FetchResponse.Header(name: $0.name, value: $0.value) },
            finalURL: finalURL,
            redirects: transfer.redirects,
            body: Data(transfer.memory)))
    }

    /// At shutdown: every fetch not yet started is cancelled.
    mutating func cancelAll() {
        for job in queued + waiting { job.complete(.cancelled) }
        queued.removeAll()
        waiting.removeAll()
    }
}
