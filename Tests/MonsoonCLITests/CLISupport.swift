import Foundation
import MonsoonTestServer
@testable import MonsoonCLI

/// A fresh temporary folder, removed by `remove()`.
struct Folder {
    let path: String

    init() {
        let base = FileManager.default.temporaryDirectory.path(percentEncoded: false)
        path = (base as NSString).appendingPathComponent("monsoon-cli-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }

    /// The folder's entries, without the Monsoon home the tests keep in it.
    func contents(_ sub: String = "") -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: file(sub))) ?? []).filter { $0 != ".monsoon" }.sorted()
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// What an in-process run printed and returned.
struct RunResult {
    var status: Int32
    var output: String
    var errors: String
}

/// Runs `monsoon` in-process, with captured output, in `directory`.
func runMonsoon(_ arguments: [String], in directory: String, stdin: String = "", terminal: Bool = false, interruption: Interruption = Interruption(),
                environment: [String: String]? = nil) async -> RunResult {
    let output = TextOutput.capturing()
    let errors = TextOutput.capturing()
    let input = Data(stdin.utf8)
    let context = CommandContext(
        output: output, errors: errors, environment: environment ?? ["MONSOON_HOME": (directory as NSString).appendingPathComponent(".monsoon")],
        currentDirectory: directory,
        isTerminal: terminal, terminalWidth: 100, readStandardInput: { input }, interruption: interruption)
    let status = await MonsoonCLI.run(arguments, context: context)
    return RunResult(status: status, output: output.text, errors: errors.text)
}

/// The built `monsoon` binary, next to the test bundle.
let monsoonBinary: String = {
    let bundle = Bundle.main.bundleURL.deletingLastPathComponent()
    for candidate in [bundle.appendingPathComponent("monsoon").path,
                      URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("monsoon").path] {
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    return bundle.appendingPathComponent("monsoon").path
}()

/// A running `monsoon` process with its output collected.
///
/// Its output goes to files, not pipes: a pipe's write end can leak into another child the
/// test process spawns meanwhile, and reading to its end would then wait for that child too.
final class MonsoonProcess: @unchecked Sendable {
    // Only touched from the test's task, and by Foundation's Process internals.
    let process = Process()
    private let outPath = FileManager.default.temporaryDirectory.path(percentEncoded: false) + "/monsoon-out-\(UUID().uuidString)"
    private let errPath = FileManager.default.temporaryDirectory.path(percentEncoded: false) + "/monsoon-err-\(UUID().uuidString)"

    init(_ arguments: [String], in directory: String, home: String? = nil) throws {
        guard FileManager.default.isExecutableFile(atPath: monsoonBinary) else {
            throw CLITestError("the monsoon binary is missing at \(monsoonBinary): build it with `swift build` (make test does)")
        }
        process.executableURL = URL(fileURLWithPath: monsoonBinary)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        guard FileManager.default.createFile(atPath: outPath, contents: nil), FileManager.default.createFile(atPath: errPath, contents: nil) else {
            throw CLITestError("cannot create the output files in \(FileManager.default.temporaryDirectory.path(percentEncoded: false))")
        }
        process.standardOutput = FileHandle(forWritingAtPath: outPath)
        process.standardError = FileHandle(forWritingAtPath: errPath)
        process.standardInput = FileHandle.nullDevice
        var environment = ProcessInfo.processInfo.environment
        environment["MONSOON_HOME"] = home ?? (directory as NSString).appendingPathComponent(".monsoon")
        process.environment = environment
        try process.run()
    }

    func interrupt() { kill(process.processIdentifier, SIGINT) }

    /// Waits for the exit, with a deadline; returns status, stdout, stderr.
    func finish(seconds: Double = 60) async throws -> RunResult {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning {
            if Date() > deadline {
                process.terminate()
                throw CLITestError("monsoon did not exit within \(seconds) s")
            }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        let output = String(decoding: FileManager.default.contents(atPath: outPath) ?? Data(), as: UTF8.self)
        let errors = String(decoding: FileManager.default.contents(atPath: errPath) ?? Data(), as: UTF8.self)
        try? FileManager.default.removeItem(atPath: outPath)   // temporary files: nothing to keep
        try? FileManager.default.removeItem(atPath: errPath)
        return RunResult(status: process.terminationStatus, output: output, errors: errors)
    }
}

struct CLITestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

func waitUntil(seconds: Double = 30, _ what: String, _ condition: () -> Bool) async throws {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        if Date() > deadline { throw CLITestError("\(what) did not happen within \(seconds) s") }
        try await Task.sleep(nanoseconds: 20_000_000)
    }
}

func fileSize(_ path: String) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
}
