import FoundationEssentials
import MonsoonEngine
import MonsoonPodcasts

/// The podcast library of a home, with an engine for its fetches, for one command.
struct LibrarySession {
    let library: PodcastLibrary
    let manager: DownloadManager
    let home: Home
    /// curl, loading while the home opens, for a command that fetches (its engine, in memory,
    /// would load it only at the first fetch); waited for when the session goes.
    let preload: CurlPreload?

    /// The engine settings for feed fetches: few retries, so a refresh of many feeds never keeps
    /// the user waiting long on one that fails (one-shot fetches do not retry a host that cannot be reached at all).
    static func engineConfiguration(_ timings: Timings) -> EngineConfiguration {
        var configuration = EngineConfiguration()
        configuration.network.userAgent = "Monsoon/\(MonsoonCLI.version)"
        configuration.retry.maxRetries = 2
        configuration.retry.baseDelay = timings.retryBase
        return configuration
    }

    /// - Parameter transfer: the command's network options (proxy, IP version, CA file,
    ///   User-Agent, connect timeout), which its feeds are fetched with too.
    /// - Parameter warc: where the feeds' requests and responses are recorded (`--warc`), if anywhere.
    /// - Parameter fetching: the command fetches feeds (one given `transfer` does).
    static func open(_ global: GlobalOptions, context: CommandContext, use: Home.Use = .writing, transfer: TransferOptions? = nil,
                     warc: WARCArchive? = nil, fetching: Bool = false) throws -> LibrarySession {
        let home = try Home(option: global.home, context: context, use: use)
        let preload = fetching || transfer != nil ? CurlPreload() : nil
        var configuration = engineConfiguration(context.timings)
        if let transfer {
            let fetches = configuration.retry
            configuration = try transfer.configuration(scope: .wholeQueue, home: home, context: context)
            configuration.retry.maxRetries = fetches.maxRetries
        }
        configuration.warc = warc
        let manager = DownloadManager(configuration: configuration)
        do {
            let library = try home.openDatabase { database in
                let library = try PodcastLibrary(database: database, manager: manager)
                library.allowsPrivateAddresses = try (transfer?.allowPrivate ?? false) || Settings(database: database).allowPrivate()
                return library
            }
            return LibrarySession(library: library, manager: manager, home: home, preload: preload)
        } catch {
            throw CLIError(message: message(error))
        }
    }

    /// The id of the podcast a `--podcast` option names (an id or a unique part of a title). Only
    /// read: a command that writes has opened the home to write already.
    static func podcastID(_ query: String?, global: GlobalOptions, context: CommandContext) async throws -> Int? {
        guard let query else { return nil }
        let session = try open(global, context: context, use: .reading)
        return try await session.run { try $0.findPodcast(query).id }
    }

    /// One line for an error of a podcast command, redacted: the message of Monsoon's own errors
    /// (each says what happened), never a Foundation error's internal text.
    static func message(_ error: Error) -> String {
        if let error = error as? CLIError { return Redaction.redactText(error.message) }
        return PodcastLibrary.message(for: error)
    }

    /// The line for a feed that could not be read (`archive`, `import`): the error's message, which
    /// names the feed ("cannot fetch URL: the server answered 404 Not Found", as `add` says it), or
    /// "URL: message" when it does not.
    static func feedFailure(_ url: URL, _ error: Error) -> String {
        let text = message(error)
        let name = Redaction.redact(url)
        return text.contains(name) ? text : "\(name): \(text)"
    }

    /// Runs `body`, then releases the engine whatever happened.
    func run<T>(_ body: (PodcastLibrary) async throws -> T) async throws -> T {
        do {
            let result = try await body(library)
            await manager.shutdown()
            return result
        } catch {
            await manager.shutdown()
            throw error
        }
    }
}

/// JSON for podcasts, episodes and `inspect`, written by hand so a 5,000-episode
/// listing costs next to nothing (and keys keep a stable order).
enum LibraryJSON {
    /// A moment to the millisecond, as a JSON string (`"2024-01-02T10:00:00.123Z"`).
    static func timestamp(_ date: Date) -> String {
        let whole = LibraryJSON.date(date).dropLast()
        let milliseconds = Int((date.timeIntervalSince1970 * 1000).rounded(.down)) % 1000
        return whole.dropLast() + "." + String(cFormat: "%03d", milliseconds) + "Z\""
    }

    static func date(_ date: Date?) -> String {
        date.map { "\"" + UTCDate.iso($0) + "\"" } ?? "null"
    }

    static func string(_ text: String?) -> String { text.map(JSONText.string) ?? "null" }
    static func url(_ url: URL?) -> String { url.map { JSONText.string(Redaction.redact($0)) } ?? "null" }
    static func int(_ value: Int?) -> String { value.map(String.init) ?? "null" }

    static func podcast(_ podcast: Podcast) -> String {
        "{\"id\": \(podcast.id), \"feedURL\": \(url(podcast.feedURL)), \"title\": \(string(podcast.title)), \"author\": \(string(podcast.author)), "
            + "\"description\": \(string(podcast.description)), \"link\": \(url(podcast.link)), \"artworkURL\": \(url(podcast.artworkURL)), "
            + "\"language\": \(string(podcast.language)), \"lastRefresh\": \(date(podcast.lastRefresh)), \"lastError\": \(string(podcast.lastError)), "
            + "\"etag\": \(string(podcast.etag)), \"lastModified\": \(string(podcast.lastModified)), \"episodes\": \(podcast.episodeCount)}"
    }

    static func episode(_ episode: Episode) -> String {
        "{\"id\": \(episode.id), \"podcastID\": \(episode.podcastID), \"guid\": \(string(episode.guid)), \"title\": \(string(episode.title)), "
            + "\"url\": \(url(episode.enclosureURL)), \"mediaType\": \(string(episode.mediaType)), \"length\": \(int(episode.declaredLength)), "
            + "\"published\": \(date(episode.published)), \"duration\": \(int(episode.duration)), \"season\": \(int(episode.season)), "
            + "\"episode\": \(int(episode.episodeNumber)), \"summary\": \(string(episode.summary)), \"link\": \(url(episode.link)), \"imageURL\": \(url(episode.imageURL)), "
            + "\"transcriptURL\": \(url(episode.transcriptURL)), \"chaptersURL\": \(url(episode.chaptersURL)), "
            + "\"downloadState\": \"\(episode.downloadState.rawValue)\", \"downloadError\": \(string(episode.downloadError)), \"fileName\": \(string(episode.fileName)), \"bytesOnDisk\": \(episode.bytesOnDisk), "
            + "\"position\": \(JSONText.number(episode.position)), \"played\": \(episode.played), \"queuePosition\": \(int(episode.queuePosition))}"
    }

    /// An episode with its versions (`monsoon episodes --json`): `episode(_:)` with a `versions` array.
    static func episode(_ episode: Episode, versions: [EpisodeVersion]) -> String {
        let list = versions.map { version in
            "{\"version\": \(string(version.name)), \"status\": \"\(version.status.rawValue)\", \"file\": \(string(version.file)), "
                + "\"bytes\": \(version.bytes), \"url\": \(string(version.url.map(Redaction.redact))), \"length\": \(int(version.length)), "
                + "\"finalURL\": \(string(version.finalURL.map(Redaction.redact))), \"etag\": \(string(version.etag)), "
                + "\"lastModified\": \(string(version.lastModified)), \"sha256\": \(string(version.sha256)), \"seen\": \(date(version.seen)), "
                + "\"downloaded\": \(date(version.downloaded))}"
        }
        // The plain object, its closing brace opened again for one more field.
        return String(Self.episode(episode).dropLast()) + ", \"versions\": [" + list.joined(separator: ", ") + "]}"
    }

    static func array(_ items: [String]) -> String {
        items.isEmpty ? "[]\n" : "[\n  " + items.joined(separator: ",\n  ") + "\n]\n"
    }
}
