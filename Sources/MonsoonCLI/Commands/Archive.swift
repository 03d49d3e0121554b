import FoundationEssentials
import MonsoonEngine
import MonsoonPodcasts

/// `monsoon archive`: a whole back catalogue, kept with a manifest, and only what is new on
/// every later run.
struct Archive: RunnableCommand {
    /// Downloads at once for an archive run: a back catalogue waits mostly on first bytes and
    /// redirects, not on bandwidth, so it runs as many as a browser opens to one host (6), and no
    /// more: fast without being rude. `-j` wins; the setting `concurrency` is for `download`.
    static let defaultJobs = 6

    static let configuration = CommandConfiguration(
        commandName: "archive",
        abstract: "Download the whole back catalogue of podcasts, with a manifest; later runs fetch only what is new.",
        discussion: """
            Subscribes to each feed (or uses the subscription), reads every page, and downloads the \
            matching episodes, oldest first, under DIR as the template names them. The database is \
            the ledger: an episode downloaded once is not fetched again, even when its file was \
            moved or deleted (--refetch-missing fetches those). --limit N caps one run's downloads; --latest N \
            keeps a feed's newest N, those archived counting toward N. Each podcast folder keeps \
            monsoon-manifest.json (file, size, SHA-256, source and final URL, validators, time) and \
            feed.xml, the feed as last fetched; 'monsoon verify DIR' checks them. An archived \
            episode republished with another file (another URL and size, or new validators) is a \
            new version: downloaded beside the earlier file, named with the day it was seen \
            ({version}); --versions latest keeps only the newest. A podcast archived with -o DIR \
            remembers DIR (the setting folder): sync and download put its new episodes there, and \
            --all without -o archives each podcast in its own.

              monsoon archive https://example.com/feed.xml -o ~/Archive
              monsoon archive --opml subscriptions.opml --since 2020-01-01 --match interview
              monsoon archive https://example.com/feed.xml --dry-run
              monsoon archive --all --latest 3 --quiet     # for cron: each podcast's newest three
              monsoon archive --all --write-info-json --exec 'rclone copy {} remote:podcasts/'
              curl -s https://example.com/list.opml | monsoon archive --opml - --portable-names -o /media/usb
              monsoon archive --db postgresql://db.example.com/monsoon --opml subscriptions.opml --since 2020-01-01
              monsoon archive https://example.com/feed.xml --warc podcasts.warc.gz   # also a web archive of it all

            --match and --exclude take a regular expression, matched anywhere in the title \
            without regard to case, in time proportional to the title whatever the pattern: \
            characters as they are, '.', [abc] and [^a-z], \\d \\w \\s (and \\D \\W \\S), \\b, \
            ^ and $, ( ) and (?: ), |, and * + ? {m} {m,} {m,n}; a backslash before punctuation \
            takes it as it is. Backreferences and lookaround are not taken.

            With --warc, every request and response (the feeds' and their pages', each redirect, \
            each resumed range, each episode's file) is recorded in WARC/1.1 files beside FILE, \
            numbered from FILE-00000.warc.gz on; 'warcio check' verifies them.

            --template (else the setting template) names each file under DIR and ends in .{ext}: \
            {podcast} (the podcast's folder), {title}, {date} (the publish day in UTC, 'undated' \
            without one), {year}, {month}, {day}, {guid}, {season}, {episode}, {version} (empty but \
            for a republished episode's later version: ' (2026-12-08)') and {ext}, the extension of \
            the final URL, else of the media type. The default is '{podcast}/{date} - {title}.{ext}'.

            With --db, nothing is downloaded here: the feeds go into the shared library of that \
            PostgreSQL database, with the options that choose and name episodes (--since, --until, \
            --match, --exclude, --latest, --limit, --newest-first, --template, --portable-names, \
            --max-size; a feed archived again takes the latest ones; the template is --template's \
            or the default, never this machine's setting), and a refresh of each is queued for the \
            cluster's workers, which download under their own -o DIR with the names archive gives; \
            it exits 0 once they are queued. Only --db does this: MONSOON_DB, which the cluster \
            commands read, never turns a plain archive into a shared one.

            Exit status: 0 when everything was downloaded, 1 when something failed, 2 on a usage \
            error, 3 when the disk is full, 130 on Ctrl-C.
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var transfer: TransferOptions

    @Option("--opml", help: "Also archive every feed of this OPML file ('-' for standard input).", valueName: "file") var opml: String?
    @Flag("--all", help: "Also archive every subscription.") var all = false
    @Option("-o", "--out", "--output", help: "The archive's root (default: the setting download-root).", valueName: "dir") var out: String?
    @Option("--template", help: "Where each file goes under the root (default: the setting template).", valueName: "template") var template: String?
    @Option("--since", help: "Only episodes published on or after this day (UTC).", valueName: "yyyy-mm-dd") var since: String?
    @Option("--until", help: "Only episodes published on or before this day (UTC).", valueName: "yyyy-mm-dd") var until: String?
    @Option("--match", help: "Only episodes whose title matches this regular expression (case-insensitive; the syntax is below).", valueName: "regex") var match: String?
    @Option("--exclude", help: "Leave out episodes whose title matches this regular expression (case-insensitive; the syntax is below).", valueName: "regex") var exclude: String?
    @Option("--limit", help: "At most N downloads per feed this run (the first N not yet archived, in the order chosen).", valueName: "n") var limit: Int?
    @Option("--latest", help: "Only the newest N episodes per feed (after the other filters), archived or not: those archived count toward N.", valueName: "n") var latest: Int?
    @Flag("--portable-names", help: "File and folder names valid on exFAT and SMB (default: the setting portable-names).") var portableNames = false
    @Flag("--newest-first", help: "Newest episodes first (default: oldest first).") var newestFirst = false
    @Flag("--with-artwork", help: "Also keep the podcast's artwork.") var withArtwork = false
    @Flag("--with-transcripts", help: "Also keep the episodes' transcripts.") var withTranscripts = false
    @Flag("--with-chapters", help: "Also keep the episodes' chapters.") var withChapters = false
    @Option("--max-size", help: "Stop a file larger than SIZE (or a stream that never ends) with an error.", valueName: "size") var maxSize: ByteSize?
    @Flag("--refetch-missing", help: "Download again episodes downloaded before whose file is gone.") var refetchMissing = false
    @Option("--versions", help: "An archived episode republished with another file: keep all its versions (the default; each later one named with the day it was seen), or only the latest (an earlier file is deleted once the new one is in).", valueName: "which") var versions: VersionsKept?
    @Flag("--dry-run", help: "Print the plan (episodes, sizes, totals per host, whether it fits on disk) and download nothing.") var dryRun = false
    @Option("--db", help: "Download nothing here: add the feeds to the shared library of this PostgreSQL database (a postgresql:// URL or key=value pairs; never $MONSOON_DB) and queue their refreshes for the cluster's workers.", valueName: "url") var db: String?
    @OptionGroup var output: RunOutputOptions
    @OptionGroup var after: AfterDownloadOptions
    @OptionGroup var warc: WARCOptions
    @Argument(help: "Feed URLs (http or https).", valueName: "feed-url") var feeds: [String] = []

    init() {}

    mutating func validate() throws {
        if feeds.isEmpty && opml == nil && !all { throw ValidationError("give at least one feed URL, --opml FILE or --all") }
        for feed in feeds { _ = try URLArgument.require(feed, advice: Self.feedAdvice) }
        for (name, day) in [("--since", since), ("--until", until)] {
            if let day, QueueAdd.day(day) == nil { throw ValidationError("\(name): '\(day)' is not a day like 2024-01-31") }
        }
        if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
        if let latest, latest < 1 { throw ValidationError("--latest must be at least 1") }
        if let maxSize, maxSize.bytes < 1 { throw ValidationError("--max-size must be at least 1 byte") }
        if let template {
            do { _ = try NamingTemplate(template) } catch { throw ValidationError(error.message) }
        }
        do { _ = try ArchiveSelection([], match: match, exclude: exclude) } catch { throw ValidationError(error.message) }
        if db != nil { try validateShared() }
        if db != nil && after.isActive { throw ValidationError("--write-info-json and --exec do not go with --db: the cluster's workers download the files, not this command") }
        if warc.warc != nil && dryRun { throw ValidationError("--dry-run fetches only the feeds, to plan: leave out --warc") }
        if warc.warc != nil && db != nil { throw ValidationError("--warc records what this machine downloads, and with --db the cluster's workers download: leave out --warc") }
    }

    /// Which versions of a republished episode an archive keeps (`--versions`).
    enum VersionsKept: String, CaseIterable, ExpressibleByArgument { case all, latest }

    /// The hint after a feed URL that is not one (and lacks more than its scheme).
    static let feedAdvice = "give the feed's full address, like https://example.com/feed.xml"

    func run(_ context: CommandContext) async throws -> Int32 {
        var urls = feeds.compactMap(URLArgument.url)
        // A FIFO from `<(...)` too: read as `import` reads one.
        if let opml { urls += try Import.read(opml, context: context).map(\.feedURL) }
        if let db { return try await share(urls, database: db, context: context) }
        let episodes = try EpisodeSession.open(global, context: context)
        if all {
            let subscribed = try await LibrarySession.open(global, context: context).run { try $0.podcasts() }.map(\.feedURL)
            // Nothing to archive is no success: a cron job on an emptied library should say so.
            if subscribed.isEmpty && urls.isEmpty {
                throw CLIError(message: "--all: there are no subscriptions to archive; subscribe with 'monsoon add FEED_URL' or give feed URLs")
            }
            // A feed both named and subscribed to is archived once (the run takes each podcast once anyway).
            urls += subscribed.filter { !urls.contains($0) }
        }
        let root = try episodes.downloadRoot(out, context: context)
        var naming: NamingTemplate
        do { naming = try template.map { try NamingTemplate($0) } ?? episodes.settings.template() } catch {
            throw CLIError(error)
        }
        do { if try portableNames || episodes.settings.portableNames() { naming.portable = true } } catch {
            throw CLIError(message: "cannot read the settings: \(error)")
        }
        if dryRun { return try await plan(urls, root: root, naming: naming, episodes: episodes, context: context) }
        return try await archive(urls, root: root, naming: naming, episodes: episodes, context: context)
    }

    /// The selection's options, for a podcast's candidates.
    func select(_ candidates: [ArchiveSelection.Candidate]) throws -> ArchiveSelection {
        do {
            return try ArchiveSelection(candidates, since: since.flatMap(QueueAdd.day), until: until.flatMap(QueueAdd.day), match: match,
                                        exclude: exclude, limit: limit, latest: latest, newestFirst: newestFirst, refetchMissing: refetchMissing)
        } catch {
            throw CLIError.usage(error.message)
        }
    }
}
