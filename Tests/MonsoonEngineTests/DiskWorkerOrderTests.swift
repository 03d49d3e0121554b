import Foundation
import Testing
@testable import MonsoonEngine

/// Which part preparations the disk worker commits ahead of a flushed run
/// (`DiskWorker.Drainer.partsFirst`): never one whose download anything else in the run is about.
@Suite struct DiskWorkerOrderTests {
    private func record(_ id: DownloadID) -> DownloadRecord {
        DownloadRecord(request: request(id, URL(string: "http://127.0.0.1:9/\(id)")!, to: "/tmp/\(id)"), sequence: 1, host: "127.0.0.1:9")
    }

    private func prepare(_ id: DownloadID, durably: Bool = false) -> DiskWorker.Work {
        .prepare(BodyPreparation(row: record(id), attempt: ObjectIdentifier(DiskWorkerOrderTests.self), offset: 0, total: 10,
                                 durably: durably, diskReserve: 0))
    }

    private func ids(_ items: [DiskWorker.Work]) -> [String] {
        items.map { item in
            let kind = switch item {
            case .prepare: "prepare"
            case .save: "save"
            case .delete: "delete"
            case .removeFiles: "remove"
            default: "other"
            }
            return "\(kind) \(item.downloadID?.rawValue ?? "-")"
        }
    }

    @Test func partsOfOtherDownloadsGoBeforeACompletion() {
        let segment: [DiskWorker.Work] = [.save(record("a"), durably: true), prepare("b"), .save(record("c"), durably: false), prepare("d")]
        let (early, rest) = DiskWorker.Drainer.partsFirst(segment)
        #expect(ids(early) == ["prepare b", "prepare d"])
        #expect(ids(rest) == ["save a", "save c"])
    }

    @Test func aDownloadsOwnItemsKeepTheirOrder() {
        let segment: [DiskWorker.Work] = [.save(record("a"), durably: true), prepare("a"), prepare("b"), .delete("b", sequence: 1)]
        let (early, rest) = DiskWorker.Drainer.partsFirst(segment)
        #expect(early.isEmpty)
        #expect(ids(rest) == ["save a", "prepare a", "prepare b", "delete b"])
    }

    @Test func aFlushedPartAndFilesDeletedInOrderStayInPlace() {
        let (early, rest) = DiskWorker.Drainer.partsFirst([.save(record("a"), durably: true), prepare("b", durably: true)])
        #expect(early.isEmpty)
        #expect(rest.count == 2)
        let removal: [DiskWorker.Work] = [.save(record("a"), durably: true), .removeFiles(["/tmp/x.part"], root: nil, afterCommit: false), prepare("b")]
        #expect(DiskWorker.Drainer.partsFirst(removal).early.isEmpty, "a part started over is gone before anything after it looks")
    }
}
