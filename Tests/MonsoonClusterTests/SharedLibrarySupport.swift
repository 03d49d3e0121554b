import Foundation
@testable import MonsoonCluster
import MonsoonEngine
@testable import MonsoonPodcasts
import MonsoonTestServer
import Testing

/// A feed item for the shared library's tests.
struct TestItem {
    var guid: String?
    var title: String
    /// The enclosure's file name under https://cdn.example.com/ (or a whole URL).
    var file: String?
    /// The publish day in June 2024.
    var day: Int

    init(_ guid: String?, _ title: String, _ file: String?, day: Int) {
        self.guid = guid
        self.title = title
        self.file = file
        self.day = day
    }

    /// The enclosure's URL.
    var url: String? { file.map { $0.contains("://") ? $0 : "https://cdn.example.com/\($0)" } }
}

/// An RSS document: `items` in the order given (newest first, as feeds list them), a link to the
/// next page when given.
func rssFeed(title: String = "Show", _ items: [TestItem], next: String? = nil) -> String {
    var text = """
        <?xml version="1.0" encoding="UTF-8"?>
        <rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom"><channel><title>\(title)</title>
        """ + (next.map { "<atom:link rel=\"next\" href=\"\($0)\"/>" } ?? "") + "\n"
    for item in items {
        text += "<item><title>\(item.title)</title>"
        if let guid = item.guid { text += "<guid isPermaLink=\"false\">\(guid)</guid>" }
        if let url = item.url { text += "<enclosure url=\"\(url)\" type=\"audio/mpeg\" length=\"1000\"/>" }
        text += "<pubDate>Mon, \(item.day < 10 ? "0" : "")\(item.day) Jun 2024 10:00:00 GMT</pubDate></item>\n"
    }
    return text + "</channel></rss>\n"
}

/// A feed's route on the test server, with an ETag so a refresh's conditional GET gets a 304.
func feedRoute(_ text: String, etag: String? = nil) -> Route {
    Route(body: .bytes(Array(text.utf8)), contentType: "application/rss+xml", etag: etag)
}

/// A migrated database of the suite's server, a worker's queue on it, and an engine that retries
/// little (a test of a failing feed does not wait for a real policy's backoff).
struct SharedLibraryFixture {
    let url: String
    let queue: JobQueue
    let manager: DownloadManager

    init(worker: String = "w1") async throws {
        let server = try temporaryPostgres()
        (url, queue) = try await onThread {
            let url = try server.createDatabase(migrated: true)
            let connection = try PostgresConnection(url)
            // Episodes are never downloaded here: their host gives no job to a claim.
            let queue = JobQueue(connection: connection, worker: worker)
            try queue.hold(host: "cdn.example.com", seconds: 3600)
            return (url, queue)
        }
        var configuration = EngineConfiguration()
        configuration.retry = RetryPolicy(maxRetries: 0, baseDelay: 0.05, maxDelay: 0.1, jitter: 0)
        manager = DownloadManager(configuration: configuration)
    }

    /// Adds feeds with `rules`.
    @discardableResult
    func add(_ urls: [URL], rules: ArchiveRules = ArchiveRules()) async throws -> [SharedLibrary.AddedFeed] {
        try await onThread { try SharedLibrary.addFeeds(urls, rules: rules, on: queue.connection) }
    }

    /// Claims the refresh of `feedID` as `queue`'s worker.
    func claimRefresh(of feedID: Int64, on queue: JobQueue? = nil) async throws -> ClaimedJob {
        let queue = queue ?? self.queue
        return try await onThread {
            // A refresh whose worker died (a lease taken back) runs alone, claimed as a suspect.
            var jobs = try queue.claim(slots: 16)
            if !jobs.contains(where: { $0.kind == .refresh && $0.feedID == feedID }) {
                try queue.release(jobs.map(\.lease))
                jobs = try queue.claim(slots: 1, suspects: true)
            }
            let job = try #require(jobs.first { $0.kind == .refresh && $0.feedID == feedID }, "the refresh of feed \(feedID) is not due")
            // The others claimed with it wait for their own turn.
            try queue.release(jobs.map(\.lease).filter { $0 != job.lease })
            return job
        }
    }

    /// Runs a claimed refresh on a thread of its own, as a worker does.
    func run(_ job: ClaimedJob, on queue: JobQueue? = nil) async throws -> ClusterRefresh.Outcome {
        let queue = queue ?? self.queue
        return try await withTaskExecutorPreference(DatabaseExecutor(label: "monsoon-cluster-refresh")) {
            try await ClusterRefresh.run(job, manager: manager, queue: queue)
        }
    }

    /// Claims the refresh of `feedID` and runs it.
    func refresh(_ feedID: Int64) async throws -> ClusterRefresh.Outcome {
        try await run(try await claimRefresh(of: feedID))
    }

    /// Each queued download's path (`folder/file name`), by the episode's title, and its job's priority.
    func downloads() async throws -> [(title: String, path: String, priority: Int, identity: String)] {
        try await onThread {
            try queue.connection.execute("""
                SELECT e.title, f.folder || '/' || e.file_name, j.priority, e.identity FROM monsoon_jobs j
                JOIN monsoon_episodes e ON e.id = j.episode_id JOIN monsoon_feeds f ON f.id = e.feed_id
                WHERE j.kind = 'download' ORDER BY j.priority, j.id
                """).rows.map { (try $0.string(0) ?? "", try $0.string(1) ?? "", try $0.int(2) ?? 0, try $0.string(3) ?? "") }
        }
    }

    func count(_ sql: String) async throws -> Int {
        try await onThread { try queue.connection.execute(sql).first?.int(0) ?? -1 }
    }
}
