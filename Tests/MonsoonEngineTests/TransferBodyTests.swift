import Foundation
import Testing
@testable import MonsoonEngine

/// An attempt's own decisions at its first body byte and at its part's answer, on heads and
/// records it is given: where the body goes, what the record becomes, and what the loop is left
/// to do. (The same through curl and a real server: `TransferTests`, `WholeFileTests`.)
@Suite struct TransferBodyTests {
    private let now = Date(timeIntervalSince1970: 1_700_000_000)

    /// A download's attempt whose head says `status` and `length`, and its record.
    private func attempt(_ status: Int, length: Int? = nil, range: String? = nil, type: String = "audio/mpeg", to destination: DownloadRequest.Destination = .directory("/tmp/d"),
                         offset: Int = 0, table: TransferTable) -> (Transfer, DownloadRecord) {
        let request = DownloadRequest(id: "a", url: URL(string: "http://127.0.0.1:9/a.mp3")!, destination: destination, expectedMediaType: "audio/mpeg")
        let transfer = Transfer(purpose: .download("a"), plan: AttemptPlan(offset: offset, ifRange: nil), handles: table.easyHandles)
        transfer.head.status = status
        transfer.head.contentLength = length
        transfer.head.contentRange = range
        transfer.head.contentType = type
        transfer.head.etag = "\"v1\""
        transfer.early.budget = EarlyBudget(bytes: 1 << 20)
        return (transfer, DownloadRecord(request: request, sequence: 1, host: "127.0.0.1:9"))
    }

    private func decide(_ transfer: Transfer, _ record: inout DownloadRecord, _ table: TransferTable) -> Transfer.FirstByte {
        transfer.decideBody(&record, table: table, space: SpaceGovernor(inbox: EngineInbox(), reserve: 0), diskReserve: 0, now: now)
    }

    private func phase(_ transfer: Transfer) -> String {
        switch transfer.state.phase {
        case .awaitingHead: "awaitingHead"
        case .preparingPart(let wait): wait.held == nil ? "preparingPart" : "preparingPart(held)"
        case .writing: "writing"
        case .wholeBody: "wholeBody"
        case .counting: "counting"
        case .discarding: "discarding"
        case .inMemory: "inMemory"
        case .aborted(.failed(let error, _)): "failed(\(error.code.rawValue))"
        case .aborted(.restart): "restart"
        case .aborted(.stopped): "stopped"
        }
    }

    @Test func aHeadThatIsNoFileDecidesWithinTheAttempt() {
        let table = TransferTable(maxConcurrentDownloads: 4, maxBytesPerSecond: nil)
        // (status, length, range, type) → the phase; the record is left as it was, nothing is asked of the loop.
        let cases: [(Int, Int?, String?, String, String)] = [
            (404, nil, nil, "text/html", "discarding"),
            (200, 10, nil, "text/html", "failed(webPageNotMedia)"),
            (206, 10, "bytes 5-14/15", "audio/mpeg", "restart"),
            (206, 10, nil, "audio/mpeg", "restart"),
        ]
        for (status, length, range, type, expected) in cases {
            var (transfer, record) = attempt(status, length: length, range: range, type: type, table: table)
            guard case .done = decide(transfer, &record, table) else { Issue.record("\(status): decided within"); continue }
            #expect(phase(transfer) == expected, "\(status) \(type)")
            #expect(record.total == nil && record.finalURL == nil && table.preparing.isEmpty)
        }
    }

    @Test func aDiscardedDownloadsBodyIsCountedAndHashedWhenAsked() {
        let table = TransferTable(maxConcurrentDownloads: 4, maxBytesPerSecond: nil)
        var (transfer, record) = attempt(200, length: 50, to: .discard(checksum: true), table: table)
        guard case .done = decide(transfer, &record, table) else { Issue.record("counted within the attempt"); return }
        #expect(phase(transfer) == "counting" && transfer.progress.digest != nil)
        #expect(record.total == 50 && record.bytes == 0 && transfer.progress.total == 50 && table.preparing.isEmpty)
    }

    @Test func aBodyOverTheLimitIsRefusedBeforeAByte() {
        let table = TransferTable(maxConcurrentDownloads: 4, maxBytesPerSecond: nil)
        var (transfer, record) = attempt(200, length: 5000, table: table)
        transfer.limits.maxFileBytes = 4000
        guard case .done = decide(transfer, &record, table) else { Issue.record("refused within the attempt"); return }
        #expect(phase(transfer) == "failed(tooLarge)" && record.total == nil)
    }

    @Test func aFileGoesToAPartThatASmallOneHoldsBack() throws {
        let table = TransferTable(maxConcurrentDownloads: 4, maxBytesPerSecond: nil)
        // Large: the part is asked for at once, with a new part's validators.
        var (large, record) = attempt(200, length: 10 << 20, table: table)
        table.started(large)
        guard case .prepare(let preparation, let asking) = decide(large, &record, table) else { Issue.record("a part is prepared"); return }
        #expect(asking && phase(large) == "preparingPart" && table.preparing["a"] === large)
        #expect(preparation.offset == 0 && preparation.total == 10 << 20 && preparation.newState?.etag == "\"v1\"" && !preparation.durably)
        #expect(record.total == 10 << 20 && record.resume?.etag == "\"v1\"" && record.partEpoch == 1)
        // Small and running: held back, and asked for once it has waited `heldPartSeconds`.
        var (small, row) = attempt(200, length: 1000, table: table)
        table.started(small)
        guard case .prepare(_, let asks) = decide(small, &row, table) else { Issue.record("a part is prepared"); return }
        #expect(!asks && phase(small) == "preparingPart(held)")
        #expect(small.heldPartDue(now: now.addingTimeInterval(0.5)) == nil)
        #expect(small.heldPartDue(now: now.addingTimeInterval(Transfer.heldPartSeconds))?.total == 1000)
        #expect(phase(small) == "preparingPart" && small.heldPartDue(now: now.addingTimeInterval(5)) == nil, "asked for once")
        // Small but no longer the running attempt: its part is asked for at once.
        var (stopped, again) = attempt(200, length: 1000, table: table)
        guard case .prepare(_, let asked) = decide(stopped, &again, table) else { Issue.record("a part is prepared"); return }
        #expect(asked)
    }

    @Test func thePartsAnswerWritesOrCutsShortOrIsLetGo() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let table = TransferTable(maxConcurrentDownloads: 4, maxBytesPerSecond: nil)
        let placer = Placer(inbox: EngineInbox(), warc: nil)
        // Ready: written into from where the attempt stands.
        var (transfer, record) = attempt(206, length: 600, range: "bytes 400-999/1000", offset: 400, table: table)
        record.resume = ResumeState(url: record.request.url.absoluteString, etag: "\"v1\"", lastModified: nil, total: 1000)
        _ = decide(transfer, &record, table)
        let fd = open(folder.file("a.part"), O_CREAT | O_WRONLY, 0o644)
        guard case .none = transfer.partAnswered(.ready(fd: fd, path: folder.file("a")), placer: placer) else { Issue.record("nothing holds it"); return }
        #expect(phase(transfer) == "writing" && transfer.part.fd == fd && transfer.part.path == folder.file("a.part"))
        #expect(transfer.part.writebackStart == 400 && transfer.part.checkpoint.requested == 400)
        // Failed: cut short with the worker's error.
        var (failed, row) = attempt(200, length: 600, table: table)
        _ = decide(failed, &row, table)
        _ = failed.partAnswered(.failed(DownloadError(.fileSystem, "no"), path: nil, transient: false), placer: placer)
        #expect(phase(failed) == "failed(fileSystem)")
        // Stopped meanwhile: the answer is let go, and its part closed.
        let late = open(folder.file("b.part"), O_CREAT | O_WRONLY, 0o644)
        guard case .ignored = failed.partAnswered(.ready(fd: late, path: folder.file("b")), placer: placer) else { Issue.record("let go"); return }
        #expect(phase(failed) == "failed(fileSystem)", "the first answer stands")
        // Ended while its part was prepared: it finishes with curl's code once the part is ready.
        var (ended, third) = attempt(200, length: 0, table: table)
        _ = decide(ended, &third, table)
        _ = ended.handle(.ended(.init(0), bodyWhole: false))
        guard case .finish(let code) = ended.partAnswered(.ready(fd: open(folder.file("c.part"), O_CREAT | O_WRONLY, 0o644), path: folder.file("c")), placer: placer) else {
            Issue.record("finishes now"); return
        }
        #expect(code.rawValue == 0)
    }
}
