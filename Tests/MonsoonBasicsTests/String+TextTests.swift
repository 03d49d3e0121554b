import Foundation
import MonsoonBasics
import Testing

/// Texts with white space of every kind at their ends: tabs, no-break and ideographic spaces,
/// CR LF, the line and paragraph separators, next line, zero width and byte order marks, a
/// combining mark on a space, and white space inside that must stay.
private let untrimmed = [
    "", " ", "x", "  \t", "\t a \t", "a b", "\u{A0}a\u{A0}", "\u{2028}a\u{2028}", "\r\na\r\n", "\r\n", "\n a \n",
    "\u{3000}x\u{3000}", "\u{200B}x\u{200B}", "\u{85}x\u{85}", "\u{B}x\u{C}", "\u{2029}x", "\u{1680}x\u{202F}",
    "\u{FEFF}x", " \u{301}x", "x\u{A0}\u{301}", "é ", " 日本 ", "\t\r\n \u{A0}",
]

/// `String+Text` gives what Foundation's text calls gave (FoundationEssentials has none of them).
@Suite struct StringTextTests {
    @Test(arguments: untrimmed) func trimmingBlanksIsFoundationsWhitespaces(_ text: String) {
        #expect(Array(text.trimmingBlanks().unicodeScalars) == Array(text.trimmingCharacters(in: .whitespaces).unicodeScalars))
        #expect(Array(text[...].trimmingBlanks().unicodeScalars) == Array(text.trimmingCharacters(in: .whitespaces).unicodeScalars))
    }

    @Test(arguments: untrimmed) func trimmingWhitespaceIsFoundationsWhitespacesAndNewlines(_ text: String) {
        #expect(Array(text.trimmingWhitespace().unicodeScalars) == Array(text.trimmingCharacters(in: .whitespacesAndNewlines).unicodeScalars))
    }

    /// Every scalar of the first plane (where all of Unicode's and Foundation's white space is),
    /// alone before a letter: trimmed exactly when Foundation's set holds it.
    @Test func everyScalarIsTrimmedAsFoundationTrimsIt() {
        var blanks: [String] = [], whitespace: [String] = []
        for value in UInt32(0)...0xFFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = String(scalar) + "x"
            if (text.trimmingBlanks() == "x") != CharacterSet.whitespaces.contains(scalar) { blanks.append("U+" + String(value, radix: 16)) }
            if (text.trimmingWhitespace() == "x") != CharacterSet.whitespacesAndNewlines.contains(scalar) { whitespace.append("U+" + String(value, radix: 16)) }
        }
        #expect(blanks == [])
        #expect(whitespace == [])
    }

    @Test func trimmingDropsWhatTheTestSaysYesToAtEitherEndOnly() {
        let slashes = CharacterSet(charactersIn: "/")
        for text in ["", "/", "//a/b//", "a/b", "/é/", "///"] {
            #expect(text.trimming { $0 == "/" } == text.trimmingCharacters(in: slashes), "\(text)")
        }
        #expect("--a-b--".dropFirst().trimming { $0 == "-" } == "a-b", "a substring too")
    }

    @Test func paddedIsFoundationsPaddingWhereThatDoesNotCut() {
        for (text, width) in [("", 0), ("", 3), ("ab", 5), ("12345", 5), ("é", 4), ("日本", 3), ("ab", -1)] {
            #expect(text.padded(to: width) == text.padding(toLength: max(width, text.count), withPad: " ", startingAt: 0), "\(text) to \(width)")
        }
    }

    @Test func paddedNeverCutsAndCountsCharacters() {
        // A longer text is kept whole where Foundation cut it: a podcast numbered 123456 in a
        // column of 5 is still 123456, not 12345.
        #expect("123456".padded(to: 5) == "123456")
        // Characters as they are seen, where Foundation counted UTF-16 units (two for these).
        #expect("e\u{301}".padded(to: 3) == "e\u{301}  ")
        #expect("👍".padded(to: 3) == "👍  ")
    }

    @Test func cFormatIsFoundationsFormat() {
        let cases: [(String, any CVarArg)] = [
            ("%.1f", -2.25), ("%.1f", -0.05), ("%.1f", 0.25), ("%.1f", -0.0), ("%.1f", 1e20), ("%.1f", Double.infinity),
            ("%.1f s", 12.345), ("%.2f", -99.995), ("%.3f", 0.0005), ("%.6f", -1e10), ("%.6f", Double.pi),
            ("%.6f", -1e300), ("%04X", 255), ("%04X", 0), ("%04X", UInt32.max), ("%04X", -1), ("%04x", 0xE9),
            ("\\u%04x", UInt32(0x1F)), ("the character U+%04X, which XML does not allow", UInt32(0xFFFE)),
            ("%03ld", -7), ("%03ld", Int.min), ("%03ld", Int.max), ("%03d", Int32(5)), ("%03d", Int32(-1234)), ("100%%", 0),
        ]
        for (format, value) in cases {
            #expect(String(cFormat: format, value) == String(format: format, value), "\(format) of \(value)")
        }
        #expect(String(cFormat: "%d:%02d:%02d", 1, 2, 3) == String(format: "%d:%02d:%02d", 1, 2, 3))
        #expect(String(cFormat: "%d:%02d", -5, 59) == String(format: "%d:%02d", -5, 59))
        #expect(String(cFormat: "%d of %.1f s, %03d%%", 3, 2.25, 7) == String(format: "%d of %.1f s, %03d%%", 3, 2.25, 7))
        #expect(String(cFormat: "%.2f and %d", 1) == "1.00 and 0", "an integer for %f is converted; a missing argument is 0")
        #expect(String(cFormat: "plain") == "plain")
        #expect(String(cFormat: "%.6f", -1e300).utf8.count > 300, "longer than the first buffer")
    }

    @Test func equalsIgnoringASCIICaseIsFoundationsCaseInsensitiveCompareForASCII() {
        let ascii = (0...127).map { String(Unicode.Scalar(UInt8($0))) }
        var differing: [String] = []
        for a in ascii {
            for b in ascii where a.equalsIgnoringASCIICase(b) != (a.caseInsensitiveCompare(b) == .orderedSame) {
                differing.append(a.debugDescription + " " + b.debugDescription)
            }
        }
        #expect(differing == [])
        #expect("User-Agent".equalsIgnoringASCIICase("user-agent"))
        #expect(!"User-Agent".equalsIgnoringASCIICase("User-Agent2"))
        #expect("".equalsIgnoringASCIICase(""))
    }

    @Test func equalsIgnoringASCIICaseLeavesOtherLettersAsTheyAre() {
        // Header names are ASCII: other letters compare exactly, where Foundation folded them.
        #expect("ÉTÉ".caseInsensitiveCompare("été") == .orderedSame)
        #expect(!"ÉTÉ".equalsIgnoringASCIICase("été"))
        #expect(!"straße".equalsIgnoringASCIICase("STRASSE"))
        #expect("ÉTÉ-a".equalsIgnoringASCIICase("ÉTÉ-A"))
    }

    @Test func percentDecodedIsFoundationsRemovingPercentEncoding() {
        let samples = [
            "", "plain", "+", "%", "%4", "%2", "%2x", "%zz", "%%", "100%", "%C3%A9", "%c3%a9", "%FF", "%E9", "%C3",
            "a%20b", "%41%42", "%00", "é%20", "%F0%9F%91%8D", "%25", "%2525", "a%2Fb",
        ]
        for text in samples {
            #expect(text.percentDecoded == text.removingPercentEncoding, "\(text)")
        }
        // The bytes whatever they make (Latin-1 names in Content-Disposition); a sign is no hex digit.
        #expect("caf%E9%ff".percentDecodedBytes == [0x63, 0x61, 0x66, 0xE9, 0xFF])
        #expect("%+f".percentDecodedBytes == nil && "%4".percentDecodedBytes == nil)
    }

    @Test func percentEncodedIsFoundationsAddingPercentEncoding() {
        let everyASCII = String(decoding: (0...127).map(UInt8.init), as: UTF8.self)
        let samples = [everyASCII, "", "a b", "é", "日本", "a/b?c=d&e", "100%", "~x_y.z-", "👍", "::1", "fe80::1%eth0", "e\u{301}"]
        // What the test server (a path) and PostgresConnection (a host) pass, each against the set it replaces.
        let sets: [(String, CharacterSet)] = [("!$&'()*+,-./:;=?@_~", .urlQueryAllowed), ("!$&'()*+,-.;=_~", .urlHostAllowed)]
        for (allowed, set) in sets {
            for text in samples {
                #expect(text.percentEncoded(allowing: allowed) == text.addingPercentEncoding(withAllowedCharacters: set), "\(text) allowing \(allowed)")
            }
        }
        #expect("a b/é".percentEncoded(allowing: "") == "a%20b%2F%C3%A9")
        #expect(everyASCII.percentEncoded(allowing: "-._~").percentDecoded == everyASCII)
    }
}
