import Foundation
import MonsoonEngine
import MonsoonStore

/// The engine's queue in PostgreSQL: the second implementation of `QueueStore`, beside SQLite's
/// `DownloadStore`, with the same rows (`QueueRows` maps them for both) and the same conformance
/// suite. Each worker's engine persists through one, named after the worker, so a worker's
/// transfers (their bytes, checkpoints, retry times and errors) are in the cluster's database
/// as a local engine's are in its SQLite file.
///
/// A database holds many queues, one per name (`monsoon_engine_queues`). Every transaction
/// begins by updating its queue's row (counting the change, which is what `changeCounter`
/// answers), as SQLite's `BEGIN IMMEDIATE` takes the write lock at once: what it reads before
/// its first write (the next sequence, a path's owner) no other writer of the queue changes
/// before it commits, and writers take that lock first, so they never deadlock over download rows.
///
/// Every commit is flushed (`synchronous_commit` on for the session, whatever the server's
/// default), `durably` or not. SQLite's `NORMAL` may skip the flush because it loses nothing
/// when the process crashes; PostgreSQL's asynchronous commits are lost when the server crashes
/// (`pg_ctl restart -m immediate`), and a download whose row was lost is one the engine no
/// longer knows. Group commits keep the flushes few.
///
/// - Important: confined to one thread at a time, like its connection.
public final class PostgresQueueStore: QueueStore {
    let connection: PostgresConnection
    /// The queue's name.
    public let queue: String
    /// Transactions open (a nested one is a savepoint).
    private var depth = 0
    /// No new connection is tried before then (after a failed one), so a disk worker whose
    /// database is away fails fast instead of waiting for a connection on every save.
    private var reconnectAfter: ContinuousClock.Instant?
    /// How long the next failed attempt puts the one after it off: doubling, up to 30 s.
    private var reconnectDelay: Duration = .seconds(1)

    /// Opens the queue `name` on `connection` (which it then owns), making its row if it has none.
    /// - Throws: `PostgresError` `.newerSchema` when `cluster init` has not brought the database to
    ///   this build's schema, or the connection's error.
    public init(connection: PostgresConnection, queue name: String) throws {
        self.connection = connection
        queue = name
        try ClusterSchema.requireCurrent(connection)
        try connection.executeScript(Self.sessionSettings)
        try connection.execute("INSERT INTO monsoon_engine_queues (queue) VALUES ($1) ON CONFLICT DO NOTHING", [name])
    }

    /// The name of the queue of the engine of the worker named `worker`.
    public static func queueName(ofWorker worker: String) -> String { "worker:" + worker }

    /// Removes the queue `name`, with its downloads, commands and notes (not the files), on
    /// `connection` (in its transaction, if one is open).
    public static func drop(queue name: String, on connection: PostgresConnection) throws(PostgresError) {
        try connection.execute("DELETE FROM monsoon_engine_queues WHERE queue = $1", [name])
    }

    /// Removes the engine queues of workers that stopped, or have not been heard of for `silence`
    /// seconds (killed, and never started again under their name: a default name is new at each
    /// start), on `connection`. Their jobs went back to the shared queue long before.
    /// - Returns: how many were removed.
    @discardableResult
    public static func dropAbandoned(silentFor silence: Double, on connection: PostgresConnection) throws(PostgresError) -> Int {
        try connection.execute("""
            DELETE FROM monsoon_engine_queues q WHERE starts_with(q.queue, 'worker:') AND NOT EXISTS (
              SELECT 1 FROM monsoon_workers w WHERE w.name = substr(q.queue, 8) AND w.stopped_at IS NULL
                AND w.heartbeat_at > now() - $1 * interval '1 second')
            """, [silence]).affectedRows
    }

    /// Empties the queue: its downloads, commands and notes (not the files). For a queue whose
    /// downloads nobody runs any longer: a worker's, which a restarted worker finds, since the
    /// jobs those downloads were for went back to the shared queue when it registered.
    public func removeAll() throws {
        try write {
            try connection.execute("DELETE FROM monsoon_engine_downloads WHERE queue = $1", [queue])
            try connection.execute("DELETE FROM monsoon_engine_commands WHERE queue = $1", [queue])
            try connection.execute("DELETE FROM monsoon_engine_meta WHERE queue = $1", [queue])
        }
    }

    // MARK: - Transactions

    /// What every session of the store needs (see the type's comment).
    /// Doubles in their shortest exact form too, whatever the server's default (dates are doubles).
    private static let sessionSettings = "SET synchronous_commit TO on; SET extra_float_digits TO 3"

    package func transaction<T>(durably: Bool, _ body: () throws -> T) throws -> T {
        if depth > 0 { return try connection.transaction(body) }   // a savepoint of the open one
        try reconnectIfBroken()
        depth += 1
        defer { depth -= 1 }
        var began = false
        func attempt() throws -> T {
            // The row taken and counted with the BEGIN, in one round trip.
            let count = "UPDATE monsoon_engine_queues SET changes = changes + 1 WHERE queue = \(try connection.literal(queue))"
            return try connection.transaction(beginningWith: count) { counted in
                if counted.affectedRows == 0 {
                    // Removed under it (its worker was silent so long that the others cleaned it
                    // up): made again, numbered past anything numbered before (microseconds since
                    // 1970), so a new download never takes a number a download in memory has.
                    try connection.execute("""
                        INSERT INTO monsoon_engine_queues (queue, last_seq, last_command)
                        VALUES ($1, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint)
                        ON CONFLICT (queue) DO UPDATE SET changes = monsoon_engine_queues.changes + 1
                        """, [queue])
                }
                began = true
                return try body()
            }
        }
        do {
            return try attempt()
        } catch where !began && !connection.isConnected {
            // Broken while idle (the server restarted since the last call): nothing of the body
            // ran, so it runs again on a new connection.
            try reconnect()
            return try attempt()
        }
    }

    /// Runs a write in the open transaction, else in one of its own.
    @discardableResult
    func write<T>(_ body: () throws -> T) throws -> T {
        depth > 0 ? try body() : try transaction(durably: false, body)
    }

    /// Runs a statement outside a write, after making a broken connection again.
    /// - Parameter prepared: `sql` is one of a fixed set run often: prepared once per session.
    func read(_ sql: String, _ parameters: [PostgresValue?], prepared: Bool = false) throws -> [PostgresRow] {
        func run() throws -> [PostgresRow] {
            try (prepared ? connection.executePrepared(sql, parameters) : connection.execute(sql, parameters)).rows
        }
        guard depth == 0 else { return try run() }
        try reconnectIfBroken()
        do {
            return try run()
        } catch where !connection.isConnected {
            // Broken while idle, as in `transaction`: a read is asked again on a new connection.
            try reconnect()
            return try run()
        }
    }

    /// Connects again when the connection is known to be broken, unless a failed attempt put
    /// the next one off.
    private func reconnectIfBroken() throws {
        guard !connection.isConnected else { return }
        if let after = reconnectAfter, ContinuousClock.now < after {
            throw PostgresError(code: .connectionLost, message: "the connection to PostgreSQL at \(connection.server) is broken; Monsoon tries again in a moment")
        }
        try reconnect()
    }

    private func reconnect() throws {
        do {
            try connection.reconnect()
            try connection.executeScript(Self.sessionSettings)
            reconnectAfter = nil
            reconnectDelay = .seconds(1)
        } catch {
            // Counted from the failure, not the attempt: one that waited for its timeout is no
            // reason to try again at once.
            reconnectAfter = .now + reconnectDelay
            reconnectDelay = min(.seconds(30), reconnectDelay * 2)
            throw error
        }
    }

    // MARK: - The engine's rows

    private static let insertSQL: String = {
        // The queue is $1, so each of the mapping's parameters is one further; the sequence (the
        // mapping's 26th) is numbered by the queue's row when it is NULL.
        let values = (1...30).map { $0 == 26 ? "(SELECT seq FROM numbered)" : "$\($0 + 1)" }.joined(separator: ", ")
        return """
            WITH numbered AS (
              UPDATE monsoon_engine_queues SET last_seq = CASE WHEN $27::bigint IS NULL THEN last_seq + 1 ELSE greatest(last_seq, $27::bigint) END
              WHERE queue = $1 RETURNING coalesce($27::bigint, last_seq) AS seq)
            INSERT INTO monsoon_engine_downloads (queue, \(QueueRows.insertColumns)) VALUES ($1, \(values))
            ON CONFLICT DO NOTHING RETURNING seq
            """
    }()

    package func insert(_ record: DownloadRecord) throws -> Int {
        try write {
            let rows = try connection.executePrepared(Self.insertSQL, [queue] + record.insertParameters.map(\.postgresValue)).rows
            // A taken id or sequence fails the insert alone, as SQLite's constraint error does
            // (a PostgreSQL error would undo the whole transaction): the engine takes the next
            // number for an id of its own, and refuses a duplicate.
            guard let sequence = try rows.first?.int(0) else {
                throw StoreError(code: .constraint, message: "download \(record.id) (or its sequence number \(record.savedSequence)) is already in the queue \(queue)")
            }
            return sequence
        }
    }

    private static let updateSQL = """
        UPDATE monsoon_engine_downloads SET \(QueueRows.updateAssignments.map { "\($0.column) = $\($0.parameter + 1)" }.joined(separator: ", "))
        WHERE queue = $1 AND id = $2 AND seq = $21
        """

    package func update(_ record: DownloadRecord) throws {
        try write {
            try connection.executePrepared(Self.updateSQL, [queue] + record.updateParameters.map(\.postgresValue))
            if let url = record.changedURL {
                try connection.execute("UPDATE monsoon_engine_downloads SET url = $3 WHERE queue = $1 AND id = $2 AND seq = $4",
                                       [queue, record.id.rawValue, url, record.savedSequence])
            }
        }
    }

    package func updateProgress(id: DownloadID, sequence: Int, bytes: Int, total: Int?, checkpoint: Int?) throws {
        try write {
            try connection.executePrepared("""
                UPDATE monsoon_engine_downloads SET bytes = $4, total = $5, checkpoint = coalesce($6, checkpoint), updated = $7
                WHERE queue = $1 AND id = $2 AND seq = $3
                """, [queue, id.rawValue, sequence, bytes, total, checkpoint, Date().timeIntervalSince1970])
        }
    }

    package func delete(_ id: DownloadID, sequence: Int) throws {
        try write {
            try connection.executePrepared("DELETE FROM monsoon_engine_downloads WHERE queue = $1 AND id = $2 AND seq = $3", [queue, id.rawValue, sequence])
        }
    }

    package func record(withID id: DownloadID) throws -> DownloadRecord? {
        try records(where: "id = $2", [id.rawValue]).first
    }

    package func records(withIDs ids: [DownloadID], skippingUnreadable: ((Error) -> Void)?) throws -> [DownloadRecord] {
        var found: [DownloadRecord] = []
        for chunk in Self.chunks(ids) {
            found += try records(where: "id = ANY($2::text[])", [PostgresArray(chunk.map { $0.rawValue as String? })], skippingUnreadable: skippingUnreadable)
        }
        // Each chunk comes in enqueue order; so does the whole, when there were several.
        return ids.count > Self.chunkSize ? found.sorted { $0.savedSequence < $1.savedSequence } : found
    }

    package func records(of url: URL) throws -> [DownloadRecord] {
        try records(where: "md5(url) = md5($2) AND url = $2", [url.absoluteString])
    }

    package func forEachRecord(after sequence: Int, skippingUnreadable: ((Error) -> Void)?, _ body: (DownloadRecord) throws -> Void) throws {
        try forEachPage(of: QueueRows.recordColumns, after: sequence) { row in
            if let record = try DownloadRecord.read(PostgresQueueRow(row), skippingUnreadable: skippingUnreadable) { try body(record) }
        }
    }

    package func owner(ofPath path: String) throws -> DownloadID? {
        try read("""
            SELECT id FROM monsoon_engine_downloads WHERE queue = $1 AND md5(file_path) = md5($2) AND file_path = $2 AND status <> 'completed' LIMIT 1
            """, [queue, path])
            .first.flatMap { try $0.string(0) }.map(DownloadID.init(rawValue:))
    }

    package func ids(withStatus status: DownloadStatus) throws -> [DownloadID] {
        try read("SELECT id FROM monsoon_engine_downloads WHERE queue = $1 AND status = $2 ORDER BY seq", [queue, status.rawValue])
            .map { DownloadID(try $0.string(0) ?? "") }
    }

    package func nextSequence() throws -> Int {
        (try read("SELECT last_seq FROM monsoon_engine_queues WHERE queue = $1", [queue]).first?.int(0) ?? 0) + 1
    }

    package func meta(_ key: String) throws -> String? {
        try read("SELECT value FROM monsoon_engine_meta WHERE queue = $1 AND key = $2", [queue, key]).first?.string(0)
    }

    package func setMeta(_ key: String, _ value: String) throws {
        try write {
            try connection.execute("""
                INSERT INTO monsoon_engine_meta (queue, key, value) VALUES ($1, $2, $3) ON CONFLICT (queue, key) DO UPDATE SET value = excluded.value
                """, [queue, key, value])
        }
    }

    package func meta(_ key: String, orSet value: String) throws -> String {
        try write {
            try connection.execute("""
                INSERT INTO monsoon_engine_meta (queue, key, value) VALUES ($1, $2, $3) ON CONFLICT (queue, key) DO NOTHING
                """, [queue, key, value])
        }
        return try meta(key) ?? value
    }

    // MARK: - Reading rows

    /// Rows of `QueueRows.recordColumns` that match `condition` (its parameters from $2), in enqueue order.
    func records(where condition: String, _ parameters: [PostgresValue?], skippingUnreadable: ((Error) -> Void)? = nil) throws -> [DownloadRecord] {
        try read("SELECT \(QueueRows.recordColumns) FROM monsoon_engine_downloads WHERE queue = $1 AND \(condition) ORDER BY seq", [queue] + parameters, prepared: true)
            .compactMap { try DownloadRecord.read(PostgresQueueRow($0), skippingUnreadable: skippingUnreadable) }
    }

    /// Streams `columns` of the rows after `sequence`, in enqueue order, a page at a time (by
    /// sequence, so writes between pages are fine): a large queue is never all in memory.
    /// `columns` may end in computed ones; the sequence is selected after them.
    func forEachPage(of columns: String, after sequence: Int, _ body: (PostgresRow) throws -> Void) throws {
        var after = sequence
        while true {
            let rows = try read("""
                SELECT \(columns), seq FROM monsoon_engine_downloads WHERE queue = $1 AND seq > $2 ORDER BY seq LIMIT \(Self.pageSize)
                """, [queue, after])
            for row in rows { try body(row) }
            guard rows.count == Self.pageSize, let last = rows.last, let lastSequence = try last.int(last.columns.count - 1) else { return }
            after = lastSequence
        }
    }

    /// Rows per page of a streamed read.
    static let pageSize = 500
    /// Ids per statement: one array parameter each.
    static let chunkSize = 1_000

    static func chunks(_ ids: [DownloadID]) -> [ArraySlice<DownloadID>] {
        stride(from: 0, to: ids.count, by: chunkSize).map { ids[$0..<min(ids.count, $0 + chunkSize)] }
    }
}
