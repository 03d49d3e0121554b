import FoundationEssentials
import MonsoonCluster
import MonsoonEngine
import MonsoonPodcasts

/// `archive --db`: the feeds go into the cluster's shared library, and their refreshes into its
/// queue; the workers download.
extension Archive {
    /// The options that act on this machine, not on what the shared library keeps: each is a
    /// usage error with --db.
    var localOnlyOptions: [(name: String, given: Bool)] {
        [("--all", all), ("--out", out != nil), ("--dry-run", dryRun), ("--refetch-missing", refetchMissing), ("--with-artwork", withArtwork),
         ("--with-transcripts", withTranscripts), ("--with-chapters", withChapters), ("--jobs", transfer.jobs != nil), ("--retries", transfer.retries != nil),
         ("--per-host", transfer.perHost != nil), ("--min-free", transfer.minFree != nil), ("--limit-rate", transfer.limitRate != nil),
         ("--proxy", transfer.proxy != nil), ("-4", transfer.ipv4), ("-6", transfer.ipv6), ("--user-agent", transfer.userAgent != nil),
         ("--cacert", transfer.cacert != nil), ("--connect-timeout", transfer.connectTimeout != nil), ("--report", output.report != nil),
         ("--report-html", output.reportHTML != nil), ("--versions", versions != nil)]
    }

    /// --db's checks: a connection string, no option of a local run, rules the library can keep.
    func validateShared() throws {
        guard let db, !db.trimmingBlanks().isEmpty else { throw ValidationError("--db needs the database: a postgresql:// URL or key=value pairs") }
        if let option = localOnlyOptions.first(where: \.given) {
            throw ValidationError("\(option.name) cannot be used with --db: the feeds are queued for the cluster's workers, and nothing is downloaded here")
        }
        do { try sharedRules.validate() } catch { throw ValidationError(error.message) }
    }

    /// The options that choose and name episodes, as the shared library keeps them with each feed.
    var sharedRules: ArchiveRules {
        ArchiveRules(since: since.flatMap(QueueAdd.day), until: until.flatMap(QueueAdd.day), match: match, exclude: exclude, latest: latest, limit: limit,
                     newestFirst: newestFirst, template: template, portableNames: portableNames, maxSize: maxSize.map { Int64($0.bytes) })
    }

    /// Adds the feeds to the shared library of `database` (its schema made or brought up to date
    /// first, as a worker does) and queues their refreshes; prints a line per feed and a summary.
    func share(_ urls: [URL], database text: String, context: CommandContext) async throws -> Int32 {
        // A list's entry that is not a feed's address is said and skipped, as a local archive does.
        let refused = urls.filter { !DownloadRequest.isDownloadable($0) }
        for url in refused { context.error("\(Redaction.redact(url)): not an http or https URL; skipped") }
        let urls = urls.filter(DownloadRequest.isDownloadable)
        if urls.isEmpty { throw CLIError(message: "no feed to archive: the list names none with an http or https URL") }
        var database = ClusterDatabase()
        database.url = text
        let rules = sharedRules
        let (name, added) = try await database.withConnection(context) { connection in
            _ = try ClusterSchema.migrate(connection)
            return (connection.displayName, try SharedLibrary.addFeeds(urls, rules: rules, on: connection))
        }
        let queued = added.filter(\.refreshQueued).count
        let new = added.filter(\.isNew).count
        if output.json {
            let feeds = added.map { feed in
                "{\"url\": \(JSONText.string(Redaction.redact(feed.url))), \"feedID\": \(feed.feedID), \"new\": \(feed.isNew), \"queued\": \(feed.refreshQueued)}"
            }
            context.output.line(GetReporter.jsonLine("queued", [
                ("database", JSONText.string(name)), ("feeds", "[\(feeds.joined(separator: ", "))]"), ("newFeeds", String(new)),
                ("queued", String(queued)), ("alreadyQueued", String(added.count - queued)), ("refused", String(refused.count)),
            ]))
            return refused.isEmpty ? ExitStatus.success : ExitStatus.failure
        }
        guard !global.quiet else { return refused.isEmpty ? ExitStatus.success : ExitStatus.failure }
        for feed in added {
            context.output.line(feed.refreshQueued ? "queued refresh of \(Redaction.redact(feed.url))" : "refresh already queued: \(Redaction.redact(feed.url))")
        }
        context.errors.line("monsoon: shared library \(name): \(added.count) feed\(added.count == 1 ? "" : "s") (\(new) new), "
                            + "\(queued) refresh\(queued == 1 ? "" : "es") queued, \(added.count - queued) already queued"
                            + (refused.isEmpty ? "" : ", \(refused.count) refused (not http or https)"))
        return refused.isEmpty ? ExitStatus.success : ExitStatus.failure
    }
}
