import Foundation
import MonsoonEngine
import MonsoonStore
import MonsoonTestServer
import Testing
@testable import MonsoonCLI

/// What scripts rely on from `monsoon get`: it answers for its own URLs, counts them
/// honestly and exits accordingly, also when another process runs the queue.
@Suite struct GetContractTests {
    @Test func getLeavesTheRestOfTheQueueAlone() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        for name in ["old.mp3", "left.mp3", "a.mp3", "b.mp3"] { server.setRoute("/\(name)", Route(body: .pattern(size: 40_000, seed: UInt64(name.count)))) }
        server.setRoute("/old.mp3", Route.html(status: 404, "<html>not yet</html>"))
        // An earlier run left a failed download, a retry posted for it that nobody took,
        // and a download queued into another folder.
        let failed = await runMonsoon(["get", "-o", "old", server.url("/old.mp3").absoluteString], in: folder.path)
        #expect(failed.status == 1)
        server.setRoute("/old.mp3", Route(body: .bytes([1])))
        let store = try DownloadStore(path: folder.file(".monsoon/monsoon.sqlite"))
        try store.post([.retry("d1")])
        _ = try store.add([DownloadRequest(id: "", url: server.url("/left.mp3"), destination: .directory(folder.file("left")))])
        let requestsBefore = server.requests.count

        let result = await runMonsoon(["get", "-o", "new", server.url("/a.mp3").absoluteString, server.url("/b.mp3").absoluteString], in: folder.path)
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.errors.isEmpty, "nothing about other downloads: \(result.errors)")
        #expect(result.output.split(separator: "\n").map { String($0) }.sorted() == ["\(folder.file("new/a.mp3"))\t40000", "\(folder.file("new/b.mp3"))\t40000"])
        #expect(Set(server.requests.dropFirst(requestsBefore).map(\.path)) == ["/a.mp3", "/b.mp3"], "nothing else was requested")
        #expect(QueueProcessTests.status(of: "d2", in: folder) == "queued", "the other folder's download waits for 'monsoon download'")

        // `monsoon download` runs what `get` left.
        let all = await runMonsoon(["download"], in: folder.path)
        #expect(all.status == 0, "\(all.errors)")
        #expect(folder.contents("left") == ["left.mp3"] && folder.contents("old") == ["old.mp3"])
    }

    @Test func theSummaryCountsTheURLsGiven() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        for name in ["1", "2", "3", "4"] { server.setRoute("/\(name).mp3", Route(body: .bytes(Array(name.utf8)))) }
        server.setRoute("/404.mp3", Route.html(status: 404, "<html>no</html>"))
        let urls = ["1", "2", "3"].map { server.url("/\($0).mp3").absoluteString }
        #expect(await runMonsoon(["get"] + urls, in: folder.path).status == 0)
        let result = await runMonsoon(["get"] + urls + [server.url("/4.mp3").absoluteString, server.url("/404.mp3").absoluteString], in: folder.path)
        #expect(result.status == 1)
        #expect(result.errors.contains("monsoon: 4 of 5 downloaded, 3 already there, 1 failed ("), "\(result.errors)")
        #expect(result.output.components(separatedBy: "\talready there\n").count == 4, "one line each for the three already there")
        #expect(server.requests(for: "/1.mp3").count == 1)

        server.setRoute("/big.mp3", Route(body: .bytes([1])))
        let full = await runMonsoon(["get", "--min-free", "1000000T", server.url("/big.mp3").absoluteString], in: folder.path)
        #expect(full.status == 3)
        #expect(full.errors.hasSuffix("\nmonsoon: 0 of 1 downloaded, 1 left queued for lack of disk space\n"), "no byte moved, none counted: \(full.errors)")
        #expect(!full.errors.contains("0 B"), "\(full.errors)")
    }

    @Test func notAURLIsAUsageError() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let alone = await runMonsoon(["get", "notaurl"], in: folder.path)
        #expect(alone.status == 2)
        #expect(alone.errors.hasPrefix("monsoon: 'notaurl' is not an http or https URL; give full addresses like https://example.com/episode.mp3\nUsage: monsoon get "),
                "\(alone.errors)")
        server.setRoute("/good", Route(body: .bytes([7])))
        let mixed = await runMonsoon(["get", "-i", "-"], in: folder.path, stdin: "notaurl\n\(server.url("/good"))\nfile:///etc/passwd\n")
        #expect(mixed.status == 2)
        #expect(folder.contents() == ["good"], "the good line is downloaded")
        #expect(mixed.errors.contains("skipped 'notaurl'") && mixed.errors.contains("skipped 'file:///etc/passwd'"))
        #expect(mixed.errors.contains("monsoon: 1 of 3 downloaded, 2 not URLs"))
    }

    @Test func skipExistingCountsAFileOfTheSameNameAsDone() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let episode = Body.pattern(size: 30_000, seed: 9)
        server.setRoute("/show/a.mp3", Route(body: episode))
        try Data("mine".utf8).write(to: URL(fileURLWithPath: folder.file("a.mp3")))
        let skipped = await runMonsoon(["get", "--skip-existing", server.url("/show/a.mp3").absoluteString], in: folder.path)
        #expect(skipped.status == 0, "\(skipped.errors)")
        #expect(skipped.output == "\(folder.file("a.mp3"))\t4\talready there\n")
        #expect(server.requests.isEmpty, "no request for a file already there")

        // Without the flag, another file is never overwritten ...
        let second = await runMonsoon(["get", server.url("/show/a.mp3").absoluteString], in: folder.path)
        #expect(second.status == 0)
        #expect(folder.contents() == ["a (2).mp3", "a.mp3"])
        #expect(try String(contentsOfFile: folder.file("a.mp3"), encoding: .utf8) == "mine")
        // ... and once the user deleted both, a fetch again takes the plain name.
        try FileManager.default.removeItem(atPath: folder.file("a.mp3"))
        try FileManager.default.removeItem(atPath: folder.file("a (2).mp3"))
        let third = await runMonsoon(["get", server.url("/show/a.mp3").absoluteString], in: folder.path)
        #expect(third.status == 0, "\(third.errors)")
        #expect(folder.contents() == ["a.mp3"])
        #expect(try SHA256.hex(fileAt: folder.file("a.mp3")) == episode.sha256Hex())
    }

    @Test func retriesAreShownWithoutVerbose() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/flaky.mp3", Route(body: .bytes([1, 2]), faults: [.status(500, times: 1, retryAfter: "1")]))
        let result = await runMonsoon(["get", server.url("/flaky.mp3").absoluteString], in: folder.path)
        #expect(result.status == 0)
        // The seconds left when the line is printed: 1, or 0 on a machine busy enough to print it late.
        #expect(["1", "0"].contains { result.errors.contains("monsoon: d1 retrying in \($0) s: the server answered 500 Internal Server Error\n") },
                "\(result.errors)")
        let quiet = await runMonsoon(["get", "-q", "-o", "q", server.url("/flaky.mp3").absoluteString], in: folder.path)
        #expect(quiet.status == 0 && quiet.errors.isEmpty)
    }

    // MARK: - Two processes

    @Test func aSecondGetWaitsForItsOwnURLs() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        // Each held part-way: the first's own download ends while the handed one is still under way.
        let first = Body.pattern(size: 1_200_000, seed: 1)
        let second = Body.pattern(size: 600_000, seed: 2)
        let firstGate = Gate()
        let secondGate = Gate()
        defer { firstGate.open(); secondGate.open() }
        server.setRoute("/first.mp3", Route(body: first, etag: "\"f\"", gate: firstGate, gateAfter: 100_000))
        server.setRoute("/second.mp3", Route(body: second, etag: "\"s\"", gate: secondGate, gateAfter: 300_000))
        server.setRoute("/missing.mp3", Route.html(status: 404, "<html>no</html>"))
        let running = try MonsoonProcess(["get", "-o", "one", server.url("/first.mp3").absoluteString], in: folder.path)
        defer { running.process.terminate() }
        try await waitUntil("the first get downloading") { fileSize(folder.file("one/first.mp3.part")) > 0 }

        let waiting = try MonsoonProcess(["get", "-o", "two", server.url("/second.mp3").absoluteString, server.url("/missing.mp3").absoluteString], in: folder.path)
        try await waitUntil("the handed download under way") { fileSize(folder.file("two/second.mp3.part")) == 300_000 }
        firstGate.open()
        try await waitUntil("the first get's own file") { FileManager.default.fileExists(atPath: folder.file("one/first.mp3")) }
        #expect(running.process.isRunning, "the first goes on for the download handed to it")
        secondGate.open()
        let handed = try await waiting.finish()
        #expect(handed.status == 1, "its own 404: \(handed.errors)")
        #expect(handed.output == "\(folder.file("two/second.mp3"))\t600000\n")
        #expect(handed.errors.contains("failed: \(server.url("/missing.mp3").absoluteString): the server answered 404 Not Found"))
        // Without "(… transferred …)" when the follower first looked after the download had ended: it saw none move.
        #expect(handed.errors.contains("monsoon: 1 of 2 downloaded, 1 failed"))
        #expect(try SHA256.hex(fileAt: folder.file("two/second.mp3")) == second.sha256Hex())

        let done = try await running.finish()
        #expect(done.status == 0, "the first answers for its own URL only: \(done.errors)")
        #expect(done.output == "\(folder.file("one/first.mp3"))\t1200000\n")
        #expect(!done.errors.contains("missing") && !done.errors.contains("failed"), "\(done.errors)")
        // The first outlived its own download until the handed one was done: one request, no takeover.
        #expect(server.requests(for: "/second.mp3").count == 1)
    }

    @Test func aHandedOverRetryIsNotReportedFromItsOldEnd() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/flaky.mp3", Route.html(status: 404, "<html>not yet</html>"))
        #expect(await runMonsoon(["get", "-o", "out", server.url("/flaky.mp3").absoluteString], in: folder.path).status == 1)
        let body = Body.pattern(size: 50_000, seed: 8)
        server.setRoute("/flaky.mp3", Route(body: body, contentType: "audio/mpeg"))
        // Held part-way until the handed get is done.
        let gate = Gate()
        defer { gate.open() }
        server.setRoute("/slow.mp3", Route(body: .pattern(size: 400_000, seed: 9), gate: gate, gateAfter: 100_000))
        let runner = try MonsoonProcess(["get", "-o", "run", server.url("/slow.mp3").absoluteString], in: folder.path)
        defer { runner.process.terminate() }
        try await waitUntil("the runner downloading") { fileSize(folder.file("run/slow.mp3.part")) > 0 }
        // The failed download is retried by the runner: its old "failed" must not be the answer.
        let again = try await MonsoonProcess(["get", "-o", "out", server.url("/flaky.mp3").absoluteString], in: folder.path).finish()
        gate.open()
        #expect(again.status == 0, "\(again.errors)")
        #expect(again.output == "\(folder.file("out/flaky.mp3"))\t50000\n")
        #expect(try SHA256.hex(fileAt: folder.file("out/flaky.mp3")) == body.sha256Hex())
        #expect(try await runner.finish().status == 0)
    }

    @Test func ctrlCOnASecondGetOfTheSameURLLeavesTheFirstAlone() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        // Held part-way until the second get has started, handed over and been interrupted.
        let body = Body.pattern(size: 2_400_000, seed: 3)
        let gate = Gate()
        defer { gate.open() }
        server.setRoute("/same.mp3", Route(body: body, etag: "\"s\"", gate: gate, gateAfter: 200_000))
        let first = try MonsoonProcess(["get", "-o", "out", server.url("/same.mp3").absoluteString], in: folder.path)
        defer { first.process.terminate() }
        try await waitUntil("the first downloading") { fileSize(folder.file("out/same.mp3.part")) > 0 }
        // --verbose: it says when it has handed its URL over and follows the first's download.
        let second = try MonsoonProcess(["get", "--verbose", "-o", "out", server.url("/same.mp3").absoluteString], in: folder.path)
        try await waitUntil("the second get following the first's download") { second.errorsSoFar.contains("this command follows it") }
        second.interrupt()
        let stopped = try await second.finish()
        #expect(stopped.status == 130, "\(stopped.errors)")
        gate.open()
        let done = try await first.finish()
        #expect(done.status == 0, "its own download went on: \(done.errors)")
        #expect(try SHA256.hex(fileAt: folder.file("out/same.mp3")) == body.sha256Hex())
        #expect(server.requests(for: "/same.mp3").count == 1, "never stopped and resumed")
    }

    @Test func aWaitingGetTakesOverWhenTheRunnerIsKilled() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let body = Body.pattern(size: 1 << 20, seed: 4)
        // Both held part-way; the runner's own for ever (it is killed), the handed one until then.
        let runnerGate = Gate()
        let mineGate = Gate()
        defer { runnerGate.open(); mineGate.open() }
        server.setRoute("/runner.mp3", Route(body: .pattern(size: 1 << 20, seed: 5), etag: "\"r\"", gate: runnerGate, gateAfter: 100_000))
        server.setRoute("/mine.mp3", Route(body: body, etag: "\"m\"", gate: mineGate, gateAfter: 200_000))
        let runner = try MonsoonProcess(["get", "-o", "r", server.url("/runner.mp3").absoluteString], in: folder.path)
        try await waitUntil("the runner downloading") { fileSize(folder.file("r/runner.mp3.part")) > 0 }
        let waiting = try MonsoonProcess(["get", "-o", "m", server.url("/mine.mp3").absoluteString], in: folder.path)
        try await waitUntil("the handed download under way") { fileSize(folder.file("m/mine.mp3.part")) == 200_000 }
        kill(runner.process.processIdentifier, SIGKILL)
        _ = try await runner.finish()
        mineGate.open()
        let result = try await waiting.finish()
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output == "\(folder.file("m/mine.mp3"))\t\(1 << 20)\n")
        #expect(try SHA256.hex(fileAt: folder.file("m/mine.mp3")) == body.sha256Hex())
        let resumed = try #require(server.requests(for: "/mine.mp3").last)
        #expect(resumed.header("Range")?.hasPrefix("bytes=") == true && resumed.header("Range") != "bytes=0-", "the takeover resumed the part")
        #expect(server.requests(for: "/runner.mp3").count == 1, "the dead runner's own download is not the waiting get's")
    }

    @Test func pauseOrRemoveFromAnotherCommandEndsTheWait() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        // All three held part-way: none ends but by the commands.
        let gate = Gate()
        defer { gate.open() }
        server.setRoute("/a.mp3", Route(body: .pattern(size: 2 << 20, seed: 1), etag: "\"a\"", gate: gate, gateAfter: 100_000))
        server.setRoute("/b.mp3", Route(body: .pattern(size: 2 << 20, seed: 2), etag: "\"b\"", gate: gate, gateAfter: 100_000))
        server.setRoute("/c.mp3", Route(body: .pattern(size: 2 << 20, seed: 3), etag: "\"c\"", gate: gate, gateAfter: 100_000))
        let runner = try MonsoonProcess(["get", "-o", "out", server.url("/a.mp3").absoluteString, server.url("/b.mp3").absoluteString], in: folder.path)
        defer { runner.process.terminate() }
        try await waitUntil("both downloading") { fileSize(folder.file("out/a.mp3.part")) > 0 && fileSize(folder.file("out/b.mp3.part")) > 0 }
        let follower = try MonsoonProcess(["get", "-o", "out", server.url("/c.mp3").absoluteString], in: folder.path)
        defer { follower.process.terminate() }
        try await waitUntil("the handed download under way") { fileSize(folder.file("out/c.mp3.part")) > 0 }

        #expect(await runMonsoon(["pause", "d3"], in: folder.path).status == 0)
        let followed = try await follower.finish()
        #expect(followed.status == 1)
        #expect(followed.errors.contains("monsoon: d3 paused from another command\n"), "\(followed.errors)")
        // Its bytes are counted only when it saw them move: the runner transfers them.
        #expect(followed.errors.contains("monsoon: 0 of 1 downloaded, 1 paused"), "\(followed.errors)")

        #expect(await runMonsoon(["pause", "d1"], in: folder.path).status == 0)
        #expect(await runMonsoon(["remove", "d2"], in: folder.path).status == 0)
        let ran = try await runner.finish()
        #expect(ran.status == 1)
        #expect(ran.errors.contains("monsoon: d1 paused from another command\n"), "\(ran.errors)")
        #expect(ran.errors.contains("monsoon: d2 removed\n"))
        #expect(ran.errors.contains("monsoon: 0 of 2 downloaded, 1 paused, 1 removed ("))
        #expect(!ran.errors.contains("d3"), "the handed download is not the runner's to report")
        #expect(folder.contents("out") == ["a.mp3.part", "c.mp3.part"], "paused parts kept, the removed one deleted")
    }

    @Test func ctrlCOnAWaitingGetStopsItsDownloads() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        // Both held part-way; mine's rest is let go once it is released: only a transfer still
        // running would take it.
        let runGate = Gate()
        let mineGate = Gate()
        defer { runGate.open(); mineGate.open() }
        server.setRoute("/run.mp3", Route(body: .pattern(size: 2 << 20, seed: 1), etag: "\"r\"", gate: runGate, gateAfter: 100_000))
        server.setRoute("/mine.mp3", Route(body: .pattern(size: 2 << 20, seed: 2), etag: "\"m\"", gate: mineGate, gateAfter: 100_000))
        let runner = try MonsoonProcess(["get", "-o", "out", server.url("/run.mp3").absoluteString], in: folder.path)
        defer { runner.process.terminate() }
        try await waitUntil("the runner downloading") { fileSize(folder.file("out/run.mp3.part")) > 0 }
        let waiting = try MonsoonProcess(["get", "-o", "out", server.url("/mine.mp3").absoluteString], in: folder.path)
        try await waitUntil("the handed download under way") { fileSize(folder.file("out/mine.mp3.part")) == 100_000 }
        let connections = server.openConnections
        waiting.interrupt()
        let stopped = try await waiting.finish()
        #expect(stopped.status == 130)
        #expect(stopped.errors.contains("interrupted"))
        try await waitUntil("d2 stopped and queued again") { QueueProcessTests.status(of: "d2", in: folder) == "queued" }
        try await waitUntil("mine.mp3's connection closed by the runner") { server.openConnections < connections }
        let size = fileSize(folder.file("out/mine.mp3.part"))
        mineGate.open()
        runner.interrupt()
        #expect(try await runner.finish().status == 130)
        #expect(fileSize(folder.file("out/mine.mp3.part")) == size, "no more bytes once released")
        #expect(server.requests(for: "/mine.mp3").count == 1, "not asked for again")
    }

    // MARK: - The queue tells the truth

    @Test func aKilledRunShowsAsInterrupted() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        // Held part-way: it is killed while downloading.
        let gate = Gate()
        defer { gate.open() }
        server.setRoute("/slow.mp3", Route(body: .pattern(size: 2 << 20, seed: 1), etag: "\"s\"", gate: gate, gateAfter: 100_000))
        let process = try MonsoonProcess(["get", "-o", "out", server.url("/slow.mp3").absoluteString], in: folder.path)
        try await waitUntil("a row saying downloading") { QueueProcessTests.status(of: "d1", in: folder) == "downloading" }
        let live = await runMonsoon(["downloads", "--json"], in: folder.path)
        #expect(live.output.contains("\"status\": \"downloading\""), "\(live.output)")
        kill(process.process.processIdentifier, SIGKILL)
        _ = try await process.finish()
        let text = await runMonsoon(["downloads"], in: folder.path)
        #expect(text.output.contains("d1     interrupted"), "\(text.output)")
        let json = await runMonsoon(["downloads", "--json"], in: folder.path)
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]])
        #expect(rows.first?["status"] as? String == "interrupted")
        #expect((await runMonsoon(["downloads", "--status", "interrupted"], in: folder.path)).output.contains("d1"))
        #expect((await runMonsoon(["downloads", "--status", "downloading"], in: folder.path)).output == "No download is downloading.\n")
    }

    @Test func controlOfACompletedDownloadChangesNothing() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let empty = await runMonsoon(["pause", "--all"], in: folder.path)
        #expect(empty.status == 0)
        #expect(empty.output == "nothing to pause: no download is queued, running or waiting to retry\n")
        #expect((await runMonsoon(["resume", "--all"], in: folder.path)).output == "nothing to resume: no download is paused\n")
        server.setRoute("/done", Route(body: .bytes([1])))
        #expect(await runMonsoon(["get", server.url("/done").absoluteString], in: folder.path).status == 0)
        for verb in ["pause", "resume", "retry"] {
            let result = await runMonsoon([verb, "d1"], in: folder.path)
            #expect(result.status == 1)
            #expect(result.errors == "monsoon: d1 is already complete (\(folder.file("done"))); nothing to \(verb)\n")
        }
        #expect(QueueProcessTests.status(of: "d1", in: folder) == "completed")
        #expect(server.requests.count == 1)
        // With its file gone, retry fetches it again.
        try FileManager.default.removeItem(atPath: folder.file("done"))
        #expect(await runMonsoon(["retry", "d1"], in: folder.path).status == 0)
        #expect(QueueProcessTests.status(of: "d1", in: folder) == "queued")
    }

    @Test func downloadsFiltersAndClears() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/ok.mp3", Route(body: .bytes([1, 2, 3])))
        server.setRoute("/gone.mp3", Route.html(status: 410, "<html>gone</html>"))
        #expect(await runMonsoon(["get", server.url("/ok.mp3").absoluteString, server.url("/gone.mp3").absoluteString], in: folder.path).status == 1)

        let listing = await runMonsoon(["downloads"], in: folder.path)
        let lines = listing.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix("ID ") && lines[0].contains(" FILE ") && lines[0].hasSuffix(" URL"))
        #expect(lines[1].contains(" \(folder.file("ok.mp3")) ") && lines[1].hasSuffix(" \(server.url("/ok.mp3").absoluteString)"), "file and URL in their own columns")
        #expect(lines[2].hasSuffix("\(server.url("/gone.mp3").absoluteString)  error: the server answered 410 Gone"))
        #expect(!lines[2].contains("("), "no brackets around the error")

        let failed = await runMonsoon(["downloads", "--status", "failed"], in: folder.path)
        #expect(failed.output.split(separator: "\n").count == 2 && failed.output.contains("d2 ") && !failed.output.contains("d1 "))
        let badStatus = await runMonsoon(["downloads", "--status", "done"], in: folder.path)
        #expect(badStatus.status == 2)

        let cleared = await runMonsoon(["downloads", "clear"], in: folder.path)
        #expect(cleared.output == "forgot 1 completed download; their files are untouched\n")
        #expect(folder.contents() == ["ok.mp3"])
        let rest = await runMonsoon(["downloads", "--json"], in: folder.path)
        #expect(rest.output.contains("\"id\": \"d2\"") && !rest.output.contains("\"id\": \"d1\""))
        #expect(await runMonsoon(["downloads", "clear", "--failed"], in: folder.path).output.hasPrefix("forgot 1 completed or failed download"))
        #expect(await runMonsoon(["downloads"], in: folder.path).output.hasPrefix("the queue is empty;"))
        #expect(folder.contents() == ["ok.mp3"])
    }
}
