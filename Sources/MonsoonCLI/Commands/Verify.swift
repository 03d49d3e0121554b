import FoundationEssentials
import MonsoonCluster
import MonsoonPodcasts

struct Verify: RunnableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check an archive's files against their manifests: missing, changed and extra files, and each podcast folder's feed.xml.",
        discussion: """
            DIR is an archive root (every podcast folder in it is checked) or one podcast's folder; \
            default: the setting download-root. With --repair, missing and changed files are fetched again \
            (from the URL the library, else the manifest, records) and put in place only when their SHA-256 \
            is the one the manifest lists; a server that now serves other bytes is named, and the file left \
            as it is. A podcast folder without feed.xml is reported (nofeed), and so are the episodes \
            of the podcasts whose archive folder DIR is, or holds, that the library downloaded elsewhere \
            (outside). Exit status: 0 when every file is as listed (after repairs), 1 otherwise \
            (also when DIR is not a folder).

            With --db, DIR is the folder cluster workers download into (their -o) and the \
            cluster's ledger is what the files are checked against, not the manifests: each file \
            the ledger lists (with --node, those downloaded on that machine only) must be there \
            with its size and SHA-256, and, without --node, each file there must be listed \
            (.monsoon-work and the manifests aside). Only --db switches to the ledger: \
            MONSOON_DB is not read here.

              monsoon verify ~/Archive
              monsoon verify ~/Archive --repair
              monsoon verify --db postgresql://db.example.com/monsoon /srv/archive
            """)
    @OptionGroup var global: GlobalOptions
    @Flag("--json", help: "Print JSON: folders, checked, missing, changed, extra, links, unreadable, withoutFeed, outside (with --repair: repaired, notRepaired).") var json = false
    @Flag("--repair", help: "Fetch missing and changed files again; each replaces its file only when its SHA-256 is the manifest's.") var repair = false
    @Option("--db", help: "Check DIR, the workers' folder, against the ledger in this PostgreSQL database (a postgresql:// URL or key=value pairs).",
            valueName: "url") var db: String?
    @Option("--node", help: "With --db: only the files the ledger says this machine downloaded (extra files are not looked for).",
            valueName: "name") var node: String?
    @Argument(help: "The archive root or a podcast's folder (with --db: the workers' folder).", valueName: "dir") var directory: String?
    init() {}

    mutating func validate() throws {
        guard let db else {
            if node != nil { throw ValidationError("--node works with --db only") }
            return
        }
        if db.isEmpty { throw ValidationError("--db needs the database's URL") }
        if repair { throw ValidationError("--repair works with manifests; run it without --db") }
        if directory == nil { throw ValidationError("give the workers' folder: monsoon verify --db URL DIR") }
        if node?.isEmpty == true { throw ValidationError("--node needs a machine's name") }
    }

    func run(_ context: CommandContext) async throws -> Int32 {
        let folder = try directory.map(context.absolutePath) ?? EpisodeSession.open(global, context: context, use: .reading).settingsRoot()
        // An archive that is not there is not an empty one (a disk not mounted, a typo).
        var isFolder: Bool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) else {
            throw CLIError(message: "no such folder: \(folder)" + (directory == nil ? " (the setting download-root); give the archive's folder: monsoon verify DIR" : ""))
        }
        guard isFolder else { throw CLIError(message: "not a folder: \(folder); give the archive's folder or a podcast's") }
        let report: ArchiveVerifier.Report
        do {
            if let db {
                var database = ClusterDatabase()
                database.url = db
                let node = self.node
                report = try await database.withConnection(context) { try ClusterVerifier.verify(folder, node: node, on: $0) }
            } else {
                var verified = try ArchiveVerifier.verify(folder)
                // Without a library there is nothing downloaded outside, and verify never makes a home.
                if FileManager.default.fileExists(atPath: Home(unchecked: Home.path(option: global.home, context: context)).databasePath) {
                    let session = try EpisodeSession.open(global, context: context, use: .reading)
                    let folders = try session.archiveFolders()
                    verified.outside = try session.read { try ArchiveVerifier.downloadedOutside(folder, folders: folders, queue: $0) }
                }
                report = verified
            }
        } catch let error as EpisodeFileError {
            throw CLIError(message: error.message)
        }
        let repairs = repair ? try await self.repair(report, context: context) : []
        let failures = repairs.filter { $0.failure != nil }
        if json {
            func list(_ paths: [String]) -> String { "[" + paths.map(JSONText.string).joined(separator: ", ") + "]" }
            let unreadable = report.unreadable.map { "{\"path\": \(JSONText.string($0.path)), \"reason\": \(JSONText.string($0.reason))}" }
            var line = "{\"folders\": \(list(report.folders)), \"checked\": \(report.checked), \"missing\": \(list(report.missing)), "
                + "\"changed\": \(list(report.changed)), \"extra\": \(list(report.extra)), \"links\": \(list(report.links)), "
                + "\"unreadable\": [\(unreadable.joined(separator: ", "))], \"withoutFeed\": \(list(report.withoutFeed)), \"outside\": \(list(report.outside))"
            if repair {
                let notRepaired = failures.map { "{\"path\": \(JSONText.string($0.target.path)), \"reason\": \(JSONText.string($0.failure ?? ""))}" }
                line += ", \"repaired\": \(list(repairs.filter { $0.failure == nil }.map(\.target.path))), \"notRepaired\": [\(notRepaired.joined(separator: ", "))]"
            }
            context.output.line(line + "}")
        } else {
            for path in report.missing { context.output.line("missing \(path)") }
            for path in report.changed { context.output.line("changed \(path)") }
            for path in report.extra { context.output.line("extra   \(path)") }
            for path in report.links { context.output.line("link    \(path)") }
            for path in report.withoutFeed { context.output.line("nofeed  \(path)") }
            for path in report.outside { context.output.line("outside \(path)") }
            for manifest in report.unreadable {
                context.output.line("unreadable \(manifest.path)")
                context.error(manifest.reason)
            }
            if !global.quiet || !report.isClean {
                var verdict = report.isClean ? "all as listed" : "\(report.missing.count) missing, \(report.changed.count) changed, \(report.extra.count) extra"
                if !report.links.isEmpty { verdict += ", \(report.links.count) symbolic link\(report.links.count == 1 ? "" : "s") (not followed)" }
                if !report.withoutFeed.isEmpty { verdict += ", \(report.withoutFeed.count) without feed.xml" }
                if !report.unreadable.isEmpty {
                    verdict += ", \(report.unreadable.count) manifest\(report.unreadable.count == 1 ? "" : "s") that cannot be read (its files not checked)"
                }
                if !report.withoutFeed.isEmpty { verdict += "; run 'monsoon sync' or 'monsoon archive' to write it" }
                // Not a fault of the archive: the files are where the library put them before the folder was set.
                if !report.outside.isEmpty {
                    verdict += "; \(report.outside.count) episode\(report.outside.count == 1 ? "" : "s") downloaded before this was their podcast's folder "
                        + "stay\(report.outside.count == 1 ? "s" : "") outside it"
                }
                context.errors.line("monsoon: verified \(report.checked) file\(report.checked == 1 ? "" : "s") in \(report.folders.count) folder\(report.folders.count == 1 ? "" : "s"): \(verdict)")
            }
            if repair { reportRepairs(repairs, context: context) }
        }
        guard repair else { return report.isClean ? ExitStatus.success : ExitStatus.failure }
        // Repaired: clean when every missing and changed file came back, and nothing else was wrong.
        let clean = failures.isEmpty && repairs.count == report.missing.count + report.changed.count && report.extra.isEmpty && report.links.isEmpty
            && report.unreadable.isEmpty && report.withoutFeed.isEmpty
        return clean ? ExitStatus.success : ExitStatus.failure
    }

    /// `repaired PATH` on standard output for each file put back, each failure with its reason and
    /// the count on standard error.
    private func reportRepairs(_ repairs: [Repair], context: CommandContext) {
        for repair in repairs where repair.failure == nil { context.output.line("repaired \(repair.target.path)") }
        for repair in repairs { if let failure = repair.failure { context.error("cannot repair \(repair.target.path): \(failure)") } }
        let failed = repairs.filter { $0.failure != nil }.count
        if !global.quiet || failed > 0 { context.errors.line("monsoon: repaired \(repairs.count - failed), could not repair \(failed)") }
    }
}
