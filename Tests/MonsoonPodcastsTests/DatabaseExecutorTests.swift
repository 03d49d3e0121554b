import Dispatch
import Foundation
import MonsoonEngine
import MonsoonStore
import MonsoonTestServer
import Testing
@testable import MonsoonPodcasts

/// The library's async methods leave Swift's cooperative pool free: their database work, and its
/// waits for another process's lock, run on the library's own thread, in the calling task.
@Suite struct DatabaseExecutorTests {
    @Test func databaseWorkRunsOnTheLibrarysThreadInTheCallingTask() async throws {
        let fixture = try LibraryFixture()
        let library = fixture.library
        let label = try await library.onDatabase { DispatchQueue.getSpecific(key: DatabaseExecutor.queueLabel) }
        #expect(label == "monsoon.library")
        #expect(DispatchQueue.getSpecific(key: DatabaseExecutor.queueLabel) == nil, "the caller itself is elsewhere")
        // Still the caller's task: a Ctrl-C (cancellation) reaches a feed's transaction there.
        let gate = DispatchSemaphore(value: 0)
        let task = Task { () -> Bool in
            gate.wait()
            return try await library.onDatabase { Task.isCancelled }
        }
        task.cancel()
        gate.signal()
        #expect(try await task.value)
    }

    /// More subscriptions than the pool has threads, each waiting for a lock another connection
    /// holds: a task on the pool still runs meanwhile, so the lock is let go before any of them
    /// gives up waiting (10 s), and all of them succeed. Were they waiting on the pool's threads,
    /// the task could run only once every one had failed with "busy".
    @Test func subscriptionsWaitingForALockLeaveThePoolFree() async throws {
        let server = try TestServer()
        let path = FileManager.default.temporaryDirectory.path(percentEncoded: false) + "/monsoon-executor-\(UUID().uuidString).sqlite"
        defer {
            server.stop()
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }   // scratch files: nothing to keep
        }
        let manager = DownloadManager()
        let count = ProcessInfo.processInfo.activeProcessorCount + 2
        var libraries: [PodcastLibrary] = []
        for index in 0..<count {
            server.setRoute("/feed\(index)", feedRoute(rss(title: "Show \(index)", items: [("a", "One", "https://cdn.example.com/\(index).mp3")])))
            libraries.append(try PodcastLibrary(database: try Database(path: path), manager: manager))
        }
        let holder = try Database(path: path)
        try holder.execute("BEGIN IMMEDIATE")
        let subscriptions = libraries.enumerated().map { index, library in
            // Each library is used by this one task alone.
            nonisolated(unsafe) let library = library
            return Task { try await library.subscribe(to: server.url("/feed\(index)")) }
        }
        let deadline = Date().addingTimeInterval(60)
        while (0..<count).contains(where: { server.requests(for: "/feed\($0)").isEmpty }) && Date() < deadline {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        // Every feed is in, and every library's thread busy: with the reads before the fetches done,
        // that is each subscription's write, waiting for the lock.
        while !libraries.allSatisfy(\.isOnDatabase) && Date() < deadline { try await Task.sleep(nanoseconds: 10_000_000) }
        let waiting = libraries.allSatisfy(\.isOnDatabase)
        #expect(waiting, "every library's write waits for the lock")
        #expect(await Task.detached { true }.value)
        try holder.execute("COMMIT")
        for subscription in subscriptions {
            guard case .subscribed = try await subscription.value else { Issue.record("expected a new subscription"); continue }
        }
        await manager.shutdown()
    }
}
