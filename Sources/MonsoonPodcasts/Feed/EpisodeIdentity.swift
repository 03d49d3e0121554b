import FoundationEssentials

/// What identifies an episode across refreshes of its feed.
public enum EpisodeIdentity {
    /// The guid when there is one; else the enclosure URL normalized (see ``normalizedEnclosureURL(_:)``);
    /// else the link; else the title and the date as written.
    static func identity(guid: String?, enclosureURL: URL?, link: URL?, title: String?, dateText: String?) -> String {
        if let guid { return guid }
        if let enclosureURL { return normalizedEnclosureURL(enclosureURL) }
        if let link { return link.absoluteString }
        return "title:\(title ?? "")|date:\(dateText ?? "")"
    }

    /// A different recording under a guid an earlier item has (`guid:GUID|enclosure:URL`, the URL normalized, so moving
    /// it between analytics services keeps the identity).
    static func recordingIdentity(guid: String, enclosureURL: URL) -> String {
        recordingIdentity(guid: guid, normalizedEnclosureURL: normalizedEnclosureURL(enclosureURL))
    }

    static func recordingIdentity(guid: String, normalizedEnclosureURL: String) -> String {
        "guid:\(guid)|enclosure:\(normalizedEnclosureURL)"
    }

    /// Analytics services put in front of the real media URL (`https://dts.podtrac.com/redirect.mp3/media.example.org/ep.mp3`):
    /// the prefix (host and path, lowercase) and how many path segments after it are the service's too (an account id,
    /// `redirect.mp3`). Publishers switch services, which must not change an episode's identity.
    static let trackingPrefixes: [(prefix: String, extraSegments: Int)] = [
        ("dts.podtrac.com/", 1),            // dts.podtrac.com/redirect.mp3/…
        ("www.podtrac.com/pts/", 1),        // www.podtrac.com/pts/redirect.mp3/…
        ("podtrac.com/pts/", 1),
        ("play.podtrac.com/", 1),           // play.podtrac.com/SHOW-ID/…
        ("pdst.fm/e/", 0),                  // Podsights
        ("chtbl.com/track/", 1),            // Chartable: chtbl.com/track/ID/…
        ("chrt.fm/track/", 1),
        ("op3.dev/e/", 0),                  // OP3
        ("op3.dev/e,", 1),                  // OP3 with arguments: op3.dev/e,pg=GUID/…
        ("pscrb.fm/rss/p/", 0),             // Podscribe
        ("verifi.podscribe.com/rss/p/", 0),
        ("arttrk.com/p/", 1),               // Artsai: arttrk.com/p/ID/…
        ("prfx.byspotify.com/e/", 0),       // Spotify Ad Analytics
        ("mgln.ai/e/", 1),                  // Magellan: mgln.ai/e/ID/…
        ("claritaspod.com/measure/", 0),
        ("clrtpod.com/m/", 1),
        ("tracking.swap.fm/track/", 1),
        ("pfx.vpixl.com/", 1),
    ]

    /// Query parameters that change between fetches of the same episode (campaign tags, app ids, cache
    /// busters), compared lowercase; `utm_` is a prefix.
    static let volatileParameters: Set<String> = ["awcollectionid", "awepisodeid", "aid", "updated", "fbclid", "gclid"]

    /// Without tracking prefixes (chains too), fragment and volatile query parameters, with a lowercase scheme and host.
    /// URLs that are not http(s) only lose the fragment.
    public static func normalizedEnclosureURL(_ url: URL) -> String {
        normalizedEnclosureURL(url.absoluteString)
    }

    public static func normalizedEnclosureURL(_ text: String) -> String {
        var text = Substring(text)
        if let hash = text.firstIndex(of: "#") { text = text[..<hash] }
        guard let schemeEnd = text.firstRange(of: "://") else { return String(text) }
        var scheme = text[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { return String(text) }
        var rest = text[schemeEnd.upperBound...]
        var stripped = true
        while stripped {
            stripped = false
            let lowered = rest.lowercased()
            for (prefix, extraSegments) in trackingPrefixes where lowered.hasPrefix(prefix) {
                var remainder = rest.dropFirst(prefix.count)
                for _ in 0..<extraSegments {
                    guard let slash = remainder.firstIndex(of: "/") else { remainder = ""; break }
                    remainder = remainder[remainder.index(after: slash)...]
                }
                // Some services take the target with its scheme (op3.dev/e/https://…).
                for embedded in ["https://", "http://", "https:/", "http:/"] where remainder.lowercased().hasPrefix(embedded) {
                    scheme = embedded.hasPrefix("https") ? "https" : "http"
                    remainder = remainder.dropFirst(embedded.count)
                    break
                }
                guard !remainder.isEmpty, !remainder.hasPrefix("/"), !remainder.hasPrefix("?") else { continue }
                rest = remainder
                stripped = true
                break
            }
        }
        var query: Substring = ""
        if let question = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: question)...]
            rest = rest[..<question]
        }
        let hostEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        var result = scheme + "://" + rest[..<hostEnd].lowercased() + rest[hostEnd...]
        let kept = query.split(separator: "&").filter { pair in
            let name = (pair.split(separator: "=", maxSplits: 1).first ?? "").lowercased()
            return !name.hasPrefix("utm_") && !volatileParameters.contains(name)
        }
        if !kept.isEmpty { result += "?" + kept.joined(separator: "&") }
        return result
    }
}
