import FoundationEssentials
import MonsoonEngine
import MonsoonPodcasts

/// A URL given on the command line (to `add`, `get`, `archive`, `inspect`, or in `get`'s input):
/// http or https with a host, else a usage error that says so, with the address it probably
/// meant when the scheme was left out (`127.0.0.1:8765/feed.xml`).
enum URLArgument {
    /// The http or https URL `text` names (blanks around it ignored), or nil.
    static func url(_ text: String) -> URL? {
        guard let url = URL(string: text.trimmingBlanks()), DownloadRequest.isDownloadable(url) else { return nil }
        return url
    }

    /// "'TEXT' is not an http or https URL" (`also` after it: " (nor are 2 more)"), then the hint:
    /// the address with its scheme when only that is missing, else `advice` ("give the feed's full
    /// address, like https://…"). Redacted.
    static func notURL(_ text: String, also: String = "", advice: String) -> String {
        "'\(Redaction.redact(text))' is not an http or https URL\(also); " + (hint(text) ?? advice)
    }

    /// "did you mean http://…?" when `text` lacks only its scheme (see `suggestion(_:)`).
    static func hint(_ text: String) -> String? {
        suggestion(text).map { "did you mean \(Redaction.redact($0))?" }
    }

    /// The URL of `text` as a usage error when it is not one (for `validate()`).
    static func require(_ text: String, advice: String) throws -> URL {
        guard let url = url(text) else { throw ValidationError(notURL(text, advice: advice)) }
        return url
    }

    /// `text` with the scheme it lacks, when it reads as an address without one: a host (a
    /// dotted name, `localhost`, an IPv4 or bracketed IPv6 address) then a port or a path. http
    /// for a port or a local host (a local server), else https. Nil for anything else: a path, a
    /// word, a file name (`feed.xml`), a URL with another scheme.
    static func suggestion(_ text: String) -> String? {
        let text = text.trimmingBlanks()
        guard !text.contains("://"), !text.hasPrefix("/"), let parsed = url("http://" + text), let host = parsed.host?.lowercased(),
              parsed.port != nil || parsed.path.count > 1 else { return nil }
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        let isAddress = host.contains(":") || (labels.count == 4 && labels.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) })
        let isName = labels.count > 1 && labels.allSatisfy { !$0.isEmpty } && labels.last.map { $0.count >= 2 && $0.allSatisfy(\.isLetter) } == true
        guard isAddress || isName || host == "localhost" else { return nil }
        return (parsed.port != nil || isAddress || host == "localhost" ? "http://" : "https://") + text
    }
}
