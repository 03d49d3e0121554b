import Foundation
import Testing
@testable import MonsoonCLI

/// The reporter's pure parts: the bytes left and the summary's amounts.
@Suite struct GetReporterTests {
    @Test func theBytesLeftCountQueuedDownloadsAndSayWhichSizesAreUnknown() {
        let running = GetReporter.Row(name: "a")
        running.status = .downloading
        (running.bytes, running.total) = (1_000, 5_000)
        let queued = GetReporter.Row(name: "b")
        queued.expectedSize = 8_000   // the feed's length: nothing from a server yet
        let resumed = GetReporter.Row(name: "c")
        (resumed.bytes, resumed.total, resumed.expectedSize) = (2_000, 3_000, 9_999)   // the server's size wins
        let unknown = GetReporter.Row(name: "d")
        unknown.status = .waitingToRetry
        let done = GetReporter.Row(name: "e")
        (done.status, done.total) = (.completed, 7_000)
        let removed = GetReporter.Row(name: "f")
        (removed.removed, removed.expectedSize) = (true, 1_000)
        let left = GetReporter.bytesLeft([running, queued, resumed, unknown, done, removed])
        #expect(left.bytes == 4_000 + 8_000 + 1_000 && left.unknown == 1)
    }

    @Test func theSummarySaysTransferredAndResumedBytesApart() {
        var tally = GetReporter.Tally()
        (tally.transferred, tally.resumed) = (66_060_288, 12_582_912)
        #expect(GetReporter.amounts(tally, elapsed: 130.8) == "63 MiB transferred in 2 min 10 s, 12 MiB resumed from parts")
        tally.resumed = 0
        #expect(GetReporter.amounts(tally, elapsed: 1.3) == "63 MiB transferred in 1.3 s")
    }
}

/// The name a download is shown by comes from its path as Foundation would cut it.
@Suite struct ReporterNameTests {
    @Test func aPathsLastComponentIsFoundations() {
        for path in ["/a/b/c.mp3", "c.mp3", "/a/b/", "/", "//", "a//b", "/a/b//", "", "/Ep. 5 (2).mp3", "dir/élan.mp3"] {
            #expect(path.fileName == (path as NSString).lastPathComponent, "\(path)")
        }
    }
}
