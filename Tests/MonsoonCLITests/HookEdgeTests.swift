import Foundation
import MonsoonPodcasts
import MonsoonTestServer
import Testing
@testable import MonsoonCLI

/// Sidecars and hooks at their edges: long names, private feeds, two processes, stopped and
/// lingering hooks, counts after a catch-up, earlier versions.
@Suite struct HookEdgeTests {
    @Test func aLongTitlesSidecarGetsAShortNameThatEverythingFinds() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        // 80 CJK characters: 240 bytes, so the file's name is near 250 and `.info.json` would pass 255.
        let long = String(repeating: "長", count: 80)
        _ = InfoJSONTests.serve(server, count: 2, title: { $0 == 1 ? long : "Episode \($0)" })
        let environment = HookTests.environment(folder)
        let script = try HookTests.recorder(in: folder)
        let run = await runMonsoon(["archive", server.url("/feed.xml").absoluteString, "-o", "A", "--write-info-json", "--exec", "\(script) {}"],
                                   in: folder.path, environment: environment)
        #expect(run.status == 0, "\(run.errors)")
        let media = try InfoJSONTests.file(folder, "A/Info Show", startingWith: "2024-02-01")
        let sidecar = InfoSidecar.path(for: media)
        let name = (sidecar as NSString).lastPathComponent
        #expect(name.utf8.count <= 255 && name.hasSuffix(".info.json"), "\(name)")
        #expect((try InfoJSONTests.json(sidecar)["episode"] as? [String: Any])?["title"] as? String == long)
        #expect(HookTests.runs(folder).first { $0["FILE"] == media }?["INFO_JSON"] == sidecar)
        // No temporary file left, and the manifest lists it (verify finds every file listed, and no other).
        #expect(!folder.contents("A/Info Show").contains { $0.hasSuffix(".tmp") })
        let verify = await runMonsoon(["verify", "A"], in: folder.path, environment: environment)
        #expect(verify.status == 0, "\(verify.output)\(verify.errors)")
        // delete finds it the same way.
        let id = try #require(HookTests.runs(folder).first { $0["FILE"] == media }?["EPISODE_ID"])
        #expect(await runMonsoon(["delete", id], in: folder.path, environment: environment).status == 0)
        #expect(!FileManager.default.fileExists(atPath: media) && !FileManager.default.fileExists(atPath: sidecar))
    }

    @Test func aPlainDownloadsLongNameGetsAShortenedSidecarName() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        // 82 CJK characters and `.mp3`: a 250-byte name (the most a file's may have), so `.info.json` would make 260.
        let name = String(repeating: "長", count: 82) + ".mp3"
        let encoded = try #require(name.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
        server.setRoute("/long.mp3", Route(body: .pattern(size: 3_000, seed: 5), contentDisposition: "attachment; filename*=UTF-8''\(encoded)"))
        let script = try HookTests.recorder(in: folder)
        let run = await runMonsoon(["get", "-o", "out", "--write-info-json", "--exec", "\(script) {}", server.url("/long.mp3").absoluteString],
                                   in: folder.path, environment: HookTests.environment(folder))
        #expect(run.status == 0, "\(run.errors)")
        let media = folder.file("out/" + name)
        #expect(FileManager.default.fileExists(atPath: media), "\(folder.contents("out"))")
        let sidecar = InfoSidecar.path(for: media)
        let sidecarName = (sidecar as NSString).lastPathComponent
        #expect(sidecarName.utf8.count <= 255 && sidecarName.hasSuffix(".info.json") && sidecarName.hasPrefix(String(repeating: "長", count: 78)), "\(sidecarName)")
        #expect((try InfoJSONTests.json(sidecar)["download"] as? [String: Any])?["file"] as? String == name)
        #expect(HookTests.runs(folder).first?["INFO_JSON"] == sidecar)
        #expect(folder.contents("out").sorted() == [name, sidecarName].sorted(), "no temporary file left")
    }

    @Test func aPrivateFeedsSidecarAndVariablesHoldNoCredentialsAndTheSidecarIsPrivate() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let body = Body.pattern(size: 5_000, seed: 4)
        server.setRoute("/ep.mp3", Route(body: body, contentType: "audio/mpeg"))
        let feedText = """
            <?xml version="1.0"?><rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" xmlns:podcast="https://podcastindex.org/namespace/1.0">
            <channel><title>Private Show</title><link>https://example.com/?token=SECRETA</link><itunes:image href="https://u:SECRETB@example.com/c.jpg"/>
            <item><title>Members only</title><guid>p1</guid><pubDate>01 Feb 2024 10:00:00 GMT</pubDate>
            <link>https://example.com/ep?auth=SECRETC</link><itunes:image href="https://example.com/e.jpg?sig=SECRETD"/>
            <podcast:chapters url="https://example.com/c.json?key=SECRETE" type="application/json+chapters"/>
            <podcast:transcript url="https://example.com/t.vtt?token=SECRETF" type="text/vtt"/>
            <enclosure url="\(server.url("/ep.mp3").absoluteString)?token=SECRETG" type="audio/mpeg" length="5000"/></item>
            </channel></rss>
            """
        server.setRoute("/feed.xml", Route(body: .bytes(Array(feedText.utf8)), contentType: "application/rss+xml"))
        var components = try #require(URLComponents(url: server.url("/feed.xml"), resolvingAgainstBaseURL: false))
        components.user = "member"
        components.password = "SECRETH"
        let feed = try #require(components.string)
        let script = try HookTests.recorder(in: folder)
        let run = await runMonsoon(["archive", feed, "-o", "A", "--write-info-json", "--exec", "\(script) {}"], in: folder.path,
                                   environment: HookTests.environment(folder))
        #expect(run.status == 0, "\(run.errors)")
        let media = try InfoJSONTests.file(folder, "A/Private Show", startingWith: "2024-02-01")
        let sidecar = InfoSidecar.path(for: media)
        let text = try String(contentsOfFile: sidecar, encoding: .utf8)
        #expect(!text.contains("SECRET"), "\(text)")
        #expect(text.contains("***") && text.contains("member") == false)
        var info = stat()
        #expect(lstat(sidecar, &info) == 0 && info.st_mode & 0o777 == 0o600)
        let values = try #require(HookTests.runs(folder).first)
        for name in ["URL", "FINAL_URL", "LINK", "FEED_URL", "INFO_JSON"] { #expect(values[name]?.contains("SECRET") != true, "\(name): \(values[name] ?? "")") }
        #expect(values["FEED_URL"]?.contains("***") == true && values["LINK"]?.contains("***") == true)
    }

    @Test func aGetHandedToARunningDownloadWithExecRunsItsHookOnce() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        _ = InfoJSONTests.serve(server, count: 1, title: { "Slow \($0)" })
        // The queue's one episode is held part-way until the handed get is done: it finds the download running.
        let gate = Gate()
        defer { gate.open() }
        server.setRoute("/ep1.mp3", Route(body: .pattern(size: 600_000, seed: 1), gate: gate, gateAfter: 100_000))
        let body = Body.pattern(size: 2_000, seed: 2)
        server.setRoute("/mine.bin", Route(body: body))
        let environment = HookTests.environment(folder)
        let script = try HookTests.recorder(in: folder)
        await Self.subscribeAndQueue(server, folder, environment)
        let running = try MonsoonProcess(["download", "-o", "D", "--exec", "\(script) {}"], in: folder.path, environment: ["RUNS": folder.file("runs")])
        defer { running.process.terminate() }
        try await waitUntil("the download running") { server.requests.contains { $0.path == "/ep1.mp3" } }
        let handed = await runMonsoon(["get", "-o", "two", "--exec", "\(script) {}", server.url("/mine.bin").absoluteString], in: folder.path,
                                      environment: environment)
        #expect(handed.status == 0, "\(handed.errors)")
        gate.open()
        let result = try await running.finish()
        #expect(result.status == 0, "\(result.errors)")
        // Both saw mine.bin complete; one of them ran its hook.
        let runs = HookTests.runs(folder)
        #expect(runs.filter { $0["FILE"] == folder.file("two/mine.bin") }.count == 1, "\(runs)")
        #expect(runs.filter { $0["TITLE"] == "Slow 1" }.count == 1, "\(runs)")
        // And no later run runs it again.
        let again = await runMonsoon(["download", "--exec", "\(script) {}"], in: folder.path, environment: environment)
        #expect(again.status == 0, "\(again.errors)")
        #expect(HookTests.runs(folder).count == 2)
    }

    @Test func aHookThatLeavesAWriterBehindStillEndsTheRun() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/a.bin", Route(body: .bytes([1, 2, 3])))
        // `yes` writes to the hook's output for as long as the pipe is open: the run reads a bounded amount, then ends it.
        let line = String(repeating: "x", count: 1_000)
        let run = await runMonsoon(["get", "-o", "out", "--exec", "sh -c 'echo started; yes \(line) &'", server.url("/a.bin").absoluteString],
                                   in: folder.path, environment: HookTests.environment(folder))
        #expect(run.status == 0, "\(run.errors.prefix(500))")
        // Its lines say whose they are.
        #expect(run.errors.contains("d1: started"))
    }

    @Test func aStoppedHookIsContinuedToEndAndOneIgnoringSIGTERMIsKilled() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/a.bin", Route(body: .bytes([1, 2, 3])))
        let url = server.url("/a.bin").absoluteString
        // Each says it started once SIGTERM can no longer end it early: the trap is set first.
        for (name, setup, body, end) in [("stops", "", "kill -STOP $$", "killed by signal 15 (SIGTERM)"),
                                         ("ignores", "trap '' TERM", "sleep 30", "killed by signal 9 (SIGKILL)")] {
            let script = folder.file("\(name).sh")
            try writeScript("#!/bin/sh\n\(setup)\ntouch \"$RUNS.\(name)\"\n\(body)\n", to: script)
            let interruption = Interruption()
            async let run = runMonsoon(["get", "-o", name, "--exec", script, url], in: folder.path, interruption: interruption,
                                       environment: HookTests.environment(folder))
            try await waitUntil("the hook started") { FileManager.default.fileExists(atPath: folder.file("runs.\(name)")) }
            // A stopped process acts on nothing until it runs again: give it the moment to stop.
            if name == "stops" { try await waitUntil("the hook stopped") { Self.isStopped(folder: folder) } }
            interruption.trigger()
            let result = await run
            #expect(result.status == 130, "\(name): \(result.errors)")
            #expect(result.errors.contains("the hook failed: \(end)"), "\(name): \(result.errors)")
        }
    }

    /// Subscribes to the test server's feed and queues all its episodes.
    static func subscribeAndQueue(_ server: TestServer, _ folder: Folder, _ environment: [String: String]) async {
        #expect(await runMonsoon(["add", server.url("/feed.xml").absoluteString], in: folder.path, environment: environment).status == 0)
        #expect(await runMonsoon(["queue", "add", "--podcast", "Info Show", "--all"], in: folder.path, environment: environment).status == 0)
    }

    /// Whether a process of this test's hooks is stopped (state `T` in /proc).
    static func isStopped(folder: Folder) -> Bool {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).contains { pid in
            guard Int(pid) != nil, let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let command = try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8), command.contains(folder.file("stops.sh")),
                  let close = stat.lastIndex(of: ")") else { return false }
            return stat[stat.index(after: close)...].split(separator: " ").first == "T"
        }
    }

    @Test func aFailedCatchUpIsAFailureAndLeavesTheDownloadedCountAlone() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        _ = InfoJSONTests.serve(server, count: 1, title: { "Episode \($0)" })
        let environment = HookTests.environment(folder)
        let failing = "sh -c 'case \"$1\" in *\"Episode 1\"*) exit 3;; esac' sh {}"
        await Self.subscribeAndQueue(server, folder, environment)
        let first = await runMonsoon(["download", "-o", "D", "--exec", failing], in: folder.path, environment: environment)
        #expect(first.status == 1 && first.errors.contains("monsoon: 0 of 1 downloaded, 1 failed"), "\(first.errors)")
        // A second episode to download, and the first one's hook, failed before, caught up (and failing again).
        _ = InfoJSONTests.serve(server, count: 2, title: { "Episode \($0)" })
        #expect(await runMonsoon(["refresh"], in: folder.path, environment: environment).status == 0)
        #expect(await runMonsoon(["queue", "add", "--podcast", "Info Show", "--all"], in: folder.path, environment: environment).status == 0)
        let second = await runMonsoon(["download", "-o", "D", "--exec", failing], in: folder.path, environment: environment)
        #expect(second.status == 1, "\(second.errors)")
        // The new file counts as downloaded; the caught-up one as failed, taken out of no count.
        #expect(second.errors.contains("monsoon: 1 of 1 downloaded, 1 failed"), "\(second.errors)")
        #expect(second.errors.contains("e1 (Episode 1): the hook failed: exit status 3"), "\(second.errors)")
    }

    @Test func downloadWritesTheSidecarsAnEarlierRunLeftMissing() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        _ = InfoJSONTests.serve(server, count: 2, title: { "Episode \($0)" })
        let environment = HookTests.environment(folder)
        await Self.subscribeAndQueue(server, folder, environment)
        #expect(await runMonsoon(["download", "-o", "D"], in: folder.path, environment: environment).status == 0)
        let files = folder.contents("D/Info Show").filter { $0.hasSuffix(".mp3") }.map { folder.file("D/Info Show/" + $0) }
        #expect(files.count == 2 && files.allSatisfy { !FileManager.default.fileExists(atPath: $0 + ".info.json") })
        // Nothing left to download: the run still writes what is missing.
        let run = await runMonsoon(["download", "--write-info-json"], in: folder.path, environment: environment)
        #expect(run.status == 0, "\(run.errors)")
        #expect(files.allSatisfy { FileManager.default.fileExists(atPath: $0 + ".info.json") }, "\(folder.contents("D/Info Show"))")
    }

    @Test func versionsLatestDeletesTheEarlierVersionsSidecarToo() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        _ = EpisodeVersionCommandTests.serve(server)
        let feed = server.url("/feed.xml").absoluteString
        #expect(await runMonsoon(["archive", feed, "-o", "A", "--write-info-json"], in: folder.path).status == 0)
        let show = folder.file("A/Versions Show")
        let earlier = show + "/2024-02-01 - Talk 1.mp3"
        #expect(FileManager.default.fileExists(atPath: earlier + ".info.json"))
        _ = EpisodeVersionCommandTests.serve(server, episode1: ("/ep1-v2.mp3", 25_000, 11))
        let run = await runMonsoon(["archive", feed, "-o", "A", "--write-info-json", "--versions", "latest"], in: folder.path)
        #expect(run.status == 0, "\(run.errors)")
        #expect(!FileManager.default.fileExists(atPath: earlier) && !FileManager.default.fileExists(atPath: earlier + ".info.json"), "\(folder.contents("A/Versions Show"))")
        #expect(folder.contents("A/Versions Show").filter { $0.hasSuffix(".info.json") }.count == 2)
        let verify = await runMonsoon(["verify", "A"], in: folder.path)
        #expect(verify.status == 0, "\(verify.output)\(verify.errors)")
        // A sidecar gone by hand: repair says how it comes back.
        let current = try #require(folder.contents("A/Versions Show").first { $0.hasPrefix("2024-02-02") && $0.hasSuffix(".info.json") })
        try FileManager.default.removeItem(atPath: show + "/" + current)
        let repair = await runMonsoon(["verify", "A", "--repair"], in: folder.path)
        #expect((repair.output + repair.errors).contains("--write-info-json' (the archive's folder) writes it again"), "\(repair.output)\(repair.errors)")
    }
}
