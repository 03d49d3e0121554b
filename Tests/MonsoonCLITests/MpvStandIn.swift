import Foundation
import Synchronization

/// The mpv stand-in (`Tests/Fixtures/mpv-standin/mpv`, a Python script that speaks mpv's JSON IPC)
/// for one test: its folder first on `PATH`, and the clock it plays by, which only `advance(by:)`
/// moves. Positions are therefore exact, and a test waits for what the stand-in did (`next(_:)`),
/// never for time to pass.
///
/// One stand-in runs at a time per instance: a test that plays twice waits for the first play to end.
final class MpvStandIn: Sendable {
    /// The folder holding the stand-in named `mpv`.
    static let binFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/mpv-standin").path

    /// Where the test's clock and the stand-in's events live (`MPV_STANDIN_DIR`).
    let folder: String
    private let reportEvery: Double?
    /// The clock's total so far, and how many event lines `next(_:)` has gone past.
    private let state = Mutex((clock: 0.0, cursor: 0))

    /// - Parameter reportEvery: report time-pos only once playback is that many seconds past the
    ///   last report, and the rest at a later clock reading, as real mpv's reports lag: what
    ///   mpv reported then differs from where it is, which it says when asked.
    init(reportEvery: Double? = nil) throws {
        folder = FileManager.default.temporaryDirectory.path(percentEncoded: false) + "/mpv-standin-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        self.reportEvery = reportEvery
        try writeClock(0)
    }

    func remove() { try? FileManager.default.removeItem(atPath: folder) }   // a temporary folder: nothing to keep

    /// What `play` needs on top of Monsoon's: the stand-in first on `PATH`, and its folder.
    var variables: [String: String] {
        var variables = ["PATH": Self.binFolder + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"), "MPV_STANDIN_DIR": folder]
        if let reportEvery { variables["MPV_STANDIN_REPORT_EVERY"] = String(reportEvery) }
        return variables
    }

    /// The environment for an in-process `runMonsoon` in `directory`: its home where the default
    /// environment puts it, and `variables`.
    func environment(in directory: String) -> [String: String] {
        variables.merging(["MONSOON_HOME": (directory as NSString).appendingPathComponent(".monsoon")]) { $1 }
    }

    /// Moves the clock on by `seconds` and waits until the running stand-in has applied it (it
    /// plays that long if it plays). Returns its position then.
    @discardableResult
    func advance(by seconds: Double) async throws -> Double? {
        let total = state.withLock { state -> Double in
            state.clock += seconds
            return state.clock
        }
        try writeClock(total)
        let applied = try await waitForEvent("the clock's move to \(total) s applied by mpv") { lines in
            lines.last { $0.first == "clock" && $0.count == 3 && Double($0[1]) == total }
        }
        return Double(applied[2])
    }

    /// Waits for the next event named `name` after those already taken, takes it, and returns
    /// its words after the name ("loaded" gives the position and the duration).
    @discardableResult
    func next(_ name: String) async throws -> [String] {
        let cursor = state.withLock { $0.cursor }
        var taken = 0
        let event = try await waitForEvent("mpv's next \"\(name)\"") { lines in
            guard let index = lines.indices.first(where: { $0 >= cursor && lines[$0].first == name }) else { return nil }
            taken = index + 1
            return lines[index]
        }
        state.withLock { $0.cursor = max($0.cursor, taken) }
        return Array(event.dropFirst())
    }

    /// The pid of the stand-in started next (waits for it).
    func nextPID() async throws -> pid_t {
        let words = try await next("started")
        guard let pid = words.first.flatMap({ pid_t($0) }) else { throw CLITestError("the stand-in's start names no pid: \(words)") }
        return pid
    }

    /// Every complete line the stand-in has written, split into words.
    var events: [[String]] {
        let text = String(decoding: FileManager.default.contents(atPath: folder + "/events") ?? Data(), as: UTF8.self)
        // The last line counts once its newline is written.
        return text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map { $0.split(separator: " ").map(String.init) }
    }

    private func waitForEvent(_ what: String, seconds: Double = 30, _ find: ([[String]]) -> [String]?) async throws -> [String] {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if let found = find(events) { return found }
            if Date() > deadline { throw CLITestError("\(what) did not happen within \(seconds) s; events: \(events)") }
            try await Task.sleep(nanoseconds: 5_000_000)
        }
    }

    /// Replaced, not rewritten: the stand-in never reads half a number.
    private func writeClock(_ seconds: Double) throws {
        try String(seconds).write(toFile: folder + "/clock", atomically: true, encoding: .utf8)
    }
}
