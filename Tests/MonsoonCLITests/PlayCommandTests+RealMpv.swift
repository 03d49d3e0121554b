import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonCLI

/// Where `MpvStandIn` stands for real mpv, real mpv anchors it: one short play, in real time.
extension PlayCommandTests {
    /// Real mpv, where `make test` installs it.
    static let realMpvInstalled = FileManager.default.isExecutableFile(atPath: "/usr/bin/mpv")

    /// The stand-in's core promise, with real mpv: a play saves where mpv stopped (--length=1:
    /// about a second, as mpv plays in real time), and the next one starts there.
    @Test(.enabled(if: realMpvInstalled, "mpv is not installed: run `make test`, which installs it"))
    func realMpvSavesWhereItStoppedAndTheNextPlayStartsThere() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let local = try #require(try await Self.library(server, in: folder)["Local"])
        let environment = ["MONSOON_HOME": folder.file(".monsoon"), "PATH": "/usr/bin:/bin"]
        let first = await runMonsoon(["play", String(local)] + Self.headless + ["--length=1"], in: folder.path, environment: environment)
        #expect(first.status == 0, "\(first.errors)")
        #expect(first.output.hasPrefix("playing episode \(local) (Sounds: Local) from 0:00\n"), "\(first.output)")
        #expect(first.output.contains(" of 2:00; position saved ("), "\(first.output)")
        let saved = try #require(await Self.position(local, in: folder))
        #expect(abs(saved - 1) <= 0.3, "\(saved)")

        let second = await runMonsoon(["play", String(local)] + Self.headless + ["--length=1"], in: folder.path, environment: environment)
        #expect(second.status == 0, "\(second.errors)")
        #expect(second.output.hasPrefix("playing episode \(local) (Sounds: Local) from 0:0"), "\(second.output)")
        let resumed = try #require(await Self.position(local, in: folder))
        #expect(abs(resumed - saved - 1) <= 0.3, "\(saved) then \(resumed)")
    }
}
