import FoundationEssentials
import MonsoonEngine
import MonsoonStore

/// A setting `monsoon config` knows: its name, its default, and how its values are read.
///
/// `@nonexhaustive`: settings will be added, so a `switch` outside this package needs a `default`.
@nonexhaustive
public enum SettingKey: String, CaseIterable, Sendable {
    // What each does and its default: `about`, below.
    case concurrency
    case perHost = "per-host"
    case downloadRoot = "download-root"
    case template
    case autoDeletePlayed = "auto-delete-played"
    case keepLatest = "keep-latest"
    case retries
    case userAgent = "user-agent"
    case diskReserve = "disk-reserve"
    case autoDownload = "auto-download"
    case playedThreshold = "played-threshold"
    case limitRate = "limit-rate"
    case portableNames = "portable-names"
    case allowPrivate = "allow-private"
    case folder

    /// Whether a podcast may have its own value (`--podcast`).
    public var allowsPodcastOverride: Bool { self == .keepLatest || self == .autoDownload || self == .folder }

    /// Whether only a podcast may have a value: every other podcast's folder is `download-root`.
    public var isPodcastOnly: Bool { self == .folder }

    /// The value used when none is set, as `config get` prints it.
    public var defaultText: String { about.defaultText }

    /// For `config` help and errors.
    public var summary: String { about.summary }

    private var about: (defaultText: String, summary: String) {
        switch self {
        case .concurrency: ("2", "episodes downloaded at once by 'monsoon download' (a number, 1 to \(Settings.concurrencyLimit))")
        case .perHost: ("off", "downloads at once to one host (a number, or off)")
        case .downloadRoot: ("~/Podcasts", "the folder episodes are downloaded into (an absolute path or ~/...)")
        case .template: (NamingTemplate.defaultText, "where an episode's file goes under the root (variables: \(NamingTemplate.variables.map { "{\($0)}" }.joined(separator: ", ")))")
        case .autoDeletePlayed: ("off", "delete an episode's download once it is played (on or off)")
        case .keepLatest: ("off", "keep only the newest N downloads of a podcast (a number, or off; per podcast with --podcast)")
        case .retries: ("5", "retries after the first attempt for transient failures (a number, 0 or more)")
        case .userAgent: ("Monsoon", "the User-Agent header sent with requests")
        case .diskReserve: ("64MiB", "free space to leave on the disk (a size such as 500MB or 2GiB)")
        case .autoDownload: ("off", "'monsoon sync' downloads a podcast's new episodes (on or off; per podcast with --podcast)")
        case .playedThreshold: ("30", "seconds before the end at which 'monsoon play' counts an episode played (a number, 0 or more)")
        case .limitRate: ("off", "the most bytes a second over all downloads together (a speed such as 2M or 500K, or off)")
        case .portableNames: ("off", "file and folder names valid on exFAT and SMB: no : ? * \" < > | \\ or control characters (each _), no trailing dots or spaces, no reserved names like CON (on or off)")
        case .allowPrivate: ("off", "URLs from feeds may lead to this machine or its own network (loopback, private and link-local addresses), not only when the feed is there itself (on or off)")
        case .folder: ("download-root", "a podcast's archive folder, where 'monsoon sync' and 'monsoon download' put its new episodes; the first 'monsoon archive -o DIR' of it sets DIR (an absolute path or ~/...; per podcast only, with --podcast)")
        }
    }

    /// `text` as it is stored (normalized: "ON" → "on", "2gib" → "2GiB").
    /// - Throws: `SettingError` `.invalidValue`, saying what is expected.
    public func normalize(_ text: String) throws(SettingError) -> String {
        let value = text.trimmingBlanks()
        func bad() -> SettingError { SettingError(.invalidValue, "'\(text)' is not a valid \(rawValue): \(summary)") }
        switch self {
        case .concurrency:
            guard let number = Int(value), (1...Settings.concurrencyLimit).contains(number) else { throw bad() }
            return String(number)
        case .retries:
            guard let number = Int(value), number >= 0 else { throw bad() }
            return String(number)
        case .perHost, .keepLatest:
            if Self.offWords.contains(value.lowercased()) { return "off" }
            guard let number = Int(value), number >= 1 else { throw bad() }
            return String(number)
        case .autoDeletePlayed, .autoDownload, .portableNames, .allowPrivate:
            if Self.offWords.contains(value.lowercased()) { return "off" }
            if ["on", "yes", "true", "1"].contains(value.lowercased()) { return "on" }
            throw bad()
        case .downloadRoot, .folder:
            guard value.hasPrefix("/") || value == "~" || value.hasPrefix("~/") else { throw bad() }
            return value
        case .template:
            do { return try NamingTemplate(value).text } catch { throw SettingError(.invalidValue, error.message) }
        case .userAgent:
            guard !value.isEmpty, !value.contains(where: { $0.isNewline }) else { throw bad() }
            return value
        case .diskReserve:
            guard ByteCount.parse(value) != nil else { throw bad() }
            return value   // as given: a rounded form would change the size
        case .limitRate:
            if Self.offWords.contains(value.lowercased()) { return "off" }
            guard let bytes = ByteCount.parse(value), bytes >= 1 else { throw bad() }
            return value   // as given, like disk-reserve
        case .playedThreshold:
            guard let number = Double(value), number >= 0, number.isFinite else { throw bad() }
            return number.rounded() == number && number < 1e15 ? String(Int(number)) : String(number)
        }
    }

    private static let offWords: Set<String> = ["off", "none", "no", "false", "0"]
}

/// The settings of a home (`monsoon config`), in the same database as the library.
///
/// - Important: like its database connection, used from one task at a time.
public final class Settings {
    let database: Database

    public init(database: Database) throws {
        self.database = database
        try SettingRecord.migrator.migrate(database)
    }

    /// The value set for `podcast`, else globally; nil when none is set.
    public func value(_ key: SettingKey, podcast: Int? = nil) throws -> String? {
        try SettingRecord.value(key, podcast: podcast, in: database)
    }

    /// The podcast's own, else the global one, else the default.
    public func effective(_ key: SettingKey, podcast: Int? = nil) throws -> String {
        if let podcast, key.allowsPodcastOverride, let own = try value(key, podcast: podcast) { return own }
        return try value(key) ?? key.defaultText
    }

    /// Returns the value as stored.
    /// - Throws: `SettingError` `.invalidValue` for a value the key does not take, `.notPerPodcast` for a podcast's
    ///   value of a key that has none.
    @discardableResult
    public func set(_ key: SettingKey, _ text: String, podcast: Int? = nil) throws -> String {
        if podcast != nil && !key.allowsPodcastOverride {
            throw SettingError(.notPerPodcast, "\(key.rawValue) has no per-podcast value; set it without --podcast")
        }
        if podcast == nil && key.isPodcastOnly { throw SettingError(.podcastOnly, Self.podcastOnlyMessage(key)) }
        let value = try key.normalize(text)
        try SettingRecord.set(key, value, podcast: podcast, in: database)
        return value
    }

    /// Back to the default (or, for a podcast, to the global value).
    public func unset(_ key: SettingKey, podcast: Int? = nil) throws {
        try SettingRecord.unset(key, podcast: podcast, in: database)
    }

    /// The most downloads at once the setting `concurrency` (and `-j`) takes; curl's `--parallel-max` takes 300.
    public static let concurrencyLimit = 1000
    /// A larger value stored by an earlier version counts as the limit.
    public func concurrency() throws -> Int { Int(try effective(.concurrency)).map { min($0, Self.concurrencyLimit) } ?? 2 }
    /// Nil for no limit.
    public func perHost() throws -> Int? { Int(try effective(.perHost)) }
    public func retries() throws -> Int { Int(try effective(.retries)) ?? 5 }
    /// Nil when none is set: the caller then picks its own, not `defaultText`.
    public func userAgent() throws -> String? { try value(.userAgent) }
    public func diskReserve() throws -> Int { ByteCount.parse(try effective(.diskReserve)) ?? 64 << 20 }
    public func autoDeletePlayed() throws -> Bool { try effective(.autoDeletePlayed) == "on" }
    /// Nil to keep them all.
    public func keepLatest(podcast: Int) throws -> Int? { Int(try effective(.keepLatest, podcast: podcast)) }
    public func autoDownload(podcast: Int) throws -> Bool { try effective(.autoDownload, podcast: podcast) == "on" }
    /// Nil for no limit.
    public func limitRate() throws -> Int? { ByteCount.parse(try effective(.limitRate)).flatMap { $0 >= 1 ? $0 : nil } }
    public func playedThreshold() throws -> Double { Double(try effective(.playedThreshold)) ?? 30 }

    public func portableNames() throws -> Bool { try effective(.portableNames) == "on" }
    public func allowPrivate() throws -> Bool { try effective(.allowPrivate) == "on" }

    /// Portable when `portable-names` is on.
    /// - Throws: `SettingError` `.invalidStoredValue` when the stored template is no longer valid.
    public func template() throws -> NamingTemplate {
        let text = try effective(.template)
        var template: NamingTemplate
        do { template = try NamingTemplate(text) } catch { throw SettingError(.invalidStoredValue, "the stored template is not valid (\(error.message)); set it again with 'monsoon config set template'") }
        template.portable = try portableNames()
        return template
    }

    public func downloadRoot(userHome: String) throws -> String {
        Self.expanding(try effective(.downloadRoot), userHome: userHome)
    }

    /// The podcasts' own archive folders (`folder`), by podcast id.
    public func archiveFolders(userHome: String) throws -> [Int: String] {
        try SettingRecord.podcastValues(.folder, in: database).mapValues { Self.expanding($0, userHome: userHome).standardizedPath }
    }

    /// What each podcast's archive was made with, by podcast id.
    package func archives() throws -> [Int: ArchiveRun.Remembered] { try ArchiveRun.Remembered.all(in: database) }

    private static func expanding(_ text: String, userHome: String) -> String {
        if text == "~" { return userHome }
        if text.hasPrefix("~/") { return userHome.joiningPath(String(text.dropFirst(2))) }
        return text
    }

    /// For a podcast-only key set without a podcast.
    public static func podcastOnlyMessage(_ key: SettingKey) -> String {
        "\(key.rawValue) is a podcast's own: give --podcast PODCAST (every other podcast's is the setting download-root)"
    }
}
