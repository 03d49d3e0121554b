import FoundationEssentials
import Glibc
import MonsoonStore

extension DownloadManager {
    /// The manager of `init(configuration:databasePath:watchesOtherProcesses:)`, its database opened
    /// on a thread of its own: the caller's cooperative thread is free while the connections are
    /// opened, the tables created or migrated, and another process's lock waited for.
    ///
    /// The manager itself starts back in the caller's task, as the initializer's would: events
    /// subscribed to at once (`events(_:)`) miss no more than they would there.
    /// - Parameter connection: a connection to the database the caller opened and lets go of, which
    ///   becomes the disk worker's (one opening, and one reading of the schema, fewer); nil, or one
    ///   that only reads, is to another file or is a copy in memory: the worker opens its own.
    public static func open(configuration: EngineConfiguration = EngineConfiguration(), databasePath: String, connection: Database? = nil,
                            watchesOtherProcesses: Bool = true) async throws -> DownloadManager {
        DownloadManager(configuration: configuration, connections: try await connections(configuration, databasePath, connection, watchesOtherProcesses))
    }

    /// `open`, with the events of `kinds` from the start (`events`): downloads may start before it returns, the
    /// restored queue's of a `.wholeQueue` engine, or those of `claiming`, which a `.claimedOnly` engine may start from
    /// the first, as `claim(_:)` lets it once open, with no read of their rows: the restore lines each up as it takes
    /// its row in (a claim once open would read every one of them again). Those the restore does not take
    /// in (none such, or completed) stay unclaimed.
    public static func open(configuration: EngineConfiguration, databasePath: String, connection: Database? = nil, watchesOtherProcesses: Bool = true,
                            claiming: [DownloadID], events kinds: DownloadEvent.Kinds = .all) async throws -> (manager: DownloadManager, events: DownloadEvents) {
        let connections = try await connections(configuration, databasePath, connection, watchesOtherProcesses)
        var events: DownloadEvents?
        let manager = DownloadManager(configuration: configuration, connections: connections, claiming: claiming) { events = $0.subscribe(kinds) }
        return (manager, events!)   // set by the initializer, before it started the thread
    }

    /// The connections `open` makes, on a thread of its own.
    private static func connections(_ configuration: EngineConfiguration, _ databasePath: String, _ connection: Database?,
                                    _ watchesOtherProcesses: Bool) async throws -> Connections {
        // Safe: the caller lets go of it; from here on only the opening thread, then the disk worker, uses it.
        nonisolated(unsafe) var connection = connection.flatMap { !$0.isReadOnly && $0.isFile && $0.path == databasePath ? $0 : nil }
        let connections = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Connections, Error>) in
            NamedThread.detach(named: "monsoon.open") {
                let opened = Result {
                    try Connections(databasePath: databasePath, connection: connection, watching: watchesOtherProcesses,
                                    busyTimeout: configuration.storeBusyTimeout)
                }
                // Let go here: the caller's reference, which ends as `open` returns, is then the last, so a
                // connection the queue refused is closed before the caller, which may exit at once, goes on.
                connection = nil
                continuation.resume(with: opened)
            }
        }
        return connections
    }

    /// The connections a manager with a database needs: the disk worker's (which also creates or
    /// migrates the tables, and restores the queue), handed to the thread that uses it, and how the
    /// command watcher opens its own (on its thread, once it first looks).
    struct Connections: @unchecked Sendable {
        // Safe: made on the opening thread and handed over whole, which then lets go of it;
        // the manager hands the connection on to the one thread that uses it.
        let worker: any QueueStore
        let openWatcher: (@Sendable () throws -> any QueueStore)?
        /// The commands other processes left before this one opened the queue (read with the worker's
        /// connection), and the last one's number: applied at once, before the watcher's first look.
        var left: (commands: [DownloadCommand], last: Int) = ([], 0)

        init(worker: any QueueStore, openWatcher: (@Sendable () throws -> any QueueStore)?) {
            self.worker = worker
            self.openWatcher = openWatcher
        }

        /// Opens them (the first creates or migrates the tables). Blocks: see `open`.
        /// - Throws: `StoreError` when the database cannot be opened, is damaged, or is from a
        ///   newer Monsoon; the file is then left untouched.
        /// `busyTimeout`: `EngineConfiguration.storeBusyTimeout`.
        init(databasePath: String, connection: Database? = nil, watching: Bool, busyTimeout: Double) throws {
            let worker: DownloadStore
            if let connection {
                connection.setBusyTimeout(busyTimeout)
                worker = try DownloadStore(database: connection)
            } else {
                worker = try DownloadStore(path: databasePath, busyTimeout: busyTimeout)
            }
            self.worker = worker
            // The disk worker's page cache is twice SQLite's 2 MB: a batch of thousands of inserts stays
            // in memory until commit (99,000 enqueued 5,000 at a time took a fifth longer with 2 MB than
            // with 8 MiB, 5 % longer with 4 MiB). The other connections keep the default: a home has four or
            // five open at once.
            try worker.database.execute("PRAGMA cache_size = -4096")
            if watching {
                openWatcher = {
                    // Opened on the watcher's thread, later: a home deleted meanwhile is not made again.
                    guard access(databasePath, F_OK) == 0 else {
                        throw StoreError(code: 0, message: "\(databasePath) was moved or deleted while Monsoon used it")
                    }
                    return try DownloadStore(path: databasePath, busyTimeout: busyTimeout)
                }
                left = try worker.commands(after: 0)
            } else {
                openWatcher = nil
            }
        }
    }
}
