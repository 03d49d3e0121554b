import Foundation
import MonsoonCLI
import MonsoonCluster
import MonsoonTestServer
import Testing

/// `monsoon cluster init`, run in-process against the suite's server.
@Suite(.temporaryPostgres) struct ClusterCommandTests {
    /// What a run printed and returned.
    struct Run {
        var status: Int32
        var output: String
        var errors: String
    }

    /// Runs `monsoon` in-process with `environment` (no MONSOON_DB unless given).
    static func monsoon(_ arguments: [String], environment: [String: String] = [:]) async -> Run {
        let output = TextOutput.capturing(terminal: false)
        let errors = TextOutput.capturing(terminal: false)
        let context = CommandContext(output: output, errors: errors, environment: environment, currentDirectory: "/", isTerminal: false)
        let status = await MonsoonCLI.run(arguments, context: context)
        return Run(status: status, output: output.text, errors: errors.text)
    }

    @Test func initCreatesTheSchemaThenFindsItCurrent() async throws {
        let server = try temporaryPostgres()
        let url = try await onThread { try server.createDatabase() }
        let first = await Self.monsoon(["cluster", "init", "--db", url])
        #expect(first.status == 0 && first.errors == "", "\(first.errors)")
        #expect(first.output == "Schema of \(url) is at version 6 (created)\n")
        let second = await Self.monsoon(["cluster", "init", "--db", url])
        #expect(second.status == 0 && second.output == "Schema of \(url) is at version 6 (already current)\n", "\(second)")
        let quiet = await Self.monsoon(["cluster", "init", "--db", url, "--quiet"])
        #expect(quiet.status == 0 && quiet.output == "" && quiet.errors == "")
    }

    @Test func theDatabaseMayComeFromMonsoonDB() async throws {
        let server = try temporaryPostgres()
        let database = try await onThread { try server.createDatabase() }.split(separator: "/").last.map(String.init) ?? ""
        let pairs = "host=127.0.0.1 port=\(server.port) user=monsoon dbname=\(database) password=unused"
        let run = await Self.monsoon(["cluster", "init"], environment: ["MONSOON_DB": pairs])
        #expect(run.status == 0 && run.errors == "", "\(run.errors)")
        // Pairs are shown as the URL of what libpq connected to, which PG* variables may have completed.
        #expect(run.output == "Schema of postgresql://monsoon@127.0.0.1:\(server.port)/\(database) is at version 6 (created)\n")
    }

    @Test func withoutADatabaseItIsAUsageError() async {
        let run = await Self.monsoon(["cluster", "init"], environment: ["MONSOON_DB": ""])
        #expect(run.status == 2 && run.output == "")
        #expect(run.errors.hasPrefix("monsoon: no database to use; name it with --db URL or in MONSOON_DB\n"), "\(run.errors)")
        #expect(run.errors.contains("Usage: monsoon cluster init"), "\(run.errors)")
    }

    @Test func anUnreachableServerFailsWithoutShowingThePassword() async throws {
        let port = try TemporaryPostgres.freePort()
        let run = await Self.monsoon(["cluster", "init", "--db", "postgresql://monsoon:hunter2@127.0.0.1:\(port)/monsoon"])
        #expect(run.status == 1 && run.output == "")
        #expect(run.errors == "monsoon: cannot connect to PostgreSQL at 127.0.0.1:\(port): connection refused; check that PostgreSQL is running there and listens on that address and port\n")
        let unreadable = await Self.monsoon(["cluster", "init", "--db", "postgresql://monsoon:hunter2@[::1/monsoon"])
        #expect(unreadable.status == 2 && !unreadable.errors.contains("hunter2"), "\(unreadable.errors)")
        // The URL libpq cannot read, the CLI's redaction cannot parse either: it masks the whole user part.
        #expect(unreadable.errors.hasPrefix("monsoon: cannot read the connection string postgresql://***@[::1/monsoon: "), "\(unreadable.errors)")
        #expect(unreadable.errors.contains("; write it as a postgresql:// URL (postgresql://HOST:PORT/DATABASE?user=USER) or as key=value pairs\n"), "\(unreadable.errors)")
    }

    /// A string that is not a PostgreSQL connection string, or carries a parameter libpq does not
    /// know or a value it refuses, is a usage error that says what is wrong, its password masked
    /// (a URL's user too, as the CLI shows every URL in a message): never a server that cannot be
    /// reached (no server listens on port 1 here, and none is asked).
    @Test(arguments: [
        ("http://monsoon:hunter2@127.0.0.1/monsoon", "http://***:***@127.0.0.1/monsoon: http:// is not PostgreSQL's scheme"),
        ("postgresql://monsoon:hunter2@127.0.0.1:1/monsoon?sslmode=bogus", "postgresql://***:***@127.0.0.1:1/monsoon?sslmode=bogus: invalid sslmode value: \"bogus\""),
        ("host=127.0.0.1 port=1 password=hunter2 sslmode=bogus", "host=127.0.0.1 port=1 password=*** sslmode=bogus: invalid sslmode value: \"bogus\""),
        ("postgresql://monsoon:hunter2@127.0.0.1:1/monsoon?colour=blue", "postgresql://***:***@127.0.0.1:1/monsoon?colour=blue: invalid URI query parameter: \"colour\""),
        ("host=127.0.0.1 colour=blue password=hunter2", "host=127.0.0.1 colour=blue password=***: invalid connection option \"colour\""),
        ("host=127.0.0.1 port=abc password=hunter2", "host=127.0.0.1 port=abc password=***: invalid integer value \"abc\" for connection option \"port\""),
    ])
    func aConnectionStringThatIsNotOneIsAUsageError(_ string: String, _ said: String) async {
        for arguments in [["cluster", "init", "--db", string], ["worker", "--db", string, "-o", "/nonexistent/out"]] {
            let run = await Self.monsoon(arguments)
            #expect(run.status == 2 && run.output == "", "\(arguments): \(run)")
            #expect(run.errors.hasPrefix("monsoon: cannot read the connection string \(said); write it as a postgresql:// URL"), "\(run.errors)")
            #expect(run.errors.contains("Usage: monsoon \(arguments[0] == "worker" ? "worker" : "cluster init")") && !run.errors.contains("hunter2"), "\(run.errors)")
        }
    }

    /// With --json, a worker prints a JSON object per line: each job completed, its progress,
    /// and the summary last as it stops; stopped (Ctrl-C here), it exits 130 as any command.
    @Test func aWorkerPrintsJSONLines() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (url, bodies) = try await ClusterWorkerTests.catalogue(server, episodes: 2, size: 1000)
        let folder = NSTemporaryDirectory() + "monsoon-json-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }   // a leftover folder in /tmp harms nothing
        let interruption = Interruption()
        let output = TextOutput.capturing(terminal: false), errors = TextOutput.capturing(terminal: false)
        let context = CommandContext(output: output, errors: errors, environment: [:], currentDirectory: "/", isTerminal: false, interruption: interruption)
        let run = Task { await MonsoonCLI.run(["worker", "--db", url, "-o", folder, "--json", "--name", "jw", "--lease", "4", "--poll", "0.2"], context: context) }
        defer { interruption.trigger() }   // a failing test leaves no worker running
        try await waitUntil("the worker tells its progress after both jobs") { output.text.contains("\"event\": \"progress\", ") && output.text.contains("\"completed\": 2, ") }
        interruption.trigger()
        let result = Run(status: await run.value, output: output.text, errors: errors.text)
        let lines = result.output.split(separator: "\n").map(String.init)
        let objects = try lines.map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any], "\($0)") }
        #expect(lines.allSatisfy { $0.hasPrefix("{\"event\": \"") && $0.contains("\"time\": \"") }, "\(result.output)")
        let completed = objects.filter { $0["event"] as? String == "completed" }
        #expect(Set(completed.compactMap { $0["path"] as? String }) == Set(bodies.keys), "\(result.output)")
        #expect(completed.compactMap { ($0["bytes"] as? NSNumber)?.intValue }.sorted() == [1000, 2000])
        #expect(objects.contains { $0["event"] as? String == "progress" && $0["running"] != nil && $0["bytesPerSecond"] != nil }, "\(result.output)")
        let stopped = try #require(objects.last)
        #expect(stopped["event"] as? String == "stopped" && stopped["worker"] as? String == "jw" && (stopped["completed"] as? NSNumber)?.intValue == 2,
                "\(result.output)")
        #expect(!objects.dropLast().contains { $0["event"] as? String == "stopped" })
    }

    /// Ctrl-C (SIGINT) ends a worker holding a job in flight with 130, once it has handed the
    /// job back: available again, its attempt given back, and no file published.
    @Test func ctrlCEndsAWorkerWith130AfterItHandsItsJobsBack() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (url, _) = try await ClusterWorkerTests.catalogue(server, episodes: 1, size: 1_000_000)
        let gate = Gate()
        defer { gate.open() }   // a failing test leaves no transfer held
        server.setRoute("/e/0.mp3", Route(body: Body.pattern(size: 1_000_000, seed: 1), contentType: "audio/mpeg", gate: gate, gateAfter: 100_000))
        let folder = NSTemporaryDirectory() + "monsoon-sigint-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }   // a leftover folder in /tmp harms nothing
        let worker = WorkerProcess(name: "sigint", arguments: ["worker", "--db", url, "-o", folder + "/out", "--name", "sigint", "--poll", "0.2"],
                                   log: folder + "/sigint.log")
        try worker.start()
        defer { worker.kill9() }
        try await waitUntil("the transfer is in flight") { server.bodyBytesSent >= 100_000 }
        worker.signal(SIGINT)
        let status = try await worker.wait()
        #expect(status == ExitStatus.interrupted, "\(worker.output)")
        #expect(worker.output.contains("Worker sigint: 0 downloaded (0 B), 0 feeds read, 0 failed, 0 lost to other workers, 1 handed back"), "\(worker.output)")
        let jobs = try await onThread {
            try PostgresConnection(url).execute("SELECT state, attempts, leased_by FROM monsoon_jobs").rows.map { "\(try $0.string(0) ?? "") \(try $0.int(1) ?? -1) \(try $0.string(2) ?? "none")" }
        }
        #expect(jobs == ["available 0 none"])
        #expect(ClusterWorkerTests.files(under: folder + "/out").isEmpty, "no file published")
    }

    @Test func aNewerSchemaIsRefused() async throws {
        let server = try temporaryPostgres()
        let url = try await onThread { try server.createDatabase() }
        #expect(await Self.monsoon(["cluster", "init", "--db", url]).status == 0)
        _ = try await onThread { try PostgresConnection(url).execute("INSERT INTO monsoon_schema (version) VALUES (7)") }
        let run = await Self.monsoon(["cluster", "init", "--db", url])
        #expect(run.status == 1 && run.output == "")
        #expect(run.errors.hasSuffix("has schema version 7, newer than this Monsoon (6); upgrade Monsoon (the database was left as it is)\n"), "\(run.errors)")
    }

    /// The password of `--db` is overwritten in the worker's own arguments once read: `ps`, and
    /// /proc/PID/cmdline, never show it while the worker runs (here, waiting for a database that
    /// does not answer).
    @Test func aWorkersPasswordIsNotInItsArguments() async throws {
        let refusing = try TestServer.refusingPort()
        defer { close(refusing.fd) }
        let folder = NSTemporaryDirectory() + "monsoon-argv-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }   // a leftover folder in /tmp harms nothing
        let worker = WorkerProcess(name: "argv", arguments: ["worker", "--db", "postgresql://monsoon:s3cret%20pw@127.0.0.1:\(refusing.port)/x",
                                                             "-o", folder + "/out", "--name", "argv"], log: folder + "/argv.log")
        try worker.start()
        defer { worker.kill9() }
        try await waitUntil("the worker says it waits for the database") { worker.output.contains("trying again in") }
        let raw = FileManager.default.contents(atPath: "/proc/\(worker.pid)/cmdline") ?? Data()
        let cmdline = String(decoding: raw.map { $0 == 0 ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
        #expect(cmdline.contains("postgresql://monsoon:***********@127.0.0.1:\(refusing.port)/x"), "\(cmdline)")
        #expect(!cmdline.contains("s3cret") && !worker.output.contains("s3cret"), "\(worker.output)")
        #expect(try await worker.stop() == ExitStatus.interrupted)
    }
}
