import Foundation
import MonsoonTestServer
import Testing

/// `get` against an https server whose certificate a CA made here (with the `openssl` command)
/// issued, served by `openssl s_server -WWW`: refused by default with the reason and what to do,
/// downloaded with `--cacert`.
@Suite struct TLSCommandTests {
    @Test func aPrivateCAIsRefusedByDefaultAndTrustedWithCACert() async throws {
        let folder = Folder()
        defer { folder.remove() }
        try FileManager.default.createDirectory(atPath: folder.file("www"), withIntermediateDirectories: true)
        let body = Body.pattern(size: 200_000, seed: 9)
        try body.data().write(to: URL(fileURLWithPath: folder.file("www/episode.mp3")))
        try await makeCertificates(in: folder)
        let port = try freeLoopbackPort()
        let server = try SpawnedProcess("/usr/bin/openssl", ["s_server", "-WWW", "-quiet", "-accept", "127.0.0.1:\(port)",
                                                             "-cert", folder.file("server.pem"), "-key", folder.file("server.key")],
                                        directory: folder.file("www"), environment: [:], output: "/dev/null", errors: folder.file("s_server.log"))
        defer { server.terminate() }
        try await waitUntil("openssl s_server listening") { server.isRunning && accepts(port: port) }
        let url = "https://127.0.0.1:\(port)/episode.mp3"

        let refused = await runMonsoon(["get", "-o", "out", url], in: folder.path)
        #expect(refused.status == 1)
        #expect(refused.errors.contains("monsoon: d1 failed: \(url): the server's TLS certificate could not be verified (SSL certificate problem: "),
                "\(refused.errors)")
        #expect(refused.errors.contains("); if you trust the server, give its certificate authority with --cacert FILE\n"))
        #expect(folder.contents("out").isEmpty)

        let trusted = await runMonsoon(["get", "--cacert", folder.file("ca.pem"), "-o", "out", url], in: folder.path)
        #expect(trusted.status == 0, "\(trusted.errors)")
        #expect(try SHA256.hex(fileAt: folder.file("out/episode.mp3")) == body.sha256Hex())
    }

    private func makeCertificates(in folder: Folder) async throws {
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: folder.file("san.cnf"), atomically: true, encoding: .utf8)
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        for step in [
            ["req", "-x509"] + key + ["-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Monsoon Test CA"],
            ["req"] + key + ["-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1"],
            ["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "san.cnf"],
        ] {
            let process = try SpawnedProcess("/usr/bin/openssl", step, directory: folder.path, environment: [:], output: "/dev/null", errors: folder.file("openssl.log"))
            try await waitUntil("openssl \(step[0])") { !process.isRunning }
            try #require(process.terminationStatus == 0, "openssl \(step[0]) failed: \((try? String(contentsOfFile: folder.file("openssl.log"), encoding: .utf8)) ?? "")")
        }
    }

    /// A port that was free a moment ago.
    private func freeLoopbackPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 ? getsockname(fd, $0, &length) : -1 }
        }
        guard result == 0 else { throw CLITestError("cannot bind a loopback port: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    private func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }
}
