import FoundationEssentials
import Glibc
import MonsoonEngine
import MonsoonPodcasts

/// `monsoon verify --db URL DIR`: re-hashes a workers' folder against the cluster's ledger, as
/// `ArchiveVerifier` does against manifests, with the same report.
///
/// The ledger is read in pages in the order of its paths, and the folder's files looked up in
/// batches: memory stays bounded however many rows it holds (the report's lists aside).
public enum ClusterVerifier {
    /// Verifies `directory`, the folder workers download into (their `-o`): each file the ledger
    /// lists (only those downloaded on `node`, when given) is there with its size and SHA-256,
    /// and, without `node`, each file there is one the ledger lists (the work folder and the
    /// manifests aside). Symbolic links are reported, never read through. `pageSize` ledger rows
    /// are read, or files looked up, per query.
    /// - Throws: `PostgresError` from the database (one without this Monsoon's schema is
    ///   refused); `EpisodeFileError` for a file that cannot be read.
    public static func verify(_ directory: String, node: String?, on connection: PostgresConnection, pageSize: Int = 10_000) throws -> ArchiveVerifier.Report {
        try ClusterSchema.requireCurrent(connection)
        let root = directory.standardizedPath
        var report = ArchiveVerifier.Report()
        report.folders = try connection.execute("""
            SELECT f.folder FROM monsoon_feeds f
            WHERE f.folder IS NOT NULL AND EXISTS (SELECT 1 FROM monsoon_episodes e JOIN monsoon_ledger l ON l.episode_id = e.id
                                                   WHERE e.feed_id = f.id AND ($1::text IS NULL OR l.node = $1))
            ORDER BY 1
            """, [node]).rows.compactMap { try $0.string("folder").map { root + "/" + $0 } }
        var links = Set<String>()
        // The ledger first, then the folder: a file published meanwhile has its row by the time
        // the folder is read (a worker commits its row once the file has its name).
        var after = ""
        while true {
            // The newest row of each path: an episode downloaded again counts as it is now.
            let page = try connection.execute("""
                SELECT DISTINCT ON (path) path, size, sha256 FROM monsoon_ledger
                WHERE path > $1 AND ($2::text IS NULL OR node = $2)
                ORDER BY path, completed_at DESC, job_id DESC LIMIT $3
                """, [after, node, pageSize])
            for row in page.rows {
                let file = try row.string("path") ?? ""
                after = file
                report.checked += 1
                let path = root + "/" + file
                // A row naming something outside the folder names no file of it.
                guard Manifest.isInside(file) else {
                    report.missing.append(path)
                    continue
                }
                // Through a link, the bytes read would be another file's: reported, not read.
                if let link = LocalFile.firstLink(below: root, in: path) {
                    links.insert(link)
                    continue
                }
                guard let size = LocalFile.size(at: path) else {
                    report.missing.append(path)
                    continue
                }
                if try size != row.int("size") || sha256(of: path) != row.string("sha256") { report.changed.append(path) }
            }
            if page.count < pageSize { break }
        }
        try walk(root, extras: node == nil ? connection : nil, pageSize: pageSize, report: &report, links: &links)
        report.links = links.sorted()
        report.extra.sort()
        return report
    }

    /// Goes through the files under `root` (the work folder aside), without following a link:
    /// notes the links, and, with a connection, reports the files the ledger does not list.
    static func walk(_ root: String, extras connection: PostgresConnection?, pageSize: Int, report: inout ArchiveVerifier.Report, links: inout Set<String>) throws {
        var batch: [String] = []
        func lookUp() throws {
            guard let connection, !batch.isEmpty else { return }
            let listed = try Set(connection.execute("SELECT path FROM monsoon_ledger WHERE path = ANY($1::text[])", [PostgresArray(batch.map(Optional.some))])
                .rows.compactMap { try $0.string("path") })
            report.extra += batch.filter { !listed.contains($0) }.map { root + "/" + $0 }
            batch.removeAll(keepingCapacity: true)
        }
        try FileTree.walk(root) { file, kind in
            if file == ".monsoon-work" { return false }
            switch kind {
            case .link: links.insert(root + "/" + file)
            case .file where !isManifest(file.fileName):
                batch.append(file)
                if batch.count >= pageSize { try lookUp() }
            default: break
            }
            return true
        }
        try lookUp()
    }

    /// A manifest, or one being written (`AtomicFile`'s temporary name for it).
    static func isManifest(_ name: String) -> Bool {
        name == Manifest.fileName || (name.hasPrefix("." + Manifest.fileName + ".") && name.hasSuffix(".tmp"))
    }

    static func sha256(of path: String) throws -> String {
        do {
            return try FileDigest.sha256(ofFile: path)
        } catch {
            throw EpisodeFileError(.fileSystem, error.message)
        }
    }
}
