import FoundationEssentials
import Glibc

extension WARCArchive.State {
    /// A `request` record and, when an answer came, its `response`: with `body` (an in-memory
    /// fetch's), else the head alone (`WARC-Truncated: unspecified` when the answer had a body:
    /// not kept, or kept in another record, none of WARC 1.1's other reasons).
    func writePair(_ exchange: WARCExchange, body: [UInt8]?) throws(WARCError) {
        let file = try ensureOpen()
        let responseID = exchange.response.isEmpty ? nil : WARCRecord.newID()
        try writeRequest(exchange, concurrentTo: responseID.map { [$0] } ?? [], file: file)
        guard let responseID else { return }
        let (head, headFields) = Self.head(of: exchange)
        var fields = headFields
        // The body (a feed, up to its size cap) is never copied: its pieces are written in turn.
        var (prefix, suffix) = (Array<UInt8>(), Array<UInt8>())
        if let body {
            (prefix, suffix) = Self.framing(exchange, size: body.count)
        } else if exchange.hadBody, !fields.contains(where: { $0.name == "WARC-Truncated" }) {
            // (A head cut short says `disconnect` already: a record has one reason.)
            fields.append(("WARC-Truncated", "unspecified"))
        }
        let payload = [prefix, body ?? [], suffix]
        let blockDigest = try SHA1(), payloadDigest = try SHA1()
        blockDigest.update(head)
        // The payload digest is over the block after the head, chunk framing included: what
        // warcio 1.7.4 checks (not WARC 1.1 §6.3.2's body without its transfer encoding; see
        // docs/REFERENCE.md's "Web archives" on why).
        for piece in payload {
            blockDigest.update(piece)
            payloadDigest.update(piece)
        }
        let record = WARCRecord(type: "response", id: responseID, date: exchange.date, targetURI: exchange.url,
                                fields: Self.common(exchange, file: file) + fields, contentType: "application/http;msgtype=response",
                                contentLength: head.count + payload.reduce(0) { $0 + $1.count },
                                blockDigest: blockDigest.finishLabel(), payloadDigest: payloadDigest.finishLabel())
        try write(record, blocks: [head] + payload)
    }

    private func writeRequest(_ exchange: WARCExchange, concurrentTo: [String], file: OpenFile) throws(WARCError) {
        let request = exchange.recordedRequest
        let record = WARCRecord(type: "request", id: WARCRecord.newID(), date: exchange.date, targetURI: exchange.url,
                                fields: Self.common(exchange, file: file) + concurrentTo.map { ("WARC-Concurrent-To", $0) },
                                contentType: "application/http;msgtype=request", contentLength: request.count,
                                blockDigest: try SHA1.label(of: request), payloadDigest: try SHA1.label(of: []))
        try write(record, blocks: [request])
    }

    /// The fields every record of an exchange has.
    private static func common(_ exchange: WARCExchange, file: OpenFile) -> [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = [("WARC-Warcinfo-ID", file.warcinfoID)]
        if let ip = exchange.ip, !ip.isEmpty { fields.append(("WARC-IP-Address", ip)) }
        return fields
    }

    /// The response's head as received; one cut short by a dropped connection is ended with
    /// its blank line (and said to be, `WARC-Truncated: disconnect`), so readers find its end.
    private static func head(of exchange: WARCExchange) -> ([UInt8], [(name: String, value: String)]) {
        guard !exchange.responseIsComplete else { return (exchange.response, []) }
        var head = exchange.response
        if !head.isEmpty, head.last != 0x0A { head += [0x0D, 0x0A] }
        head += [0x0D, 0x0A]
        return (head, [("WARC-Truncated", "disconnect")])
    }

    /// What goes around a body of `size` bytes: one chunk when the answer came chunked (curl
    /// hands over the body without its chunks; the head stays as received), else nothing.
    static func framing(_ exchange: WARCExchange, size: Int) -> (prefix: [UInt8], suffix: [UInt8]) {
        guard exchange.isChunked else { return ([], []) }
        guard size > 0 else { return ([], Array("0\r\n\r\n".utf8)) }
        return (Array((String(size, radix: 16) + "\r\n").utf8), Array("\r\n0\r\n\r\n".utf8))
    }

    /// Each file's records, then one flush for all. A payload is on disk only once the file it
    /// went to was flushed: the current one here, the others when `group` closed them (a file
    /// whose flush or close failed fails every payload written to it).
    func writePayloads(_ payloads: [WARCPayload]) -> [WARCError?] {
        var results = [WARCError?](repeating: nil, count: payloads.count)
        var written: [(index: Int, file: Int)] = []
        for (index, payload) in payloads.enumerated() {
            do {
                let number = try ensureOpen().number
                try group { () throws(WARCError) in try writePayload(payload) }
                written.append((index, number))
            } catch {
                results[index] = error
            }
        }
        if let file = current, written.contains(where: { $0.file == file.number }), fsync(file.fd) != 0 {
            // What it holds is uncertain now: it is left `.open` (the next run repairs it) and the next records go to a new file.
            let error = WARCError.system("cannot flush the WARC file \(naming.openPath(file.number))", errno: errno)
            failedFiles[file.number] = error
            failure = failure ?? error   // the queued records in it are lost too: said at `close`
            Glibc.close(file.fd)
            current = nil
        }
        for (index, file) in written { if let error = failedFiles[file] { results[index] = error } }
        return results
    }

    private func writePayload(_ payload: WARCPayload) throws(WARCError) {
        let file = try ensureOpen()
        let fd = FileSystem.retrying { open(payload.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) }
        guard fd >= 0 else { throw WARCError.system("cannot read \(payload.path) for its WARC record", errno: errno) }
        defer { Glibc.close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw WARCError.system("cannot read \(payload.path) for its WARC record", errno: errno) }
        let size = Int(info.st_size)
        let responseID = WARCRecord.newID()
        var record: WARCRecord
        var head: [UInt8] = []
        var prefix: [UInt8] = [], suffix: [UInt8] = []
        var fields: [(name: String, value: String)] = []
        let whole = payload.wholeHead
        // Every exchange but the one whose head the response carries: its own request, and its head alone.
        for piece in payload.pieces where piece.range.lowerBound != 0 || whole?.fromThisRun != true {
            try writePair(piece.exchange, body: nil)
        }
        if let (exchange, fromThisRun) = whole {
            if fromThisRun { try writeRequest(exchange, concurrentTo: [responseID], file: file) }
            let (completeHead, headFields) = Self.head(of: exchange)
            head = completeHead
            (prefix, suffix) = Self.framing(exchange, size: size)
            fields = Self.common(exchange, file: file) + headFields
            record = WARCRecord(type: "response", id: responseID, date: exchange.date, targetURI: exchange.url,
                                fields: [], contentType: "application/http;msgtype=response", contentLength: 0, blockDigest: "")
        } else {
            // No 200 announced the whole file (it came in ranges after a part older than --warc, or
            // its head was too large to keep): its bytes are kept as a `resource`.
            fields = [("WARC-Warcinfo-ID", file.warcinfoID)]
            record = WARCRecord(type: "resource", id: responseID, date: Date(), targetURI: payload.url,
                                fields: [], contentType: "application/octet-stream", contentLength: 0, blockDigest: "")
        }
        if let ranges = payload.rangesField(size: size) { fields.append(("WARC-Monsoon-Ranges", ranges)) }
        record.fields = fields
        record.contentLength = head.count + prefix.count + size + suffix.count
        // The digests go in the record's head, before the block: a first pass reads the file
        // for them, a second compresses it (from the page cache, mostly). The payload digest
        // takes in the chunk framing, as `writePair`'s does.
        let blockDigest = try SHA1(), payloadDigest = try SHA1()
        blockDigest.update(head)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        blockDigest.update(prefix)
        payloadDigest.update(prefix)
        try Self.read(fd, size: size, into: buffer, path: payload.path) { chunk in
            blockDigest.update(chunk)
            payloadDigest.update(chunk)
        }
        blockDigest.update(suffix)
        payloadDigest.update(suffix)
        record.blockDigest = blockDigest.finishLabel()
        record.payloadDigest = payloadDigest.finishLabel()
        let level = whole.map { Self.payloadLevel(head: $0.exchange.response) } ?? 1
        try gzip.begin(fd: file.fd, path: naming.openPath(file.number), level: level)
        try gzip.write(record.head())
        try gzip.write(head + prefix)
        // A body said to be text that does not shrink by a tenth in its first MiB (a server that
        // calls everything text/plain) is stored from there on.
        var judged = level == 0
        try Self.read(fd, size: size, into: buffer, path: payload.path) { (chunk) throws(WARCError) in
            try gzip.write(chunk)
            if !judged {
                judged = true
                if gzip.compressedFraction > 0.9 { try gzip.storeFromHere() }
            }
        }
        try gzip.write(suffix + WARCRecord.trailer)
        try gzip.finish()
        current?.size += gzip.written
    }

    /// How hard a file's record is compressed, from its answer's `Content-Type`. Audio, video and
    /// images are compressed already: deflate gains them a percent or two at 20 times the CPU
    /// of the whole download (zlib's fastest level ran at 60 MB/s here), so they are stored
    /// (level 0: still one gzip member, with its CRC). Text (transcripts, chapters, pages) shrinks
    /// several times over, at zlib's default.
    static func payloadLevel(head: [UInt8]) -> Int32 {
        let prefix = Array("content-type:".utf8)
        for line in head.split(separator: 0x0A) where line.count > prefix.count {
            guard zip(line.prefix(prefix.count), prefix).allSatisfy({ $0 | 0x20 == $1 | 0x20 }) else { continue }
            let type = String(decoding: line.dropFirst(prefix.count), as: UTF8.self).trimmingWhitespace().lowercased()
            let textual = type.hasPrefix("text/") || ["json", "xml", "javascript", "html", "srt", "subrip"].contains { type.contains($0) }
            return textual ? 6 : 0
        }
        return 0   // no type said: most likely the media this is for
    }

    /// Reads the file's `size` bytes from its start, a buffer at a time.
    /// - Throws: when it cannot be read, or is not `size` bytes long any more.
    private static func read(_ fd: Int32, size: Int, into buffer: UnsafeMutableRawBufferPointer, path: String,
                             _ body: (UnsafeRawBufferPointer) throws(WARCError) -> Void) throws(WARCError) {
        var offset = 0
        while offset < size {
            let count = try FileRead.pread(fd, UnsafeMutableRawBufferPointer(rebasing: buffer[0..<min(buffer.count, size - offset)]), at: offset) { code in
                WARCError.system("cannot read \(path) for its WARC record", errno: code)
            }
            if count == 0 { throw WARCError(.fileSystem, "\(path) became shorter while its WARC record was written") }
            try body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            offset += count
        }
    }
}
