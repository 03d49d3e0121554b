import Testing
@testable import MonsoonCLI

/// Display widths as a terminal draws them, and names cut in the middle by them.
@Suite struct TerminalWidthTests {
    @Test func wideCharactersTakeTwoColumnsAndMarksNone() {
        #expect(TerminalText.displayWidth("episode.mp3") == 11)
        #expect(TerminalText.displayWidth("日本語") == 6)
        #expect(TerminalText.displayWidth("한국어") == 6)
        #expect(TerminalText.displayWidth("ＡＢ") == 4, "fullwidth forms")
        #expect(TerminalText.displayWidth("🎧") == 2)
        #expect(TerminalText.displayWidth("❤️") == 2, "a text heart made emoji by U+FE0F")
        #expect(TerminalText.displayWidth("👩‍👩‍👧") == 2, "a ZWJ family is one picture")
        #expect(TerminalText.displayWidth("🇯🇵") == 2, "a flag")
        #expect(TerminalText.displayWidth("e\u{301}") == 1, "a combining accent takes no column")
        #expect(TerminalText.displayWidth("مرحبا") == 5)
        #expect(TerminalText.displayWidth("بِسْمِ") == 3, "Arabic vowel marks take none")
        #expect(TerminalText.displayWidth("a\u{200B}b") == 2, "zero-width space")
    }

    @Test func namesAreCutInTheMiddleKeepingTheExtension() {
        #expect(TerminalText.middleCut("short.mp3", width: 20) == "short.mp3")
        #expect(TerminalText.middleCut("2024-06-01 - A very long episode title.mp3", width: 20) == "2024-06-01…title.mp3")
        let cut = TerminalText.middleCut("東京の夜と朝のポッドキャスト第一回.m4a", width: 17)
        #expect(cut.hasSuffix(".m4a") && cut.contains("…"))
        #expect(TerminalText.displayWidth(cut) <= 17)
        // A wide character never cut in half: one column short at worst, padded by `fit`.
        let odd = TerminalText.middleCut("日本語日本語日本語", width: 8)
        #expect(odd == "日本…日" || odd == "日本…語", "\(odd)")
        #expect(TerminalText.displayWidth(TerminalText.fit("日本語日本語日本語", width: 8)) == 8)
        #expect(TerminalText.middleCut("🎧🎧🎧🎧🎧🎧.mp3", width: 10) == "🎧🎧…🎧.mp3" || TerminalText.displayWidth(TerminalText.middleCut("🎧🎧🎧🎧🎧🎧.mp3", width: 10)) <= 10)
        #expect(TerminalText.middleCut("abcdef", width: 1) == "…")
        #expect(TerminalText.clip("日本語です", width: 6) == "日本…")
    }

    @Test func aBlockClearsTheRowsItsLinesTakeAtTheNewWidth() {
        // Drawn at 80 columns (79 wide at most), read again at 40: a 79-column line now takes two rows.
        #expect(LiveBlock.physicalRows([79, 30, 79], width: 80) == 3)
        #expect(LiveBlock.physicalRows([79, 30, 79], width: 40) == 5)
        #expect(LiveBlock.physicalRows([0], width: 40) == 1)
    }
}
