import Foundation
import MonsoonEngine
import MonsoonStore
import MonsoonTestServer
import Testing
@testable import MonsoonCLI

private enum DownloadIDColumn: Int, TableColumn { case downloadID }

/// `--exec`: a real program run after each file, in-process against the test server.
@Suite struct HookTests {
    /// A hook script in `folder`: for each run, writes its arguments and every `MONSOON_*` variable
    /// to `runs/N/` (one file each), and appends a line to `runs.log`.
    static func recorder(in folder: Folder) throws -> String {
        let path = folder.file("record.sh")
        try writeScript("""
            #!/bin/sh
            dir="$RUNS/$$"
            mkdir -p "$dir"
            i=0
            for arg in "$@"; do i=$((i+1)); printf '%s' "$arg" > "$dir/arg$i"; done
            for name in FILE ID URL FINAL_URL ETAG LAST_MODIFIED BYTES SHA256 INFO_JSON EPISODE_ID TITLE GUID DATE SEASON EPISODE LINK PODCAST FEED_URL; do
              eval "value=\\${MONSOON_$name+set}"
              if [ "$value" = set ]; then eval "printf '%s' \\"\\$MONSOON_$name\\"" > "$dir/$name"; fi
            done
            echo "ran $1" >> "$RUNS.log"
            echo "hook says hello"
            """, to: path)
        return path
    }

    static func environment(_ folder: Folder) -> [String: String] {
        ["MONSOON_HOME": folder.file(".monsoon"), "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "RUNS": folder.file("runs"),
         "MONSOON_TITLE": "stale, from a parent"]
    }

    /// The runs the recorder saw: each one's files by name.
    static func runs(_ folder: Folder) -> [[String: String]] {
        let base = folder.file("runs")
        return ((try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []).map { run in
            let dir = (base as NSString).appendingPathComponent(run)
            return ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).reduce(into: [:]) { values, name in
                values[name] = (try? String(contentsOfFile: (dir as NSString).appendingPathComponent(name), encoding: .utf8)) ?? ""
            }
        }
    }

    @Test func aHookGetsItsFileAndTheEpisodesFieldsAndNoShell() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let bodies = InfoJSONTests.serve(server, count: 2)
        let feed = server.url("/feed.xml").absoluteString
        let script = try Self.recorder(in: folder)
        let run = await runMonsoon(["archive", feed, "-o", "A", "--write-info-json", "--json", "--exec", "\(script) {} 'two words' \"$HOME;|*\" x{}y"],
                                   in: folder.path, environment: Self.environment(folder))
        #expect(run.status == 0, "\(run.errors)")
        let runs = Self.runs(folder)
        #expect(runs.count == 2)
        let media = try InfoJSONTests.file(folder, "A/Info Show", startingWith: "2024-02-01")
        let first = try #require(runs.first { $0["arg1"] == media }, "\(runs)")
        #expect(first["arg2"] == "two words" && first["arg3"] == "$HOME;|*" && first["arg4"] == "x\(media)y" && first["arg5"] == nil)
        // The hostile title reached the hook as data: nothing of it ran.
        #expect(!FileManager.default.fileExists(atPath: folder.file("pwned")) && !FileManager.default.fileExists(atPath: folder.file("y")))
        #expect(first["TITLE"] == InfoJSONTests.hostileTitle.replacingOccurrences(of: "\u{1B}", with: ""))
        #expect(first["FILE"] == media && first["ID"]?.hasPrefix("e") == true && first["EPISODE_ID"] == first["ID"].map { String($0.dropFirst()) })
        #expect(first["URL"] == server.url("/r1.mp3").absoluteString && first["FINAL_URL"] == server.url("/ep1.mp3").absoluteString)
        #expect(first["SHA256"] == bodies[0].sha256Hex() && first["BYTES"] == "10001" && first["ETAG"] == "\"e1\"")
        #expect(first["LAST_MODIFIED"] == "Tue, 14 Nov 2023 22:13:20 GMT")
        #expect(first["PODCAST"] == "Info Show" && first["FEED_URL"] == feed && first["GUID"] == "guid-1" && first["DATE"] == "2024-02-01T10:00:00Z")
        #expect(first["SEASON"] == "2" && first["EPISODE"] == "1" && first["LINK"] == "https://example.com/ep1")
        // The sidecar is there before the hook runs, and named to it.
        #expect(first["INFO_JSON"] == media + ".info.json")
        // Its output goes to standard error, never into --json's standard output; its end is an event.
        #expect(run.errors.contains("hook says hello") && !run.output.contains("hook says hello"))
        let events = run.output.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let hooks = events.filter { $0["event"] as? String == "hook" }
        #expect(hooks.count == 2 && hooks.allSatisfy { $0["exitStatus"] as? Int == 0 && $0["signal"] is NSNull })

        // Not again on a rerun: the files are the same.
        let again = await runMonsoon(["archive", feed, "-o", "A", "--exec", "\(script) {}"], in: folder.path, environment: Self.environment(folder))
        #expect(again.status == 0, "\(again.errors)")
        #expect(Self.runs(folder).count == 2)
    }

    @Test func getAndDownloadRunTheHookWithThePlainURLsFields() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let body = Body.pattern(size: 4_000, seed: 3)
        server.setRoute("/a.bin", Route(body: body))
        let script = try Self.recorder(in: folder)
        let run = await runMonsoon(["get", "-o", "out", "--exec", "\(script) {}", server.url("/a.bin").absoluteString], in: folder.path,
                                   environment: Self.environment(folder))
        #expect(run.status == 0, "\(run.errors)")
        let runs = Self.runs(folder)
        #expect(runs.count == 1)
        #expect(runs.first?["FILE"] == folder.file("out/a.bin") && runs.first?["SHA256"] == body.sha256Hex() && runs.first?["ID"] == "d1")
        // No episode, so no episode's variables: and the parent's stale one is not passed on.
        #expect(runs.first?["TITLE"] == nil && runs.first?["PODCAST"] == nil && runs.first?["INFO_JSON"] == nil)
        // The same URL again: already there, and its hook ran.
        let again = await runMonsoon(["get", "-o", "out", "--exec", "\(script) {}", server.url("/a.bin").absoluteString], in: folder.path,
                                     environment: Self.environment(folder))
        #expect(again.status == 0, "\(again.errors)")
        #expect(Self.runs(folder).count == 1)
        // Forgotten by the queue, the download owes nothing: its row goes at the next run with --exec.
        func ledgerRows() throws -> [String] {
            try Database(path: folder.file(".monsoon/monsoon.sqlite")).statement("SELECT download_id FROM hook_runs ORDER BY download_id").query(reading: DownloadIDColumn.self) { $0.text(.downloadID) ?? "" }
        }
        #expect(try ledgerRows() == ["d1"])
        #expect(await runMonsoon(["downloads", "clear"], in: folder.path, environment: Self.environment(folder)).status == 0)
        server.setRoute("/b.bin", Route(body: Body.pattern(size: 1_000, seed: 4)))
        let other = await runMonsoon(["get", "-o", "out", "--exec", "\(script) {}", server.url("/b.bin").absoluteString], in: folder.path,
                                     environment: Self.environment(folder))
        #expect(other.status == 0, "\(other.errors)")
        #expect(try ledgerRows() == ["d2"])
    }

    @Test func aFailingHookFailsItsEpisodeAndRunsAgainNextTime() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        _ = InfoJSONTests.serve(server, count: 2, title: { "Episode \($0)" })
        let feed = server.url("/feed.xml").absoluteString
        let environment = Self.environment(folder)
        // Fails for episode 2 only: the other is no failure.
        let failing = "sh -c 'case \"$1\" in *\"Episode 2\"*) echo broken >&2; exit 3;; esac' sh {}"
        let run = await runMonsoon(["archive", feed, "-o", "A", "--json", "--exec", failing], in: folder.path, environment: environment)
        #expect(run.status == 1, "\(run.errors)")
        #expect(run.errors.contains("monsoon: e2 (Episode 2): the hook failed: exit status 3"), "\(run.errors)")
        #expect(run.errors.contains("broken"))
        let events = run.output.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(events.filter { $0["event"] as? String == "hook" }.compactMap { $0["exitStatus"] as? Int }.sorted() == [0, 3])
        let summary = try #require(events.first { $0["event"] as? String == "summary" })
        #expect(summary["downloaded"] as? Int == 1 && summary["failed"] as? Int == 1, "\(summary)")
        // The text summary counts it too.
        let text = await runMonsoon(["archive", feed, "-o", "A", "--exec", failing], in: folder.path, environment: environment)
        #expect(text.status == 1)
        #expect(text.errors.contains("archived: 0 downloaded, 1 skipped (already archived), 1 failed"), "\(text.errors)")

        // Failed hooks run again on the next run (the files are not fetched again); once they pass, never again.
        let requests = server.requests.filter { $0.path.hasSuffix(".mp3") }.count
        let script = try Self.recorder(in: folder)
        let fixed = await runMonsoon(["archive", feed, "-o", "A", "--exec", "\(script) {}"], in: folder.path, environment: environment)
        #expect(fixed.status == 0, "\(fixed.errors)")
        #expect(Self.runs(folder).map { $0["arg1"] ?? "" }.count == 1 && Self.runs(folder).first?["TITLE"] == "Episode 2")
        let quiet = await runMonsoon(["archive", feed, "-o", "A", "--exec", "\(script) {}"], in: folder.path, environment: environment)
        #expect(quiet.status == 0 && Self.runs(folder).count == 1)
        #expect(server.requests.filter { $0.path.hasSuffix(".mp3") }.count == requests)
    }

    @Test func aHookThatCannotStartSaysWhatToDo() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/a.bin", Route(body: .bytes([1, 2, 3])))
        let run = await runMonsoon(["get", "-o", "out", "--json", "--exec", "no-such-hook-program {}", server.url("/a.bin").absoluteString],
                                   in: folder.path, environment: Self.environment(folder))
        #expect(run.status == 1)
        #expect(run.errors.contains("monsoon: d1 (a.bin): the hook did not run: the hook's program 'no-such-hook-program' is not in any folder of PATH; install it, or give its full path in --exec"),
                "\(run.errors)")
        #expect(run.output.contains("\"event\": \"hook\"") && run.output.contains("\"exitStatus\": null"))
        #expect(FileManager.default.fileExists(atPath: folder.file("out/a.bin")), "the file stays: only the hook failed")
    }

    @Test func hooksRunAtMostExecJobsAtOnce() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        _ = InfoJSONTests.serve(server, count: 6, title: { "Episode \($0)" })
        // Each run marks itself running, says how many were running with it (itself included),
        // and keeps its mark until the test lets it go: the test waits until a slotful of runs is
        // under way, then lets them go.
        let script = folder.file("count.sh")
        try writeScript("""
            #!/bin/sh
            mkdir -p "$RUNS.running"
            touch "$RUNS.running/$$"
            ls "$RUNS.running" | wc -l >> "$RUNS.counts"
            while [ ! -e "$RUNS.go/$$" ] && [ ! -e "$RUNS.go/all" ]; do sleep 0.01; done
            rm "$RUNS.running/$$"
            """, to: script)
        try FileManager.default.createDirectory(atPath: folder.file("runs.go"), withIntermediateDirectories: true)
        let running = { ((try? FileManager.default.contentsOfDirectory(atPath: folder.file("runs.running"))) ?? []).sorted() }   // none yet: no folder
        let counts = {
            ((try? String(contentsOfFile: folder.file("runs.counts"), encoding: .utf8)) ?? "").split(separator: "\n")   // none yet: no file
                .compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        }
        for jobs in [2, 1] {
            async let run = runMonsoon(["archive", server.url("/feed.xml").absoluteString, "-o", "A\(jobs)", "--exec", script, "--exec-jobs", "\(jobs)",
                                        "--home", folder.file("home\(jobs)")], in: folder.path, environment: Self.environment(folder))
            // A failing wait lets every hook go, so that the run it leaves behind ends.
            var settled = false
            defer { if !settled { _ = FileManager.default.createFile(atPath: folder.file("runs.go/all"), contents: nil) } }   // the failure is already said
            var released = 0
            while released < 6 {
                let slot = min(jobs, 6 - released)
                var marks: [String] = []
                try await waitUntil("\(slot) hooks running after \(released) (\(jobs) at once)") {
                    marks = running()
                    return marks.count >= slot && counts().count == released + marks.count
                }
                for mark in marks {
                    guard FileManager.default.createFile(atPath: folder.file("runs.go/\(mark)"), contents: nil) else { throw CLITestError("cannot let hook \(mark) go") }
                }
                try await waitUntil("the hooks let go ended") { Set(running()).isDisjoint(with: marks) }
                for mark in marks { try FileManager.default.removeItem(atPath: folder.file("runs.go/\(mark)")) }
                released += marks.count
            }
            let result = await run
            settled = true
            #expect(result.status == 0, "\(result.errors)")
            #expect(counts().count == 6 && counts().allSatisfy { $0 >= 1 && $0 <= jobs } && counts().contains(jobs), "\(jobs): \(counts())")
            try FileManager.default.removeItem(atPath: folder.file("runs.counts"))
        }
    }
}

/// `download` and `sync` run hooks and write sidecars for the episodes of the queue; Ctrl-C stops hooks.
@Suite struct QueueHookTests {
    @Test func downloadAndSyncRunThemForTheQueuesEpisodes() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        _ = InfoJSONTests.serve(server, count: 2, title: { "Episode \($0)" })
        let environment = HookTests.environment(folder)
        let script = try HookTests.recorder(in: folder)
        #expect(await runMonsoon(["add", server.url("/feed.xml").absoluteString], in: folder.path, environment: environment).status == 0)
        #expect(await runMonsoon(["queue", "add", "--podcast", "Info Show", "--all"], in: folder.path, environment: environment).status == 0)
        let run = await runMonsoon(["download", "-o", "D", "--write-info-json", "--exec", "\(script) {}"], in: folder.path, environment: environment)
        #expect(run.status == 0, "\(run.errors)")
        let runs = HookTests.runs(folder)
        #expect(Set(runs.compactMap { $0["TITLE"] }) == ["Episode 1", "Episode 2"])
        for values in runs {
            let file = try #require(values["FILE"])
            #expect(values["INFO_JSON"] == file + ".info.json" && values["PODCAST"] == "Info Show")
            let info = try InfoJSONTests.json(file + ".info.json")
            #expect((info["episode"] as? [String: Any])?["title"] as? String == values["TITLE"])
        }

        // sync: the new episode of an auto-download podcast gets its sidecar and hook; the others not again.
        #expect(await runMonsoon(["config", "set", "auto-download", "on"], in: folder.path, environment: environment).status == 0)
        _ = InfoJSONTests.serve(server, count: 3, title: { "Episode \($0)" })
        let sync = await runMonsoon(["sync", "-o", "D", "--write-info-json", "--exec", "\(script) {}"], in: folder.path, environment: environment)
        #expect(sync.status == 0, "\(sync.errors)")
        let after = HookTests.runs(folder)
        #expect(after.count == 3 && after.contains { $0["TITLE"] == "Episode 3" })
        let third = try #require(after.first { $0["TITLE"] == "Episode 3" }?["FILE"])
        #expect(FileManager.default.fileExists(atPath: third + ".info.json"))

        // Deleting an episode deletes its sidecar with it.
        let id = try #require(after.first { $0["TITLE"] == "Episode 3" }?["EPISODE_ID"])
        #expect(await runMonsoon(["delete", id], in: folder.path, environment: environment).status == 0)
        #expect(!FileManager.default.fileExists(atPath: third) && !FileManager.default.fileExists(atPath: third + ".info.json"))
    }

    /// Its owner, not its id's first letter, says whose a download is: a plain download named
    /// `e7` is no episode's (no episode's fields, and no missing sidecar written for it later as
    /// for an episode), and artwork named `d9` gets no hook nor sidecar.
    @Test func theOwnerNotTheIDsLetterSaysWhichDownloadsGetHooksAndSidecars() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let body = Body.pattern(size: 3_000, seed: 7)
        server.setRoute("/plain.bin", Route(body: body))
        server.setRoute("/cover.jpg", Route(body: .pattern(size: 500, seed: 8)))
        let environment = HookTests.environment(folder)
        let script = try HookTests.recorder(in: folder)
        #expect(await runMonsoon(["downloads"], in: folder.path, environment: environment).status == 0)
        let store = try DownloadStore(database: try Database(path: folder.file(".monsoon/monsoon.sqlite")))
        _ = try store.add([
            DownloadRequest(id: "e7", url: server.url("/plain.bin"), destination: .file(folder.file("out/plain.bin"))),
            DownloadRequest(id: "d9", url: server.url("/cover.jpg"), destination: .file(folder.file("out/cover.jpg")), owner: .artwork),
        ])
        let run = await runMonsoon(["download", "--write-info-json", "--exec", "\(script) {}"], in: folder.path, environment: environment)
        #expect(run.status == 0, "\(run.errors)")
        #expect(fileSize(folder.file("out/cover.jpg")) == 500 && fileSize(folder.file("out/plain.bin")) == 3_000)
        let runs = HookTests.runs(folder)
        #expect(runs.count == 1 && runs.first?["ID"] == "e7" && runs.first?["SHA256"] == body.sha256Hex(), "\(runs)")
        #expect(runs.first?["EPISODE_ID"] == nil && runs.first?["TITLE"] == nil && runs.first?["PODCAST"] == nil)
        #expect(!FileManager.default.fileExists(atPath: folder.file("out/cover.jpg.info.json")))
        let sidecar = folder.file("out/plain.bin.info.json")
        #expect((try InfoJSONTests.json(sidecar))["episode"] == nil)
        // Its sidecar gone, the next run does not write it again: that catch-up is for episodes.
        try FileManager.default.removeItem(atPath: sidecar)
        let again = await runMonsoon(["download", "--write-info-json"], in: folder.path, environment: environment)
        #expect(again.status == 0, "\(again.errors)")
        #expect(!FileManager.default.fileExists(atPath: sidecar))
    }

    @Test func aGetHandedToAnotherMonsoonStillRunsItsHook() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        // Held part-way until the second get is done: it finds the first one running.
        let gate = Gate()
        defer { gate.open() }
        server.setRoute("/slow.mp3", Route(body: .pattern(size: 600_000, seed: 1), gate: gate, gateAfter: 100_000))
        let body = Body.pattern(size: 2_000, seed: 2)
        server.setRoute("/mine.bin", Route(body: body))
        let running = try MonsoonProcess(["get", "-o", "one", server.url("/slow.mp3").absoluteString], in: folder.path)
        defer { running.process.terminate() }
        try await waitUntil("the first get downloading") { fileSize(folder.file("one/slow.mp3.part")) > 0 }
        let script = try HookTests.recorder(in: folder)
        let handed = await runMonsoon(["get", "-o", "two", "--write-info-json", "--exec", "\(script) {}", server.url("/mine.bin").absoluteString],
                                      in: folder.path, environment: HookTests.environment(folder))
        #expect(handed.status == 0, "\(handed.errors)")
        #expect(HookTests.runs(folder).first?["FILE"] == folder.file("two/mine.bin") && HookTests.runs(folder).count == 1)
        #expect((try InfoJSONTests.json(folder.file("two/mine.bin.info.json"))["download"] as? [String: Any])?["sha256"] as? String == body.sha256Hex())
        gate.open()
        #expect(try await running.finish().status == 0)
    }

    @Test func aNewVersionOfAnEpisodeGetsItsOwnSidecarAndHook() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        _ = EpisodeVersionCommandTests.serve(server)
        let feed = server.url("/feed.xml").absoluteString
        let environment = HookTests.environment(folder)
        let script = try HookTests.recorder(in: folder)
        let options = ["-o", "A", "--write-info-json", "--exec", "\(script) {}"]
        #expect(await runMonsoon(["archive", feed] + options, in: folder.path, environment: environment).status == 0)
        let (second, _) = EpisodeVersionCommandTests.serve(server, episode1: ("/ep1-v2.mp3", 25_000, 11))
        let run = await runMonsoon(["archive", feed] + options, in: folder.path, environment: environment)
        #expect(run.status == 0, "\(run.errors)")
        // Three files (two versions of g1, and g2): three sidecars and three hook runs, each on its own file.
        let runs = HookTests.runs(folder)
        let media = folder.contents("A/Versions Show").filter { $0.hasSuffix(".mp3") }
        #expect(media.count == 3 && Set(runs.compactMap { $0["FILE"] }) == Set(media.map { folder.file("A/Versions Show/" + $0) }), "\(media) \(runs)")
        let newest = try #require(runs.first { $0["SHA256"] == second.sha256Hex() })
        #expect(newest["URL"] == server.url("/ep1-v2.mp3").absoluteString)
        for name in media { #expect(FileManager.default.fileExists(atPath: folder.file("A/Versions Show/\(name).info.json")), "\(name)") }
        let verify = await runMonsoon(["verify", "A"], in: folder.path)
        #expect(verify.status == 0, "every sidecar is listed: \(verify.output)\(verify.errors)")
    }

    @Test func ctrlCStopsRunningHooksAndTheyRunAgainNextTime() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/a.bin", Route(body: .bytes([1, 2, 3])))
        let script = folder.file("slow.sh")
        try writeScript("#!/bin/sh\ntouch \"$RUNS.started\"\nsleep 30\n", to: script)
        let interruption = Interruption()
        let url = server.url("/a.bin").absoluteString
        let environment = HookTests.environment(folder)
        async let run = runMonsoon(["get", "-o", "out", "--exec", script, url], in: folder.path, interruption: interruption, environment: environment)
        try await waitUntil("the hook started") { FileManager.default.fileExists(atPath: folder.file("runs.started")) }
        interruption.trigger()
        let result = await run
        #expect(result.status == 130, "\(result.errors)")
        // Stopped, not waited out: one that ended by itself would have exited 0.
        #expect(result.errors.contains("the hook failed: killed by signal 15 (SIGTERM)"), "\(result.errors)")
        // The next run runs it again (here, one that ends at once).
        let recorder = try HookTests.recorder(in: folder)
        let again = await runMonsoon(["get", "-o", "out", "--exec", "\(recorder) {}", url], in: folder.path, environment: environment)
        #expect(again.status == 0, "\(again.errors)")
        #expect(HookTests.runs(folder).count == 1)
    }
}
