import FoundationEssentials

extension FeedDecoding {
    /// For a document that declares none and is not UTF-8, when its bytes read as real text in one (chardet's job): a
    /// candidate qualifies when almost nothing of a sample is undecodable, nearly every non-ASCII character is of its
    /// script, and a tenth are the language's most common (another encoding's bytes decode to rare ones). The one with
    /// the most common characters wins. Nil: read as UTF-8 repaired with Windows-1252.
    static func eastAsianEncoding(_ body: UnsafeBufferPointer<UInt8>) -> String? {
        let sample = UnsafeBufferPointer(rebasing: body.prefix(64 << 10))
        var best: (name: String, common: Int)?
        for candidate in Candidate.all {
            guard let text = iconvToUTF8(sample, from: candidate.name, unit: 1) else { continue }
            var nonASCII = 0, unreadable = 0, ofScript = 0, common = 0
            for scalar in String(decoding: text, as: UTF8.self).unicodeScalars where scalar.value >= 0x80 {
                nonASCII += 1
                if scalar.value == 0xFFFD { unreadable += 1 }
                if candidate.script(scalar.value) { ofScript += 1 }
                if candidate.common(scalar) { common += 1 }
            }
            guard nonASCII >= 8, unreadable * 100 <= nonASCII, ofScript * 100 >= nonASCII * 95, common * 10 >= nonASCII,
                  common > best?.common ?? 0 else { continue }
            best = (candidate.name, common)
        }
        return best?.name
    }

    private struct Candidate: Sendable {
        var name: String
        var script: @Sendable (UInt32) -> Bool
        var common: @Sendable (Unicode.Scalar) -> Bool

        static let all = [
            Candidate(name: "BIG5", script: isChinese, common: { commonChinese.contains($0) }),
            Candidate(name: "GB18030", script: isChinese, common: { commonChinese.contains($0) }),
            Candidate(name: "EUC-JP", script: isJapanese, common: { (0x3041...0x309F).contains($0.value) }),
            Candidate(name: "SHIFT_JIS", script: isJapanese, common: { (0x3041...0x309F).contains($0.value) }),
            Candidate(name: "EUC-KR", script: isKorean, common: { (0xAC00...0xD7A3).contains($0.value) }),
        ]

        /// Han, CJK and general punctuation, full-width forms.
        static func isChinese(_ value: UInt32) -> Bool {
            (0x4E00...0x9FFF).contains(value) || (0x3400...0x4DBF).contains(value) || (0x3000...0x303F).contains(value)
                || (0xFF00...0xFFEF).contains(value) || (0x2000...0x206F).contains(value)
        }

        /// Chinese's, with hiragana and katakana.
        static func isJapanese(_ value: UInt32) -> Bool { isChinese(value) || (0x3040...0x30FF).contains(value) }

        /// Chinese's, with Hangul syllables and jamo.
        static func isKorean(_ value: UInt32) -> Bool { isChinese(value) || (0xAC00...0xD7A3).contains(value) || (0x3130...0x318F).contains(value) }

        /// About a hundred of the most frequent characters of written Chinese, traditional and simplified.
        static let commonChinese = Set("的一是不了在人有我他這这個个們们中來来上大為为和國国地到以說说時时要就出會会可也你對对生能而子那得於于著着下自之年過过發发後后作裡里用道行所然家種种事成方多經经麼么去法學学如都同現现當当沒没動动面起看定天分還还進进好小部其些主樣样理心她本前開开但因只從从想實实文新很並并與与更已".unicodeScalars)
    }
}
