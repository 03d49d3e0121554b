import FoundationEssentials
import MonsoonStore

/// A whole row of `episodes`: the episode as the library lists it, and what the archive keeps of its file. Every SQL
/// statement on `episodes` is one of its queries (`EpisodeRecord+Queries.swift`); the schema is `LibrarySchema`'s.
struct EpisodeRecord: Sendable, Equatable {
    /// The columns of `episodes`, in the order a whole row is selected.
    enum Column: Int, TableColumn {
        case id, podcastID, identity, guid, title, enclosureURL, mediaType, declaredLength, published, duration, season, episode,
             summary, link, imageURL, transcriptURL, chaptersURL, feedOrder, downloadState, downloadError, fileName, bytesOnDisk,
             position, played, queuePosition, archivedAt, sha256, finalURL, etag, lastModified, fileURL, fileLength, version,
             versionSeen, transcripts
    }

    static let all = Columns<Column>.all

    var episode: Episode
    /// 0 is the feed's first item.
    var feedOrder: Int
    // The archive's ledger and manifest (`LibrarySchema`, versions 2 and 4): `archivedAt` is kept when the file is
    // deleted; `fileURL` and `fileLength` are the enclosure the file is known to hold; `version` is nil for the first.
    var archivedAt: Date?, sha256: String?, finalURL: String?, etag: String?, lastModified: String?
    var fileURL: String?, fileLength: Int?, version: String?, versionSeen: Date?
    /// Every `podcast:transcript` of the item, as JSON (`EpisodeWriter.transcriptsColumn`).
    var transcripts: String?

    init(_ row: TableRow<Column>) {
        episode = Episode(row)
        feedOrder = row.int(.feedOrder)
        archivedAt = row.date(.archivedAt)
        sha256 = row.text(.sha256)
        finalURL = row.text(.finalURL)
        etag = row.text(.etag)
        lastModified = row.text(.lastModified)
        fileURL = row.text(.fileURL)
        fileLength = row.optionalInt(.fileLength)
        version = row.text(.version)
        versionSeen = row.date(.versionSeen)
        transcripts = row.text(.transcripts)
    }

    /// `LibraryError.notFound` when there is none.
    static func get(_ id: Int, in database: Database) throws -> EpisodeRecord {
        guard let record = try find(id, in: database) else { throw missing(id) }
        return record
    }

    static func missing(_ id: Int) -> LibraryError { LibraryError(.notFound, "no episode has id \(id); list them with 'monsoon episodes PODCAST'") }

    var id: Int { episode.id }
    var isDownloaded: Bool { episode.downloadState == .downloaded }
    var enclosure: String? { episode.enclosureURL?.absoluteString }

    /// Oldest first by publish date, undated last, then by id: the order of a manifest.
    static func oldestFirst(_ a: EpisodeRecord, _ b: EpisodeRecord) -> Bool {
        Date?.publishedFirst(a.episode.published, b.episode.published) ?? (a.id < b.id)
    }
}

extension Optional where Wrapped == Date {
    /// Earlier first and undated last; nil when they are the same, for the caller's own tie-break.
    static func publishedFirst(_ a: Date?, _ b: Date?) -> Bool? {
        switch (a, b) {
        case let (x?, y?) where x != y: x < y
        case (.some, nil): true
        case (nil, .some): false
        default: nil
        }
    }
}

extension Episode {
    init(_ row: TableRow<EpisodeRecord.Column>) {
        id = row.int(.id)
        podcastID = row.int(.podcastID)
        guid = row.text(.guid)
        identity = row.text(.identity) ?? ""
        title = row.text(.title)
        enclosureURL = row.text(.enclosureURL).flatMap(URL.init(string:))
        mediaType = row.text(.mediaType)
        declaredLength = row.optionalInt(.declaredLength)
        published = row.date(.published)
        duration = row.optionalInt(.duration)
        season = row.optionalInt(.season)
        episodeNumber = row.optionalInt(.episode)
        summary = row.text(.summary)
        link = row.text(.link).flatMap(URL.init(string:))
        imageURL = row.text(.imageURL).flatMap(URL.init(string:))
        transcriptURL = row.text(.transcriptURL).flatMap(URL.init(string:))
        chaptersURL = row.text(.chaptersURL).flatMap(URL.init(string:))
        downloadState = row.text(.downloadState).flatMap(EpisodeDownloadState.init(rawValue:)) ?? .none
        downloadError = row.text(.downloadError)
        fileName = row.text(.fileName)
        bytesOnDisk = row.int(.bytesOnDisk)
        position = row.double(.position)
        played = row.bool(.played)
        queuePosition = row.optionalInt(.queuePosition)
    }
}
