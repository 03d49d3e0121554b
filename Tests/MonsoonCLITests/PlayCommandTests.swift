import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonCLI

/// `play` and `position`, with the mpv stand-in (`MpvStandIn`: mpv's JSON IPC on a clock the test
/// moves), so every position is exact and nothing plays in real time; and one short play with
/// real mpv, when it is installed, that anchors the stand-in (`PlayCommandTests+RealMpv.swift`).
/// Each test has its own stand-in and finds its mpv by the pid the stand-in gives: they run in parallel.
@Suite
struct PlayCommandTests {
    /// mpv without sound card, video or the user's configuration.
    static let headless = ["--", "--no-config", "--ao=null", "--vo=null"]

    /// So long that only a pause or the end of playback saves the position.
    static let noPeriodicSave: Timings = {
        var timings = Timings()
        timings.playbackSave = 3600
        return timings
    }()

    /// A save at every turn of play's loop: soon seen by a test that waits for it.
    static let frequentSaves: Timings = {
        var timings = Timings()
        timings.playbackSave = 0.05
        return timings
    }()

    /// A library with: a downloaded 2-minute episode, a file: and an ftp: enclosure, and a 2-minute episode
    /// left on the server to stream. Returns the episode ids by title.
    static func library(_ server: TestServer, in folder: Folder) async throws -> [String: Int] {
        let wav = Self.wav(seconds: 120)
        server.setRoute("/local.wav", Route(body: .bytes(wav), contentType: "audio/wav"))
        server.setRoute("/stream.wav", Route(body: .bytes(wav), contentType: "audio/wav"))
        let items = [("Local", server.url("/local.wav").absoluteString), ("File", "file:///etc/passwd"),
                     ("FTP", "ftp://127.0.0.1:\(server.port)/x.wav"), ("Stream", server.url("/stream.wav").absoluteString)]
        var text = "<?xml version=\"1.0\"?><rss version=\"2.0\" xmlns:itunes=\"http://www.itunes.com/dtds/podcast-1.0.dtd\"><channel><title>Sounds</title>\n"
        for (index, (title, url)) in items.enumerated() {
            text += "<item><title>\(title)</title><guid>g\(index)</guid><itunes:duration>120</itunes:duration>"
                + "<enclosure url=\"\(url)\" type=\"audio/wav\" length=\"\(wav.count)\"/></item>\n"
        }
        server.setRoute("/feed.xml", Route(body: .bytes(Array((text + "</channel></rss>").utf8)), contentType: "application/rss+xml"))
        #expect(await runMonsoon(["add", server.url("/feed.xml").absoluteString], in: folder.path).status == 0)
        let listing = await runMonsoon(["episodes", "1", "--json"], in: folder.path)
        let episodes = try #require(try JSONSerialization.jsonObject(with: Data(listing.output.utf8)) as? [[String: Any]])
        let ids = Dictionary(uniqueKeysWithValues: episodes.map { ($0["title"] as? String ?? "", $0["id"] as? Int ?? 0) })
        let local = try #require(ids["Local"])
        #expect(await runMonsoon(["config", "set", "download-root", folder.file("Podcasts")], in: folder.path).status == 0)
        #expect(await runMonsoon(["queue", "add", String(local)], in: folder.path).status == 0)
        let downloaded = await runMonsoon(["download"], in: folder.path)
        #expect(downloaded.status == 0, "\(downloaded.errors)")
        return ids
    }

    /// A mono 8 kHz 8-bit PCM WAV of silence.
    static func wav(seconds: Int) -> [UInt8] {
        let rate = 8_000
        let samples = rate * seconds
        func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        func le16(_ value: Int) -> [UInt8] { (0..<2).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        return Array("RIFF".utf8) + le32(36 + samples) + Array("WAVEfmt ".utf8) + le32(16) + le16(1) + le16(1) + le32(rate) + le32(rate)
            + le16(1) + le16(8) + Array("data".utf8) + le32(samples) + [UInt8](repeating: 0x80, count: samples)
    }

    /// Runs `play` in-process with the stand-in while `drive` does the test's part (moves the
    /// clock, types keys). If `drive` fails, a Ctrl-C ends the play, so the test ends too.
    static func play(_ arguments: [String], in folder: Folder, with mpv: MpvStandIn, terminal: Bool = false, keyInput: Int32 = -1,
                     interruption: Interruption = Interruption(), timings: Timings = Timings(),
                     _ drive: @Sendable () async throws -> Void) async throws -> RunResult {
        let path = folder.path
        let environment = mpv.environment(in: path)
        let playing = Task {
            await runMonsoon(["play"] + arguments, in: path, terminal: terminal, interruption: interruption, environment: environment,
                             keyInput: keyInput, timings: timings)
        }
        do {
            try await drive()
        } catch {
            interruption.trigger()
            _ = await playing.value
            throw error
        }
        return await playing.value
    }

    static func position(_ id: Int, in folder: Folder) async -> Double? { await position(id, at: folder.path) }

    /// The saved position, as `position` shows it (to 0.1 s: the tests' positions are whole or half seconds).
    static func position(_ id: Int, at path: String) async -> Double? {
        let shown = await runMonsoon(["position", String(id)], in: path)
        return shown.output.split(separator: "\t").first.flatMap { Double($0) }
    }

    static func episode(_ id: Int, in folder: Folder) async throws -> [String: Any] {
        let listing = await runMonsoon(["episodes", "1", "--json"], in: folder.path)
        let episodes = try #require(try JSONSerialization.jsonObject(with: Data(listing.output.utf8)) as? [[String: Any]])
        return try #require(episodes.first { $0["id"] as? Int == id })
    }

    /// The saved position, read by another connection (as a second process would) until it is
    /// `expected`: what the test waits for, never a fixed time.
    static func waitForPosition(_ id: Int, at path: String, _ expected: Double, _ what: String, seconds: Double = 30) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        var last: Double?
        while Date() < deadline {
            last = await position(id, at: path)
            if last == expected { return }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        throw CLITestError("\(what) did not happen within \(seconds) s: the saved position is \(last.map { "\($0)" } ?? "unknown"), not \(expected)")
    }

    @Test func aStoppedPlaySavesThePositionAndTheNextStartsThere() async throws {
        let server = try TestServer()
        let folder = Folder()
        let mpv = try MpvStandIn()
        defer { folder.remove(); server.stop(); mpv.remove() }
        let local = try #require(try await Self.library(server, in: folder)["Local"])
        let first = try await Self.play([String(local)] + Self.headless + ["--length=2"], in: folder, with: mpv) {
            try await mpv.next("loaded")
            try await mpv.advance(by: 2)
        }
        #expect(first.status == 0, "\(first.errors)")
        #expect(first.output == "playing episode \(local) (Sounds: Local) from 0:00\nstopped at 0:02 of 2:00; position saved (2.0 s)\n", "\(first.output)")
        // Where mpv says it stopped: at the end of --length.
        #expect(await Self.position(local, in: folder) == 2)
        #expect(try await Self.episode(local, in: folder)["played"] as? Int == 0, "stopped early by --length: not played")

        // The second play starts where the first stopped: 2 more seconds end at 4.
        let second = try await Self.play([String(local)] + Self.headless + ["--length=2"], in: folder, with: mpv) {
            #expect(try await mpv.next("loaded") == ["2.0", "120.0"], "mpv started at the saved position")
            try await mpv.advance(by: 2)
        }
        #expect(second.status == 0, "\(second.errors)")
        #expect(second.output == "playing episode \(local) (Sounds: Local) from 0:02\nstopped at 0:04 of 2:00; position saved (4.0 s)\n", "\(second.output)")
        #expect(await Self.position(local, in: folder) == 4)
    }

    /// Each play saves where mpv stopped, as mpv says when asked, not the last position it reported
    /// (half a second earlier at the end of a --length, as real mpv's reports lag): three plays of
    /// 3, 2 and 1 s leave 6 s.
    @Test func severalPlaysAddUpToTheTimePlayed() async throws {
        let server = try TestServer()
        let folder = Folder()
        let mpv = try MpvStandIn(reportEvery: 1)
        defer { folder.remove(); server.stop(); mpv.remove() }
        let local = try #require(try await Self.library(server, in: folder)["Local"])
        var played = 0.0
        for seconds in [3.0, 2, 1] {
            let result = try await Self.play([String(local)] + Self.headless + ["--length=\(Int(seconds))"], in: folder, with: mpv) {
                try await mpv.next("loaded")
                try await mpv.advance(by: seconds - 0.5)
                // The last half second is not reported: mpv reaches the end without saying where.
                try await mpv.advance(by: 0.5)
            }
            #expect(result.status == 0, "\(result.errors)")
            played += seconds
            let saved = try #require(try await Self.episode(local, in: folder)["position"] as? Double)
            #expect(saved == played, "after \(seconds) s more: \(saved) s saved, \(played) s played")
        }
    }

    /// A pseudo-terminal: the end the test types into, and the end `play` reads its keys from.
    static func terminal() throws -> (keyboard: Int32, input: Int32) {
        var master: Int32 = -1, slave: Int32 = -1
        guard openpty(&master, &slave, nil, nil, nil) == 0 else { throw CLITestError("cannot open a pseudo-terminal") }
        return (master, slave)
    }

    static func press(_ key: String, on keyboard: Int32) {
        _ = key.withCString { write(keyboard, $0, strlen($0)) }
    }

    /// → then ←, each seen by mpv and in the position saved while it plays.
    @Test func theArrowKeysSkipBackAndForward() async throws {
        let server = try TestServer()
        let folder = Folder()
        let mpv = try MpvStandIn()
        defer { folder.remove(); server.stop(); mpv.remove() }
        let local = try #require(try await Self.library(server, in: folder)["Local"])
        let (keyboard, slave) = try Self.terminal()
        defer { close(keyboard); close(slave) }
        let path = folder.path
        let played = try await Self.play([String(local)] + Self.headless, in: folder, with: mpv, keyInput: slave, timings: Self.frequentSaves) {
            // → at once: play applies it once mpv has loaded the file.
            Self.press("\u{1B}[C", on: keyboard)
            #expect(try await mpv.next("seek") == ["30.0"])
            try await Self.waitForPosition(local, at: path, 30, "the +30 s skip saved")
            try await mpv.advance(by: 2)
            try await Self.waitForPosition(local, at: path, 32, "2 s played after the skip saved")
            Self.press("\u{1B}[D", on: keyboard)
            #expect(try await mpv.next("seek") == ["17.0"])
            try await Self.waitForPosition(local, at: path, 17, "the −15 s skip saved")
            Self.press("q", on: keyboard)
        }
        #expect(played.status == 0, "\(played.errors)")
        #expect(played.output == "playing episode \(local) (Sounds: Local) from 0:00; keys: ← −15 s, → +30 s, space pause, q quit\n"
                + "stopped at 0:17 of 2:00; position saved (17.0 s)\n", "\(played.output)")
        #expect(await Self.position(local, in: folder) == 17)
    }

    /// Saved while it plays, read by another connection meanwhile; space pauses and plays on; the
    /// status line shows the episode, position, duration and keys.
    @Test func thePositionIsSavedWhilePlaying() async throws {
        let server = try TestServer()
        let folder = Folder()
        let mpv = try MpvStandIn()
        defer { folder.remove(); server.stop(); mpv.remove() }
        let local = try #require(try await Self.library(server, in: folder)["Local"])
        let (keyboard, slave) = try Self.terminal()
        defer { close(keyboard); close(slave) }
        let path = folder.path
        let played = try await Self.play([String(local)] + Self.headless, in: folder, with: mpv, terminal: true, keyInput: slave,
                                         timings: Self.frequentSaves) {
            try await mpv.next("loaded")
            try await mpv.advance(by: 3)
            // Nothing but the periodic save writes a position while it plays.
            try await Self.waitForPosition(local, at: path, 3, "a save while playing")
            try await mpv.advance(by: 2)
            try await Self.waitForPosition(local, at: path, 5, "the next save while playing")
            Self.press(" ", on: keyboard)
            #expect(try await mpv.next("pause") == ["true"])
            // play asks where mpv paused once it sees the pause: the next key comes after.
            #expect(try await mpv.next("get") == ["time-pos", "5.0"])
            // Ten seconds paused, saved meanwhile: playback resumes where it paused.
            #expect(try await mpv.advance(by: 10) == 5)
            Self.press(" ", on: keyboard)
            #expect(try await mpv.next("pause") == ["false"])
            try await mpv.advance(by: 1)
            try await Self.waitForPosition(local, at: path, 6, "a save after playing on")
            Self.press("q", on: keyboard)
        }
        #expect(played.status == 0, "\(played.errors)")
        #expect(await Self.position(local, in: folder) == 6)
        #expect(played.output.contains("▶ Sounds: Local  0:00 / 2:00   ← −15s  → +30s  space pause  q quit"), "\(played.output)")
        #expect(played.output.contains("▶ Sounds: Local  0:03 / 2:00   ← −15s  → +30s  space pause  q quit"), "\(played.output)")
        #expect(played.output.contains("‖ Sounds: Local  0:05 / 2:00   ← −15s  → +30s  space pause  q quit"), "paused: \(played.output)")
        #expect(played.output.hasSuffix("stopped at 0:06 of 2:00; position saved (6.0 s)\n"), "\(played.output)")
    }

    /// A pause saves at once, where mpv says it paused (not the last position it reported), not
    /// at the next periodic save: here there is none.
    @Test func aPauseSavesThePositionAtOnce() async throws {
        let server = try TestServer()
        let folder = Folder()
        let mpv = try MpvStandIn(reportEvery: 1)
        defer { folder.remove(); server.stop(); mpv.remove() }
        let local = try #require(try await Self.library(server, in: folder)["Local"])
        let (keyboard, slave) = try Self.terminal()
        defer { close(keyboard); close(slave) }
        let path = folder.path
        let played = try await Self.play([String(local)] + Self.headless, in: folder, with: mpv, terminal: true, keyInput: slave,
                                         timings: Self.noPeriodicSave) {
            try await mpv.next("loaded")
            try await mpv.advance(by: 2.5)
            try await mpv.advance(by: 0.5)   // at 3 s, reported at 2.5 s
            Self.press(" ", on: keyboard)
            #expect(try await mpv.next("pause") == ["true"])
            #expect(try await mpv.next("get") == ["time-pos", "3.0"])
            try await Self.waitForPosition(local, at: path, 3, "the save on pause")
            // Time passes while paused: nothing moves.
            #expect(try await mpv.advance(by: 10) == 3)
            #expect(await Self.position(local, at: path) == 3)
            Self.press("q", on: keyboard)
        }
        #expect(played.status == 0, "\(played.errors)")
        #expect(await Self.position(local, in: folder) == 3, "quit while paused")
        #expect(played.output.contains("‖ Sounds: Local  0:03 / 2:00   ← −15s  → +30s  space pause  q quit"), "paused: \(played.output)")
        #expect(played.output.hasSuffix("stopped at 0:03 of 2:00; position saved (3.0 s)\n"), "\(played.output)")
    }

    /// Ctrl-C stops playback with the position saved where mpv says it is, and exits 130.
    @Test func ctrlCStopsWithThePositionSaved() async throws {
        let server = try TestServer()
        let folder = Folder()
        let mpv = try MpvStandIn(reportEvery: 1)
        defer { folder.remove(); server.stop(); mpv.remove() }
        let local = try #require(try await Self.library(server, in: folder)["Local"])
        let interruption = Interruption()
        let stopped = try await Self.play([String(local)] + Self.headless, in: folder, with: mpv, interruption: interruption,
                                          timings: Self.noPeriodicSave) {
            try await mpv.next("loaded")
            try await mpv.advance(by: 2.5)
            try await mpv.advance(by: 0.5)   // at 3 s, reported at 2.5 s
            interruption.trigger()
        }
        #expect(stopped.status == 130, "\(stopped.errors)")
        #expect(stopped.output.hasSuffix("stopped at 0:03 of 2:00; position saved (3.0 s)\n"), "\(stopped.output)")
        #expect(await Self.position(local, in: folder) == 3)
    }

    /// mpv killed mid-play: the command says so and keeps the last position mpv reported (it
    /// cannot ask any more), and exits 1.
    @Test func aCrashedPlayerKeepsTheLastPositionReported() async throws {
        let server = try TestServer()
        let folder = Folder()
        let mpv = try MpvStandIn(reportEvery: 1)
        defer { folder.remove(); server.stop(); mpv.remove() }
        let local = try #require(try await Self.library(server, in: folder)["Local"])
        let crashed = try await Self.play([String(local)] + Self.headless, in: folder, with: mpv, timings: Self.noPeriodicSave) {
            let pid = try await mpv.nextPID()
            try await mpv.next("loaded")
            try await mpv.advance(by: 2.5)
            try await mpv.advance(by: 0.5)   // at 3 s, reported at 2.5 s
            kill(pid, SIGKILL)
        }
        #expect(crashed.status == 1)
        #expect(crashed.errors == "monsoon: mpv stopped unexpectedly (signal 9); the position was saved\n", "\(crashed.errors)")
        #expect(await Self.position(local, in: folder) == 2.5)
    }

    /// The pid of a child of `parent` running `name`, as /proc shows it, if any.
    static func child(of parent: pid_t, named name: String) -> pid_t? {
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {   // unreadable /proc: nothing seen
            guard let pid = pid_t(entry), let (command, parentPID) = processNameAndParent(pid) else { continue }
            if command == name, parentPID == parent { return pid }
        }
        return nil
    }

    /// A process's name (`comm`) and its parent's pid, as /proc shows them; nil when it is gone.
    static func processNameAndParent(_ pid: pid_t) -> (String, pid_t)? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),   // gone meanwhile: nil
              let close = stat.lastIndex(of: ")"), let open = stat.firstIndex(of: "(") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 1, let parent = pid_t(fields[1]) else { return nil }
        return (String(stat[stat.index(after: open)..<close]), parent)
    }

    /// Whether `pid` still runs (a zombie nobody reaped has stopped).
    static func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return false }   // gone
        return stat[stat.index(after: close)...].split(separator: " ").first != "Z"
    }

    /// Waits until `pid` has stopped running, up to `seconds`.
    static func waitForExit(of pid: pid_t, seconds: Double = 10) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while isRunning(pid) && Date() < deadline { try await Task.sleep(nanoseconds: 20_000_000) }
    }

    /// mpv stays at the end of a file until asked where it stopped, so it must not outlive a
    /// monsoon killed with SIGKILL: it quits when its control socket closes, which only happens if
    /// monsoon's end of it went to no other process (mpv included).
    @Test func mpvDoesNotOutliveAKilledMonsoon() async throws {
        let server = try TestServer()
        let folder = Folder()
        let mpv = try MpvStandIn()
        defer { folder.remove(); server.stop(); mpv.remove() }
        let local = try #require(try await Self.library(server, in: folder)["Local"])
        let playing = try MonsoonProcess(["play", String(local)] + Self.headless, in: folder.path, environment: mpv.variables)
        let player = try await mpv.nextPID()
        try await mpv.next("loaded")
        #expect(Self.child(of: playing.process.processIdentifier, named: "mpv") == player, "monsoon's child, named mpv")
        kill(playing.process.processIdentifier, SIGKILL)
        _ = try await playing.finish()
        try await Self.waitForExit(of: player)
        #expect(!Self.isRunning(player), "mpv \(player) still runs after monsoon was killed")
        if Self.isRunning(player) { kill(player, SIGKILL) }
        #expect(try await mpv.next("exit") == ["0"], "mpv quit as its socket closed")
    }

    @Test func playingToTheEndMarksPlayedAndAutoDeletes() async throws {
        let server = try TestServer()
        let folder = Folder()
        let mpv = try MpvStandIn()
        defer { folder.remove(); server.stop(); mpv.remove() }
        let local = try #require(try await Self.library(server, in: folder)["Local"])
        let file = try #require(try await Self.episode(local, in: folder)["fileName"] as? String)
        #expect(FileManager.default.fileExists(atPath: file))
        #expect(await runMonsoon(["config", "set", "auto-delete-played", "on"], in: folder.path).status == 0)
        #expect(await runMonsoon(["position", String(local), "117"], in: folder.path).output.hasPrefix("episode \(local): position set to 117.0"))
        let played = try await Self.play([String(local)] + Self.headless, in: folder, with: mpv) {
            #expect(try await mpv.next("loaded") == ["117.0", "120.0"])
            try await mpv.advance(by: 5)
            #expect(try await mpv.next("end") == ["120.0"])
        }
        #expect(played.status == 0, "\(played.errors)")
        #expect(played.output.contains("episode \(local) played to the end: marked played; its download was deleted, as auto-delete-played asks"),
                "\(played.output)")
        let episode = try await Self.episode(local, in: folder)
        #expect(episode["played"] as? Int == 1)
        #expect(episode["position"] as? Double == 0)
        #expect(episode["downloadState"] as? String == "none")
        #expect(!FileManager.default.fileExists(atPath: file))
    }

    @Test func onlyHTTPAndHTTPSAreStreamed() async throws {
        let server = try TestServer()
        let folder = Folder()
        let mpv = try MpvStandIn()
        defer { folder.remove(); server.stop(); mpv.remove() }
        let ids = try await Self.library(server, in: folder)
        for (title, url) in [("File", "file:///etc/passwd"), ("FTP", "ftp://127.0.0.1:\(server.port)/x.wav")] {
            let id = try #require(ids[title])
            let refused = await runMonsoon(["play", String(id)] + Self.headless, in: folder.path, environment: mpv.environment(in: folder.path))
            #expect(refused.status == 1)
            #expect(refused.errors == "monsoon: cannot play episode \(id): only http and https enclosures are streamed, and this one is \(url)\n")
        }
        #expect(mpv.events.isEmpty, "no mpv started for them")
        // An http enclosure not downloaded is streamed from the server. Its URL reaches mpv through
        // the socket: the command line, which every user can read in /proc, does not carry it.
        let stream = try #require(ids["Stream"])
        let streamed = try await Self.play([String(stream)] + Self.headless + ["--length=2"], in: folder, with: mpv) {
            let pid = try await mpv.nextPID()
            let raw = try #require(FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"))
            let arguments = String(decoding: raw.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
            #expect(arguments.contains("--input-ipc-client=fd://3") && !arguments.contains("stream.wav"), "\(arguments)")
            // Named mpv, a child of this process, as real mpv would be.
            #expect(Self.processNameAndParent(pid).map { $0 == "mpv" && $1 == getpid() } == true, "\(String(describing: Self.processNameAndParent(pid)))")
            #expect(try await mpv.next("loaded") == ["0.0", "120.0"])
            try await mpv.advance(by: 2)
        }
        #expect(streamed.status == 0, "\(streamed.errors)")
        #expect(server.requests(for: "/stream.wav").count == 1)
        #expect(await Self.position(stream, in: folder) == 2)
    }

    @Test func aDownloadedEpisodePlaysWithoutTheNetwork() async throws {
        let server = try TestServer()
        let folder = Folder()
        let mpv = try MpvStandIn()
        defer { folder.remove(); mpv.remove() }
        let local = try #require(try await Self.library(server, in: folder)["Local"])
        server.stop()
        let played = try await Self.play([String(local)] + Self.headless + ["--length=2"], in: folder, with: mpv) {
            try await mpv.next("loaded")
            try await mpv.advance(by: 2)
        }
        #expect(played.status == 0, "\(played.errors)")
        #expect(await Self.position(local, in: folder) == 2)
        // An option mpv does not know: its own words, the position untouched, and not played,
        // even with a threshold longer than the feed's duration (mpv played nothing).
        #expect(await runMonsoon(["config", "set", "played-threshold", "500"], in: folder.path).status == 0)
        let refused = await runMonsoon(["play", String(local)] + Self.headless + ["--no-such-option"], in: folder.path,
                                       environment: mpv.environment(in: folder.path))
        #expect(refused.status == 1)
        #expect(refused.errors == "monsoon: mpv exited before it could be controlled (status 1): Setting commandline option --no-such-option= failed.\n",
                "\(refused.errors)")
        #expect(await Self.position(local, in: folder) == 2)
        #expect(try await Self.episode(local, in: folder)["played"] as? Int == 0)
    }

    @Test func withoutMPVTheErrorSaysHowToInstallIt() async throws {
        let folder = Folder()
        defer { folder.remove() }
        let result = await runMonsoon(["play", "1"], in: folder.path,
                                      environment: ["MONSOON_HOME": folder.file(".monsoon"), "PATH": folder.file("empty")])
        #expect(result.status == 1)
        #expect(result.errors == "monsoon: mpv is not installed; install it with: sudo apt-get install --no-install-recommends mpv\n")
    }

    @Test func positionShowsAndSetsSeconds() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let local = try #require(try await Self.library(server, in: folder)["Local"])
        #expect(await runMonsoon(["position", String(local)], in: folder.path).output == "0.0\t0:00\n")
        #expect(await runMonsoon(["position", String(local), "184.25"], in: folder.path).status == 0)
        #expect(await runMonsoon(["position", String(local)], in: folder.path).output == "184.2\t3:04\n")
        let negative = await runMonsoon(["position", String(local), "-3"], in: folder.path)
        #expect(negative.status == 2)
        let unknown = await runMonsoon(["position", "999"], in: folder.path)
        #expect(unknown.status == 1 && unknown.errors.contains("no episode has id 999"))
    }
}
