import Foundation
import Testing
@testable import MonsoonEngine

/// What an ended attempt comes to (`Transfer.conclude`), from its phase and the record it is
/// given: the outcome the loop performs, the record as it then is, and the part let go unless
/// it is placed. (`DownloadLifecycle.outcome`'s own table: `DownloadLifecycleTests`.)
@Suite struct TransferEndTests {
    private let now = Date(timeIntervalSince1970: 1_700_000_000)
    private let table = TransferTable(maxConcurrentDownloads: 4, maxBytesPerSecond: nil)
    private let placer = Placer(inbox: EngineInbox(), warc: nil)

    private func attempt(_ status: Int, received: Int, total: Int?, counted: Bool = false) -> (Transfer, DownloadRecord) {
        let transfer = Transfer(purpose: .download("a"), plan: AttemptPlan(offset: 0, ifRange: nil), handles: table.easyHandles)
        transfer.head.status = status
        transfer.head.isComplete = true
        transfer.handle(.decided(counted ? .count : .part))
        if !counted { transfer.handle(.partReady) }
        transfer.progress.fileSize = received
        transfer.progress.thisAttempt = received
        transfer.progress.total = total
        let request = DownloadRequest(id: "a", url: URL(string: "http://127.0.0.1:9/a")!, destination: .file("/tmp/a"))
        var record = DownloadRecord(request: request, sequence: 1, host: "127.0.0.1:9")
        record.filePath = "/tmp/a"
        record.highWater = 10
        return (transfer, record)
    }

    private func conclude(_ transfer: Transfer, _ record: inout DownloadRecord, code: Transfer.Code = Transfer.Code(0)) -> Transfer.Conclusion {
        var placements = Placements(archive: nil)
        return transfer.conclude(code, &record, table: table, placements: &placements, placer: placer,
                                 stall: EngineConfiguration.Stall(bytesPerSecond: 1024, seconds: 30), now: now)
    }

    @Test func aWholeBodyIsPlacedWithItsPartAndACountedOneIsComplete() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        var (written, record) = attempt(200, received: 100, total: 100)
        written.part.fd = open(folder.file("a.part"), O_CREAT | O_WRONLY, 0o644)
        guard case .outcome(.place) = conclude(written, &record) else { Issue.record("placed"); return }
        #expect(written.part.fd >= 0, "the placer takes the part")
        #expect(record.bytes == 100 && record.highWater == 100 && written.progress.reported == 100)
        var (counted, row) = attempt(200, received: 50, total: 50, counted: true)
        row.lastError = DownloadError(.network, "an earlier attempt's")
        guard case .outcome(.complete) = conclude(counted, &row) else { Issue.record("complete"); return }
        #expect(row.bytes == 50 && row.total == 50 && row.lastError == nil && row.checksum == nil)
    }

    @Test func anAttemptThatGoesNoFurtherLetsItsPartGo() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        // (status, received, total, curl's code) → what follows; the part is closed each time.
        // Codes: 0, and 56 (CURLE_RECV_ERROR).
        let cases: [(Int, Int, Int?, Transfer.Code, String)] = [
            (200, 60, 100, Transfer.Code(0), "retry(truncated)"),
            (503, 0, nil, Transfer.Code(0), "retry(httpStatus)"),
            (200, 60, 100, Transfer.Code(56), "retry(network)"),
        ]
        for (status, received, total, code, expected) in cases {
            var (transfer, record) = attempt(status, received: received, total: total)
            let fd = open(folder.file("a.part"), O_CREAT | O_WRONLY, 0o644)
            transfer.part.fd = fd
            let conclusion = conclude(transfer, &record, code: code)
            guard case .outcome(.retry(let failure, _)) = conclusion else { Issue.record("\(status): \(conclusion)"); continue }
            #expect("retry(\(failure.error.code.rawValue))" == expected, "\(status) \(code)")
            #expect(transfer.part.fd == -1, "\(status): its part let go")
        }
        placer.waitUntilDone()
    }

    @Test func aRestartThrowsAwayWhatItWroteAndNoProgressCounts() {
        var (transfer, record) = attempt(200, received: 500, total: 1000)
        transfer.handle(.abort(.restart(reason: "the resource changed on the server")))
        guard case .outcome(.restartFresh(let reason)) = conclude(transfer, &record) else { Issue.record("starts over"); return }
        #expect(reason == "the resource changed on the server" && record.highWater == 10)
    }

    @Test func anAttemptEndedBeforeItsPartWasReadyWaitsForIt() {
        let transfer = Transfer(purpose: .download("a"), plan: AttemptPlan(offset: 0, ifRange: nil), handles: table.easyHandles)
        transfer.head.status = 200
        transfer.handle(.decided(.part))
        var record = DownloadRecord(request: DownloadRequest(id: "a", url: URL(string: "http://127.0.0.1:9/a")!, destination: .file("/tmp/a")),
                                    sequence: 1, host: "127.0.0.1:9")
        guard case .awaitPart(nil) = conclude(transfer, &record) else { Issue.record("waits for its part"); return }
        #expect(record.bytes == 0)
    }
}
