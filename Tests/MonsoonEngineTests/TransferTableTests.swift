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
    @Test func aDownloadsAttemptIsSetUpCountedAndStopped() throws {
        let table = TransferTable(maxConcurrentDownloads: 4, maxBytesPerSecond: nil)
        let multi = MultiHandle()
        defer { multi.cleanup() }
        var configuration = EngineConfiguration()
        configuration.maxFileBytes = 5000
        var record = DownloadRecord(request: DownloadRequest(id: "a", url: URL(string: "http://127.0.0.1:9/a")!, destination: .file("/tmp/a"),
                                                             sizeLimit: .init(bytes: 3000, reason: "a test's")), sequence: 1, host: "127.0.0.1:9")
        record.filePath = "/tmp/a"
        let budget = EarlyBudget(bytes: 1 << 20)
        let transfer = try #require(table.startDownload(record, plan: AttemptPlan(offset: 100, ifRange: nil), expected: 2000, volume: nil, hosts: [3, 4],
                                                        configuration: configuration, runningDownloads: 0, budget: budget, multi: multi))
        #expect(table.runs(transfer) && table.byHandle.count == 1 && transfer.countedHosts == [3, 4])
        #expect(transfer.part.path == "/tmp/a.part" && transfer.progress.fileSize == 100 && transfer.progress.expected == 2000)
        #expect(transfer.limits.maxFileBytes == 3000 && transfer.limits.reason == "a test's" && transfer.early.budget === budget)
        // Stopped outside curl's callbacks: out of curl and of the table at once.
        guard case .done(let stopped?, let freed) = table.stop("a", multi: multi) else { Issue.record("stopped at once"); return }
        #expect(stopped === transfer && !freed && table.byHandle.isEmpty)
        #expect(table.endRunning("a") === transfer, "its slot is the caller's to give back")
        guard case .done(nil, false) = table.stop("a", multi: multi) else { Issue.record("nothing runs"); return }
    }

    @Test func anEndedAttemptWaitingForItsPartIsDroppedWhenStopped() {
        let table = TransferTable(maxConcurrentDownloads: 4, maxBytesPerSecond: nil)
        let waiting = attempt("a", table)
        waiting.handle(.decided(.part))
        waiting.handle(.ended(.init(0), bodyWhole: false))
        table.preparing["a"] = waiting
        #expect(table.endedAwaitingParts == 1)
        guard case .done(nil, true) = table.stop("a", multi: MultiHandle()) else { Issue.record("a start it held back may go"); return }
        #expect(table.preparing.isEmpty && table.endedAwaitingParts == 0)
    }

    @Test func aPlannedStartResumesThePartOrStartsANewOne() {
        let table = TransferTable(maxConcurrentDownloads: 4, maxBytesPerSecond: nil)
        let request = DownloadRequest(id: "a", url: URL(string: "http://127.0.0.1:9/a")!, destination: .file("/tmp/a"))
        let state = ResumeState(url: "http://127.0.0.1:9/a", etag: "\"v1\"", lastModified: nil, total: 1000)
        var record = DownloadRecord(request: request, sequence: 1, host: "127.0.0.1:9")
        record.highWater = 50
        var ready = StartPreparation.Ready(record: record, plan: AttemptPlan(offset: 400, ifRange: "\"v1\""))
        ready.part = (state, false)
        table.resume(&record, as: ready)
        #expect(record.resume == state && record.bytes == 400 && record.highWater == 400 && record.partEpoch == 0)
        ready.plan = AttemptPlan(offset: 0, ifRange: nil)
        ready.part = (state, true)
        table.resume(&record, as: ready)
        #expect(record.resume == nil && record.bytes == 0 && record.highWater == 400 && record.partEpoch == 1, "a new part, a new epoch")
        // No part looked at (a start planned in the loop): the record stays as it is.
        var untouched = DownloadRecord(request: request, sequence: 1, host: "127.0.0.1:9")
        table.resume(&untouched, as: StartPreparation.Ready(record: untouched, plan: AttemptPlan(offset: 0, ifRange: nil)))
        #expect(untouched.bytes == 0 && untouched.resume == nil && untouched.partEpoch == 0)
    }

    @Test func atShutdownEveryAttemptLeavesCurlAndTheDownloadsKeepTheirBytes() throws {
        let table = TransferTable(maxConcurrentDownloads: 4, maxBytesPerSecond: nil)
        let multi = MultiHandle()
        defer { multi.cleanup() }
        var records = RecordTable(persistent: false)
        let record = records.add(DownloadRecord(request: DownloadRequest(id: "a", url: URL(string: "http://127.0.0.1:9/a")!, destination: .file("/tmp/a")),
                                                sequence: 0, host: "127.0.0.1:9"))
        _ = try #require(table.startDownload(record, plan: AttemptPlan(offset: 100, ifRange: nil), expected: nil, volume: nil, hosts: [0],
                                             configuration: EngineConfiguration(), runningDownloads: 0, budget: EarlyBudget(bytes: 1 << 20), multi: multi))
        var placements = Placements(archive: nil)
        let inbox = EngineInbox()
        let ended = table.shutDown(multi: multi, records: &records, placements: &placements, placer: Placer(inbox: inbox, warc: nil), inbox: inbox)
        #expect(ended == ["a"] && table.byHandle.isEmpty && table.running.isEmpty)
        #expect(records.hot["a"]?.bytes == 100, "what the part held when it stopped")
    }
}
