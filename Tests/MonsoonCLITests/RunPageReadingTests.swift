import Foundation
import Testing
@testable import MonsoonEngine
import MonsoonPodcasts
import MonsoonTestServer
@testable import MonsoonCLI

/// A run's page past a few dozen downloads: grouped by podcast, every row labelled, failures and skips
/// listed in words. Checked in headless Chromium, on a run built from events and on a real archive run.
@Suite struct RunPageReadingTests {
    @Test(arguments: [
        ("Episode 25", "Episode 25"),
        ("≥25 ways to archive a podcast feed without losing a single episode", "≥25 ways to archiv… a single episode"),
        ("東京の夜と朝のポッドキャスト第一回、特別編の長いタイトル", "東京の夜と朝のポッ…編の長いタイトル"),
        ("<b>Tags & all</b> in a title that is far too long to fit", "<b>Tags & all</b> …r too long to fit"),
    ])
    func labelsAreCutInTheMiddleToTheirColumns(_ example: (title: String, label: String)) {
        let label = TerminalText.middleCut(example.title, width: RunPage.labelColumns)
        #expect(label == example.label)
        #expect(TerminalText.displayWidth(label) <= RunPage.labelColumns)
    }

    /// Every kind of failure the engine has, read from its source so a new one cannot be forgotten.
    @Test func everyKindOfFailureHasWords() throws {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/MonsoonEngine/Model/DownloadError.swift")
        let text = try String(contentsOf: source, encoding: .utf8)
        let kinds = RunPageTests.matches("public static var (\\w+): Self \\{ Self\\(rawValue: \"(\\w+)\"\\) \\}", in: text).map { $0[2] }
        #expect(kinds.count >= 18 && kinds.contains("webPageNotMedia"), "\(kinds)")
        let unknown = DownloadError.Code(rawValue: "noSuchKind").words
        for kind in kinds {
            let words = DownloadError.Code(rawValue: kind).words
            // Words, not the program's name for it (`webPageNotMedia`); a plain word such as `cancelled` may be both.
            #expect(words != unknown && (kind == kind.lowercased() || !words.contains(kind)), "\(kind) has words of its own: \(words)")
        }
        #expect(DownloadError.Code.webPageNotMedia.words == "a web page, not media")
    }

    /// 300 downloads of six podcasts, six at a time, with 404s, 500s, web pages and a network failure,
    /// as the CLI records them; and what the archive skipped.
    static func threeHundredDownloads() -> String {
        let start = Date(timeIntervalSince1970: 1_767_225_600)
        let report = RunReport(started: start)
        let podcasts = ["The Daily Long-Form Interview Show With Guests From Everywhere", "Tech <Talk> & More", "東京ポッドキャスト",
                        "Short", "History of Everything", "Science Weekly"]
        for index in 0..<300 {
            let podcast = podcasts[index % podcasts.count]
            let number = index / podcasts.count + 1
            let title = number % 7 == 0 ? "≥\(number) ways to archive a podcast feed without losing a single episode, part \(number)" : "Episode \(number): a talk"
            let id = DownloadID("e\(index)")
            let url = URL(string: "https://cdn\(index % 3).example/\(index)/audio.mp3")!
            var download = Download(request: DownloadRequest(id: id, url: url, destination: .file("/a/\(index).mp3"),
                                                             userInfo: [EpisodeQueue.titleKey: title, EpisodeQueue.podcastKey: podcast]),
                                    status: .queued, bytes: 0, total: nil, lastError: nil, filePath: nil, attempts: 0, retryAt: nil)
            let began = start.addingTimeInterval(Double(index / 6) * 1.2)
            report.observe(.added(download), at: start)
            download.status = .downloading
            report.observe(.statusChanged(download), at: began)
            let failure: DownloadError? = switch index % 50 {
            case 7: DownloadError(.httpStatus, "the server answered 404 Not Found: the file is not there; check the URL", httpStatus: 404)
            case 19: DownloadError(.httpStatus, "the server answered 500 Internal Server Error, 5 retries later; try again later", httpStatus: 500)
            case 33: DownloadError(.webPageNotMedia, "the server returned a web page, not media (Content-Type text/html, status 200)", httpStatus: 200)
            case 45 where index == 45: DownloadError(.network, "could not connect to cdn0.example: connection refused; check the address")
            default: nil
            }
            let seconds = 0.4 + Double(index % 5) * 0.2
            report.observe(.attempt(AttemptReport(id: id, host: url.host!, status: failure?.httpStatus ?? (failure == nil ? 200 : 0), bytes: failure == nil ? 2_000_000 : 0,
                                                  resumedFrom: 0, timeToFirstByte: failure?.code == .network ? nil : 0.05, duration: seconds, newConnections: 1,
                                                  error: failure, started: began)), at: began.addingTimeInterval(seconds))
            download.status = failure == nil ? .completed : .failed
            download.lastError = failure
            download.filePath = failure == nil ? "/a/\(podcast)/\(title).mp3" : nil
            report.observe(.statusChanged(download), at: began.addingTimeInterval(seconds))
        }
        report.skipped(["alreadyArchived": 412, "pattern": 18, "limit": 30, "noMediaFile": 2])
        return report.text(command: "archive", ended: start.addingTimeInterval(62))
    }

    @Test func aRunOfThreeHundredIsReadableInChromium() async throws {
        let folder = Folder()
        defer { folder.remove() }
        let text = Self.threeHundredDownloads()
        let page = try RunPage.html(reportData: Data(text.utf8), path: "run.json")
        try Data(page.utf8).write(to: URL(fileURLWithPath: folder.file("run.html")))
        #expect(page.utf8.count < 600_000, "a small page: \(page.utf8.count) bytes")
        #expect(RunPageTests.matches("(?i)(src|href)\\s*=|url\\(|@import|<link|<img|<iframe", in: page).isEmpty, "the page loads nothing")

        // Grouped by podcast in the order they came, each heading once, names escaped.
        let headings = RunPageTests.matches("<g class=\"podcast\" data-downloads=\"(\\d+)\"><text class=\"heading\"[^>]*>([^<]*)<title>", in: page)
        #expect(headings.map { $0[2] } == ["The Daily Long-Form Interview Show With Guests From Everywhere", "Tech &lt;Talk&gt; &amp; More", "東京ポッドキャスト",
                                           "Short", "History of Everything", "Science Weekly"])
        #expect(headings.allSatisfy { $0[1] == "50" })
        // What failed and why, in words; and what was skipped.
        let failures = RunPageTests.matches("<tr data-download=\"(e\\d+)\"><td>[^<]*</td><td>[^<]*</td><td>([^<]*)</td><td>([^<]*)</td></tr>", in: page)
        #expect(failures.count == 19, "6 each of 404, 500 and web pages, and one network failure: \(failures.count)")
        #expect(Set(failures.map { $0[2] }) == ["an error status from the server", "a web page, not media", "a network failure"])
        #expect(failures.contains { $0[1] == "e33" && $0[3].hasPrefix("the server returned a web page, not media") })
        #expect(!page.contains("webPageNotMedia:") && page.contains("a web page, not media: 6"), "the host table says the kind in words")
        #expect(page.contains("Not downloaded: <span class=\"skip\" data-reason=\"alreadyArchived\">412 already archived</span>, "
                              + "<span class=\"skip\" data-reason=\"limit\">30 over --limit, left for a later run</span>, "
                              + "<span class=\"skip\" data-reason=\"pattern\">18 left out by --match or --exclude</span>, "
                              + "<span class=\"skip\" data-reason=\"noMediaFile\">2 without a media file</span>."))

        // What Chromium drew: every bar, and every label with text, wholly inside the page.
        let artifacts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/test-artifacts").path
        try FileManager.default.createDirectory(atPath: artifacts, withIntermediateDirectories: true)
        let screenshot = artifacts + "/run-page-300.png"
        try Data(page.utf8).write(to: URL(fileURLWithPath: artifacts + "/run-page-300.html"))
        let dom = try await RunPageTests.renderedDOM(of: folder.file("run.html"), in: folder, screenshot: (screenshot, "1100,6400"))
        print("The page of a run of 300 downloads, as Chromium drew it at 1100x6400: \(screenshot) (the page beside it)")
        #expect(RunPageTests.matches("data-rendered-bars=\"(\\d+)\"", in: dom).first?[1] == "300")
        #expect(RunPageTests.matches("data-rendered-labels=\"(\\d+)\"", in: dom).first?[1] == "300", "every row has a label that shows")
        #expect(FileManager.default.fileExists(atPath: screenshot))
    }

    /// A real archive of two podcasts, a dozen downloads: one already archived, one left out by --exclude,
    /// a 404, a 500 and a web page.
    @Test func anArchiveRunsPageListsFailuresAndSkips() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        for (show, title) in [("a", "Morning Show"), ("b", "Evening &amp; Night")] {
            var items: [EpisodeCommandTests.Item] = []
            for number in 1...7 {
                let path = "/\(show)\(number).mp3"
                items.append(.init(title: "\(title) episode \(number)\(number == 7 ? " (trailer)" : "")", path: path, day: number, length: 10_000))
                server.setRoute(path, Route(body: .pattern(size: 10_000, seed: UInt64(number)), contentType: "audio/mpeg"))
            }
            server.setRoute("/\(show).xml", EpisodeCommandTests.feed(server, title: title, items: items))
        }
        server.setRoute("/a2.mp3", Route.html(status: 404, "<html>gone</html>"))
        server.setRoute("/a3.mp3", Route.html(status: 500, "<html>oops</html>"))
        server.setRoute("/b4.mp3", Route.html(status: 200, "<html>a page</html>"))
        let feeds = ["/a.xml", "/b.xml"].map { server.url($0).absoluteString }
        let first = await runMonsoon(["archive", feeds[0], "-o", "A", "--limit", "1"], in: folder.path)
        #expect(first.status == 0, "\(first.errors)")
        let run = await runMonsoon(["archive"] + feeds + ["-o", "A", "--exclude", "trailer", "--retries", "0", "--report", "r.json", "--report-html", "r.html"],
                                   in: folder.path)
        #expect(run.status == 1, "three downloads failed: \(run.errors)")

        let data = try #require(FileManager.default.contents(atPath: folder.file("r.json")))
        let report = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(report["skipped"] as? [String: Int] == ["alreadyArchived": 1, "pattern": 2])
        let downloads = try #require(report["downloads"] as? [[String: Any]])
        #expect(downloads.count == 11)
        let failed = downloads.filter { $0["outcome"] as? String == "failed" }
        #expect(Set(failed.compactMap { $0["title"] as? String }) == ["Morning Show episode 2", "Morning Show episode 3", "Evening & Night episode 4"])
        #expect(Set(failed.compactMap { ($0["failure"] as? [String: Any])?["kind"] as? String }) == ["httpStatus", "webPageNotMedia"])
        #expect(Set(downloads.compactMap { $0["podcast"] as? String }) == ["Morning Show", "Evening & Night"])

        let page = try String(contentsOfFile: folder.file("r.html"), encoding: .utf8)
        #expect(page.contains("Not downloaded: <span class=\"skip\" data-reason=\"pattern\">2 left out by --match or --exclude</span>, "
                              + "<span class=\"skip\" data-reason=\"alreadyArchived\">1 already archived</span>."))
        let rows = RunPageTests.matches("<tr data-download=\"[^\"]+\"><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td></tr>", in: page)
        // Podcasts in the order their first download started.
        #expect(Set(rows.map { [$0[1], $0[2], $0[3]] }) == [["Morning Show", "Morning Show episode 2", "an error status from the server"],
                                                           ["Morning Show", "Morning Show episode 3", "an error status from the server"],
                                                           ["Evening &amp; Night", "Evening &amp; Night episode 4", "a web page, not media"]], "\(rows)")
        #expect(rows.allSatisfy { !$0[4].isEmpty && $0[4] != "–" }, "each failure says why")
        let dom = try await RunPageTests.renderedDOM(of: folder.file("r.html"), in: folder)
        #expect(RunPageTests.matches("data-rendered-labels=\"(\\d+)\"", in: dom).first?[1] == "11", "every row has a label that shows")
        #expect(RunPageTests.matches("<g class=\"podcast\" data-downloads=\"(\\d+)\"", in: dom).map { $0[1] }.sorted() == ["5", "6"])
    }
}
