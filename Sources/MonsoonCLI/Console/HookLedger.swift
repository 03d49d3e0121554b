import Foundation
import MonsoonEngine
import MonsoonStore

/// Which downloads' files still owe `--exec`'s hook a run, in the home's database beside the
/// queue (episodes' downloads and `get`'s alike, by download id), so a rerun neither runs a hook
/// again for a file it ran for nor forgets one a killed run never got to.
///
/// A download this run is to fetch is *owed* before it starts (a kill between the file's rename
/// and the hook leaves it owed); the hook's end makes it *done* (exit 0) or *failed*. A later run
/// of a command that answers for the download, with `--exec`, runs the owed and failed ones; a
/// done one never again, until its download is fetched anew.
///
/// - Important: like its connection, used from one thread at a time.
final class HookLedger {
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
    ])

    /// The ledger in `database` (the home's), its table made when missing.
    init(database: Database) throws {
        self.database = database
        try Self.migrator.migrate(database)
    }

    /// These downloads' next files owe the hook a run.
    func owe(_ ids: [DownloadID]) throws {
        guard !ids.isEmpty else { return }
        try database.write {
            for id in ids {
                try database.run("""
                    INSERT INTO hook_runs (download_id, state, updated) VALUES (?1, 'owed', ?2)
                    ON CONFLICT (download_id) DO UPDATE SET state = 'owed', file = NULL, exit_status = NULL, signal = NULL, updated = ?2
                    """, id.rawValue, Date())
            }
        }
    }

    /// These new downloads' files owe the hook a run, unless their hook ran already (a download
    /// can complete, and its hook run, before its id is known here).
    func oweIfNew(_ ids: [DownloadID]) throws {
        guard !ids.isEmpty else { return }
        try database.write {
            for id in ids {
                try database.run("INSERT INTO hook_runs (download_id, state, updated) VALUES (?1, 'owed', ?2) ON CONFLICT (download_id) DO NOTHING",
                                 id.rawValue, Date())
            }
        }
    }

    /// Every download whose file owes the hook a run.
    func allOwed() throws -> [DownloadID] {
        try database.statement("SELECT download_id FROM hook_runs WHERE state IN ('owed', 'failed') ORDER BY updated").query { DownloadID($0.text(0) ?? "") }
    }

    /// The hook ran for the file at `file`: done when it exited 0, else failed.
    func record(_ id: DownloadID, file: String, outcome: HookProcess.Outcome) throws {
        let (status, signal): (Int?, Int?) = switch outcome {
        case .exited(let code): (Int(code), nil)
        case .killed(let number): (nil, Int(number))
        }
        try database.run("""
            INSERT INTO hook_runs (download_id, state, file, exit_status, signal, updated) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
            ON CONFLICT (download_id) DO UPDATE SET state = ?2, file = ?3, exit_status = ?4, signal = ?5, updated = ?6
            """, id.rawValue, outcome.succeeded ? "done" : "failed", file, status, signal, Date())
    }
}
