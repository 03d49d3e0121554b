// monsoon-testserver: runs MonsoonTestServer as a process for demos and benchmarks (see `usageText`).

import Dispatch
import FoundationEssentials
import MonsoonTestServer
#if canImport(Glibc)
import Glibc
#endif

let usageText = """
    usage: monsoon-testserver [--port N] [--any-address] [--dir DIR] [--generate COUNT --size BYTES] [--podcast COUNT --size BYTES] [--throttle BYTES_PER_SEC]
                              [--world FEEDS [--episodes N] [--faults]]
      --port N            listen on 127.0.0.1:N (default 0: an ephemeral port)
      --any-address       listen on every address: each of 127.0.0.0/8 is then a host of its own
                          to clients (only on a machine closed to the network)
      --dir DIR           serve each regular file in DIR at /<name>
      --generate COUNT    serve COUNT generated files /file1.bin ... /fileCOUNT.bin
      --podcast COUNT     serve a podcast at /feed.xml: COUNT episodes of about --size bytes at
                          /episodes/N.mp3 (every 7th drops its connection mid-body once, every
                          11th answers 503 with Retry-After: 1 once) and artwork at /cover.jpg
      --world FEEDS       serve an archivist's world (see the README of Benchmarks): FEEDS feeds at
                          /world/feedN.xml of --episodes episodes each, 256 KiB to 2 MiB, every
                          enclosure behind a two-hop tracking redirect (localhost, then 127.0.0.1)
                          and a 120 ms first byte; /world/sha256.txt lists each episode's SHA-256
      --episodes N        episodes per feed of --world (default 30)
      --faults            with --world: one episode in 12 answers 503 once, one in 17 is cut short once
      --size BYTES        size of each generated file (suffixes k, m, g: KiB, MiB, GiB)
      --throttle BPS      limit every response to BPS body bytes per second (suffixes as for --size)
    Prints http://127.0.0.1:PORT once listening; stops on SIGINT or SIGTERM.
    """

func fail(_ message: String) -> Never {
    StandardError.write("monsoon-testserver: \(message)\n\(usageText)\n")
    exit(2)
}

/// Parses "123", "64k", "10m", "2g" (binary multiples).
func parseSize(_ text: String, option: String) -> Int {
    let multipliers: [Character: Int] = ["k": 1 << 10, "m": 1 << 20, "g": 1 << 30]
    var digits = text.lowercased()
    var multiplier = 1
    if let last = digits.last, let value = multipliers[last] {
        multiplier = value
        digits.removeLast()
    }
    guard let number = Int(digits), number >= 0 else { fail("\(option) needs a byte count, got '\(text)'") }
    let (product, overflow) = number.multipliedReportingOverflow(by: multiplier)
    guard !overflow else { fail("\(option) value too large: '\(text)'") }
    return product
}

struct Options {
    var port = 0
    var directory: String?
    var generate: Int?
    var podcast: Int?
    var size: Int?
    var throttle: Int?
    var world: Int?
    var episodes = 30
    var faults = false
    var anyAddress = false

    init(arguments: [String]) {
        var rest = arguments[...]
        func value(for option: String) -> String {
            guard let value = rest.popFirst() else { fail("\(option) needs a value") }
            return value
        }
        func positive(_ option: String, _ count: String = "count") -> Int {
            guard let number = Int(value(for: option)), number > 0 else { fail("\(option) needs a positive \(count)") }
            return number
        }
        while let option = rest.popFirst() {
            switch option {
            case "--port":
                guard let port = Int(value(for: option)), (0...65535).contains(port) else { fail("--port needs 0...65535") }
                self.port = port
            case "--dir":
                directory = value(for: option)
            case "--generate":
                generate = positive(option)
            case "--podcast":
                podcast = positive(option)
            case "--world":
                world = positive(option, "count of feeds")
            case "--episodes":
                episodes = positive(option)
            case "--any-address":
                anyAddress = true
            case "--faults":
                faults = true
            case "--size":
                size = parseSize(value(for: option), option: option)
            case "--throttle":
                let rate = parseSize(value(for: option), option: option)
                guard rate > 0 else { fail("--throttle needs a positive rate") }
                throttle = rate
            case "-h", "--help":
                print(usageText)
                exit(0)
            default:
                fail("unknown argument '\(option)'")
            }
        }
        if (generate != nil || podcast != nil) && size == nil { fail("--generate and --podcast need --size") }
        if size != nil && generate == nil && podcast == nil { fail("--size only goes with --generate or --podcast") }
    }
}

let options = Options(arguments: Array(CommandLine.arguments.dropFirst()))

// SIGINT and SIGTERM are blocked in every thread (set here, before the server starts its
// threads, so they inherit it) and taken with sigwait below. This works whatever signal
// mask the parent left us: a test runner may spawn us with SIGTERM blocked, and a blocked
// signal that is then set to SIG_IGN would be discarded, leaving us running forever.
var stopSignals = sigset_t()
sigemptyset(&stopSignals)
sigaddset(&stopSignals, SIGINT)
sigaddset(&stopSignals, SIGTERM)
pthread_sigmask(SIG_BLOCK, &stopSignals, nil)

let server: TestServer
do {
    server = try TestServer(port: options.port, anyAddress: options.anyAddress)
} catch {
    StandardError.write("monsoon-testserver: \(error)\n")
    exit(1)
}

if let directory = options.directory {
    let names: [String]
    do {
        names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
    } catch {
        fail("cannot list --dir \(directory): \(SystemErrorText.reason(error))")
    }
    for name in names {
        let path = directory.joiningPath(name)
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
        let modified = Date(timeIntervalSince1970: TimeInterval(info.st_mtim.tv_sec))
        let etag = "\"\(String(info.st_size, radix: 16))-\(String(info.st_mtim.tv_sec, radix: 16))\""
        server.setRoute("/" + name, Route(body: .file(path), etag: etag, lastModified: modified, throttle: options.throttle))
    }
}

if let count = options.generate, let size = options.size {
    for index in 1...count {
        server.setRoute("/file\(index).bin", Route(
            body: .pattern(size: size, seed: UInt64(index)), etag: "\"gen-\(index)-\(size)\"", throttle: options.throttle))
    }
}

if let count = options.podcast, let size = options.size {
    let base = "http://127.0.0.1:\(server.port)"
    var items = ""
    for index in (1...count).reversed() {
        let length = size + (index * 7919) % max(1, size / 10)   // sizes differ a little
        var faults: [Fault] = []
        if index % 7 == 0 { faults.append(.dropAfter(bytes: length / 2, times: 1)) }
        if index % 11 == 0 { faults.append(.status(503, times: 1, retryAfter: "1")) }
        server.setRoute("/episodes/\(index).mp3", Route(body: .pattern(size: length, seed: UInt64(index)), contentType: "audio/mpeg",
                                                        etag: "\"ep-\(index)\"", throttle: options.throttle, faults: faults))
        let day = Date(timeIntervalSince1970: 1_704_103_200 + Double(index - 1) * 86_400)   // from 2024-01-01 10:00 UTC, daily
        items += "<item><title>Episode \(index): a demo recording</title><guid isPermaLink=\"false\">demo-\(index)</guid>"
            + "<pubDate>\(HTTPDate.format(day))</pubDate><enclosure url=\"\(base)/episodes/\(index).mp3\" type=\"audio/mpeg\" length=\"\(length)\"/></item>\n"
    }
    let feed = """
        <?xml version="1.0" encoding="UTF-8"?>
        <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
        <channel><title>Monsoon Demo Show</title><link>\(base)/</link><itunes:image href="\(base)/cover.jpg"/>
        \(items)</channel></rss>
        """
    server.setRoute("/feed.xml", Route(body: .bytes(Array(feed.utf8)), contentType: "application/rss+xml", etag: "\"feed-\(count)\""))
    server.setRoute("/cover.jpg", Route(body: .pattern(size: 20_000, seed: 999), contentType: "image/jpeg"))
}

if let feeds = options.world {
    WorldServer.serve(on: server, feeds: feeds, episodes: options.episodes, faults: options.faults)
}

signal(SIGPIPE, SIG_IGN)
// Written unbuffered, so a parent reading our stdout through a pipe sees the line at once.
let line = "http://127.0.0.1:\(server.port)\n"
_ = line.utf8CString.withUnsafeBytes { write(1, $0.baseAddress, $0.count - 1) }
var caught: Int32 = 0
while sigwait(&stopSignals, &caught) != 0 {}
server.stop()
exit(0)
