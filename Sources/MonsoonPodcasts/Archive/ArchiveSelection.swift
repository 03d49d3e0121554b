import FoundationEssentials

/// Which episodes of a feed an archive run downloads: a pure decision over the episodes and the ledger (what was
/// downloaded once, whatever became of the file since).
public struct ArchiveSelection: Sendable, Equatable {
    public struct Candidate: Sendable, Equatable {
        public var id: Int
        /// What `match` and `exclude` are tried on (the episode's identity when it has no title).
        public var title: String
        /// An undated episode sorts after the dated ones.
        public var published: Date?
        /// 0 is the first item: the order among equal dates.
        public var feedOrder: Int
        /// One without a media file is filtered out.
        public var hasEnclosure: Bool
        /// Downloaded once (the ledger): never fetched again, unless its file is missing and `refetchMissing` says so.
        public var archived: Bool
        /// Not downloaded now, or its file is not on disk.
        public var fileMissing: Bool
        /// Its download was deleted on purpose (`monsoon delete`): not on disk, but not missing either.
        public var deleted = false

        public init(id: Int, title: String, published: Date?, feedOrder: Int, hasEnclosure: Bool, archived: Bool, fileMissing: Bool) {
            self.id = id
            self.title = title
            self.published = published
            self.feedOrder = feedOrder
            self.hasEnclosure = hasEnclosure
            self.archived = archived
            self.fileMissing = fileMissing
        }
    }

    /// In order.
    public var chosen: [Int] = []
    public var alreadyArchived: [Int] = []
    /// Of `alreadyArchived`, those whose file went behind Monsoon's back (not with `monsoon delete`): `refetchMissing`
    /// would fetch them.
    public var missingFromDisk: [Int] = []
    /// Why an episode was left out.
    public enum LeftOut: String, CaseIterable, Sendable {
        case noMediaFile, dates, pattern, latest, limit
    }

    /// By the filters (dates, patterns, the limit) or for having no media file, by why.
    public var leftOut: [LeftOut: Int] = [:]
    public var filteredOut: Int { leftOut.values.reduce(0, +) }

    /// - Parameters:
    ///   - since, until: publish days (UTC) to keep, both included; an undated episode is kept only without them.
    ///   - match, exclude: regular expressions on the title, case-insensitive.
    ///   - limit: at most this many downloads (episodes not archived yet), in the order chosen.
    ///   - latest: only the newest this many episodes that pass the filters, archived or not, so a run repeated with the
    ///     same feed fetches nothing more.
    public init(_ candidates: [Candidate], since: Date? = nil, until: Date? = nil, match: String? = nil, exclude: String? = nil,
                limit: Int? = nil, latest: Int? = nil, newestFirst: Bool = false, refetchMissing: Bool = false) throws(ArchiveSelectionError) {
        let matcher = try Self.regex(match, option: "--match")
        let excluder = try Self.regex(exclude, option: "--exclude")
        // Oldest first (undated at the end), the feed's own order among equals (newest first: a higher order is older).
        var ordered = candidates.sorted { a, b in Date?.publishedFirst(a.published, b.published) ?? (a.feedOrder > b.feedOrder) }
        // The newest `latest` of those the filters keep: the window, whatever of it is archived.
        var window: Set<Int>?
        if let latest {
            let kept = ordered.filter { Self.leftOut($0, since: since, until: until, matcher: matcher, excluder: excluder) == nil }
            window = Set(kept.suffix(latest).map(\.id))
        }
        if newestFirst { ordered.reverse() }
        for candidate in ordered {
            if let reason = Self.leftOut(candidate, since: since, until: until, matcher: matcher, excluder: excluder)
                ?? (window?.contains(candidate.id) == false ? .latest : nil) {
                leftOut[reason, default: 0] += 1
                continue
            }
            if candidate.archived && !(refetchMissing && candidate.fileMissing) {
                alreadyArchived.append(candidate.id)
                if candidate.fileMissing && !candidate.deleted { missingFromDisk.append(candidate.id) }
                continue
            }
            if let limit, chosen.count >= limit {
                leftOut[.limit, default: 0] += 1
                continue
            }
            chosen.append(candidate.id)
        }
    }

    /// Why the filters leave `candidate` out; nil: they keep it.
    private static func leftOut(_ candidate: Candidate, since: Date?, until: Date?, matcher: TitlePattern?, excluder: TitlePattern?) -> LeftOut? {
        guard candidate.hasEnclosure else { return .noMediaFile }
        if since != nil || until != nil {
            guard let published = candidate.published else { return .dates }
            if let since, published < since { return .dates }
            if let until, published >= until.addingTimeInterval(86_400) { return .dates }
        }
        if let matcher, !matcher.matches(candidate.title) { return .pattern }
        if let excluder, excluder.matches(candidate.title) { return .pattern }
        return nil
    }

    private static func regex(_ pattern: String?, option: String) throws(ArchiveSelectionError) -> TitlePattern? {
        guard let pattern else { return nil }
        do {
            return try TitlePattern(pattern)
        } catch {
            throw ArchiveSelectionError(.invalidPattern, "'\(pattern)' given to \(option) is not a regular expression it takes: \(error.reason); "
                                        + "see 'monsoon help archive' for the syntax")
        }
    }
}
