import FoundationEssentials
import Glibc
import MonsoonEngine
import MonsoonPodcasts

/// Each podcast folder's `monsoon-manifest.json`, written from the ledger: the ledger row is the
/// manifest (size, SHA-256, final URL, validators, worker and node), so `monsoon verify DIR`
/// checks a worker's folder as it checks a local archive.
public enum ClusterManifests {
    /// The class of the two-key advisory locks (class, feed id) under which a feed's manifest is
    /// written: "mf" in ASCII. The two-key form never meets the one-key lock of migrations.
    static let lockClass: Int32 = 0x6d66

    /// Writes the manifest of each of `feeds` into its folder under `root` (the workers' `-o`
    /// folder), from every ledger row of the feed's episodes; a feed without a folder or without
    /// a row is left out. The manifest replaces what the folder had, atomically.
    ///
    /// Each feed's rows are read and its file written in one transaction under the feed's
    /// advisory lock: writers of the same manifest take turns, and each reads what the one
    /// before it committed, so the last one writes the newest ledger.
    ///
    /// - Throws: `PostgresError` from the database, `EpisodeFileError` when a folder or a
    ///   manifest cannot be written (the feeds before it are written).
    public static func write(feeds: Set<Int64>, root: String, on connection: PostgresConnection) throws {
        for feed in feeds.sorted() {
            try connection.transaction(isolation: .readCommitted) {
                // The lock's second key is an int4: ids past 2^31 share it with others, which only makes them take turns.
                try connection.execute("SELECT pg_advisory_xact_lock($1::integer, ($2::bigint % 2147483648)::integer)", [lockClass, feed])
                guard let manifest = try manifest(of: feed, on: connection) else { return }
                try write(manifest.manifest, in: manifest.folder, root: root)
            }
        }
    }

    /// The manifest of `feed` and its folder (relative to the workers' folder); nil when the
    /// feed has no folder or no ledger row.
    static func manifest(of feed: Int64, on connection: PostgresConnection) throws(PostgresError) -> (manifest: Manifest, folder: String)? {
        guard let row = try connection.execute("SELECT title, url, folder FROM monsoon_feeds WHERE id = $1", [feed]).first,
              let folder = try row.string("folder"), !folder.isEmpty else { return nil }
        let url = try row.string("url") ?? ""
        let prefix = folder + "/"
        // The newest row of each path: an episode downloaded again is listed once, as it is now.
        let rows = try connection.execute("""
            SELECT DISTINCT ON (l.path) l.path, l.size, l.sha256, l.final_url, l.etag, l.last_modified, l.completed_at, l.worker, l.node,
                   coalesce(e.metadata->>'guid', e.identity) AS guid, coalesce(e.title, e.metadata->>'title') AS title, e.enclosure_url
            FROM monsoon_ledger l JOIN monsoon_episodes e ON e.id = l.episode_id
            WHERE e.feed_id = $1
            ORDER BY l.path, l.completed_at DESC, l.job_id DESC
            """, [feed])
        var files: [Manifest.Entry] = []
        for row in rows.rows {
            let path = try row.string("path") ?? ""
            // A row of the feed's earlier folder (renamed since) is not in this one; a name that
            // would climb out of the folder is no file of it (and `verify` would refuse the manifest).
            guard path.hasPrefix(prefix), Manifest.isInside(String(path.dropFirst(prefix.count))) else { continue }
            files.append(Manifest.Entry(
                kind: "episode", file: String(path.dropFirst(prefix.count)), size: try row.int("size") ?? 0, sha256: try row.string("sha256") ?? "",
                guid: try row.string("guid"), title: try row.string("title"), sourceURL: try row.string("enclosure_url").map(Redaction.redact),
                finalURL: try row.string("final_url").map(Redaction.redact), etag: try row.string("etag"), lastModified: try row.string("last_modified"),
                downloaded: try row.date("completed_at").map(Manifest.timestamp), worker: try row.string("worker"), node: try row.string("node")))
        }
        guard !files.isEmpty else { return nil }
        files.sort { $0.file < $1.file }
        let manifest = Manifest(podcast: FallbackName.podcast(title: try row.string("title"), feedURL: url), feedURL: Redaction.redact(url),
                                generated: Manifest.timestamp(Date()), files: files)
        return (manifest, folder)
    }

    /// Writes `manifest` into `folder` under `root`: created if missing, never reached through a
    /// link, and never outside `root` (a feed's folder comes from the database).
    static func write(_ manifest: Manifest, in folder: String, root: String) throws {
        let path = root + "/" + folder
        do {
            close(try ConfinedFolder.open(path, root: root, create: true))
        } catch {
            throw EpisodeFileError(.fileSystem, "cannot write the manifest of \(path): \(error.message)")
        }
        try manifest.write(in: path)
    }
}
