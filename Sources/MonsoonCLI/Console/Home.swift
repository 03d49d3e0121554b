import Foundation
import MonsoonEngine
import MonsoonPodcasts
import MonsoonStore

/// The Monsoon home: the folder holding the database and the lock.
///
/// `--home DIR`, else `MONSOON_HOME`, else `$XDG_DATA_HOME/monsoon`, else
/// `~/.local/share/monsoon`.
struct Home {
    let path: String

    var databasePath: String { (path as NSString).appendingPathComponent("monsoon.sqlite") }
    var lockPath: String { (path as NSString).appendingPathComponent("monsoon.lock") }

    init(option: String?, context: CommandContext) throws {
        let environment = context.environment
        let chosen: String
        if let option, !option.isEmpty {
            chosen = context.absolutePath(option)
        } else if let home = environment["MONSOON_HOME"], !home.isEmpty {
            chosen = context.absolutePath(home)
        } else if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
            chosen = (data as NSString).appendingPathComponent("monsoon")
        } else {
            let user = environment["HOME"] ?? NSHomeDirectory()
            chosen = (user as NSString).appendingPathComponent(".local/share/monsoon")
        }
        path = chosen
        do {
            try FileManager.default.createDirectory(atPath: chosen, withIntermediateDirectories: true)
        } catch {
            throw CLIError(message: "cannot create the Monsoon home \(chosen): \(Self.reason(error)); choose another with --home or MONSOON_HOME")
        }
        guard access(chosen, W_OK) == 0 else {
            throw CLIError(message: "the Monsoon home \(chosen) is not writable; choose another with --home or MONSOON_HOME")
        }
    }

    /// Opens the download queue, with a one-line error for a damaged, foreign or newer database.
    func openStore() throws -> DownloadStore {
        do {
            return try DownloadStore(path: databasePath)
        } catch {
            throw CLIError(message: "\(error)")
        }
    }

    /// Opens the settings (`monsoon config`), with a one-line error for a database that cannot be used.
    func openSettings() throws -> Settings {
        do {
            return try Settings(database: try Database(path: databasePath))
        } catch {
            throw CLIError(message: "\(error)")
        }
    }

    private static func reason(_ error: Error) -> String {
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        return nsError.localizedDescription
    }
}

/// The one-downloading-process-per-home lock: an flock on `monsoon.lock`, which
/// the kernel releases when the process ends, however it ends.
final class HomeLock {
    private let fd: Int32
    let path: String

    /// Takes the lock, or returns nil when another process holds it.
    init?(path: String) throws {
        self.path = path
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw CLIError(message: "cannot open the lock file \(path): \(String(cString: strerror(errno)))")
        }
        // `isHeld` takes a shared lock for a moment: a few tries, so that check is never
        // taken for another downloading process.
        var tries = 0
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            tries += 1
            guard errno == EWOULDBLOCK || errno == EINTR, tries < 5 else {
                close(fd)
                return nil
            }
            usleep(10_000)
        }
        // Who holds it, for the other processes' messages.
        ftruncate(fd, 0)
        let pid = "\(getpid())\n"
        _ = pid.withCString { write(fd, $0, strlen($0)) }
    }

    deinit {
        flock(fd, LOCK_UN)
        close(fd)
    }

    /// Whether a process holds the lock at `path` (one is downloading), without keeping it:
    /// a shared lock tried and released at once.
    static func isHeld(at path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }   // no lock file: nothing has ever downloaded here
        defer { close(fd) }
        guard flock(fd, LOCK_SH | LOCK_NB) == 0 else { return errno == EWOULDBLOCK }
        flock(fd, LOCK_UN)
        return false
    }

    /// The pid written by the process holding the lock at `path`, if readable.
    static func holder(at path: String) -> Int? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
