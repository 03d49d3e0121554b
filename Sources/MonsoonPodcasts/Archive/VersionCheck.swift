import FoundationEssentials
import MonsoonEngine

/// Whether an archived episode's enclosure, as its feed lists it now, is a new version of the episode (republished:
/// re-edited, re-encoded, ads changed) or the same file under another name.
///
/// A pure decision in two steps: ``before(_:listed:)`` with what the library knows, and when that cannot tell,
/// ``after(_:answer:)`` with the server's answer to a HEAD of the new enclosure. The feed's declared length is only a
/// reason to ask, never a verdict: feeds often declare 0, 1 or a wrong length, and change it.
public enum VersionCheck {
    public struct Archived: Sendable, Equatable {
        /// As the feed listed it when the file was downloaded (or last found to hold the same file).
        public var url: String
        /// What the feed declared then.
        public var length: Int?
        public var fileSize: Int
        public var etag: String?
        public var lastModified: String?
    }

    /// The enclosure as the feed lists it now.
    public struct Listed: Sendable, Equatable {
        public var url: String
        public var length: Int?
    }

    /// The server's answer about the listed enclosure (the final response, after redirects).
    public struct Answer: Sendable, Equatable {
        public var status: Int
        /// The whole file's size: `Content-Length` of a HEAD, or the total of a `Content-Range`.
        public var length: Int?
        public var etag: String?
        public var lastModified: String?
        public var contentType: String?
    }

    /// What to do about the episode.
    public enum Verdict: Sendable, Equatable {
        /// Nothing changed that matters: nothing to record, nothing to ask.
        case unchanged
        /// The listed enclosure holds the archived file: recorded as its enclosure, so the next run does not ask again.
        case sameFile
        /// Only the server can tell: ask it (a HEAD of the listed URL).
        case ask
        /// A new version: downloaded beside the archived file. The reason is for messages.
        case newVersion(String)
        /// The server's answer cannot tell (an error status): asked again on the next run.
        case unknown(String)
    }

    /// - The same URL with the same declared length: `.unchanged`; with a length that says nothing (missing, 0) or is
    ///   the file's own size: `.sameFile`. A file replaced under the same URL is looked at only when the declared
    ///   length changes (a rerun of an unchanged catalogue asks nothing).
    /// - Only the query changed (a signed URL whose signature or expiry rotates on every fetch), declaring no length,
    ///   the length before or the file's own size: `.sameFile`.
    /// - Another URL with the same last path component (a tracking prefix or redirector) declaring the file's own
    ///   size: `.sameFile`. Never the length declared before: a feed that declares one constant, wrong length for
    ///   every version would make a real re-edit look like the same file.
    /// - Anything else: `.ask` the server.
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

    /// Another size is a new version; so is the same size (or none said) with another `ETag` (when both have one, weak
    /// or strong alike), else another `Last-Modified`. An answer with nothing to compare is the same file. A success
    /// that cannot be the file (empty, or a web page: a "soft 404") tells nothing: asked again on the next run.
    public static func after(_ archived: Archived, answer: Answer) -> Verdict {
        guard (200..<300).contains(answer.status) else {
            return .unknown(HTTPStatusText.answered(answer.status))
        }
        if answer.length == 0 {
            return .unknown("the server answered \(answer.status) with an empty file")
        }
        if let type = answer.contentType?.split(separator: ";").first?.trimmingBlanks().lowercased(),
           type == "text/html" || type == "application/xhtml+xml" {
            return .unknown("the server answered \(answer.status) with a web page, not the episode's file")
        }
        if let length = answer.length, length != archived.fileSize {
            return .newVersion("the server's file is \(length) bytes, the archived one \(archived.fileSize)")
        }
        if let now = answer.etag.map(opaque), let then = archived.etag.map(opaque) {
            return now == then ? .sameFile : .newVersion("its ETag changed")
        }
        if let now = answer.lastModified?.trimmingBlanks(), let then = archived.lastModified?.trimmingBlanks() {
            return now == then ? .sameFile : .newVersion("its Last-Modified changed")
        }
        return .sameFile
    }

    /// `W/"x"` and `"x"` name the same bytes for this purpose (a CDN that compresses on the fly weakens them).
    static func opaque(_ etag: String) -> String {
        let trimmed = etag.trimmingBlanks()
        return trimmed.hasPrefix("W/") ? String(trimmed.dropFirst(2)) : trimmed
    }

    static func onlyQueryDiffers(_ a: String, _ b: String) -> Bool {
        guard let a = URLComponents(string: a), let b = URLComponents(string: b), let host = a.host, !host.isEmpty else { return false }
        return a.scheme?.lowercased() == b.scheme?.lowercased() && host.lowercased() == b.host?.lowercased() && a.port == b.port
            && a.percentEncodedPath == b.percentEncodedPath && a.user == b.user
    }

    static func fileName(_ url: String) -> String? {
        guard let path = URLComponents(string: url)?.percentEncodedPath,
              let last = path.split(separator: "/").last, !last.isEmpty else { return nil }
        return String(last)
    }
}
