import Foundation
import MonsoonPodcasts
import MonsoonTestServer
import Synchronization
import Testing
@testable import MonsoonCLI
@testable import MonsoonEngine

/// The live view as the reporter writes it, driven by a run's events on a clock of the test's:
/// one write a frame, a finished line in the frame's write, an ETA that holds still, `active`
/// that never exceeds `-j`, and which podcast an episode is of.
@Suite struct LiveFrameTests {
    /// The time the reporter reads, moved by the test.
    final class TestClock: Sendable {
        private let time = Mutex(Date(timeIntervalSince1970: 1_700_000_000))
        var now: Date { time.withLock { $0 } }
        func advance(_ seconds: Double) { time.withLock { $0 += seconds } }
    }

    /// Each write() the reporter makes, as it made it: a SOCK_SEQPACKET socket keeps the bounds that
    /// a terminal or a pipe would merge.
    final class WriteRecorder {
        let output: TextOutput
        private let writer: Int32
        private let reader: Int32

        init() throws {
            var pair: [Int32] = [-1, -1]
            guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &pair) == 0 else { throw CLITestError("socketpair: \(String(cString: strerror(errno)))") }
            (writer, reader) = (pair[0], pair[1])
            _ = fcntl(reader, F_SETFL, fcntl(reader, F_GETFL) | O_NONBLOCK)
            output = TextOutput(descriptor: writer)
        }

        deinit {
            close(writer)
            close(reader)
        }

        /// The writes made since the last call, one string each.
        func take() -> [String] {
            var writes: [String] = []
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            while case let count = recv(reader, &buffer, buffer.count, 0), count > 0 { writes.append(String(decoding: buffer[0..<count], as: UTF8.self)) }
            return writes
        }
    }

    static func reporter(_ output: TextOutput, errors: TextOutput = .capturing(terminal: false), clock: TestClock, width: Int = 120) -> GetReporter {
        let context = CommandContext(output: output, errors: errors, environment: ["NO_COLOR": "1"], currentDirectory: "/", isTerminal: true, terminalWidth: width)
        return GetReporter(context: context, quiet: false, verbose: false, expected: 0, clock: { clock.now })
    }

    /// Download `id`, an episode of `podcast` when it has a title.
    static func download(_ id: String, _ status: DownloadStatus, bytes: Int = 0, total: Int? = nil, podcast: String? = nil, title: String? = nil,
                         error: String? = nil) -> Download {
        let info = title.map { [EpisodeQueue.titleKey: $0, EpisodeQueue.podcastKey: podcast ?? "", EpisodeQueue.guidKey: "guid-\(id)"] } ?? [:]
        let request = DownloadRequest(id: DownloadID(id), url: URL(string: "http://h/\(id).mp3")!, destination: .file("/tmp/\(id).mp3"), userInfo: info)
        return Download(request: request, status: status, bytes: bytes, total: total, lastError: error.map { DownloadError(.httpStatus, $0) },
                        filePath: "/tmp/\(id).mp3", attempts: 0, retryAt: error.map { _ in Date(timeIntervalSinceNow: 5) })
    }

    static func attemptEnded(_ id: String, bytes: Int) -> DownloadEvent {
        .attempt(AttemptReport(id: DownloadID(id), host: "h", status: 200, bytes: bytes, resumedFrom: 0, timeToFirstByte: 0.01, duration: 1, newConnections: 0, error: nil))
    }

    /// The run's line of the last frame in `text`.
    static func runLine(_ text: String) -> String? {
        text.components(separatedBy: "\n").last { $0.contains(" done · ") }.map { $0.replacingOccurrences(of: "\u{1B}[K", with: "") }
    }

    /// The seconds an `ETA m:ss` in `line` says.
    static func eta(_ line: String) -> Int? {
        guard let range = line.range(of: #"ETA \d+:\d\d"#, options: .regularExpression) else { return nil }
        let parts = line[range].dropFirst(4).split(separator: ":").compactMap { Int($0) }
        return parts[0] * 60 + parts[1]
    }

    @Test func eachFrameIsOneWriteAndAFinishedLineGoesOutWithTheFrameAfterIt() throws {
        let recorder = try WriteRecorder()
        let clock = TestClock()
        let errors = TextOutput.capturing(terminal: true)
        let reporter = Self.reporter(recorder.output, errors: errors, clock: clock)
        reporter.handle(.statusChanged(Self.download("e1", .downloading, total: 1_000, podcast: "On Curl", title: "Episode 11: On curl")))
        reporter.handle(.statusChanged(Self.download("e2", .downloading, total: 2_000, podcast: "Net Talk", title: "Episode 11: On curl")))
        for step in 1...4 {
            clock.advance(0.25)
            reporter.handle(.progress(id: "e1", bytes: step * 200, total: 1_000))
            reporter.handle(.progress(id: "e2", bytes: step * 200, total: 2_000))
            reporter.redraw()
        }
        clock.advance(0.25)
        reporter.handle(.statusChanged(Self.download("e1", .completed, bytes: 1_000, total: 1_000, podcast: "On Curl", title: "Episode 11: On curl")))
        clock.advance(0.25)
        reporter.redraw()
        // A retry is said on standard error, the same terminal: it takes the block's place, erasing nothing.
        reporter.handle(.statusChanged(Self.download("e2", .waitingToRetry, bytes: 800, total: 2_000, podcast: "Net Talk", title: "Episode 11: On curl",
                                                     error: "HTTP 503")))
        clock.advance(0.25)
        reporter.redraw()

        let writes = recorder.take()
        var drawn = false
        for write in writes {
            if write.wholeMatch(of: /\r\x1B\[\d+A/) != nil {
                #expect(drawn, "only a drawn block is gone back over")
                drawn = false
                continue
            }
            #expect(write.hasSuffix("\u{1B}[J") && write.contains(" done · "), "every write redraws the block and clears below it: \(write.debugDescription)")
            #expect(drawn == (write.wholeMatch(of: /\r\x1B\[\d+A(?s:.*)/) != nil), "up to the block drawn before, or the first: \(write.debugDescription)")
            drawn = true
        }
        let finished = try #require(writes.first { $0.contains("✓") })
        let line = try #require(finished.components(separatedBy: "\n").first { $0.contains("✓") })
        #expect(line.hasSuffix("✓ On Curl · Episode 11: On curl  1000 B\u{1B}[K"), "two podcasts: the line names its own: \(line.debugDescription)")
        #expect(finished.range(of: "✓")!.lowerBound < finished.range(of: " done · ")!.lowerBound, "the frame follows the line, in the same write")
        #expect(writes.contains { $0.contains("  Net Talk · Episode 11: On curl ") && $0.contains("  On Curl · Episode 11: On curl ") })
        #expect(errors.text.contains("monsoon: Net Talk: e2 retrying in "), "two podcasts: the line on standard error names its own")
    }

    enum Arrivals: CaseIterable {
        /// Every 100 ms (the engine's progress), a tenth of the rate give or take 30 %.
        case jittered
        /// In bursts every 0.1 to 1 s, as a rate limiter lets them through, each the rate's worth of its wait.
        case bursts
    }

    /// 15 MiB/s for 60 s. The ETAs shown at 25, 50, 75 and 90 % (the run's and the download's) are
    /// within a fifth of the time really left, and never jump by more than that between frames.
    @Test(arguments: Arrivals.allCases) func theETAHoldsStillAndIsHonestAtASteadyRate(_ arrivals: Arrivals) throws {
        let rate = 15 << 20, total = 60 * (15 << 20)
        // When each count arrives, worked out first: the true time left is known at every step.
        var schedule: [(time: Double, bytes: Int)] = []
        var random = SeededGenerator(seed: 49)
        var (time, bytes) = (0.0, 0)
        while bytes < total {
            let wait = arrivals == .jittered ? 0.1 : [0.1, 0.4, 1.0, 0.7, 0.25][schedule.count % 5]
            time += wait
            let noise = arrivals == .jittered ? Double(random.next() % 61) / 100 - 0.3 : 0
            bytes = min(total, bytes + Int(Double(rate) * wait * (1 + noise)))
            schedule.append((time, bytes))
        }
        let end = time
        let output = TextOutput.capturing()
        let clock = TestClock()
        let reporter = Self.reporter(output, clock: clock)
        reporter.handle(.statusChanged(Self.download("e1", .downloading, total: total)))
        var (now, nextDraw, checkpoints) = (0.0, 0.25, [0.25, 0.5, 0.75, 0.9])
        var previous: Int?
        // The engine reports every 100 ms what has come; the view draws every 250 ms.
        var index = 0
        while now < end {
            now += 0.1
            clock.advance(0.1)
            while index < schedule.count && schedule[index].time <= now + 1e-9 { index += 1 }
            let seen = index > 0 ? schedule[index - 1].bytes : 0
            if seen < total { reporter.handle(.progress(id: "e1", bytes: seen, total: total)) }
            guard now >= nextDraw || checkpoints.first.map({ Double(seen) >= $0 * Double(total) }) == true, seen < total else { continue }
            nextDraw = now + 0.25
            reporter.redraw()
            let frame = output.text.components(separatedBy: "\u{1B}[J").dropLast().last ?? ""
            let run = try #require(Self.runLine(frame))
            let row = try #require(frame.components(separatedBy: "\n").first { $0.contains("%") })
            guard Double(seen) >= 0.25 * Double(total) else { continue }
            let left = end - now
            for shown in [Self.eta(run), Self.eta(row)] {
                let eta = try #require(shown, "\(frame.debugDescription)")
                #expect(Double(eta) >= 0.8 * left && Double(eta) - 1 <= 1.2 * left, "ETA \(eta) s with \(left) s left at \(Int(100 * Double(seen) / Double(total))) %")
            }
            if let previous, let eta = Self.eta(run) { #expect(abs(Double(eta - previous)) <= 0.2 * left + 1, "from \(previous) s to \(eta) s in 250 ms") }
            previous = Self.eta(run)
            if let next = checkpoints.first, Double(seen) >= next * Double(total) { checkpoints.removeFirst() }
        }
        #expect(checkpoints.isEmpty, "every checkpoint was drawn")
    }

    /// `-j 2`: a download whose attempt has ended (its file being put in place) has given its slot
    /// to the next, which starts before the first is completed; one waiting to retry holds none.
    @Test func activeNeverExceedsTheDownloadsAtATime() throws {
        let output = TextOutput.capturing()
        let clock = TestClock()
        let reporter = Self.reporter(output, clock: clock)
        reporter.handle(.statusChanged(Self.download("d1", .downloading, total: 1_000)))
        reporter.handle(.statusChanged(Self.download("d2", .downloading, total: 1_000)))
        reporter.handle(.progress(id: "d1", bytes: 1_000, total: 1_000))
        reporter.handle(Self.attemptEnded("d1", bytes: 1_000))
        reporter.handle(.statusChanged(Self.download("d3", .downloading, total: 1_000)))
        reporter.redraw()
        #expect(Self.runLine(output.text)?.hasPrefix("0/3 done · 2 active · 0 queued") == true, "\(Self.runLine(output.text) ?? output.text)")
        reporter.handle(.statusChanged(Self.download("d1", .completed, bytes: 1_000, total: 1_000)))
        reporter.handle(.statusChanged(Self.download("d2", .waitingToRetry, total: 1_000, error: "HTTP 503")))
        reporter.handle(.statusChanged(Self.download("d4", .downloading, total: 1_000)))
        reporter.redraw()
        #expect(Self.runLine(output.text)?.hasPrefix("1/4 done · 2 active · 1 retrying · 0 queued") == true, "\(Self.runLine(output.text) ?? output.text)")
    }
}
