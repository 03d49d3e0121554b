import Foundation
import MonsoonEngine

/// Listing and housekeeping (the CLI's side of the queue).
extension PostgresQueueStore {
    package func downloads() throws -> [Download] {
        var all: [Download] = []
        try forEachRecord(after: 0, skippingUnreadable: nil) { all.append($0.listed) }
        return all
    }

    package func download(withID id: DownloadID) throws -> Download? {
        try record(withID: id)?.listed
    }

    package func downloads(of url: URL) throws -> [Download] {
        try records(of: url).map(\.listed)
    }

    package func downloads(withIDs ids: [DownloadID]) throws -> [Download] {
        try records(withIDs: ids, skippingUnreadable: nil).map(\.listed)
    }

    package func counts() throws -> [DownloadStatus: Int] {
        var counts: [DownloadStatus: Int] = [:]
        for row in try read("SELECT status, count(*) FROM monsoon_engine_downloads WHERE queue = $1 GROUP BY status", [queue]) {
            if let status = try row.string(0).flatMap(DownloadStatus.init(rawValue:)) { counts[status] = try row.int(1) ?? 0 }
        }
        return counts
    }

    package func forEachSummary(_ body: (DownloadSummary) throws -> Void) throws {
        let error = "CASE WHEN status = 'queued' AND error_code IS DISTINCT FROM '\(QueueRows.listedErrorCode)' THEN NULL ELSE error_message END"
        try forEachPage(of: "\(QueueRows.summaryColumns), \(error)", after: 0) { row in
            try body(QueueRows.summary(PostgresQueueRow(row)))
        }
    }

    package func pending() throws -> [(id: DownloadID, remaining: Int?, folder: String)] {
        try read("""
            SELECT id, coalesce(resume_total, total, expected_size), bytes, destination_kind, destination FROM monsoon_engine_downloads
            WHERE queue = $1 AND status = ANY($2::text[]) ORDER BY priority DESC, seq
            """, [queue, Self.statusArray(QueueRows.pendingStatuses)]).map { QueueRows.pending(PostgresQueueRow($0)) }
    }

    @discardableResult
    package func updateRequest(_ id: DownloadID, destination: DownloadRequest.Destination, priority: Int, sizeLimit: DownloadRequest.SizeLimit?,
                               root: String?) throws -> Bool {
        let (kind, folder) = QueueRows.destinationColumns(destination)
        return try write {
            try connection.execute("""
                UPDATE monsoon_engine_downloads SET priority = $3, size_limit = $4, size_limit_reason = $5, root = $6 WHERE queue = $1 AND id = $2
                """, [queue, id.rawValue, priority, sizeLimit?.bytes, sizeLimit?.reason, root])
            return try connection.execute("""
                UPDATE monsoon_engine_downloads SET destination_kind = $3, destination = $4, file_stem = $5,
                    file_path = CASE WHEN $3 = 'file' THEN $4 END
                WHERE queue = $1 AND id = $2 AND file_path IS NULL AND bytes = 0 AND status <> 'completed'
                """, [queue, id.rawValue, kind, folder, destination.stem]).affectedRows > 0
        }
    }

    package func forget(withStatus statuses: Set<DownloadStatus>) throws -> Int {
        guard !statuses.isEmpty else { return 0 }
        return try write {
            try connection.execute("DELETE FROM monsoon_engine_downloads WHERE queue = $1 AND status = ANY($2::text[])",
                                   [queue, Self.statusArray(statuses)]).affectedRows
        }
    }

    package func forget(_ ids: [DownloadID], ifIn statuses: Set<DownloadStatus>) throws -> Int {
        guard !statuses.isEmpty, !ids.isEmpty else { return 0 }
        return try write {
            var count = 0
            for chunk in Self.chunks(ids) {
                count += try connection.execute("DELETE FROM monsoon_engine_downloads WHERE queue = $1 AND id = ANY($2::text[]) AND status = ANY($3::text[])",
                                                [queue, PostgresArray(chunk.map { $0.rawValue as String? }), Self.statusArray(statuses)]).affectedRows
            }
            return count
        }
    }

    static func statusArray(_ statuses: some Sequence<DownloadStatus>) -> PostgresArray {
        PostgresArray(statuses.map { $0.rawValue as String? })
    }
}

/// Commands from other processes for the one running the queue, and downloads they add.
extension PostgresQueueStore {
    @discardableResult
    package func post(_ command: DownloadCommand) throws -> Int {
        let row = command.row
        return try write {
            // Numbered by the queue's row, which the write holds: in the order they commit.
            try connection.execute("""
                WITH numbered AS (UPDATE monsoon_engine_queues SET last_command = last_command + 1 WHERE queue = $1 RETURNING last_command)
                INSERT INTO monsoon_engine_commands (queue, seq, download_id, action, argument, created)
                VALUES ($1, (SELECT last_command FROM numbered), $2, $3, $4, $5) RETURNING seq
                """, [queue, row.id, row.action, row.argument, Date().timeIntervalSince1970]).first?.int(0) ?? 0
        }
    }

    package func hasPendingCommands(through seq: Int) throws -> Bool {
        try read("SELECT EXISTS (SELECT 1 FROM monsoon_engine_commands WHERE queue = $1 AND seq <= $2)", [queue, seq]).first?.bool(0) ?? false
    }

    package func commands(after seq: Int) throws -> (commands: [DownloadCommand], last: Int) {
        var last = seq
        let commands = try read("SELECT seq, download_id, action, argument FROM monsoon_engine_commands WHERE queue = $1 AND seq > $2 ORDER BY seq",
                                [queue, seq]).map { row in
            last = max(last, try row.int(0) ?? 0)
            return DownloadCommand(id: try row.string(1), action: try row.string(2) ?? "", argument: try row.string(3))
        }
        return (commands.compactMap { $0 }, last)
    }

    package func deleteCommands(through seq: Int) throws {
        try write {
            try connection.execute("DELETE FROM monsoon_engine_commands WHERE queue = $1 AND seq <= $2", [queue, seq])
        }
    }

    package func add(_ requests: [DownloadRequest]) throws -> [DownloadID] {
        try write {
            // The numbers are taken at once, under the queue's row: another process adding at the
            // same time gets the ones after them.
            // The transaction holds the queue's row: it is there.
            let last = try connection.execute("UPDATE monsoon_engine_queues SET last_seq = last_seq + $2 WHERE queue = $1 RETURNING last_seq",
                                              [queue, requests.count]).first?.int(0) ?? 0
            var sequence = last - requests.count + 1
            return try requests.map { request in
                let record = DownloadRecord.added(request, sequence: sequence)
                _ = try insert(record)
                sequence += 1
                return record.id
            }
        }
    }

    package func changeCounter() throws -> Int {
        try read("SELECT changes FROM monsoon_engine_queues WHERE queue = $1", [queue]).first?.int(0) ?? 0
    }
}

/// What the podcast layer asks of the queue.
extension PostgresQueueStore {
    package func states(of ids: [DownloadID]) throws -> [StoredDownloadState] {
        var found: [StoredDownloadState] = []
        for chunk in Self.chunks(ids) {
            found += try read("SELECT \(QueueRows.stateColumns) FROM monsoon_engine_downloads WHERE queue = $1 AND id = ANY($2::text[]) ORDER BY seq",
                              [queue, PostgresArray(chunk.map { $0.rawValue as String? })]).map { try StoredDownloadState(row: PostgresQueueRow($0)) }
        }
        return found
    }

    package func states(withIDPrefix prefix: String, changedSince since: Date?) throws -> [StoredDownloadState] {
        // starts_with compares code points, as SQLite's range over its binary index does; a LIKE would need its own escaping.
        try read("""
            SELECT \(QueueRows.stateColumns) FROM monsoon_engine_downloads
            WHERE queue = $1 AND starts_with(id, $2) AND ($3::float8 IS NULL OR updated >= $3::float8) ORDER BY seq
            """, [queue, prefix, since?.timeIntervalSince1970]).map { try StoredDownloadState(row: PostgresQueueRow($0)) }
    }
}
