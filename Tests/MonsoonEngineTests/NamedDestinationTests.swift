import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonEngine

/// `Destination.named`: the caller's name, the response's extension.
@Suite struct NamedDestinationTests {
    @Test func pathsSplitAndJoinAsFoundationDoes() {
        for path in ["/a/b/c.mp3", "a/b.mp3", "b.mp3", "/b.mp3", "/", "", "/a/b/", "a//b", "//a", "./x", "/é/ü ö.mp3", "a/b//"] {
            #expect(path.parentPath == (path as NSString).deletingLastPathComponent, "\(path)")
        }
        // Foundation 6.3 traps on a relative name with a trailing slash.
        #expect("a/".parentPath == "" && "a/b/".parentPath == "a")
        // Inner repeated slashes are kept, where Foundation squeezes them: the same folder.
        #expect("/x//y/z.mp3".parentPath == "/x//y")
        for (folder, name) in [("", "x.mp3"), ("/", "x.mp3"), ("/a", "x.mp3"), ("a/", "x.mp3"), ("/é", "ü.mp3")] {
            #expect(folder.joiningPath(name) == (folder as NSString).appendingPathComponent(name), "\(folder) + \(name)")
        }
    }

    @Test func extensionsComeFromTheFinalURLElseTheMediaType() {
        #expect(FileNaming.name(stem: "2024-01-02 - Hello", finalURL: "https://cdn.example/a/b/ep.M4A?x=1", mediaTypes: ["audio/mpeg"]) == "2024-01-02 - Hello.m4a")
        #expect(FileNaming.name(stem: "s", finalURL: "https://cdn.example/stream", mediaTypes: ["audio/mpeg; charset=x", nil]) == "s.mp3")
        #expect(FileNaming.name(stem: "s", finalURL: "https://cdn.example/stream", mediaTypes: ["application/octet-stream", "audio/ogg"]) == "s.ogg")
        #expect(FileNaming.name(stem: "s", finalURL: "https://cdn.example/v1.2/stream", mediaTypes: [nil]) == "s")
        #expect(FileNaming.name(stem: "s", finalURL: "https://cdn.example/file.tar-gz", mediaTypes: ["video/mp4"]) == "s.mp4", "not an extension")
        #expect(FileNaming.fileExtension(of: "/a/.hidden") == nil)
        #expect(FileNaming.name(stem: "s", finalURL: "https://cdn.example/get.php?id=4", mediaTypes: ["audio/mpeg"]) == "s.mp3", "a script's extension is not the file's")
        #expect(FileNaming.name(stem: "Ep. 5", finalURL: "https://cdn.example/stream", mediaTypes: [nil]) == "Ep. 5")
    }

    @Test func aRedirectedEpisodeTakesTheExtensionOfWhereItLanded() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let body = Body.pattern(size: 20_000, seed: 3)
        server.setRoute("/track/ep", Route(body: .bytes([]), faults: [.redirect(to: "/media/episode.m4a", status: 302)]))
        server.setRoute("/media/episode.m4a", Route(body: body, contentType: "audio/mp4"))
        server.setRoute("/typed", Route(body: .bytes([1]), contentType: "audio/mpeg"))
        let manager = try DownloadManager(configuration: fastConfiguration(), databasePath: folder.file("queue.sqlite"))
        let show = folder.file("Show")
        let ids = try await manager.enqueue(contentsOf: [
            DownloadRequest(id: "", url: server.url("/track/ep"), destination: .named(folder: show, stem: "2024-05-01 - One")),
            DownloadRequest(id: "", url: server.url("/typed"), destination: .named(folder: show, stem: "2024-05-02 - Two")),
        ])
        let one = try await waitFor(manager, ids[0], .completed)
        let two = try await waitFor(manager, ids[1], .completed)
        #expect(one.filePath == (show as NSString).appendingPathComponent("2024-05-01 - One.m4a"))
        #expect(two.filePath == (show as NSString).appendingPathComponent("2024-05-02 - Two.mp3"))
        #expect(sha256(ofFile: one.filePath ?? "") == body.sha256Hex())
        await manager.shutdown()
        // The destination is kept across a relaunch.
        let again = try DownloadManager(configuration: fastConfiguration(concurrency: 0), databasePath: folder.file("queue.sqlite"))
        #expect(try await again.download(withID: ids[0])?.request.destination == .named(folder: show, stem: "2024-05-01 - One"))
        await again.shutdown()
    }

    @Test func aNamedFileNeverOverwritesAnother() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/ep.mp3", Route(body: .bytes([9])))
        try Data("someone's".utf8).write(to: URL(fileURLWithPath: folder.file("Ep.mp3")))
        let manager = DownloadManager(configuration: fastConfiguration())
        let id = try await manager.enqueue(DownloadRequest(id: "", url: server.url("/ep.mp3"), destination: .named(folder: folder.path, stem: "Ep")))
        let done = try await waitFor(manager, id, .completed)
        #expect(done.filePath == folder.file("Ep (2).mp3"))
        // No extension: numbered at the end, not at a dot inside the name.
        try Data("x".utf8).write(to: URL(fileURLWithPath: folder.file("Ep. 5")))
        server.setRoute("/stream", Route(body: .bytes([7])))
        let plain = try await manager.enqueue(DownloadRequest(id: "", url: server.url("/stream"), destination: .named(folder: folder.path, stem: "Ep. 5")))
        #expect(try await waitFor(manager, plain, .completed).filePath == folder.file("Ep. 5 (2)"))
        await manager.shutdown()
    }
}
