import FoundationEssentials
import MonsoonPodcasts

/// The rules of an `archive --db`, kept with each of its feeds (`monsoon_feeds.rules`, as JSON):
/// which episodes a refresh queues, and how their files are named, as `monsoon archive` chooses
/// and names them on one machine (the same code: ``ArchiveSelection``, ``NamingTemplate``).
///
/// A feed has one set: the latest `archive --db` that names it sets them, for its next refreshes.
/// Checked when they are added (``validate()``), so a mistake is the user's to fix then, not a
/// refresh's failure later.
public struct ArchiveRules: Sendable, Hashable, Codable {
    /// Only episodes published on or after this day (its start, UTC).
    public var since: Date?
    /// Only episodes published on or before this day (its start, UTC; the whole day counts).
    public var until: Date?
    /// Only episodes whose title matches this regular expression (case-insensitive).
    public var match: String?
    /// Leave out episodes whose title matches this regular expression (case-insensitive).
    public var exclude: String?
    /// Only the newest N episodes that pass the other filters, those queued before counting.
    public var latest: Int?
    /// At most N new episodes queued per refresh, the first in the order chosen.
    public var limit: Int?
    /// Newest episodes first (default: oldest first): the order of the downloads' claims.
    public var newestFirst: Bool
    /// Where each file goes under a worker's folder; nil for ``NamingTemplate/defaultText``. Its
    /// first folder must be `{podcast}` alone: each feed has a folder of its own.
    public var template: String?
    /// Names valid on exFAT and SMB too (``PortableName``).
    public var portableNames: Bool
    /// The most bytes an episode's file may have.
    public var maxSize: Int64?

    /// Rules; every parameter's default selects and names as a plain `archive` does.
    public init(since: Date? = nil, until: Date? = nil, match: String? = nil, exclude: String? = nil, latest: Int? = nil, limit: Int? = nil,
                newestFirst: Bool = false, template: String? = nil, portableNames: Bool = false, maxSize: Int64? = nil) {
        self.since = since
        self.until = until
        self.match = match
        self.exclude = exclude
        self.latest = latest
        self.limit = limit
        self.newestFirst = newestFirst
        self.template = template
        self.portableNames = portableNames
        self.maxSize = maxSize
    }

    public init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        self.init(since: try values.decodeIfPresent(Date.self, forKey: .since), until: try values.decodeIfPresent(Date.self, forKey: .until),
                  match: try values.decodeIfPresent(String.self, forKey: .match), exclude: try values.decodeIfPresent(String.self, forKey: .exclude),
                  latest: try values.decodeIfPresent(Int.self, forKey: .latest), limit: try values.decodeIfPresent(Int.self, forKey: .limit),
                  newestFirst: try values.decodeIfPresent(Bool.self, forKey: .newestFirst) ?? false,
                  template: try values.decodeIfPresent(String.self, forKey: .template),
                  portableNames: try values.decodeIfPresent(Bool.self, forKey: .portableNames) ?? false,
                  maxSize: try values.decodeIfPresent(Int64.self, forKey: .maxSize))
    }

    /// Checks that the rules can be used, as `archive` checks its options.
    /// - Throws: `SharedLibraryError` `.invalidRules`, its message naming the option.
    public func validate() throws(SharedLibraryError) {
        _ = try naming()
        for (option, value) in [("--latest", latest), ("--limit", limit)] {
            if let value, value < 1 { throw SharedLibraryError(.invalidRules, "\(option) must be at least 1") }
        }
        if let maxSize, maxSize < 1 { throw SharedLibraryError(.invalidRules, "--max-size must be at least 1 byte") }
        do throws(ArchiveSelectionError) { _ = try ArchiveSelection([], match: match, exclude: exclude) } catch {
            throw SharedLibraryError(.invalidRules, error.message)
        }
    }

    /// The naming template, portable when the rules say.
    func naming() throws(SharedLibraryError) -> NamingTemplate {
        var naming: NamingTemplate
        do throws(NamingError) { naming = try template.map { (text) throws(NamingError) in try NamingTemplate(text) } ?? .standard } catch {
            throw SharedLibraryError(.invalidRules, error.message)
        }
        guard naming.startsWithPodcastFolder else {
            throw SharedLibraryError(.invalidRules, "the template '\(naming.text)' must start with '{podcast}/' (as the default, \(NamingTemplate.defaultText), does) "
                                     + "for the shared library, where each podcast has a folder of its own")
        }
        naming.portable = portableNames
        return naming
    }

    /// The episodes of `candidates` to queue, in the order of their claims.
    func select(_ candidates: [ArchiveSelection.Candidate]) throws(SharedLibraryError) -> [Int] {
        do throws(ArchiveSelectionError) {
            return try ArchiveSelection(candidates, since: since, until: until, match: match, exclude: exclude, limit: limit, latest: latest,
                                        newestFirst: newestFirst).chosen
        } catch {
            throw SharedLibraryError(.invalidRules, error.message)
        }
    }

    /// The rules as `monsoon_feeds.rules` keeps them: JSON, keys sorted, days as ISO 8601 times.
    var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        // Strings, numbers, booleans and dates always encode.
        return String(decoding: (try? encoder.encode(self)) ?? Data("{}".utf8), as: UTF8.self)
    }

    /// The rules `monsoon_feeds.rules` keeps.
    init(json: String) throws(SharedLibraryError) {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do { self = try decoder.decode(ArchiveRules.self, from: Data(json.utf8)) } catch _ {
            throw SharedLibraryError(.invalidRules, "the feed's rules in the database are not ones this Monsoon reads; add the feed again with 'monsoon archive --db'")
        }
    }
}
