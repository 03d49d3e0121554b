import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonCLI

/// `monsoon archive`, `verify`, `sync`, `systemd` and `completions`, as the built binary,
/// against the test server.
@Suite struct ArchiveCommandTests {
    /// A feed of `count` episodes on `server` (`/ep1.mp3`…), with artwork and a transcript
    /// for the first; returns the bodies.
    static func serve(_ server: TestServer, count: Int, size: Int = 20_000, title: String = "Archive Show", renamed: Bool = false) -> [Body] {
        var items = ""
        var bodies: [Body] = []
        for index in 1...count {
            let body = Body.pattern(size: size + index, seed: UInt64(index))
            bodies.append(body)
            server.setRoute("/ep\(index).mp3", Route(body: body, contentType: "audio/mpeg", etag: "\"e\(index)\""))
            let transcript = index == 1 ? "<podcast:transcript url=\"\(server.url("/t1.vtt").absoluteString)\" type=\"text/vtt\"/>" : ""
            items = "<item><title>\(renamed ? "Renamed: " : "")\(index % 2 == 0 ? "Interview" : "Talk") \(index)</title><guid>g\(index)</guid>"
                + "<pubDate>\(String(format: "%02d", index)) Feb 2024 10:00:00 GMT</pubDate>"
                + "<enclosure url=\"\(server.url("/ep\(index).mp3").absoluteString)\" type=\"audio/mpeg\" length=\"\(size + index)\"/>\(transcript)</item>\n" + items
        }
        server.setRoute("/t1.vtt", Route(body: .bytes(Array("WEBVTT\n".utf8)), contentType: "text/vtt"))
        server.setRoute("/cover.jpg", Route(body: .pattern(size: 3_000, seed: 77), contentType: "image/jpeg"))
        let feed = """
            <?xml version="1.0"?><rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" xmlns:podcast="https://podcastindex.org/namespace/1.0">
            <channel><title>\(title)</title><itunes:image href="\(server.url("/cover.jpg").absoluteString)"/>
            \(items)</channel></rss>
            """
        server.setRoute("/feed.xml", Route(body: .bytes(Array(feed.utf8)), contentType: "application/rss+xml"))
        return bodies
    }

    @Test func archiveKeepsAManifestAndNeverFetchesTwice() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let bodies = Self.serve(server, count: 4)
        let feed = server.url("/feed.xml").absoluteString
        let first = try await MonsoonProcess(["archive", feed, "-o", "A", "--with-artwork", "--with-transcripts", "--report", "report.json"], in: folder.path).finish()
        #expect(first.status == 0, "\(first.errors)")
        let show = folder.file("A/Archive Show")
        #expect(folder.contents("A/Archive Show") == [
            "2024-02-01 - Talk 1.mp3", "2024-02-01 - Talk 1.transcript.vtt", "2024-02-02 - Interview 2.mp3", "2024-02-03 - Talk 3.mp3",
            "2024-02-04 - Interview 4.mp3", "cover.jpg", "feed.xml", "monsoon-manifest.json",
        ])
        for (index, body) in bodies.enumerated() {
            let name = "2024-02-0\(index + 1) - \(index % 2 == 1 ? "Interview" : "Talk") \(index + 1).mp3"
            #expect(try SHA256.hex(fileAt: (show as NSString).appendingPathComponent(name)) == body.sha256Hex())
        }
        // Event lines on standard output, oldest first; the summary on standard error.
        let lines = first.output.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.hasPrefix("finished e") }.count == 4 && lines.filter { $0.hasPrefix("started ") }.count == 6)
        #expect(first.errors.contains("monsoon: archived: 6 downloaded, 0 skipped (already archived), 0 failed\nmonsoon: "))

        let manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: show + "/monsoon-manifest.json"))) as? [String: Any])
        let files = try #require(manifest["files"] as? [[String: Any]])
        #expect(files.count == 7, "4 episodes, the feed, the artwork, a transcript")
        let talk1 = try #require(files.first { $0["file"] as? String == "2024-02-01 - Talk 1.mp3" })
        #expect(talk1["sha256"] as? String == bodies[0].sha256Hex() && talk1["guid"] as? String == "g1" && talk1["size"] as? Int == 20_001)
        #expect(talk1["sourceURL"] as? String == server.url("/ep1.mp3").absoluteString && talk1["finalURL"] as? String == server.url("/ep1.mp3").absoluteString)
        #expect(talk1["etag"] as? String == "\"e1\"" && talk1["downloaded"] as? String != nil)

        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder.file("report.json")))) as? [String: Any])
        let overall = try #require(report["overall"] as? [String: Any])
        #expect(overall["bytes"] as? Int == bodies.reduce(0) { $0 + $1.count } + 3_000 + 7)
        #expect((overall["connections"] as? [String: Int])?["opened"] ?? 0 >= 1)
        #expect(overall["timeToFirstByteSeconds"] as? [String: Any] != nil && (report["hosts"] as? [String: Any])?.count == 1)

        // Again: nothing is fetched twice, even a file deleted by hand or an episode whose title
        // changed, and a new episode is.
        let requests = server.requests.count
        try FileManager.default.removeItem(atPath: show + "/2024-02-02 - Interview 2.mp3")
        _ = Self.serve(server, count: 5, renamed: true)
        let second = try await MonsoonProcess(["archive", feed, "-o", "A", "--with-artwork", "--with-transcripts"], in: folder.path).finish()
        #expect(second.status == 0, "\(second.errors)")
        #expect(server.requests.dropFirst(requests).map(\.path).sorted() == ["/ep5.mp3", "/feed.xml"])
        #expect(second.errors.contains("archived: 1 downloaded, 4 skipped (already archived), 0 failed"), "3 episodes and the artwork: \(second.errors)")
        #expect(second.errors.hasSuffix("\nmonsoon: 1 missing from disk: run with --refetch-missing to fetch it again\n"), "\(second.errors)")
        // --refetch-missing brings the deleted one back.
        let third = try await MonsoonProcess(["archive", feed, "-o", "A", "--refetch-missing"], in: folder.path).finish()
        #expect(third.status == 0 && third.output.contains("finished e3 ") && server.requests(for: "/ep2.mp3").count == 2, "\(third.output)")

        // verify: clean, then a changed and a missing file, and one that is not listed.
        let clean = try await MonsoonProcess(["verify", "A"], in: folder.path).finish()
        #expect(clean.status == 0 && clean.errors.contains("all as listed"), "\(clean.output)\(clean.errors)")
        try Data("changed".utf8).write(to: URL(fileURLWithPath: show + "/2024-02-03 - Talk 3.mp3"))
        try FileManager.default.removeItem(atPath: show + "/2024-02-04 - Interview 4.mp3")
        try Data().write(to: URL(fileURLWithPath: show + "/stray.txt"))
        let broken = try await MonsoonProcess(["verify", "A", "--json"], in: folder.path).finish()
        #expect(broken.status == 1)
        let result = try #require(try JSONSerialization.jsonObject(with: Data(broken.output.utf8)) as? [String: Any])
        #expect(result["changed"] as? [String] == [show + "/2024-02-03 - Talk 3.mp3"])
        #expect(result["missing"] as? [String] == [show + "/2024-02-04 - Interview 4.mp3"])
        #expect(result["extra"] as? [String] == [show + "/stray.txt"])
    }

    @Test func selectionDryRunJSONAndLimits() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        _ = Self.serve(server, count: 6)
        let feed = server.url("/feed.xml").absoluteString
        let plan = await runMonsoon(["archive", feed, "-o", "A", "--dry-run", "--match", "INTERVIEW", "--since", "2024-02-03"], in: folder.path)
        #expect(plan.status == 0, "\(plan.errors)")
        #expect(plan.output.hasPrefix("Archive Show (\(feed)): 2 to download, 0 already archived, 4 left out\n"))
        #expect(plan.output.contains("  2024-02-04  20 KiB  Interview 4\n") && plan.output.contains("per host:\n  127.0.0.1:\(server.port)  2 files"))
        #expect(plan.output.contains("it fits"))
        #expect(server.requests.allSatisfy { $0.path == "/feed.xml" }, "a dry run downloads nothing")
        #expect(FileManager.default.fileExists(atPath: folder.file("A")) == false)

        let json = await runMonsoon(["archive", feed, "-o", "A", "--dry-run", "--json", "--newest-first", "--limit", "2", "--exclude", "talk"], in: folder.path)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        #expect(object["event"] as? String == "plan" && object["files"] as? Int == 2 && object["fits"] as? Bool == true)
        let episodes = try #require(((object["podcasts"] as? [[String: Any]])?.first?["episodes"]) as? [[String: Any]])
        #expect(episodes.map { $0["title"] as? String } == ["Interview 6", "Interview 4"])

        // The real run with --json: one object per line, each with event and time.
        let run = await runMonsoon(["archive", feed, "-o", "A", "--json", "--limit", "2"], in: folder.path)
        #expect(run.status == 0, "\(run.errors)")
        let events = try run.output.split(separator: "\n").map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        #expect(events.allSatisfy { $0["event"] is String && $0["time"] is String })
        #expect(events.filter { $0["event"] as? String == "finished" }.count == 2)
        let summary = try #require(events.last)
        #expect(summary["event"] as? String == "summary" && summary["downloaded"] as? Int == 2 && summary["failed"] as? Int == 0)
        #expect(server.requests(for: "/ep1.mp3").count == 1 && server.requests(for: "/ep2.mp3").count == 1 && server.requests(for: "/ep3.mp3").isEmpty,
                "oldest first, two of them")
    }

    @Test func badInputIsAUsageErrorOrAClearFailure() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let notURL = try await MonsoonProcess(["archive", "not-a-url"], in: folder.path).finish()
        #expect(notURL.status == 2 && notURL.errors.contains("'not-a-url' is not an http or https URL"))
        let badRegex = await runMonsoon(["archive", "https://example.com/feed.xml", "--match", "(unclosed"], in: folder.path)
        #expect(badRegex.status == 2 && badRegex.errors.contains("is not a regular expression"))
        let badDay = await runMonsoon(["archive", "https://example.com/feed.xml", "--since", "yesterday"], in: folder.path)
        #expect(badDay.status == 2 && badDay.errors.contains("'yesterday' is not a day"))
        server.setRoute("/page", Route.html(status: 200, "<html><head><title>Home</title></head><body>no feed here</body></html>"))
        server.setRoute("/missing.xml", Route.html(status: 404, "<html>gone</html>"))
        let page = await runMonsoon(["archive", server.url("/page").absoluteString, "-o", "A"], in: folder.path)
        #expect(page.status == 1 && page.errors.contains("web page"), "\(page.errors)")
        let missing = await runMonsoon(["archive", server.url("/missing.xml").absoluteString, "-o", "A"], in: folder.path)
        #expect(missing.status == 1 && missing.errors.contains("404"), "\(missing.errors)")
        let big = Self.serve(server, count: 1, size: 50_000)
        _ = big
        let limited = await runMonsoon(["archive", server.url("/feed.xml").absoluteString, "-o", "A", "--max-size", "10k"], in: folder.path)
        #expect(limited.status == 1)
        #expect(limited.errors.split(separator: "\n").contains {
            $0.hasPrefix("monsoon: e") && $0.contains(" failed: ") && $0.contains("larger than this download's limit of 10 KiB")
        }, "\(limited.errors)")
        #expect(!limited.output.contains("failed"), "failures go to standard error: \(limited.output)")
        try FileManager.default.createDirectory(atPath: folder.file("empty"), withIntermediateDirectories: true)
        let verifyNothing = await runMonsoon(["verify", folder.file("empty")], in: folder.path)
        #expect(verifyNothing.status == 1 && verifyNothing.errors.contains("not a Monsoon archive"))
    }

    @Test func anArchiveKeepsEverythingWhateverTheRetentionSettings() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        _ = Self.serve(server, count: 3)
        #expect(await runMonsoon(["config", "set", "keep-latest", "1"], in: folder.path).status == 0)
        let run = await runMonsoon(["archive", server.url("/feed.xml").absoluteString, "-o", "A"], in: folder.path)
        #expect(run.status == 0, "\(run.errors)")
        #expect(folder.contents("A/Archive Show").filter { $0.hasSuffix(".mp3") }.count == 3, "keep-latest is for listening, not for archives")
        let impossible = await runMonsoon(["archive", server.url("/feed.xml").absoluteString, "--since", "2024-02-31"], in: folder.path)
        #expect(impossible.status == 2 && impossible.errors.contains("'2024-02-31' is not a day"))
        // A manifest that names a file outside its folder is refused, not followed.
        try Data(#"{"podcast": "x", "feedURL": "x", "generated": "x", "files": [{"kind": "episode", "file": "../../etc/passwd", "size": 1, "sha256": "0"}]}"#.utf8)
            .write(to: URL(fileURLWithPath: folder.file("A/Archive Show/monsoon-manifest.json")))
        let crafted = await runMonsoon(["verify", "A"], in: folder.path)
        #expect(crafted.status == 1 && crafted.errors.contains("which is not inside its folder"), "\(crafted.errors)")
    }

    @Test func syncQueuesNewEpisodesOfAutoDownloadPodcasts() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        _ = Self.serve(server, count: 2)
        #expect(await runMonsoon(["add", server.url("/feed.xml").absoluteString], in: folder.path).status == 0)
        #expect(await runMonsoon(["config", "set", "download-root", folder.file("P")], in: folder.path).status == 0)
        #expect(await runMonsoon(["config", "set", "auto-download", "on", "--podcast", "1"], in: folder.path).status == 0)
        let quiet = try await MonsoonProcess(["sync"], in: folder.path).finish()
        #expect(quiet.status == 0, "\(quiet.errors)")
        #expect(server.requests.filter { $0.path.hasPrefix("/ep") }.isEmpty, "nothing new since subscribing")
        _ = Self.serve(server, count: 4)
        let synced = try await MonsoonProcess(["sync"], in: folder.path).finish()
        #expect(synced.status == 0, "\(synced.errors)")
        #expect(synced.output.contains("Archive Show: 2 new, 0 updated\n") && synced.errors.contains("queued 2 new episodes"))
        #expect(synced.output.contains("finished e3 ") && synced.output.contains("finished e4 "), "\(synced.output)")
        #expect(folder.contents("P/Archive Show") == ["2024-02-03 - Talk 3.mp3", "2024-02-04 - Interview 4.mp3"])
    }

    @Test func systemdAndCompletionScriptsAreValid() async throws {
        let folder = Folder()
        defer { folder.remove() }
        let units = try await MonsoonProcess(["systemd", "--every", "30min"], in: folder.path).finish()
        #expect(units.status == 0)
        let monsoonBinary = URL(fileURLWithPath: monsoonBinary).resolvingSymlinksInPath().path
        #expect(units.output.contains("ExecStart=\"\(monsoonBinary)\" sync --quiet") && units.output.contains("OnUnitActiveSec=30min"))
        #expect(units.output.contains("ExecStart=\"\(monsoonBinary)\" download --quiet") && units.output.contains("systemctl --user enable --now monsoon-sync.timer"))
        #expect(try await Self.shell("/bin/sh", ["-n"], input: units.output).status == 0, "the install script parses")

        // The scripts ask the binary at each Tab: put it on PATH as the user's shell would find it.
        let binaries = URL(fileURLWithPath: monsoonBinary).deletingLastPathComponent().path
        let onPath = "export PATH='\(binaries)':\"$PATH\"\n"
        let bash = try await MonsoonProcess(["completions", "bash"], in: folder.path).finish()
        let probe = onPath + bash.output + """

            comp() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _monsoon; echo "${COMPREPLY[*]}"; }
            comp monsoon arch; comp monsoon archive --dry; comp monsoon downloads cl; comp monsoon queue add --pod
            comp monsoon --home /tmp/h get --jo; comp monsoon completions ''; comp monsoon get -o ''
            """
        let completed = try await Self.shell("/bin/bash", [], input: probe)
        #expect(completed.output == "archive\n--dry-run\nclear\n--podcast\n--jobs\nbash zsh fish man\n\n", "\(completed.output)")
        let answer = try await MonsoonProcess(["__complete", "monsoon", "pos"], in: folder.path).finish()
        #expect(answer.status == 0 && answer.output == "position\tShow or set an episode's saved playback position, in seconds.\n", "\(answer.output)")
        // Values of a typed option or argument, after an option's value and a subcommand; none after "--".
        for (words, expected) in [(["config", "get", "keep-l"], "keep-latest\n"), (["--home", "/tmp/h", "downloads", "--status", "f"], "failed\n"),
                                  (["help", "completions", "z"], ""), (["completions", "z"], "zsh\n"), (["get", "--", "-"], ""),
                                  (["downloads", "--st"], "--status\tOnly downloads in this status.\n")] {
            let asked = await runMonsoon(["__complete", "monsoon"] + words, in: folder.path)
            #expect(asked.status == 0 && asked.output == expected, "\(words): \(asked.output)")
        }
        let zsh = try await MonsoonProcess(["completions", "zsh"], in: folder.path).finish()
        #expect(zsh.status == 0 && zsh.output.hasPrefix("#compdef monsoon\n"))
        let fish = try await MonsoonProcess(["completions", "fish"], in: folder.path).finish()
        #expect(fish.status == 0)
        // Checked where the shells are installed (make test installs them).
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/zsh") {
            #expect(try await Self.shell("/usr/bin/zsh", ["-n"], input: zsh.output).status == 0, "zsh parses it")
        }
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/fish") {
            let asked = try await Self.shell("/usr/bin/fish", [], input: "set -x PATH '\(binaries)' $PATH\n" + fish.output + "complete -C 'monsoon downloads cl'\ncomplete -C 'monsoon completions f'\n")
            #expect(asked.output.hasPrefix("clear\t") && asked.output.hasSuffix("\nfish\n"), "\(asked.output)")
        }
        let unknown = try await MonsoonProcess(["completions", "tcsh"], in: folder.path).finish()
        #expect(unknown.status == 2)
    }

    @Test func theTerminalViewShowsProgressLines() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/slow.mp3", Route(body: .pattern(size: 600_000, seed: 3), contentType: "audio/mpeg", throttle: 300_000))
        // `script` gives the binary a pseudo-terminal and records what it drew.
        let command = "MONSOON_HOME='\(folder.file(".monsoon"))' COLUMNS=100 '\(monsoonBinary)' get -o '\(folder.path)' '\(server.url("/slow.mp3").absoluteString)'"
        let run = try await Self.shell("/usr/bin/script", ["-q", "-e", "-c", command, folder.file("typescript")], input: "")
        #expect(run.status == 0)
        let screen = try String(contentsOfFile: folder.file("typescript"), encoding: .utf8)
        #expect(screen.contains("slow.mp3") && screen.contains("%") && screen.contains("/s") && screen.contains("ETA"), "\(screen)")
        #expect(screen.contains("\u{1B}[") , "redrawn in place")
        #expect(screen.contains("1 of 1 downloaded"))
        let plain = try await Self.shell("/usr/bin/script", ["-q", "-e", "-c", "NO_COLOR=1 " + command, folder.file("typescript2")], input: "")
        #expect(plain.status == 0)
        #expect(!(try String(contentsOfFile: folder.file("typescript2"), encoding: .utf8)).contains("\u{1B}[32m"), "no colours with NO_COLOR")
    }

    /// Runs a program with `input` on its standard input; waits for it without blocking a
    /// thread of the test runner (its output goes to a file, see `MonsoonProcess`).
    static func shell(_ path: String, _ arguments: [String], input: String) async throws -> (status: Int32, output: String) {
        let output = FileManager.default.temporaryDirectory.path(percentEncoded: false) + "/monsoon-shell-\(UUID().uuidString)"
        let source = output + ".in"
        try Data(input.utf8).write(to: URL(fileURLWithPath: source))
        guard FileManager.default.createFile(atPath: output, contents: nil) else { throw CLITestError("cannot create \(output)") }
        defer {
            try? FileManager.default.removeItem(atPath: output)   // temporary files: nothing to keep
            try? FileManager.default.removeItem(atPath: source)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardInput = FileHandle(forReadingAtPath: source)
        process.standardOutput = FileHandle(forWritingAtPath: output)
        process.standardError = FileHandle.nullDevice
        try process.run()
        while process.isRunning { try await Task.sleep(nanoseconds: 20_000_000) }
        return (process.terminationStatus, String(decoding: FileManager.default.contents(atPath: output) ?? Data(), as: UTF8.self))
    }
}
