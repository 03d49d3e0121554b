import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonEngine

/// A URL from a feed may not lead into the user's own machine or network: which addresses are
/// public, and a transfer that reaches another one sends nothing and fails for good.
@Suite struct AddressScopeTests {
    @Test func publicAndPrivateAddresses() {
        for address in ["93.184.216.34", "8.8.8.8", "198.51.100.7", "2606:4700::1111", "2001:db8::1", "1.0.0.1"] {
            #expect(AddressScope.isPublic(address), "\(address)")
        }
        for address in ["127.0.0.1", "127.255.0.9", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1",
                        "0.0.0.0", "224.0.0.1", "255.255.255.255", "::1", "::", "fc00::1", "fd12:3456::1", "fe80::1", "ff02::1",
                        "::ffff:127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::a9fe:a9fe", "not an address", ""] {
            #expect(!AddressScope.isPublic(address), "\(address)")
        }
        #expect(AddressScope.isPublic("172.32.0.1") && AddressScope.isPublic("100.128.0.1") && AddressScope.isPublic("::ffff:8.8.8.8"))
    }

    @Test func hostsOnThisMachineArePrivate() {
        #expect(AddressScope.isPrivate(host: "127.0.0.1") && AddressScope.isPrivate(host: "localhost") && AddressScope.isPrivate(host: "[::1]"))
        #expect(AddressScope.isPrivate(host: "0x7f000001"), "the address a name like this reaches, as curl reads it")
        #expect(!AddressScope.isPrivate(host: "198.51.100.7") && !AddressScope.isPrivate(host: ""))
    }

    /// Loopback, written as a dotted quad and as a number: refused before a request goes out,
    /// for good; the same URL with `.any` is fetched. A fetch is refused the same way.
    @Test func aPublicOnlyTransferNeverReachesThisMachine() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/admin", Route(body: .bytes(Array("secret".utf8))))
        let manager = DownloadManager(configuration: fastConfiguration())
        let urls = [server.url("/admin"), URL(string: "http://0x7f000001:\(server.port)/admin")!]
        for (index, url) in urls.enumerated() {
            try await manager.enqueue(DownloadRequest(id: DownloadID("p\(index)"), url: url, destination: .file(folder.file("p\(index)")), addresses: .publicOnly))
            let failed = try await waitFor(manager, DownloadID("p\(index)"), .failed)
            #expect(failed.lastError?.code == .privateAddress && failed.attempts == 0, "\(String(describing: failed.lastError))")
            #expect(failed.lastError?.message == "refused to connect to 127.0.0.1, an address on this machine or its own network: a URL from a feed may not lead there")
        }
        var fetch = FetchRequest(url: server.url("/admin"))
        fetch.addresses = .publicOnly
        await #expect(throws: DownloadError.self) { try await manager.fetch(fetch) }
        #expect(server.requests.isEmpty, "nothing was asked of it")
        try await manager.enqueue(DownloadRequest(id: "any", url: server.url("/admin"), destination: .file(folder.file("any"))))
        try await waitFor(manager, "any", .completed)
        #expect(folder.contents() == ["any"])
        await manager.shutdown()
    }
}
