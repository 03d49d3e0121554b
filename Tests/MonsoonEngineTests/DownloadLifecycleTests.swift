import Foundation
import Testing
@testable import MonsoonEngine

/// The lifecycle's decisions, without a network: every branch an attempt can end in.
@Suite struct DownloadLifecycleTests {
    private let now = Date(timeIntervalSince1970: 1_700_000_000)

    private func end(_ status: Int, body: DownloadLifecycle.AttemptEnd.Body = .written, received: Int = 100, expected: Int? = 100,
                     curlCode: Int = 0, from offset: Int = 0, highWater: Int = 0) -> DownloadLifecycle.AttemptEnd {
        DownloadLifecycle.AttemptEnd(body: body, status: status, curl: .init(code: curlCode, text: curlCode == 0 ? "" : "Connection reset"),
                                     received: received, expected: expected, resumedFrom: offset, highWater: highWater)
    }

    private func outcome(_ end: DownloadLifecycle.AttemptEnd) -> DownloadLifecycle.AttemptOutcome {
        DownloadLifecycle.outcome(of: end, stall: Stall(bytesPerSecond: 1024, seconds: 30), now: now)
    }

    @Test func aWholeBodyIsPlacedAndACountedOneIsDone() {
        #expect(outcome(end(200)) == .place)
        #expect(outcome(end(206, from: 40)) == .place)
        #expect(outcome(end(200, body: .counted)) == .complete)
        #expect(outcome(end(200, expected: nil)) == .place)   // no length announced: the end of the body is the end
    }

    @Test func aShortBodyIsRetriedAsTruncation() {
        guard case .retry(let failure, let holdHost) = outcome(end(200, received: 60, expected: 100, highWater: 10)) else {
            Issue.record("a short body must be retried")
            return
        }
        #expect(failure.error.code == .truncated)
        #expect(failure.isTransient && failure.madeProgress && !holdHost)
        guard case .retry(let again, _) = outcome(end(200, received: 60, expected: 100, highWater: 60)) else { Issue.record("a short body again is retried"); return }
        #expect(!again.madeProgress)   // the same bytes again are no progress
    }

    @Test func errorStatusesDecideWhateverCurlSaid() {
        guard case .retry(let failure, let holdHost) = outcome(end(503, body: .none, curlCode: 23)) else {
            Issue.record("a 503 is retried")
            return
        }
        #expect(failure.error.httpStatus == 503 && failure.isTransient && holdHost)
        guard case .retry(let notFound, let holds) = outcome(end(404, body: .none)) else { Issue.record("a 404 goes to the retry policy, as permanent"); return }
        #expect(!notFound.isTransient && !holds)
        guard case .retry(let tooMany, true) = outcome(end(429, body: .none)) else {
            Issue.record("a 429 holds its host")
            return
        }
        #expect(tooMany.isTransient)
    }

    /// libcurl 7.88 ends a transfer cut inside its response's head without an error, as an empty
    /// answer: it is a cut, retried, and never an empty file.
    @Test func aHeadCutOffMidWayIsACutNotAnEmptyFile() {
        var cut = end(200, received: 0, expected: nil)
        cut.headComplete = false
        guard case .retry(let failure, false) = outcome(cut) else { Issue.record("a cut head is retried"); return }
        #expect(failure.error == DownloadError(.truncated, "the connection closed in the middle of the response's head"))
        #expect(failure.isTransient)
    }

    @Test func aNetworkFailureIsWeighedWithItsProgress() {
        guard case .retry(let failure, false) = outcome(end(200, received: 50, expected: 100, curlCode: 56, highWater: 20)) else {
            Issue.record("a dropped connection is retried")
            return
        }
        #expect(failure.error.code == .network)
        #expect(failure.madeProgress)
    }

    @Test func a416IsDoneWhenThePartIsWholeElseAFreshStart() {
        let fresh = DownloadLifecycle.AttemptOutcome.restartFresh(reason: "the server could not serve the rest of the part")
        var whole = end(416, body: .none, received: 100, expected: nil, from: 100)
        whole.contentRange = "bytes */100"
        whole.known = ResumeState(url: "u", etag: "\"a\"", lastModified: nil, total: 100)
        #expect(outcome(whole) == .placeWholePart(total: 100))
        var shorter = whole
        shorter.contentRange = "bytes */90"
        #expect(outcome(shorter) == fresh)
        var unnamed = whole
        unnamed.hasFile = false
        #expect(outcome(unnamed) == fresh)
        var unknown = whole
        unknown.known = nil
        #expect(outcome(unknown) == fresh, "nothing known of the part: nothing to agree with")
    }

    /// A server that cut a body at 50 of 100 bytes and then answers the rest with `416 */50`
    /// (with the same ETag or another) must not have the half placed as whole.
    @Test func a416ThatContradictsWhatWasKnownStartsOver() {
        let fresh = DownloadLifecycle.AttemptOutcome.restartFresh(reason: "the server could not serve the rest of the part")
        var lying = end(416, body: .none, received: 50, expected: nil, from: 50)
        lying.contentRange = "bytes */50"
        lying.known = ResumeState(url: "u", etag: "\"a\"", lastModified: nil, total: 100)
        lying.etag = "\"a\""
        #expect(outcome(lying) == fresh, "the length known was 100")
        lying.etag = "\"b\""
        #expect(outcome(lying) == fresh)
        // No length was known (a body without Content-Length): the 416 must name the version asked for.
        var unsized = lying
        unsized.known?.total = nil
        unsized.etag = "\"a\""
        #expect(outcome(unsized) == .placeWholePart(total: 50))
        unsized.etag = "\"b\""
        #expect(outcome(unsized) == fresh)
        unsized.etag = nil
        #expect(outcome(unsized) == fresh, "a 416 that names no version proves nothing")
        var dated = unsized
        dated.known = ResumeState(url: "u", etag: nil, lastModified: "Mon, 01 Jan 2024 00:00:00 GMT", total: nil)
        dated.lastModified = "Mon, 01 Jan 2024 00:00:00 GMT"
        #expect(outcome(dated) == .placeWholePart(total: 50))
        dated.lastModified = "Tue, 02 Jan 2024 00:00:00 GMT"
        #expect(outcome(dated) == fresh)
    }

    /// An honest short 206 (`bytes 40-59/100` for `bytes=40-`) goes on from where it ended, at
    /// once; one that ends before its own Content-Range says is a cut body.
    @Test func aShort206GoesOnFromWhereItEnded() {
        var short = end(206, received: 60, expected: 100, from: 40)
        short.contentRange = "bytes 40-59/100"
        #expect(outcome(short) == .continueRange)
        var cut = short
        cut.contentRange = "bytes 40-99/100"
        guard case .retry(let failure, _) = outcome(cut) else { Issue.record("a cut body is a failure"); return }
        #expect(failure.error.code == .truncated)
        var none = short
        none.received = 40
        none.contentRange = "bytes 40-39/100"
        guard case .retry = outcome(none) else { Issue.record("no progress is no continuation"); return }
    }

    @Test func callbacksDecisionsComeFirst() {
        var changed = end(200)
        changed.abort.restartReason = "the resource changed on the server"
        #expect(outcome(changed) == .restartFresh(reason: "the resource changed on the server"))
        var page = end(200)
        page.abort.error = DownloadError(.webPageNotMedia, "a web page")
        #expect(outcome(page) == .fail(DownloadError(.webPageNotMedia, "a web page")))
    }

    @Test func noRoomOnTheDiskHoldsTheDownloadInsteadOfFailingIt() {
        var full = end(200)
        full.abort.error = DownloadError(.notEnoughDiskSpace, "not enough disk space")
        #expect(outcome(full) == .holdForSpace(DownloadError(.notEnoughDiskSpace, "not enough disk space")))
        full.abort.isTransient = true
        #expect(outcome(full) == .holdForSpace(DownloadError(.notEnoughDiskSpace, "not enough disk space")))
    }

    @Test func aDatabaseFailureWhileOpeningThePartIsRetried() {
        var busy = end(200)
        busy.abort.error = DownloadError(.fileSystem, "could not save the download in the database: database is locked")
        busy.abort.isTransient = true
        guard case .retry(let failure, false) = outcome(busy) else {
            Issue.record("a busy database is no reason to give up the download")
            return
        }
        #expect(failure.isTransient && !failure.madeProgress)
    }

    @Test func anUnfollowedRedirectIsAFailureForThePolicy() {
        guard case .retry(let failure, false) = outcome(end(304, body: .none)) else {
            Issue.record("a 304 to a download is a failure")
            return
        }
        #expect(failure.error.httpStatus == 304)
    }

    @Test func restartsInARowEndInTheRetryPolicy() {
        #expect(DownloadLifecycle.restart(reason: "changed", restarts: 1, limit: 3) == nil)
        #expect(DownloadLifecycle.restart(reason: "changed", restarts: 3, limit: 3) == nil)
        let failure = DownloadLifecycle.restart(reason: "changed", restarts: 4, limit: 3)
        #expect(failure?.error.code == .restartLimit && failure?.isTransient == true)
        #expect(failure?.error.message == "gave up restarting: changed")
        // None at once (a cluster worker's engine): the reason as it is, for the retry policy.
        #expect(DownloadLifecycle.restart(reason: "changed", restarts: 1, limit: 0)?.error == DownloadError(.restartLimit, "changed"))
    }

    @Test func commandsMoveOnlyWhatTheyApplyTo() {
        typealias L = DownloadLifecycle
        for status in [DownloadStatus.queued, .downloading, .waitingToRetry] {
            #expect(L.command(.pause, status: status, placing: false) == .pause)
            #expect(L.command(.resume, status: status, placing: false) == .none)
        }
        #expect(L.command(.pause, status: .downloading, placing: true) == .none)   // the rename lands
        for status in [DownloadStatus.paused, .completed, .failed] { #expect(L.command(.pause, status: status, placing: false) == .none) }
        #expect(L.command(.resume, status: .paused, placing: false) == .queue(liftHostHold: false))
        #expect(L.command(.resume, status: .failed, placing: false) == .queue(liftHostHold: false))
        for status in [DownloadStatus.failed, .waitingToRetry, .paused] {
            #expect(L.command(.retry(fileGone: false), status: status, placing: false) == .queue(liftHostHold: true))
        }
        #expect(L.command(.retry(fileGone: false), status: .completed, placing: false) == .none)
        #expect(L.command(.retry(fileGone: true), status: .completed, placing: false) == .fetchAgain)
        #expect(L.command(.retry(fileGone: true), status: .queued, placing: false) == .none)
        #expect(L.command(.retry(fileGone: false), status: .downloading, placing: false) == .none)
    }
}

/// Every status change, as a table: for each event and status, where it leads, or that it cannot happen.
@Suite struct DownloadLifecycleTransitionTests {
    private typealias Event = DownloadLifecycle.Event

    @Test func everyEventFromEveryStatus() {
        let events: [Event] = [.start, .pause, .requeue, .retryLater, .complete, .foundComplete, .fail, .holdForSpace]
        // Rows: the status a download is in; each entry: where the event takes it (nil: cannot happen).
        let expected: [DownloadStatus: [Event: DownloadStatus]] = [
            .queued: [.start: .downloading, .pause: .paused, .retryLater: .waitingToRetry,
                      .foundComplete: .completed, .fail: .failed, .holdForSpace: .queued],
            .downloading: [.pause: .paused, .requeue: .queued, .retryLater: .waitingToRetry, .complete: .completed, .fail: .failed,
                           .holdForSpace: .queued],
            .paused: [.requeue: .queued, .foundComplete: .completed, .fail: .failed],
            .waitingToRetry: [.pause: .paused, .requeue: .queued, .foundComplete: .completed, .fail: .failed],
            .completed: [.requeue: .queued],
            .failed: [.requeue: .queued],
        ]
        for status in DownloadStatus.allCases {
            for event in events {
                #expect(DownloadLifecycle.status(after: event, from: status) == expected[status]?[event],
                        "\(event) from \(status)")
            }
        }
    }

    @Test func aRecordMovesOnlyWhereTheLifecycleAllows() {
        var record = DownloadRecord(request: DownloadRequest(id: "a", url: URL(string: "http://example.com/a")!, destination: .file("/tmp/a")),
                                    sequence: 0, host: "example.com")
        #expect(record.handle(.lifecycle(.start)) == .moved(from: .queued, to: .downloading))
        #expect(record.handle(.attemptEnded) == .none)
        #expect(record.handle(.lifecycle(.retryLater)) == .moved(from: .downloading, to: .waitingToRetry))
        #expect(record.handle(.lifecycle(.requeue)) == .moved(from: .waitingToRetry, to: .queued))
        if case .refuse = record.handle(.lifecycle(.requeue)) {} else { Issue.record("a queued download is not queued twice") }
        #expect(record.status == .queued)
    }
}
