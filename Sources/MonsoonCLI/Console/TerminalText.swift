import MonsoonEngine

/// Text from feeds and servers made safe to show on a terminal: a title with `ESC ] 0 ; … BEL`
/// must not retitle the window, a C1 `CSI` must not recolour it, a bidi override must not
/// reorder what follows. Control characters (C0 but tab and line feed, DEL, C1) and invisible
/// ones (`InvisibleCharacters`) are shown as escapes: `\x1B`, `\u202E`.
///
/// `TextOutput` applies it to everything it writes for a person; the live view and the player's
/// status line, which draw with escape sequences of their own, apply it to their text first.
enum TerminalText {
    /// `text` with every unprintable character escaped; tab and line feed are kept when
    /// `keepingLayout` (the output's own columns and lines), escaped otherwise. Invisible characters
    /// are escaped only with `invisible`: a terminal shows them (a person reads the text); a file or a
    /// pipe gets them as they are (a script reads the text, and a folder of the user's may hold a
    /// zero-width non-joiner, as Persian writes), while controls are escaped everywhere.
    static func escape(_ text: String, keepingLayout: Bool = true, invisible: Bool = true) -> String {
        guard needsEscaping(text, keepingLayout: keepingLayout, invisible: invisible) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            if keepingLayout && (scalar == "\n" || scalar == "\t") {
                result.unicodeScalars.append(scalar)
            } else if invisible ? InvisibleCharacters.isUnprintable(scalar) : InvisibleCharacters.isControl(scalar) {
                result += scalar.value <= 0xFF ? "\\x" + hex(scalar.value, digits: 2) : "\\u" + hex(scalar.value, digits: 4)
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// One pass over the bytes: the usual line has nothing to escape and is not copied. C1
    /// controls are `C2 80`–`C2 9F` in UTF-8; the invisible characters are `D8 9C` and three-byte
    /// sequences starting `E2 80`, `E2 81` or `EF BB`, looked at closely only then.
    private static func needsEscaping(_ text: String, keepingLayout: Bool, invisible: Bool) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                if byte < 0x20 {
                    if !(keepingLayout && (byte == 0x0A || byte == 0x09)) { return true }
                } else if byte == 0x7F {
                    return true
                } else if byte == 0xC2, index + 1 < bytes.count, (0x80...0x9F).contains(bytes[index + 1]) {
                    return true
                } else if invisible && (byte == 0xD8 || byte == 0xE2 || byte == 0xEF) {
                    let end = min(bytes.count, index + 3)
                    if let scalar = String(decoding: UnsafeBufferPointer(rebasing: bytes[index..<end]), as: UTF8.self).unicodeScalars.first,
                       InvisibleCharacters.contains(scalar) { return true }
                }
                index += 1
            }
            return false
        }
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}

extension TerminalText {
    /// The columns `text` takes on a terminal: East Asian Wide and Fullwidth characters and
    /// emoji take two, combining marks and zero-width characters none, the rest one. A small
    /// table, not the whole of Unicode's East Asian Width: what titles in CJK, Arabic,
    /// Hebrew, Thai and emoji need, close to what glibc's `wcwidth` answers.
    static func displayWidth(_ text: String) -> Int {
        // Printable ASCII, the usual path or URL, is one column a byte: a listing of 100,000 rows stays quick.
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return text.utf8.count }
        var width = 0
        for character in text { width += displayWidth(character) }
        return width
    }

    /// One grapheme: as wide as its first scalar, but two for an emoji sequence (a base
    /// turned emoji by U+FE0F, a ZWJ family, a flag), which terminals draw in two cells.
    static func displayWidth(_ character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        let base = scalarWidth(first)
        if base < 2, scalars.count > 1, first.properties.isEmoji,
           scalars.contains(where: { $0.value == 0xFE0F || $0.value == 0x200D || (0x1F3FB...0x1F3FF).contains($0.value) }) {
            return 2
        }
        if base == 0, scalars.count > 1 {
            // A mark on its own (a cluster that starts with one) still takes what its other scalars take.
            return scalars.dropFirst().map(scalarWidth).max() ?? 0
        }
        return base
    }

    private static func scalarWidth(_ scalar: Unicode.Scalar) -> Int {
        let value = scalar.value
        if value == 0 { return 0 }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        // Hangul vowels and final consonants join the syllable before them.
        if (0x1160...0x11FF).contains(value) { return 0 }
        if scalar.properties.isEmojiPresentation { return 2 }
        for range in wideRanges where range.contains(value) { return 2 }
        return 1
    }

    /// East Asian Wide and Fullwidth blocks (Unicode's EastAsianWidth.txt, coarsely).
    private static let wideRanges: [ClosedRange<UInt32>] = [
        0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF,
        0x4E00...0x9FFF, 0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19,
        0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1B000...0x1B2FF, 0x1F200...0x1F2FF,
        0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x2FFFD, 0x30000...0x3FFFD,
    ]

    /// `text` in at most `width` columns: whole when it fits, else its start and its end around
    /// `…`, the end keeping the extension (`.mp3`), never a wide character cut in half.
    static func middleCut(_ text: String, width: Int) -> String {
        guard width > 0 else { return "" }
        let total = displayWidth(text)
        guard total > width else { return text }
        guard width > 1 else { return "…" }
        let room = width - 1
        var tailWidth = room / 2
        // The extension stays whole when there is room for it and a start: a name without its type is no name.
        if let dot = text.lastIndex(of: "."), dot != text.startIndex {
            let extensionWidth = displayWidth(String(text[dot...]))
            if extensionWidth <= 8 && extensionWidth < room { tailWidth = max(tailWidth, min(extensionWidth, room - 1)) }
        }
        var tail: [Character] = []
        var used = 0
        for character in text.reversed() {
            let width = displayWidth(character)
            if used + width > tailWidth { break }
            tail.append(character)
            used += width
        }
        var head = ""
        var headUsed = 0
        for character in text {
            let width = displayWidth(character)
            if headUsed + width > room - used { break }
            head.append(character)
            headUsed += width
        }
        return head + "…" + String(tail.reversed())
    }

    /// `text` cut in the middle to `width` columns, then padded with spaces to exactly `width`.
    static func fit(_ text: String, width: Int) -> String {
        pad(middleCut(text, width: width), width: width)
    }

    /// `text` followed by spaces up to `width` columns (nothing is cut).
    static func pad(_ text: String, width: Int) -> String {
        let used = displayWidth(text)
        return used >= width ? text : text + String(repeating: " ", count: width - used)
    }

    /// `text` cut at its end to at most `width` columns (with `…` when cut).
    static func clip(_ text: String, width: Int) -> String {
        guard displayWidth(text) > width else { return text }
        var result = ""
        var used = 0
        for character in text {
            let columns = displayWidth(character)
            if used + columns > width - 1 { break }
            result.append(character)
            used += columns
        }
        return width > 0 ? result + "…" : ""
    }
}
