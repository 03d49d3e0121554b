import FoundationEssentials
import Glibc
import MonsoonEngine
import MonsoonStore

/// Which downloads' files still owe `--exec`'s hook a run, by download id in the home's database, so a rerun neither
/// runs a hook again nor forgets one a killed run never got to, and two processes that both see a file complete (a
/// `get --exec` handed to a running `download --exec`) run it once.
///
/// A download is *owed* before it starts (a kill between the file's rename and the hook leaves it owed); only a new
/// fetch makes a row owed again. A process takes a row (`claim`) in one statement before it starts the hook: *running*,
/// with who runs it; the hook's end makes it *done* (exit 0) or *failed*. A later run with `--exec` runs the owed and
/// failed ones, and the running ones whose process is gone; a done one never again, until it is fetched anew.
///
/// The command starts the hook's program (`posix_spawn`) and records here how it ended (``Outcome``).
///
/// - Important: like its connection, used from one thread at a time.
public final class HookLedger {
    private let database: Database

    static let migrator = Migrator(component: "hooks", [
        .init(version: 1, sql: """
            CREATE TABLE hook_runs (
                download_id TEXT PRIMARY KEY,
                state TEXT NOT NULL CHECK (state IN ('owed', 'done', 'failed')),
                file TEXT,
                exit_status INTEGER,
                signal INTEGER,
                updated REAL NOT NULL
            );
            """),
        // `running` and who runs it (`Runner`): a claim is one row's change, seen by every process.
        .init(version: 2, sql: """
            CREATE TABLE hook_runs_new (
                download_id TEXT PRIMARY KEY,
                state TEXT NOT NULL CHECK (state IN ('owed', 'running', 'done', 'failed')),
                runner TEXT,
                file TEXT,
                exit_status INTEGER,
                signal INTEGER,
                updated REAL NOT NULL
            );
            INSERT INTO hook_runs_new (download_id, state, file, exit_status, signal, updated)
                SELECT download_id, state, file, exit_status, signal, updated FROM hook_runs;
            DROP TABLE hook_runs;
            ALTER TABLE hook_runs_new RENAME TO hook_runs;
            """),
    ])

    public init(database: Database) throws {
        self.database = database
        try Self.migrator.migrate(database)
    }

    /// These downloads are fetched anew: their next files owe the hook a run.
    public func owe(_ ids: [DownloadID]) throws {
        guard !ids.isEmpty else { return }
        try database.write {
            for id in ids {
                try database.run("""
                    INSERT INTO hook_runs (download_id, state, updated) VALUES (?1, 'owed', ?2)
                    ON CONFLICT (download_id) DO UPDATE SET state = 'owed', runner = NULL, file = NULL, exit_status = NULL, signal = NULL, updated = ?2
                    """, id.rawValue, Date())
            }
        }
    }

    /// Those of `ids` a hook ran on, runs on or owes a run (none in a home where no hook ever ran): their files may
    /// have been changed since they were written. One lookup by key each: the ledger grows with every hooked download.
    static func hooked(_ ids: [DownloadID], in database: Database) throws -> Set<DownloadID> {
        guard !ids.isEmpty,
              try database.scalarInt("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'hook_runs'") == 1 else { return [] }
        return Set(try ids.filter { try database.scalarInt("SELECT count(*) FROM hook_runs WHERE download_id = ?", $0.rawValue) == 1 })
    }

    /// Owed, failed, or running in a process that is gone.
    public func allOwed() throws -> [DownloadID] {
        try database.statement("SELECT download_id, state, runner FROM hook_runs WHERE state IN ('owed', 'failed', 'running') ORDER BY updated")
            .query(reading: HookRunColumn.self) { (id: DownloadID($0.text(.downloadID) ?? ""), state: $0.text(.state), runner: $0.text(.runner)) }
            .filter { $0.state != "running" || !Runner.isAlive($0.runner) }
            .map(\.id)
    }

    /// Takes the hook's run for this process, atomically: only one process (and thread) gets it. A file just downloaded
    /// (`fresh`) takes a row that is owed (or has none: a download another command queued); a later run's catch-up
    /// takes a failed one too. Either takes one left running by a process that is gone.
    /// - Returns: whether this process runs the hook now.
    public func claim(_ id: DownloadID, fresh: Bool) throws -> Bool {
        try database.write {
            let row = try database.statement("SELECT state, runner FROM hook_runs WHERE download_id = ?")
                .first([id.rawValue], reading: HookRunColumn.self) { (state: $0.text(.state), runner: $0.text(.runner)) }
            let takes = switch row?.state {
            case nil: fresh
            case "owed": true
            case "failed": !fresh   // a fresh file's failed row: another process ran this very file's hook
            case "running": !Runner.isAlive(row?.runner)
            default: false
            }
            guard takes else { return false }
            try database.run("""
                INSERT INTO hook_runs (download_id, state, runner, updated) VALUES (?1, 'running', ?2, ?3)
                ON CONFLICT (download_id) DO UPDATE SET state = 'running', runner = ?2, updated = ?3
                """, id.rawValue, Runner.current, Date())
            return true
        }
    }

    /// The text `Runner` wrote, while the hook runs.
    public func runner(of id: DownloadID) throws -> String? {
        try database.scalarText("SELECT runner FROM hook_runs WHERE download_id = ? AND state = 'running'", id.rawValue)
    }

    /// A row a new fetch made owed again meanwhile stays owed: its new file's hook is due.
    public func record(_ id: DownloadID, file: String, outcome: Outcome) throws {
        let (status, signal): (Int?, Int?) = switch outcome {
        case .exited(let code): (Int(code), nil)
        case .killed(let number): (nil, Int(number))
        case .lost: (nil, nil)
        }
        try database.run("""
            UPDATE hook_runs SET state = ?2, file = ?3, exit_status = ?4, signal = ?5, updated = ?6
            WHERE download_id = ?1 AND state = 'running' AND runner = ?7
            """, id.rawValue, outcome.succeeded ? "done" : "failed", file, status, signal, Date(), Runner.current)
    }

    /// Forgets the rows of downloads the queue no longer has (`downloads clear`, `remove`, `delete`); the queue's
    /// tables are the engine's to read.
    package func pruneForgotten(keepingThoseIn queue: any DownloadStateReading) throws {
        let ids = try database.statement("SELECT download_id FROM hook_runs").query(reading: HookRunColumn.self) { DownloadID($0.text(.downloadID) ?? "") }
        guard !ids.isEmpty else { return }
        let kept = Set(try queue.states(of: ids).map(\.id))
        let forgotten = ids.filter { !kept.contains($0) }
        guard !forgotten.isEmpty else { return }
        try database.write {
            for id in forgotten { try database.run("DELETE FROM hook_runs WHERE download_id = ?", id.rawValue) }
        }
    }

    public enum Outcome: Sendable, Equatable {
        case exited(Int32)
        case killed(Int32)
        /// The system says it is no child of this process: something else in it collected its status.
        case lost

        public var succeeded: Bool { self == .exited(0) }

        /// `exit status 1`, `killed by signal 9 (SIGKILL)`.
        public var description: String {
            switch self {
            case .exited(let code): return "exit status \(code)"
            case .killed(let signal):
                let names: [Int32: String] = [SIGHUP: "SIGHUP", SIGINT: "SIGINT", SIGQUIT: "SIGQUIT", SIGABRT: "SIGABRT", SIGKILL: "SIGKILL",
                                              SIGSEGV: "SIGSEGV", SIGPIPE: "SIGPIPE", SIGTERM: "SIGTERM", SIGBUS: "SIGBUS"]
                return "killed by signal \(signal)" + (names[signal].map { " (\($0))" } ?? "")
            case .lost:
                return "its exit status was lost (the system no longer knew it as a child of monsoon), so it is taken as failed"
            }
        }

        /// From `waitpid`'s status word.
        public init(status raw: Int32) {
            self = (raw & 0x7f) == 0 ? .exited((raw >> 8) & 0xff) : .killed(raw & 0x7f)
        }
    }

    /// A process, named so that a pid the system gives again later (or after a reboot) is not taken for it:
    /// `BOOT_ID:PID:START` (its start time in clock ticks since boot, from /proc).
    public enum Runner {
        public static let current = identity(of: getpid()) ?? "?:\(getpid()):?"

        /// Nil when it is gone (or /proc says nothing).
        public static func identity(of pid: pid_t) -> String? {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),   // unreadable: gone, or no /proc
                  let close = stat.lastIndex(of: ")") else { return nil }
            // Fields after the name: state is the 3rd field, start time the 22nd.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 19 else { return nil }
            return "\(boot):\(pid):\(fields[19])"
        }

        /// Unknown (no /proc): every name has the same "?", so only the pid and start time tell.
        private static let boot = BootID.current ?? "?"

        public static func isAlive(_ runner: String?) -> Bool {
            guard let runner else { return false }
            let parts = runner.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 3, let pid = pid_t(parts[1]) else { return false }
            if parts[2] == "?" { return kill(pid, 0) == 0 || errno == EPERM }   // written without /proc: the pid alone
            return identity(of: pid) == runner
        }
    }
}

/// The columns of `hook_runs`, the hook ledger's table.
private enum HookRunColumn: Int, TableColumn { case downloadID, state, runner, file, exitStatus, signal, updated }
