import FoundationEssentials

/// Chooses and cleans the file name of a download into a folder.
enum FileNaming {
    /// The name from Content-Disposition, else the final URL's last path
    /// component, else `download`; always sanitized.
    static func name(contentDisposition: String?, finalURL: String?) -> String {
        if let disposition = contentDisposition, let name = dispositionFileName(disposition) {
            let clean = sanitize(name)
            if clean != "download" || name == "download" { return clean }
        }
        if let finalURL, let url = URL(string: finalURL) {
            if let component = lastComponent(of: url.path(percentEncoded: false)) { return sanitize(component) }
        }
        return "download"
    }

    /// `stem` and the extension the response implies: the final URL's (its last path
    /// component's, when it looks like one), else the first known media type's; none
    /// when neither says. Sanitized like any name.
    static func name(stem: String, finalURL: String?, mediaTypes: [String?]) -> String {
        var ext = finalURL.flatMap(URL.init(string:)).map { fileExtension(of: $0.path(percentEncoded: false)) } ?? nil
        if ext == nil { ext = mediaTypes.lazy.compactMap { $0.flatMap(fileExtension(forMediaType:)) }.first }
        return sanitize(ext.map { "\(stem).\($0)" } ?? stem)
    }

    /// The extension of a path's last component: 1 to 5 letters or digits after its last dot,
    /// not a server script's or page's (`.php`, `.aspx`, `.html`: those name the program
    /// that answered, not the file).
    static func fileExtension(of path: String) -> String? {
        guard let ext = nameExtension(lastComponent(of: path) ?? ""), !serverExtensions.contains(ext) else { return nil }
        return ext
    }

    /// The last component of a path that is not empty (`/a/b/` gives `b`); nil when none is.
    /// Cut at every `/` byte, even one a combining mark follows (a split by characters would keep
    /// that one), and without splitting it all: this runs for every small file.
    static func lastComponent(of path: String) -> String? {
        let bytes = path.utf8
        var end = bytes.endIndex
        while end > bytes.startIndex, bytes[bytes.index(before: end)] == UInt8(ascii: "/") { end = bytes.index(before: end) }
        guard end > bytes.startIndex else { return nil }
        let start = bytes[..<end].lastIndex(of: UInt8(ascii: "/")).map { bytes.index(after: $0) } ?? bytes.startIndex
        return String(Substring(bytes[start..<end]))   // cut at ASCII bytes: whole scalars
    }

    /// The extension of a file name: 1 to 5 letters or digits after its last dot, lowercased.
    static func nameExtension(_ name: String) -> String? {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        let ext = name[name.index(after: dot)...]
        guard (1...5).contains(ext.count), ext.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else { return nil }
        return ext.lowercased()
    }

    private static let serverExtensions: Set<String> = ["php", "php3", "php5", "asp", "aspx", "ashx", "axd", "jsp", "jspx", "cgi", "pl", "py",
                                                        "rb", "do", "html", "htm", "shtml", "xhtml"]

    /// The usual extension of the media types podcasts serve.
    static func fileExtension(forMediaType type: String) -> String? {
        let essence = type.split(separator: ";").first.map { $0.trimmingBlanks().lowercased() } ?? ""
        switch essence {
        case "audio/mpeg", "audio/mp3", "audio/mpeg3", "audio/x-mp3", "audio/x-mpeg": return "mp3"
        case "audio/mp4", "audio/x-m4a", "audio/m4a", "audio/x-mp4": return "m4a"
        case "audio/aac", "audio/x-aac", "audio/aacp": return "aac"
        case "audio/ogg", "application/ogg", "audio/vorbis": return "ogg"
        case "audio/opus": return "opus"
        case "audio/flac", "audio/x-flac": return "flac"
        case "audio/wav", "audio/x-wav", "audio/wave": return "wav"
        case "audio/webm", "video/webm": return "webm"
        case "video/mp4": return "mp4"
        case "video/x-m4v": return "m4v"
        case "video/quicktime": return "mov"
        case "application/pdf": return "pdf"
        case "image/jpeg": return "jpg"
        case "image/png": return "png"
        case "text/vtt": return "vtt"
        case "application/x-subrip", "application/srt": return "srt"
        case "application/json", "application/json+chapters": return "json"
        default: return nil
        }
    }

    /// `filename*=UTF-8''…` (RFC 6266/8187) wins over `filename="…"`.
    static func dispositionFileName(_ value: String) -> String? {
        var plain: String?
        var extended: String?
        for parameter in splitParameters(value).dropFirst() {
            guard let equals = parameter.firstIndex(of: "=") else { continue }
            let key = parameter[..<equals].trimmingBlanks().lowercased()
            var raw = parameter[parameter.index(after: equals)...].trimmingBlanks()
            if key == "filename*" {
                // charset'language'percent-encoded
                let pieces = raw.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
                if pieces.count == 3 {
                    let charset = pieces[0].lowercased()
                    let encoded = String(pieces[2])
                    if charset == "utf-8" { extended = encoded.percentDecoded }
                    else if let bytes = encoded.percentDecodedBytes { extended = String(bytes: bytes, encoding: .isoLatin1) }
                }
            } else if key == "filename" {
                if raw.hasPrefix("\""), raw.hasSuffix("\""), raw.count >= 2 {
                    raw = String(raw.dropFirst().dropLast()).replacing("\\\"", with: "\"")
                }
                plain = raw
            }
        }
        return extended ?? plain
    }

    /// Makes a name safe to create inside a folder: no path separators, no `..`,
    /// no control or invisible characters, no leading dots (hidden files), at most 255 bytes.
    static func sanitize(_ name: String) -> String {
        // The usual name needs nothing changed, and is seen to on its bytes: the general way
        // below goes through Foundation's trimming, about 28,000 instructions a name.
        isSafeAsItIs(name) ? name : sanitizeGenerally(name)
    }

    /// Printable ASCII without separators or `..`, not starting with a dot or a space, not
    /// ending with a space, short enough: what `sanitizeGenerally` returns unchanged.
    static func isSafeAsItIs(_ name: String) -> Bool {
        let bytes = name.utf8
        guard (1...250).contains(bytes.count), bytes.first != UInt8(ascii: "."), bytes.first != UInt8(ascii: " "),
              bytes.last != UInt8(ascii: " ") else { return false }
        var previous: UInt8 = 0
        for byte in bytes {
            guard (0x20...0x7E).contains(byte), byte != UInt8(ascii: "/"), byte != UInt8(ascii: "\\"),
                  !(byte == UInt8(ascii: ".") && previous == byte) else { return false }
            previous = byte
        }
        return true
    }

    /// Any name, composed (NFC): control and invisible characters (bidi controls, zero-width ones) dropped, separators replaced, `..` collapsed, leading dots
    /// and outer spaces removed, cut to 250 bytes (room for ".part"); "download" when nothing is left.
    static func sanitizeGenerally(_ name: String) -> String {
        var scalars = String.UnicodeScalarView()
        // Composed (NFC): `café` sent decomposed by one server and composed by another is one name.
        for scalar in name.precomposed.unicodeScalars {
            switch scalar.value {
            case _ where InvisibleCharacters.isUnprintable(scalar): continue
            case 0x2F, 0x5C: scalars.append("_")        // "/" and "\"
            default: scalars.append(scalar)
            }
        }
        var clean = String(scalars).trimmingBlanks()
        while clean.contains("..") { clean = clean.replacing("..", with: ".") }
        while clean.hasPrefix(".") { clean.removeFirst() }
        clean = clean.trimmingBlanks()
        if clean.isEmpty { return "download" }
        return truncate(clean, toBytes: 255 - 5) // room for ".part"
    }

    /// Cuts to at most `limit` UTF-8 bytes, keeping the extension and whole characters.
    static func truncate(_ name: String, toBytes limit: Int) -> String {
        guard name.utf8.count > limit else { return name }
        var stem = name
        var ext = ""
        if let dot = name.lastIndex(of: "."), name.distance(from: dot, to: name.endIndex) <= 16 {
            stem = String(name[..<dot])
            ext = String(name[dot...])
        }
        let room = max(1, limit - ext.utf8.count)
        var result = ""
        for character in stem {
            if result.utf8.count + String(character).utf8.count > room { break }
            result.append(character)
        }
        return result + ext
    }

    /// Splits on `;` outside quotes.
    private static func splitParameters(_ value: String) -> [String] {
        var parts: [String] = []
        var current = ""
        var quoted = false
        var escaped = false
        for character in value {
            if escaped { current.append(character); escaped = false; continue }
            if character == "\\" && quoted { current.append(character); escaped = true; continue }
            if character == "\"" { quoted.toggle() }
            if character == ";" && !quoted { parts.append(current); current = ""; continue }
            current.append(character)
        }
        parts.append(current)
        return parts
    }
}
