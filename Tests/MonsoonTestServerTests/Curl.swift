import Foundation

/// Runs the `curl` command line against the server: an independent HTTP client, so the
/// tests check the server's wire behaviour rather than agreeing with code of our own.
struct Curl {
    struct Result {
        var exitCode: Int32
        /// The HTTP status of the last response (0 if none was received).
        var status: Int
        /// Header fields of the last response, names lowercased.
        var headers: [String: String]
        var body: Data
        var stderr: String
    }

    static let path = "/usr/bin/curl"

    /// Runs `curl -sS` with `arguments` plus options that capture status, headers and body.
    static func run(_ arguments: [String], maxTime: Int = 10) throws -> Result {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("curl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let headerFile = dir.appendingPathComponent("headers").path
        let bodyFile = dir.appendingPathComponent("body").path

        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["-sS", "--max-time", String(maxTime), "-D", headerFile, "-o", bodyFile, "-w", "%{http_code}"] + arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // curl's stdout (the status code) and stderr are tiny, so reading one after the other cannot block.
        let statusText = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()

        let headerText = (try? String(contentsOfFile: headerFile, encoding: .utf8)) ?? ""
        return Result(
            exitCode: process.terminationStatus,
            status: Int(statusText.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0,
            headers: parseLastHeaderBlock(headerText),
            body: (try? Data(contentsOf: URL(fileURLWithPath: bodyFile))) ?? Data(),
            stderr: stderr)
    }

    /// Starts curl without waiting, its output discarded (for parallel clients).
    static func start(_ arguments: [String], maxTime: Int = 20) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["-sS", "--max-time", String(maxTime)] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    private static func parseLastHeaderBlock(_ text: String) -> [String: String] {
        let blocks = text.replacingOccurrences(of: "\r\n", with: "\n")
            .components(separatedBy: "\n\n").filter { !$0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }
        var headers: [String: String] = [:]
        for line in (blocks.last ?? "").split(separator: "\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return headers
    }
}

/// Polls `condition` until it holds or `timeout` passes.
func eventually(timeout: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

/// A fresh temporary file path.
func temporaryPath(_ name: String) -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("\(UUID().uuidString)-\(name)").path
}
