/// In-memory fetches: small bodies (feeds) on the same multi handle as downloads,
/// with their own concurrency limit so a refresh never waits behind media. A retry waits for
/// its time on the engine's clock in the `FetchLine`, as a download's does.
extension EngineCore {
    func submitFetch(_ job: FetchJob) {
        guard !stopping else { job.complete(.cancelled); return }
        if fetches.submit(job, now: configuration.clock.now) { scheduler.needsScheduling = true }
    }

    func cancelFetch(token: Int) {
        if fetches.cancel(token: token, transfers: transfers, multi: multi) { scheduler.needsScheduling = true }
    }
}
