import Foundation
import MonsoonTestServer
import Testing

/// The `monsoon-testserver` binary, built next to the test bundle (when it was built at all:
/// the test target does not depend on it, so these tests are skipped if it is missing).
private let executable: String = {
    let bundle = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    return bundle.appendingPathComponent("monsoon-testserver").path
}()

@Suite("monsoon-testserver executable", .enabled(if: FileManager.default.isExecutableFile(atPath: executable)))
struct ExecutableTests {
    @Test func servesGeneratedAndDirectoryFilesUntilSIGTERM() throws {
        let dir = temporaryPath("served")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data("hello\n".utf8).write(to: URL(fileURLWithPath: dir + "/hello.txt"))

        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--dir", dir, "--generate", "2", "--size", "64k"]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        defer { if process.isRunning { process.terminate() } }

        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let base = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(base.hasPrefix("http://127.0.0.1:"))

        let hello = try Curl.run([base + "/hello.txt"])
        #expect(hello.body == Data("hello\n".utf8))
        #expect(hello.headers["etag"] != nil)
        #expect(hello.headers["last-modified"] != nil)

        let generated = try Curl.run([base + "/file2.bin"])
        #expect(generated.body == Body.pattern(size: 65536, seed: 2).data())
        #expect(generated.headers["etag"] != nil)
        #expect(try Curl.run([base + "/file3.bin"]).status == 404)

        process.terminate()  // SIGTERM
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)
    }

    @Test func badArgumentsExitWithUsage() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--bogus"]
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 2)
        #expect(message.contains("usage:"))
    }
}
