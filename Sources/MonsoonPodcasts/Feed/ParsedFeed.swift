import FoundationEssentials

/// The syntax a feed document was written in. RSS 0.9x, 1.0 (RDF) and 2.0 are all `.rss`.
///
/// `@nonexhaustive`: more syntaxes may be read (JSON Feed), so a `switch` outside this package needs a `default`.
@nonexhaustive
public enum FeedKind: String, Sendable {
    case rss, atom
}

/// One feed document as read by ``FeedParser``. Texts are cleaned as documented on each field; URLs are absolute
/// (resolved against `xml:base` and the document's URL).
public struct ParsedFeed: Sendable, Equatable {
    public var kind: FeedKind
    /// The show's title: trimmed, inner whitespace collapsed, HTML tags stripped, entities decoded.
    public var title: String?
    /// `itunes:author`, else `dc:creator`, `managingEditor` (or the channel's `author`), `itunes:owner/itunes:name` or the
    /// Atom author's name.
    public var author: String?
    /// RSS `description` (else `itunes:summary`), Atom `subtitle`: entities decoded, CDATA unwrapped, HTML kept as text, trimmed.
    public var description: String?
    /// The show's web page: RSS `link`, Atom `link rel="alternate"`.
    public var link: URL?
    /// `itunes:image href`, else the RSS `image/url`, else the Atom `logo` or `icon`.
    public var artworkURL: URL?
    /// The feed's `language` or `dc:language` (a code such as `en-us`), trimmed, as written; Atom's root `xml:lang`, with
    /// `_` written `-`.
    public var language: String?
    /// `itunes:new-feed-url`: the publisher moved the feed there.
    public var newFeedURL: URL?
    /// `atom:link rel="next"` (RFC 5005 paging): the next page of the back catalogue.
    public var nextPageURL: URL?
    public var podcastGUID: String?
    /// The items in feed order, without those that repeat an earlier one (the same guid and enclosure, see ``EpisodeIdentity``).
    public var episodes: [ParsedEpisode] = []
    /// How many items were left out of ``episodes`` as duplicates.
    public var duplicateCount: Int = 0
    /// What was repaired to read the feed as its publisher meant it, one sentence each: text before the feed skipped, a
    /// mislabelled encoding, closing tags cut off. Empty for a feed read as written.
    public var repairs: [String] = []
}

/// One `<item>` (RSS) or `<entry>` (Atom) of a feed.
public struct ParsedEpisode: Sendable, Equatable {
    /// `<guid>` (Atom: `<id>`) as written, trimmed; nil when absent or empty.
    public var guid: String?
    /// Across refreshes: the guid; else the enclosure URL normalized (``EpisodeIdentity/normalizedEnclosureURL(_:)``);
    /// else the link; else the title and date. A later item re-using a guid with another enclosure is another
    /// recording: `guid:GUID|enclosure:URL`. Never empty.
    public var identity: String
    /// `title`, else `itunes:title`, `dc:title` or `media:title`, else the enclosure's file name without its extension;
    /// cleaned as the feed's title.
    public var title: String?
    /// The first audio or video enclosure (RSS `enclosure`, `media:content`, Atom `link rel="enclosure"`); without one,
    /// the first that gives no type (or a generic binary type).
    public var enclosureURL: URL?
    public var mediaType: String?
    /// The chosen enclosure's declared length in bytes; nil when missing, not a number, or 0.
    public var declaredLength: Int?
    /// `pubDate`, `dc:date`, Atom `published` else `updated`; nil when missing or unparseable.
    public var published: Date?
    /// `itunes:duration` in whole seconds; nil when missing or not understood.
    public var duration: Int?
    /// `itunes:season`; nil when missing or not a number.
    public var season: Int?
    /// `itunes:episode`; nil when missing or not a number.
    public var episodeNumber: Int?
    /// RSS `description`, else `itunes:summary`, else `content:encoded`; Atom `summary`, else `content`; as the feed's.
    public var summary: String?
    /// The episode's web page: RSS `link`, Atom `link rel="alternate"`.
    public var link: URL?
    /// `itunes:image href`, else `media:thumbnail url`.
    public var imageURL: URL?
    /// The first `podcast:transcript url`.
    public var transcriptURL: URL?
    /// Up to ``Transcript/limit``: a show often offers the same words as WebVTT, SRT, JSON and HTML.
    public var transcripts: [Transcript] = []
    /// `podcast:chapters url`.
    public var chaptersURL: URL?
    /// `itunes:explicit`: true for yes/true/explicit, false for no/false/clean, nil otherwise.
    public var explicit: Bool?
    /// The identity the parser before issue 50 gave the item (before `rdf:about` was a guid and `<enclosure>` beat
    /// `media:content`) when it differs: a library stored then still finds the episode under it.
    public var formerIdentity: String?
}

extension ParsedEpisode {
    /// One `podcast:transcript`: where it is and what it says of itself.
    public struct Transcript: Sendable, Equatable, Codable {
        /// At most this many per item: a hostile feed's thousands of them cost nothing.
        public static let limit = 16
        /// An attribute longer than this is cut (a media type or a language code is short).
        static let attributeLimit = 200

        public var url: URL
        /// `type`: its media type (`text/vtt`, `application/srt`, `application/json`, `text/html`).
        public var type: String?
        public var language: String?
        /// `rel`: `captions` when it is meant as closed captions.
        public var rel: String?

        /// A transcript with the given attributes; empty ones are left out and long ones cut.
        public init(url: URL, type: String? = nil, language: String? = nil, rel: String? = nil) {
            self.url = url
            self.type = Self.attribute(type)
            self.language = Self.attribute(language)
            self.rel = Self.attribute(rel)
        }

        // The URL as its text: Foundation's own coding of a URL is an object, not what a reader expects.
        private enum CodingKeys: String, CodingKey { case url, type, language, rel }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let text = try container.decode(String.self, forKey: .url)
            guard let url = URL(string: text) else {
                throw DecodingError.dataCorruptedError(forKey: .url, in: container, debugDescription: "not a URL: \(text)")
            }
            self.init(url: url, type: try container.decodeIfPresent(String.self, forKey: .type),
                      language: try container.decodeIfPresent(String.self, forKey: .language), rel: try container.decodeIfPresent(String.self, forKey: .rel))
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(url.absoluteString, forKey: .url)
            try container.encodeIfPresent(type, forKey: .type)
            try container.encodeIfPresent(language, forKey: .language)
            try container.encodeIfPresent(rel, forKey: .rel)
        }

        private static func attribute(_ text: String?) -> String? {
            guard let trimmed = text?.trimmingWhitespace(), !trimmed.isEmpty else { return nil }
            return String(trimmed.prefix(attributeLimit))
        }
    }
}
