import Foundation
import Testing
@testable import MonsoonEngine

/// The fetches' line: a retry waits for its time on the engine's clock, fetches start in the
/// order posted within their own limit, and a cancelled one is answered and never started.
@Suite struct FetchLineTests {
    private let now = Date(timeIntervalSince1970: 1_700_000_000)

    /// A fetch job and the task awaiting its answer (what the fetch's caller would get).
    private func job(_ token: Int, notBefore: Date? = nil) async -> (job: FetchJob, answer: Task<FetchJob.Outcome, Never>) {
        let (jobs, posted) = AsyncStream.makeStream(of: FetchJob.self)
        let request = FetchRequest(url: URL(string: "http://127.0.0.1/\(token)")!)
        let answer = Task {
            await withCheckedContinuation { continuation in
                posted.yield(FetchJob(request: request, token: token, notBefore: notBefore, continuation: continuation))
            }
        }
        var iterator = jobs.makeAsyncIterator()
        return (await iterator.next()!, answer)
    }

    private func isCancelled(_ answer: Task<FetchJob.Outcome, Never>) async -> Bool {
        if case .cancelled = await answer.value { return true }
        return false
    }

    @Test func aRetryWaitsForItsTimeThenStartsInTheOrderPosted() async {
        var line = FetchLine()
        let late = await job(1, notBefore: now + 2)
        let early = await job(2, notBefore: now + 1)
        let atOnce = await job(3, notBefore: now - 1)
        let queuedNow = [late, early, atOnce].map { line.submit($0.job, now: now) }
        #expect(queuedNow == [false, false, true], "a time already past is no wait")
        #expect(line.nextDue == now + 1)
        let dueEarly = line.promoteDue(now: now + 0.5)
        #expect(!dueEarly)
        let atOnceStarted = line.next(limit: 4)?.token
        let nothingElse = line.next(limit: 4)
        #expect(atOnceStarted == 3 && nothingElse == nil)
        let due = line.promoteDue(now: now + 2)
        #expect(due && line.waiting.isEmpty && line.nextDue == nil)
        let started = [line.next(limit: 4), line.next(limit: 4)].map { $0?.token }
        #expect(started == [1, 2], "in the order posted, not of their times")
        for each in [late, early, atOnce] { each.job.complete(.cancelled) }
    }

    @Test func fetchesStartWithinTheirLimitAndACancelledOneNeverStarts() async {
        var line = FetchLine()
        let jobs = [await job(1), await job(2), await job(3), await job(4), await job(5, notBefore: now + 1)]
        for each in jobs { _ = line.submit(each.job, now: now) }
        let first = line.next(limit: 1)?.token
        let beyondLimit = line.next(limit: 1)
        #expect(first == 1)
        #expect(beyondLimit == nil, "one runs: the limit is reached")
        jobs[1].job.complete(.cancelled)   // cancelled by its caller while queued
        line.ended()
        let afterEnd = line.next(limit: 1)?.token
        #expect(afterEnd == 3, "the cancelled one is skipped")
        #expect(line.running == 1)
        let cancelled = [4, 5, 3].map { line.cancelWaiting(token: $0) }
        #expect(cancelled == [true, true, false], "a running fetch is not the line's to cancel")
        let queuedAnswer = await isCancelled(jobs[3].answer)
        let waitingAnswer = await isCancelled(jobs[4].answer)
        #expect(queuedAnswer && waitingAnswer)
        #expect(line.queued.isEmpty && line.waiting.isEmpty)
        jobs[0].job.complete(.cancelled)
        jobs[2].job.complete(.cancelled)
    }

    @Test func atShutdownEveryFetchNotStartedIsCancelled() async {
        var line = FetchLine()
        let queued = await job(1)
        let waiting = await job(2, notBefore: now + 60)
        _ = line.submit(queued.job, now: now)
        _ = line.submit(waiting.job, now: now)
        line.cancelAll()
        let queuedAnswer = await isCancelled(queued.answer)
        let waitingAnswer = await isCancelled(waiting.answer)
        #expect(queuedAnswer && waitingAnswer)
        #expect(line.queued.isEmpty && line.waiting.isEmpty && line.nextDue == nil)
        let next = line.next(limit: 4)
        #expect(next == nil)
    }
}
