import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonEngine

/// The engine against a real web server: nginx, started by the test on a free
/// loopback port, serving generated files from a temporary folder.
@Suite struct NginxTests {
    @Test func downloadsAGeneratedSetWithTheRightBytes() async throws {
        let files = [
            NginxServer.File(path: "set/one.bin", size: 1 << 20, seed: 11),
            NginxServer.File(path: "set/two.bin", size: (2 << 20) + 12_345, seed: 12),
            NginxServer.File(path: "set/three.bin", size: (3 << 20) + 1, seed: 13),
            NginxServer.File(path: "set/four.bin", size: (4 << 20) - 7, seed: 14),
        ]
        let nginx = try await NginxServer(files: files)
        let folder = TemporaryFolder()
        defer { nginx.stop(); folder.remove() }

        let manager = DownloadManager(configuration: fastConfiguration())
        let requests = files.map { file in
            request(DownloadID(file.name), nginx.url(file.path), to: folder.file(file.name))
        }
        try await manager.enqueue(contentsOf: requests)
        for file in files {
            let done = try await waitFor(manager, DownloadID(file.name), [.completed, .failed], seconds: 60)
            #expect(done.status == .completed, "\(file.name): \(String(describing: done.lastError))")
            #expect(done.bytes == file.size && done.total == file.size, "\(file.name)")
        }
        await manager.shutdown()
        let got = try await nginx.sha256(of: files.map { folder.file($0.name) })
        let served = try await nginx.sha256(of: files.map(nginx.sourcePath))
        #expect(got == served)
        #expect(folder.contents() == files.map(\.name).sorted(), "every file in place, no .part left")

        // nginx saw one plain GET per file and sent each whole.
        let entries = try await nginx.waitForAccessLog(count: files.count)
        #expect(entries.count == files.count, "\(entries)")
        for file in files {
            let seen = entries.filter { $0.path == "/" + file.path }
            #expect(seen.count == 1, "\(file.path): \(entries)")
            guard let entry = seen.first else { continue }
            #expect(entry.status == 200 && entry.range == nil && entry.ifRange == nil, "\(entry)")
            #expect(entry.bodyBytesSent == file.size, "\(entry)")
        }
    }

    enum Interruption: String, Sendable, CaseIterable, CustomTestStringConvertible {
        /// `pause`, then `resume`, in one manager.
        case pauseAndResume
        /// `shutdown()` (a stopped process), then a new manager enqueues the same request.
        case shutdownAndNewManager

        var testDescription: String { rawValue }
    }

    @Test(arguments: Interruption.allCases)
    func anInterruptedDownloadFetchesOnlyTheRest(_ interruption: Interruption) async throws {
        let file = NginxServer.File(path: "held/episode.mp3", size: 2 << 20, seed: 21)
        let nginx = try await NginxServer(files: [file])
        let folder = TemporaryFolder()
        defer { nginx.stop(); folder.remove() }
        let destination = folder.file(file.name)
        let partPath = PartFile.path(for: destination)
        let id: DownloadID = "episode"

        var manager = DownloadManager(configuration: fastConfiguration())
        try await manager.enqueue(request(id, nginx.url(file.path), to: destination))
        try await eventually(seconds: 30, "256 KiB on disk") { (try await manager.download(withID: id)?.bytes ?? 0) > 256 << 10 }

        let kept: Int
        switch interruption {
        case .pauseAndResume:
            try await manager.pause(id)
            let paused = try await waitFor(manager, id, .paused)
            kept = PartFile.size(at: partPath) ?? 0
            #expect(paused.bytes == kept)
        case .shutdownAndNewManager:
            await manager.shutdown()
            kept = PartFile.size(at: partPath) ?? 0
        }
        #expect(kept > 0 && kept < file.size, "the part holds \(kept) of \(file.size) bytes")
        #expect(!FileManager.default.fileExists(atPath: destination))
        let state = PartFile.readState(at: partPath)
        #expect(state?.url == nginx.url(file.path).absoluteString, "the resume state stays with the part")
        #expect(state?.total == file.size)

        switch interruption {
        case .pauseAndResume:
            try await manager.resume(id)
        case .shutdownAndNewManager:
            manager = DownloadManager(configuration: fastConfiguration())
            try await manager.enqueue(request(id, nginx.url(file.path), to: destination))
        }
        let done = try await waitFor(manager, id, [.completed, .failed], seconds: 60)
        await manager.shutdown()
        #expect(done.status == .completed, "\(String(describing: done.lastError))")
        let sums = try await nginx.sha256(of: [destination, nginx.sourcePath(file)])
        #expect(sums[0] == sums[1])
        #expect(folder.contents() == [file.name], "no .part left")

        // What nginx saw: a plain GET, cut short, then a conditional Range request
        // from where the part ended, answered 206 with only the rest.
        let entries = try await nginx.waitForAccessLog(count: 2)
        #expect(entries.count == 2, "\(entries)")
        let first = try #require(entries.first { $0.range == nil }, "no request without Range: \(entries)")
        let second = try #require(entries.first { $0.range != nil }, "no request with Range: \(entries)")
        let etag = try #require(first.etag, "nginx sent no ETag: \(first)")
        #expect(!etag.hasPrefix("W/"), "a strong ETag: \(etag)")
        #expect(first.path == "/" + file.path && first.ifRange == nil, "\(first)")
        #expect(first.bodyBytesSent >= kept, "nginx sent at least the bytes kept: \(first)")
        #expect(second.path == "/" + file.path, "\(second)")
        #expect(second.status == 206, "\(second)")
        #expect(second.range == "bytes=\(kept)-", "\(second)")
        #expect(second.ifRange == etag, "\(second)")
        #expect(second.etag == etag, "\(second)")
        #expect(second.bodyBytesSent == file.size - kept, "only the rest was fetched: \(second)")
    }

    /// A server whose certificate no trusted authority issued (made here with `openssl`) is
    /// refused with the reason and nothing written; trusting its CA (`--cacert`) makes it work.
    @Test func aPrivatelyIssuedCertificateIsRefusedUnlessItsCAIsTrusted() async throws {
        let file = NginxServer.File(path: "tls/episode.mp3", size: 300_000, seed: 5)
        let nginx = try await NginxServer(files: [file], tls: true)
        let folder = TemporaryFolder()
        defer { nginx.stop(); folder.remove() }
        let strict = DownloadManager(configuration: fastConfiguration())
        try await strict.enqueue(request("strict", nginx.url(file.path), to: folder.file("strict.mp3")))
        let failed = try await waitFor(strict, "strict", .failed)
        #expect(failed.lastError?.code == .untrustedCertificate)
        let message = failed.lastError?.message ?? ""
        #expect(message.hasPrefix("the server's TLS certificate could not be verified (SSL certificate problem: ") && message.hasSuffix(")"), "\(message)")
        await strict.shutdown()
        #expect(folder.contents().isEmpty)

        var configuration = fastConfiguration()
        configuration.network.caBundlePath = nginx.caPath
        let trusting = DownloadManager(configuration: configuration)
        try await trusting.enqueue(request("trusted", nginx.url(file.path), to: folder.file("trusted.mp3")))
        try await waitFor(trusting, "trusted", .completed)
        #expect(try await nginx.sha256(of: [folder.file("trusted.mp3")]) == [Body.pattern(size: file.size, seed: file.seed).sha256Hex()])
        await trusting.shutdown()
    }

    /// Downloads from an HTTP/2 host share one connection, as RFC 9113 asks of a client (and as
    /// curl's --parallel does); from an HTTPS host that speaks only HTTP/1.1, they still run four
    /// at a time, each on a connection of its own. Every file byte-exact either way.
    @Test(arguments: [true, false])
    func anHTTP2HostGetsOneConnection(_ http2: Bool) async throws {
        // Served at 512 KiB/s each: the four run at the same time.
        let files = (1...8).map { NginxServer.File(path: "slow/\($0).bin", size: 256 << 10, seed: UInt64(40 + $0)) }
        let nginx = try await NginxServer(files: files, tls: true, http2: http2)
        let folder = TemporaryFolder()
        defer { nginx.stop(); folder.remove() }
        var configuration = fastConfiguration(concurrency: 4)
        configuration.network.caBundlePath = nginx.caPath
        let manager = DownloadManager(configuration: configuration)
        try await manager.enqueue(contentsOf: files.map { request(DownloadID($0.name), nginx.url($0.path), to: folder.file($0.name)) })
        for file in files {
            let done = try await waitFor(manager, DownloadID(file.name), [.completed, .failed], seconds: 60)
            #expect(done.status == .completed, "\(file.name): \(String(describing: done.lastError))")
        }
        await manager.shutdown()
        #expect(try await nginx.sha256(of: files.map { folder.file($0.name) }) == files.map { Body.pattern(size: $0.size, seed: $0.seed).sha256Hex() })

        let entries = try await nginx.waitForAccessLog(count: files.count)
        #expect(entries.count == files.count && entries.allSatisfy { $0.status == 200 }, "\(entries)")
        let connections = Set(entries.map(\.connection))
        if http2 {
            #expect(entries.allSatisfy { $0.protocolName == "HTTP/2.0" }, "\(entries)")
            #expect(connections.count == 1, "one connection for the HTTP/2 host: \(entries)")
        } else {
            #expect(entries.allSatisfy { $0.protocolName == "HTTP/1.1" }, "\(entries)")
            #expect(connections.count == 4, "a connection for each of the four at a time, reused: \(entries)")
        }
    }

    /// nginx stopped and started again in the middle of a run: every download completes,
    /// byte-exact, resuming where it was cut.
    @Test func aServerRestartMidRunLosesNothing() async throws {
        let files = (1...4).map { NginxServer.File(path: "slow/r\($0).mp3", size: 3 << 20, seed: UInt64(40 + $0)) }
        let nginx = try await NginxServer(files: files)
        let folder = TemporaryFolder()
        defer { nginx.stop(); folder.remove() }
        let manager = DownloadManager(configuration: fastConfiguration(concurrency: 4, retries: 10))
        let recorder = EventRecorder(manager)
        for file in files { try await manager.enqueue(request(DownloadID(file.name), nginx.url(file.path), to: folder.file(file.name))) }
        try await eventually(seconds: 30, "every download under way") {
            var started = 0
            for file in files where (try await manager.download(withID: DownloadID(file.name))?.bytes ?? 0) > 64 << 10 { started += 1 }
            return started == files.count
        }
        // Down until every download has seen it: cut, it waits to try again (one that finished
        // before the restart, on a very slow machine, has nothing to resume).
        let seenBefore = recorder.all.count
        var cut: Set<DownloadID> = []
        try await nginx.restart {
            try await eventually(seconds: 30, "each download cut waiting to retry, or done") {
                let events = recorder.all
                var ended: Set<DownloadID> = []
                cut = []
                for (index, event) in events.enumerated() {
                    guard case .statusChanged(let download) = event else { continue }
                    if download.status == .waitingToRetry && index >= seenBefore { cut.insert(download.id) }
                    if download.status == .completed { ended.insert(download.id) }
                }
                return cut.union(ended).count == files.count
            }
        }
        for file in files { try await waitFor(manager, DownloadID(file.name), .completed, seconds: 60) }
        let sums = try await nginx.sha256(of: files.map { folder.file($0.name) })
        #expect(sums == files.map { Body.pattern(size: $0.size, seed: $0.seed).sha256Hex() })
        #expect(folder.contents().sorted() == files.map(\.name).sorted(), "no .part left")
        // nginx logs a request once it has sent the answer, maybe after the client has it all.
        do {
            try await eventually(seconds: 20, "each download resumed after the restart (206 to a Range request)") {
                nginx.accessLog().filter { $0.range != nil && $0.status == 206 }.count >= cut.count
            }
        } catch {
            Issue.record("\(error): \(nginx.accessLog())")
        }
        await manager.shutdown()
    }
}

/// Runs CPU-heavy work (generating megabytes) on a thread of its own. On Swift's
/// cooperative pool, one thread per core (on Linux, Dispatch's default-QoS pool,
/// so `DispatchQueue.global()` is no way out), it would hold up other tests'
/// tasks, some of which race short timers.
private func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}

// MARK: - nginx

/// One nginx process (`daemon off; master_process off`), with its configuration,
/// logs, temporary paths and `www` root in its own temporary folder, so it runs
/// as root or not without touching /etc or /var. Stop it with `stop()`.
final class NginxServer {
    static let binary = "/usr/sbin/nginx"

    /// A generated file to serve: deterministic pseudo-random bytes.
    struct File {
        /// Below the web root, e.g. `set/one.bin`; files under `slow/` are served at 512 KiB/s,
        /// those under `held/` stop at 320 KiB and then trickle (but for a Range request).
        var path: String
        var size: Int
        var seed: UInt64

        var name: String { (path as NSString).lastPathComponent }
    }

    /// One line of the access log (fields nginx logs as `-` are nil).
    struct LogEntry: CustomStringConvertible {
        var status: Int
        var request: String
        var range: String?
        var ifRange: String?
        var bodyBytesSent: Int
        var etag: String?
        /// nginx's serial number of the connection the request came on.
        var connection: Int
        /// `HTTP/1.1` or `HTTP/2.0`.
        var protocolName: String

        /// The path of `GET /path HTTP/1.1`.
        var path: String {
            let parts = request.split(separator: " ")
            return parts.count > 1 ? String(parts[1]) : request
        }

        var description: String {
            "\(status) \"\(request)\" range=\(range ?? "-") if-range=\(ifRange ?? "-") sent=\(bodyBytesSent) etag=\(etag ?? "-") connection=\(connection)"
        }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let folder = TemporaryFolder()
    private(set) var port = 0
    private var process: ChildProcess?
    /// Serves https with a certificate for 127.0.0.1 issued by a CA made for this server.
    let tls: Bool
    /// Offers HTTP/2 too (chosen by ALPN), when `tls`.
    let http2: Bool
    /// That CA's certificate (PEM), when `tls`.
    var caPath: String { folder.file("ca.pem") }

    init(files: [File], tls: Bool = false, http2: Bool = false) async throws {
        self.tls = tls
        self.http2 = tls && http2
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.binary),
            "nginx is not installed (\(Self.binary) is missing): run `make test`, which installs it"
        )
        do {
            let folder = self.folder
            try await onOwnThread {
                try FileManager.default.createDirectory(atPath: folder.file("temp"), withIntermediateDirectories: true)
                for file in files {
                    let path = Self.sourcePath(file, in: folder)
                    try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                    try Body.pattern(size: file.size, seed: file.seed).data().write(to: URL(fileURLWithPath: path))
                }
            }
            if tls { try await makeCertificates() }
            try await start()
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    /// The SHA-256 of each file, in order, by coreutils' `sha256sum`, which takes
    /// a fraction of the CPU time of the debug-built `SHA256.hex(fileAt:)`: on two
    /// cores, a second of hashing slows down tests that race short timers.
    func sha256(of paths: [String]) async throws -> [String] {
        let output = folder.file("sha256sum-\(UUID().uuidString).txt")
        let process = try ChildProcess("/usr/bin/sha256sum", paths, standardOutput: output, standardError: output + ".err")
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning && Date() < deadline { try await Task.sleep(nanoseconds: 10_000_000) }
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        let sums = text.split(separator: "\n").map { String($0.prefix(64)) }
        guard !process.isRunning, process.exitCode == 0, sums.count == paths.count else {
            let errors = (try? String(contentsOfFile: output + ".err", encoding: .utf8)) ?? ""
            throw Failure(description: "sha256sum \(paths) failed (\(String(describing: process.exitCode))): \(text)\(errors)")
        }
        return sums
    }

    /// Where the served copy of `file` is.
    func sourcePath(_ file: File) -> String { Self.sourcePath(file, in: folder) }

    private static func sourcePath(_ file: File, in folder: TemporaryFolder) -> String { folder.file("www/" + file.path) }

    func url(_ path: String) -> URL { URL(string: "\(tls ? "https" : "http")://127.0.0.1:\(port)/\(path)")! }

    /// Stops nginx (connections in flight are cut), runs `whileDown` (which waits for what the
    /// test needs to see meanwhile), then starts nginx again on the same port.
    func restart(whileDown: () async throws -> Void) async throws {
        stop(removingFolder: false)
        try await whileDown()
        try await start(port: port)
    }

    /// A CA and a certificate for 127.0.0.1 it signed, made with the `openssl` command.
    private func makeCertificates() async throws {
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: folder.file("san.cnf"), atomically: true, encoding: .utf8)
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        let steps = [
            ["req", "-x509"] + key + ["-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Monsoon Test CA"],
            ["req"] + key + ["-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1"],
            ["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem",
             "-days", "2", "-extfile", "san.cnf"],
        ]
        for step in steps {
            let arguments = step.map { ["ca.key", "ca.pem", "server.key", "server.csr", "server.pem", "san.cnf"].contains($0) ? folder.file($0) : $0 }
            let process = try ChildProcess("/usr/bin/openssl", arguments, standardOutput: "/dev/null", standardError: folder.file("openssl.log"))
            let deadline = Date().addingTimeInterval(30)
            while process.isRunning && Date() < deadline { try await Task.sleep(nanoseconds: 10_000_000) }
            guard process.exitCode == 0 else {
                let log = (try? String(contentsOfFile: folder.file("openssl.log"), encoding: .utf8)) ?? ""
                throw Failure(description: "openssl \(step.prefix(2).joined(separator: " ")) failed: \(log)")
            }
        }
    }

    /// Starts nginx on a free port (or on `port`); another process may take the port between
    /// the probe and nginx's bind, so a failed bind is retried on a new port.
    private func start(port fixed: Int? = nil) async throws {
        var lastError = ""
        for _ in 0..<(fixed == nil ? 3 : 1) {
            port = try fixed ?? Self.freeLoopbackPort()
            try configuration(port: port).write(toFile: folder.file("nginx.conf"), atomically: true, encoding: .utf8)
            for log in ["error.log", "nginx.pid"] { try? FileManager.default.removeItem(atPath: folder.file(log)) }
            // -e: the startup error log too, so nothing is written under /var/log.
            let process = try ChildProcess(
                Self.binary, ["-p", folder.path + "/", "-c", folder.file("nginx.conf"), "-e", folder.file("error.log")],
                standardOutput: "/dev/null", standardError: folder.file("stderr.log")
            )
            self.process = process
            if try await waitUntilAccepting(process) { return }
            lastError = logs()
            stop(removingFolder: false)
            guard lastError.contains("Address already in use") else { break }
        }
        throw Failure(description: "nginx did not start on 127.0.0.1:\(port): \(lastError)")
    }

    /// True once nginx is up and the port accepts connections; false if nginx exited first.
    /// nginx writes its pid file only once it has bound its port, so a connection
    /// accepted before that could be another process's.
    private func waitUntilAccepting(_ process: ChildProcess) async throws -> Bool {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            guard process.isRunning else { return false }
            let pid = (try? String(contentsOfFile: folder.file("nginx.pid"), encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
            if pid == String(process.pid), Self.accepts(port: port) { return process.isRunning }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        throw Failure(description: "nginx did not accept connections on 127.0.0.1:\(port) within 20 s: \(logs())")
    }

    /// Terminates nginx, waits for it to exit, and removes its folder.
    func stop() { stop(removingFolder: true) }

    private func stop(removingFolder: Bool) {
        process?.terminate()
        process = nil
        if removingFolder { folder.remove() }
    }

    private func logs() -> String {
        let stderr = (try? String(contentsOfFile: folder.file("stderr.log"), encoding: .utf8)) ?? ""
        let errors = (try? String(contentsOfFile: folder.file("error.log"), encoding: .utf8)) ?? ""
        return (stderr + errors).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func configuration(port: Int) -> String {
        func quoted(_ name: String) -> String { "\"\(folder.file(name))\"" }
        return """
        daemon off;
        master_process off;
        worker_processes 1;
        pid \(quoted("nginx.pid"));
        lock_file \(quoted("nginx.lock"));
        error_log \(quoted("error.log")) warn;

        events {
            worker_connections 64;
        }

        http {
            default_type application/octet-stream;
            sendfile on;
            keepalive_timeout 10s;
            client_body_temp_path \(quoted("temp/client_body"));
            proxy_temp_path \(quoted("temp/proxy"));
            fastcgi_temp_path \(quoted("temp/fastcgi"));
            uwsgi_temp_path \(quoted("temp/uwsgi"));
            scgi_temp_path \(quoted("temp/scgi"));
            # Under /slow/, a first request comes at 512 KiB/s, so that it is still running when a
            # test cuts it; the rest (a Range request) comes at full speed.
            map $http_range $slow_rate {
                "" 512k;
                default 0;
            }
            # Under /held/, a first request sends 320 KiB, then trickles at 8 KiB/s (above the
            # stall floor): held in flight, however loaded the machine, until the test cuts it.
            map $http_range $held_rate {
                "" 8k;
                default 0;
            }
            log_format monsoon escape=none '$status\\t$request\\t$http_range\\t$http_if_range\\t$body_bytes_sent\\t$sent_http_etag\\t$connection\\t$server_protocol';
            access_log \(quoted("access.log")) monsoon;

            server {
                listen 127.0.0.1:\(port)\(tls ? " ssl" : "")\(http2 ? " http2" : "");
                \(tls ? "ssl_certificate \(quoted("server.pem")); ssl_certificate_key \(quoted("server.key"));" : "")
                root \(quoted("www"));
                location /slow/ {
                    limit_rate $slow_rate;
                }
                location /held/ {
                    limit_rate_after 320k;
                    limit_rate $held_rate;
                }
            }
        }

        """
    }

    /// The access log so far, one entry per finished request.
    func accessLog() -> [LogEntry] {
        let text = (try? String(contentsOfFile: folder.file("access.log"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 8, let status = Int(fields[0]) else { return nil }
            func value(_ field: String) -> String? { field == "-" || field.isEmpty ? nil : field }
            return LogEntry(status: status, request: fields[1], range: value(fields[2]), ifRange: value(fields[3]),
                            bodyBytesSent: Int(fields[4]) ?? -1, etag: value(fields[5]), connection: Int(fields[6]) ?? -1,
                            protocolName: fields[7])
        }
    }

    /// Waits until nginx has logged `count` requests. A request the client cut
    /// short is logged once nginx notices, which may take a moment.
    func waitForAccessLog(count: Int, seconds: Double = 20) async throws -> [LogEntry] {
        try await eventually(seconds: seconds, "nginx logged \(count) requests") { accessLog().count >= count }
        return accessLog()
    }

    // MARK: Sockets

    /// A port that was free a moment ago: bind 127.0.0.1:0, read the port, close.
    static func freeLoopbackPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 ? getsockname(fd, pointer, &length) : -1
            }
        }
        guard result == 0 else { throw Failure(description: "cannot bind a loopback port: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }
}

/// A child process started with an empty signal mask and no inherited descriptors
/// but its standard input, output and error.
///
/// Not Foundation's `Process`: it passes on the spawning thread's signal mask,
/// and the threads tests run on block SIGTERM, so nginx (which in single-process
/// mode never unblocks signals) would ignore `terminate()`. Nor does it close
/// the descriptors the child inherits.
final class ChildProcess {
    let pid: pid_t
    /// The exit code once reaped (128 + the signal for a killed process).
    private(set) var exitCode: Int32?

    init(_ path: String, _ arguments: [String], standardOutput: String, standardError: String) throws {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, standardOutput, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, standardError, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        // Nothing else: curl's sockets are not close-on-exec, and a copy held by a
        // child (nginx, say) would keep other tests' connections open after their
        // transfers end.
        Self.closeDescriptors(from: 3, &actions)

        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
        guard result == 0 else {
            throw NginxServer.Failure(description: "cannot start \(path): \(String(cString: strerror(result)))")
        }
        self.pid = pid
    }

    deinit { terminate() }

    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34+, not in Swift's
    /// Glibc module), else a close for each descriptor open now.
    private static func closeDescriptors(from first: Int32, _ actions: inout posix_spawn_file_actions_t) {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
            if unsafeBitCast(symbol, to: CloseFrom.self)(&actions, first) == 0 { return }
        }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            if let fd = Int32(name), fd >= first { posix_spawn_file_actions_addclose(&actions, fd) }
        }
    }

    var isRunning: Bool {
        guard exitCode == nil else { return false }
        reap(waitpid(pid, &status, WNOHANG))
        return exitCode == nil
    }

    /// SIGTERM, then waits for the exit (SIGKILL after 10 s).
    func terminate() {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        let deadline = Date().addingTimeInterval(10)
        while isRunning && Date() < deadline { usleep(5_000) }
        guard isRunning else { return }
        kill(pid, SIGKILL)
        reap(waitpid(pid, &status, 0))
    }

    private var status: Int32 = 0

    private func reap(_ result: pid_t) {
        if result == pid {
            let signal = status & 0x7f
            exitCode = signal == 0 ? (status >> 8) & 0xff : 128 + signal
        } else if result < 0 && errno == ECHILD {
            exitCode = -1   // reaped elsewhere
        }
    }
}
