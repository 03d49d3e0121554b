import FoundationEssentials

/// An item's fields while it is read. Ranks say which source a value came from (lower is preferred:
/// `pubDate` over `dc:date` over Atom's `updated` over Atom 0.3's `created`; `description` over `itunes:summary` over `content:encoded`).
struct ItemDraft {
    var guid: String?
    /// RSS 1.0's `rdf:about`: the item's identity, as a guid is.
    var about: String?
    /// The `<guid>` is a permalink (`isPermaLink` absent or true): the link when the item has none.
    var guidIsPermaLink = false
    var title: String?
    var itunesTitle: String?
    var dcTitle: String?
    var link: URL?
    var published: Date?
    var dateRank = Int.max
    /// The date as written, when no date could be parsed (for the identity of items without guid, enclosure and link).
    var dateText: String?
    var summary: String?
    var summaryRank = Int.max
    var enclosureURL: URL?
    var mediaType: String?
    var declaredLength: Int?
    /// 0: audio or video; 1: no type or a generic binary type; 2 and 3: the same from `media:content`; Int.max: none yet.
    var enclosureRank = Int.max
    /// The enclosure the parser chose before issue 50 (its ranks 0 and 1), for ``ParsedEpisode/formerIdentity``.
    var formerEnclosureURL: URL?
    var formerEnclosureRank = Int.max
    var duration: Int?
    var season: Int?
    var episodeNumber: Int?
    var imageURL: URL?
    var imageRank = Int.max
    var transcriptURL: URL?
    var transcripts: [ParsedEpisode.Transcript] = []
    var chaptersURL: URL?
    var explicit: Bool?
}

extension FeedBuilder {
    func channelChild(_ element: FeedElement, _ attributes: SAXAttributes, depth: Int) {
        switch element {
        case .item, .atomEntry:
            startItem(depth: depth)
            item.about = attributes.rdfAbout
            if cdfDocument {
                item.link = resolve(attributes["HREF"])
                if let date = attributes.bytes("LASTMOD").flatMap(FeedDate.parse(bytes:)) {
                    item.published = date
                    item.dateRank = 2
                }
            }
        case .title, .atomTitle:
            if feedTitleRank > 0 {
                capture(.feedTitle, rank: 0)
                if element == .atomTitle { atomTitleType(attributes) }
            }
        case .dcTitle:
            if feedTitleRank > 1 { capture(.feedTitle, rank: 1) }
        case .link:
            if feed.link == nil { capture(.feedLink) }
        case .atomLink:
            let rel = attributes.bytes("rel")
            if let rel, ASCIIBytes.equalsIgnoringCase(rel, "next") {
                if feed.nextPageURL == nil { feed.nextPageURL = resolve(attributes["href"]) }
            } else if rel.map({ ASCIIBytes.equalsIgnoringCase($0, "alternate") }) ?? true, feed.link == nil {
                feed.link = resolve(attributes["href"])
            }
        case .description, .atomSubtitle:
            if feedDescriptionRank > 1 {
                capture(.feedDescription, rank: 1, markup: true)
                if element == .atomSubtitle { captureBase64 = Self.isBase64(attributes) }
            }
        case .itunesSummary:
            if feedDescriptionRank > 2 { capture(.feedDescription, rank: 2, markup: true) }
        case .language:
            if feed.language == nil { capture(.feedLanguage) }
        case .itunesImage, .itunesLink:
            guard element == .itunesImage || Self.isImageLink(attributes) else { break }
            if let href = attributes["href"] ?? attributes["url"], let url = resolve(href) {
                if artworkRank > 0 {
                    feed.artworkURL = url
                    artworkRank = 0
                }
            } else if artworkRank > 0 {
                capture(.feedArtwork, rank: 0)
            }
        case .atomLogo:
            if artworkRank > 2 { capture(.feedArtwork, rank: 2) }
        case .atomIcon:
            if artworkRank > 3 { capture(.feedArtwork, rank: 3) }
        case .itunesAuthor:
            if authorRank > 0 { capture(.feedAuthor, rank: 0) }
        case .dcCreator:
            if authorRank > 1 { capture(.feedAuthor, rank: 1) }
        case .managingEditor:
            if authorRank > 2 { capture(.feedAuthor, rank: 2) }
        case .itunesNewFeedURL:
            if feed.newFeedURL == nil { capture(.feedNewURL) }
        case .podcastGUID:
            if feed.podcastGUID == nil { capture(.feedPodcastGUID) }
        default:
            break
        }
    }

    func itemChild(_ element: FeedElement, _ attributes: SAXAttributes) {
        switch element {
        case .title, .atomTitle:
            if item.title == nil {
                capture(.itemTitle)
                if element == .atomTitle { atomTitleType(attributes) }
            }
        case .itunesTitle:
            // Only stands in for a missing title: not read once the item has one.
            if item.itunesTitle == nil, item.title == nil { capture(.itemItunesTitle) }
        case .dcTitle:
            if item.dcTitle == nil, item.title == nil, item.itunesTitle == nil { capture(.itemDCTitle) }
        case .link:
            if let rel = attributes.bytes("rel"), ASCIIBytes.equalsIgnoringCase(rel, "enclosure") {
                // Podlove's `<link rel="enclosure" href=…>`, without Atom's namespace.
                enclosure(url: attributes.bytes("href"), type: attributes.bytes("type"), length: attributes.bytes("length"), medium: nil, former: false)
            } else if item.link == nil {
                capture(.itemLink)
            }
        case .atomLink:
            let rel = attributes.bytes("rel")
            if let rel, ASCIIBytes.equalsIgnoringCase(rel, "enclosure") {
                enclosure(url: attributes.bytes("href"), type: attributes.bytes("type"), length: attributes.bytes("length"), medium: nil)
            } else if rel.map({ ASCIIBytes.equalsIgnoringCase($0, "alternate") }) ?? true, item.link == nil {
                item.link = resolve(attributes["href"])
            }
        case .guid, .atomID:
            if item.guid == nil {
                capture(.itemGUID)
                item.guidIsPermaLink = element == .guid && attributes.bytes("isPermaLink").map { ASCIIBytes.equalsIgnoringCase($0, "true") } ?? true
            }
        // Of two dates from one source, the later written wins (Atom 0.3's `issued` then 1.0's `published`).
        case .pubDate, .atomPublished:
            if item.dateRank >= 0 { capture(.itemDate, rank: 0) }
        case .dcDate:
            if item.dateRank >= 1 { capture(.itemDate, rank: 1) }
        case .atomUpdated:
            if item.dateRank >= 2 { capture(.itemDate, rank: 2) }
        case .atomCreated:
            // Atom 0.3's `created`, when a draft was begun: a date only where nothing else gives one.
            if item.dateRank >= 3 { capture(.itemDate, rank: 3) }
        case .description, .atomSummary:
            if item.summaryRank > 1 {
                capture(.itemSummary, rank: 1, markup: true)
                if element == .atomSummary { captureBase64 = Self.isBase64(attributes) }
            }
        case .itunesSummary, .atomContent:
            if item.summaryRank > 2 {
                capture(.itemSummary, rank: 2, markup: true)
                if element == .atomContent { captureBase64 = Self.isBase64(attributes) }
            }
        case .contentEncoded:
            if item.summaryRank > 3 { capture(.itemSummary, rank: 3, markup: true) }
        case .mediaDescription:
            if item.summaryRank > 4 { capture(.itemSummary, rank: 4, markup: true) }
        case .enclosure:
            enclosure(url: attributes.bytes("url"), type: attributes.bytes("type"), length: attributes.bytes("length"), medium: nil)
        case .mediaContent:
            mediaContent(attributes)
        case .itunesImage, .itunesLink:
            if item.imageRank > 0, element == .itunesImage || Self.isImageLink(attributes), let url = resolve(attributes["href"] ?? attributes["url"]) {
                item.imageURL = url
                item.imageRank = 0
            }
        case .mediaThumbnail:
            if item.imageRank > 1, let url = resolve(attributes["url"]) {
                item.imageURL = url
                item.imageRank = 1
            }
        case .itunesDuration:
            if item.duration == nil { capture(.itemDuration) }
        case .itunesSeason:
            if item.season == nil { capture(.itemSeason) }
        case .itunesEpisode:
            if item.episodeNumber == nil { capture(.itemEpisode) }
        case .itunesExplicit:
            if item.explicit == nil { capture(.itemExplicit) }
        case .podcastTranscript:
            if let url = resolve(attributes["url"]), item.transcripts.count < ParsedEpisode.Transcript.limit {
                if item.transcriptURL == nil { item.transcriptURL = url }
                item.transcripts.append(.init(url: url, type: attributes["type"], language: attributes["language"], rel: attributes["rel"]))
            }
        case .podcastChapters:
            if item.chaptersURL == nil { item.chaptersURL = resolve(attributes["url"]) }
        default:
            break
        }
    }

    /// Only without an enclosure, and never a placeholder under 1 KiB (Channel 9's `fileSize="1"`; 0 means unknown).
    func mediaContent(_ attributes: SAXAttributes) {
        let length = attributes.bytes("fileSize")
        let placeholder = length.flatMap(ASCIIBytes.integer).map { (1..<1024).contains($0) } ?? false
        enclosure(url: attributes.bytes("url"), type: attributes.bytes("type"), length: length, medium: attributes.bytes("medium"),
                  fromMedia: true, current: !placeholder)
    }

    /// Offers an enclosure: the first audio or video one wins (`x-audio/mp3` too, and a generic binary type or none
    /// with a media file's extension); failing that, the first without a type (or with a generic binary type). Any
    /// `enclosure` wins over any `media:content`. Images, documents and web pages are never the episode's media.
    func enclosure(url: UnsafeBufferPointer<UInt8>?, type: UnsafeBufferPointer<UInt8>?, length: UnsafeBufferPointer<UInt8>?,
                   medium: UnsafeBufferPointer<UInt8>?, fromMedia: Bool = false, current: Bool = true, former: Bool = true) {
        guard item.enclosureRank > 0 || item.formerEnclosureRank > 0, let url else { return }
        let type = type.map(ASCIIBytes.trimmed) ?? UnsafeBufferPointer(start: nil, count: 0)
        let medium = medium.map(ASCIIBytes.trimmed) ?? UnsafeBufferPointer(start: nil, count: 0)
        let generic = type.isEmpty || ASCIIBytes.hasSuffixIgnoringCase(type, "octet-stream")
        guard let resolved = resolve(ASCIIBytes.string(url)) else { return }
        let media = ASCIIBytes.hasPrefixIgnoringCase(type, "audio/") || ASCIIBytes.hasPrefixIgnoringCase(type, "video/")
            || ASCIIBytes.equalsIgnoringCase(type, "application/ogg")
            || (generic && (ASCIIBytes.equalsIgnoringCase(medium, "audio") || ASCIIBytes.equalsIgnoringCase(medium, "video")))
        var rank: Int
        if media || ASCIIBytes.hasPrefixIgnoringCase(type, "x-audio/") || ASCIIBytes.hasPrefixIgnoringCase(type, "x-video/")
            || (generic && Self.mediaExtensions.contains(resolved.pathExtension.lowercased())) {
            rank = 0
        } else if generic && medium.isEmpty {
            rank = 1
        } else {
            return
        }
        let formerRank = media ? 0 : generic && medium.isEmpty ? 1 : Int.max
        if former, formerRank < item.formerEnclosureRank {
            item.formerEnclosureURL = resolved
            item.formerEnclosureRank = formerRank
        }
        if fromMedia { rank += 2 }
        guard current, rank < item.enclosureRank else { return }
        item.enclosureURL = resolved
        item.mediaType = type.isEmpty ? nil : ASCIIBytes.string(type)
        item.declaredLength = length.flatMap(ASCIIBytes.integer).flatMap { $0 > 0 ? $0 : nil }
        item.enclosureRank = rank
    }

    private static let mediaExtensions: Set<String> = ["mp3", "m4a", "m4b", "aac", "ogg", "oga", "opus", "flac", "wav", "wma",
                                                       "mp4", "m4v", "mov", "webm", "mkv", "avi", "wmv", "mpg", "mpeg", "3gp"]

    var capturedString: String { String(decoding: text, as: UTF8.self) }

    func finishCapture() {
        let finished = field
        field = .none
        if captureBase64 {
            // An Atom text in base64: its decoded bytes are the text (kept as written when they are
            // not base64 of UTF-8 text).
            if let decoded = Data(base64Encoded: capturedString, options: .ignoreUnknownCharacters), String(data: decoded, encoding: .utf8) != nil {
                text = Array(decoded)
            }
            captureBase64 = false
        }
        let limit = switch finished {
        case .feedTitle, .feedAuthor, .itemTitle, .itemItunesTitle, .itemDCTitle: limits.maxTitleBytes
        default: limits.maxTextBytes
        }
        if text.count > limit { cutText(to: limit) }
        let xhtml = captureLiteral
        captureLiteral = false
        switch finished {
        case .none:
            break
        case .feedTitle:
            if let title = xhtml ? FeedText.collapseWhitespace(capturedString) : FeedText.title(capturedString) {
                feed.title = title
                feedTitleRank = captureRank
            }
        case .feedLink:
            feed.link = resolve(capturedString)
        case .feedDescription:
            if let description = FeedText.trimmed(capturedString) {
                feed.description = description
                feedDescriptionRank = captureRank
            }
        case .feedLanguage:
            feed.language = FeedText.trimmed(capturedString)
        case .feedArtwork:
            if let url = resolve(capturedString) {
                feed.artworkURL = url
                artworkRank = captureRank
            }
        case .feedAuthor:
            if let author = FeedText.title(capturedString) {
                feed.author = author
                authorRank = captureRank
            }
        case .feedNewURL:
            feed.newFeedURL = resolve(capturedString)
        case .feedPodcastGUID:
            feed.podcastGUID = FeedText.trimmed(capturedString)
        case .itemTitle:
            item.title = xhtml ? FeedText.collapseWhitespace(capturedString) : FeedText.title(capturedString)
        case .itemItunesTitle:
            item.itunesTitle = FeedText.title(capturedString)
        case .itemDCTitle:
            item.dcTitle = FeedText.title(capturedString)
        case .itemLink:
            item.link = resolve(capturedString)
        case .itemGUID:
            item.guid = FeedText.trimmed(capturedString)
        case .itemDate:
            if let date = text.withUnsafeBufferPointer(FeedDate.parse(bytes:)) {
                item.published = date
                item.dateRank = captureRank
            } else if item.dateText == nil {
                item.dateText = FeedText.trimmed(capturedString)
            }
        case .itemSummary:
            if let summary = FeedText.trimmed(capturedString) {
                item.summary = summary
                item.summaryRank = captureRank
            }
        case .itemDuration:
            item.duration = text.withUnsafeBufferPointer(EpisodeDuration.parse(bytes:))
        case .itemSeason:
            item.season = capturedInteger()
        case .itemEpisode:
            item.episodeNumber = capturedInteger()
        case .itemExplicit:
            item.explicit = text.withUnsafeBufferPointer { bytes in
                if ASCIIBytes.equalsIgnoringCase(bytes, "yes") || ASCIIBytes.equalsIgnoringCase(bytes, "true")
                    || ASCIIBytes.equalsIgnoringCase(bytes, "explicit") { return true }
                if ASCIIBytes.equalsIgnoringCase(bytes, "no") || ASCIIBytes.equalsIgnoringCase(bytes, "false")
                    || ASCIIBytes.equalsIgnoringCase(bytes, "clean") { return false }
                return nil
            }
        }
    }

    /// Cuts the text to `limit` bytes, at the start of a character, and ends it with `…`: a feed
    /// that carries a text of many megabytes is still read, its text cut where no one reads on (a
    /// 10 MB title made `monsoon archive` take 330 MB and 9 s, naming files after it).
    private func cutText(to limit: Int) {
        var end = limit
        // A byte 10xxxxxx continues a character that starts before it.
        while end > 0, text[end] & 0xC0 == 0x80 { end -= 1 }
        text.removeSubrange(end...)
        text.append(contentsOf: "…".utf8)
    }

    /// A non-negative whole number, surrounding whitespace allowed.
    private func capturedInteger() -> Int? {
        text.withUnsafeBufferPointer(ASCIIBytes.integer)
    }

    func finishItem() {
        itemDepth = -1
        finishedItems += 1
        guard finishedItems > skipping else { return }
        let title = item.title ?? item.itunesTitle ?? item.dcTitle
        let dateText = item.published.map(FeedDate.iso8601String) ?? item.dateText
        let former = EpisodeIdentity.identity(guid: item.guid, enclosureURL: item.formerEnclosureURL, link: item.link, title: title, dateText: dateText)
        if item.guid == nil { item.guid = item.about }
        if item.link == nil, item.guidIsPermaLink, let guid = item.guid,
           guid.hasPrefix("http://") || guid.hasPrefix("https://") { item.link = URL(string: guid) }
        let own = EpisodeIdentity.identity(guid: item.guid, enclosureURL: item.enclosureURL, link: item.link, title: title, dateText: dateText)
        guard let identity = identities.admit(own, guid: item.guid, enclosureURL: item.enclosureURL) else {
            feed.duplicateCount += 1
            return
        }
        // After the identity: a name made up here must never change it.
        feed.episodes.append(ParsedEpisode(
            guid: item.guid, identity: identity, title: title ?? FallbackName.episode(enclosureURL: item.enclosureURL), enclosureURL: item.enclosureURL, mediaType: item.mediaType,
            declaredLength: item.declaredLength, published: item.published, duration: item.duration, season: item.season,
            episodeNumber: item.episodeNumber, summary: item.summary, link: item.link, imageURL: item.imageURL,
            transcriptURL: item.transcriptURL, transcripts: item.transcripts, chaptersURL: item.chaptersURL, explicit: item.explicit,
            formerIdentity: former == own ? nil : former))
        if feed.episodes.count >= batchSize { deliver() }
    }
}

extension FeedBuilder {
    /// An Atom title's type: base64 to decode; or XHTML (Atom 0.3's `application/xhtml+xml` in its `xml` mode) or
    /// declared plain text, whose text (`&lt;` already read once, by XML) is the title as written: never stripped of
    /// tags or decoded again. Without a type, a title is read as the HTML publishers often put there.
    func atomTitleType(_ attributes: SAXAttributes) {
        captureBase64 = Self.isBase64(attributes)
        let mode = attributes.bytes("mode")
        guard !captureBase64, mode.map({ ASCIIBytes.equalsIgnoringCase($0, "xml") }) ?? true, let type = attributes.bytes("type") else { return }
        let literal: [StaticString] = ["xhtml", "application/xhtml+xml", "text", "text/plain"]
        captureLiteral = literal.contains { ASCIIBytes.equalsIgnoringCase(type, $0) }
    }

    /// `<itunes:link rel="image" href=…>`, iTunes' older form of its image.
    static func isImageLink(_ attributes: SAXAttributes) -> Bool {
        attributes.bytes("rel").map { ASCIIBytes.equalsIgnoringCase(ASCIIBytes.trimmed($0), "image") } ?? false
    }

    /// An Atom text construct whose text is base64: `type="base64"`, Atom 0.3's `mode="base64"`, or Atom 1.0's media
    /// type that is neither text nor XML (`application/octet-stream`, RFC 4287 4.1.3.3). Any other type (`text`, `html`,
    /// `xhtml`, `text/plain`, none, an empty one) is read as text.
    static func isBase64(_ attributes: SAXAttributes) -> Bool {
        if attributes.bytes("mode").map({ ASCIIBytes.equalsIgnoringCase($0, "base64") }) == true { return true }
        guard let type = attributes.bytes("type").map(ASCIIBytes.trimmed) else { return false }
        return ASCIIBytes.equalsIgnoringCase(type, "base64")
            || (type.contains(UInt8(ascii: "/")) && !ASCIIBytes.hasPrefixIgnoringCase(type, "text/")
                && !ASCIIBytes.hasSuffixIgnoringCase(type, "xml"))
    }
}
