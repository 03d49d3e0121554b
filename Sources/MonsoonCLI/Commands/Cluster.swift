import FoundationEssentials
import MonsoonBasics
import MonsoonCluster

struct Cluster: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cluster",
        abstract: "Set up and run the PostgreSQL download queue that several machines share.",
        discussion: """
            The database is named by --db or MONSOON_DB, as libpq takes it: a postgresql:// URL or \
            key=value pairs; the password may also come from PGPASSWORD or ~/.pgpass.

            Examples:

              monsoon cluster init --db postgresql://monsoon@db.example.com/monsoon
              monsoon cluster status
              monsoon cluster retry --all
              monsoon cluster host cdn.example.com --max-connections 4
            """,
        subcommands: [ClusterInit.self, ClusterStatusCommand.self, ClusterPause.self, ClusterResume.self, ClusterRetry.self, ClusterHost.self])
    @OptionGroup var global: GlobalOptions
    init() {}
}

/// The PostgreSQL database of a cluster command.
struct ClusterDatabase: ParsableArguments {
    @Option("--db", help: "The PostgreSQL database: a postgresql:// URL or libpq's key=value pairs (default: $MONSOON_DB).", valueName: "url")
    var url: String?
    init() {}

    /// The connection string: --db, else MONSOON_DB; neither is a usage error.
    func connectionString(_ context: CommandContext) throws -> String {
        if let url, !url.isEmpty { return url }
        if let url = context.environment["MONSOON_DB"], !url.isEmpty { return url }
        throw CLIError.usage("no database to use; name it with --db URL or in MONSOON_DB")
    }

    /// Connects and runs `body` on a thread of its own: libpq waits for the server (up to its
    /// connect timeout, 10 s), which must not hold one of Swift's few cooperative threads.
    func withConnection<T: Sendable>(_ context: CommandContext, _ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        let text = try connectionString(context)
        let result: Result<T, Error> = await withCheckedContinuation { continuation in
            NamedThread.detach(named: "monsoon.connect") { continuation.resume(returning: Result { try body(try PostgresConnection(text)) }) }
        }
        do {
            return try result.get()
        } catch let error as PostgresError {
            // A string libpq cannot read is a bad value of --db; the rest failed at the server.
            throw error.code == .invalidConnectionString ? CLIError.usage(error.message) : CLIError(message: error.message)
        }
    }
}

struct ClusterInit: RunnableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create the cluster's tables in the database, or bring them up to this Monsoon's version.",
        discussion: """
            Safe to run again, and from several machines at once: each step runs once, in a \
            transaction of its own. A database set up by a newer Monsoon is left as it is.

            Examples:

              monsoon cluster init --db postgresql://monsoon@db.example.com/monsoon
              MONSOON_DB='host=db.example.com dbname=monsoon' monsoon cluster init
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var database: ClusterDatabase
    init() {}

    func run(_ context: CommandContext) async throws -> Int32 {
        let (name, outcome) = try await database.withConnection(context) { connection in
            (connection.displayName, try ClusterSchema.migrate(connection))
        }
        let change = switch outcome.previousVersion {
        case outcome.version: "already current"
        case 0: "created"
        default: "migrated from \(outcome.previousVersion) to \(outcome.version)"
        }
        if !global.quiet { context.output.line("Schema of \(name) is at version \(outcome.version) (\(change))") }
        return ExitStatus.success
    }
}
