import Foundation
import Testing
@testable import MonsoonEngine
@testable import MonsoonCLI

/// The run report's timeline and throughput stay bounded however long and large the run.
@Suite struct RunTimelineTests {
    private func download(_ id: String, _ status: DownloadStatus) -> Download {
        Download(request: DownloadRequest(id: DownloadID(id), url: URL(string: "http://h.example/\(id).mp3")!, destination: .file("/tmp/\(id).mp3")),
                 status: status, bytes: 0, total: nil, lastError: nil, filePath: nil, attempts: 0, retryAt: nil)
    }

    @Test func throughputKeepsAtMostItsBucketsAndEveryByte() {
        var throughput = Throughput()
        var total = 0
        // A run of about eleven days, an attempt every 1,000 s, on more hosts than are kept apart.
        for index in 0..<1_000 {
            let start = Double(index) * 1_000
            throughput.add(bytes: 1_000_000, from: start, to: start + 500, host: "h\(index % 40)")
            total += 1_000_000
        }
        #expect(throughput.overall.count <= Throughput.maxBuckets)
        #expect(throughput.hosts.count == Throughput.hostLimit)
        #expect(abs(throughput.overall.reduce(0, +) - Double(total)) < 1, "every byte is in the overall line")
        #expect(throughput.bucketSeconds * Double(Throughput.maxBuckets) > 999_500, "the buckets cover the whole run")
    }

    @Test func detailIsKeptForTheFirstDownloadsAndOutcomesForAll() {
        let start = Date()
        var timeline = RunTimeline(start: start)
        let count = RunTimeline.detailLimit + 200
        for index in 0..<count {
            let id = "d\(index)"
            timeline.observe(.statusChanged(download(id, .downloading)), at: start.addingTimeInterval(1))
            for retry in 0..<(RunTimeline.phaseLimit) {
                timeline.observe(.statusChanged(download(id, retry % 2 == 0 ? .waitingToRetry : .downloading)), at: start.addingTimeInterval(2))
            }
            timeline.observe(.statusChanged(download(id, index % 3 == 0 ? .failed : .completed)), at: start.addingTimeInterval(3))
        }
        #expect(timeline.traces.count == RunTimeline.detailLimit)
        #expect(timeline.downloadsLeftOut == 200)
        #expect(timeline.traces.allSatisfy { $0.phases.count <= RunTimeline.phaseLimit })
        #expect(timeline.traces[0].phases.first == RunTimeline.Phase(status: "queued", start: 1), "first seen starting: queued since the run's first event")
        #expect(timeline.outcome(of: "d0") == "failed" && timeline.outcome(of: "d1") == "completed")
        let json = timeline.jsonMembers(wall: 4)
        #expect(json.contains("\"outcomes\": {\"completed\": \(count - (count + 2) / 3), \"failed\": \((count + 2) / 3)}"), "\(json.prefix(200))")
        #expect(json.contains("\"leftOut\": 200"))
    }

    @Test func aDownloadLeftRunningIsInterruptedAndOneNeverStartedIsNot() {
        let start = Date()
        var timeline = RunTimeline(start: start)
        timeline.observe(.added(download("a", .queued)), at: start)
        timeline.observe(.added(download("b", .queued)), at: start)
        timeline.observe(.statusChanged(download("a", .downloading)), at: start.addingTimeInterval(1))
        timeline.observe(.added(download("c", .queued)), at: start)
        timeline.observe(.removed("c"), at: start.addingTimeInterval(2))
        #expect(timeline.outcome(of: "a") == "interrupted")
        #expect(timeline.outcome(of: "b") == "notStarted")
        #expect(timeline.outcome(of: "c") == "removed")
    }

    @Test func thirtyThousandDownloadsMakeASmallReportAndPage() throws {
        let report = RunReport()
        let count = 30_000
        for index in 0..<count {
            let id = "d\(index)"
            report.observe(.statusChanged(download(id, .downloading)))
            for attempt in 0..<2 {
                report.observe(.attempt(AttemptReport(id: DownloadID(id), host: "h\(index % 50).example", status: attempt == 0 ? 503 : 200,
                                                      bytes: attempt == 0 ? 0 : 1_000_000, resumedFrom: 0, timeToFirstByte: 0.05, duration: 0.2,
                                                      newConnections: 1, error: attempt == 0 ? DownloadError(.httpStatus, "HTTP 503", httpStatus: 503) : nil)))
            }
            report.observe(.statusChanged(download(id, .completed)))
        }
        let text = report.text(command: "archive")
        let page = try RunPage.html(reportData: Data(text.utf8), path: "run.json")
        #expect(text.utf8.count < 2_000_000, "the report is \(text.utf8.count) bytes")
        #expect(page.utf8.count < 4_000_000, "the page is \(page.utf8.count) bytes")
        #expect(text.contains("\"outcomes\": {\"completed\": 30000}") && text.contains("\"leftOut\": 29000"))
        #expect(page.contains("The timeline shows the first 1000 of 30000 downloads"))
    }
}
