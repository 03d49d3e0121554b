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
        #expect(first.output == "Schema of \(url) is at version 5 (created)\n")
        let second = await Self.monsoon(["cluster", "init", "--db", url])
        #expect(second.status == 0 && second.output == "Schema of \(url) is at version 5 (already current)\n", "\(second)")
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
        #expect(run.output == "Schema of postgresql://monsoon@127.0.0.1:\(server.port)/\(database) is at version 5 (created)\n")
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

    @Test func aNewerSchemaIsRefused() async throws {
        let server = try temporaryPostgres()
        let url = try await onThread { try server.createDatabase() }
        #expect(await Self.monsoon(["cluster", "init", "--db", url]).status == 0)
        _ = try await onThread { try PostgresConnection(url).execute("INSERT INTO monsoon_schema (version) VALUES (7)") }
        let run = await Self.monsoon(["cluster", "init", "--db", url])
        #expect(run.status == 1 && run.output == "")
        #expect(run.errors.hasSuffix("has schema version 7, newer than this Monsoon (5); upgrade Monsoon (the database was left as it is)\n"), "\(run.errors)")
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
        #expect(try await worker.stop() == 0)
    }
}
