import Foundation
import Testing
@testable import MonsoonEngine

/// The table of running attempts: which attempt of a download is the running one (what comes of
/// a stopped one is ignored), what waits for curl to return, part epochs, and the buffers a
/// download gets under a rate limit. (Transfers through curl: `TransferTests`, `RateLimitTests`.)
@Suite struct TransferTableTests {
    private func attempt(_ id: DownloadID, _ table: TransferTable) -> Transfer {
        Transfer(purpose: .download(id), plan: AttemptPlan(offset: 0, ifRange: nil), handles: table.easyHandles)
    }

    @Test func onlyTheLatestAttemptOfADownloadRuns() throws {
        let table = TransferTable(maxConcurrentDownloads: 4, maxBytesPerSecond: nil)
        let first = attempt("a", table)
        table.started(first)
        #expect(table.runs(first) && table.byHandle.count == 1)
        // Stopped (its handle taken out) and started again: the new attempt is the download's.
        #expect(table.removeHandle(first.easy.raw) === first)
        #expect(table.removeHandle(first.easy.raw) == nil, "taken out once")
        let second = attempt("a", table)
        table.started(second)
        #expect(table.runs(second) && !table.runs(first))
        #expect(table.endRunning("a") === second && !table.runs(second))
        #expect(table.endRunning("a") == nil)
    }

    @Test func whatWaitsForCurlComesBackOnceInOrder() {
        let table = TransferTable(maxConcurrentDownloads: 4, maxBytesPerSecond: nil)
        #expect(table.takeAfterCurl().isEmpty)
        let transfer = attempt("a", table)
        table.afterCurl(.stop("a", transfer))
        table.afterCurl(.failRefused("b", DownloadError(.engineFault, "refused")))
        let due = table.takeAfterCurl()
        guard due.count == 2, case .stop(let id, let stopped) = due[0], case .failRefused(let failed, let error) = due[1] else {
            Issue.record("both, in the order asked: \(due)"); return
        }
        #expect(id == "a" && stopped === transfer && failed == "b" && error.code == .engineFault)
        #expect(table.takeAfterCurl().isEmpty, "run once")
    }

    @Test func partEpochsAreNeverGivenOutTwice() {
        let table = TransferTable(maxConcurrentDownloads: 4, maxBytesPerSecond: nil)
        let epochs = (0..<5).map { _ in table.nextPartEpoch() }
        #expect(epochs == [1, 2, 3, 4, 5])
    }

    @Test func underALimitTheBuffersAreSizedToEachDownloadsShare() {
        let unlimited = TransferTable.downloadBuffers(rate: nil, concurrency: 4, runningDownloads: 4)
        #expect(unlimited.kernel == nil && unlimited.curl == 256 * 1024)
        // 1 MB/s shared by 4: half a second of the share in the kernel, a quarter in curl.
        let limited = TransferTable.downloadBuffers(rate: 1_000_000, concurrency: 4, runningDownloads: 4)
        #expect(limited.kernel == 125_000 && limited.curl == 62_500)
        // A share too small for that: never under 16 KiB each.
        let tiny = TransferTable.downloadBuffers(rate: 10_000, concurrency: 4, runningDownloads: 4)
        #expect(tiny.kernel == 16 << 10 && tiny.curl == 16 << 10)
    }

    @Test func withoutALimitNothingIsPacedOrWokenFor() {
        let table = TransferTable(maxConcurrentDownloads: 4, maxBytesPerSecond: nil)
        table.started(attempt("a", table))
        table.pace()
        #expect(table.rateLimiter == nil && table.rateWake(now: Date()) == nil)
        let limited = TransferTable(maxConcurrentDownloads: 4, maxBytesPerSecond: 1000)
        #expect(limited.rateLimiter != nil && limited.rateWake(now: Date()) == nil, "nobody waits for the limit yet")
    }
}
