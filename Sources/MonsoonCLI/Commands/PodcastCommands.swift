import FoundationEssentials
import MonsoonEngine
import MonsoonPodcasts

struct Add: RunnableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Subscribe to podcast feeds, reading each whole back catalogue.",
        discussion: "Paged feeds (RFC 5005) are followed. A web page that names its feed (<link rel=\"alternate\">) subscribes to that feed. "
            + "Subscribing twice to the same feed says so and changes nothing. Each feed is read in turn; one that cannot be read does not stop the others. "
            + "Exit status 1 when a feed cannot be read, or a later page of one cannot." + "\n\nExamples:\n\n  monsoon add https://example.com/feed.xml\n  monsoon add https://example.com/a.xml https://example.org/b.xml\n  monsoon subscribe https://example.com/   # a page that names its feed",
        aliases: ["subscribe"])
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The feeds' URLs (http or https; credentials in a URL work and are never printed).", valueName: "url") var urls: [String]
    init() {}

    func run(_ context: CommandContext) async throws -> Int32 {
        // All checked before any is read: a typo in the third is not found after two subscriptions.
        let feeds = try urls.map { url in
            guard let feedURL = URLArgument.url(url) else { throw CLIError.usage(URLArgument.notURL(url, advice: Archive.feedAdvice)) }
            return feedURL
        }
        let session = try LibrarySession.open(global, context: context, fetching: true)
        let results = try await session.run { library -> [Result<PodcastLibrary.SubscribeResult, Error>] in
            var results: [Result<PodcastLibrary.SubscribeResult, Error>] = []
            for feedURL in feeds {
                // One feed alone fails the command with its error, as it always has; of several, the others go on.
                if feeds.count == 1 { return [.success(try await library.subscribe(to: feedURL))] }
                do { results.append(.success(try await library.subscribe(to: feedURL))) } catch is CancellationError { throw CancellationError() } catch {
                    results.append(.failure(error))
                }
            }
            return results
        }
        var succeeded = true
        for (feedURL, result) in zip(feeds, results) {
            switch result {
            // Said even with --quiet: the subscription is all `add` does.
            case .success(let subscription): if !RefreshSummary.say(subscription, quiet: false, context: context) { succeeded = false }
            case .failure(let error):
                context.error(LibrarySession.feedFailure(feedURL, error))
                succeeded = false
            }
        }
        return succeeded ? ExitStatus.success : ExitStatus.failure
    }
}

struct Podcasts: RunnableCommand {
    static let configuration = CommandConfiguration(commandName: "podcasts", abstract: "List your podcasts.", discussion: "Examples:\n\n  monsoon podcasts\n  monsoon podcasts --json")
    @OptionGroup var global: GlobalOptions
    @Flag("--json", help: "Print a JSON array of objects with an id and the podcast's fields.") var json = false
    init() {}

    func run(_ context: CommandContext) async throws -> Int32 {
        let session = try LibrarySession.open(global, context: context, use: .reading)
        let podcasts = try await session.run { try $0.podcasts() }
        if json {
            context.output.write(LibraryJSON.array(podcasts.map(LibraryJSON.podcast)))
        } else if podcasts.isEmpty {
            if !global.quiet { context.output.line("no podcasts yet; subscribe with 'monsoon add URL'") }
        } else {
            let table = TextTable([.init(title: "ID", width: 5), .init(title: "EPISODES", width: 8)], name: "PODCAST",
                                  terminalWidth: context.isTerminal ? context.terminalWidth : nil)
            var text = table.header + "\n"
            for podcast in podcasts {
                // After the name, as `queue` puts an error after its title.
                let name = podcast.name + (podcast.lastError.map { "  last refresh failed: \($0)" } ?? "")
                text += table.row([String(podcast.id), String(podcast.episodeCount)], name: name) + "\n"
            }
            context.output.write(text)
        }
        return ExitStatus.success
    }
}

struct Episodes: RunnableCommand {
    static let configuration = CommandConfiguration(commandName: "episodes", abstract: "List a podcast's episodes, newest first.", discussion: "Examples:\n\n  monsoon episodes \"Morning Show\"\n  monsoon episodes 3 --json")
    @OptionGroup var global: GlobalOptions
    @Flag("--json", help: "Print a JSON array of objects with an id, the episode's fields and its versions.") var json = false
    @Argument(help: "The podcast: its id, or a part of its title that only it has.", valueName: "podcast", completion: .podcasts) var podcast: String
    init() {}

    func run(_ context: CommandContext) async throws -> Int32 {
        let session = try LibrarySession.open(global, context: context, use: .reading)
        // Downloads saved by a run that was killed, or changed by pause and resume: the episodes
        // follow them first (on a home that cannot be written, they show as last saved).
        if !session.home.isReadOnly { try EpisodeSession.open(global, context: context).write { try $0.reconcile() } }
        let (episodes, versions) = try await session.run { library in
            let id = try library.findPodcast(podcast).id
            return (try library.episodes(of: id), try library.versions(ofPodcast: id))
        }
        if json {
            context.output.write(LibraryJSON.array(episodes.map { LibraryJSON.episode($0, versions: versions[$0.id] ?? []) }))
            return ExitStatus.success
        }
        let table = TextTable([.init(title: "ID", width: 7), .init(title: "PUBLISHED", width: 10), .init(title: "LENGTH", width: 8),
                               .init(title: "STATE", width: 11), .init(title: "SIZE", width: 10)],
                              name: "TITLE", terminalWidth: context.isTerminal ? context.terminalWidth : nil)
        var text = episodes.isEmpty ? "" : table.header + "\n"
        for episode in episodes {
            let date = episode.published.map { String(LibraryJSON.date($0).dropFirst().prefix(10)) } ?? ""
            let duration = episode.duration.map { Self.clock($0) } ?? ""
            let state = episode.downloadState == .none ? "" : episode.downloadState.rawValue
            let size = episode.declaredLength.map { ByteCount.format($0) } ?? "-"
            // A republished episode says how many versions it has (`--json` lists them).
            let count = versions[episode.id]?.count ?? 0
            let name = (episode.title ?? "(untitled)") + (count > 1 ? " [\(count) versions]" : "")
            text += table.row([String(episode.id), date, duration, state, size], name: name) + "\n"
        }
        context.output.write(text)
        return ExitStatus.success
    }

    static func clock(_ seconds: Int) -> String {
        let hours = seconds / 3600, minutes = (seconds % 3600) / 60, rest = seconds % 60
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(two(minutes)):\(two(rest))" : "\(minutes):\(two(rest))"
    }
}

struct Refresh: RunnableCommand {
    static let configuration = CommandConfiguration(
        commandName: "refresh",
        abstract: "Fetch new episodes of one podcast, or of all (concurrently).",
        discussion: "Conditional requests (ETag, Last-Modified) make an unchanged feed cost a 304. Your downloads, positions and played marks are never touched. "
            + "Exit status 1 when a feed, or a later page of one, cannot be read (each said on standard error; what was read is kept)." + "\n\nExamples:\n\n  monsoon refresh\n  monsoon refresh \"Morning Show\"")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The podcast (id or a unique part of its title); all when omitted.", valueName: "podcast", completion: .podcasts) var podcast: String?
    init() {}

    func run(_ context: CommandContext) async throws -> Int32 {
        let session = try LibrarySession.open(global, context: context, fetching: true)
        let target = podcast
        let results: [(Podcast, Result<RefreshSummary, Error>)] = try await session.run { library in
            if let target {
                let found = try library.findPodcast(target)
                do { return [(found, .success(try await library.refresh(found.id)))] } catch { return [(found, .failure(error))] }
            }
            return try await library.refreshAll()
        }
        var failed = false
        for (podcast, result) in results {
            if !RefreshSummary.say(result, for: podcast, quiet: global.quiet, context: context) { failed = true }
        }
        return failed ? ExitStatus.failure : ExitStatus.success
    }
}

struct Unsubscribe: RunnableCommand {
    static let configuration = CommandConfiguration(commandName: "unsubscribe", abstract: "Unsubscribe from a podcast.", discussion: "Examples:\n\n  monsoon unsubscribe 3\n  monsoon unsubscribe \"Morning Show\" --delete-files")
    @OptionGroup var global: GlobalOptions
    @Flag("--delete-files", help: "Also delete its downloaded episode files.") var deleteFiles = false
    @Argument(help: "The podcast: its id, or a part of its title that only it has.", valueName: "podcast", completion: .podcasts) var podcast: String
    init() {}

    func run(_ context: CommandContext) async throws -> Int32 {
        let session = try LibrarySession.open(global, context: context)
        let episodes = try EpisodeSession.open(global, context: context)
        let files = try EpisodeFileSession.open(global, context: context)
        let found = try await session.run { try $0.findPodcast(podcast) }
        let ids = try await session.run { try $0.episodes(of: found.id).map(\.id) }
        // Its downloads leave the engine's queue before the podcast goes.
        try episodes.read { try $0.reconcile() }
        try await episodes.removeUnfinishedDownloads(of: ids)

        var deleted = EpisodeFiles.Deletion()
        if deleteFiles {
            let downloaded = try files.run { try $0.downloaded(podcast: found.id) }
            deleted = try files.run { try $0.delete(downloaded) }
        }
        try await LibrarySession.open(global, context: context).run { try $0.unsubscribe(found.id) }
        try CLIError.prefixing("unsubscribed, but could not forget its finished downloads") {
            _ = try episodes.store.forget(ids.map(EpisodeQueue.downloadID(ofEpisode:)), ifIn: [.completed, .failed])
        }
        if !global.quiet {
            let files = deleted.episodes.count
            context.output.line("unsubscribed: \(found.id) \(found.name)" + (deleteFiles ? " (\(files) file\(files == 1 ? "" : "s") deleted, \(ByteCount.format(deleted.bytes)))" : ""))
        }
        return ExitStatus.success
    }
}

struct Import: RunnableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import", abstract: "Subscribe to every feed of an OPML file.",
        discussion: "Entries that cannot be subscribed to (unreadable feeds, URLs whose credentials an export replaced by ***) are named on "
            + "standard error and the others subscribed; the exit status is then 1." + "\n\nExamples:\n\n  monsoon import subscriptions.opml")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The OPML file ('-' for standard input).", valueName: "file") var file: String
    init() {}

    func run(_ context: CommandContext) async throws -> Int32 {
        // The whole list is read and parsed before anything is subscribed: a list that cannot be read
        // whole subscribes to nothing.
        let outlines = try Self.read(file, context: context)
        let session = try LibrarySession.open(global, context: context, fetching: true)
        var failed = 0
        try await session.run { library in
            for outline in outlines {
                // Subscribing would send *** to the server as the user name, password or token.
                guard !Redaction.hasRedactionMarker(outline.feedURL) else {
                    failed += 1
                    context.error("\(Redaction.redact(outline.feedURL)): its credentials were left out when it was exported (*** stands "
                                  + "where they were), so it cannot be subscribed to; export with --include-credentials and import that file")
                    continue
                }
                do {
                    let result = try await library.subscribe(to: outline.feedURL)
                    if !RefreshSummary.say(result, quiet: global.quiet, context: context) { failed += 1 }
                } catch {
                    failed += 1
                    context.error(LibrarySession.feedFailure(outline.feedURL, error))
                }
            }
        }
        return failed > 0 ? ExitStatus.failure : ExitStatus.success
    }

    /// A usage error when `file`, given for a list, is no file but a URL (with or without its scheme).
    static func refuseURL(_ file: String, context: CommandContext) throws {
        guard file != "-", !FileManager.default.fileExists(atPath: context.absolutePath(file)),
              URLArgument.url(file) != nil || URLArgument.suggestion(file) != nil else { return }
        throw CLIError.usage("'\(Redaction.redact(file))' is a URL, not a file; save the list first ('monsoon get URL'), then give the file")
    }

    /// The outlines of the list in `file` ('-': standard input), read with the size cap of feeds
    /// (a larger file is refused before it is read), or one line that says why there are none.
    static func read(_ file: String, context: CommandContext) throws -> [OPML.Outline] {
        let limits = FeedLimits()
        let name = file == "-" ? "standard input" : file
        try refuseURL(file, context: context)
        let data: Data
        do {
            data = file == "-" ? try context.readStandardInput(limits.maxBytes)
                               : try BoundedInput.read(path: context.absolutePath(file), limit: limits.maxBytes)
        } catch {
            throw CLIError(message: "\(name): \(error.message(limit: limits.maxBytes, what: "a subscription list"))")
        }
        do {
            return try OPML.read(data, limits: limits)
        } catch {
            throw CLIError(message: "\(name): \(error)")
        }
    }
}

struct Export: RunnableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Print your subscriptions as OPML 2.0.",
        discussion: "Without --include-credentials, user names, passwords and tokens in feed URLs are replaced by *** and standard error names "
            + "the podcasts concerned (such entries cannot be imported)." + "\n\nExamples:\n\n  monsoon export > subscriptions.opml\n  monsoon export --include-credentials > private.opml")
    @OptionGroup var global: GlobalOptions
    @Flag("--include-credentials", help: "Keep user names, passwords and tokens in the feed URLs (hidden by default).")
    var includeCredentials = false
    init() {}

    func run(_ context: CommandContext) async throws -> Int32 {
        let session = try LibrarySession.open(global, context: context, use: .reading)
        let podcasts = try await session.run { try $0.podcasts() }
        let keep = includeCredentials
        // Fail closed: a URL that cannot be shown redacted is left out with a warning.
        var outlines: [OPML.Outline] = []
        var redacted: [Podcast] = []
        for podcast in podcasts {
            guard let url = keep ? podcast.feedURL : URL(string: Redaction.redact(podcast.feedURL)) else {
                context.error("left out podcast \(podcast.id): its URL cannot be shown without its credentials; export with --include-credentials to keep it")
                continue
            }
            if url != podcast.feedURL { redacted.append(podcast) }
            outlines.append(OPML.Outline(title: podcast.name, feedURL: url, siteURL: podcast.link))
        }
        // As written: OPML.write leaves out or references every character a terminal would act on,
        // and a title's zero-width characters must survive an export and an import.
        context.output.write(Data(OPML.write(outlines).utf8))
        if !redacted.isEmpty {
            let names = redacted.map { "\($0.id) \($0.name)" }.joined(separator: ", ")
            let count = redacted.count == 1 ? "1 podcast" : "\(redacted.count) podcasts"
            context.error("warning: the credentials in the feed URLs of \(count) were replaced by *** (\(names)); "
                          + "importing this file cannot reach \(redacted.count == 1 ? "that feed" : "those feeds"); export with --include-credentials to keep them")
        }
        return ExitStatus.success
    }
}

struct Inspect: RunnableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Parse one feed document (a file or a URL) without subscribing; pages are not followed.", discussion: "Examples:\n\n  monsoon inspect https://example.com/feed.xml\n  monsoon inspect feed.xml --json")
    @OptionGroup var global: GlobalOptions
    @Flag("--json", help: "Print {\"title\", \"episodes\": [{\"guid\", \"title\", \"url\", \"published\", \"duration\"}]}.") var json = false
    @Argument(help: "A feed file, or an http(s) URL.", valueName: "file-or-url") var source: String
    init() {}

    func run(_ context: CommandContext) async throws -> Int32 {
        let path = context.absolutePath(source)
        var documentURL = URL(fileURLWithPath: path)
        // Printed as the episodes are read: a feed of a million items never sits in memory.
        var printer = Printer(json: json, output: context.output)
        let feed: ParsedFeed
        do {
            if FileManager.default.fileExists(atPath: path) {
                feed = try FeedParser.parse(fileAt: path) { episodes, soFar in printer.add(episodes, soFar, documentURL: documentURL) }
            } else {
                guard let url = URLArgument.url(source) else {
                    // A URL of another scheme, or an address without one, is a mistake in the command line.
                    if source.contains("://") || URLArgument.suggestion(source) != nil {
                        throw CLIError.usage(URLArgument.notURL(source, also: " nor a file", advice: Archive.feedAdvice))
                    }
                    throw CLIError(message: "no such file: \(path)")
                }
                documentURL = url
                let named = url
                // A bare engine for the fetch: inspecting opens no library and writes nothing.
                let manager = DownloadManager(configuration: LibrarySession.engineConfiguration(context.timings))
                do {
                    feed = try await PodcastLibrary.inspect(url, manager: manager) { episodes, soFar in printer.add(episodes, soFar, documentURL: named) }
                    await manager.shutdown()
                } catch {
                    await manager.shutdown()
                    throw error
                }
            }
        } catch let error as FeedError {
            throw CLIError(message: error.message)
        }
        printer.finish(feed, documentURL: documentURL)
        for repair in feed.repairs { context.error("repaired: \(repair)") }
        return ExitStatus.success
    }

    /// Prints a feed as a streaming parse hands out its episodes: `--json` through
    /// `InspectJSONWriter`; the text as the show's name, one line per episode, then the count
    /// (last: it is known only at the end). The name is the feed's title, final once read; until
    /// then (it may follow the items) the lines wait, as they do until they fill a chunk, so a
    /// small feed that turns out broken prints only its error.
    struct Printer {
        private let output: TextOutput
        private var jsonWriter: InspectJSONWriter?
        private var pending = ""
        private var headWritten = false
        private var count = 0
        private static let chunkSize = 256 << 10

        init(json: Bool, output: TextOutput) {
            self.output = output
            if json { jsonWriter = InspectJSONWriter { output.write($0) } }
        }

        mutating func add(_ episodes: [ParsedEpisode], _ feed: ParsedFeed, documentURL: URL) {
            if jsonWriter != nil {
                jsonWriter?.add(episodes, feed: feed)
                return
            }
            for episode in episodes {
                let date = episode.published.map { LibraryJSON.date($0).dropFirst().prefix(10) } ?? "          "
                pending += "  \(date)  \(episode.title ?? "(untitled)")\n"
            }
            count += episodes.count
            guard pending.utf8.count >= Self.chunkSize, headWritten || feed.title != nil else { return }
            if !headWritten { output.write(Self.name(feed, documentURL) + "\n") }
            headWritten = true
            output.write(pending)
            pending = ""
        }

        mutating func finish(_ feed: ParsedFeed, documentURL: URL) {
            if jsonWriter != nil {
                jsonWriter?.finish(feed)
                return
            }
            var text = headWritten ? "" : Self.name(feed, documentURL) + "\n"
            text += pending + "\(count) episode\(count == 1 ? "" : "s")"
            if feed.duplicateCount > 0 { text += " (\(feed.duplicateCount) duplicate\(feed.duplicateCount == 1 ? "" : "s") left out)" }
            output.write(text + "\n")
        }

        private static func name(_ feed: ParsedFeed, _ documentURL: URL) -> String {
            feed.title ?? FallbackName.podcast(feedURL: documentURL)
        }
    }
}
