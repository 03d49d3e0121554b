import Foundation
@testable import MonsoonCluster
import MonsoonEngine
import MonsoonTestServer
import Testing

/// A host's least interval between requests (`cluster host --min-interval`) holds between any two
/// requests to it from any worker, by the server's own clock: a look where a download leads and
/// the download, a retry after a cut or a 503 and the next job, two first requests.
@Suite(.temporaryPostgres) struct RequestSpacingTests {
    @Test func theIntervalHoldsBetweenEveryRequestOfEveryWorker() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (url, bodies) = try await ClusterWorkerTests.catalogue(server, episodes: 6, size: 30_000)
        for index in 0..<6 {
            // Every other episode is behind a redirect on the same host (a look, then the download);
            // two fail once (a 503, a cut), and are asked again by a later claim.
            let body = Body.pattern(size: 30_000 + index * 1000, seed: UInt64(index + 1))
            let faults: [Fault] = index == 1 ? [.status(503, times: 1)] : index == 4 ? [.dropAfter(bytes: 10_000, times: 1)] : []
            server.setRoute("/e/\(index).mp3", Route(body: body, contentType: "audio/mpeg", faults: index % 2 == 0 ? [.redirect(to: "/d/\(index).mp3")] : faults))
            if index % 2 == 0 { server.setRoute("/d/\(index).mp3", Route(body: body, contentType: "audio/mpeg")) }
        }
        let interval = 150
        try await onThread {
            let connection = try PostgresConnection(url)
            try ClusterAdmin(connection: connection).setLimits(host: try #require(ClusterHost.key(of: server.url("/"))), maxConnections: 2, minIntervalMilliseconds: interval)
            // The retries come back at once (their backoff is the queue's, and its due jobs are promoted at each worker's tick).
        }
        let folder = NSTemporaryDirectory() + "monsoon-spacing-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }   // a leftover folder in /tmp harms nothing
        let workers = ["s1", "s2", "s3"].map { name in
            var configuration = ClusterWorkerTests.configuration(url, folder: folder, name: name)
            configuration.pollSeconds = 0.05
            return ClusterWorker(configuration: configuration)
        }
        let runs = workers.map { worker in Task { try await worker.run() } }
        defer { for worker in workers { worker.stop() } }
        try await ClusterWorkerTests.waitForJobs(url, in: ["completed"], seconds: 90)
        for worker in workers { worker.stop() }
        for run in runs { _ = try await run.value }
        #expect(ClusterWorkerTests.files(under: folder) == bodies)
        let times = server.requests.map(\.time).sorted()
        #expect(times.count >= 6 * 2 - 3 + 2, "looks, downloads and retries: \(server.requests.map { "\($0.method) \($0.path)" })")
        let gaps = zip(times.dropFirst(), times).map { $0.timeIntervalSince($1) }
        #expect(gaps.allSatisfy { $0 >= Double(interval) / 1000 }, "gaps \(gaps.map { Int($0 * 1000) }) ms; \(server.requests.map { "\($0.method) \($0.path)" })")
    }
}
