import Foundation
import MonsoonEngine
import MonsoonStore
import MonsoonTestServer
import Testing

/// The persistent queue across processes: kill -9, control from a second process,
/// one downloading process per home, and databases that cannot be used.
@Suite struct QueueProcessTests {
    /// Killed (SIGKILL, or Ctrl-C every third time) ten times in a row, each time at another
    /// point of each transfer: each answer of a round sends a seeded share of what is left of its
    /// file, from nothing to all of it, and holds the rest; the process is killed once every part
    /// holds its share. Every resume asks for exactly the rest of its part.
    @Test func tenKillsInARowLoseNothing() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let count = 4
        let size = 3 << 20
        let bodies = (0..<count).map { Body.pattern(size: size, seed: UInt64(100 + $0)) }
        let urls = (0..<count).map { server.url("/ep\($0).mp3").absoluteString }
        let part = { (index: Int) in folder.file("out/ep\(index).mp3.part") }
        let done = { (index: Int) in FileManager.default.fileExists(atPath: folder.file("out/ep\(index).mp3")) }
        var generator = SeededGenerator()
        for round in 0..<10 {
            // Part sizes before the restart: each resume must ask for exactly the rest.
            let before = (0..<count).map { fileSize(part($0)) }
            let requestsBefore = server.requests.count
            let gate = Gate()
            defer { gate.open() }
            var shares: [Int] = []
            for (index, body) in bodies.enumerated() {
                let left = size - before[index]
                // Mostly a slice (none at all, a killed request, included), now and then the whole rest.
                let share = Int.random(in: 0..<5, using: &generator) == 0 ? left : Int.random(in: 0...min(left, size / 6), using: &generator)
                shares.append(share)
                server.setRoute("/ep\(index).mp3", Route(body: body, contentType: "audio/mpeg", etag: "\"e\(index)\"", gate: gate, gateAfter: share))
            }
            let process = try MonsoonProcess(["get", "-o", "out", "-j", "4"] + urls, in: folder.path)
            try await waitUntil("round \(round), seed \(generator.seed): every transfer at its share \(shares) from \(before)") {
                let asked = server.requests.dropFirst(requestsBefore)
                return !process.process.isRunning || (0..<count).allSatisfy { index in
                    done(index) || (asked.contains { $0.path == "/ep\(index).mp3" } && fileSize(part(index)) >= before[index] + shares[index])
                }
            }
            if round % 3 == 2 { process.interrupt() } else { kill(process.process.processIdentifier, SIGKILL) }
            _ = try await process.finish()
            for (index, partBefore) in before.enumerated() where partBefore > 0 {
                let resumed = server.requests.dropFirst(requestsBefore).first { $0.path == "/ep\(index).mp3" }
                if let resumed {
                    #expect(resumed.header("Range") == "bytes=\(partBefore)-", "round \(round), ep\(index): resumed from its part (seed \(generator.seed))")
                    #expect(resumed.header("If-Range") == "\"e\(index)\"")
                }
            }
        }
        for index in 0..<count { server.setRoute("/ep\(index).mp3", Route(body: bodies[index], contentType: "audio/mpeg", etag: "\"e\(index)\"")) }
        let last = try await MonsoonProcess(["get", "-o", "out"] + urls, in: folder.path).finish()
        #expect(last.status == 0, "seed \(generator.seed): \(last.errors)")
        for (index, body) in bodies.enumerated() {
            #expect(try SHA256.hex(fileAt: folder.file("out/ep\(index).mp3")) == body.sha256Hex())
        }
        #expect(folder.contents("out") == (0..<count).map { "ep\($0).mp3" })
        let payload = count * size
        #expect(server.bodyBytesSent <= payload * 12 / 10, "sent \(server.bodyBytesSent) for \(payload)")
        let database = try Database(path: folder.file(".monsoon/monsoon.sqlite"))
        #expect(try database.integrityCheck() == "ok")
        #expect(try database.scalarInt("SELECT count(*) FROM downloads WHERE status = 'completed'") == count)
    }

    @Test func aSecondProcessSteersTheRunningOne() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let big = Body.pattern(size: 2 << 20, seed: 1)
        // Both held in flight, part-way, for as long as the test steers them.
        let gate = Gate()
        defer { gate.open() }
        server.setRoute("/big.mp3", Route(body: big, etag: "\"b\"", gate: gate, gateAfter: 100_000))
        server.setRoute("/gone.mp3", Route(body: .pattern(size: 1 << 20, seed: 2), etag: "\"g\"", gate: gate, gateAfter: 50_000))
        server.setRoute("/later.mp3", Route(body: .bytes(Array("later".utf8))))
        let running = try MonsoonProcess(["get", "-o", "out", server.url("/big.mp3").absoluteString, server.url("/gone.mp3").absoluteString], in: folder.path)
        defer { running.process.terminate() }
        try await waitUntil("the part of big.mp3") { fileSize(folder.file("out/big.mp3.part")) == 100_000 }

        let listing = await runMonsoon(["downloads", "--json"], in: folder.path)
        #expect(listing.status == 0)
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(listing.output.utf8)) as? [[String: Any]])
        #expect(rows.map { $0["id"] as? String } == ["d1", "d2"])
        #expect(Set(rows[0].keys) == ["id", "url", "destination", "file", "status", "bytes", "total", "progress", "error"])

        let paused = await runMonsoon(["pause", "d1"], in: folder.path)
        #expect(paused.status == 0, "\(paused.errors)")
        #expect(paused.output.contains("by the running monsoon"))
        try await waitUntil("d1 paused in the listing") { Self.status(of: "d1", in: folder) == "paused" }
        let size = fileSize(folder.file("out/big.mp3.part"))

        // A second downloading process: `download` refuses, `get` hands its URL over.
        let second = await runMonsoon(["download"], in: folder.path)
        #expect(second.status == 1)
        #expect(second.errors.contains("already downloading"))
        let handed = await runMonsoon(["get", "--no-wait", "-o", "out", server.url("/later.mp3").absoluteString], in: folder.path)
        #expect(handed.status == 0)
        #expect(handed.errors.contains("handed it 1 download (d3)"))

        #expect(await runMonsoon(["priority", "d1", "3"], in: folder.path).status == 0)
        server.setRoute("/big.mp3", Route(body: big, etag: "\"b\""))
        #expect(await runMonsoon(["resume", "d1"], in: folder.path).status == 0)

        let removed = await runMonsoon(["remove", "d2"], in: folder.path)
        #expect(removed.status == 0)
        try await waitUntil("gone.mp3's part deleted") { !FileManager.default.fileExists(atPath: folder.file("out/gone.mp3.part")) }

        let done = try await running.finish()
        #expect(done.status == 1, "d2 was removed: \(done.errors)")
        #expect(done.errors.contains("monsoon: d2 removed\n"))
        #expect(done.errors.contains("monsoon: 1 of 2 downloaded, 1 removed"), "later.mp3 was handed over, not this get's: \(done.errors)")
        #expect(!done.output.contains("later.mp3"))
        #expect(try SHA256.hex(fileAt: folder.file("out/big.mp3")) == big.sha256Hex())
        #expect(server.requests(for: "/big.mp3").last?.header("Range") == "bytes=\(size)-")
        #expect(folder.contents("out") == ["big.mp3", "later.mp3"])
        let unknown = await runMonsoon(["pause", "d99"], in: folder.path)
        #expect(unknown.status == 1)
        #expect(unknown.errors.contains("no download has id d99"))
    }

    /// Ten processes at once change the queue of a running `get`: every command succeeds (none
    /// meets "database is locked"), and every change lands.
    @Test func tenProcessesAtOnceLoseNoUpdate() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        // Each held part-way (d3 once d1 and d2 make room): the run goes on while the ten change its queue.
        let gate = Gate()
        defer { gate.open() }
        let bigs = [2 << 20, 2 << 20, 600_000].enumerated().map { Body.pattern(size: $1, seed: UInt64(300 + $0)) }
        for (index, body) in bigs.enumerated() {
            server.setRoute("/big\(index + 1).mp3", Route(body: body, contentType: "audio/mpeg", etag: "\"b\(index)\"", gate: gate, gateAfter: 100_000))
        }
        let smalls = (1...6).map { Body.pattern(size: 20_000, seed: UInt64(400 + $0)) }
        for (index, body) in smalls.enumerated() { server.setRoute("/small\(index + 1).mp3", Route(body: body, contentType: "audio/mpeg")) }
        let running = try MonsoonProcess(["get", "-o", "out", "-j", "2"] + (1...3).map { server.url("/big\($0).mp3").absoluteString }, in: folder.path)
        defer { running.process.terminate() }
        try await waitUntil("the first parts") { fileSize(folder.file("out/big1.mp3.part")) == 100_000 }

        let commands: [[String]] = (1...6).map { ["get", "--no-wait", "-o", "out", server.url("/small\($0).mp3").absoluteString] }
            + [["pause", "d1"], ["remove", "d2"], ["downloads", "--json"], ["priority", "d3", "9"]]
        let processes = try commands.map { try MonsoonProcess($0, in: folder.path) }
        for (command, process) in zip(commands, processes) {
            let result = try await process.finish()
            #expect(result.status == 0, "\(command): \(result.errors)")
            #expect(!result.errors.lowercased().contains("locked"), "\(command): \(result.errors)")
        }
        try await waitUntil("the six handed-over files") { (1...6).allSatisfy { FileManager.default.fileExists(atPath: folder.file("out/small\($0).mp3")) } }
        for (index, body) in smalls.enumerated() {
            #expect(try SHA256.hex(fileAt: folder.file("out/small\(index + 1).mp3")) == body.sha256Hex())
        }
        try await waitUntil("d1 paused") { Self.status(of: "d1", in: folder) == "paused" }
        let database = try Database(path: folder.file(".monsoon/monsoon.sqlite"))
        #expect(try database.scalarInt("SELECT count(*) FROM downloads WHERE id = 'd2'") == 0, "d2 removed")
        #expect(try database.scalarInt("SELECT priority FROM downloads WHERE id = 'd3'") == 9)
        #expect(try database.scalarInt("SELECT count(*) FROM downloads") == 8, "d1, d3 and the six handed over")

        for (index, body) in bigs.enumerated() { server.setRoute("/big\(index + 1).mp3", Route(body: body, contentType: "audio/mpeg", etag: "\"b\(index)\"")) }
        // Resumed while d3 is still held: the run is still there to take it.
        #expect(await runMonsoon(["resume", "d1"], in: folder.path).status == 0)
        gate.open()
        let done = try await running.finish()
        #expect(done.status == 1, "d2 was removed: \(done.errors)")
        #expect(try SHA256.hex(fileAt: folder.file("out/big1.mp3")) == bigs[0].sha256Hex())
        #expect(try SHA256.hex(fileAt: folder.file("out/big3.mp3")) == bigs[2].sha256Hex())
        #expect(try database.integrityCheck() == "ok")
    }

    @Test func controlWithoutARunningProcessChangesTheQueue() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/a", Route.html(status: 500, "<html>down</html>"))
        let failed = await runMonsoon(["get", "--retries", "0", server.url("/a").absoluteString], in: folder.path)
        #expect(failed.status == 1)
        #expect(Self.status(of: "d1", in: folder) == "failed")
        server.setRoute("/a", Route(body: .bytes([1, 2])))
        #expect(await runMonsoon(["pause", "--all"], in: folder.path).status == 0)
        let retried = await runMonsoon(["retry", "d1"], in: folder.path)
        #expect(retried.status == 0)
        #expect(retried.output.contains("now queued"))
        let ran = await runMonsoon(["download"], in: folder.path)
        #expect(ran.status == 0, "\(ran.errors)")
        #expect(Self.status(of: "d1", in: folder) == "completed")
        let text = await runMonsoon(["downloads"], in: folder.path)
        #expect(text.output.contains("d1"))
        #expect(text.output.contains("completed"))
        #expect(await runMonsoon(["remove", "d1", "--delete-file"], in: folder.path).status == 0)
        #expect(folder.contents() == [])
        let empty = await runMonsoon(["downloads", "--json"], in: folder.path)
        #expect((try JSONSerialization.jsonObject(with: Data(empty.output.utf8)) as? [Any])?.isEmpty == true)
    }

    @Test func unusableDatabasesGetOneLineAndStayUntouched() async throws {
        let folder = Folder()
        defer { folder.remove() }
        // Damaged.
        let home = folder.file("home")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let garbage = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try garbage.write(to: URL(fileURLWithPath: folder.file("home/monsoon.sqlite")))
        let corrupt = await runMonsoon(["--home", home, "downloads"], in: folder.path)
        #expect(corrupt.status == 1)
        #expect(corrupt.errors.split(separator: "\n").count == 1)
        #expect(corrupt.errors.contains("damaged or not a Monsoon database"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.file("home/monsoon.sqlite"))) == garbage)
        // From a newer Monsoon.
        let newer = folder.file("newer")
        try FileManager.default.createDirectory(atPath: newer, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        do {
            let database = try Database(path: (newer as NSString).appendingPathComponent("monsoon.sqlite"))
            try database.execute("CREATE TABLE schema_versions (component TEXT PRIMARY KEY, version INTEGER NOT NULL); INSERT INTO schema_versions VALUES ('downloads', 999)")
        }
        let future = await runMonsoon(["downloads"], in: folder.path, environment: ["MONSOON_HOME": newer])
        #expect(future.status == 1)
        #expect(future.errors.contains("schema version 999"))
        #expect(future.errors.split(separator: "\n").count == 1)
        // A home that cannot be made.
        let unwritable = await runMonsoon(["get", "--home", "/proc/monsoon/home", "http://127.0.0.1:9/x"], in: folder.path)
        #expect(unwritable.status == 1)
        #expect(unwritable.errors.contains("cannot create the Monsoon home /proc/monsoon/home"))
    }

    static func status(of id: String, in folder: Folder) -> String? {
        guard let store = try? DownloadStore(path: folder.file(".monsoon/monsoon.sqlite")) else { return nil }
        return (try? store.download(withID: DownloadID(id)))??.status.rawValue
    }
}
