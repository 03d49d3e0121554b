import FoundationEssentials
import MonsoonEngine

/// Where an episode's file goes under the download root: a template such as `{podcast}/{date} - {title}.{ext}`,
/// whose `/` make folders.
///
/// Rendering is safe whatever a feed says: every value is cleaned of path separators, `..`, control characters and
/// leading dots, each component is NFC and at most 255 bytes (room left for the extension and `.part`), so the result
/// stays inside the root. The extension is not known before the server answers: the engine appends it for `.{ext}`.
public struct NamingTemplate: Sendable, Equatable, CustomStringConvertible {
    public static let defaultText = "{podcast}/{date} - {title}.{ext}"
    public static let variables = ["podcast", "title", "date", "year", "month", "day", "guid", "season", "episode", "version", "ext"]

    enum Part: Sendable, Equatable {
        case literal(String)
        case variable(String)
    }

    public let text: String
    /// Each path component's, without the extension.
    let components: [[Part]]
    /// Names valid on exFAT and SMB too (`PortableName`): for an archive kept on a USB disk or a NAS.
    public var portable = false

    public var description: String { text }

    /// - Throws: `NamingError` for an unknown variable, an unclosed brace, an absolute path, a `..` component, or a
    ///   template that does not end in `.{ext}`.
    public init(_ text: String) throws(NamingError) {
        self.text = text
        guard text.hasSuffix(".{ext}") else {
            throw NamingError(.missingExtension, "the template '\(text)' must end with '.{ext}': the extension comes from the server (default: \(Self.defaultText))")
        }
        let body = String(text.dropLast(".{ext}".count))
        guard !body.hasPrefix("/") else { throw NamingError(.absolutePath, "the template '\(text)' must be relative to the download root; remove the leading '/'") }
        var components: [[Part]] = []
        for component in body.split(separator: "/", omittingEmptySubsequences: false) {
            guard !component.isEmpty else { throw NamingError(.emptyFolder, "the template '\(text)' has an empty folder name ('//' or a trailing '/')") }
            guard component != ".." && component != "." else { throw NamingError(.dotFolder, "the template '\(text)' may not use '.' or '..' as a folder") }
            components.append(try Self.parse(String(component), in: text))
        }
        self.components = components
    }

    public static var standard: NamingTemplate {
        // The default is valid by construction; a failure here is a programming error.
        try! NamingTemplate(defaultText)
    }

    private static func parse(_ component: String, in text: String) throws(NamingError) -> [Part] {
        var parts: [Part] = []
        var rest = Substring(component)
        while let open = rest.firstIndex(of: "{") {
            if open > rest.startIndex { parts.append(.literal(String(rest[..<open]))) }
            guard let close = rest[open...].firstIndex(of: "}") else {
                throw NamingError(.unbalancedBrace, "the template '\(text)' has a '{' without its '}'")
            }
            let name = String(rest[rest.index(after: open)..<close])
            guard variables.contains(name), name != "ext" else {
                if name == "ext" { throw NamingError(.misplacedExtension, "in the template '\(text)', {ext} may only end the file name") }
                throw NamingError(.unknownVariable, "the template '\(text)' uses the unknown variable {\(name)}; known: \(variables.map { "{\($0)}" }.joined(separator: ", "))")
            }
            parts.append(.variable(name))
            rest = rest[rest.index(after: close)...]
        }
        if rest.contains("}") { throw NamingError(.unbalancedBrace, "the template '\(text)' has a '}' without its '{'") }
        if !rest.isEmpty { parts.append(.literal(String(rest))) }
        return parts
    }

    /// The folders under the root and the file's stem (no extension).
    public func render(_ values: NamingValues) -> (folders: [String], stem: String) {
        var rendered = components.map { parts in
            parts.map { part -> String in
                switch part {
                case .literal(let text): return text
                case .variable(let name): return Self.clean(values[name])
                }
            }.joined()
        }
        var stem = finished(rendered.removeLast(), limit: Self.stemLimit)
        let folders = rendered.map { finished($0, limit: 255) }
        // A later version's path always differs from the earlier ones': a template without {version} (or a long title
        // that cut it off) gets it at the end of the file name; one that puts it in a folder has it only there.
        if let version = values.version, !stem.contains("(\(version))"), !folders.contains(where: { $0.contains("(\(version))") }) {
            let suffix = values["version"]
            stem = finished((Self.nonEmptyComponent(stem, limit: Self.stemLimit - suffix.utf8.count) ?? "untitled") + suffix, limit: Self.stemLimit)
        }
        return (folders, stem)
    }

    /// Made safe, and portable when asked (exFAT counts UTF-16 units, never more than the UTF-8 bytes already cut to).
    func finished(_ rendered: String, limit: Int) -> String {
        let safe = Self.component(rendered, limit: limit)
        return portable ? PortableName.make(safe, limit: limit) : safe
    }

    /// A stem leaves room for " (99)", a dot, a five-letter extension and ".part".
    static let stemLimit = 255 - 5 - 1 - 5 - 5

    /// A value made safe inside a path component: no separators or control characters (each a space, as is any
    /// other space), no bidi controls or zero-width characters (`InvisibleCharacters`: gone).
    static func clean(_ value: String) -> String {
        // Printable ASCII but the separators, as most titles are, stays as it is: a title took 9,000
        // instructions through the scalars below, and an archive names every episode.
        if value.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != 0x2F && $0 != 0x5C }) { return value }
        var scalars = String.UnicodeScalarView()
        for scalar in value.precomposed.unicodeScalars {
            switch scalar.value {
            case 0..<0x20, 0x7F, 0x80..<0xA0: scalars.append(" ")
            case 0x2F, 0x5C: scalars.append("-")        // "/" and "\"
            case 0x20..<0x7F: scalars.append(scalar)    // the rest of printable ASCII: no property to look up
            case _ where InvisibleCharacters.contains(scalar): continue
            // A title's no-break or thin space would look like a space in a shell but not be one.
            case _ where scalar.properties.isWhitespace: scalars.append(" ")
            default: scalars.append(scalar)
            }
        }
        return String(scalars)
    }

    /// A whole component made safe: no `..`, no leading dots (hidden files), collapsed spaces, trimmed, at most `limit`
    /// UTF-8 bytes on a character boundary; never empty.
    static func component(_ text: String, limit: Int) -> String {
        nonEmptyComponent(text, limit: limit) ?? "untitled"
    }

    /// `component`, or nil when nothing is left (for a caller with a better name to fall back on).
    static func nonEmptyComponent(_ text: String, limit: Int) -> String? {
        isComponent(text, limit: limit) ? text : cleanedComponent(text, limit: limit)
    }

    /// `nonEmptyComponent`'s steps, for a name they may change.
    static func cleanedComponent(_ text: String, limit: Int) -> String? {
        var clean = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
        while clean.contains("..") { clean = clean.replacing("..", with: ".") }
        // By scalar: a dot that carries a combining mark is a character of its own, and a name starting with it is hidden.
        while let first = clean.unicodeScalars.first, first == "." || first == " " { clean.unicodeScalars.removeFirst() }
        while clean.hasSuffix(" ") || clean.hasSuffix(".") { clean.removeLast() }
        if clean.utf8.count > limit {
            var cut = ""
            for character in clean {
                if cut.utf8.count + character.utf8.count > limit { break }
                cut.append(character)
            }
            clean = cut.trimmingBlanks()
        }
        return clean.isEmpty ? nil : clean
    }

    /// Whether `nonEmptyComponent` would give `text` back as it is, read byte by byte (13,000
    /// instructions less per name than its splitting and searching): within `limit`, no tab, no run
    /// of spaces or dots, and no space or dot first or last. A space or dot is one byte of its own
    /// in UTF-8, so a name this passes has none of the characters those steps change.
    private static func isComponent(_ text: String, limit: Int) -> Bool {
        let bytes = text.utf8
        guard let first = bytes.first, let last = bytes.last, bytes.count <= limit,
              first != UInt8(ascii: "."), first != UInt8(ascii: " "), last != UInt8(ascii: "."), last != UInt8(ascii: " ") else { return false }
        var previous: UInt8 = 0
        for byte in bytes {
            if byte == UInt8(ascii: "\t") || (byte == previous && (byte == UInt8(ascii: " ") || byte == UInt8(ascii: "."))) { return false }
            previous = byte
        }
        return true
    }
}

/// The values of a template's variables for one episode.
public struct NamingValues: Sendable {
    // Cleaned when rendered, not here.
    public var podcast: String
    public var title: String
    /// The publish date, for `{date}`, `{year}`, `{month}` and `{day}` (in UTC); nil renders as "undated".
    public var published: Date?
    /// `{guid}`; nil renders as nothing.
    public var guid: String?
    /// `{season}`; nil renders as nothing.
    public var season: Int?
    /// `{episode}`; nil renders as nothing.
    public var episode: Int?
    /// Nil for an episode's first version; for a later one, the day it was seen (`2026-12-01`), rendered ` (2026-12-01)`.
    public var version: String?

    public init(podcast: String, title: String, published: Date?, guid: String?, season: Int?, episode: Int?, version: String? = nil) {
        self.podcast = podcast
        self.title = title
        self.published = published
        self.guid = guid
        self.season = season
        self.episode = episode
        self.version = version
    }

    subscript(name: String) -> String {
        switch name {
        case "podcast": return podcast
        case "title": return title
        case "date": return date.map { "\($0.year)-\($0.month)-\($0.day)" } ?? "undated"
        case "year": return date?.year ?? "undated"
        case "month": return date?.month ?? "undated"
        case "day": return date?.day ?? "undated"
        case "guid": return guid ?? ""
        case "season": return season.map(String.init) ?? ""
        case "episode": return episode.map(String.init) ?? ""
        case "version": return version.map { " (\($0))" } ?? ""
        default: return ""
        }
    }

    /// In UTC, zero-padded.
    private var date: (year: String, month: String, day: String)? {
        published.map(UTCDate.day)
    }
}
