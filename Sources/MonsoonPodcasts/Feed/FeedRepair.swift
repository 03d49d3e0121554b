import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Repairs the breakage real feeds carry, on the UTF-8 bytes, before XML parsing:
///
/// - An XML declaration that is not at the very start, or that names an encoding other than UTF-8 (the text is UTF-8
///   by now), is blanked.
/// - The DOCTYPE is blanked, so the XML parser never sees a DTD: no external entity can be fetched or read, and no
///   entity is expanded but by this code, which counts expansions. Entities the internal subset declares with a
///   literal value are expanded here (within ``FeedLimits/maxEntityExpansions`` and ``FeedLimits/maxBytes``);
///   references to external ones are dropped.
/// - Entity references XML does not define are replaced: HTML's (`&nbsp;` …) by their character, others (`&gtgt;`) by
///   their literal text (`&amp;gtgt;`); a bare `&` becomes `&amp;`; a numeric reference to a character XML forbids
///   (`&#0;`) is dropped. CDATA sections and comments are left alone.
/// - Text before the feed that is not part of it (PHP warnings, a page saved from a browser) is blanked: up to the first
///   `<?xml`, `<rss`, `<feed` or `<rdf:RDF` (any prefix) within ``maxJunk`` bytes, and said among the repairs.
/// - A comment XML forbids (`<!-- a -- b -->`, as generators write them) is blanked: a feed's reader uses nothing in it.
/// - CDATA sections are handed to the builder directly rather than through libxml2 (see ``cdataTarget``).
///
/// Blanked ranges keep their newlines, so line numbers in errors match the original. The result is a list of edits,
/// applied while the text is fed to libxml2: no copy of the document.
struct FeedRepair {
    enum Entity {
        case value([UInt8])
        case external
    }

    private let input: UnsafeBufferPointer<UInt8>
    private let limits: FeedLimits
    private var edits: [Edit] = []
    private var replacements: [UInt8] = []
    private var growth = 0
    private var entities: [String: Entity] = [:]
    private var expansions = 0
    private var expandedBytes = 0
    private var expanding: [String] = []
    private var cdata: [Range<Int>] = []
    private var skippedJunk = 0

    /// The most text before the feed that is skipped: PHP warnings are a few lines.
    static let maxJunk = 64 << 10

    private init(_ input: UnsafeBufferPointer<UInt8>, limits: FeedLimits) {
        self.input = input
        self.limits = limits
    }

    /// One repair: the input's `range` is replaced by `replacement`, a range of ``Repaired/replacements``.
    struct Edit {
        var range: Range<Int>
        var replacement: Range<Int>
    }

    /// Edits to apply while the text is fed to the XML parser (``RepairedText``): no repaired copy is ever made.
    struct Repaired {
        /// In the order of the input, not overlapping.
        var edits: [Edit]
        var replacements: [UInt8]
        /// The contents of the CDATA sections, which the text refers to by index (see ``cdataTarget``).
        var cdata: [Range<Int>]
        var size: Int
        /// Entities the DTD declares were expanded into the text: it may hold markup the input does not.
        var expandsEntities: Bool
        /// For ``ParsedFeed/repairs``.
        var repairs: [String] = []
    }

    /// CDATA sections are taken out of libxml2's way: its push parser checks each character for `]]>` one at a time,
    /// about a third of its time on feeds whose show notes are in CDATA, while this scan finds them with `memchr`
    /// anyway. Each becomes `<?monsoon-cdata N?>` (keeping its line breaks), and ``FeedBuilder`` reads the content
    /// from the input. A document's own `<?monsoon-cdata?>` can only point at one of its own CDATA sections.
    static let cdataTarget = "monsoon-cdata"

    static func repair(_ input: UnsafeBufferPointer<UInt8>, limits: FeedLimits) throws(FeedError) -> Repaired {
        var repair = FeedRepair(input, limits: limits)
        let bodyStart = repair.repairProlog()
        try repair.repairBody(from: bodyStart)
        let skipped = repair.skippedJunk
        return Repaired(edits: repair.edits, replacements: repair.replacements, cdata: repair.cdata, size: input.count + repair.growth,
                        expandsEntities: repair.expansions > 0,
                        repairs: skipped > 0 ? ["\(skipped) bytes of text before the feed, not part of it, were skipped"] : [])
    }

    private mutating func replace(_ range: Range<Int>, with bytes: some Collection<UInt8>) {
        let start = replacements.count
        replacements.append(contentsOf: bytes)
        edits.append(Edit(range: range, replacement: start..<replacements.count))
        growth += replacements.count - start - range.count
    }

    /// Replaces a range by spaces, keeping its line breaks.
    private mutating func blank(_ range: Range<Int>) {
        replace(range, with: input[range].lazy.map { $0 == 0x0A || $0 == 0x0D ? $0 : 0x20 })
    }

    /// Blanks what must go from the prolog (see the type's documentation); returns where it ends.
    private mutating func repairProlog() -> Int {
        var index = 0
        let count = input.count
        while index < count {
            let byte = input[index]
            if ByteScanner.isSpace(byte) {
                index += 1
            } else if matches("<?xml", at: index), index + 5 < count, ByteScanner.isSpace(input[index + 5]) || input[index + 5] == UInt8(ascii: "?") {
                let end = find("?>", from: index).map { $0 + 2 } ?? count
                let declaration = UnsafeBufferPointer(rebasing: input[index..<end])
                let encoding = FeedDecoding.declaredEncodingName(declaration)?.lowercased()
                if index != 0 || (encoding != nil && encoding != "utf-8" && encoding != "utf8") { blank(index..<end) }
                index = end
            } else if matches("<?", at: index) {
                index = find("?>", from: index).map { $0 + 2 } ?? count
            } else if matches("<!--", at: index) {
                index = skipComment(at: index)
            } else if matchesIgnoringCase("<!doctype", at: index) {
                let end = FeedRepair.parseDoctype(input, at: index, into: &entities)
                blank(index..<end)
                index = end
            } else if let start = feedStart(after: index) {
                blank(index..<start)
                skippedJunk += start - index
                index = start
            } else {
                break
            }
        }
        return index
    }

    /// Where the feed starts when something else comes first, within ``maxJunk`` bytes; nil when the feed starts at
    /// `index` or the document is a web page.
    private func feedStart(after index: Int) -> Int? {
        guard !startsFeed(at: index), !matchesIgnoringCase("<html", at: index) else { return nil }
        let end = min(input.count, index + FeedRepair.maxJunk)
        var position = index + 1
        while position < end, let open = input[position..<end].firstIndex(of: UInt8(ascii: "<")) {
            if startsFeed(at: open) {
                // Text, not the header of a binary file (an MP3's ID3 tag) that happens to hold a feed.
                return input[index..<open].contains { FeedBuilder.isForbidden($0) || $0 == 0x7F } ? nil : open
            }
            position = open + 1
        }
        return nil
    }

    /// `<?xml`, or an element whose local name is `rss`, `feed` or `RDF` (`<atom:feed`, too).
    private func startsFeed(at index: Int) -> Bool {
        let count = input.count
        if matches("<?xml", at: index) { return index + 5 < count && (ByteScanner.isSpace(input[index + 5]) || input[index + 5] == UInt8(ascii: "?")) }
        guard matches("<", at: index) else { return false }
        var end = index + 1
        while end < count, end - index < 64, FeedRepair.isNameByte(input[end], first: end == index + 1) { end += 1 }
        guard end < count, ByteScanner.isSpace(input[end]) || input[end] == UInt8(ascii: ">") else { return false }
        let name = input[(index + 1)..<end]
        let local = name.lastIndex(of: UInt8(ascii: ":")).map { name[($0 + 1)...] } ?? name
        return local.elementsEqual("rss".utf8) || local.elementsEqual("feed".utf8) || local.elementsEqual("RDF".utf8)
    }

    /// References repaired and CDATA sections taken out, from `start` to the end.
    private mutating func repairBody(from start: Int) throws(FeedError) {
        guard let base = input.baseAddress else { return }
        let count = input.count
        var index = start
        var nextCDATA = find("<![CDATA[", from: index) ?? count
        var nextComment = find("<!--", from: index) ?? count
        var nextAmpersand = -1
        while index < count {
            if nextAmpersand < index {
                nextAmpersand = memchr(base + index, Int32(UInt8(ascii: "&")), count - index)
                    .map { UnsafeRawPointer($0) - UnsafeRawPointer(base) } ?? count
            }
            let section = min(nextCDATA, nextComment)
            if section < nextAmpersand {
                // A CDATA section or a comment comes first: `&` means nothing inside either.
                if nextCDATA < nextComment {
                    guard let close = find("]]>", from: section + 9) else { break }  // unterminated: libxml2 says where
                    offloadCDATA(section..<close + 3, content: section + 9..<close)
                    index = close + 3
                } else {
                    index = skipComment(at: section)
                }
                if nextCDATA < index { nextCDATA = find("<![CDATA[", from: index) ?? count }
                if nextComment < index { nextComment = find("<!--", from: index) ?? count }
                continue
            }
            guard nextAmpersand < count else { break }
            let (replacement, end) = try resolveReference(in: input, at: nextAmpersand)
            if let replacement { replace(nextAmpersand..<end, with: replacement) }
            index = end
        }
    }

    /// A comment XML forbids (`--` in its text, or a `-` right before its end) is blanked on the way. Unterminated: the
    /// rest of the input (libxml2 says where).
    private mutating func skipComment(at start: Int) -> Int {
        guard let close = find("-->", from: start + 4) else { return input.count }
        let text = start + 4..<close
        if !text.isEmpty && (input[close - 1] == UInt8(ascii: "-") || find("--", from: text.lowerBound).map({ $0 < close }) == true) {
            blank(start..<close + 3)
        }
        return close + 3
    }

    /// Replaces a CDATA section by `<?monsoon-cdata N?>` (see ``cdataTarget``).
    private mutating func offloadCDATA(_ section: Range<Int>, content: Range<Int>) {
        var marker: [UInt8] = Array("<?monsoon-cdata ".utf8)
        marker.reserveCapacity(32)
        var number = cdata.count
        let digitsStart = marker.count
        repeat {
            marker.insert(UInt8(ascii: "0") + UInt8(number % 10), at: digitsStart)
            number /= 10
        } while number > 0
        // Keep the section's line breaks (memchr: show notes are long and have few).
        if let base = input.baseAddress {
            var position = content.lowerBound
            while position < content.upperBound,
                  let found = memchr(base + position, 0x0A, content.upperBound - position) {
                marker.append(0x0A)
                position = UnsafeRawPointer(found) - UnsafeRawPointer(base) + 1
            }
        }
        marker.append(contentsOf: "?>".utf8)
        cdata.append(content)
        replace(section, with: marker)
    }

    /// What the reference starting with the `&` at `start` becomes (nil: kept as written) and where it ends.
    private mutating func resolveReference(in bytes: UnsafeBufferPointer<UInt8>, at start: Int) throws(FeedError) -> ([UInt8]?, Int) {
        let count = bytes.count
        var index = start + 1
        if index < count, bytes[index] == UInt8(ascii: "#") {
            index += 1
            let hex = index < count && (bytes[index] | 0x20) == UInt8(ascii: "x")
            if hex { index += 1 }
            var value: UInt32 = 0
            let digitsStart = index
            while index < count, index - digitsStart < 8 {
                let byte = bytes[index]
                if ByteScanner.isDigit(byte) {
                    value = value * (hex ? 16 : 10) + UInt32(byte - 0x30)
                } else if hex, (byte | 0x20) &- 0x61 < 6 {
                    value = value * 16 + UInt32((byte | 0x20) - 0x61 + 10)
                } else {
                    break
                }
                index += 1
            }
            guard index > digitsStart, index < count, bytes[index] == UInt8(ascii: ";") else { return (FeedRepair.escapedAmpersand, start + 1) }
            guard FeedRepair.isXMLCharacter(value) else { return ([], index + 1) }
            // `&#X41;`: HTML's spelling, which XML refuses.
            return (hex && bytes[start + 2] == UInt8(ascii: "X") ? Array("&#x".utf8) + bytes[digitsStart...index] : nil, index + 1)
        }
        let nameStart = index
        while index < count, index - nameStart <= 64, FeedRepair.isNameByte(bytes[index], first: index == nameStart) { index += 1 }
        guard index > nameStart, index < count, bytes[index] == UInt8(ascii: ";") else { return (FeedRepair.escapedAmpersand, start + 1) }
        let end = index + 1
        let nameBytes = UnsafeBufferPointer(rebasing: bytes[nameStart..<index])
        if FeedRepair.isPredefined(nameBytes) { return (nil, end) }
        let name = String(decoding: nameBytes, as: UTF8.self)
        switch entities[name] {
        case .value(let value)?:
            return (try expand(name, value), end)
        case .external?:
            // Never resolved: an external entity could read local files or reach the network.
            return ([], end)
        case nil:
            guard let scalar = HTMLEntities.character(named: name) else {
                return (FeedRepair.escapedAmpersand + Array(nameBytes) + [UInt8(ascii: ";")], end)
            }
            switch scalar {
            case "<": return (Array("&lt;".utf8), end)
            case "&": return (FeedRepair.escapedAmpersand, end)
            case "\"": return (Array("&quot;".utf8), end)
            case "'": return (Array("&apos;".utf8), end)
            default:
                var encoded: [UInt8] = []
                FeedDecoding.appendUTF8(scalar.value, to: &encoded)
                return (encoded, end)
            }
        }
    }

    /// The replacement text of an entity the DTD declares, its own references resolved in turn.
    private mutating func expand(_ name: String, _ value: [UInt8]) throws(FeedError) -> [UInt8] {
        expansions += 1
        guard expansions <= limits.maxEntityExpansions else {
            throw FeedError(.tooLarge, "the feed expands more than \(limits.maxEntityExpansions) entity references, which only an entity bomb does; it was not read")
        }
        guard !expanding.contains(name), expanding.count < 64 else {
            throw FeedError(.malformed, "the feed's entity '\(name)' refers to itself; the feed cannot be read")
        }
        expanding.append(name)
        defer { expanding.removeLast() }
        var result: [UInt8] = []
        result.reserveCapacity(value.count)
        var index = 0
        while index < value.count {
            guard value[index] == UInt8(ascii: "&") else {
                result.append(value[index])
                index += 1
                continue
            }
            let (replacement, end) = try value.withUnsafeBufferPointer { buffer throws(FeedError) in
                try resolveReference(in: buffer, at: index)
            }
            if let replacement { result.append(contentsOf: replacement) } else { result.append(contentsOf: value[index..<end]) }
            index = end
        }
        expandedBytes += result.count
        guard expandedBytes <= limits.maxBytes else {
            throw FeedError(.tooLarge, "the feed's entities expand to more than \(limits.maxBytes) bytes; it was not read")
        }
        return result
    }

    static let escapedAmpersand = Array("&amp;".utf8)

    static func isXMLCharacter(_ value: UInt32) -> Bool {
        switch value {
        case 0x09, 0x0A, 0x0D, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: return true
        default: return false
        }
    }

    static func isNameByte(_ byte: UInt8, first: Bool) -> Bool {
        if ByteScanner.isLetter(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":") || byte >= 0x80 { return true }
        return !first && (ByteScanner.isDigit(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "."))
    }

    /// `amp`, `lt`, `gt`, `quot`, `apos`.
    static func isPredefined(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        switch name.count {
        case 2: return (name[0] == UInt8(ascii: "l") || name[0] == UInt8(ascii: "g")) && name[1] == UInt8(ascii: "t")
        case 3: return name.elementsEqual("amp".utf8)
        case 4: return name.elementsEqual("quot".utf8) || name.elementsEqual("apos".utf8)
        default: return false
        }
    }

    func matches(_ literal: StaticString, at index: Int) -> Bool {
        FeedRepair.matches(input, literal, at: index, ignoringCase: false)
    }

    func matchesIgnoringCase(_ literal: StaticString, at index: Int) -> Bool {
        FeedRepair.matches(input, literal, at: index, ignoringCase: true)
    }

    /// `literal` must be lowercase when `ignoringCase`.
    static func matches(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString, at index: Int, ignoringCase: Bool) -> Bool {
        let length = literal.utf8CodeUnitCount
        guard index + length <= bytes.count else { return false }
        let pointer = literal.utf8Start
        for offset in 0..<length {
            let byte = bytes[index + offset]
            if (ignoringCase && ByteScanner.isLetter(byte) ? byte | 0x20 : byte) != pointer[offset] { return false }
        }
        return true
    }

    func find(_ literal: StaticString, from index: Int) -> Int? {
        FeedRepair.find(input, literal, from: index)
    }

    /// `memchr` for one of the literal's bytes, then a comparison (glibc's `memmem` needs `_GNU_SOURCE`). That byte is the
    /// first that is not `<`, `>` or `-`, which are everywhere in XML, so the search runs at `memchr`'s speed.
    static func find(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString, from index: Int) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        let needle = literal.utf8Start
        let length = literal.utf8CodeUnitCount
        var anchor = 0
        while anchor < length - 1, needle[anchor] == UInt8(ascii: "<") || needle[anchor] == UInt8(ascii: ">")
                || needle[anchor] == UInt8(ascii: "-") { anchor += 1 }
        if needle[anchor] == UInt8(ascii: ">") || needle[anchor] == UInt8(ascii: "<") { anchor = 0 }
        var position = index + anchor
        while position + length - anchor <= bytes.count {
            guard let found = memchr(base + position, Int32(needle[anchor]), bytes.count - position - (length - anchor) + 1) else { return nil }
            let candidate = UnsafeRawPointer(found) - UnsafeRawPointer(base) - anchor
            if memcmp(base + candidate, needle, length) == 0 { return candidate }
            position = candidate + anchor + 1
        }
        return nil
    }
}
