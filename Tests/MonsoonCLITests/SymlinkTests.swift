import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonCLI

/// One policy for symbolic links: never written through inside the download root, never read
/// through by `verify`, each case said plainly.
@Suite struct SymlinkTests {
    @Test func aPodcastFolderThatIsALinkIsNeverWrittenThrough() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        ArchiveFolderTests.serve(server, "/s.xml", title: "Linked", episodes: [("One", "/1.mp3", "audio/mpeg")])
        try FileManager.default.createDirectory(atPath: folder.file("A"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder.file("elsewhere"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: folder.file("A/Linked"), withDestinationPath: folder.file("elsewhere"))
        let run = await runMonsoon(["archive", server.url("/s.xml").absoluteString, "-o", "A"], in: folder.path)
        #expect(run.status == 1)
        #expect(run.errors.contains("monsoon: Linked: \(folder.file("A/Linked")) is a symbolic link, and Monsoon never writes through one inside \(folder.file("A")): "
                                    + "replace it with a real folder or file (or remove it), then run again"), "\(run.errors)")
        #expect(folder.contents("elsewhere").isEmpty, "nothing landed outside the root")
        #expect(server.requests(for: "/1.mp3").isEmpty)
    }

    @Test func linksAtADownloadsNameOrItsPartAreLeftAloneAndTheDownloadTakesAnotherName() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/a.mp3", Route(body: .bytes(Array("A".utf8))))
        server.setRoute("/b.mp3", Route(body: .bytes(Array("B".utf8))))
        try FileManager.default.createDirectory(atPath: folder.file("out"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: folder.file("out/a.mp3.part"), withDestinationPath: folder.file("nowhere/a"))
        try FileManager.default.createSymbolicLink(atPath: folder.file("out/b.mp3"), withDestinationPath: folder.file("nowhere/b"))
        let run = await runMonsoon(["get", "-o", "out", server.url("/a.mp3").absoluteString, server.url("/b.mp3").absoluteString], in: folder.path)
        #expect(run.status == 0, "\(run.errors)")
        #expect(try String(contentsOfFile: folder.file("out/a (2).mp3"), encoding: .utf8) == "A")
        #expect(try String(contentsOfFile: folder.file("out/b (2).mp3"), encoding: .utf8) == "B")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: folder.file("out/a.mp3.part")) == folder.file("nowhere/a"), "left as it was")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: folder.file("out/b.mp3")) == folder.file("nowhere/b"), "left as it was")
        #expect(!FileManager.default.fileExists(atPath: folder.file("nowhere")))
    }

    /// A `monsoon.lock` planted as a link to another file: never opened through, so its target
    /// is neither truncated nor written; the command says why it stops.
    @Test func aLockFileThatIsALinkIsNeverOpenedThrough() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/a.mp3", Route(body: .bytes(Array("A".utf8))))
        try FileManager.default.createDirectory(atPath: folder.file("home"), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try Data("precious\n".utf8).write(to: URL(fileURLWithPath: folder.file("precious.txt")))
        try FileManager.default.createSymbolicLink(atPath: folder.file("home/monsoon.lock"), withDestinationPath: folder.file("precious.txt"))
        let run = await runMonsoon(["--home", "home", "get", "-o", "out", server.url("/a.mp3").absoluteString], in: folder.path)
        #expect(run.status == 1)
        #expect(run.errors == "monsoon: the lock file \(folder.file("home/monsoon.lock")) is a symbolic link, and Monsoon never opens its lock through one: "
                + "remove it, then run again\n", "\(run.errors)")
        #expect(try String(contentsOfFile: folder.file("precious.txt"), encoding: .utf8) == "precious\n")
    }

    @Test func verifyReportsALinkInsteadOfReadingThroughIt() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        ArchiveFolderTests.serve(server, "/s.xml", title: "Show", episodes: [("One", "/1.mp3", "audio/mpeg")])
        #expect(await runMonsoon(["archive", server.url("/s.xml").absoluteString, "-o", "A"], in: folder.path).status == 0)
        // The file swapped for a link to a copy elsewhere: the same bytes, but not the archive's.
        let episode = folder.file("A/Show/2024-01-01 - One.mp3")
        try FileManager.default.moveItem(atPath: episode, toPath: folder.file("copy.mp3"))
        try FileManager.default.createSymbolicLink(atPath: episode, withDestinationPath: folder.file("copy.mp3"))
        let verify = await runMonsoon(["verify", "A"], in: folder.path)
        #expect(verify.status == 1)
        #expect(verify.output == "link    \(episode)\n", "\(verify.output)")
        #expect(verify.errors.contains("0 missing, 0 changed, 0 extra, 1 symbolic link (not followed)"), "\(verify.errors)")
        let json = await runMonsoon(["verify", "A", "--json"], in: folder.path)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        #expect(object["links"] as? [String] == [episode])
    }
}
