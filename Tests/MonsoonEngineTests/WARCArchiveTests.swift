import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonEngine

/// A run's WARC files: their names, numbering across runs, rotation, and the repair of a file
/// a killed run left open. (What warcio makes of them is checked by the CLI's tests.)
@Suite struct WARCArchiveTests {
    static func configuration(_ path: String, maxBytes: Int = 1 << 30) -> WARCConfiguration {
        WARCConfiguration(path: path, maxFileBytes: maxBytes, software: "MonsoonTests/1", info: [("command", "test")])
    }

    static let exchange = WARCExchange(url: "http://example.com/a", ip: "127.0.0.1", date: Date(),
                                       request: Array("GET /a HTTP/1.1\r\nHost: example.com\r\n\r\n".utf8),
                                       response: Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n".utf8))

    static func members(_ path: String) -> Int {
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        return (try? GzipMemberScan.completeEnd(of: fd, path: path).members) ?? -1   // -1: unreadable
    }

    @Test func filesAreNumberedOpenWhileWrittenAndRotated() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let archive = try WARCArchive.open(Self.configuration(folder.file("cap.warc.gz"), maxBytes: 1))
        #expect(folder.contents() == ["cap-00000.warc.gz.open"], "its warcinfo is written at once")
        // A limit of 1 byte: every group of records fills a file, which is closed after it.
        archive.record([Self.exchange])
        archive.record(fetch: [Self.exchange], body: Array("hello".utf8)) {}
        let files = try archive.close()
        #expect(files == [folder.file("cap-00000.warc.gz"), folder.file("cap-00001.warc.gz")])
        for file in files {
            let mode = try #require(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int)
            #expect(mode == 0o600, "requests are recorded as sent, credentials included: for the owner only")
        }
        #expect(folder.contents() == ["cap-00000.warc.gz", "cap-00001.warc.gz"])
        #expect(files.map(Self.members) == [3, 3], "a warcinfo, a request and a response each")
        #expect(archive.repairs.isEmpty)

        // A rerun goes on from the highest number there, never over an earlier file.
        let again = try WARCArchive.open(Self.configuration(folder.file("cap.warc.gz")))
        #expect(try again.close() == [folder.file("cap-00002.warc.gz")])
        // Closed: nothing more is written.
        #expect(again.writePayloads([WARCPayload(pieces: [], url: "", path: "/nonexistent")]).first??.code == .closed)
    }

    /// The bytes of a run's file numbered `number`, with a request and its response, as a run
    /// that was killed before closing it would have left it (made in a folder of its own).
    static func runFile(numbered number: Int) throws -> Data {
        let other = TemporaryFolder()
        defer { other.remove() }
        let naming = WARCNaming(path: other.file("cap.warc.gz"))
        for taken in 0..<number { try Data().write(to: URL(fileURLWithPath: naming.path(taken))) }
        let run = try WARCArchive.open(Self.configuration(other.file("cap.warc.gz")))
        run.record([Self.exchange])
        let whole = try #require(try run.close().first)
        return try Data(contentsOf: URL(fileURLWithPath: whole))
    }

    @Test func aFileAKilledRunLeftOpenIsCutToItsLastWholeRecord() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let bytes = try Self.runFile(numbered: 7)
        // As a killed run leaves it: open, with half of a record after the whole ones.
        try (bytes + bytes.prefix(200)).write(to: URL(fileURLWithPath: folder.file("cap-00007.warc.gz.open")))
        try Data().write(to: URL(fileURLWithPath: folder.file("cap-00009.warc.gz.open")))   // nothing reached the disk

        let second = try WARCArchive.open(Self.configuration(folder.file("cap.warc.gz")))
        #expect(second.repairs.count == 2)
        #expect(second.repairs.contains { $0.hasPrefix(folder.file("cap-00007.warc.gz") + " was left open by a run that was stopped: cut to its last whole record (3 in all; ") })
        #expect(second.repairs.contains { $0 == folder.file("cap-00009.warc.gz.open") + " was left empty by a run that was stopped: deleted" })
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.file("cap-00007.warc.gz"))) == bytes)
        // The numbers are counted after the repair: the deleted file's, empty, may be taken again.
        #expect(try second.close() == [folder.file("cap-00008.warc.gz")])
        #expect(folder.contents() == ["cap-00007.warc.gz", "cap-00008.warc.gz"])
    }

    /// A `.open` file of the WARC's name that Monsoon did not begin (another tool's, a copy, or
    /// bytes that are not gzip) is neither cut nor renamed: it is left as it is, and said.
    @Test func aLeftoverMonsoonDidNotBeginIsLeftAsItIs() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let elsewhere = try Self.runFile(numbered: 0)   // a whole WARC, but its warcinfo names cap-00000
        let foreign: [(String, Data)] = [
            ("cap-00003.warc.gz.open", elsewhere + elsewhere.prefix(100)),
            ("cap-00004.warc.gz.open", Data([0x1F, 0x8B, 0x08])),
            ("cap-00005.warc.gz.open", Data("not a WARC at all\n".utf8)),
        ]
        for (name, bytes) in foreign { try bytes.write(to: URL(fileURLWithPath: folder.file(name))) }
        let archive = try WARCArchive.open(Self.configuration(folder.file("cap.warc.gz")))
        #expect(archive.repairs.sorted() == foreign.map {
            folder.file($0.0) + " was not begun by Monsoon (its first record is not Monsoon's warcinfo naming it): left as it is; move it away if it is not wanted there"
        })
        for (name, bytes) in foreign { #expect(try Data(contentsOf: URL(fileURLWithPath: folder.file(name))) == bytes, "\(name) is untouched") }
        #expect(try archive.close() == [folder.file("cap-00006.warc.gz")], "its numbers stay taken")
    }

    @Test func aLeftoverWhoseNameIsTakenGetsTheNextNumberAndNoFileIsReplaced() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        let bytes = try Self.runFile(numbered: 0)
        let whole = folder.file("cap-00000.warc.gz")
        try bytes.write(to: URL(fileURLWithPath: whole))
        // Left open by another run under a number that has a finished file now, and a file
        // a killed run was beginning.
        try bytes.write(to: URL(fileURLWithPath: folder.file("cap-00000.warc.gz.open")))
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: folder.file(".cap-new-0000.warc.gz")))
        try Data().write(to: URL(fileURLWithPath: folder.file("cap-00001.warc.gz")))

        let second = try WARCArchive.open(Self.configuration(folder.file("cap.warc.gz")))
        #expect(second.repairs == [folder.file("cap-00002.warc.gz") + " was left open by a run that was stopped: every record in it whole (3)"
                                   + " (cap-00000.warc.gz was taken, so it is named cap-00002.warc.gz)"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: whole)) == bytes, "the finished file is left as it was")
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.file("cap-00002.warc.gz"))) == bytes)
        #expect(try second.close() == [folder.file("cap-00003.warc.gz")])
        #expect(folder.contents() == ["cap-00000.warc.gz", "cap-00001.warc.gz", "cap-00002.warc.gz", "cap-00003.warc.gz"])
    }

    @Test func aFolderThatCannotBeWrittenIsSaidAtOnce() throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        #expect(FileManager.default.createFile(atPath: folder.file("plain"), contents: Data()))
        #expect {
            try WARCArchive.open(Self.configuration(folder.file("plain/cap.warc.gz")))
        } throws: { error in
            (error as? WARCError)?.code == .notWritable && "\(error)".contains("cannot create the WARC folder \(folder.file("plain"))")
        }
        #expect(folder.contents() == ["plain"])
    }

    @Test func namesComeFromThePathGiven() {
        #expect(WARCNaming(path: "/a/podcasts.warc.gz").path(3) == "/a/podcasts-00003.warc.gz")
        #expect(WARCNaming(path: "/a/podcasts.warc").openPath(0) == "/a/podcasts-00000.warc.gz.open")
        #expect(WARCNaming(path: "/a/b/").path(123_456) == "/a/b/monsoon-123456.warc.gz")
        let naming = WARCNaming(path: "/a/x.warc.gz")
        #expect(naming.number(of: "x-00012.warc.gz")! == (12, false) && naming.number(of: "x-00012.warc.gz.open")! == (12, true))
        #expect(naming.number(of: "x-12.warc.gz") == nil && naming.number(of: "y-00001.warc.gz") == nil && naming.number(of: "x-0000a.warc.gz") == nil)
    }
}

/// The engine with a WARC: a download is complete only once its records are on disk.
@Suite struct WARCEngineTests {
    @Test func aDownloadIsCompleteOnlyOnceItsRecordsAreWritten() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/old.mp3", Route(body: .bytes([]), faults: [.redirect(to: server.url("/a.mp3").absoluteString)]))
        server.setRoute("/a.mp3", Route(body: .pattern(size: 300_000, seed: 1), contentType: "audio/mpeg"))
        var configuration = fastConfiguration()
        let archive = try WARCArchive.open(WARCArchiveTests.configuration(folder.file("w/cap.warc.gz")))
        configuration.warc = archive
        let manager = DownloadManager(configuration: configuration)
        try await manager.enqueue(request("a", server.url("/old.mp3"), to: folder.file("a.mp3")))
        _ = try await waitFor(manager, "a", .completed)
        // Before the archive is closed, and with nothing more asked of it: the file's records are
        // in the open file already, after the warcinfo and the hop's pair.
        #expect(WARCArchiveTests.members(folder.file("w/cap-00000.warc.gz.open")) == 5)
        await manager.shutdown()
        #expect(try archive.close() == [folder.file("w/cap-00000.warc.gz")])
        #expect(WARCArchiveTests.members(folder.file("w/cap-00000.warc.gz")) == 5)
    }
}
