import Foundation
@testable import MonsoonCluster
import MonsoonEngine
import MonsoonTestServer
import Synchronization
import Testing

/// A worker paused at the worst moments, on a server that sends other bytes at each download
/// (an ad inserted): whatever the order, the file under its name is the one the ledger records.
@Suite(.temporaryPostgres) struct StaleWorkerTests {
    /// Blocks a thread until opened; said once opened.
    final class Latch: Sendable {
        private let opened = Mutex(false)
        private let semaphore = DispatchSemaphore(value: 0)

        func open() {
            let first = opened.withLock { was in
                defer { was = true }
                return !was
            }
            if first { semaphore.signal() }
        }

        var isOpen: Bool { opened.withLock { $0 } }

        /// Blocks the calling thread (a worker's database thread: the worker stands still).
        func wait() {
            semaphore.wait()
            semaphore.signal()
        }
    }

    static let versionA = Body.pattern(size: 100_000, seed: 101)
    static let versionB = Body.pattern(size: 100_000, seed: 202)

    /// One episode on `server`, served as version A; its worker `w1`, which stops at `step` until
    /// `release` opens (once `paused` is open).
    static func setUp(_ server: TestServer, step: WorkerConfiguration.PlacingStep, paused: Latch, release: Latch) async throws
        -> (url: String, folder: String, worker: ClusterWorker) {
        let (url, _) = try await ClusterWorkerTests.catalogue(server, episodes: 1, size: 100_000)
        server.setRoute("/e/0.mp3", Route(body: versionA, contentType: "audio/mpeg"))
        let folder = NSTemporaryDirectory() + "monsoon-stale-\(UUID().uuidString)"
        var configuration = ClusterWorkerTests.configuration(url, folder: folder, name: "w1")
        configuration.placing = { reached in
            guard reached == step, !release.isOpen else { return }
            paused.open()
            release.wait()
        }
        return (url, folder, ClusterWorker(configuration: configuration))
    }

    static func waitUntil(_ latch: Latch) async throws {
        let deadline = Date().addingTimeInterval(60)
        while !latch.isOpen {
            guard Date() < deadline else { throw PostgresTestError("the worker never reached its pause") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    static func ledger(_ url: String) async throws -> [String: String] {
        try await onThread {
            let rows = try PostgresConnection(url).execute("SELECT path, sha256 FROM monsoon_ledger")
            return Dictionary(uniqueKeysWithValues: try rows.rows.map { (try $0.string(0) ?? "", try $0.string(1) ?? "") })
        }
    }

    /// Paused after its download and before it locks its job, past its lease: the job runs again
    /// elsewhere (version B this time) and is recorded. Woken, the first worker finds its job
    /// lost and replaces nothing.
    @Test func aWorkerPausedBeforeItsLockNeverReplacesTheFileRecordedMeanwhile() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (paused, release) = (Latch(), Latch())
        let (url, folder, first) = try await Self.setUp(server, step: .beforeLocking, paused: paused, release: release)
        defer { try? FileManager.default.removeItem(atPath: folder) }   // a leftover folder in /tmp harms nothing
        let firstRun = Task { try await first.run() }
        defer { release.open(); first.stop() }   // a failing test leaves no worker running
        try await Self.waitUntil(paused)
        // Its lease runs out meanwhile: taken back, and due again at once.
        try await onThread {
            let connection = try PostgresConnection(url)
            try connection.execute("UPDATE monsoon_jobs SET lease_expires_at = now() - interval '1 second' WHERE state = 'running'")
            #expect(try JobQueue(connection: connection, worker: "test", leaseSeconds: 8).reapExpiredLeases().reaped == 1)
            try connection.execute("UPDATE monsoon_jobs SET state = 'available', run_at = now() WHERE state = 'scheduled'")
        }
        server.setRoute("/e/0.mp3", Route(body: Self.versionB, contentType: "audio/mpeg"))
        let second = ClusterWorker(configuration: ClusterWorkerTests.configuration(url, folder: folder, name: "w2"))
        let secondRun = Task { try await second.run() }
        try await ClusterWorkerTests.waitForJobs(url, in: ["completed"])
        second.stop()
        #expect(try await secondRun.value.completed == 1)
        release.open()
        first.stop()
        let summary = try await firstRun.value
        #expect(summary.completed == 0 && summary.lost == 1)
        let expected = ["Show/episode 0.mp3": Self.versionB.sha256Hex()]
        #expect(ClusterWorkerTests.files(under: folder) == expected, "version B, which the ledger records")
        #expect(try await Self.ledger(url) == expected)
        let verify = await ClusterCommandTests.monsoon(["verify", "--db", url, folder])
        #expect(verify.status == 0, "\(verify)")
    }

    /// Paused with its job locked, past its lease: nobody can take the job meanwhile (the reaper
    /// skips it, a change of it waits for the lock), so its file takes its name and is recorded.
    @Test func aWorkerPausedHoldingItsLockKeepsItsJob() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (paused, release) = (Latch(), Latch())
        let (url, folder, first) = try await Self.setUp(server, step: .locked, paused: paused, release: release)
        defer { try? FileManager.default.removeItem(atPath: folder) }   // a leftover folder in /tmp harms nothing
        let firstRun = Task { try await first.run() }
        defer { release.open(); first.stop() }
        try await Self.waitUntil(paused)
        try await onThread {
            let connection = try PostgresConnection(url)
            try connection.execute("SET lock_timeout = '200ms'")
            #expect(throws: PostgresError.self, "the job's row is locked: its lease cannot be taken away") {
                try connection.execute("UPDATE monsoon_jobs SET lease_expires_at = now() - interval '1 second' WHERE state = 'running'")
            }
            let queue = JobQueue(connection: try PostgresConnection(url), worker: "w2", leaseSeconds: 8)
            #expect(try queue.reapExpiredLeases().reaped == 0)
            #expect(try queue.claim(slots: 4).isEmpty)
        }
        release.open()
        try await ClusterWorkerTests.waitForJobs(url, in: ["completed"])
        first.stop()
        #expect(try await firstRun.value.completed == 1)
        let expected = ["Show/episode 0.mp3": Self.versionA.sha256Hex()]
        #expect(ClusterWorkerTests.files(under: folder) == expected)
        #expect(try await Self.ledger(url) == expected)
    }
}
