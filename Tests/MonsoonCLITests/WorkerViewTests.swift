import Foundation
@testable import MonsoonCLI
import MonsoonCluster
import MonsoonEngine
import Testing

/// What `monsoon worker` shows: one live line on a terminal, redrawn in place under its
/// messages; JSON lines with `--json`, an idle worker's unchanged progress said once; nothing
/// but messages in a pipe.
@Suite struct WorkerViewTests {
    static func context(terminal: Bool) -> (CommandContext, TextOutput, TextOutput) {
        let output = TextOutput.capturing(terminal: terminal), errors = TextOutput.capturing(terminal: terminal)
        return (CommandContext(output: output, errors: errors, environment: ["NO_COLOR": "1"], currentDirectory: "/", isTerminal: terminal, terminalWidth: 80),
                output, errors)
    }

    static var busy: WorkerProgress {
        var progress = WorkerProgress()
        progress.completed = 3
        progress.failed = 1
        progress.refreshed = 1
        progress.running = 2
        progress.bytes = 3_000_000
        progress.bytesPerSecond = 1536
        return progress
    }

    /// Standard error on the live line's terminal: each message goes out with the line drawn
    /// again below it, in one write (up to the line, the message over it, the line, clear below).
    @Test func aTerminalGetsOneLiveLineRedrawnUnderTheMessagesInOneWrite() throws {
        let recorder = try LiveFrameTests.WriteRecorder()
        let context = CommandContext(output: recorder.output, errors: recorder.output, environment: ["NO_COLOR": "1"], currentDirectory: "/",
                                     isTerminal: true, terminalWidth: 80)
        let view = WorkerView(context: context, name: "rack2", json: false, quiet: false)
        #expect(view.style == .live)
        view.observe(.progress(Self.busy))
        let line = "worker rack2: 3 downloaded · 1 failed · 2 running · 1 feed read · \(ByteCount.format(1536))/s"
        let frame = line + "\u{1B}[K\n\u{1B}[J"   // the line over the old one, then clear below
        #expect(recorder.take() == [frame])
        view.message("worker rack2: the database is back")
        view.message("worker rack2: lost j1")
        let back = "\r\u{1B}[1A"
        #expect(recorder.take() == [back + "monsoon: worker rack2: the database is back\u{1B}[K\n" + frame, back + "monsoon: worker rack2: lost j1\u{1B}[K\n" + frame],
                "a message takes the line's place, and the line is drawn below it, in the same write")
        view.finish()
        #expect(recorder.take().joined() == "\r\u{1B}[1A\u{1B}[J" + "\r\u{1B}[K", "the summary takes the line's place")
    }

    /// Standard error elsewhere (a file, another terminal): messages go there, and the live line stays as it is.
    @Test func messagesToAnotherPlaceLeaveTheLiveLineAlone() {
        let (context, output, errors) = Self.context(terminal: true)
        let view = WorkerView(context: context, name: "rack2", json: false, quiet: false)
        view.observe(.progress(Self.busy))
        let drawn = output.text
        view.message("worker rack2: the database is back")
        #expect(errors.text == "monsoon: worker rack2: the database is back\n" && output.text == drawn)
    }

    @Test func aNarrowTerminalGetsTheLineCut() {
        let output = TextOutput.capturing(terminal: true)
        let context = CommandContext(output: output, errors: output, environment: ["NO_COLOR": "1"], currentDirectory: "/", isTerminal: true, terminalWidth: 30)
        WorkerView(context: context, name: "a-very-long-worker-name", json: false, quiet: false).observe(.progress(Self.busy))
        let end = "\u{1B}[K\n\u{1B}[J"
        #expect(output.text.hasSuffix(end) && TerminalText.displayWidth(String(output.text.dropLast(end.count))) <= 29, "\(output.text)")
    }

    @Test func jsonLinesSayEachJobAndProgressThatChanged() throws {
        let (context, output, _) = Self.context(terminal: true)
        let view = WorkerView(context: context, name: "w", json: true, quiet: false)
        view.observe(.completed(job: 7, path: "Show/episode 1.mp3", bytes: 1000))
        view.observe(.failed(job: 8, url: "https://cdn.example.com/e/2.mp3", reason: "the server answered 404 Not Found", retrying: false))
        view.observe(.progress(Self.busy))
        view.observe(.progress(Self.busy))
        view.finish()   // the lines go out from a queue of their own
        let lines = output.text.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "an unchanged progress is said once: \(output.text)")
        #expect(try lines.allSatisfy { try JSONSerialization.jsonObject(with: Data($0.utf8)) is [String: Any] })
        #expect(lines[0].hasPrefix("{\"event\": \"completed\", \"time\": \"") && lines[0].hasSuffix("\"job\": 7, \"path\": \"Show/episode 1.mp3\", \"bytes\": 1000}"))
        #expect(lines[1].hasPrefix("{\"event\": \"failed\", ")
                && lines[1].hasSuffix("\"job\": 8, \"url\": \"https://cdn.example.com/e/2.mp3\", \"reason\": \"the server answered 404 Not Found\", \"retrying\": false}"))
        #expect(lines[2].hasPrefix("{\"event\": \"progress\", ")
                && lines[2].hasSuffix("\"completed\": 3, \"failed\": 1, \"refreshed\": 1, \"running\": 2, \"bytes\": 3000000, \"bytesPerSecond\": 1536}"))
        #expect(!output.text.contains("\u{1B}"), "never a live line with --json")
    }

    @Test func aPipeGetsMessagesOnly() {
        let (context, output, errors) = Self.context(terminal: false)
        let view = WorkerView(context: context, name: "w", json: false, quiet: false)
        view.observe(.progress(Self.busy))
        view.message("worker w: lost j1")
        view.finish()
        #expect(output.text == "" && errors.text == "monsoon: worker w: lost j1\n")
    }
}
