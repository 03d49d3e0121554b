/// Characters that show nothing themselves but change how the text around them shows: bidi
/// controls, which reorder it (a file `evil\u{202E}3pm.exe` shows as `evilexe.mp3`), and
/// zero-width ones, which make two different names look the same. Never in a file name;
/// shown escaped on a terminal.
///
/// Zero-width joiners go too: an emoji family in a file name falls apart into its members,
/// which is a small price for names that read as they are.
public enum InvisibleCharacters {
    /// Whether `scalar` is one of them: U+061C (Arabic letter mark), U+200B–U+200F (zero-width
    /// space, non-joiner, joiner, left-to-right and right-to-left marks), U+2028 and U+2029 (line
    /// and paragraph separators), U+202A–U+202E (embeddings and overrides), U+2060–U+2069 (word
    /// joiner, invisible operators, isolates) and U+FEFF (zero-width no-break space).
    public static func contains(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x061C, 0x200B...0x200F, 0x2028...0x202E, 0x2060...0x2069, 0xFEFF: return true
        default: return false
        }
    }

    /// Whether `scalar` is a control character (C0, DEL, C1) or one of the invisible ones.
    public static func isUnprintable(_ scalar: Unicode.Scalar) -> Bool {
        isControl(scalar) || contains(scalar)
    }

    /// Whether `scalar` is a control character: C0, DEL or C1.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
