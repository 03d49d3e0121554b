import FoundationEssentials
import MonsoonEngine
import MonsoonPodcasts

/// A feed's items as a refresh of the shared library reads them, each placed against the episodes
/// the feed has in the library already, by the identity and the placement rules of the local
/// library (``EpisodePlacement``): known, new, or left out. Then the archive's choice among them,
/// and the names of the new ones. Pure decisions: no I/O.
///
/// Memory: the known items keep only what choosing needs (title, date, place); the new ones what
/// their rows and names need. Never a whole `ParsedEpisode`.
struct FeedEpisodes {
    /// An episode the library has for the feed.
    struct Stored {
        var identity: String
        var enclosureURL: String?
        var guid: String?
        /// Its path in the feed's folder, without the extension.
        var fileName: String?
    }

    /// What a new item's row and name need.
    struct Details {
        var guid: String?
        var enclosureURL: URL?
        var mediaType: String?
        var declaredLength: Int?
        var link: URL?
        var season: Int?
        var episodeNumber: Int?
    }

    struct Item {
        /// The identity it is (or will be) stored under.
        var identity: String
        /// The library has it (queued by an earlier refresh).
        var known: Bool
        /// Waiting for the end of the feed to be placed (see ``EpisodePlacement/Decision/waiting``).
        var waiting = false
        var title: String?
        var published: Date?
        var hasEnclosure: Bool
        /// Its place among all the pages' items, from 0.
        var order: Int
        /// The page it came on, from 1.
        var page: Int
        /// Nil for a known item.
        var details: Details?
    }

    /// The row placement compares an item with.
    private struct Match: StoredRecording {
        var sameEnclosure: Bool
        var otherEnclosure: String?
    }

    private(set) var items: [Item] = []
    private var placement: EpisodePlacement
    private let stored: [String: Stored]
    private var formerTaken = Set<String>()
    private var order = 0
    /// Where the page being handed out began: the placement before it and the items count, to
    /// undo a page that turns out unreadable, as the library undoes it (its savepoint).
    private var pageStart: (page: Int, placement: EpisodePlacement, count: Int, order: Int)

    init(stored: [Stored]) {
        var byIdentity: [String: Stored] = [:]
        for episode in stored { byIdentity[episode.identity] = episode }
        self.stored = byIdentity
        placement = EpisodePlacement(recordingGuids: stored.compactMap { EpisodePlacement.isRecordingIdentity($0.identity, guid: $0.guid) ? $0.guid : nil })
        pageStart = (1, placement, 0, 0)
    }

    /// Places a batch of page `page`'s items, in feed order.
    mutating func add(_ batch: [ParsedEpisode], page: Int) {
        if page != pageStart.page { pageStart = (page, placement, items.count, order) }
        for episode in batch {
            defer { order += 1 }
            let enclosure = episode.enclosureURL?.absoluteString
            let decision = placement.place(episode) { identity in
                stored[identity].map { Match(sameEnclosure: $0.enclosureURL == enclosure, otherEnclosure: $0.enclosureURL == enclosure ? nil : $0.enclosureURL) }
            }
            var item = Item(identity: episode.identity, known: false, title: episode.title, published: episode.published,
                            hasEnclosure: episode.enclosureURL != nil, order: order, page: page)
            switch decision {
            case .row(let identity, let row):
                item.identity = identity
                item.known = row != nil
                // Stored by the parser before issue 50 under another identity: the same episode, kept under that one
                // (by the first item that had it, as the library's own refresh re-keys that row to the first).
                if row == nil, let former = episode.formerIdentity, stored[former] != nil, formerTaken.insert(former).inserted {
                    item.identity = former
                    item.known = true
                }
            case .waiting:
                item.waiting = true
            case .leftOut:
                continue
            }
            if !item.known {
                item.details = Details(guid: episode.guid, enclosureURL: episode.enclosureURL, mediaType: episode.mediaType, declaredLength: episode.declaredLength,
                                       link: episode.link, season: episode.season, episodeNumber: episode.episodeNumber)
            }
            items.append(item)
        }
    }

    /// Undoes what the pages after the first `pages` handed out (a page that could not be read).
    mutating func keepPages(_ pages: Int) {
        guard pageStart.page > pages else { return }
        placement = pageStart.placement
        items.removeLast(items.count - pageStart.count)
        order = pageStart.order
    }

    /// Places the items that waited, once every page was read: each is its guid's stored episode
    /// re-uploaded (known), or a recording of its own (new), or left out.
    mutating func settle() {
        var kept: [Item] = []
        kept.reserveCapacity(items.count)
        for var item in items {
            if item.waiting, let guid = item.details?.guid, let enclosure = item.details?.enclosureURL {
                item.waiting = false
                switch placement.settle(guid: guid, enclosure: enclosure.absoluteString, isStored: { stored[$0] != nil }) {
                case .plainRow:
                    item.identity = guid
                    item.known = true
                    item.details = nil
                case .recording(let identity):
                    item.identity = identity
                case .leftOut:
                    continue
                }
            }
            kept.append(item)
        }
        items = kept
    }

    /// The new items to queue (indexes into ``items``), in the order of their claims, as
    /// `archive` chooses with `rules`: the known ones count as archived. An item whose media file
    /// is not an http or https URL is chosen as `archive` chooses it, then left out (archive
    /// refuses to download it); `refused` counts those.
    func chosen(by rules: ArchiveRules) throws(SharedLibraryError) -> (chosen: [Int], refused: Int) {
        let candidates = items.enumerated().map { index, item in
            ArchiveSelection.Candidate(id: index, title: item.title ?? item.identity, published: item.published, feedOrder: item.order,
                                       hasEnclosure: item.hasEnclosure, archived: item.known, fileMissing: false)
        }
        let chosen = try rules.select(candidates)
        let downloadable = chosen.filter { items[$0].details?.enclosureURL.map(DownloadRequest.isDownloadable) ?? false }
        return (downloadable, chosen.count - downloadable.count)
    }

    /// The file name (path in the feed's folder, without the extension) of each new item, by
    /// index: as `archive` names them (the template, its `{podcast}` the folder's name, then
    /// numbered where names collide), around the names the feed's stored episodes have for good.
    func fileNames(folder: String, naming: NamingTemplate) -> [Int: String] {
        var candidates: [NameCollisions.Candidate] = []
        var folders: [Int: [String]] = [:]
        for (index, item) in items.enumerated() where !item.known {
            let details = item.details
            let rendered = naming.render(NamingValues(podcast: folder, title: item.title ?? item.identity, published: item.published,
                                                      guid: details?.guid, season: details?.season, episode: details?.episodeNumber))
            // The first folder is `{podcast}`'s: the feed's own, whatever the title renders to.
            let inFolder = [folder] + rendered.folders.dropFirst()
            folders[index] = inFolder
            candidates.append(.init(id: index, folders: inFolder, stem: rendered.stem, published: item.published, guid: details?.guid))
        }
        let used = Set(stored.values.compactMap { $0.fileName.map { folder + "/" + $0 } })
        let stems = NameCollisions.resolve(candidates, around: used)
        var names: [Int: String] = [:]
        for (index, stem) in stems {
            names[index] = (folders[index, default: [folder]].dropFirst() + [stem]).joined(separator: "/")
        }
        return names
    }
}

extension EpisodeMetadata {
    /// A new item's metadata.
    init(_ item: FeedEpisodes.Item) {
        self.init(title: item.title, guid: item.details?.guid, published: item.published.map(UTCDate.iso), mediaType: item.details?.mediaType,
                  link: item.details?.link?.absoluteString)
    }
}
