import FoundationEssentials
import MonsoonEngine
import MonsoonStore

/// What `--write-info-json` writes beside a downloaded file (`InfoSidecar`): the episode's feed fields, its podcast's,
/// and where the bytes came from. The field names are a contract (docs/REFERENCE.md's table): new ones may come, none is
/// renamed. A field with nothing to say is left out; every URL has its credentials redacted.
public struct EpisodeInfo: Codable, Sendable, Equatable {
    /// So a reader can tell a later format.
    public var format = "monsoon-info/1"
    /// The episode, as its feed describes it; nil for a plain download (`get`).
    public var episode: Episode?
    /// The podcast; nil for a plain download.
    public var podcast: Podcast?
    public var download: Download

    /// An episode's fields, as the library keeps them from its feed item.
    public struct Episode: Codable, Sendable, Equatable {
        public var id: Int
        public var title: String?
        public var guid: String?
        /// ISO 8601 in UTC, as every moment here.
        public var published: String?
        /// The item's description or show notes (HTML kept as text, as the feed has it).
        public var description: String?
        public var link: String?
        /// Whole seconds.
        public var duration: Int?
        /// `itunes:season`.
        public var season: Int?
        /// `itunes:episode`.
        public var episode: Int?
        public var image: String?
        /// `podcast:chapters`.
        public var chaptersURL: String?
        /// The item's first `podcast:transcript`.
        public var transcriptURL: String?
        /// Every `podcast:transcript` of the item, with its `type`, `language` and `rel` as written.
        public var transcripts: [ParsedEpisode.Transcript]?
        /// As the feed lists it, with its type and declared length.
        public var enclosureURL: String?
        public var mediaType: String?
        public var declaredLength: Int?
    }

    /// The podcast's fields, as the library keeps them from its feed.
    public struct Podcast: Codable, Sendable, Equatable {
        public var id: Int
        public var title: String?
        public var feedURL: String
        public var link: String?
        public var author: String?
        public var description: String?
        public var image: String?
        public var language: String?
    }

    /// Whether a URL of the download carries credentials: its sidecar is then private, as a private feed's copy is
    /// (`EpisodeQueue.carriesCredentials(podcast:in:)` for a podcast's).
    public static func carriesCredentials(_ download: MonsoonEngine.Download) -> Bool {
        Redaction.redact(download.request.url) != download.request.url.absoluteString
            || download.finalURL.map { Redaction.redact($0) != $0 } == true
    }

    public struct Download: Codable, Sendable, Equatable {
        /// In the sidecar's own folder.
        public var file: String
        /// The URL asked for; `finalURL` is the one the bytes came from after redirects.
        public var sourceURL: String
        public var finalURL: String?
        public var etag: String?
        public var lastModified: String?
        /// From the file itself, as `sha256`.
        public var bytes: Int
        public var sha256: String
        /// For an episode: when it was first archived.
        public var downloaded: String?
    }

    /// The SHA-256 the library keeps for episode `id`'s file, when it is of the file at `path` as it is now (same path,
    /// same size); nil otherwise.
    public static func knownSHA256(episode id: Int, path: String, in database: Database) throws -> String? {
        guard let size = LocalFile.size(at: path) else { return nil }
        guard let record = try EpisodeRecord.find(id, in: database), record.isDownloaded, record.episode.fileName == path,
              record.episode.bytesOnDisk == size else { return nil }
        return record.sha256
    }

    /// Adds the episode's fields and its podcast's; nothing for an episode the library no longer has.
    public mutating func describeEpisode(_ id: Int, in database: Database) throws {
        guard let record = try EpisodeRecord.find(id, in: database), let podcast = try PodcastRecord.find(record.episode.podcastID, in: database) else { return }
        let item = record.episode
        episode = Episode(id: id, title: item.title, guid: item.guid, published: item.published.map(UTCDate.iso), description: item.summary,
                          link: item.link.map(Redaction.redact), duration: item.duration, season: item.season, episode: item.episodeNumber,
                          image: item.imageURL.map(Redaction.redact), chaptersURL: item.chaptersURL.map(Redaction.redact),
                          transcriptURL: item.transcriptURL.map(Redaction.redact), transcripts: Self.transcripts(record.transcripts)?.compactMap(Self.redacted),
                          enclosureURL: item.enclosureURL.map(Redaction.redact), mediaType: item.mediaType, declaredLength: item.declaredLength)
        self.podcast = Podcast(id: podcast.id, title: podcast.title, feedURL: Redaction.redact(podcast.feedURL), link: podcast.link.map(Redaction.redact),
                               author: podcast.author, description: podcast.description, image: podcast.artworkURL.map(Redaction.redact), language: podcast.language)
        if let archived = record.archivedAt { download.downloaded = UTCDate.iso(archived) }
    }

    /// Nil when the column is empty or cannot be read: a damaged list costs only the transcripts after the first,
    /// whose URL is still in `transcriptURL`.
    static func transcripts(_ column: String?) -> [ParsedEpisode.Transcript]? {
        guard let column else { return nil }
        // Written by `EpisodeWriter` from the same type: a failure is a damaged column, said above.
        return try? JSONDecoder().decode([ParsedEpisode.Transcript].self, from: Data(column.utf8))
    }

    /// Nil when the redacted text is no URL (`Redaction` fails closed): the transcript is left out rather than its secret kept.
    static func redacted(_ transcript: ParsedEpisode.Transcript) -> ParsedEpisode.Transcript? {
        let text = Redaction.redact(transcript.url.absoluteString)
        guard text != transcript.url.absoluteString else { return transcript }
        guard let url = URL(string: text) else { return nil }
        var redacted = transcript
        redacted.url = url
        return redacted
    }

    /// Pretty-printed UTF-8 JSON, keys sorted, every control character escaped (C0 by the encoder; DEL and C1, which it
    /// leaves raw, here), so no feed's text can drive a terminal that shows the file.
    public func encoded() throws(EpisodeFileError) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do { return Self.escapingDELAndC1(try encoder.encode(self)) + Data("\n".utf8) } catch {
            throw EpisodeFileError(.fileSystem, "the metadata of \(download.file) cannot be encoded as JSON (\(error))")
        }
    }

    /// DEL (0x7F) and C1 (U+0080 to U+009F, `C2 80` to `C2 9F` in UTF-8) as `\u007f`…: JSON's structure is ASCII
    /// without them, so any is inside a string.
    static func escapingDELAndC1(_ json: Data) -> Data {
        guard json.contains(where: { $0 == 0x7F || $0 == 0xC2 }) else { return json }
        var out = Data(capacity: json.count + 64)
        var index = json.startIndex
        while index < json.endIndex {
            let byte = json[index]
            let next = json.index(after: index)
            if byte == 0x7F {
                out.append(contentsOf: Array("\\u007f".utf8))
            } else if byte == 0xC2, next < json.endIndex, (0x80...0x9F).contains(json[next]) {
                out.append(contentsOf: Array(String(cFormat: "\\u%04x", Int(json[next])).utf8))
                index = json.index(after: next)
                continue
            } else {
                out.append(byte)
            }
            index = next
        }
        return out
    }
}

extension EpisodeInfo {
    /// The file at `path` is hashed now unless `sha256` is given (the library's hash of that very file).
    /// - Parameter downloaded: when it completed, if known (an episode's own time wins).
    public init(download: MonsoonEngine.Download, path: String, downloaded: Date?, sha256 known: String? = nil) throws(EpisodeFileError) {
        guard let bytes = LocalFile.size(at: path) else { throw EpisodeFileError(.fileSystem, "\(path) is gone: no metadata is written for it") }
        let sha256: String
        if let known { sha256 = known } else {
            do { sha256 = try FileDigest.sha256(ofFile: path) } catch { throw EpisodeFileError(.fileSystem, error.message) }
        }
        self.download = Download(file: path.fileName, sourceURL: Redaction.redact(download.request.url), finalURL: download.finalURL.map(Redaction.redact),
                                 etag: download.etag, lastModified: download.lastModified, bytes: bytes, sha256: sha256,
                                 downloaded: downloaded.map(UTCDate.iso))
    }
}
