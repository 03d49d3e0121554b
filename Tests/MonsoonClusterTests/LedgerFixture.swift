import Foundation
@testable import MonsoonCluster
import MonsoonTestServer
import Testing

/// A migrated database of the suite's server with one feed whose downloads are written straight
/// into the ledger (no worker), and their files in a folder of their own, as a worker's `-o`.
struct LedgerFixture {
    let url: String
    let root: String
    let feed: Int64
    let folder: String

    /// A database with the feed `feedURL` (titled `title`, downloading into `folder`), and an empty `root`.
    static func make(title: String? = "Show", folder: String = "Show", feedURL: String = "https://feeds.example.com/show/rss") throws -> LedgerFixture {
        let url = try temporaryPostgres().createDatabase(migrated: true)
        let connection = try PostgresConnection(url)
        let feed = try #require(try connection.execute("INSERT INTO monsoon_feeds (url, title, folder) VALUES ($1, $2, $3) RETURNING id", [feedURL, title, folder]).first?.int64(0))
        let root = NSTemporaryDirectory() + "monsoon-ledger-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        return LedgerFixture(url: url, root: root, feed: feed, folder: folder)
    }

    /// Records the download of `name` (in the feed's folder) holding `body`, as a worker of
    /// `node` would (an episode recorded again has its row replaced), and puts the file there unless `write` is false. `metadata` is the episode's
    /// jsonb; `identity` its identity (the guid when the metadata has none).
    @discardableResult
    func record(_ name: String, body: String, node: String = "n1", worker: String = "w1", identity: String? = nil, title: String? = nil,
                metadata: String? = nil, write: Bool = true, on connection: PostgresConnection) throws -> Int64 {
        let path = folder + "/" + name
        let data = Data(body.utf8)
        let enclosure = "https://cdn.example.com/\(name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? name)"
        let episode = try #require(try connection.execute("""
            INSERT INTO monsoon_episodes (feed_id, identity, title, enclosure_url, enclosure_length, file_name, metadata)
            VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb)
            ON CONFLICT (feed_id, identity) DO UPDATE SET file_name = excluded.file_name RETURNING id
            """, [feed, identity ?? "id-\(name)", title, enclosure, data.count, name, metadata]).first?.int64(0))
        let job = try #require(try connection.execute("""
            INSERT INTO monsoon_jobs (kind, key, feed_id, episode_id, host, state, finished_at)
            VALUES ('download', $1, $2, $3, 'cdn.example.com', 'completed', now()) RETURNING id
            """, ["episode:\(episode):\(UUID().uuidString)", feed, episode]).first?.int64(0))
        try connection.execute("""
            INSERT INTO monsoon_ledger (job_id, episode_id, path, size, sha256, final_url, etag, last_modified, worker, node, lease_token, completed_at)
            VALUES ($1, $2, $3, $4, $5, $6, '"v1"', 'Mon, 01 Jan 2024 00:00:00 GMT', $7, $8, 1, clock_timestamp())
            ON CONFLICT (episode_id) DO UPDATE SET job_id = excluded.job_id, path = excluded.path, size = excluded.size, sha256 = excluded.sha256,
                worker = excluded.worker, node = excluded.node, completed_at = excluded.completed_at
            """, [job, episode, path, data.count, Body.bytes(Array(data)).sha256Hex(), enclosure + "?from=cdn", worker, node])
        if write { try self.write(path, data) }
        return episode
    }

    /// Puts `data` at `path` under the root, its folders made as needed.
    func write(_ path: String, _ data: Data) throws {
        let full = root + "/" + path
        try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try data.write(to: URL(fileURLWithPath: full))
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: root)   // a leftover folder in /tmp harms nothing
    }
}
