import FoundationEssentials

/// Names for what a feed leaves unnamed, so no podcast or episode lists as blank.
public enum FallbackName {
    /// Its enclosure's file name without the extension, percent-decoded (`…/Episode%2012.mp3` gives "Episode 12").
    static func episode(enclosureURL: URL?) -> String? {
        guard let enclosureURL else { return nil }
        // `lastPathComponent` is percent-decoded and leaves the query (often a token) out.
        var name = enclosureURL.lastPathComponent
        guard name != "/" else { return nil }
        if let dot = name.lastIndex(of: "."), dot != name.startIndex { name = String(name[..<dot]) }
        return FeedText.title(name)
    }

    /// Its URL's host, port and path (`feeds.example.com/show/rss`), never the user, password or query (they may be
    /// credentials); a file's name for a file URL.
    public static func podcast(feedURL: URL) -> String {
        podcastName(of: feedURL)
    }

    /// Its title, else one made from its feed URL (never the URL itself, which may hold credentials).
    public static func podcast(title: String?, feedURL: String?) -> String {
        title ?? URL(string: feedURL ?? "").map(podcastName(of:)) ?? ""
    }

    private static func podcastName(of feedURL: URL) -> String {
        if feedURL.isFileURL { return feedURL.lastPathComponent }
        guard let host = feedURL.host, !host.isEmpty else { return Redaction.redact(feedURL) }
        var name = host.lowercased()
        if let port = feedURL.port { name += ":\(port)" }
        let path = feedURL.path
        if path != "/" { name += path.hasSuffix("/") ? String(path.dropLast()) : path }
        return name
    }
}
