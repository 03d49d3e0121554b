import FoundationEssentials

/// A name that exFAT, FAT32 and SMB shares accept, for an archive kept on a USB disk or a NAS (`--portable-names`): a
/// copy there of a name only Linux takes fails, or renames files behind the manifest's back. The rules, in order:
/// - each of `: ? * " < > | \` and each control character (U+0000–U+001F, U+007F) becomes `_`;
/// - trailing dots and spaces go (Windows drops them, so `Show.` and `Show` would be one name);
/// - a reserved device name (CON, PRN, AUX, NUL, COM1–COM9, LPT1–LPT9, in any case, alone or
///   before an extension: `con.mp3`, `Com1.tar.gz`) gets `_` after it: `CON_`, `con_.mp3`;
/// - at most `limit` UTF-16 code units (exFAT's 255), cut on a character boundary;
/// - never empty: `_`.
public enum PortableName {
    /// In UTF-16 code units.
    public static let exFATLimit = 255

    /// Characters Windows file systems refuse in a name, besides control characters.
    static let refused: Set<Character> = [":", "?", "*", "\"", "<", ">", "|", "\\"]

    /// Device names Windows reserves, with or without an extension.
    static let reserved = Set(["CON", "PRN", "AUX", "NUL"] + (1...9).flatMap { ["COM\($0)", "LPT\($0)"] })

    /// `/` is the caller's: a name never holds one.
    public static func make(_ name: String, limit: Int = exFATLimit) -> String {
        var text = String(String.UnicodeScalarView(name.unicodeScalars.map { scalar in
            scalar.value < 0x20 || scalar.value == 0x7F || refused.contains(Character(scalar)) ? "_" : scalar
        }))
        if text.utf16.count > limit {
            var cut = ""
            for character in text {
                if cut.utf16.count + character.utf16.count > limit { break }
                cut.append(character)
            }
            text = cut
        }
        while let last = text.last, last == "." || last == " " { text.removeLast() }
        let base = text.prefix { $0 != "." }
        if reserved.contains(base.uppercased()) {
            text = base + "_" + text.dropFirst(base.count)
            // The one unit added may pass the limit: the end gives way (never the `_`).
            while text.utf16.count > limit, text.count > base.count + 1 { text.removeLast() }
            while let last = text.last, last == "." || last == " " { text.removeLast() }
        }
        return text.isEmpty ? "_" : text
    }
}
