import FoundationEssentials
import MonsoonEngine
#if canImport(Glibc)
import Glibc
#endif

/// Fetches feed documents through the engine's in-memory fetch: gzip, conditional GET, a size cap and timeouts, the
/// engine's retry policy and safety rules (http and https only, also on redirects).
///
/// `package`: the shared library of a cluster reads feeds through it too.
package struct FeedFetcher: Sendable {
    let manager: DownloadManager
    var limits = FeedLimits()
    var timeout: Double = 60
    var userAgent = "Monsoon/0.1 (podcast archiver)"
    /// False for a fetch the user waits for (subscribing, inspecting), which then fails at once with the reason.
    var retriesConnectionFailures = true
    /// Keep the first page's bytes in `RefreshSummary.document` (for an archive's feed snapshot).
    var keepsDocument = false
    /// A feed's later pages may be on this machine or its network (`--allow-private`): without, they are only where
    /// the feed's first page is, or public.
    package var allowsPrivate = false

    package struct Document: Sendable {
        package var data: Data
        package var finalURL: URL
        /// Every redirect was 301 or 308: the feed has moved for good.
        package var movedPermanently: Bool
        package var etag: String?
        package var lastModified: String?
        /// The `Content-Type`, for saying what a document that is not a feed is.
        package var mediaType: String?
    }

    enum Outcome: Sendable {
        case notModified
        case document(Document)
    }

    /// `page` numbers a later page of a paged feed, for messages. A body over `maxBytes` (``FeedLimits/maxBytes`` when
    /// not given) is refused with `.tooLarge` as it comes.
    func fetch(_ url: URL, etag: String? = nil, lastModified: String? = nil, page: Int? = nil, maxBytes: Int? = nil,
               addresses: AddressScope = .any) async throws(FeedError) -> Outcome {
        let scheme = url.scheme?.lowercased()
        guard scheme == "http" || scheme == "https" else {
            throw FeedError(.unsupportedScheme, "\(Redaction.redact(url)) is not an http or https URL")
        }
        guard url.host?.isEmpty == false else {
            throw FeedError(.invalidURL, "\(Redaction.redact(url)) is not a URL with a host")
        }
        var headers = ["User-Agent": userAgent, "Accept": "application/rss+xml, application/atom+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.8"]
        if let etag { headers["If-None-Match"] = etag }
        if let lastModified { headers["If-Modified-Since"] = lastModified }
        let what = Self.name(of: url, page: page)
        let response: FetchResponse
        do {
            var request = FetchRequest(url: url, headers: headers, maxBytes: maxBytes ?? limits.maxBytes, timeout: timeout,
                                       retriesConnectionFailures: retriesConnectionFailures)
            request.addresses = addresses
            response = try await manager.fetch(request)
        } catch {
            switch error.code {
            case .tooLarge:
                throw FeedError(.tooLarge, "\(page == nil ? "the feed at " : "")\(what) is larger than \(ByteCount.format(limits.maxBytes)); refused")
            case .unsupportedScheme:
                throw FeedError(.unsupportedScheme, "\(what) redirected to a scheme other than http or https; refused")
            case .privateAddress:
                throw FeedError(.network, "cannot fetch \(what): \(error.message); if you trust the feed, allow it with --allow-private "
                                     + "or 'monsoon config set allow-private on'")
            default:
                throw FeedError(.network, "cannot fetch \(what): \(error.message)")
            }
        }
        if response.status == 304 { return .notModified }
        guard (200...299).contains(response.status) else {
            throw FeedError(.httpStatus, "cannot fetch \(what): \(HTTPStatusText.answered(response.status))", httpStatus: response.status)
        }
        return .document(Document(data: response.body, finalURL: response.finalURL, movedPermanently: response.isPermanentlyRedirected,
                                  etag: response.header("ETag"), lastModified: response.header("Last-Modified"), mediaType: response.header("Content-Type")))
    }

    /// The URL for messages, redacted; a later page as "page 3 of the feed (URL)".
    static func name(of url: URL, page: Int?) -> String {
        page.map { "page \($0) of the feed (\(Redaction.redact(url)))" } ?? Redaction.redact(url)
    }

    /// Fetches a feed and, when `followPages`, its further pages (`atom:link rel="next"`), up to `maxPages`, stopping
    /// at a page seen before. Nil when the server answered 304.
    ///
    /// The documents are kept as fetched (later pages on disk, ``PageFile``) for the library to parse in one
    /// transaction. Only a paged feed is parsed here too, to find the next page; one whose first page cannot name a
    /// next one (``mayNameNextPage(_:)``) is not.
    package func load(_ url: URL, etag: String? = nil, lastModified: String? = nil, followPages: Bool, maxPages: Int = 100,
                      waitingForTurn: ((URL) async throws(FeedError) -> Void)? = nil) async throws(FeedError) -> Loaded? {
        guard case .document(let first) = try await fetch(url, etag: etag, lastModified: lastModified) else { return nil }
        var loaded = Loaded(first: first)
        if followPages, Self.mayNameNextPage(first.data) { try await walk(&loaded, from: url, maxPages: maxPages, waitingForTurn: waitingForTurn) }
        return loaded
    }

    /// Reads the later pages of a feed. Each is parsed as it comes (its episodes dropped at once) for its next page and
    /// whether it brought anything new, then written to the page file before the next is fetched: memory holds one
    /// page, whatever their number. A page that brings nothing new ends the walk, and so does one that cannot be read
    /// or would pass ``FeedLimits/maxTotalBytes``, its error kept in ``Loaded/pageError``, the pages before it kept.
    ///
    /// - Parameter waitingForTurn: before each later page, with its URL: a cluster worker waits there for its host's
    ///   turn (its error ends the walk, as a page's does).
    package func walk(_ loaded: inout Loaded, from url: URL, maxPages: Int = 100,
                      waitingForTurn: ((URL) async throws(FeedError) -> Void)? = nil) async throws(FeedError) {
        loaded = Loaded(first: loaded.first)
        loaded.walked = true
        // A page is a URL the feed gave: not into this machine or its network, unless the feed is there or the user allows it.
        let addresses: AddressScope = allowsPrivate || AddressScope.isPrivate(host: loaded.first.finalURL.host ?? "") ? .any : .publicOnly
        // The same rules across pages as within one: a re-used guid with another enclosure is kept.
        var stream = EpisodeStream(sink: { _, _ in }, batchSize: FeedParser.defaultBatchSize)
        var feed = try FeedParser.parse(loaded.first.data, url: loaded.first.finalURL, limits: limits, mediaType: loaded.first.mediaType, stream: &stream)
        var seen: Set<String> = [url.absoluteString, loaded.first.finalURL.absoluteString]
        var left = limits.maxTotalBytes - loaded.first.data.count
        // Older pages, over http(s) only (a feed must not point Monsoon at local files).
        while let next = feed.nextPageURL, loaded.pages < maxPages, DownloadRequest.isDownloadable(next),
              seen.insert(next.absoluteString).inserted {
            let number = loaded.pages + 1
            let before = stream.registry.count
            do throws(FeedError) {
                try await waitingForTurn?(next)
                guard case .document(let page) = try await fetchPage(next, number: number, left: left, addresses: addresses) else { break }
                feed = try Self.parsePage(page, requested: next, number: number, limits: limits, stream: &stream)
                try loaded.append(page, name: Self.name(of: next, page: number))
                left -= page.data.count
            } catch {
                loaded.pageError = error
                break
            }
            if stream.registry.count == before { break }
        }
    }

    /// Fetches page `number` of a feed when it fits in what is `left` of ``FeedLimits/maxTotalBytes``:
    /// the transfer of one that does not is cut where it goes past.
    private func fetchPage(_ url: URL, number: Int, left: Int, addresses: AddressScope) async throws(FeedError) -> Outcome {
        let tooMuch = FeedError(.tooLarge, "\(Self.name(of: url, page: number)) would take the feed's pages past "
                                + "\(ByteCount.format(limits.maxTotalBytes)) in all; refused")
        guard left > 0 else { throw tooMuch }
        guard left < limits.maxBytes else { return try await fetch(url, page: number, addresses: addresses) }
        do throws(FeedError) {
            return try await fetch(url, page: number, maxBytes: left, addresses: addresses)
        } catch where error.code == .tooLarge {
            throw tooMuch
        }
    }

    /// Every page's episodes in memory, for an archive's dry run, walking the pages first if that was not done.
    /// Deduplicated across pages as the library does; the pages are read back from disk one at a time.
    func parseAll(_ loaded: inout Loaded, from url: URL) async throws(FeedError) -> ParsedFeed {
        var stream = EpisodeStream()
        var feed = try FeedParser.parse(loaded.first.data, url: loaded.first.finalURL, limits: limits, mediaType: loaded.first.mediaType, stream: &stream)
        if feed.nextPageURL != nil, !loaded.walked {
            try await walk(&loaded, from: url)
            return try await parseAll(&loaded, from: url)
        }
        for (offset, page) in loaded.later.enumerated() {
            let more = try Self.parsePage(try loaded.document(of: page, number: offset + 2), requested: page.finalURL, number: offset + 2,
                                          limits: limits, stream: &stream)
            feed.episodes += more.episodes
            feed.duplicateCount += more.duplicateCount
        }
        return feed
    }

    /// Parses a later page; its errors name the page by the URL it was `requested` at.
    static func parsePage(_ page: Document, requested: URL, number: Int, limits: FeedLimits, stream: inout EpisodeStream) throws(FeedError) -> ParsedFeed {
        do throws(FeedError) {
            return try FeedParser.parse(page.data, url: page.finalURL, limits: limits, mediaType: page.mediaType, stream: &stream)
        } catch {
            throw FeedError(error.code, "\(name(of: requested, page: number)) is not a readable feed: \(error.message)",
                            line: error.line, column: error.column)
        }
    }

    /// False only when the document has no `rel` attribute whose quoted value is `next` (any case, spaces around) or
    /// holds a reference (`&`): a scan of the bytes, so a feed of one page (nearly all, and the largest) is parsed once,
    /// into the library. A document that is not ASCII-compatible (UTF-16, UTF-32, another declared encoding) may name one.
    static func mayNameNextPage(_ data: Data) -> Bool {
        data.withUnsafeBytes { raw -> Bool in
            let bytes = raw.bindMemory(to: UInt8.self)
            guard let base = bytes.baseAddress else { return false }
            let (detected, bom) = FeedDecoding.detect(bytes)
            if let detected, detected != .utf8 { return true }
            if case .iconv = FeedDecoding.declaredEncoding(UnsafeBufferPointer(rebasing: bytes[bom...])) { return true }
            var index = 0
            // memchr for the `r`: the scan of a 50 MB feed takes a few milliseconds.
            while index < bytes.count, let found = memchr(base + index, Int32(UInt8(ascii: "r")), bytes.count - index) {
                var position = base.distance(to: found.assumingMemoryBound(to: UInt8.self)) + 1
                index = position
                guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "e"), bytes[position + 1] == UInt8(ascii: "l") else { continue }
                position += 2
                func skipSpaces() { while position < bytes.count, ByteScanner.isSpace(bytes[position]) { position += 1 } }
                skipSpaces()
                guard position < bytes.count, bytes[position] == UInt8(ascii: "=") else { continue }
                position += 1
                skipSpaces()
                guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") || bytes[position] == UInt8(ascii: "'") else { continue }
                let quote = bytes[position]
                let start = position + 1
                let end = bytes[start...].firstIndex(of: quote) ?? bytes.count
                let value = UnsafeBufferPointer(rebasing: bytes[start..<end])
                if value.contains(UInt8(ascii: "&")) || ASCIIBytes.equalsIgnoringCase(value, "next") { return true }
            }
            return false
        }
    }

    /// A feed's documents as fetched, not yet parsed into the library.
    package struct Loaded: Sendable {
        package var first: Document
        /// The pages after the first, in order: their documents wait in ``file``, read back with ``document(of:number:)``.
        package private(set) var later: [Page] = []
        /// The later pages were looked for (``walk(_:from:maxPages:)``).
        package var walked = false
        /// Why a later page could not be read (its message names the page); the pages before it are kept.
        package var pageError: FeedError?
        private var file: PageFile?
        package var pages: Int { 1 + later.count }

        package struct Page: Sendable {
            package var finalURL: URL
            package var mediaType: String?
            var bytes: Range<Int>
        }

        init(first: Document) {
            self.first = first
        }

        mutating func append(_ document: Document, name: String) throws(FeedError) {
            if file == nil { file = try PageFile() }
            let start = later.last?.bytes.upperBound ?? 0
            try file!.write(document.data, at: start, page: name)
            later.append(Page(finalURL: document.finalURL, mediaType: document.mediaType, bytes: start..<start + document.data.count))
        }

        /// `number` is its place among the pages, for messages.
        func document(of page: Page, number: Int) throws(FeedError) -> Document {
            let name = FeedFetcher.name(of: page.finalURL, page: number)
            // Every page in `later` was written to `file`, made with the first of them.
            let data = try file!.read(page.bytes, page: name)
            return Document(data: data, finalURL: page.finalURL, movedPermanently: false, etag: nil, lastModified: nil, mediaType: page.mediaType)
        }
    }
}
