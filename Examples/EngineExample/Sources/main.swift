// engine-example URL [FOLDER]: downloads URL into FOLDER (default: the current folder) with
// Monsoon's engine, printing its progress, and exits 0 once the file is complete.
import Foundation
import MonsoonEngine

guard let text = CommandLine.arguments.dropFirst().first, let url = URL(string: text) else {
    print("usage: engine-example URL [FOLDER]")
    exit(2)
}
let folder = CommandLine.arguments.dropFirst(2).first ?? FileManager.default.currentDirectoryPath

let manager = DownloadManager()   // in memory; DownloadManager(databasePath:) keeps the queue in SQLite
let events = manager.events()     // subscribe before enqueueing: nothing is missed
let id = try await manager.enqueue(DownloadRequest(id: "example", url: url, destination: .directory(folder)))
var status: Int32 = 1
loop: for await event in events {
    switch event {
    case .progress(id, let bytes, let total):
        print("\(bytes) of \(total.map(String.init) ?? "?") bytes")
    case .statusChanged(let download) where download.id == id && download.status == .completed:
        print("saved \(download.filePath ?? "")")
        status = 0
        break loop
    case .statusChanged(let download) where download.id == id && download.status == .failed:
        print("failed: \(download.lastError?.message ?? "unknown error")")
        break loop
    default:
        continue
    }
}
await manager.shutdown()
exit(status)
