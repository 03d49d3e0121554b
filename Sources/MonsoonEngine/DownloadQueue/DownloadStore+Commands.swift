import FoundationEssentials
import MonsoonStore

/// Commands from other processes for the one running the queue, and downloads they add.
extension DownloadStore {
    /// Posts commands for the process running this queue, in one transaction (a hand-off of
    /// thousands is one commit, not thousands); it applies them within about a second.
    /// - Returns: the last one's number, for `hasPendingCommands(through:)` (0 for none).
    @discardableResult
    public func post(_ commands: [DownloadCommand]) throws -> Int {
        guard !commands.isEmpty else { return 0 }
        let now = Date()
        return try database.write {
            for command in commands {
                let row = command.row
                try database.run("INSERT INTO download_commands (download_id, action, argument, created) VALUES (?, ?, ?, ?)", row.id, row.action, row.argument, now)
            }
            return database.lastInsertRowID
        }
    }

    /// Whether any posted command (or any up to number `seq`) still waits for the running process.
    public func hasPendingCommands(through seq: Int = .max) throws -> Bool {
        (try database.scalarInt("SELECT count(*) FROM download_commands WHERE seq <= ?", seq) ?? 0) > 0
    }

    /// The commands posted after `seq`, in order, with the last one's seq. Read only:
    /// they are deleted once applied (`deleteCommands(through:)`), so a crash in between
    /// applies them at the next start instead of losing them.
    package func commands(after seq: Int) throws -> (commands: [DownloadCommand], last: Int) {
        var last = seq
        let commands = try database.statement("SELECT seq, download_id, action, argument FROM download_commands WHERE seq > ? ORDER BY seq")
            .query([seq], reading: CommandColumn.self) { row in
                last = max(last, row.int(.seq))
                return DownloadCommand(id: row.text(.downloadID), action: row.text(.action) ?? "", argument: row.text(.argument))
            }
        return (commands.compactMap { $0 }, last)
    }

    package func deleteCommands(through seq: Int) throws {
        try database.run("DELETE FROM download_commands WHERE seq <= ?", seq)
    }

    /// Adds downloads to the queue from a process that does not run it; the
    /// running process takes them in when it sees `.adoptNewDownloads`.
    /// - Returns: their ids (`d<N>` for requests with an empty id).
    public func add(_ requests: [DownloadRequest]) throws -> [DownloadID] {
        try database.write {
            var sequence = try nextSequence()
            return try requests.map { request in
                let record = DownloadRecord.added(request, sequence: sequence)
                _ = try insert(record)
                sequence += 1
                return record.id
            }
        }
    }
}

/// The columns of `download_commands`, the commands posted for the process running the queue.
private enum CommandColumn: Int, TableColumn { case seq, downloadID, action, argument, created }
