import CCrypto
import CCurl
import FoundationEssentials

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

    let purpose: Purpose
    let easy: EasyHandle
    let plan: AttemptPlan
    var head = ResponseHead()
    /// The statuses of the redirects curl followed.
    var redirects: [Int] = []
    /// The body's phase and pause reasons, changed through `handle` alone.
    private(set) var state = State()
    var part = Part()
    var progress = Progress()
    var limits = Limits()
    /// The hosts this transfer counts on for the per-host limit (`EngineCore.runningPerHost`): its
    /// URL's, the one that last answered it, and the one answering now once known.
    var countedHosts: [Int] = []
    /// Body bytes that came while the part was being prepared (see `EarlyBody`).
    var early = EarlyBody()
    static let earlyLimit = 256 << 10
    static let writebackStep = 8 << 20
    /// With a WARC (`EngineConfiguration.warc`): this attempt's exchanges as curl saw them, one
    /// per request sent (redirect hops first). Nil without one: nothing is captured.
    var warcExchanges: [WARCExchange]?
    /// The loop that decides where a download's body goes, at its first byte, and asks for a part
    /// held back (nil for a fetch). Unowned, like `limits.volume`: the loop outlives its transfers.
    unowned(unsafe) var engine: EngineCore?
    /// What curl reads until the handle is cleaned up, and where the handle goes back then.
    private var kept: Kept

    private struct Kept {
        let handles: EasyHandlePool
        var headerList: UnsafeMutablePointer<curl_slist>?
        let errorBuffer: UnsafeMutablePointer<CChar>
    }

    init(purpose: Purpose, plan: AttemptPlan, handles: EasyHandlePool) {
        self.purpose = purpose
        self.plan = plan
        easy = handles.take()
        let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        kept = Kept(handles: handles, headerList: nil, errorBuffer: errorBuffer)
        easy.setPointer(CURLOPT_ERRORBUFFER, UnsafeMutableRawPointer(errorBuffer))
    }

    deinit {
        early.drop()
        if part.fd >= 0 { close(part.fd) }
        if let digest = progress.digest { monsoon_digest_free(digest) }
        if warcExchanges != nil { easy.setLong(CURLOPT_VERBOSE, 0) }   // no debug call may reach this object now
        // curl may read both until the handle is cleaned up, which happens after this
        // body (the `easy` property is released last): detach them first.
        easy.setPointer(CURLOPT_ERRORBUFFER, nil)
        easy.setHeaders(nil)
        monsoon_curl_slist_free_all(kept.headerList)
        kept.errorBuffer.deallocate()
        kept.handles.giveBack(easy)
    }

    /// Changes the body's phase or pause reasons (`State.handle`).
    @discardableResult
    func handle(_ event: Event) -> Action {
        state.handle(event)
    }

    /// Cut short: the first reason stands.
    func abort(_ error: DownloadError, transient: Bool = false) {
        handle(.abort(.failed(error, transient: transient)))
    }

    /// Sets where a paused-for-space transfer's next chunk may go (`spaceMeasured` checks it).
    private func pauseForSpace(wanting count: Int) -> Int {
        state.spaceWanted = count
        handle(.paused(.space))
        return monsoon_write_pause()
    }

    /// Lets curl go on (it may call back with the held bytes before this returns); a transfer
    /// curl will not let go is cut short.
    func goOn() {
        let code = easy.unpause()
        if code != CURLE_OK { abort(DownloadError(.network, "could not go on with the transfer: \(Curl.describe(code))")) }
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
        let text = String(cString: kept.errorBuffer)
        return text.isEmpty ? Curl.describe(code) : text
    }

    /// Sets the options every transfer shares. The header list and error buffer
    /// live as long as the handle (curl does not copy them).
    func configure(url: String, headers: [String: String], addresses: AddressScope, followsRedirects: Bool, configuration: EngineConfiguration,
                   bufferSize: Int) {
        easy.setString(CURLOPT_URL, url)
        easy.setLong(CURLOPT_NOSIGNAL, 1)
        easy.setLong(CURLOPT_FOLLOWLOCATION, followsRedirects ? 1 : 0)
        easy.setLong(CURLOPT_MAXREDIRS, 10)
        easy.setString(CURLOPT_PROTOCOLS_STR, "http,https")
        easy.setString(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        easy.setLong(CURLOPT_SSL_VERIFYPEER, 1)
        easy.setLong(CURLOPT_SSL_VERIFYHOST, 2)
        if let bundle = configuration.network.caBundlePath { easy.setString(CURLOPT_CAINFO, bundle) }
        if let proxy = configuration.network.proxy { easy.setString(CURLOPT_PROXY, proxy) }
        switch configuration.network.ipVersion {
        case .any: break
        case .v4: easy.setLong(CURLOPT_IPRESOLVE, Int(CURL_IPRESOLVE_V4))
        case .v6: easy.setLong(CURLOPT_IPRESOLVE, Int(CURL_IPRESOLVE_V6))
        }
        // No CURLOPT_MAX_RECV_SPEED_LARGE: it limits each transfer alone, and libcurl 7.88 checks
        // it only between rounds of reads that go on while the socket has data (up to 100 buffers),
        // so a fast server's whole file can come between two checks. The rate limit is the
        // loop's `RateLimiter`, spent in the write callback.
        // At least 1 ms (0 would mean curl's default), at most an hour: never a trap on a huge value.
        easy.setLong(CURLOPT_CONNECTTIMEOUT_MS, Int(max(1, min(3_600_000, (configuration.network.connectTimeout * 1000).rounded()))))
        easy.setLong(CURLOPT_LOW_SPEED_LIMIT, configuration.stall.bytesPerSecond)
        easy.setLong(CURLOPT_LOW_SPEED_TIME, configuration.stall.seconds)
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
            if name.equalsIgnoringASCIICase("User-Agent") { hasUserAgent = true }
            kept.headerList = monsoon_curl_slist_append(kept.headerList, "\(name): \(value)")
        }
        if !hasUserAgent { easy.setString(CURLOPT_USERAGENT, configuration.network.userAgent) }
        if let ifRange = plan.ifRange, plan.rangeStart != nil {
            kept.headerList = monsoon_curl_slist_append(kept.headerList, "If-Range: \(ifRange)")
        }
        if let start = plan.rangeStart {
            // CURLOPT_RANGE, not RESUME_FROM: curl then accepts a 200 and lets us
            // restart cleanly, and we check the 206's Content-Range ourselves.
            easy.setString(CURLOPT_RANGE, "\(start)-")
        }
        easy.setHeaders(kept.headerList)

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

    // Curl's callbacks: on the transfer thread, inside curl_multi_perform.
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
        if case .awaitingHead = state.phase {
            if case .fetch = purpose { handle(.decided(.memory)) } else { engine?.decideBody(self) }
        }
        switch state.phase {
        case .preparingPart:
            return receiveEarly(data, count)
        case .writing:
            if progress.fileSize + count > limits.maxFileBytes {
                // A stream that never ends, or a file over the caller's limit.
                abort(limits.tooLarge(stoppedAt: progress.fileSize))
                return 0
            }
            // The reserve holds during the transfer too: an integer compare per chunk; measuring
            // the disk again is the loop's, off this callback.
            if let volume = limits.volume, count > volume.allowance { return pauseForSpace(wanting: count) }
            // The rate limit: an integer compare too; refilling is the loop's.
            if let rateLimiter = limits.rateLimiter, !rateLimiter.bucket.take(count) {
                handle(.paused(.rate))
                return monsoon_write_pause()
            }
            if let error = FileSystem.writeAll(part.fd, data, count).error {
                abort(FileSystem.error("cannot write \(part.path ?? "the part file")", errno: error))
                return 0
            }
            if let digest = progress.digest { monsoon_digest_update(digest, data, count) }
            progress.fileSize += count
            progress.thisAttempt += count
            if let volume = limits.volume {
                volume.allowance -= count
                volume.written += count
            }
            return count
        case .counting:
            if progress.fileSize + count > limits.maxFileBytes {
                abort(limits.tooLarge(stoppedAt: nil))
                return 0
            }
            if let rateLimiter = limits.rateLimiter, !rateLimiter.bucket.take(count) {
                handle(.paused(.rate))
                return monsoon_write_pause()
            }
            if let digest = progress.digest { monsoon_digest_update(digest, data, count) }
            progress.fileSize += count
            progress.thisAttempt += count
            return count
        case .inMemory(var memory):
            guard memory.count + count <= limits.maxBytes else {
                abort(DownloadError(.tooLarge, "the response is larger than the \(limits.maxBytes)-byte limit"))
                return 0
            }
            // Out of the phase while it grows: the array, referenced once, grows in place.
            state.phase = .inMemory([])
            memory.append(contentsOf: UnsafeBufferPointer(start: data.assumingMemoryBound(to: UInt8.self), count: count))
            state.phase = .inMemory(memory)
            return count
        case .discarding(let bytes):
            // Error pages are small; a huge one is not worth reading to keep the connection.
            state.phase = .discarding(bytes: bytes + count)
            return bytes + count > 1 << 20 ? 0 : count
        case .aborted, .awaitingHead, .wholeBody:
            return 0
        }
    }

    /// A fetch's body so far.
    var memory: [UInt8] {
        if case .inMemory(let memory) = state.phase { return memory }
        return []
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
    transfer.abort(DownloadError(.privateAddress, "refused to connect to \(text), an address on this machine or its own network: "
                                        + "a URL from a feed may not lead there"))
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
