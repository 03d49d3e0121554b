import FoundationEssentials
import MonsoonPodcasts

/// `--fields FILE...`: one JSON line per file with every field the parser keeps (or its error), for
/// `Benchmarks/feedparser_suite.py`, which checks them against feedparser's own test expectations.
enum FieldsDump {
    struct Episode: Encodable {
        var guid, title, link, url, type, published, image: String?
        var length, duration: Int?
        var explicit: Bool?
    }

    struct Feed: Encodable {
        var path: String
        var error: String?
        var kind, title, link, author, language, image: String?
        var repairs: [String] = []
        var episodes: [Episode] = []
    }

    static func run(_ paths: some Sequence<String>) {
        let encoder = JSONEncoder()
        for path in paths {
            var line = Feed(path: path)
            do {
                let feed = try FeedParser.parse(fileAt: path)
                line.kind = feed.kind.rawValue
                line.title = feed.title
                line.link = feed.link?.absoluteString
                line.author = feed.author
                line.language = feed.language
                line.image = feed.artworkURL?.absoluteString
                line.repairs = feed.repairs
                line.episodes = feed.episodes.map {
                    Episode(guid: $0.guid, title: $0.title, link: $0.link?.absoluteString, url: $0.enclosureURL?.absoluteString, type: $0.mediaType,
                            published: $0.published.map(FeedDate.iso8601String), image: $0.imageURL?.absoluteString, length: $0.declaredLength,
                            duration: $0.duration, explicit: $0.explicit)
                }
            } catch {
                line.error = error.message
            }
            // Encoding plain strings and numbers cannot fail; a line left out would show as a failed test anyway.
            if let json = try? encoder.encode(line) { print(String(decoding: json, as: UTF8.self)) }
        }
    }
}
