import Foundation
import MonsoonCluster
@testable import MonsoonPodcasts
import Synchronization
import Testing

/// A PostgreSQL server of its own, in a temporary folder, on a free loopback port: Debian's
/// `postgresql` package is all it needs (`make test` installs it). Its superuser is `monsoon`,
/// trusted without a password.
///
/// initdb and postgres refuse to run as root: as root, the folder belongs to the `postgres`
/// user and the server runs as it (`runuser`). Give a suite one with `@Suite(.temporaryPostgres)`,
/// which stops it and deletes its folder after the suite, whatever happened; a server whose test
/// process died without that is stopped and deleted by the next one that starts.
///
/// - Important: its methods block for as long as `pg_ctl` takes: call them from `onThread`.
final class TemporaryPostgres: Sendable {
    /// Debian's newest PostgreSQL (/usr/lib/postgresql/15/bin on bookworm), or nil when none is installed.
    static let binaries: String? = {
        // No folder: no PostgreSQL, which `run` says.
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        return versions.compactMap(Int.init).sorted().last.map { "/usr/lib/postgresql/\($0)/bin" }
    }()
    /// Where the servers' folders are: /tmp, which the `postgres` user can reach (a root's
    /// TMPDIR may not be).
    static let parent = "/tmp"
    static let prefix = "monsoon-pg-"

    /// The server of the running suite, set by `.temporaryPostgres`.
    @TaskLocal static var current: TemporaryPostgres?

    /// The folder: the data folder, the socket, the logs, and the test process's id.
    let folder: String
    /// The loopback port it listens on, kept across restarts.
    let port: Int
    private let stopped = Mutex(false)
    private let templateMade = Mutex(false)

    var data: String { folder + "/data" }
    var serverLog: String { folder + "/server.log" }

    /// A URL for `database` (postgres, the one initdb makes, by default).
    func url(database: String = "postgres") -> String { "postgresql://monsoon@127.0.0.1:\(port)/\(database)" }

    /// Makes the cluster and starts the server.
    init() throws {
        Self.removeAbandoned()
        let folder = Self.parent + "/" + Self.prefix + UUID().uuidString.prefix(8).lowercased()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        try Data(String(getpid()).utf8).write(to: URL(fileURLWithPath: folder + "/owner"))
        if geteuid() == 0 {
            guard let user = getpwnam("postgres") else { throw PostgresTestError("there is no postgres user: install Debian's postgresql package (make test does)") }
            chown(folder, user.pointee.pw_uid, user.pointee.pw_gid)
        }
        self.folder = folder
        do {
            try Self.run(["initdb", "-D", folder + "/data", "--auth=trust", "-U", "monsoon", "--no-sync", "--encoding=UTF8", "--locale=C"], in: folder)
            port = try Self.start(folder: folder)
        } catch {
            Self.remove(folder)
            throw error
        }
    }

    deinit { stop() }

    /// Creates a database of its own for a test, and returns its URL: empty, or `migrated` to
    /// this build's cluster schema, copied from a template made on first use (a copy takes a
    /// few milliseconds; migrating each database took more).
    func createDatabase(migrated: Bool = false) throws -> String {
        let name = "test_" + UUID().uuidString.prefix(8).lowercased()
        let template = migrated ? try migratedTemplate() : "template1"
        try PostgresConnection(url()).executeScript("CREATE DATABASE \(name) TEMPLATE \(template)")
        return url(database: name)
    }

    /// The migrated template's name, made by the first caller while the others wait. Nothing
    /// stays connected to it: PostgreSQL copies only a database no one is connected to.
    private func migratedTemplate() throws -> String {
        try templateMade.withLock { (made: inout Bool) throws -> String in
            let name = "monsoon_template"
            if made { return name }
            try PostgresConnection(url()).executeScript("CREATE DATABASE \(name)")
            try ClusterSchema.migrate(PostgresConnection(url(database: name)))
            made = true
            return name
        }
    }

    /// Restarts the server on the same port: `immediate` kills it as a crash would (no
    /// checkpoint, every connection dropped at once), then it recovers.
    func restart(immediate: Bool) throws {
        try Self.run(["pg_ctl", "-D", data, "-m", immediate ? "immediate" : "fast", "-w", "-t", "60", "-l", serverLog, "restart"], in: folder)
        try waitUntilAccepting()
    }

    /// Stops the server as a crash would (its folder kept): connections break, nothing answers.
    /// What was committed before is kept, as a server with synchronous commits keeps it (this one
    /// runs without, for speed: its log is written out first).
    func stopServer() throws {
        try PostgresConnection(url()).execute("CHECKPOINT")
        try Self.run(["pg_ctl", "-D", data, "-m", "immediate", "-w", "stop"], in: folder)
    }

    /// Starts the server stopped by `stopServer` again, on the same port.
    func startServer() throws {
        try Self.run(["pg_ctl", "-D", data, "-o", Self.options(port: port, folder: folder), "-w", "-t", "60", "-l", serverLog, "start"], in: folder)
        try waitUntilAccepting()
    }

    /// After a crash's recovery, pg_ctl may return before the server takes connections ("not yet
    /// accepting connections"): the next test's connection must not meet that.
    private func waitUntilAccepting() throws {
        let deadline = Date().addingTimeInterval(60)
        while true {
            do {
                _ = try PostgresConnection(url())
                return
            } catch {
                guard Date() < deadline else { throw error }
                usleep(50_000)
            }
        }
    }

    /// Stops the server and deletes its folder; the second call does nothing.
    func stop() {
        let first = stopped.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        Self.remove(folder)
    }

    /// Starts the server in `folder` on a free port, trying another when one was taken meanwhile.
    private static func start(folder: String) throws -> Int {
        for _ in 0..<5 {
            let port = try freePort()
            let options = Self.options(port: port, folder: folder)
            do {
                try run(["pg_ctl", "-D", folder + "/data", "-o", options, "-w", "-t", "60", "-l", folder + "/server.log", "start"], in: folder)
                return port
            } catch {
                let log = String(decoding: FileManager.default.contents(atPath: folder + "/server.log") ?? Data(), as: UTF8.self)
                if !log.contains("could not bind") && !log.contains("already in use") { throw error }
            }
        }
        throw PostgresTestError("no free port for PostgreSQL after 5 tries")
    }

    /// The server's options: a test's server needs no durability against power cuts, and serves
    /// every suite of its process at once.
    static func options(port: Int, folder: String) -> String {
        "-p \(port) -k \(folder) -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300"
    }

    /// Stops the server of `folder`, if one runs, and deletes the folder.
    private static func remove(_ folder: String) {
        if FileManager.default.fileExists(atPath: folder + "/data/postmaster.pid") {
            // A server that did not start, or stopped already, has nothing to stop: nothing to report.
            try? run(["pg_ctl", "-D", folder + "/data", "-m", "immediate", "-w", "stop"], in: folder)
        }
        // What cannot be deleted stays in /tmp; the next run tries again.
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Removes the servers of test processes that ended without stopping theirs (a crash, a kill).
    private static func removeAbandoned() {
        // No /tmp listing: nothing to clean.
        for name in (try? FileManager.default.contentsOfDirectory(atPath: parent)) ?? [] where name.hasPrefix(prefix) {
            let folder = parent + "/" + name
            guard let owner = FileManager.default.contents(atPath: folder + "/owner").flatMap({ Int32(String(decoding: $0, as: UTF8.self)) }),
                  kill(owner, 0) != 0, errno == ESRCH else { continue }
            remove(folder)
        }
    }

    /// A loopback port nothing listened on a moment ago.
    static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw PostgresTestError("cannot open a socket: \(String(cString: strerror(errno)))") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0 }
        }
        guard bound else { throw PostgresTestError("cannot find a free port: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Runs one of PostgreSQL's programs to its end (as `postgres` when root), its output added to
    /// `folder`/commands.log; a failure throws with the end of that log and of the server's.
    private static func run(_ arguments: [String], in folder: String) throws {
        guard let binaries, FileManager.default.isExecutableFile(atPath: binaries + "/" + arguments[0]) else {
            throw PostgresTestError("PostgreSQL's \(arguments[0]) is missing: install Debian's postgresql package (make test does)")
        }
        let program = binaries + "/" + arguments[0]
        let command = geteuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--", program] + arguments.dropFirst() : [program] + arguments.dropFirst()
        let log = folder + "/commands.log"
        let status = try spawnAndWait(command, log: log)
        guard status == 0 else {
            func tail(_ path: String) -> String {
                String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self).split(separator: "\n").suffix(5).joined(separator: "\n")
            }
            throw PostgresTestError("\(arguments[0]) \(arguments.last ?? "") failed (status \(status)):\n\(tail(log))\n\(tail(folder + "/server.log"))")
        }
    }

    /// Starts `command` with only its standard streams open (stdin /dev/null, the others appended
    /// to `log`), and waits for its exit status. The server that pg_ctl leaves running must not
    /// hold a descriptor of the test process: another test waiting for the end of a pipe would
    /// wait as long as the server runs. The signal mask the test thread passes on does not matter
    /// here, unlike for nginx: postgres sets its own before it serves.
    private static func spawnAndWait(_ command: [String], log: String) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // glibc 2.34's posix_spawn_file_actions_addclosefrom_np, which Swift's Glibc does not import.
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        guard let closeFrom = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { throw PostgresTestError("posix_spawn cannot close descriptors here (glibc 2.34 or newer needed)") }
        _ = unsafeBitCast(closeFrom, to: CloseFrom.self)(&actions, 3)
        let argv = command.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, command[0], &actions, nil, argv, environ)
        guard result == 0 else { throw PostgresTestError("cannot start \(command[0]): \(String(cString: strerror(result)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw PostgresTestError("cannot wait for \(command[0]): \(String(cString: strerror(errno)))") }
        }
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }
}

/// `@Suite(.temporaryPostgres)`: the test process's server (started by the first suite that asks,
/// stopped as the process exits), each test in a database of its own. `.temporaryPostgres(own: true)`:
/// a server for the suite alone, which its tests may stop and restart.
struct TemporaryPostgresTrait: SuiteTrait, TestScoping {
    var own = false

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        guard own else {
            let server = try await onThread { try TemporaryPostgres.shared.get() }
            return try await TemporaryPostgres.$current.withValue(server) { try await function() }
        }
        let server = try await onThread { try TemporaryPostgres() }
        do {
            try await TemporaryPostgres.$current.withValue(server) { try await function() }
        } catch {
            try await onThread { server.stop() }
            throw error
        }
        try await onThread { server.stop() }
    }
}

extension Trait where Self == TemporaryPostgresTrait {
    /// The process's PostgreSQL server for the suite: `TemporaryPostgres.current` in its tests.
    static var temporaryPostgres: Self { TemporaryPostgresTrait() }

    /// A PostgreSQL server of the suite's own, which its tests may stop and restart.
    static func temporaryPostgres(own: Bool) -> Self { TemporaryPostgresTrait(own: own) }
}

extension TemporaryPostgres {
    /// The server most suites share, started on first use; stopped and deleted as the test
    /// process exits (a process killed leaves it to the next one's `removeAbandoned`).
    static let shared: Result<TemporaryPostgres, Error> = {
        let started = Result { try TemporaryPostgres() }
        atexit { if case .success(let server) = TemporaryPostgres.shared { server.stop() } }
        return started
    }()
}

/// The running suite's server.
func temporaryPostgres() throws -> TemporaryPostgres {
    try #require(TemporaryPostgres.current, "the suite needs @Suite(.temporaryPostgres)")
}

/// Runs `body` on a thread of its own with a connection to a new database of the suite's server
/// (to its `postgres` database when `newDatabase` is false).
func withConnection<T>(newDatabase: Bool = true, _ body: (PostgresConnection) throws -> T) async throws -> T {
    let server = try temporaryPostgres()
    return try await onThread { try body(PostgresConnection(newDatabase ? server.createDatabase() : server.url())) }
}

/// Waits (polling, with a generous deadline) until `condition` holds in the database at `url`,
/// read again and again on one connection; at the deadline, fails saying `what` and, with
/// `explain`, what the database holds then.
func waitInDatabase(_ what: String, seconds: Double = 60, _ url: String, explain: ((PostgresConnection) throws -> String)? = nil,
                    until condition: (PostgresConnection) throws -> Bool) async throws {
    try await onThread {
        let connection = try PostgresConnection(url)
        let deadline = Date().addingTimeInterval(seconds)
        while try !condition(connection) {
            guard Date() < deadline else { throw PostgresTestError("\(what): not within \(seconds) s\(try explain.map { "; " + (try $0(connection)) } ?? "")") }
            usleep(50_000)
        }
    }
}

/// Runs `body` in the test's task (so that its expectations count for the test) on a thread of
/// its own: PostgreSQL calls and pg_ctl block their thread, which must not be one of Swift's few
/// cooperative ones, shared with other suites' timing-based tests.
func onThread<T>(_ body: () throws -> T) async throws -> T {
    try await withTaskExecutorPreference(DatabaseExecutor(label: "monsoon-cluster-tests")) { try body() }
}

struct PostgresTestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Waits (polling, with a generous deadline) until `condition` holds.
func waitUntil(_ what: String, seconds: Double = 60, _ condition: () -> Bool) async throws {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        guard Date() < deadline else { throw PostgresTestError("\(what): not within \(seconds) s") }
        try await Task.sleep(for: .milliseconds(20))
    }
}

/// Chaos runs (random kills, long outages, workers paused past their leases): `make soak` runs
/// them (`MONSOON_SOAK=1`); `make test` keeps the deterministic ones.
enum Soak {
    static let isOn = ProcessInfo.processInfo.environment["MONSOON_SOAK"] == "1"
}
