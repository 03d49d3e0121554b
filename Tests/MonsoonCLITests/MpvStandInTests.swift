import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonCLI

/// The stand-in's fidelity, on what `play` relies on from mpv, driven by Monsoon's own
/// `MpvPlayer`: the same expectations hold for the stand-in and, when it is installed, real mpv.
/// Each run is short: real mpv plays half a second.
@Suite
struct MpvStandInTests {
    /// What `MpvPlayer` sees of mpv in three runs: an option it does not know; a play from 119.5 s
    /// to the end of a 2-minute file, then quit; a file that does not exist.
    struct Observations: Equatable {
        var refusal: String?
        var duration: Double?
        /// Where mpv says it is at the end, to 0.1 s (real mpv stops a few microseconds short).
        var endPosition: Double?
        var quitStatus: Int32?
        var quitReason: String?
        var missingStatus: Int32?
        var missingReason: String?
        var missingMessage: String?
    }

    static func expected(missing: String) -> Observations {
        Observations(refusal: "mpv exited before it could be controlled (status 1): Setting commandline option --no-such-option= failed.",
                     duration: 120, endPosition: 120, quitStatus: 0, quitReason: "quit",
                     missingStatus: 2, missingReason: "error", missingMessage: "Failed to open \(missing).")
    }

    static let options = ["--no-config", "--ao=null", "--vo=null"]

    static func waitFor(_ what: String, _ condition: () -> Bool) async throws {
        try await waitUntil(seconds: 10, what, condition)
    }

    /// Runs the three cases with `executable`; `letTimePass` makes playback reach the end.
    static func observe(_ executable: String, environment: [String: String], in folder: Folder,
                        letTimePass: () async throws -> Void) async throws -> Observations {
        var seen = Observations()
        let wav = folder.file("a.wav")
        try Data(PlayCommandTests.wav(seconds: 120)).write(to: URL(fileURLWithPath: wav))
        do {
            let player = try await MpvPlayer.start(executable: executable, target: wav, start: 0, options: options + ["--no-such-option"],
                                                   environment: environment, cancelled: { false })
            player.stop()
        } catch let error as CLIError {
            seen.refusal = error.message
        }

        let playing = try await MpvPlayer.start(executable: executable, target: wav, start: 119.5, options: options,
                                                environment: environment, cancelled: { false })
        defer { playing.stop() }
        try await waitFor("the file loaded") { playing.current.loaded }
        try await letTimePass()
        try await waitFor("the end of the file") { playing.current.eofReached }
        seen.endPosition = await playing.position(within: 10).map { ($0 * 10).rounded() / 10 }
        seen.duration = playing.current.duration
        playing.quit()
        try await waitFor("mpv gone, its last words read") { playing.ended != nil && playing.current.readerDone }
        seen.quitStatus = playing.ended?.code
        seen.quitReason = playing.current.endReason

        let missing = try await MpvPlayer.start(executable: executable, target: folder.file("missing.wav"), start: 0, options: options,
                                                environment: environment, cancelled: { false })
        defer { missing.stop() }
        try await waitFor("mpv gone, its last words read") { missing.ended != nil && missing.current.readerDone }
        seen.missingStatus = missing.ended?.code
        seen.missingReason = missing.current.endReason
        seen.missingMessage = MpvPlayer.reason(logAt: missing.logPath)
        return seen
    }

    @Test func theStandInAnswersAsMpvDoes() async throws {
        let folder = Folder()
        let mpv = try MpvStandIn()
        defer { folder.remove(); mpv.remove() }
        let environment = ProcessInfo.processInfo.environment.merging(mpv.variables) { $1 }
        let seen = try await Self.observe(MpvStandIn.binFolder + "/mpv", environment: environment, in: folder) {
            try await mpv.advance(by: 1)
        }
        #expect(seen == Self.expected(missing: folder.file("missing.wav")))
    }

    @Test(.enabled(if: PlayCommandTests.realMpvInstalled, "mpv is not installed: run `make test`, which installs it"))
    func realMpvAnswersAsTheStandInDoes() async throws {
        let folder = Folder()
        defer { folder.remove() }
        let seen = try await Self.observe("/usr/bin/mpv", environment: ProcessInfo.processInfo.environment, in: folder) {}
        #expect(seen == Self.expected(missing: folder.file("missing.wav")))
    }

    /// Real mpv quits when its control socket closes (monsoon killed), as the stand-in does in
    /// `PlayCommandTests.mpvDoesNotOutliveAKilledMonsoon`.
    @Test(.enabled(if: PlayCommandTests.realMpvInstalled, "mpv is not installed: run `make test`, which installs it"))
    func realMpvDoesNotOutliveAKilledMonsoon() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let local = try #require(try await PlayCommandTests.library(server, in: folder)["Local"])
        let playing = try MonsoonProcess(["play", String(local)] + PlayCommandTests.headless, in: folder.path, environment: ["PATH": "/usr/bin:/bin"])
        var mpv: pid_t?
        try await waitUntil(seconds: 10, "monsoon's mpv started") {
            mpv = PlayCommandTests.child(of: playing.process.processIdentifier, named: "mpv")
            return mpv != nil
        }
        let player = try #require(mpv)
        kill(playing.process.processIdentifier, SIGKILL)
        _ = try await playing.finish()
        try await PlayCommandTests.waitForExit(of: player)
        #expect(!PlayCommandTests.isRunning(player), "mpv \(player) still runs after monsoon was killed")
        if PlayCommandTests.isRunning(player) { kill(player, SIGKILL) }
    }
}
