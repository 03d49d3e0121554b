import CLibXML2

/// The elements the feed parser reads, by namespace and local name; everything else is `.other`.
enum FeedElement: UInt8 {
    case other
    // RSS (no namespace, RSS 1.0 or 0.90) and RDF.
    case rss, rdf, channel, item, title, link, description, language, image, url, guid, pubDate, enclosure, managingEditor
    // Atom (1.0 and 0.3).
    case atomFeed, atomEntry, atomTitle, atomLink, atomID, atomPublished, atomUpdated, atomCreated, atomSummary, atomContent,
         atomAuthor, atomName, atomLogo, atomIcon, atomSubtitle
    // iTunes.
    case itunesImage, itunesLink, itunesAuthor, itunesDuration, itunesSeason, itunesEpisode, itunesExplicit, itunesNewFeedURL,
         itunesSummary, itunesTitle, itunesOwner, itunesName
    // Podcast Index.
    case podcastGUID, podcastTranscript, podcastChapters
    // Media RSS, content, Dublin Core.
    case mediaContent, mediaGroup, mediaThumbnail, mediaDescription, contentEncoded, dcCreator, dcDate, dcTitle

    enum Namespace {
        case core, atom, itunes, podcast, media, content, dc, rdf, other
    }

    /// As feeds write it (the iTunes URI in any case, with or without `www`).
    static func namespace(uri: String) -> Namespace? {
        let lowered = uri.lowercased()
        switch lowered {
        case "http://www.w3.org/2005/atom", "http://purl.org/atom/ns#": return .atom
        case "http://purl.org/rss/1.0/", "http://my.netscape.com/rdf/simple/0.9/", "http://backend.userland.com/rss2",
             "http://blogs.law.harvard.edu/tech/rss": return .core
        case "http://search.yahoo.com/mrss/", "http://search.yahoo.com/mrss": return .media
        case "http://purl.org/rss/1.0/modules/content/": return .content
        case "http://purl.org/dc/elements/1.1/", "http://purl.org/dc/terms/": return .dc
        case "http://www.w3.org/1999/02/22-rdf-syntax-ns#": return .rdf
        default:
            if holds(lowered, "itunes.com/dtds/podcast") { return .itunes }
            if holds(lowered, "podcastindex") || holds(lowered, "podcast-namespace") { return .podcast }
            return nil
        }
    }

    /// Whether `text` holds `part`, byte for byte (`String.contains` compares characters through
    /// the generic collection search: tens of thousands of instructions a call).
    private static func holds(_ text: String, _ part: StaticString) -> Bool {
        var text = text
        return text.withUTF8 { ByteScanner.firstRange(of: part, in: $0[...]) != nil }
    }

    /// For prefixes publishers use without declaring them (or declare with a wrong URI).
    static func namespace(prefix: String) -> Namespace {
        switch prefix.lowercased() {
        case "itunes": return .itunes
        case "podcast": return .podcast
        case "media": return .media
        case "content": return .content
        case "dc", "dcterms": return .dc
        case "atom", "atom10": return .atom
        case "rdf": return .rdf
        default: return .other
        }
    }

    /// `atomDocument` makes un-namespaced elements Atom (a feed that forgot its xmlns).
    static func classify(localname: UnsafePointer<xmlChar>, prefix: UnsafePointer<xmlChar>?, uri: UnsafePointer<xmlChar>?,
                         atomDocument: Bool) -> FeedElement {
        let name = String(cString: localname)
        let prefixName = prefix.map { String(cString: $0) }
        var namespace: Namespace
        if let uri {
            namespace = self.namespace(uri: String(cString: uri)) ?? (prefixName.map(self.namespace(prefix:)) ?? .core)
        } else if let prefixName {
            namespace = self.namespace(prefix: prefixName)
        } else {
            namespace = .core
        }
        if atomDocument, namespace == .core { namespace = .atom }
        switch namespace {
        case .core:
            // In any case (`<TiTlE>`), as Apple's podcast directory reads RSS's own elements.
            switch name.lowercased() {
            case "rss": return .rss
            case "channel": return .channel
            case "item": return .item
            case "title": return .title
            case "link": return .link
            case "description": return .description
            case "language": return .language
            case "image": return .image
            case "url": return .url
            case "guid": return .guid
            case "pubdate": return .pubDate
            case "enclosure": return .enclosure
            case "managingeditor", "author": return .managingEditor
            case "feed": return .atomFeed
            default: return .other
            }
        case .atom:
            switch name {
            case "feed": return .atomFeed
            case "entry": return .atomEntry
            case "title": return .atomTitle
            case "link": return .atomLink
            case "id": return .atomID
            case "published", "issued": return .atomPublished
            case "created": return .atomCreated
            case "updated", "modified": return .atomUpdated
            case "summary": return .atomSummary
            case "content": return .atomContent
            case "author": return .atomAuthor
            case "name": return .atomName
            case "logo": return .atomLogo
            case "icon": return .atomIcon
            case "subtitle", "tagline": return .atomSubtitle
            default: return .other
            }
        case .itunes:
            switch name.lowercased() {
            case "image": return .itunesImage
            case "link": return .itunesLink
            case "author": return .itunesAuthor
            case "duration": return .itunesDuration
            case "season": return .itunesSeason
            case "episode": return .itunesEpisode
            case "explicit": return .itunesExplicit
            case "new-feed-url": return .itunesNewFeedURL
            case "summary": return .itunesSummary
            case "title": return .itunesTitle
            case "owner": return .itunesOwner
            case "name": return .itunesName
            default: return .other
            }
        case .podcast:
            switch name {
            case "guid": return .podcastGUID
            case "transcript": return .podcastTranscript
            case "chapters": return .podcastChapters
            default: return .other
            }
        case .media:
            switch name {
            case "content": return .mediaContent
            case "group": return .mediaGroup
            case "thumbnail": return .mediaThumbnail
            case "description": return .mediaDescription
            case "title": return .dcTitle
            default: return .other
            }
        case .content:
            return name == "encoded" ? .contentEncoded : .other
        case .dc:
            switch name {
            case "creator": return .dcCreator
            case "date", "issued": return .dcDate
            case "modified": return .atomUpdated
            case "title": return .dcTitle
            case "language": return .language
            default: return .other
            }
        case .rdf:
            return name == "RDF" ? .rdf : .other
        case .other:
            return .other
        }
    }
}
