import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// One accepted client connection, served on its own thread with blocking I/O.
///
/// Only that thread ever touches a `Connection`, so it needs no locking; shared state goes
/// through `core`. The fd is closed by the core after `run()` returns.
final class Connection {
    private let fd: Int32
    private let id: Int
    private let core: ServerCore
    /// Reused for every recv and every body chunk, so streaming allocates nothing per chunk.
    private let buffer: UnsafeMutableRawBufferPointer
    /// Received bytes not yet consumed (the start of a pipelined next request, say).
    private var inbox: [UInt8] = []
    /// The target of the request being answered, for its `Delivery` records.
    private var target = ""

    static let chunkSize = 64 * 1024
    /// Request heads larger than this are refused (431) rather than buffered without bound.
    static let maxHeadSize = 64 * 1024
    /// Linux's POLLRDHUP (peer closed its side), which Glibc only declares under _GNU_SOURCE.
    static let pollReadHangUp: Int16 = 0x2000

    init(fd: Int32, id: Int, core: ServerCore) {
        self.fd = fd
        self.id = id
        self.core = core
        buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.chunkSize, alignment: 16)
    }

    deinit { buffer.deallocate() }

    func run() {
        while !core.isStopping {
            let head: String
            switch readHead() {
            case .closed:
                return
            case .tooLarge:
                _ = write(ResponsePlan.page(431, isHead: false), keepAlive: false)
                return
            case .head(let text):
                head = text
            }
            guard let request = HTTPRequest(head: head) else {
                _ = write(ResponsePlan.page(400, isHead: false), keepAlive: false)
                return
            }
            // GET and HEAD have no body, but skip any a client sends so the next request parses.
            if let length = request.headers["content-length"].flatMap({ Int($0) }), length > 0,
               !discard(length) {
                return
            }

            target = request.target
            core.requestStarted(RecordedRequest(
                method: request.method, path: request.target, headers: request.headers, time: Date(), connectionID: id))
            let isGetOrHead = request.method == "GET" || request.method == "HEAD"
            let (route, fault) = core.route(for: request.path, consumingFault: isGetOrHead)
            let plan = ResponsePlan.make(for: request, route: route, fault: fault)
            if let delay = route?.firstByteDelay, delay > 0, !pause(delay) { return }
            if let gate = route?.gate, route?.gateAfter == nil, !wait(for: gate) { return }
            let keepAlive = request.wantsKeepAlive && !plan.closesConnection
            let completed = write(plan, keepAlive: keepAlive, holding: route?.gateAfter.flatMap { after in route?.gate.map { (after, $0) } })
            core.requestFinished()
            if !completed || !keepAlive || plan.cutsConnection { return }
        }
    }

    private enum HeadResult {
        case head(String)
        case closed
        case tooLarge
    }

    /// Reads up to and including the blank line that ends a request head.
    private func readHead() -> HeadResult {
        var searchFrom = 0
        while true {
            if let end = inbox[searchFrom...].firstRange(of: [13, 10, 13, 10])?.lowerBound {
                let head = String(decoding: inbox[0..<end], as: UTF8.self)
                inbox.removeFirst(end + 4)
                return .head(head)
            }
            if inbox.count > Self.maxHeadSize { return .tooLarge }
            searchFrom = max(0, inbox.count - 3)
            guard receive() else { return .closed }
        }
    }

    /// Appends what the socket has to `inbox`; false once the peer closed or the socket failed.
    private func receive() -> Bool {
        while true {
            let n = recv(fd, buffer.baseAddress, buffer.count, 0)
            if n > 0 {
                inbox.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
                return true
            }
            if n < 0 && errno == EINTR { continue }
            return false
        }
    }

    /// Drops `count` request body bytes.
    private func discard(_ count: Int) -> Bool {
        var left = count
        while left > 0 {
            if inbox.isEmpty { guard receive() else { return false } }
            let take = min(left, inbox.count)
            inbox.removeFirst(take)
            left -= take
        }
        return true
    }

    /// Writes one response; false if the socket failed (or the server stopped) on the way.
    /// `holding`: after that many body bytes, the rest waits for the gate.
    private func write(_ plan: ResponsePlan, keepAlive: Bool, holding: (Int, Gate)? = nil) -> Bool {
        var head = (plan.statusLine ?? "HTTP/1.1 \(plan.status) \(ResponsePlan.reasonPhrase(plan.status))") + "\r\n"
        head += "Date: \(HTTPDate.format(Date()))\r\nServer: MonsoonTestServer\r\n"
        for (name, value) in plan.headers { head += "\(name): \(value)\r\n" }
        if !keepAlive { head += "Connection: close\r\n" }
        head += "\r\n"

        let bodyLength = plan.sendsBody ? min(plan.range.count, plan.limit ?? Int.max) : 0
        var headBytes = Array(head.utf8)
        if let cut = plan.headLimit {
            // A head cut off mid-way: what was sent, then the connection ends.
            _ = headBytes.withUnsafeMutableBytes { Socket.sendAll(fd, $0.baseAddress!, min(cut, $0.count), more: false) }
            return false
        }
        let headSent = headBytes.withUnsafeMutableBytes { Socket.sendAll(fd, $0.baseAddress!, $0.count, more: bodyLength > 0) }
        guard headSent else { return false }

        if bodyLength > 0, let source = plan.source {
            var sent = 0
            if let (after, gate) = holding {
                sent = min(max(0, after), bodyLength)
                guard sendBody(source, from: plan.range.lowerBound, count: sent, throttle: plan.throttle), wait(for: gate) else { return false }
            }
            guard sendBody(source, from: plan.range.lowerBound + sent, count: bodyLength - sent, throttle: plan.throttle) else { return false }
        }
        if plan.stallSeconds > 0 { _ = pause(plan.stallSeconds) }
        return true
    }

    /// Streams `count` body bytes starting at `offset`, paced to `throttle` bytes/s if set.
    private func sendBody(_ source: BodySource, from offset: Int, count: Int, throttle: Int?) -> Bool {
        var chunk = buffer.count
        let start = ContinuousClock.now
        if let throttle, throttle > 0 {
            // Ten writes a second, each due when the bytes before it have "earned" their time,
            // so the average rate stays exact however long each write or sleep took.
            chunk = max(1, min(chunk, throttle / 10))
        }
        var sent = 0
        while sent < count {
            let want = min(chunk, count - sent)
            let got = source.read(offset: offset + sent, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]))
            guard got > 0 else { return false }  // the file shrank: end the connection, Content-Length is now a lie
            if let throttle, throttle > 0, sent > 0 {
                let due = start + .seconds(Double(sent) / Double(throttle))
                let wait = ContinuousClock.now.duration(to: due)
                if wait > .zero, !pause(wait / .seconds(1)) {
                    return false
                }
            }
            let began = core.isRecordingDeliveries ? Date() : nil
            guard Socket.sendAll(fd, buffer.baseAddress!, got, count: { core.addSentBytes($0) }) else { return false }
            if let began { core.recordDelivery(Delivery(path: target, connectionID: id, start: began, end: Date(), bytes: got)) }
            sent += got
        }
        return true
    }

    /// Waits until `gate` opens, watching for hang-up as `pause` does; false when the client
    /// hung up or the server stops.
    private func wait(for gate: Gate) -> Bool {
        while !gate.isOpen {
            guard pause(0.01) else { return false }
        }
        return true
    }

    /// Waits `seconds`, waking early (and returning false) when the server stops or the peer hangs up.
    ///
    /// Polls the socket for hang-up rather than sleeping, so a stall fault neither delays
    /// `stop()` (its shutdown() makes poll return) nor outlives a client that gave up.
    private func pause(_ seconds: Double) -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while true {
            if core.isStopping { return false }
            let left = ContinuousClock.now.duration(to: deadline)
            if left <= .zero { return true }
            let millis = Int32(min(100, max(1, (left / .milliseconds(1)).rounded(.up))))
            var entry = pollfd(fd: fd, events: Self.pollReadHangUp, revents: 0)
            let ready = poll(&entry, 1, millis)
            if ready > 0 && entry.revents & (Self.pollReadHangUp | Int16(POLLHUP | POLLERR | POLLNVAL)) != 0 { return false }
        }
    }
}
