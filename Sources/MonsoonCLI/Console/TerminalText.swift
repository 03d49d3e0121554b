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
