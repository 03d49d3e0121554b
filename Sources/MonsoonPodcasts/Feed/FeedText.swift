/// Cleaning of the texts a feed carries.
enum FeedText {
    /// Trimmed of whitespace (including newlines); nil when nothing is left.
    static func trimmed(_ text: String) -> String? {
        let utf8 = text.utf8
        guard let first = utf8.first, let last = utf8.last else { return nil }
        if !isASCIISpace(first), !isASCIISpace(last), first < 0x80, last < 0x80 { return text }
        let scalars = text.unicodeScalars
        guard let start = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let end = scalars.lastIndex(where: { !$0.properties.isWhitespace }) else { return nil }
        return String(scalars[start...end])
    }

    /// HTML tags stripped (only names HTML knows, so `<Show>` written as text stays; a script or style sheet with its
    /// text), entities decoded (titles are often escaped twice), whitespace runs collapsed, trimmed. Nil when nothing is left.
    static func title(_ text: String) -> String? {
        if isPlain(text) { return text.isEmpty ? nil : text }
        var result = text
        if result.utf8.contains(UInt8(ascii: "<")) { result = stripTags(result) }
        if result.utf8.contains(UInt8(ascii: "&")) { result = decodeEntities(result) }
        return collapseWhitespace(result)
    }

    /// True when there is nothing to clean: no markup, no entity, no whitespace but single inner spaces.
    private static func isPlain(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            var previousSpace = true
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "<"), UInt8(ascii: "&"), 0x09, 0x0A, 0x0D, 0xC2, 0xE2, 0xE3:
                    // 0xC2, 0xE2 and 0xE3 lead the UTF-8 of the non-ASCII spaces (U+00A0, U+2000…, U+3000).
                    return false
                case 0x20:
                    if previousSpace { return false }
                    previousSpace = true
                default:
                    previousSpace = false
                }
            }
            return !previousSpace || bytes.isEmpty
        }
    }

    /// Runs of spaces, tabs and line breaks become one space; a no-break, thin or other typographic space is the
    /// publisher's and stays, except at either end, where any whitespace goes.
    static func collapseWhitespace(_ text: String) -> String? {
        var scalars = String.UnicodeScalarView()
        var pendingSpace = false
        for scalar in text.unicodeScalars {
            if isBreakingSpace(scalar) || (scalars.isEmpty && scalar.properties.isWhitespace) {
                pendingSpace = !scalars.isEmpty
            } else {
                if pendingSpace { scalars.append(" ") }
                pendingSpace = false
                scalars.append(scalar)
            }
        }
        while let last = scalars.last, last.properties.isWhitespace { scalars.removeLast() }
        return scalars.isEmpty ? nil : String(scalars)
    }

    /// ASCII whitespace and the line and paragraph separators (U+0085, U+2028, U+2029).
    private static func isBreakingSpace(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09...0x0D, 0x20, 0x85, 0x2028, 0x2029: true
        default: false
        }
    }

    private static func isASCIISpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    /// Element names HTML defines that turn up in feed titles; tags with other names are text.
    private static let htmlTags: Set<String> = [
        "a", "abbr", "acronym", "address", "applet", "article", "aside", "audio", "b", "big", "blink", "blockquote", "body",
        "br", "center", "cite", "code", "dd", "del", "dfn", "div", "dl", "dt", "em", "embed", "figcaption", "figure", "font",
        "footer", "frame", "frameset", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "html", "i", "iframe", "img", "ins",
        "kbd", "label", "li", "link", "mark", "meta", "nav", "object", "ol", "p", "param", "picture", "pre", "q", "s", "samp",
        "script", "section", "small", "source", "span", "strike", "strong", "style", "sub", "sup", "table", "tbody", "td",
        "th", "time", "tr", "tt", "u", "ul", "var", "video", "wbr",
    ]

    /// After a tag that nothing closes, the rest is text: each later one would be looked for to the end again, and a
    /// title of `<b "` written again and again took minutes.
    static func stripTags(_ text: String) -> String {
        let bytes = Array(text.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        var closed = true
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            guard byte == UInt8(ascii: "<"), closed else {
                output.append(byte)
                continue
            }
            switch tagEnd(bytes, at: index - 1) {
            case .end(let end):
                index = skippingScript(bytes, openedAt: index - 1, tagEnd: end)
            case .notATag:
                output.append(byte)
            case .unclosed:
                closed = false
                output.append(byte)
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Past the end tag of a `<script>` or `<style>` opened at `start` (their text is never a title's), or the end of
    /// the text when nothing closes it (searched for once: linear); `tagEnd` for any other tag.
    private static func skippingScript(_ bytes: [UInt8], openedAt start: Int, tagEnd: Int) -> Int {
        let name = bytes[(start + 1)...].prefix { ByteScanner.isLetter($0) }.map { $0 | 0x20 }
        guard name.elementsEqual("script".utf8) || name.elementsEqual("style".utf8) else { return tagEnd }
        let close = Array("</".utf8) + name
        var index = tagEnd
        while let open = bytes[index...].firstIndex(of: UInt8(ascii: "<")) {
            if bytes[open...].prefix(close.count).map({ ByteScanner.isLetter($0) ? $0 | 0x20 : $0 }) == close {
                return ASCIIBytes.tagEnd(bytes, from: open) ?? bytes.count
            }
            index = open + 1
        }
        return bytes.count
    }

    /// An HTML tag or a comment that ends just before `end`, text, or a tag that nothing closes.
    private enum TagEnd {
        case end(Int)
        case notATag
        case unclosed
    }

    private static func tagEnd(_ bytes: [UInt8], at start: Int) -> TagEnd {
        if bytes[start...].starts(with: "<!--".utf8) {
            // From the first dash: `<!-->` and `<!--->` are empty comments, as in HTML.
            var index = start + 2
            while index + 2 < bytes.count {
                if bytes[index] == UInt8(ascii: "-"), bytes[index + 1] == UInt8(ascii: "-"), bytes[index + 2] == UInt8(ascii: ">") {
                    return .end(index + 3)
                }
                index += 1
            }
            // As in HTML, a comment nothing closes hides the rest.
            return .end(bytes.count)
        }
        var index = start + 1
        if index < bytes.count, bytes[index] == UInt8(ascii: "/") { index += 1 }
        let nameStart = index
        while index < bytes.count, ByteScanner.isLetter(bytes[index]) || ByteScanner.isDigit(bytes[index]) { index += 1 }
        guard index > nameStart, index - nameStart <= 10 else { return .notATag }
        let name = String(decoding: bytes[nameStart..<index].map { $0 | 0x20 }, as: UTF8.self)
        guard htmlTags.contains(name), index < bytes.count else { return .notATag }
        let next = bytes[index]
        guard next == UInt8(ascii: ">") || next == UInt8(ascii: "/") || ByteScanner.isSpace(next) else { return .notATag }
        return ASCIIBytes.tagEnd(bytes, from: index).map(TagEnd.end) ?? .unclosed
    }

    /// `&name;` (XML's five and HTML's), `&#NNN;` and `&#xHHH;`; references that mean nothing stay as written.
    static func decodeEntities(_ text: String) -> String {
        var output = String.UnicodeScalarView()
        let scalars = Array(text.unicodeScalars)
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "&", let (decoded, next) = reference(scalars, at: index) {
                output.append(decoded)
                index = next
            } else {
                output.append(scalar)
                index += 1
            }
        }
        return String(output)
    }

    private static func reference(_ scalars: [Unicode.Scalar], at start: Int) -> (Unicode.Scalar, Int)? {
        var index = start + 1
        var name = ""
        while index < scalars.count, index - start <= 32, scalars[index] != ";" {
            let scalar = scalars[index]
            guard scalar.isASCII, scalar == "#" || scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) else { return nil }
            name.unicodeScalars.append(scalar)
            index += 1
        }
        guard index < scalars.count, scalars[index] == ";", !name.isEmpty else { return nil }
        if name.hasPrefix("#") {
            let digits = name.dropFirst()
            let value = digits.first == "x" || digits.first == "X" ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits)
            guard let value, value != 0, let scalar = Unicode.Scalar(value) else { return nil }
            return (scalar, index + 1)
        }
        switch name {
        case "amp": return ("&", index + 1)
        case "lt": return ("<", index + 1)
        case "gt": return (">", index + 1)
        case "quot": return ("\"", index + 1)
        case "apos": return ("'", index + 1)
        default:
            guard let scalar = HTMLEntities.character(named: name) else { return nil }
            return (scalar, index + 1)
        }
    }
}
