import Foundation
import MonsoonTestServer
import Testing

@Suite("SHA-256")
struct SHA256Tests {
    @Test func knownVectors() {
        #expect(SHA256.hex(Data()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(Data("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex(Data("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
            == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(SHA256.hex(Data(repeating: UInt8(ascii: "a"), count: 1_000_000))
            == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func incrementalUpdatesMatchOneShot() {
        let data = Body.pattern(size: 10_007, seed: 11).data()
        var hasher = SHA256.Hasher()
        var offset = 0
        for size in [1, 63, 64, 65, 1000, 3] + Array(repeating: 997, count: 20) where offset < data.count {
            let end = min(data.count, offset + size)
            hasher.update(data[offset..<end])
            offset = end
        }
        hasher.update(data[offset...])
        #expect(hasher.finalizeHex() == SHA256.hex(data))
    }

    @Test func fileHashMatchesSha256sum() throws {
        let path = temporaryPath("hash.bin")
        try Body.pattern(size: 1_234_567, seed: 42).data().write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        process.arguments = [path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let expected = String(output.prefix(64))

        #expect(try SHA256.hex(fileAt: path) == expected)
        #expect(SHA256.hex(try Data(contentsOf: URL(fileURLWithPath: path))) == expected)
        #expect(throws: (any Error).self) { try SHA256.hex(fileAt: path + ".missing") }
    }
}
