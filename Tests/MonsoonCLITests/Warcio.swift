import Foundation
import MonsoonTestServer

/// warcio (PyPI), the Webrecorder project's WARC reader, which judges what `--warc` writes:
/// `make test-deps` installs it into .build/warcio-venv under the package's folder.
enum Warcio {
    static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent(".build/warcio-venv/bin/warcio").path

    /// One record as `warcio index` lists it.
    struct Record {
        var type: String
        var uri: String?
        var status: String?
        var offset: Int
        var ranges: String?
        var truncated: String?
    }

    /// Runs warcio with `arguments` in `folder`; its standard output goes to `output` when given.
    static func run(_ arguments: [String], in folder: Folder, output: String? = nil) async throws -> RunResult {
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw CLITestError("warcio is missing at \(path): run `make test-deps`, which installs warcio 1.7.4 from PyPI into .build/warcio-venv")
        }
        let outPath = output ?? folder.file("warcio-\(UUID().uuidString).out")
        let errPath = folder.file("warcio-\(UUID().uuidString).err")
        let process = try SpawnedProcess(path, arguments, directory: folder.path, environment: ProcessInfo.processInfo.environment,
                                         output: outPath, errors: errPath)
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning {
            if Date() > deadline {
                process.terminate()
                throw CLITestError("warcio \(arguments.joined(separator: " ")) did not finish within 60 s")
            }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        let result = RunResult(status: process.terminationStatus,
                               output: output == nil ? String(decoding: FileManager.default.contents(atPath: outPath) ?? Data(), as: UTF8.self) : "",
                               errors: String(decoding: FileManager.default.contents(atPath: errPath) ?? Data(), as: UTF8.self))
        if output == nil { try? FileManager.default.removeItem(atPath: outPath) }   // a temporary file: nothing to keep
        try? FileManager.default.removeItem(atPath: errPath)
        return result
    }

    /// `warcio check -v FILE`: its verdict (exit status 0: every digest passes) and report.
    static func check(_ file: String, in folder: Folder) async throws -> RunResult {
        try await run(["check", "-v", file], in: folder)
    }

    /// `warcio index`: every record of `file`, in order.
    static func index(_ file: String, in folder: Folder) async throws -> [Record] {
        let result = try await run(["index", "-f", "warc-type,warc-target-uri,http:status,offset,warc-monsoon-ranges,warc-truncated", file], in: folder)
        guard result.status == 0 else { throw CLITestError("warcio index \(file) failed: \(result.errors)") }
        return try result.output.split(separator: "\n").map { line in
            guard let fields = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String],
                  let type = fields["warc-type"], let offset = fields["offset"].flatMap({ Int($0) }) else {
                throw CLITestError("warcio index printed '\(line)'")
            }
            return Record(type: type, uri: fields["warc-target-uri"], status: fields["http:status"], offset: offset,
                          ranges: fields["warc-monsoon-ranges"], truncated: fields["warc-truncated"])
        }
    }

    /// The SHA-256 of what `warcio extract --payload FILE OFFSET` gives.
    static func payloadSHA256(_ file: String, offset: Int, in folder: Folder) async throws -> String {
        let extracted = folder.file("payload-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(atPath: extracted) }   // a temporary file: nothing to keep
        let result = try await run(["extract", "--payload", file, String(offset)], in: folder, output: extracted)
        guard result.status == 0 else { throw CLITestError("warcio extract --payload \(file) \(offset) failed: \(result.errors)") }
        return try SHA256.hex(fileAt: extracted)
    }
}
