import FoundationEssentials
import Dispatch
import MonsoonEngine

// The persistent queue at scale: enqueue, list and change state with 100,000
// downloads queued, and the process's peak memory. Nothing is downloaded (the
// manager runs with a concurrency of 0), so only the queue is measured.

func seconds(_ body: () async throws -> Void) async rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try await body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func peakResidentMiB() -> Double {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        let kib = Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
        return kib / 1024
    }
    return 0
}

let count = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 100_000
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("monsoon-queue-bench-\(UUID().uuidString)").path
try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: folder) }
let database = folder.joiningPath("monsoon.sqlite")

var configuration = EngineConfiguration()
configuration.maxConcurrentDownloads = 0

func requests(_ range: Range<Int>) -> [DownloadRequest] {
    range.map { index in
        DownloadRequest(id: DownloadID(""), url: URL(string: "https://feeds.example.com/show\(index % 500)/episode-\(index).mp3")!,
                        destination: .directory("/srv/podcasts/show\(index % 500)"), expectedSize: 50_000_000, expectedMediaType: "audio/mpeg")
    }
}

/// The average cost of a state change (pause, then resume) on `id`.
func stateChange(_ manager: DownloadManager, _ ids: [DownloadID]) async throws -> Double {
    let rounds = 200
    let elapsed = try await seconds {
        for round in 0..<rounds {
            let id = ids[(round * 7919) % ids.count]
            try await manager.pause(id)
            try await manager.resume(id)
        }
    }
    return elapsed / Double(rounds * 2)
}

let manager = try DownloadManager(configuration: configuration, databasePath: database, watchesOtherProcesses: false)
var ids = try await manager.enqueue(contentsOf: requests(0..<1_000))
let changeAtThousand = try await stateChange(manager, ids)

// Enqueue in batches of 5,000, as `monsoon get -i` does with a long list: the caller
// never holds all the requests at once. Only the enqueue calls are timed.
var enqueueTime = 0.0
var start = 1_000
while start < count {
    let batch = requests(start..<min(count, start + 5_000))
    enqueueTime += try await seconds { ids += try await manager.enqueue(contentsOf: batch) }
    start += batch.count
}
let changeAtFull = try await stateChange(manager, ids)
ids = []
await manager.shutdown()

// What `monsoon downloads` does: stream the queue from the database.
var listed = 0
let listTime = try await seconds {
    try DownloadStore(path: database).forEachSummary { summary in
        if summary.progress ?? 0 <= 1 { listed += 1 }
    }
}
let peakForQueue = peakResidentMiB()

// The engine API's full snapshot: every download as a value, all in memory at once.
let reopened = try DownloadManager(configuration: configuration, databasePath: database, watchesOtherProcesses: false)
var snapshots = 0
let snapshotTime = try await seconds { snapshots = try await reopened.downloads.count }
await reopened.shutdown()

print("queue of \(count) downloads (\(count - 1_000) enqueued in batches of 5,000)")
print(String(cFormat: "enqueue %d:               %.3f s", count - 1_000, enqueueTime))
print(String(cFormat: "list (%d, streamed):      %.3f s", listed, listTime))
print(String(cFormat: "state change at 1,000:     %.3f ms", changeAtThousand * 1000))
print(String(cFormat: "state change at %d:   %.3f ms", count, changeAtFull * 1000))
print(String(cFormat: "peak resident memory:      %.1f MiB", peakForQueue))
print(String(cFormat: "restore + full snapshot of %d (DownloadManager.downloads): %.3f s, peak %.1f MiB", snapshots, snapshotTime, peakResidentMiB()))

if ProcessInfo.processInfo.environment["MONSOON_BENCH_DETAIL"] != nil {
    let other = folder.joiningPath("direct.sqlite")
    let store = try DownloadStore(path: other)
    var direct = 0.0
    var built = 0.0
    var begin = 0
    while begin < 99_000 {
        var batch: [DownloadRequest] = []
        built += await seconds { batch = requests(begin..<begin + 5_000) }
        direct += try await seconds { _ = try store.add(batch) }
        begin += 5_000
    }
    print(String(cFormat: "detail: building 99,000 requests %.3f s; store.add alone %.3f s", built, direct))
}
