import Foundation
import MonsoonEngine

/// Whether an archived episode's enclosure, as its feed lists it now, is a new version of the
/// episode (republished: re-edited, re-encoded, ads changed) or the same file under another name.
///
/// A pure decision in two steps: ``before(_:listed:)`` with what the library knows (no request),
/// and, when that cannot tell, ``after(_:answer:)`` with the server's answer to a HEAD of the new
/// enclosure. The feed's declared length is only ever a reason to ask, never a verdict: feeds
/// often declare 0, 1 or a wrong length, and change it, so a new version is decided on the
/// server's answer alone (its size, else its validators), never on the feed's noise.
public enum VersionCheck {
    /// The file archived for the episode, and the enclosure it was downloaded from.
    public struct Archived: Sendable, Equatable {
        /// The enclosure URL as the feed listed it when the file was downloaded (or last found to hold the same file).
        public var url: String
        /// The length the feed declared then.
        public var length: Int?
        /// The file's size in bytes.
        public var fileSize: Int
        /// The `ETag` the server sent with the file.
        public var etag: String?
        /// The `Last-Modified` the server sent with the file.
        public var lastModified: String?

        /// What is known of an archived file.
        public init(url: String, length: Int?, fileSize: Int, etag: String?, lastModified: String?) {
            self.url = url
            self.length = length
            self.fileSize = fileSize
            self.etag = etag
            self.lastModified = lastModified
        }
    }

    /// The enclosure as the feed lists it now.
    public struct Listed: Sendable, Equatable {
        /// The enclosure's URL.
        public var url: String
        /// The length the feed declares; nil when it declares none.
        public var length: Int?

        /// An enclosure as listed.
        public init(url: String, length: Int?) {
            self.url = url
            self.length = length
        }
    }

    /// The server's answer about the listed enclosure (the final response, after redirects).
    public struct Answer: Sendable, Equatable {
        /// The HTTP status.
        public var status: Int
        /// The whole file's size: `Content-Length` of a HEAD, or the total of a `Content-Range`.
        public var length: Int?
        /// The `ETag` the server sends now.
        public var etag: String?
        /// The `Last-Modified` the server sends now.
        public var lastModified: String?
        /// The `Content-Type` the server sends now.
        public var contentType: String?

        /// An answer as the server gave it.
        public init(status: Int, length: Int?, etag: String?, lastModified: String?, contentType: String? = nil) {
            self.status = status
            self.length = length
            self.etag = etag
            self.lastModified = lastModified
            self.contentType = contentType
        }
    }

    /// What to do about the episode.
    public enum Verdict: Sendable, Equatable {
        /// Nothing changed that matters: nothing to record, nothing to ask.
        case unchanged
        /// The listed enclosure holds the archived file: it is recorded as the file's enclosure,
        /// so the next run does not ask again.
        case sameFile
        /// Only the server can tell: ask it (a HEAD of the listed URL).
        case ask
        /// A new version: downloaded beside the archived file. The reason is for messages.
        case newVersion(String)
        /// The server's answer cannot tell (an error status): asked again on the next run.
        case unknown(String)
    }

    /// The verdict from what the library knows.
    ///
    /// - The same URL with the same declared length: `.unchanged`. With a length that says
    ///   nothing (missing, 0) or is the file's own size: `.sameFile` (recorded, nothing asked). A
    ///   file replaced under the same URL is looked at only when the declared length changes (a
    ///   rerun of an unchanged catalogue asks nothing).
    /// - The same scheme, host and path with only the query changed (a signed URL whose signature
    ///   or expiry rotates), declaring no length, the same length as before or the file's own size:
    ///   `.sameFile`, without a request (such feeds change every enclosure on every fetch).
    /// - Another URL with the same last path component declaring the file's own size (a tracking
    ///   prefix or redirector put before it): `.sameFile`. Only the archived file's real size counts
    ///   here, never the length the feed declared before: a feed that declares one constant, wrong
    ///   length for every version would make a real re-edit look like the same file.
    /// - Anything else (another URL, or the same one with another length): `.ask` the server.
    public static func before(_ archived: Archived, listed: Listed) -> Verdict {
        guard let scheme = URL(string: listed.url)?.scheme?.lowercased(), scheme == "http" || scheme == "https" else { return .unchanged }
        let length = listed.length.flatMap { $0 > 0 ? $0 : nil }
        let sameLength = length == nil || length == archived.length || length == archived.fileSize
        if listed.url == archived.url {
            if listed.length == archived.length { return .unchanged }
            return sameLength ? .sameFile : .ask
        }
        if sameLength, onlyQueryDiffers(listed.url, archived.url) { return .sameFile }
        if let length, length == archived.fileSize, let name = fileName(listed.url), name == fileName(archived.url) {
            return .sameFile
        }
        return .ask
    }

    /// The verdict from the server's answer: another size is a new version; the same size (or
    /// none said) with another `ETag` (when both have one; weak or strong alike), else another
    /// `Last-Modified` (when both have one), too. Otherwise the same file: an answer that says
    /// nothing to compare is never taken for a new version. A success that cannot be the file (an
    /// empty one, or a web page: a "soft 404") tells nothing either: asked again on the next run.
    public static func after(_ archived: Archived, answer: Answer) -> Verdict {
        guard (200..<300).contains(answer.status) else {
            return .unknown(HTTPStatusText.answered(answer.status))
        }
        if answer.length == 0 {
            return .unknown("the server answered \(answer.status) with an empty file")
        }
        if let type = answer.contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased(),
           type == "text/html" || type == "application/xhtml+xml" {
            return .unknown("the server answered \(answer.status) with a web page, not the episode's file")
        }
        if let length = answer.length, length != archived.fileSize {
            return .newVersion("the server's file is \(length) bytes, the archived one \(archived.fileSize)")
        }
        if let now = answer.etag.map(opaque), let then = archived.etag.map(opaque) {
            return now == then ? .sameFile : .newVersion("its ETag changed")
        }
        if let now = answer.lastModified?.trimmingCharacters(in: .whitespaces), let then = archived.lastModified?.trimmingCharacters(in: .whitespaces) {
            return now == then ? .sameFile : .newVersion("its Last-Modified changed")
        }
        return .sameFile
    }

    /// An ETag's opaque part: `W/"x"` and `"x"` name the same bytes for this purpose (a CDN
    /// that compresses on the fly weakens them).
    static func opaque(_ etag: String) -> String {
        let trimmed = etag.trimmingCharacters(in: .whitespaces)
        return trimmed.hasPrefix("W/") ? String(trimmed.dropFirst(2)) : trimmed
    }

    /// Whether two URLs name the same scheme, host, port and path, and differ only after it
    /// (their query or fragment).
    static func onlyQueryDiffers(_ a: String, _ b: String) -> Bool {
        guard let a = URLComponents(string: a), let b = URLComponents(string: b), let host = a.host, !host.isEmpty else { return false }
        return a.scheme?.lowercased() == b.scheme?.lowercased() && host.lowercased() == b.host?.lowercased() && a.port == b.port
            && a.percentEncodedPath == b.percentEncodedPath && a.user == b.user
    }

    /// The last component of a URL's path; nil when it has none.
    static func fileName(_ url: String) -> String? {
        guard let path = URLComponents(string: url)?.percentEncodedPath,
              let last = path.split(separator: "/").last, !last.isEmpty else { return nil }
        return String(last)
    }
}
