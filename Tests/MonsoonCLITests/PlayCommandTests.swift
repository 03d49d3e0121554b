import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonCLI

/// `play` and `position` with real mpv, headless, on WAV files the tests write. One at a time:
/// a test finds its mpv as this process's child, and they play in real time.
@Suite(.serialized, .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/mpv"), "mpv is not installed: run `make test`, which installs it"))
struct PlayCommandTests {
    /// mpv without sound card, video or the user's configuration.
    static let headless = ["--", "--no-config", "--ao=null", "--vo=null"]

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

    /// The arguments of a child of this process running `name`, as /proc shows them to anyone.
    static func childArguments(named name: String) -> String? {
        let me = getpid()
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {   // unreadable /proc: nothing seen
            guard Int32(entry) != nil,
                  let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),   // gone meanwhile: not it
                  let close = stat.lastIndex(of: ")") else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            let command = stat[stat.index(after: stat.firstIndex(of: "(")!)..<close]
            guard command == name, fields.count > 1, Int32(fields[1]) == me,
                  let raw = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { continue }
            return String(decoding: raw.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
        }
        return nil
    }

    static func position(_ id: Int, in folder: Folder) async -> Double? { await position(id, at: folder.path) }

    static func position(_ id: Int, at path: String) async -> Double? {
        let shown = await runMonsoon(["position", String(id)], in: path)
        return shown.output.split(separator: "\t").first.flatMap { Double($0) }
    }

    static func episode(_ id: Int, in folder: Folder) async throws -> [String: Any] {
        let listing = await runMonsoon(["episodes", "1", "--json"], in: folder.path)
        let episodes = try #require(try JSONSerialization.jsonObject(with: Data(listing.output.utf8)) as? [[String: Any]])
        return try #require(episodes.first { $0["id"] as? Int == id })
    }

    @Test func aStoppedPlaySavesThePositionAndTheNextStartsThere() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let local = try #require(try await Self.library(server, in: folder)["Local"])
        let first = await runMonsoon(["play", String(local)] + Self.headless + ["--length=2"], in: folder.path)
        #expect(first.status == 0, "\(first.errors)")
        #expect(first.output.hasPrefix("playing episode \(local) (Sounds: Local) from 0:00\n"), "\(first.output)")
        #expect(first.output.contains("stopped at 0:0") && first.output.contains(" of 2:00; position saved ("), "\(first.output)")
        // Where mpv says it stopped: at 2 s.
        let saved = try #require(await Self.position(local, in: folder))
        #expect(abs(saved - 2) <= 0.3, "\(saved)")
        #expect(try await Self.episode(local, in: folder)["played"] as? Int == 0, "stopped early by --length: not played")

        // The second play starts where the first stopped: 2 more seconds end near 4.
        let second = await runMonsoon(["play", String(local)] + Self.headless + ["--length=2"], in: folder.path)
        #expect(second.status == 0, "\(second.errors)")
        #expect(second.output.hasPrefix("playing episode \(local) (Sounds: Local) from 0:0"), "\(second.output)")
        let resumed = try #require(await Self.position(local, in: folder))
        #expect(abs(resumed - saved - 2) <= 0.3, "\(saved) then \(resumed)")
    }

    /// Each play saves where mpv stopped, as mpv says when asked, not the last position it reported
    /// (half a second earlier at the end of a --length): three plays of 3, 2 and 1 s leave 6 s.
    @Test func severalPlaysAddUpToTheTimePlayed() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let local = try #require(try await Self.library(server, in: folder)["Local"])
        var played = 0.0
        for seconds in [3, 2, 1] {
            let result = await runMonsoon(["play", String(local)] + Self.headless + ["--length=\(seconds)"], in: folder.path)
            #expect(result.status == 0, "\(result.errors)")
            played += Double(seconds)
            let saved = try #require(try await Self.episode(local, in: folder)["position"] as? Double)
            #expect(abs(saved - played) <= 0.3, "after \(seconds) s more: \(saved) s saved, \(played) s played")
        }
    }

    /// A pseudo-terminal: the end the test types into, and the end `play` reads its keys from.
    static func terminal() throws -> (keyboard: Int32, input: Int32) {
        var master: Int32 = -1, slave: Int32 = -1
        guard openpty(&master, &slave, nil, nil, nil) == 0 else { throw CLITestError("cannot open a pseudo-terminal") }
        return (master, slave)
    }

    /// The saved position, read by another connection (as a second process would) until
    /// `condition` holds: what the test waits for, never a fixed time.
    static func waitForPosition(_ id: Int, at path: String, _ what: String, seconds: Double = 60,
                                _ condition: (Double) -> Bool) async throws -> Double {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let position = await position(id, at: path), condition(position) { return position }
            try await Task.sleep(nanoseconds: 100_000_000)
        }
        throw CLITestError("\(what) did not happen within \(seconds) s")
    }

    /// → then ←, each seen in the position saved every 5 seconds.
    @Test func theArrowKeysSkipBackAndForward() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let local = try #require(try await Self.library(server, in: folder)["Local"])
        let (keyboard, slave) = try Self.terminal()
        defer { close(keyboard); close(slave) }
        let path = folder.path
        func press(_ key: String) { _ = key.withCString { write(keyboard, $0, strlen($0)) } }
        // → at once (play applies it once mpv has loaded the file); ← once +30 shows; then q.
        let typing = Task { () -> (Double, Double) in
            press("\u{1B}[C")
            let afterForward = try await Self.waitForPosition(local, at: path, "the +30 s skip saved") { $0 >= 30 }
            press("\u{1B}[D")
            let afterBack = try await Self.waitForPosition(local, at: path, "the −15 s skip saved") { $0 < afterForward - 5 }
            press("q")
            return (afterForward, afterBack)
        }
        let played = await runMonsoon(["play", String(local)] + Self.headless, in: folder.path, keyInput: slave)
        let (afterForward, afterBack) = try await typing.value
        #expect(played.status == 0, "\(played.errors)")
        #expect(played.output.contains("keys: ← −15 s, → +30 s, space pause, q quit"), "\(played.output)")
        #expect(afterForward < 45, "+30, plus the seconds played before the save: \(afterForward)")
        #expect(afterBack - afterForward > -15 && afterBack - afterForward < -5, "−15, plus up to 5 s played between saves: \(afterForward) then \(afterBack)")
    }

    /// Saved every 5 seconds while playing and at once on pause, read by another connection
    /// meanwhile; the status line shows the episode, position, duration and keys.
    @Test func thePositionIsSavedWhilePlayingAndOnPause() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let local = try #require(try await Self.library(server, in: folder)["Local"])
        let (keyboard, slave) = try Self.terminal()
        defer { close(keyboard); close(slave) }
        let path = folder.path
        let watching = Task { () -> (Double, Double, Double) in
            // Nothing but the periodic save writes a position while it plays.
            let periodic = try await Self.waitForPosition(local, at: path, "a save while playing") { $0 > 0.5 }
            _ = " ".withCString { write(keyboard, $0, 1) }
            let paused = try await Self.waitForPosition(local, at: path, "the save on pause") { $0 > periodic }
            // Paused for longer than the save interval: the saved position stays where it paused.
            try await Task.sleep(nanoseconds: 6_000_000_000)
            let later = try #require(await Self.position(local, at: path))
            _ = "q".withCString { write(keyboard, $0, 1) }
            return (periodic, paused, later)
        }
        let played = await runMonsoon(["play", String(local)] + Self.headless, in: folder.path, terminal: true, keyInput: slave)
        let (periodic, paused, later) = try await watching.value
        #expect(played.status == 0, "\(played.errors)")
        #expect(paused > periodic && paused - periodic < 6, "the pause saved at once, not 5 s later: \(periodic) then \(paused)")
        #expect(abs(later - paused) < 0.5, "no progress while paused: \(paused) then \(later)")
        let final = try #require(await Self.position(local, in: folder))
        #expect(abs(final - paused) < 0.5, "quit while paused: \(paused) then \(final)")
        #expect(played.output.contains("▶ Sounds: Local  0:0") && played.output.contains(" / 2:00   ← −15s  → +30s  space pause  q quit"), "\(played.output)")
        #expect(played.output.contains("‖ Sounds: Local  0:"), "paused: \(played.output)")
    }

    /// Ctrl-C stops playback with the position saved (exit 130); so does mpv dying (exit 1).
    @Test func ctrlCAndACrashedPlayerKeepThePosition() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let local = try #require(try await Self.library(server, in: folder)["Local"])
        let path = folder.path
        let interruption = Interruption()
        let pressing = Task { () -> Double in
            let playing = try await Self.waitForPosition(local, at: path, "a save while playing") { $0 > 0.5 }
            interruption.trigger()
            return playing
        }
        let stopped = await runMonsoon(["play", String(local)] + Self.headless, in: folder.path, interruption: interruption)
        let beforeCtrlC = try await pressing.value
        #expect(stopped.status == 130, "\(stopped.errors)")
        let afterCtrlC = try #require(await Self.position(local, in: folder))
        #expect(afterCtrlC >= beforeCtrlC && afterCtrlC < beforeCtrlC + 5, "\(beforeCtrlC) then \(afterCtrlC)")

        // mpv killed mid-play: the command says so and keeps the last position mpv reported.
        let killing = Task { () -> Double in
            let playing = try await Self.waitForPosition(local, at: path, "a save while playing again") { $0 > afterCtrlC + 0.5 }
            let pkill = Process()
            pkill.executableURL = URL(fileURLWithPath: "/usr/bin/pkill")
            pkill.arguments = ["-KILL", "-P", String(getpid()), "-x", "mpv"]
            try pkill.run()
            pkill.waitUntilExit()
            return playing
        }
        let crashed = await runMonsoon(["play", String(local)] + Self.headless, in: folder.path)
        let beforeCrash = try await killing.value
        #expect(crashed.status == 1)
        #expect(crashed.errors == "monsoon: mpv stopped unexpectedly (signal 9); the position was saved\n", "\(crashed.errors)")
        let afterCrash = try #require(await Self.position(local, in: folder))
        #expect(afterCrash >= beforeCrash && afterCrash < beforeCrash + 5, "\(beforeCrash) then \(afterCrash)")
    }

    /// The pid of a child of `parent` running `name`, as /proc shows it, if any.
    static func child(of parent: pid_t, named name: String) -> pid_t? {
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {   // unreadable /proc: nothing seen
            guard let pid = Int32(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),   // gone meanwhile: not it
                  let close = stat.lastIndex(of: ")"), let open = stat.firstIndex(of: "(") else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if stat[stat.index(after: open)..<close] == name, fields.count > 1, Int32(fields[1]) == parent { return pid }
        }
        return nil
    }

    /// Whether `pid` still runs (a zombie nobody reaped has stopped).
    static func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return false }   // gone
        return stat[stat.index(after: close)...].split(separator: " ").first != "Z"
    }

    /// mpv stays at the end of a file until asked where it stopped, so it must not outlive a
    /// monsoon killed with SIGKILL: it quits when its control socket closes.
    @Test func mpvDoesNotOutliveAKilledMonsoon() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let local = try #require(try await Self.library(server, in: folder)["Local"])
        let playing = try MonsoonProcess(["play", String(local)] + Self.headless, in: folder.path)
        _ = try await Self.waitForPosition(local, at: folder.path, "a save while playing") { $0 > 0.5 }
        let mpv = try #require(Self.child(of: playing.process.processIdentifier, named: "mpv"))
        kill(playing.process.processIdentifier, SIGKILL)
        _ = try await playing.finish()
        let deadline = Date().addingTimeInterval(10)
        while Self.isRunning(mpv) && Date() < deadline { try await Task.sleep(nanoseconds: 50_000_000) }
        #expect(!Self.isRunning(mpv), "mpv \(mpv) still runs after monsoon was killed")
        if Self.isRunning(mpv) { kill(mpv, SIGKILL) }
    }

    @Test func playingToTheEndMarksPlayedAndAutoDeletes() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let local = try #require(try await Self.library(server, in: folder)["Local"])
        let file = try #require(try await Self.episode(local, in: folder)["fileName"] as? String)
        #expect(FileManager.default.fileExists(atPath: file))
        #expect(await runMonsoon(["config", "set", "auto-delete-played", "on"], in: folder.path).status == 0)
        #expect(await runMonsoon(["position", String(local), "117"], in: folder.path).output.hasPrefix("episode \(local): position set to 117.0"))
        let played = await runMonsoon(["play", String(local)] + Self.headless, in: folder.path)
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
        defer { folder.remove(); server.stop() }
        let ids = try await Self.library(server, in: folder)
        for (title, url) in [("File", "file:///etc/passwd"), ("FTP", "ftp://127.0.0.1:\(server.port)/x.wav")] {
            let id = try #require(ids[title])
            let refused = await runMonsoon(["play", String(id)] + Self.headless, in: folder.path)
            #expect(refused.status == 1)
            #expect(refused.errors == "monsoon: cannot play episode \(id): only http and https enclosures are streamed, and this one is \(url)\n")
        }
        // An http enclosure not downloaded is streamed from the server. Its URL reaches mpv through
        // the socket: the command line, which every user can read in /proc, does not carry it.
        let stream = try #require(ids["Stream"])
        let path = folder.path
        let playing = Task { await runMonsoon(["play", String(stream)] + Self.headless + ["--length=2"], in: path) }
        var mpvArguments: String?
        let deadline = Date().addingTimeInterval(30)
        while mpvArguments == nil && Date() < deadline {
            mpvArguments = Self.childArguments(named: "mpv")
            if mpvArguments == nil { try await Task.sleep(nanoseconds: 20_000_000) }
        }
        let streamed = await playing.value
        #expect(mpvArguments.map { $0.contains("--input-ipc-client=fd://3") && !$0.contains("stream.wav") } == true, "\(mpvArguments ?? "no mpv seen")")
        #expect(streamed.status == 0, "\(streamed.errors)")
        #expect(!server.requests(for: "/stream.wav").isEmpty)
        #expect((await Self.position(stream, in: folder) ?? 0) > 1.0)
    }

    @Test func aDownloadedEpisodePlaysWithoutTheNetwork() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove() }
        let local = try #require(try await Self.library(server, in: folder)["Local"])
        server.stop()
        let played = await runMonsoon(["play", String(local)] + Self.headless + ["--length=2"], in: folder.path)
        #expect(played.status == 0, "\(played.errors)")
        #expect((await Self.position(local, in: folder) ?? 0) > 1.0)
        // An option mpv does not know: its own words, the position untouched, and not played,
        // even with a threshold longer than the feed's duration (mpv played nothing).
        #expect(await runMonsoon(["config", "set", "played-threshold", "500"], in: folder.path).status == 0)
        let before = await Self.position(local, in: folder)
        let refused = await runMonsoon(["play", String(local)] + Self.headless + ["--no-such-option"], in: folder.path)
        #expect(refused.status == 1)
        #expect(refused.errors.hasPrefix("monsoon: mpv exited before it could be controlled (status 1): ") && refused.errors.contains("no-such-option"),
                "\(refused.errors)")
        #expect(await Self.position(local, in: folder) == before)
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
