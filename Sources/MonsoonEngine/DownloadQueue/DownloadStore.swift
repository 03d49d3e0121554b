import FoundationEssentials
import MonsoonStore

/// The persistent download queue: one row per download, in SQLite (the `QueueStore` of a
/// machine's own engine, its podcast layer and its CLI; a cluster worker's engine keeps its queue in memory).
///
/// The engine's transfer thread keeps one `DownloadStore` and writes each state
/// change as one small transaction; progress at most once a second per download.
/// Other processes open their own `DownloadStore` on the same file to list the
/// queue and to post commands to the process that runs it.
///
/// - Important: confined to one thread at a time, like its connection.
public final class DownloadStore: QueueStore {
    let database: Database

    /// Markers for the statements on hot paths (see `Database.statement(_:_:)`).
    private final class StatementKey: Sendable {}
    private static let insertKey = StatementKey()
    private static let updateKey = StatementKey()

    static let migrator = Migrator(component: "downloads", [
        .init(version: 1, sql: """
            CREATE TABLE downloads (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                id TEXT NOT NULL UNIQUE,
                url TEXT NOT NULL,
                destination_kind TEXT NOT NULL CHECK (destination_kind IN ('file', 'directory')),
                destination TEXT NOT NULL,
                priority INTEGER NOT NULL DEFAULT 0,
                expected_size INTEGER,
                expected_type TEXT,
                headers TEXT NOT NULL DEFAULT '{}',
                user_info TEXT NOT NULL DEFAULT '{}',
                status TEXT NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0,
                backoff_level INTEGER NOT NULL DEFAULT 0,
                retry_at REAL,
                error_code TEXT,
                error_message TEXT,
                error_status INTEGER,
                bytes INTEGER NOT NULL DEFAULT 0,
                total INTEGER,
                checkpoint INTEGER NOT NULL DEFAULT 0,
                file_path TEXT,
                resume_url TEXT,
                etag TEXT,
                last_modified TEXT,
                resume_total INTEGER,
                updated REAL NOT NULL
            );
            CREATE INDEX downloads_by_url ON downloads (url);
            CREATE INDEX downloads_by_file_path ON downloads (file_path) WHERE file_path IS NOT NULL;
            CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
            CREATE TABLE download_commands (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                download_id TEXT,
                action TEXT NOT NULL,
                argument TEXT,
                created REAL NOT NULL
            );
            """),
        // A name chosen by the caller, its extension by the response (`Destination.named`).
        .init(version: 2, sql: "ALTER TABLE downloads ADD COLUMN file_stem TEXT"),
        // Where the bytes came from after redirects (for manifests).
        .init(version: 3, sql: "ALTER TABLE downloads ADD COLUMN final_url TEXT"),
        // A cap on the file's size and why (`DownloadRequest.SizeLimit`), and the folder below
        // which no symbolic link is followed (`DownloadRequest.root`).
        .init(version: 4, sql: """
            ALTER TABLE downloads ADD COLUMN size_limit INTEGER; ALTER TABLE downloads ADD COLUMN size_limit_reason TEXT;
            ALTER TABLE downloads ADD COLUMN root TEXT
            """),
        // The addresses it may reach (`DownloadRequest.addresses`; none: any), and whether it
        // follows redirects (`followsRedirects`; none: it does).
        .init(version: 5, sql: "ALTER TABLE downloads ADD COLUMN addresses TEXT; ALTER TABLE downloads ADD COLUMN follows_redirects INTEGER"),
        // Who answers for each download (`DownloadOwner`), which its id used to say: the rows
        // saved before are given theirs from their ids, once.
        .init(version: 6, sql: """
            ALTER TABLE downloads ADD COLUMN owner TEXT NOT NULL DEFAULT 'direct';
            CREATE INDEX downloads_by_owner ON downloads (owner)
            """, then: { try fillOwners($0) }),
        // The SHA-256 of a completed file, when its attempt hashed it as it came (`Download.checksum`).
        .init(version: 7, sql: "ALTER TABLE downloads ADD COLUMN checksum TEXT"),
        // Paths are looked up among unfinished downloads only (`owner(ofPath:)`): a completed one leaves the index, and
        // a small file, completed in one save, never enters it (a page of the index written with each completion).
        .init(version: 8, sql: """
            DROP INDEX IF EXISTS downloads_by_file_path;
            CREATE INDEX downloads_by_file_path ON downloads (file_path) WHERE file_path IS NOT NULL AND status != 'completed'
            """),
    ])

    /// Gives each row saved before the `owner` column the owner its id names.
    private static func fillOwners(_ database: Database) throws {
        let ids = try database.statement("SELECT id FROM downloads").query(reading: DownloadColumn.self) { $0.text(.id) ?? "" }
        let update = try database.statement("UPDATE downloads SET owner = :owner WHERE id = :id")
        for id in ids {
            let owner = DownloadOwner.ofLegacyID(id)
            guard owner != .direct else { continue }
            var values = ColumnValues<DownloadColumn>()
            values[.id] = .text(id)
            values[.owner] = .text(owner.rawValue)
            try update.run(values)
        }
    }

    /// The newest schema version this build knows.
    public static var schemaVersion: Int { migrator.latestVersion }

    /// Opens (creating and migrating) the queue in the database at `path`.
    ///
    /// - Parameter busyTimeout: how long a statement waits for another connection's lock, in
    ///   seconds, before it fails (see `Database.init(path:busyTimeout:)`).
    /// - Throws: `StoreError` for a file that cannot be opened, is damaged, or
    ///   comes from a newer Monsoon (the file is then left untouched).
    public init(path: String, busyTimeout: Double = 10) throws {
        database = try Database(path: path, busyTimeout: busyTimeout)
        try Self.migrator.migrate(database)
    }

    /// Opens the queue on an existing connection (one shared with other tables, say).
    public init(database: Database) throws {
        self.database = database
        try Self.migrator.migrate(database)
    }

    /// Every download, in enqueue order.
    public func downloads() throws -> [Download] {
        try rows(where: "1").map(\.listed)
    }

    /// One download, by id.
    public func download(withID id: DownloadID) throws -> Download? {
        try rows(where: "id = ?", [id.rawValue]).first?.listed
    }

    /// The downloads of `url`, in enqueue order.
    public func downloads(of url: URL) throws -> [Download] {
        try rows(where: "url = ?", [url.absoluteString]).map(\.listed)
    }

    /// The downloads among `ids` that exist, in enqueue order (for following another
    /// process's work on them; a missing id was removed).
    public func downloads(withIDs ids: [DownloadID]) throws -> [Download] {
        try records(withIDs: ids).map(\.listed)
    }

    /// - Parameter skippingUnreadable: given, a row that cannot be read goes to it and is left
    ///   out (the download then counts as not found) instead of failing the whole read.
    package func records(withIDs ids: [DownloadID], skippingUnreadable: ((Error) -> Void)?) throws -> [DownloadRecord] {
        var found: [DownloadRecord] = []
        try Self.inChunks(ids) { marks, values in
            try forEachRecord(where: "id IN (\(marks))", values, skippingUnreadable: skippingUnreadable) { found.append($0) }
        }
        // Each chunk comes in enqueue order; so does the whole, when there were several.
        return ids.count > Self.chunkSize ? found.sorted { $0.sequence < $1.sequence } : found
    }

    /// Forgets every download in one of `statuses` (their files stay); returns how many.
    /// Meant for finished ones: the running process keeps no finished download in memory.
    /// Package-wide, not public: deleting rows is no part of the engine's API (the CLI's
    /// `downloads clear` and `unsubscribe` use it).
    package func forget(withStatus statuses: Set<DownloadStatus>) throws -> Int {
        guard !statuses.isEmpty else { return 0 }
        let list = Self.sqlList(statuses)
        return try database.write {
            try database.execute("DELETE FROM downloads WHERE status IN (\(list))")
            return database.changes
        }
    }

    /// Changes where a download not yet named goes, its priority, size limit and root. Only for a queue no
    /// engine is running (hold the home's lock): a running engine keeps priorities in memory
    /// (post `.setPriority` to it instead).
    /// - Returns: false when the download is missing or already has its file name (then only
    ///   the priority changed).
    @discardableResult
    package func updateRequest(_ request: DownloadRequest) throws -> Bool {
        let (kind, folder) = QueueRows.destinationColumns(request.destination)
        return try database.write {
            try database.run("""
                UPDATE downloads SET priority = ?2, size_limit = ?3, size_limit_reason = ?4, root = ?5, addresses = ?6, follows_redirects = ?7 WHERE id = ?1
                """, request.id.rawValue, request.priority, request.sizeLimit?.bytes, request.sizeLimit?.reason, request.root,
                             QueueRows.addressesColumn(request.addresses), QueueRows.followsRedirectsColumn(request.followsRedirects))
            try database.run("""
                UPDATE downloads SET destination_kind = ?2, destination = ?3, file_stem = ?4, file_path = CASE WHEN ?2 = 'file' THEN ?3 ELSE NULL END
                WHERE id = ?1 AND file_path IS NULL AND bytes = 0 AND status != 'completed'
                """, request.id.rawValue, kind, folder, request.destination.stem)
            return database.changes > 0
        }
    }

    /// The downloads that will run (queued, or waiting to retry), in the order they start,
    /// with the bytes each still needs (nil while its size is unknown) and its folder.
    public func pending() throws -> [PendingDownload] {
        try database.statement("""
            SELECT \(QueueRows.pendingColumns.list) FROM downloads
            WHERE status IN ('queued', 'waitingToRetry', 'downloading') ORDER BY priority DESC, seq
            """).query(reading: DownloadColumn.self, QueueRows.pending)
    }

    /// Forgets these downloads if they are finished (completed or failed); their files stay.
    /// Returns how many were forgotten. Package-wide, not public, as `forget(withStatus:)`.
    package func forget(_ ids: [DownloadID]) throws -> Int {
        try forget(ids, ifIn: [.completed, .failed])
    }

    package func forget(_ ids: [DownloadID], ifIn statuses: Set<DownloadStatus>) throws -> Int {
        guard !statuses.isEmpty else { return 0 }
        let list = Self.sqlList(statuses)
        return try database.write {
            var count = 0
            try Self.inChunks(ids) { marks, values in
                try database.statement("DELETE FROM downloads WHERE id IN (\(marks)) AND status IN (\(list))").run(values)
                count += database.changes
            }
            return count
        }
    }

    /// How often the database has been changed by other connections, cheaply (SQLite's
    /// `data_version`): read the rows again only when it moves.
    public func changeCounter() throws -> Int {
        try database.dataVersion()
    }

    package func records(of url: URL) throws -> [DownloadRecord] {
        try rows(where: "url = ?", [url.absoluteString])
    }

    /// In one read transaction: a thousand URLs cost one snapshot, not a thousand (each a pair
    /// of locks on the WAL's index).
    package func records(of urls: [URL]) throws -> [[DownloadRecord]] {
        try database.read { try urls.map { try records(of: $0) } }
    }

    package func forEachRecord(after sequence: Int, skippingUnreadable: ((Error) -> Void)?, _ body: (DownloadRecord) throws -> Void) throws {
        try forEachRecord(where: "seq > ?", [sequence], skippingUnreadable: skippingUnreadable, body)
    }

    package func forEachUnfinishedRecord(skippingUnreadable: ((Error) -> Void)?, _ body: (DownloadRecord) throws -> Void) throws {
        try forEachRecord(where: "status != ?", [DownloadStatus.completed.rawValue], skippingUnreadable: skippingUnreadable, body)
    }

    private func rows(where condition: String, _ values: [SQLValueConvertible] = []) throws -> [DownloadRecord] {
        try database.statement("SELECT \(QueueRows.recordColumns.list) FROM downloads WHERE \(condition) ORDER BY seq")
            .query(values, reading: DownloadColumn.self, DownloadRecord.init(row:))
    }

    /// Streams records one at a time, so a large queue is never all in memory. A row
    /// that cannot be read goes to `skippingUnreadable` when given, else throws.
    private func forEachRecord(where condition: String, _ values: [SQLValueConvertible] = [], skippingUnreadable: ((Error) -> Void)? = nil,
                       _ body: (DownloadRecord) throws -> Void) throws {
        // Its own SQL text, so its cached statement is never the one `rows(where:)` resets.
        try database.statement("SELECT \(QueueRows.recordColumns.list) FROM downloads WHERE \(condition) ORDER BY seq -- streamed")
            .forEach(values, reading: DownloadColumn.self) { row in
                if let record = try DownloadRecord.read(row, skippingUnreadable: skippingUnreadable) { try body(record) }
            }
    }

    /// The unfinished download whose file is `path`, if any.
    package func owner(ofPath path: String) throws -> DownloadID? {
        try database.scalarText("SELECT id FROM downloads WHERE file_path = ? AND status != 'completed' LIMIT 1", path).map(DownloadID.init(rawValue:))
    }

    package func ids(withStatus status: DownloadStatus) throws -> [DownloadID] {
        try database.statement("SELECT id FROM downloads WHERE status = ? ORDER BY seq").query([status.rawValue], reading: DownloadColumn.self) { row in
            DownloadID(row.text(.id) ?? "")
        }
    }

    /// The next sequence number AUTOINCREMENT would give.
    package func nextSequence() throws -> Int {
        let used = try database.scalarInt("SELECT seq FROM sqlite_sequence WHERE name = 'downloads'") ?? 0
        let highest = try database.scalarInt("SELECT max(seq) FROM downloads") ?? 0
        return max(used, highest) + 1
    }

    /// How many downloads are in each status.
    public func counts() throws -> [DownloadStatus: Int] {
        var counts: [DownloadStatus: Int] = [:]
        let rows = try database.statement("SELECT status, count(*) AS count FROM downloads GROUP BY status")
            .query(reading: StatusCount.self) { ($0.text(.status), $0.int(.count)) }
        for (status, count) in rows {
            if let status = status.flatMap(DownloadStatus.init(rawValue:)) { counts[status] = count }
        }
        return counts
    }

    /// Streams the queue for listing, in enqueue order, without building URLs:
    /// a hundred thousand rows list in a fraction of a second.
    public func forEachSummary(_ body: (DownloadSummary) throws -> Void) throws {
        try database.statement("SELECT \(QueueRows.summaryColumns.list) FROM downloads ORDER BY seq")
            .forEach(reading: DownloadColumn.self) { try body(QueueRows.summary($0)) }
    }

    /// Inserts a new download at `record.sequence` (0: the next one); returns its sequence number.
    package func insert(_ record: DownloadRecord) throws -> Int {
        try database.statement(Self.insertKey, "INSERT INTO downloads (\(QueueRows.insertColumns.list)) VALUES (\(QueueRows.insertColumns.parameters))")
            .run(record.insertValues)
        return database.lastInsertRowID
    }

    /// Writes a download's state (everything but its identity and request).
    package func update(_ record: DownloadRecord) throws {
        try database.statement(Self.updateKey, Self.updateSQL).run(record.updateValues)
        if let url = record.changedURL {
            try database.run("UPDATE downloads SET url = ?2 WHERE id = ?1 AND seq = ?3", record.id.rawValue, url, record.savedSequence)
        }
    }

    private static let updateSQL = """
        UPDATE downloads SET \(QueueRows.updateColumns.assignments)
        WHERE \(Columns<DownloadColumn>.match(.id)) AND \(Columns<DownloadColumn>.match(.seq))
        """

    /// Saves progress: bytes in the part and, after an fsync, the checkpoint.
    package func updateProgress(id: DownloadID, sequence: Int, bytes: Int, total: Int?, checkpoint: Int?) throws {
        if let checkpoint {
            try database.run("UPDATE downloads SET bytes = ?2, total = ?3, checkpoint = ?4, updated = ?5 WHERE id = ?1 AND seq = ?6",
                             id.rawValue, bytes, total, checkpoint, Date(), sequence)
        } else {
            try database.run("UPDATE downloads SET bytes = ?2, total = ?3, updated = ?4 WHERE id = ?1 AND seq = ?5",
                             id.rawValue, bytes, total, Date(), sequence)
        }
    }

    package func meta(_ key: String) throws -> String? {
        try database.scalarText("SELECT value FROM meta WHERE key = ?", key)
    }

    package func setMeta(_ key: String, _ value: String) throws {
        try database.run("INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = ?2", key, value)
    }

    package func meta(_ key: String, orSet value: String) throws -> String {
        try database.run("INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO NOTHING", key, value)
        return try meta(key) ?? value
    }

    package func delete(_ id: DownloadID, sequence: Int) throws {
        try database.run("DELETE FROM downloads WHERE id = ? AND seq = ?", id.rawValue, sequence)
    }

    /// `transaction`, with the write-ahead log flushed by the commit when `durably`, so a
    /// power cut cannot lose it (commits are not flushed otherwise: a crash loses none, a
    /// power cut may lose the last few, which only rolls state back).
    package func transaction<T>(durably: Bool, _ body: () throws -> T) throws -> T {
        guard durably else { return try database.write(body) }
        try database.execute("PRAGMA synchronous = FULL")
        // Failing to go back only leaves later commits flushed too: slower, never less safe.
        defer { try? database.execute("PRAGMA synchronous = NORMAL") }
        return try database.write(body)
    }
}

/// The rows of a count per status (`DownloadStore.counts()`).
private enum StatusCount: Int, TableColumn { case status, count }
