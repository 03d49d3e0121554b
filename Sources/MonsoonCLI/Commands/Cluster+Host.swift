import FoundationEssentials
import MonsoonCluster
import MonsoonPodcasts

struct ClusterHost: RunnableCommand {
    static let configuration = CommandConfiguration(
        commandName: "host",
        abstract: "Show a host's politeness across the cluster, or set it.",
        discussion: """
            Every worker together opens at most --max-connections connections to the host (2 \
            unless set), and starts a request there at most once per --min-interval (none \
            unless set). A lower limit stops no running download: new ones wait until fewer \
            run. Without an option, the host's settings are shown.

            Examples:

              monsoon cluster host cdn.example.com
              monsoon cluster host cdn.example.com --max-connections 8
              monsoon cluster host feeds.example.com --max-connections 1 --min-interval 2s
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var database: ClusterDatabase
    @Option("--max-connections", help: "The most downloads at once from the host, across every worker.", valueName: "n")
    var maxConnections: Int?
    @Option("--min-interval", help: "The least time between two requests to the host, from any worker, counted from when the one before was answered: 500ms, 2s, 1min (a bare number is milliseconds; 0 for none).", valueName: "time")
    var minInterval: HostInterval?
    @Argument(help: "The host's name, as in its URLs (cdn.example.com, or with its port: 127.0.0.1:8080).", valueName: "host")
    var host: String
    init() {}

    mutating func validate() throws {
        if let maxConnections, !(1...1000).contains(maxConnections) { throw ValidationError("--max-connections must be from 1 to 1000") }
        if host.contains("://") {
            let name = URL(string: host)?.host.map { "; did you mean '\($0)'?" } ?? ""
            throw ValidationError("give a host's name, not a URL\(name)")
        }
        if host.isEmpty || host.contains(where: { $0 == "/" || $0.isWhitespace }) { throw ValidationError("'\(host)' is not a host name") }
    }

    func run(_ context: CommandContext) async throws -> Int32 {
        // Hosts are stored as URLs give them, lowercased.
        let host = host.lowercased()
        let changes = maxConnections != nil || minInterval != nil
        let settings = try await database.withConnection(context) { [maxConnections, minInterval] connection in
            let admin = ClusterAdmin(connection: connection)
            if changes { try admin.setLimits(host: host, maxConnections: maxConnections, minIntervalMilliseconds: minInterval?.milliseconds) }
            return try admin.hostSettings(host)
        }
        if !changes || !global.quiet { context.output.line(Self.describe(settings)) }
        return ExitStatus.success
    }

    /// "cdn.example.com: at most 2 connections at once, no interval between requests (the defaults); 0 running, 0 ready".
    static func describe(_ settings: HostSettings) -> String {
        let connections = "at most \(settings.maxConnections) connection\(settings.maxConnections == 1 ? "" : "s") at once"
        let interval = settings.minIntervalMilliseconds == 0 ? "no interval between requests"
            : "\(HostInterval.format(settings.minIntervalMilliseconds)) between requests"
        var line = "\(settings.host): \(connections), \(interval)\(settings.isDefault ? " (the defaults)" : ""); "
            + "\(settings.running) running, \(settings.ready) ready"
        if let held = settings.heldUntil { line += "; held until \(UTCDate.iso(held))" }
        return line
    }
}

/// The least time between request starts on a host, in milliseconds: `500`, `500ms`, `2s`,
/// `1.5s`, `1min`; at most a day.
struct HostInterval: ExpressibleByArgument, Equatable {
    var milliseconds: Int

    init?(argument: String) {
        let text = argument.trimmingBlanks().lowercased()
        let units: [(suffix: String, scale: Double)] = [("ms", 1), ("min", 60_000), ("s", 1000), ("", 1)]
        guard let unit = units.first(where: { text.hasSuffix($0.suffix) }),
              let value = Double(text.dropLast(unit.suffix.count).trimmingBlanks()), value >= 0, value.isFinite,
              value * unit.scale <= 86_400_000 else { return nil }
        milliseconds = Int((value * unit.scale).rounded())
    }

    static var invalidValueReason: String { "not a time up to a day (examples: 500, 500ms, 2s, 1min; a bare number is milliseconds)" }

    /// "250 ms", "2 s", "1.5 s", "2 min".
    static func format(_ milliseconds: Int) -> String {
        if milliseconds < 1000 { return "\(milliseconds) ms" }
        if milliseconds < 60_000 || milliseconds % 60_000 != 0 { return "\(JSONText.number(Double(milliseconds) / 1000)) s" }
        return "\(milliseconds / 60_000) min"
    }
}
