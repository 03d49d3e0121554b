import FoundationEssentials
import Glibc
import MonsoonEngine
import MonsoonPodcasts
import MonsoonStore

/// The Monsoon home: the folder holding the database and the lock.
///
/// `--home DIR`, else `MONSOON_HOME`, else `$XDG_DATA_HOME/monsoon`, else
/// `~/.local/share/monsoon`.
struct Home {
    let path: String
    /// Whether the home cannot be written (a read-only file system, a backup snapshot, a folder
    /// without write permission), for a command that only reads (`Use.reading`): its database is
    /// then read as it is (`openDatabase`). A writing command fails on such a home instead.
    let isReadOnly: Bool
    /// The settings' connection, held (by every copy of this home) until the queue takes it over.
    let held = HeldConnection()

    /// What a command does with the home: `reading` reads one that cannot be written as it is;
    /// `writing` needs it writable (and creates it when missing).
    enum Use { case reading, writing }

    var databasePath: String { path.joiningPath("monsoon.sqlite") }
    var lockPath: String { path.joiningPath("monsoon.lock") }

    /// The home at `path` as it is, neither created nor checked: for a reader that must change nothing.
    init(unchecked path: String) {
        self.path = path
        isReadOnly = false
    }

    /// The home's path, neither created nor checked.
    static func path(option: String?, context: CommandContext) -> String {
        let environment = context.environment
        if let option, !option.isEmpty {
            return context.absolutePath(option)
        } else if let home = environment["MONSOON_HOME"], !home.isEmpty {
            return context.absolutePath(home)
        } else if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
            return data.joiningPath("monsoon")
        }
        let user = environment["HOME"] ?? String.homeFolder ?? "/"
        return user.joiningPath(".local/share/monsoon")
    }

    init(option: String?, context: CommandContext, use: Use = .writing) throws {
        let chosen = Self.path(option: option, context: context)
        path = chosen
        isReadOnly = use == .reading && Self.cannotWrite(chosen)
        // Neither created nor checked further: nothing can be changed there, whatever is wrong.
        if isReadOnly { return }
        let cannotCreate = { (reason: String) in
            CLIError(message: "cannot create the Monsoon home \(chosen): \(reason); choose another with --home or MONSOON_HOME")
        }
        do {
            try FileManager.default.createDirectory(atPath: chosen.parentPath, withIntermediateDirectories: true)
        } catch {
            throw cannotCreate(SystemErrorText.reason(error))
        }
        // The home holds feed credentials: it is made private (the folders above it are not ours).
        if mkdir(chosen, 0o700) != 0 && errno != EEXIST { throw cannotCreate(String(cString: strerror(errno))) }
        var status = stat()
        guard stat(chosen, &status) == 0 else { throw cannotCreate(String(cString: strerror(errno))) }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw cannotCreate("a file of that name is in the way") }
        guard access(chosen, W_OK) == 0 else {
            if errno == EROFS {
                throw CLIError(message: "the Monsoon home \(chosen) is on a read-only file system; remount it read-write, or choose another home with --home or MONSOON_HOME")
            }
            throw CLIError(message: "the Monsoon home \(chosen) is not writable; choose another with --home or MONSOON_HOME")
        }
        if status.st_mode & 0o077 != 0 {
            context.warnOnce("other users can open the Monsoon home \(chosen), and its database holds feed credentials; make it private with: chmod 700 \(chosen.shellQuoted)")
        }
    }

    /// Whether the home, or the nearest folder above it when it does not exist, is a folder that
    /// cannot be written. A file in the way, or a folder that cannot be looked into, is not: the
    /// checks of a writable home say what is wrong with them.
    private static func cannotWrite(_ path: String) -> Bool {
        var folder = path
        var status = stat()
        while stat(folder, &status) != 0 {
            guard errno == ENOENT, let slash = folder.lastIndex(of: "/"), slash != folder.startIndex else { return false }
            folder = String(folder[..<slash])
        }
        return status.st_mode & S_IFMT == S_IFDIR && access(folder, W_OK) != 0 && [EROFS, EACCES, EPERM].contains(errno)
    }

    /// Builds what a command uses of the home's database with `make` (a queue, a library, the
    /// settings: each brings its tables up to date as it opens).
    ///
    /// A home that can be written is opened as always, its database created when missing. One that
    /// cannot (`isReadOnly`) is read as it is, nothing on disk changed: without a database it reads
    /// as an empty one; a database this Monsoon would have to bring up to date (an older one's, or
    /// one without some component's tables) is read from a copy in memory, brought up to date there.
    func openDatabase<T>(_ make: (Database) throws -> T) throws -> T {
        guard isReadOnly else { return try make(Database(path: databasePath)) }
        if access(databasePath, F_OK) != 0 && errno == ENOENT { return try make(Database(path: ":memory:")) }
        do {
            return try make(Database(readingOnly: databasePath))
        } catch let error as StoreError where error.code == .olderSchema {
            return try make(Database.inMemoryCopy(of: databasePath))
        }
    }

    /// Opens the download queue, with a one-line error for a damaged, foreign or newer database.
    func openStore() throws -> any QueueStore {
        do {
            return try openDatabase { try DownloadStore(database: $0) }
        } catch {
            throw CLIError(error)
        }
    }

    /// Opens the settings (`monsoon config`), with a one-line error for a database that cannot be used.
    func openSettings() throws -> Settings {
        do {
            return try openDatabase { database in
                let settings = try Settings(database: database)
                held.hold(database)
                return settings
            }
        } catch {
            throw CLIError(error)
        }
    }
}

/// A connection to the home's database kept open, never used, from the reading of the settings
/// until the queue opens (or the command ends). Closing the last connection checkpoints the log
/// and removes it, and the queue's, opened a moment later, would make it again: four flushes, each
/// a wait on the disk, before the first download starts. The queue takes it over then
/// (`handOver`), and its close, the last, checkpoints the log at the end.
final class HeldConnection: @unchecked Sendable {
    // Safe: the connection is only set and taken under the lock, never used through this holder,
    // and closed by whichever thread lets go of it last.
    private let lock = Locked()
    private var database: Database?
    private var released = false

    func hold(_ database: Database) {
        lock.withLock { if self.database == nil && !released { self.database = database } }
    }

    /// The connection, for the queue to keep using (`DownloadManager.open(connection:)`), and nothing
    /// held from now on.
    func handOver() -> Database? {
        lock.withLock {
            released = true
            defer { database = nil }
            return database
        }
    }
}

/// The one-downloading-process-per-home lock: an flock on `monsoon.lock`, which
/// the kernel releases when the process ends, however it ends.
///
/// The file says who holds it (`PID ROLE`), for the other processes' messages and
/// waits: a process that only changes the queue for a moment (`brief`: `pause` with
/// nobody downloading, say) is waited for; one that runs the queue is not.
final class HomeLock {
    /// What the holder does with the queue: `download` runs the whole queue, `get` its own
    /// downloads (and those handed to it); `brief` changes it and lets go within moments.
    enum Role: String { case download, get, brief }

    private let fd: Int32
    let path: String

    /// Takes the lock at once, or returns nil when another process holds it.
    init?(path: String, role: Role) throws {
        self.path = path
        // Never through a link (a planted one would have its target truncated below), nor a FIFO's wait.
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
        guard fd >= 0 else {
            if errno == ELOOP {
                throw CLIError(message: "the lock file \(path) is a symbolic link, and Monsoon never opens its lock through one: remove it, then run again")
            }
            throw CLIError(message: "cannot open the lock file \(path): \(String(cString: strerror(errno)))")
        }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            // (`deinit` closes the descriptor, as below.)
            throw CLIError(message: "the lock file \(path) is not a regular file: move it away, then run again")
        }
        // Held by another: nil, and `deinit` closes the descriptor (closing here too closed what
        // another thread had opened meanwhile under the same number: a database's, in one test run).
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return nil }
        // Who holds it is a courtesy to the processes that wait (the flock is the lock): if it
        // cannot be written, `holder` finds no pid, and a waiter only waits out its patience.
        // Written over, then cut to its length: cutting first frees the file's block and takes
        // another (a third of a millisecond on ext4, every run); `holder` reads the first words only.
        let text = "\(getpid()) \(role.rawValue)\n"
        let written = text.withCString { pwrite(fd, $0, strlen($0), 0) }
        ftruncate(fd, off_t(max(written, 0)))   // not written: empty, naming no holder
    }

    /// Takes the lock, waiting (up to `patience` seconds) while it is only held for a
    /// moment: by a `brief` holder, or by a process checking whether it is held.
    /// - Returns: nil when a process that runs the queue holds it.
    static func acquire(path: String, role: Role, patience: Double = 10) async throws -> HomeLock? {
        let deadline = Date().addingTimeInterval(patience)
        while true {
            if let lock = try HomeLock(path: path, role: role) { return lock }
            if let holder = holder(at: path), holder.role != .brief, holder.isAlive { return nil }
            // A brief holder, or the file of one that has ended (someone only checking holds it).
            guard Date() < deadline else { return nil }
            try? await Task.sleep(nanoseconds: 20_000_000)   // cancellation only shortens the wait
        }
    }

    deinit {
        flock(fd, LOCK_UN)
        close(fd)
    }

    /// Whether a process holds the lock at `path` (one is downloading), without keeping it:
    /// a shared lock tried and released at once.
    static func isHeld(at path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return false }   // no lock file: nothing has ever downloaded here
        defer { close(fd) }
        guard flock(fd, LOCK_SH | LOCK_NB) == 0 else { return errno == EWOULDBLOCK }
        flock(fd, LOCK_UN)
        return false
    }

    /// Who wrote the lock file last (the holder, while the lock is held).
    struct Holder {
        var pid: Int32
        var role: Role
        var isAlive: Bool { kill(pid, 0) == 0 || errno == EPERM }
        var mention: String { " (pid \(pid))" }
    }

    static func holder(at path: String) -> Holder? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return nil }   // no file (or not ours to read), no holder
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = read(fd, &bytes, bytes.count)
        guard count > 0 else { return nil }
        let text = String(decoding: bytes[0..<count], as: UTF8.self)
        let words = text.split(whereSeparator: \.isWhitespace)
        guard let first = words.first, let pid = Int32(first) else { return nil }
        return Holder(pid: pid, role: words.dropFirst().first.flatMap { Role(rawValue: String($0)) } ?? .download)
    }
}
