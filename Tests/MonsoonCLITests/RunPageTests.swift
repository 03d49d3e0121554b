import Foundation
import Testing
import MonsoonTestServer
@testable import MonsoonCLI

/// `--report-html` and `monsoon report`: the page of a real run, checked in headless Chromium.
@Suite struct RunPageTests {
    static let chromium = "/usr/bin/chromium"

    /// The page's DOM after Chromium parsed it, laid it out and ran its script; with `screenshot`, also
    /// a picture of the whole page at `size` there.
    static func renderedDOM(of page: String, in folder: Folder, screenshot: (path: String, size: String)? = nil) async throws -> String {
        guard FileManager.default.isExecutableFile(atPath: Self.chromium) else {
            throw CLITestError("\(Self.chromium) is missing: install Debian's chromium (make deps does)")
        }
        let output = folder.file("dom.html")
        let errors = folder.file("chromium.log")
        let picture = screenshot.map { ["--screenshot=\($0.path)", "--window-size=\($0.size)", "--hide-scrollbars"] } ?? []
        // As root Chromium needs --no-sandbox; a profile of its own keeps it off the user's.
        let process = try SpawnedProcess(Self.chromium, ["--headless", "--disable-gpu", "--no-sandbox", "--user-data-dir=\(folder.file("profile"))",
                                                         "--dump-dom"] + picture + [URL(fileURLWithPath: page).absoluteString],
                                         directory: folder.path, environment: ["HOME": folder.path, "PATH": "/usr/bin:/bin"], output: output, errors: errors)
        try await waitUntil(seconds: 120, "chromium's --dump-dom") { !process.isRunning }
        let dom = String(decoding: FileManager.default.contents(atPath: output) ?? Data(), as: UTF8.self)
        guard process.terminationStatus == 0, dom.contains("</html>") else {
            throw CLITestError("chromium exited \(process.terminationStatus): \(String(decoding: FileManager.default.contents(atPath: errors) ?? Data(), as: UTF8.self).suffix(2000))")
        }
        return dom
    }

    static func matches(_ pattern: String, in text: String) -> [[String]] {
        let regex = try! NSRegularExpression(pattern: pattern)
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { match in
            (0..<match.numberOfRanges).map { Range(match.range(at: $0), in: text).map { String(text[$0]) } ?? "" }
        }
    }

    @Test func thePageOfARunShowsEveryDownloadInChromium() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let sizes = ["/one.mp3": 200_000, "/two.mp3": 300_000, "/flaky.mp3": 400_000, "/named.mp3": 50_000]
        for (path, size) in sizes {
            var route = Route(body: .pattern(size: size, seed: UInt64(size)), etag: "\"\(size)\"")
            if path == "/flaky.mp3" { route.faults = [.dropAfter(bytes: 100_000, times: 1)] }
            // A name from the server that is HTML: the page shows it as text.
            if path == "/named.mp3" { route.contentDisposition = "attachment; filename=\"<i>x&y</i>.mp3\"" }
            server.setRoute(path, route)
        }
        server.setRoute("/missing.mp3", Route.html(status: 404, "<html>gone</html>"))
        let urls = ["/one.mp3", "/two.mp3", "/flaky.mp3", "/named.mp3", "/missing.mp3"].map { server.url($0).absoluteString }
        let run = await runMonsoon(["get", "--report", "r.json", "--report-html", "r.html"] + urls, in: folder.path)
        #expect(run.status == 1, "one download failed: \(run.errors)")

        // The JSON: the fields it had, and each download's phases and attempts.
        let data = try #require(FileManager.default.contents(atPath: folder.file("r.json")))
        let report = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        for field in ["command", "started", "ended", "wallSeconds", "overall", "hosts", "outcomes", "timeline", "throughput", "downloads"] {
            #expect(report[field] != nil, "the report has \(field)")
        }
        let downloads = try #require(report["downloads"] as? [[String: Any]])
        #expect(downloads.count == 5)
        let byURL = Dictionary(uniqueKeysWithValues: downloads.map { (($0["url"] as? String) ?? "", $0) })
        for (path, size) in sizes {
            let download = try #require(byURL[server.url(path).absoluteString], "\(path) is in the report")
            let attempts = try #require(download["attempts"] as? [[String: Any]])
            #expect(download["outcome"] as? String == "completed", "\(path)")
            #expect(attempts.count == (path == "/flaky.mp3" ? 2 : 1), "\(path): \(attempts)")
            #expect(attempts.reduce(0) { $0 + (($1["bytes"] as? Int) ?? 0) } == size, "the attempts of \(path) wrote its \(size) bytes")
            #expect(attempts.allSatisfy { (($0["start"] as? Double) ?? -1) >= 0 && ($0["start"] as? Double ?? 1) <= ($0["end"] as? Double ?? 0) })
        }
        let flaky = try #require(byURL[server.url("/flaky.mp3").absoluteString])
        let phases = (flaky["phases"] as? [[String: Any]] ?? []).compactMap { $0["status"] as? String }
        #expect(phases.first == "queued" && phases.contains("waitingToRetry") && phases.last == "completed", "\(phases)")
        #expect((flaky["attempts"] as? [[String: Any]])?.last?["resumedFrom"] as? Int == 100_000)
        let missing = try #require(byURL[server.url("/missing.mp3").absoluteString])
        #expect(missing["outcome"] as? String == "failed")
        #expect((missing["attempts"] as? [[String: Any]])?.first?["status"] as? Int == 404)
        #expect((report["outcomes"] as? [String: Int]) == ["completed": 4, "failed": 1])
        let overall = try #require((report["throughput"] as? [String: Any])?["overall"] as? [Int])
        let total = sizes.values.reduce(0, +)
        #expect(abs(overall.reduce(0, +) - total) <= overall.count, "the throughput line holds every byte (rounded per bucket)")

        // The page: self-contained, escaped, and the same from `monsoon report`.
        let page = try String(contentsOfFile: folder.file("r.html"), encoding: .utf8)
        #expect(Self.matches("(?i)(src|href)\\s*=|url\\(|@import|<link|<img|<iframe", in: page).isEmpty, "the page loads nothing")
        let named = try #require(byURL[server.url("/named.mp3").absoluteString]?["name"] as? String)
        #expect(named.hasPrefix("<i>x&y"), "the server's name: \(named)")
        #expect(page.contains(RunPage.escape(named)) && !page.contains(named), "a server's name is escaped")
        let again = await runMonsoon(["report", "r.json", "-o", "r2.html"], in: folder.path)
        #expect(again.status == 0, "\(again.errors)")
        #expect(FileManager.default.contents(atPath: folder.file("r2.html")) == Data(page.utf8), "monsoon report makes the same page")
        let printed = await runMonsoon(["report", "r.json"], in: folder.path)
        #expect(printed.status == 0 && printed.output == page, "without -o the page goes to standard output")

        // What Chromium drew: one bar per download, coloured by outcome, and the axes of the run.
        let dom = try await Self.renderedDOM(of: folder.file("r.html"), in: folder)
        #expect(Self.matches("data-rendered-bars=\"(\\d+)\"", in: dom).first?[1] == "5", "every download's bar rendered with a width")
        let bars = Self.matches("<g class=\"download [^\"]*\" data-download=\"(d\\d+)\" data-outcome=\"(\\w+)\"", in: dom)
        #expect(Set(bars.map { $0[1] }) == ["d1", "d2", "d3", "d4", "d5"])
        #expect(bars.filter { $0[2] == "failed" }.count == 1 && bars.filter { $0[2] == "completed" }.count == 4)
        let wall = try #require(report["wallSeconds"] as? Double)
        let axes = Self.matches("<g class=\"axis x\" data-unit=\"s\" data-max=\"([0-9.]+)\"", in: dom)
        #expect(axes.count == 3, "the timeline, throughput and first-byte charts each have a time axis")
        #expect(Double(axes.first?[1] ?? "") ?? 0 >= (wall * 100).rounded(.down) / 100, "the timeline's axis spans the run")
        let ticks = Self.matches("<text class=\"tick\"[^>]*>([0-9.]+) s</text>", in: dom).compactMap { Double($0[1]) }
        #expect(ticks.contains(0) && ticks.count >= 6, "tick labels in seconds: \(ticks)")
        #expect(dom.contains("<g class=\"axis y\" data-unit=\"B/s\""))
        let host = "127.0.0.1:\(server.port)"
        #expect(Self.matches("<polyline class=\"series[^\"]*\" data-host=\"([^\"]+)\"", in: dom).map { $0[1] }.sorted() == [host, "overall"], "one line per host and one overall")
        #expect(Self.matches("data-rendered-series=\"(\\d+)\"", in: dom).first?[1] == "2", "both throughput lines rendered")
        #expect(Self.matches("data-rendered-ttfb=\"(\\d+)\"", in: dom).first?[1] == "1", "the host's time to first byte rendered")
        #expect(Self.matches("<table class=\"hosts\">.*?<tbody>\\s*<tr data-host=\"([^\"]+)\"", in: dom.replacingOccurrences(of: "\n", with: " ")).first?[1] == host)
    }

    @Test func reportRefusesAFileThatIsNotARunReport() async throws {
        let folder = Folder()
        defer { folder.remove() }
        try Data("{\"command\": \"get\", \"hosts\": {}}".utf8).write(to: URL(fileURLWithPath: folder.file("other.json")))
        try Data("<html>not json</html>".utf8).write(to: URL(fileURLWithPath: folder.file("page.html")))
        let other = await runMonsoon(["report", "other.json", "-o", "out.html"], in: folder.path)
        #expect(other.status == 1)
        #expect(other.errors == "monsoon: \(folder.file("other.json")) is not a Monsoon run report (no started); give the FILE that --report wrote\n", "\(other.errors)")
        let html = await runMonsoon(["report", "page.html"], in: folder.path)
        #expect(html.status == 1 && html.errors.contains("is not a Monsoon run report (not JSON)"), "\(html.errors)")
        let none = await runMonsoon(["report", "none.json"], in: folder.path)
        #expect(none.status == 1 && none.errors.contains("cannot read the report \(folder.file("none.json")): there is no such file"), "\(none.errors)")
        #expect(!FileManager.default.fileExists(atPath: folder.file("out.html")), "no page is written for what is not a report")
    }

    @Test(arguments: [("\"wallSeconds\": 2", "\"wallSeconds\": 1e300", "wallSeconds"),
                      ("\"throughputBytesPerSecond\": 5, \"attempts\": 1, \"completedAttempts\": 1, \"timeToFirstByteSeconds\": {\"p50\": 0.1, \"p90\": 0.1, \"p99\": 0.1},\n  \"failedAttemptsByStatus\": {}, \"resumedBytes\": 0, \"connections\": {\"opened\": 1, \"reused\": 0}},\n \"hosts\"",
                       "\"throughputBytesPerSecond\": 1e300, \"attempts\": 1, \"completedAttempts\": 1, \"timeToFirstByteSeconds\": {\"p50\": 0.1, \"p90\": 0.1, \"p99\": 0.1},\n  \"failedAttemptsByStatus\": {}, \"resumedBytes\": 0, \"connections\": {\"opened\": 1, \"reused\": 0}},\n \"hosts\"",
                       "overall.throughputBytesPerSecond"),
                      ("\"p50\": 0.1, \"p90\"", "\"p50\": -1, \"p90\"", "overall.timeToFirstByteSeconds")])
    func numbersNoRunHasAreRefusedNotTrappedOn(_ change: (String, String, String)) async throws {
        let folder = Folder()
        defer { folder.remove() }
        let text = Self.oldReport.replacingOccurrences(of: change.0, with: change.1)
        #expect(text != Self.oldReport)
        try Data(text.utf8).write(to: URL(fileURLWithPath: folder.file("r.json")))
        let result = await runMonsoon(["report", "r.json", "-o", "r.html"], in: folder.path)
        #expect(result.status == 1)
        #expect(result.errors == "monsoon: \(folder.file("r.json")) is not a Monsoon run report (\(change.2) is out of range); give the FILE that --report wrote\n", "\(result.errors)")
        #expect(!FileManager.default.fileExists(atPath: folder.file("r.html")))
    }

    /// As a Monsoon before the timeline wrote it: hosts only.
    static let oldReport = """
        {"command": "get", "started": "2026-01-01T00:00:00.000Z", "ended": "2026-01-01T00:00:02.000Z", "wallSeconds": 2,
         "overall": {"bytes": 10, "throughputBytesPerSecond": 5, "attempts": 1, "completedAttempts": 1, "timeToFirstByteSeconds": {"p50": 0.1, "p90": 0.1, "p99": 0.1},
          "failedAttemptsByStatus": {}, "resumedBytes": 0, "connections": {"opened": 1, "reused": 0}},
         "hosts": {"h<b>": {"bytes": 10, "throughputBytesPerSecond": 5, "attempts": 1, "completedAttempts": 1, "timeToFirstByteSeconds": {"p50": 0.1, "p90": 0.1, "p99": 0.1},
          "failedAttemptsByStatus": {}, "resumedBytes": 0, "connections": {"opened": 1, "reused": 0}}}}
        """

    @Test func aReportWithoutDownloadsStillHasAPage() throws {
        let page = try RunPage.html(reportData: Data(Self.oldReport.utf8), path: "old.json")
        #expect(page.contains("<table class=\"hosts\">") && page.contains("h&lt;b&gt;") && !page.contains("h<b>"))
        #expect(page.contains("did not record downloads"))
    }
}
