import Foundation
import MonsoonStore
import Testing
@testable import MonsoonCLI

/// The home and its database hold feed credentials: they are created private, and a home others
/// can open is pointed out.
@Suite struct HomePermissionTests {
    @Test func aNewHomeAndItsDatabaseArePrivate() async throws {
        let folder = Folder()
        defer { folder.remove() }
        let home = folder.file("deep/er/home")
        let result = await runMonsoon(["--home", home, "config"], in: folder.path)
        #expect(result.status == 0, "\(result.errors)")
        #expect(mode(of: home) == 0o700)
        #expect(mode(of: folder.file("deep/er")) != 0o700, "the folders above the home are not Monsoon's")
        #expect(mode(of: (home as NSString).appendingPathComponent("monsoon.sqlite")) == 0o600)
        for suffix in ["-wal", "-shm"] {
            let path = (home as NSString).appendingPathComponent("monsoon.sqlite" + suffix)
            if FileManager.default.fileExists(atPath: path) { #expect(mode(of: path) == 0o600, "\(suffix)") }
        }
        #expect(!result.errors.contains("warning"))
    }

    @Test func aDatabaseOpenedByTheStoreIsPrivate() throws {
        let folder = Folder()
        defer { folder.remove() }
        let path = folder.file("any.sqlite")
        let database = try Database(path: path)
        try database.execute("CREATE TABLE t (x INTEGER)")
        #expect(mode(of: path) == 0o600)
        #expect(mode(of: path + "-wal") == 0o600)
        #expect(mode(of: path + "-shm") == 0o600)
        withExtendedLifetime(database) {}
    }

    @Test func aHomeOthersCanOpenGetsAWarningAndStillWorks() async throws {
        let folder = Folder()
        defer { folder.remove() }
        let home = folder.file("home")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let result = await runMonsoon(["--home", home, "downloads"], in: folder.path)
        #expect(result.status == 0)
        #expect(result.errors == "monsoon: warning: other users can open the Monsoon home \(home), and its database holds feed credentials; make it private with: chmod 700 '\(home)'\n")
        #expect(mode(of: home) == 0o755, "the user's choice is reported, not overridden")
        // sync opens the home for the library, the refresh and the queue: still one warning.
        let synced = await runMonsoon(["--home", home, "sync"], in: folder.path)
        #expect(synced.status == 0, "\(synced.errors)")
        #expect(synced.errors.components(separatedBy: "other users can open").count == 2, "\(synced.errors)")
    }

    @Test func aFileWhereTheHomeShouldBeIsAClearError() async throws {
        let folder = Folder()
        defer { folder.remove() }
        try Data("x".utf8).write(to: URL(fileURLWithPath: folder.file("home")))
        let result = await runMonsoon(["--home", folder.file("home"), "downloads"], in: folder.path)
        #expect(result.status == 1)
        #expect(result.errors.contains("cannot create the Monsoon home \(folder.file("home")): a file of that name is in the way"))
    }

    private func mode(of path: String) -> mode_t? {
        var status = stat()
        return stat(path, &status) == 0 ? status.st_mode & 0o777 : nil
    }
}
