import CCrypto
import CCurl
import Foundation

/// One attempt at a download or fetch: a curl easy handle and where its bytes go.
///
/// - Important: confined to the transfer thread, like its handle. curl's callbacks
///   reach it through an unretained pointer; the loop keeps it alive until the
///   handle has been removed from the multi handle.
final class Transfer {
    enum Purpose {
        case download(DownloadID)
        case fetch(FetchJob)
    }

    /// Where body bytes go, decided at the first body byte.
    enum Sink {
        case undecided
        /// The disk worker is getting the part ready; the body waits in `early`, then (past its
        /// limit) in curl, paused.
        case preparing
        /// Into the part file (`fd`), whose size is `fileSize`.
        case file
        /// An error body, counted and dropped.
        case discard
        /// A `.discard` download's body: counted (`fileSize`), hashed when `digest` is set, dropped.
        case count
        case memory
        /// The attempt was cut short from a callback; curl then ends it with a write error.
        case aborted
    }

    let purpose: Purpose
    let easy: EasyHandle
    /// Where the handle goes back when this attempt is over.
    private let handles: EasyHandlePool
    let plan: AttemptPlan
    var head = ResponseHead()
    /// The statuses of the redirects curl followed.
    var redirects: [Int] = []
    var sink: Sink = .undecided

    // Download state.
    var fd: Int32 = -1
    var partPath: String?
    var fileSize = 0
    var total: Int?
    var bytesThisAttempt = 0
    /// Where the next early writeback starts.
    var writebackStart = 0
    /// The largest file a download may make (`EngineConfiguration.maxFileBytes`, or the
    /// request's `sizeLimit` when smaller), and where that limit comes from.
    var maxFileBytes = Int.max
    var sizeLimitReason: String?
    /// The file system the part is on, whose allowance every write spends (nil: not measured).
    /// Unowned: the loop's `SpaceLedger` keeps every volume for as long as it runs, longer than
    /// any transfer, and the write callback then spends from it without a retain per chunk.
    unowned(unsafe) var volume: Volume?
    /// The hosts this transfer counts on for the per-host limit (`EngineCore.runningPerHost`): its
    /// URL's, the one that last answered it, and the one answering now once known.
    var countedHosts: [Int] = []
    /// The size the download is expected to reach (before the response tells it), for the space
    /// the running downloads still need.
    var expectedTotal: Int?
    /// The write callback paused the transfer: the next chunk (`spaceWanted` bytes) would eat
    /// into the disk's reserve as last measured. The loop measures again, then goes on or stops.
    var pausedForSpace = false
    var spaceWanted = 0
    /// The run's rate limit, which every chunk of the body spends from (nil: no limit). Unowned,
    /// like `volume`: the loop keeps it for as long as it runs.
    unowned(unsafe) var rateLimiter: RateLimiter?
    /// The write callback paused the transfer: the rate limit's bucket was empty. The loop lets
    /// it go on once the bucket refills (`EngineCore.paceTransfers`).
    var pausedForRate = false
    /// In the rate limiter's line of paused transfers.
    var waitingForRate = false
    /// The length last sent to be flushed for a checkpoint, and when.
    var checkpointRequested = 0
    var checkpointRequestedAt = Date()
    var checkpointInFlight = false
    static let writebackStep = 8 << 20
    /// The part was just started over (a 200 to a Range request, say).
    var startedFresh = false
    /// The attempt ended (a body-less 2xx) while its part was being prepared: finish it with
    /// this code when the part is ready.
    var endedWhilePreparing: CURLcode?
    var reportedBytes = -1
    /// Body bytes that came while the part was being prepared (`earlyCount` of them), written
    /// once it is open. A small file arrives whole meanwhile, and its slot and connection go on to
    /// the next download instead of waiting, paused, for the disk worker. One buffer per attempt,
    /// made at its first chunk and never grown; copied into with `memcpy` (an array's append goes
    /// byte by byte). Only `Transfer+Early.swift` touches these three: `EarlyBudget` holds while
    /// the buffers' sizes are charged to it there and given back there.
    var early: UnsafeMutableRawBufferPointer?
    var earlyCount = 0
    static let earlyLimit = 256 << 10
    /// What every attempt's `early` may take together (the loop's); each buffer's size is charged
    /// when it is made and given back when it goes. Held strongly: `deinit` gives back its buffer.
    var earlyBudget: EarlyBudget?
    /// The part this attempt's body would need, not asked for yet: a small file whose whole body
    /// may come into `early` first, then written in one pass (`WholeFile`). Asked for through
    /// `partNeeded` as soon as the body will not come whole without a pause.
    var heldPart: BodyPreparation?
    var heldSince = Date.distantPast
    var partNeeded: ((Transfer) -> Void)?
    /// The body came whole into `early` (from `heldPart`): its file is written in one pass.
    var wholePart: BodyPreparation?
    /// The write callback paused the transfer while its part was being prepared (`early` full, or
    /// the rate limit): the part's readiness lets it go on, once nothing else holds it.
    var pausedWhilePreparing = false

    // Fetch state.
    var memory: [UInt8] = []
    var maxBytes = Int.max

    // Why a callback cut the attempt short.
    var abortError: DownloadError?
    /// The abort was the database's, not the download's: worth another attempt.
    var abortIsTransient = false
    var restartReason: String?
    var discarded = 0

    /// With a WARC (`EngineConfiguration.warc`): this attempt's exchanges as curl saw them, one
    /// per request sent (redirect hops first). Nil without one: nothing is captured.
    var warcExchanges: [WARCExchange]?

    /// The decision maker for the first body byte; set by the loop (it needs the loop's state).
    var decide: ((Transfer) -> Void)?

    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer: UnsafeMutablePointer<CChar>

    init(purpose: Purpose, plan: AttemptPlan, handles: EasyHandlePool) {
        self.purpose = purpose
        self.plan = plan
        self.handles = handles
        easy = handles.take()
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        easy.setPointer(CURLOPT_ERRORBUFFER, UnsafeMutableRawPointer(errorBuffer))
    }

    /// The SHA-256 state of a counted body, when asked for (an `EVP_MD_CTX`).
    var digest: OpaquePointer?

    deinit {
        dropEarly()
        if fd >= 0 { close(fd) }
        if let digest { EVP_MD_CTX_free(digest) }
        if warcExchanges != nil { easy.setLong(CURLOPT_VERBOSE, 0) }   // no debug call may reach this object now
        // curl may read both until the handle is cleaned up, which happens after this
        // body (the `easy` property is released last): detach them first.
        easy.setPointer(CURLOPT_ERRORBUFFER, nil)
        easy.setHeaders(nil)
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
        handles.giveBack(easy)
    }

    var downloadID: DownloadID? {
        if case .download(let id) = purpose { return id }
        return nil
    }

    /// curl's message for the last failure, else its generic text for `code`; plain words for a
    /// server that cannot be reached.
    func errorText(_ code: CURLcode) -> String {
        if let plain = FailureClassifier.connectionFailureText(code: Int(code.rawValue), osErrno: easy.long(CURLINFO_OS_ERRNO),
                                                               url: easy.string(CURLINFO_EFFECTIVE_URL).flatMap(URL.init(string:))) {
            return plain
        }
        let text = String(cString: errorBuffer)
        return text.isEmpty ? Curl.describe(code) : text
    }

    /// Sets the options every transfer shares. The header list and error buffer
    /// live as long as the handle (curl does not copy them).
    func configure(url: String, headers: [String: String], addresses: AddressScope, configuration: EngineConfiguration, bufferSize: Int) {
        easy.setString(CURLOPT_URL, url)
        easy.setLong(CURLOPT_NOSIGNAL, 1)
        easy.setLong(CURLOPT_FOLLOWLOCATION, 1)
        easy.setLong(CURLOPT_MAXREDIRS, 10)
        easy.setString(CURLOPT_PROTOCOLS_STR, "http,https")
        easy.setString(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        easy.setLong(CURLOPT_SSL_VERIFYPEER, 1)
        easy.setLong(CURLOPT_SSL_VERIFYHOST, 2)
        if let bundle = configuration.caBundlePath { easy.setString(CURLOPT_CAINFO, bundle) }
        if let proxy = configuration.proxy { easy.setString(CURLOPT_PROXY, proxy) }
        switch configuration.ipVersion {
        case .any: break
        case .v4: easy.setLong(CURLOPT_IPRESOLVE, Int(CURL_IPRESOLVE_V4))
        case .v6: easy.setLong(CURLOPT_IPRESOLVE, Int(CURL_IPRESOLVE_V6))
        }
        // No CURLOPT_MAX_RECV_SPEED_LARGE: it limits each transfer alone, and libcurl 7.88 checks
        // it only between rounds of reads that go on while the socket has data (up to 100 buffers),
        // so a fast server's whole file can come between two checks. The rate limit is the
        // loop's `RateLimiter`, spent in the write callback.
        // At least 1 ms (0 would mean curl's default), at most an hour: never a trap on a huge value.
        easy.setLong(CURLOPT_CONNECTTIMEOUT_MS, Int(max(1, min(3_600_000, (configuration.connectTimeout * 1000).rounded()))))
        easy.setLong(CURLOPT_LOW_SPEED_LIMIT, configuration.stallBytesPerSecond)
        easy.setLong(CURLOPT_LOW_SPEED_TIME, configuration.stallSeconds)
        easy.setLong(CURLOPT_TCP_KEEPALIVE, 1)
        easy.setLong(CURLOPT_BUFFERSIZE, bufferSize)
        // Downloads from one HTTP/2 host share one connection, as RFC 9113 asks of a client and
        // curl's --parallel does: a start waits for a connection being made to learn whether it
        // multiplexes, instead of opening one of its own (eight at a time made eight). Over TLS
        // only, where the handshake says it (ALPN): an HTTP/1.1 host then gets a connection per
        // download at once. Plain http never speaks HTTP/2 here, yet curl would learn so only
        // from the first response, and every other start to the host would wait for it.
        if url.prefix(6).lowercased() == "https:" { easy.setLong(CURLOPT_PIPEWAIT, 1) }
        var hasUserAgent = false
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            if name.caseInsensitiveCompare("User-Agent") == .orderedSame { hasUserAgent = true }
            headerList = curl_slist_append(headerList, "\(name): \(value)")
        }
        if !hasUserAgent { easy.setString(CURLOPT_USERAGENT, configuration.userAgent) }
        if let ifRange = plan.ifRange, plan.rangeStart != nil {
            headerList = curl_slist_append(headerList, "If-Range: \(ifRange)")
        }
        if let start = plan.rangeStart {
            // CURLOPT_RANGE, not RESUME_FROM: curl then accepts a 200 and lets us
            // restart cleanly, and we check the 206's Content-Range ourselves.
            easy.setString(CURLOPT_RANGE, "\(start)-")
        }
        easy.setHeaders(headerList)

        let context = Unmanaged.passUnretained(self).toOpaque()
        easy.setWriteFunction(CURLOPT_HEADERFUNCTION, transferHeaderCallback)
        easy.setPointer(CURLOPT_HEADERDATA, context)
        easy.setWriteFunction(CURLOPT_WRITEFUNCTION, transferBodyCallback)
        easy.setPointer(CURLOPT_WRITEDATA, context)
        if addresses == .publicOnly {
            // Checked where curl knows the address (after DNS, on every hop, on a reused connection
            // too), before a request goes out.
            easy.setPrereqFunction(transferPrereqCallback)
            easy.setPointer(CURLOPT_PREREQDATA, context)
        }
        if configuration.warc != nil { captureForWARC() }
    }

    /// Records each request's header block as sent (curl's debug callback, which needs
    /// CURLOPT_VERBOSE; its messages other than the request headers are ignored at once) and each
    /// response's head (`receiveHeader`). Set only with a WARC: without one the callbacks are
    /// as they were, and curl never calls the debug function.
    private func captureForWARC() {
        warcExchanges = []
        easy.setLong(CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1)
        // A proxy's answer to the tunnel's CONNECT ("200 Connection established") is not the site's head.
        easy.setLong(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1)
        easy.setLong(CURLOPT_VERBOSE, 1)
        easy.setDebugFunction(transferDebugCallback)
        easy.setPointer(CURLOPT_DEBUGDATA, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Whether nothing holds the transfer paused any more: its part is ready, and neither the
    /// disk's allowance nor the rate limit keeps it. A handler that lifts its own reason lets curl
    /// go on only then (curl has one pause for all of them).
    var mayGoOn: Bool {
        if case .preparing = sink { return false }
        return !pausedForSpace && !pausedForRate
    }

    /// The body outgrew `maxFileBytes`: stopped there (a part, when there is one, is kept).
    func tooLarge(stoppedAt bytes: Int?) -> DownloadError {
        let limit = ByteCount.format(maxFileBytes) + (sizeLimitReason.map { " (\($0))" } ?? "")
        let stopped = bytes.map { "; stopped at \(ByteCount.format($0))" } ?? ""
        return DownloadError(.tooLarge, "the body is larger than this download's limit of \(limit)\(stopped)")
    }

    /// The server announced a length over `maxFileBytes`: refused before a byte is written.
    func tooLarge(announced total: Int) -> DownloadError {
        let limit = ByteCount.format(maxFileBytes) + (sizeLimitReason.map { " (\($0))" } ?? "")
        return DownloadError(.tooLarge, "the server says the file is \(ByteCount.format(total)), larger than this download's limit of \(limit); refused")
    }

    // MARK: - Callbacks (transfer thread, inside curl_multi_perform)

    fileprivate func receiveHeader(_ line: UnsafeBufferPointer<UInt8>) {
        if warcExchanges != nil { captureResponse(line) }
        if line.count > 5, line[0] == UInt8(ascii: "H"), line[1] == UInt8(ascii: "T"), line[2] == UInt8(ascii: "T"),
           line[3] == UInt8(ascii: "P"), line[4] == UInt8(ascii: "/"), (300...399).contains(head.status) {
            redirects.append(head.status)
        }
        head.consume(line: line)
    }

    /// A request's header block, as curl sent it: a new exchange (or more of the last one's
    /// block, when curl sent it in pieces).
    /// A proxy's tunnel request (`CONNECT`) is left out: it is no exchange with the site.
    fileprivate func captureRequest(_ bytes: UnsafeRawBufferPointer) {
        // Only flags are read before the append: a copy of the exchange held across it would make
        // the append copy the whole block (the array no longer uniquely referenced).
        if let last = warcExchanges?.indices.last, warcExchanges?[last].response.isEmpty == true,
           warcExchanges?[last].requestIsComplete == false {
            warcExchanges?[last].request += bytes
            return
        }
        guard !WARCExchange.isTunnelRequest(bytes) else { return }
        warcExchanges?.append(WARCExchange(url: easy.string(CURLINFO_EFFECTIVE_URL) ?? "", ip: easy.string(CURLINFO_PRIMARY_IP),
                                           date: Date(), request: Array(bytes)))
    }

    /// A response header line, for the last request's exchange. A status line after a whole
    /// head (an interim 1xx) starts the head over; lines after the head (trailers) are left out.
    private func captureResponse(_ line: UnsafeBufferPointer<UInt8>) {
        guard let last = warcExchanges?.indices.last else { return }
        if line.starts(with: "HTTP/".utf8) {
            warcExchanges?[last].response = Array(line)
        } else if warcExchanges?[last].response.isEmpty == false && warcExchanges?[last].responseIsComplete == false {
            warcExchanges?[last].response += line
        }
    }

    /// The hot path: straight from curl's buffer into the file, no allocation, no lock.
    fileprivate func receiveBody(_ data: UnsafeRawPointer, _ count: Int) -> Int {
        if case .undecided = sink {
            decide?(self)
        }
        switch sink {
        case .preparing:
            return receiveEarly(data, count)
        case .file:
            if fileSize + count > maxFileBytes {
                // A stream that never ends, or a file over the caller's limit.
                abortError = tooLarge(stoppedAt: fileSize)
                sink = .aborted
                return 0
            }
            // The reserve holds during the transfer too: an integer compare per chunk; measuring
            // the disk again is the loop's, off this callback.
            if let volume, count > volume.allowance {
                spaceWanted = count
                pausedForSpace = true
                return monsoon_write_pause()
            }
            // The rate limit: an integer compare too; refilling is the loop's.
            if let rateLimiter, !rateLimiter.bucket.take(count) {
                pausedForRate = true
                return monsoon_write_pause()
            }
            if let error = FileSystem.writeAll(fd, data, count).error {
                abortError = FileSystem.error("cannot write \(partPath ?? "the part file")", errno: error)
                sink = .aborted
                return 0
            }
            fileSize += count
            bytesThisAttempt += count
            if let volume {
                volume.allowance -= count
                volume.written += count
            }
            return count
        case .count:
            if fileSize + count > maxFileBytes {
                abortError = tooLarge(stoppedAt: nil)
                sink = .aborted
                return 0
            }
            if let rateLimiter, !rateLimiter.bucket.take(count) {
                pausedForRate = true
                return monsoon_write_pause()
            }
            if let digest { EVP_DigestUpdate(digest, data, count) }
            fileSize += count
            bytesThisAttempt += count
            return count
        case .memory:
            guard memory.count + count <= maxBytes else {
                abortError = DownloadError(.tooLarge, "the response is larger than the \(maxBytes)-byte limit")
                sink = .aborted
                return 0
            }
            memory.append(contentsOf: UnsafeBufferPointer(start: data.assumingMemoryBound(to: UInt8.self), count: count))
            return count
        case .discard:
            // Error pages are small; a huge one is not worth reading to keep the connection.
            discarded += count
            return discarded > 1 << 20 ? 0 : count
        case .aborted, .undecided:
            return 0
        }
    }
}

private let transferHeaderCallback: curl_write_callback = { data, size, count, context in
    guard let data, let context else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    transfer.receiveHeader(UnsafeBufferPointer(start: UnsafeRawPointer(data).assumingMemoryBound(to: UInt8.self), count: length))
    return length
}

/// Set only for `AddressScope.publicOnly`: a connection to any other address sends nothing, and
/// stops the transfer for good.
private let transferPrereqCallback: curl_prereq_callback = { context, address, _, _, _ in
    guard let context, let address else { return Int32(CURL_PREREQFUNC_ABORT) }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    let text = String(cString: address)
    guard !AddressScope.isPublic(text) else { return Int32(CURL_PREREQFUNC_OK) }
    transfer.abortError = DownloadError(.privateAddress, "refused to connect to \(text), an address on this machine or its own network: "
                                        + "a URL from a feed may not lead there")
    return Int32(CURL_PREREQFUNC_ABORT)
}

/// Set only with a WARC: the request headers as sent (everything else curl reports is ignored).
private let transferDebugCallback: curl_debug_callback = { _, type, data, size, context in
    guard type == CURLINFO_HEADER_OUT, let data, let context else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    transfer.captureRequest(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

private let transferBodyCallback: curl_write_callback = { data, size, count, context in
    guard let data, let context else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    return transfer.receiveBody(UnsafeRawPointer(data), size * count)
}
