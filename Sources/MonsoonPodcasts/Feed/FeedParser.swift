import CLibXML2
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Reads RSS 2.0 (with the iTunes and Podcast Index namespaces, Media RSS, RSS 0.9x and 1.0) and Atom podcast feeds as
/// publishers really serve them, in three stages, each cheap when there is nothing to do:
/// 1. ``FeedDecoding``: any encoding to clean UTF-8.
/// 2. ``FeedRepair``: recoverable breakage repaired, the DTD removed and its entities expanded within limits.
/// 3. ``SAXParser`` and ``FeedBuilder``: libxml2's SAX2 parser builds the ``ParsedFeed``. An undeclared prefix
///    (`itunes:` without its `xmlns:itunes`) stands for its usual namespace.
public enum FeedParser {
    /// `url` resolves relative URLs (a `file://` URL for files). `mediaType`, the server's `Content-Type`, names what a
    /// document that is not a feed is when its bytes do not say.
    public static func parse(_ data: Data, url: URL, limits: FeedLimits = FeedLimits(), mediaType: String? = nil) throws(FeedError) -> ParsedFeed {
        var stream = EpisodeStream()
        return try parse(data, url: url, limits: limits, mediaType: mediaType, stream: &stream)
    }

    static func parse(_ data: Data, url: URL, limits: FeedLimits, mediaType: String?, stream: inout EpisodeStream) throws(FeedError) -> ParsedFeed {
        guard data.count <= limits.maxBytes else { throw tooLarge(data.count, limits) }
        var result: Result<ParsedFeed, FeedError> = .failure(FeedError(.empty, "the feed is empty (0 bytes)"))
        data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            result = Result { () throws(FeedError) in try parse(bytes: bytes, url: url, limits: limits, mediaType: mediaType, stream: &stream) }
        }
        return try result.get()
    }

    /// A file larger than `limits.maxBytes` is refused before it is read, or as it grows past it. The file is read, never
    /// mapped: a mapped file another program truncates during the parse kills the process with SIGBUS.
    public static func parse(fileAt path: String, limits: FeedLimits = FeedLimits()) throws(FeedError) -> ParsedFeed {
        var stream = EpisodeStream()
        return try parse(fileAt: path, limits: limits, stream: &stream)
    }

    static func parse(fileAt path: String, limits: FeedLimits, stream: inout EpisodeStream) throws(FeedError) -> ParsedFeed {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            throw FeedError(.unreadable, errno == ENOENT ? "no such file: \(path)" : "cannot read \(path): \(reason)")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw FeedError(.unreadable, "cannot read \(path): \(String(cString: strerror(errno)))") }
        guard status.st_mode & S_IFMT != S_IFDIR else { throw FeedError(.unreadable, "\(path) is a folder, not a feed file") }
        let size = Int(status.st_size)
        guard size <= limits.maxBytes else { throw tooLarge(size, limits) }
        return try parse(try readAll(descriptor, path: path, sizeHint: size, limits: limits), url: url, limits: limits, mediaType: nil, stream: &stream)
    }

    /// Into one buffer sized from `fstat` (a pipe or a growing file gets a larger one), never past `limits.maxBytes`.
    private static func readAll(_ descriptor: Int32, path: String, sizeHint: Int, limits: FeedLimits) throws(FeedError) -> Data {
        // One byte over the hint: a file that grew is noticed without a second, empty read.
        let ceiling = limits.maxBytes == .max ? .max : limits.maxBytes + 1
        var capacity = min(max(sizeHint, 64 << 10) + 1, ceiling)
        guard var buffer = ReadBuffer(capacity: capacity) else { throw FeedError(.unreadable, "cannot read \(path): out of memory") }
        var count = 0
        while true {
            if count == capacity {
                guard capacity < ceiling else {
                    buffer.release()
                    throw FeedError(.tooLarge, "the feed grew past the limit of \(limits.maxBytes) bytes while it was read; it was not parsed")
                }
                capacity = capacity > ceiling / 2 ? ceiling : capacity * 2
                guard let larger = ReadBuffer(capacity: capacity) else {
                    buffer.release()
                    throw FeedError(.unreadable, "cannot read \(path): out of memory")
                }
                larger.base.copyMemory(from: buffer.base, byteCount: count)
                buffer.release()
                buffer = larger
            }
            let read = Glibc.read(descriptor, buffer.base + count, capacity - count)
            if read == 0 { return buffer.data(count: count) }
            if read < 0 {
                if errno == EINTR { continue }
                let reason = String(cString: strerror(errno))
                buffer.release()
                throw FeedError(.unreadable, "cannot read \(path): \(reason)")
            }
            count += read
        }
    }

    /// A large one is an anonymous mapping populated in one call: a 12 MB feed read into memory faulted in page by page
    /// took 2,900 page faults, 9 ms more than mapping the file.
    private struct ReadBuffer {
        let base: UnsafeMutableRawPointer
        let capacity: Int
        private var mapped: Bool { capacity >= 1 << 20 }

        init?(capacity: Int) {
            self.capacity = capacity
            if capacity >= 1 << 20 {
                let pointer = mmap(nil, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0)
                guard let pointer, pointer != MAP_FAILED else { return nil }
                base = pointer
            } else {
                guard let pointer = malloc(capacity) else { return nil }
                base = pointer
            }
        }

        func release() {
            if mapped { munmap(base, capacity) } else { free(base) }
        }

        /// Owning the memory from now on.
        func data(count: Int) -> Data {
            guard mapped else { return Data(bytesNoCopy: base, count: count, deallocator: .free) }
            let capacity = capacity
            return Data(bytesNoCopy: base, count: count, deallocator: .custom { pointer, _ in munmap(pointer, capacity) })
        }
    }

    private static func tooLarge(_ size: Int, _ limits: FeedLimits) -> FeedError {
        FeedError(.tooLarge, "the feed is \(size) bytes, more than the limit of \(limits.maxBytes) bytes; it was not read")
    }

    static func parse(bytes input: UnsafeBufferPointer<UInt8>, url: URL, limits: FeedLimits, mediaType: String? = nil,
                      stream: inout EpisodeStream) throws(FeedError) -> ParsedFeed {
        do {
            return try parseText(input, url: url, limits: limits, stream: &stream)
        } catch where [.empty, .malformed, .notAFeed].contains(error.code) {
            // An image, audio or an archive is not "malformed XML": say what it is.
            guard let kind = DocumentKind.sniff(input) ?? mediaType.flatMap(DocumentKind.describe) else { throw error }
            let subject = url.isFileURL ? "the file \(url.path)" : "the document at \(Redaction.redact(url))"
            throw FeedError(.notAFeed, "\(subject) is not a feed (RSS or Atom): it is \(kind)")
        }
    }

    private static func parseText(_ input: UnsafeBufferPointer<UInt8>, url: URL, limits: FeedLimits,
                                  stream: inout EpisodeStream) throws(FeedError) -> ParsedFeed {
        guard input.contains(where: { !ByteScanner.isSpace($0) }) else {
            throw FeedError(.empty, input.isEmpty ? "the feed is empty (0 bytes)" : "the feed holds only whitespace")
        }
        let decoded = FeedDecoding.decode(input)
        if let transcoded = decoded.transcoded {
            return try transcoded.withUnsafeBufferPointer { bytes throws(FeedError) in
                try repairAndParse(bytes, url: url, limits: limits, stream: &stream, decodingRepair: decoded.repair)
            }
        }
        return try repairAndParse(UnsafeBufferPointer(rebasing: input[decoded.start...]), url: url, limits: limits, stream: &stream,
                                  decodingRepair: decoded.repair)
    }

    /// A second parse, of the text cleaned of the forbidden control characters that stopped the first.
    private enum Retry {
        /// As if the cleaned text had come: the first handed nothing out.
        case afresh
        /// Going on after the items the first parse (this builder) read.
        case after(FeedBuilder)
    }

    private static func repairAndParse(_ bytes: UnsafeBufferPointer<UInt8>, url: URL, limits: FeedLimits, stream: inout EpisodeStream,
                                       decodingRepair: String?, retry: Retry? = nil) throws(FeedError) -> ParsedFeed {
        let repaired = try FeedRepair.repair(bytes, limits: limits)
        guard repaired.size <= limits.maxBytes else { throw tooLarge(repaired.size, limits) }
        try checkAttributes(RepairedText(input: bytes, repaired: repaired), limits: limits)
        let builder = FeedBuilder(documentURL: url)
        builder.feed.repairs = (decodingRepair.map { [$0] } ?? []) + repaired.repairs
        builder.limits = limits
        builder.cdata = (bytes, repaired.cdata)
        builder.sink = stream.sink
        builder.batchSize = stream.batchSize
        builder.textHasForbiddenCharacter = { RepairedText(input: bytes, repaired: repaired).containsForbiddenCharacter() }
        if case .after(let earlier) = retry {
            // The items before the bad character read the same in the cleaned text (the builder cleaned the CDATA sections,
            // which libxml2 never sees): handed out or waiting in `earlier`'s batch, they are not read twice.
            builder.skipping = earlier.finishedItems
            builder.feed.episodes = earlier.feed.episodes
            builder.feed.duplicateCount = earlier.feed.duplicateCount
        }
        // The identities given out so far (earlier pages, or the first parse), moved in and back out: never copied.
        let freshRegistry = stream.registry.count == 0
        swap(&builder.identities, &stream.registry)
        var failure = SAXParser.parse(RepairedText(input: bytes, repaired: repaired), into: builder)
        swap(&builder.identities, &stream.registry)
        if let error = builder.sinkError {
            stream.failure = error
            return builder.feed
        }
        if let line = builder.tooDeepAt {
            throw FeedError(.tooComplex, "the feed nests elements more than \(limits.maxDepth) deep at line \(line), which no real feed does; "
                            + "it was not read: the publisher has to fix the feed", line: line)
        }
        if let failure, failure.code == Int(XML_ERR_INVALID_CHAR.rawValue), retry == nil {
            // A control character XML forbids (U+000B, U+001A …): rare, so looked for only now. Drop them all, parse again:
            // afresh when nothing was handed out and no earlier page gave out identities, else after what was read.
            let cleaned = FeedDecoding.repairUTF8(bytes)
            if cleaned.count != bytes.count {
                let again: Retry = builder.delivered == 0 && freshRegistry ? .afresh : .after(builder)
                if case .afresh = again { stream.registry = EpisodeIdentity.Registry() }
                return try cleaned.withUnsafeBufferPointer { cleaned throws(FeedError) in
                    try repairAndParse(cleaned, url: url, limits: limits, stream: &stream, decodingRepair: decodingRepair, retry: again)
                }
            }
        }
        if let cut = failure, endsInClosingTags(builder, cut, bytes) {
            failure = nil
            builder.feed.repairs.append("the feed ends early, inside its closing tags (an incomplete download?); every item before them was read")
        }
        // Line numbers, the HTML sniffing and the alternate link all work on the text before repairs.
        try check(builder, failure, bytes, url: url)
        builder.deliver()
        if let error = builder.sinkError { stream.failure = error }
        return builder.feed
    }

    /// Looked for in the text libxml2 is to read: the input, or, when entities the DTD declares were expanded into it,
    /// the repaired text, copied whole for this (rare: real feeds declare none, or a handful for characters).
    private static func checkAttributes(_ text: RepairedText, limits: FeedLimits) throws(FeedError) {
        func check(_ bytes: UnsafeBufferPointer<UInt8>) throws(FeedError) {
            guard let offset = AttributeScan.crowdedElement(in: bytes, limit: limits.maxAttributes) else { return }
            let (line, name) = AttributeScan.describe(bytes, at: offset)
            throw FeedError(.tooComplex, "the feed's \(name.map { "<\($0)>" } ?? "element") at line \(line) has more than \(limits.maxAttributes) "
                            + "attributes, which no real feed has; it was not read: the publisher has to fix the feed", line: line)
        }
        guard text.repaired.expandsEntities else { return try check(text.input) }
        var whole: [UInt8] = []
        whole.reserveCapacity(text.repaired.size)
        text.forEachChunk(size: 256 << 10) { chunk in
            whole.append(contentsOf: chunk)
            return true
        }
        try whole.withUnsafeBufferPointer { bytes throws(FeedError) in try check(bytes) }
    }

    private static func check(_ builder: FeedBuilder, _ failure: SAXParser.Failure?, _ bytes: UnsafeBufferPointer<UInt8>,
                              url: URL) throws(FeedError) {
        if let root = builder.foreignRoot {
            if root.lowercased() == "html" { throw htmlPage(bytes, url: url) }
            if ["rss", "feed", "RDF"].contains(root), let namespace = builder.foreignRootNamespace {
                throw FeedError(.notAFeed, "the document is XML but not a feed: its root element <\(root)> is in the namespace \"\(namespace)\", "
                                + "which is neither RSS's nor Atom's; the publisher has to fix the feed")
            }
            let hint = root.lowercased() == "opml" ? "; it is an OPML subscription list: import it instead" : ""
            throw FeedError(.notAFeed, "the document is XML but not a feed: its root element is <\(root)>, not <rss> or <feed>\(hint)")
        }
        if let failure {
            if !builder.sawRoot {
                if HTMLPage.looksLikeHTML(bytes) { throw htmlPage(bytes, url: url) }
                if !hasElement(bytes) { throw FeedError(.empty, "the feed holds no element, only comments or declarations") }
            }
            throw malformed(failure, bytes)
        }
    }

    private static func htmlPage(_ bytes: UnsafeBufferPointer<UInt8>, url: URL) -> FeedError {
        let alternate = HTMLPage.alternateFeedURL(bytes, pageURL: url)
        let title = HTMLPage.title(bytes).map { " '\($0)'" } ?? ""
        if let alternate {
            return FeedError(.htmlPage, "got a web page\(title) instead of a feed; the page names its feed: \(withoutCredentials(alternate))",
                             alternateFeedURL: alternate)
        }
        return FeedError(.htmlPage, "got a web page\(title) instead of a feed, and it links no feed; check the address in a browser (it may be a login, error or bot-check page)")
    }

    /// A relative link on a private feed's page inherits its `user:password@`, which messages must never show
    /// (``FeedError/alternateFeedURL`` keeps them, for fetching).
    static func withoutCredentials(_ url: URL) -> String {
        guard url.user != nil || url.password != nil, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return url.absoluteString
        }
        components.user = nil
        components.password = nil
        return components.string ?? url.absoluteString
    }

    /// Only the feed's closing tags are missing, the last perhaps cut (`</rss`): libxml2 stopped at the end of the text,
    /// with no item or field open, and the text ends in a start of the closing tags (`</channel>`, `</chan`), at least
    /// `</`. A text cut inside an item, or right after one (later items may be missing), is not this.
    private static func endsInClosingTags(_ builder: FeedBuilder, _ failure: SAXParser.Failure, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let atEnd = [XML_ERR_TAG_NOT_FINISHED, XML_ERR_LTSLASH_REQUIRED, XML_ERR_GT_REQUIRED, XML_ERR_DOCUMENT_END].contains { Int($0.rawValue) == failure.code }
        guard atEnd, builder.sawRoot, builder.foreignRoot == nil, !builder.stopped, builder.itemDepth < 0, builder.field == .none else { return false }
        var end = bytes.count
        while end > 0, ByteScanner.isSpace(bytes[end - 1]) { end -= 1 }
        // Where libxml2 stopped: after the last character.
        let lineStart = bytes[..<end].lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
        let line = bytes[..<end].reduce(1) { $0 + ($1 == 0x0A ? 1 : 0) }
        guard end > 0, failure.line > line || (failure.line == line && failure.column > end - lineStart) else { return false }
        // The last bytes but spaces, as many as the longest closing tags have.
        var tail: [UInt8] = []
        for byte in bytes[..<end].reversed() where !ByteScanner.isSpace(byte) {
            tail.insert(byte, at: 0)
            if tail.count == 20 { break }
        }
        return ["</channel></rss>", "</rss>", "</rdf:RDF>", "</channel></rdf:RDF>", "</feed>"].contains { closing in
            (2...closing.utf8.count).contains { tail.count >= $0 && tail.suffix($0).elementsEqual(closing.utf8.prefix($0)) }
        }
    }

    private static func malformed(_ failure: SAXParser.Failure, _ bytes: UnsafeBufferPointer<UInt8>) -> FeedError {
        // An error on the last line of a document that stops mid-element is a cut-off download.
        let lastLine = bytes.reduce(1) { $0 + ($1 == 0x0A ? 1 : 0) }
        let trailing = bytes.reversed().first { !ByteScanner.isSpace($0) }
        let truncated = failure.line >= lastLine - 1 && trailing != UInt8(ascii: ">")
        let advice = truncated ? "the feed ends early (an incomplete download?); try again later"
                               : "the publisher has to fix the feed"
        return FeedError(.malformed, "the feed is not well-formed XML at line \(failure.line), column \(failure.column): \(failure.message); \(advice)",
                         line: failure.line, column: failure.column)
    }

    /// Not a comment, declaration or processing instruction.
    private static func hasElement(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        while let open = bytes[index...].firstIndex(of: UInt8(ascii: "<")) {
            if FeedRepair.matches(bytes, "<!--", at: open, ignoringCase: false) {
                index = FeedRepair.find(bytes, "-->", from: open + 4).map { $0 + 3 } ?? bytes.count
            } else if open + 1 < bytes.count, bytes[open + 1] == UInt8(ascii: "?") || bytes[open + 1] == UInt8(ascii: "!") {
                index = open + 2
            } else {
                return open + 1 < bytes.count
            }
        }
        return false
    }
}
