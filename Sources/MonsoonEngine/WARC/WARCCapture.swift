import FoundationEssentials

/// What one download's exchanges come to in the WARC, decided as its attempts end: the
/// exchanges whose bodies are in its part wait, with the bytes each delivered, until the file is
/// complete (then they are written with one `response` holding the whole file); the others
/// (redirect hops, error answers, bodies thrown away) are written at once, heads only.
///
/// Only the exchanges this process saw are known: bytes a killed run fetched show as a gap,
/// filled from the part on disk and named in `WARC-Monsoon-Ranges`.
struct WARCCapture: Sendable {
    /// An exchange whose body went into the part: the file's bytes `range`.
    struct Piece: Sendable {
        var exchange: WARCExchange
        var range: Range<Int>
    }

    private(set) var pieces: [Piece] = []

    /// An attempt ended. `exchanges`: its exchanges in order (the redirect hops, then the
    /// answer); `kept`: the part's bytes its answer wrote, when they stay in the part.
    /// - Returns: the exchanges to write now, as request and head-only response.
    mutating func attemptEnded(_ exchanges: [WARCExchange], kept: Range<Int>?) -> [WARCExchange] {
        guard let answer = exchanges.last else { return [] }
        var now = Array(exchanges.dropLast())
        guard let kept else { return now + [answer] }
        // Bytes written again from before where an earlier piece started (the part started over,
        // or was cut back to its checkpoint): those pieces' bodies are no longer in the file.
        let replaced = pieces.filter { $0.range.lowerBound >= kept.lowerBound }
        now += replaced.map(\.exchange)
        pieces.removeAll { $0.range.lowerBound >= kept.lowerBound }
        // One that reached past where this one starts (a part cut back to its checkpoint) keeps what is left of it.
        for index in pieces.indices where pieces[index].range.upperBound > kept.lowerBound {
            pieces[index].range = pieces[index].range.lowerBound..<kept.lowerBound
        }
        pieces.append(Piece(exchange: answer, range: kept))
        return now
    }

    /// The download stopped without its file (it failed, its part was thrown away, or it was
    /// removed): every waiting exchange is written now, heads only.
    mutating func abandon() -> [WARCExchange] {
        defer { pieces.removeAll() }
        return pieces.map(\.exchange)
    }
}

/// A complete file and the exchanges that brought it, for its `response` record.
struct WARCPayload: Sendable {
    var pieces: [WARCCapture.Piece]
    /// The download's URL, for a file no exchange of this process brought (a `resource` record).
    var url: String
    /// The finished file, read by the WARC writer (the part, before its rename).
    var path: String
    /// The 200 that started the part at its first byte, kept with the part (`WARCHeadAttribute`):
    /// read by the placer, for a part an earlier run began.
    var earlierHead: WARCExchange?

    /// The exchange whose head the response gets, the one that announced the whole file: the
    /// 200 that delivered it from its first byte, in this run or an earlier one (`fromThisRun`).
    /// Nil when none is known: the file's bytes go in a `resource` record.
    var wholeHead: (exchange: WARCExchange, fromThisRun: Bool)? {
        if let piece = pieces.first(where: { $0.range.lowerBound == 0 && $0.exchange.status == 200 }) { return (piece.exchange, true) }
        if let earlierHead, earlierHead.status == 200 { return (earlierHead, false) }
        return nil
    }

    /// `WARC-Monsoon-Ranges`: which bytes of a file of `size` each exchange delivered (its
    /// status), and which came from an earlier run ("earlier"); nil when one 200 brought it all.
    func rangesField(size: Int) -> String? {
        if pieces.count == 1, let only = pieces.first, only.range == 0..<size, only.exchange.status == 200 { return nil }
        var items: [String] = []
        var next = 0
        for piece in pieces.sorted(by: { $0.range.lowerBound < $1.range.lowerBound }) where !piece.range.isEmpty {
            if piece.range.lowerBound > next { items.append("\(next)-\(piece.range.lowerBound - 1) earlier") }
            items.append("\(piece.range.lowerBound)-\(piece.range.upperBound - 1) \(piece.exchange.status)")
            next = max(next, piece.range.upperBound)
        }
        if next < size { items.append("\(next)-\(size - 1) earlier") }
        return items.isEmpty ? nil : items.joined(separator: ", ")
    }
}

/// The head of the 200 that started a part at its first byte, kept with the part as an
/// extended attribute (written with --warc only), so the run that completes the part records
/// the whole file under the head that announced it. Capped to fit ext4's attribute space: a
/// larger head is not kept (the file is then recorded as a `resource`).
enum WARCHeadAttribute {
    static let name = "user.monsoon.warc-head"
    static let maxBytes = 3 << 10

    /// `exchange`'s URL, date, address and response head, or nil when that is over `maxBytes`.
    static func encode(_ exchange: WARCExchange) -> [UInt8]? {
        let seconds = Int(exchange.date.timeIntervalSince1970.rounded(.down))
        let bytes = Array("\(WARCRecord.oneLine(exchange.url))\n\(seconds)\n\(WARCRecord.oneLine(exchange.ip ?? ""))\n".utf8) + exchange.response
        return bytes.count <= maxBytes ? bytes : nil
    }

    /// The exchange kept in `bytes` (its request is not: it was recorded by the run that sent it).
    static func decode(_ bytes: [UInt8]) -> WARCExchange? {
        let lines = bytes.split(separator: 0x0A, maxSplits: 3, omittingEmptySubsequences: false)
        guard lines.count == 4, let seconds = Int(String(decoding: lines[1], as: UTF8.self)) else { return nil }
        let ip = String(decoding: lines[2], as: UTF8.self)
        let exchange = WARCExchange(url: String(decoding: lines[0], as: UTF8.self), ip: ip.isEmpty ? nil : ip,
                                    date: Date(timeIntervalSince1970: Double(seconds)), request: [], response: Array(lines[3]))
        return exchange.status == 200 && exchange.responseIsComplete ? exchange : nil
    }
}
