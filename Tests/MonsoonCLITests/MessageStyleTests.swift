import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonCLI

/// One voice: every diagnostic on standard error is `monsoon: <message>`, lowercase but for a
/// name, a path, a URL or quoted input, without a closing period; a hint follows a `;`; a usage
/// error adds the usage and the pointer to help, and exits 2. (docs/REFERENCE.md: Messages and exit codes.)
@Suite struct MessageStyleTests {
    /// A failing command line, its exit status, and the first line it must print.
    struct Case: CustomStringConvertible {
        var arguments: [String]
        var status: Int32
        var firstLine: String
        var description: String { arguments.joined(separator: " ") }
    }

    /// The usage block's lines, which follow the message of a usage error.
    static func isUsageLine(_ line: Substring) -> Bool {
        line.hasPrefix("Usage: monsoon") || line.hasPrefix("       ") || (line.hasPrefix("  See 'monsoon") && line.hasSuffix("--help' for more information."))
    }

    /// Checks every line of `errors` against the style; `names` are podcast names a line may start with.
    static func checkStyle(_ errors: String, of run: String, names: [String] = [], sourceLocation: SourceLocation = #_sourceLocation) {
        let lines = errors.split(separator: "\n")
        #expect(!lines.isEmpty, "\(run): says nothing", sourceLocation: sourceLocation)
        for line in lines where !isUsageLine(line) {
            let message = line.hasPrefix("monsoon: ") ? line.dropFirst("monsoon: ".count) : ""
            let opening = message.first.map { "abcdefghijklmnopqrstuvwxyz0123456789'\"/.(-".contains($0) } ?? false
            #expect(opening || names.contains { message.hasPrefix($0 + ": ") }, "\(run): \(line)", sourceLocation: sourceLocation)
            #expect(!line.hasSuffix("."), "\(run): a closing period: \(line)", sourceLocation: sourceLocation)
            #expect(!message.isEmpty && Self.formProblem(String(message)) == nil, "\(run): \(Self.formProblem(String(message)) ?? "empty"): \(line)",
                    sourceLocation: sourceLocation)
            for leak in ["Error:", "The operation could not be completed", "Error Domain", "NSCocoaErrorDomain", "Optional(", "please report it"] {
                #expect(!line.contains(leak), "\(run): internal text: \(line)", sourceLocation: sourceLocation)
            }
        }
    }

    @Test func failingCommandLinesSpeakWithOneVoice() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/feed.xml", Route(body: .bytes(Array(PodcastCommandTests.feed(title: "Morning Show", count: 2).utf8)), contentType: "application/rss+xml"))
        let bare = "127.0.0.1:\(server.port)/feed.xml"
        let missing = server.url("/missing.xml").absoluteString
        let refusing = try TestServer.refusingPort()
        defer { close(refusing.fd) }
        let refused = "http://127.0.0.1:\(refusing.port)/feed.xml"
        let usage = ExitStatus.usage, failure = ExitStatus.failure
        try Data("not a list".utf8).write(to: URL(fileURLWithPath: folder.file("list.opml")))
        try Data("\(bare)\n".utf8).write(to: URL(fileURLWithPath: folder.file("bare.txt")))
        // A home whose database is not one.
        let damaged = folder.file("damaged")
        try FileManager.default.createDirectory(atPath: damaged, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: damaged + "/monsoon.sqlite"))
        let cases = [
            // Usage errors: the parser's, a command's validate(), and those found as a command runs.
            Case(arguments: ["frobnicate"], status: usage, firstLine: "monsoon: unknown command 'frobnicate'"),
            Case(arguments: ["get", "--jbos", "2"], status: usage, firstLine: "monsoon: unknown option '--jbos'; did you mean '--jobs'?"),
            Case(arguments: ["get"], status: usage, firstLine: "monsoon: give at least one URL, or a file of URLs with -i"),
            Case(arguments: ["--quiet", "--verbose", "podcasts"], status: usage, firstLine: "monsoon: --quiet and --verbose cannot be used together; choose one"),
            Case(arguments: ["queue", "move", "1", "0"], status: usage, firstLine: "monsoon: positions count from 1"),
            Case(arguments: ["cluster", "pause"], status: usage, firstLine: "monsoon: give job ids, --feed FEED or --all"),
            Case(arguments: ["cluster", "host", "https://cdn.example.com/a.mp3"], status: usage, firstLine: "monsoon: give a host's name, not a URL; did you mean 'cdn.example.com'?"),
            Case(arguments: ["config", "set", "concurrency", "many"], status: usage, firstLine: ""),
            Case(arguments: ["add", "not a url"], status: usage,
                 firstLine: "monsoon: 'not a url' is not an http or https URL; give the feed's full address, like https://example.com/feed.xml"),
            // An address without its scheme, to each command that takes a URL.
            Case(arguments: ["add", bare], status: usage, firstLine: "monsoon: '\(bare)' is not an http or https URL; did you mean http://\(bare)?"),
            Case(arguments: ["get", bare], status: usage, firstLine: "monsoon: '\(bare)' is not an http or https URL; did you mean http://\(bare)?"),
            Case(arguments: ["get", "-i", "bare.txt"], status: usage, firstLine: "monsoon: '\(bare)' is not an http or https URL; did you mean http://\(bare)?"),
            Case(arguments: ["archive", bare], status: usage, firstLine: "monsoon: '\(bare)' is not an http or https URL; did you mean http://\(bare)?"),
            Case(arguments: ["inspect", bare], status: usage, firstLine: "monsoon: '\(bare)' is not an http or https URL nor a file; did you mean http://\(bare)?"),
            Case(arguments: ["import", bare], status: usage,
                 firstLine: "monsoon: '\(bare)' is a URL, not a file; save the list first ('monsoon get URL'), then give the file"),
            Case(arguments: ["archive", "--opml", "http://\(bare)"], status: usage,
                 firstLine: "monsoon: 'http://\(bare)' is a URL, not a file; save the list first ('monsoon get URL'), then give the file"),
            // Runtime errors: a 404 worded once, missing things, a refusal.
            Case(arguments: ["add", missing], status: failure, firstLine: "monsoon: cannot fetch \(missing): the server answered 404 Not Found; check the address"),
            Case(arguments: ["inspect", missing], status: failure, firstLine: "monsoon: cannot fetch \(missing): the server answered 404 Not Found; check the address"),
            Case(arguments: ["archive", missing, "-o", "A"], status: failure, firstLine: "monsoon: cannot fetch \(missing): the server answered 404 Not Found; check the address"),
            Case(arguments: ["archive", "--dry-run", missing, "-o", "A"], status: failure, firstLine: "monsoon: cannot fetch \(missing): the server answered 404 Not Found; check the address"),
            Case(arguments: ["get", server.url("/missing.mp3").absoluteString], status: failure,
                 firstLine: "monsoon: d1 failed: \(server.url("/missing.mp3").absoluteString): the server answered 404 Not Found; check the address"),
            Case(arguments: ["add", refused], status: failure, firstLine: "monsoon: cannot fetch \(refused): cannot connect to 127.0.0.1:\(refusing.port): "
                 + "connection refused; check the address and that the server is running"),
            Case(arguments: ["add", "http://feeds.example.invalid/feed.xml"], status: failure, firstLine: "monsoon: cannot fetch http://feeds.example.invalid/feed.xml: "
                 + "cannot connect to feeds.example.invalid:80: unknown host; check the address and the network"),
            Case(arguments: ["inspect", "nothing-here.xml"], status: failure, firstLine: "monsoon: no such file: \(folder.file("nothing-here.xml"))"),
            Case(arguments: ["verify", "no-archive"], status: failure, firstLine: "monsoon: no such folder: \(folder.file("no-archive"))"),
            Case(arguments: ["verify", "list.opml"], status: failure, firstLine: "monsoon: not a folder: \(folder.file("list.opml")); give the archive's folder or a podcast's"),
            Case(arguments: ["import", "list.opml"], status: failure, firstLine: ""),
            Case(arguments: ["get", "-i", "urls.txt"], status: failure, firstLine: ""),
            Case(arguments: ["get", "-o", "list.opml/sub", missing], status: failure,
                 firstLine: "monsoon: cannot create the folder \(folder.file("list.opml/sub")): not a directory"),
            Case(arguments: ["get", "--report", "nowhere/report.json", "-o", "out", missing], status: failure, firstLine: ""),
            Case(arguments: ["episodes", "Evening"], status: failure, firstLine: ""),
            Case(arguments: ["pause", "d99"], status: failure, firstLine: "monsoon: no download has id d99; list them with 'monsoon downloads'"),
            Case(arguments: ["play", "99"], status: failure, firstLine: ""),
            Case(arguments: ["--home", damaged, "podcasts"], status: failure, firstLine: ""),
        ]
        for test in cases {
            let result = await runMonsoon(test.arguments, in: folder.path)
            #expect(result.status == test.status, "\(test): \(result.errors)")
            let first = String(result.errors.prefix { $0 != "\n" })
            if !test.firstLine.isEmpty { #expect(first == test.firstLine, "\(test)") }
            if test.status == usage {
                let lines = result.errors.split(separator: "\n")
                #expect(lines.count >= 3 && lines.dropFirst().allSatisfy(Self.isUsageLine), "\(test): the usage follows: \(result.errors)")
            }
            Self.checkStyle(result.errors, of: test.description)
        }
    }

    /// A failure goes to standard error, each naming its download, with --quiet or without, for
    /// `archive` as for `get`; standard output keeps the run's work. The summary says nothing of
    /// bytes when none moved, and a dry run with nothing to do says so, without an empty heading.
    @Test func failuresGoToStandardErrorAndSummariesSayOnlyWhatHappened() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        _ = ArchiveCommandTests.serve(server, count: 3)
        server.setRoute("/ep2.mp3", Route(body: .bytes(Array("gone".utf8)), status: 404))
        let feed = server.url("/feed.xml").absoluteString
        let failure = "failed: \(server.url("/ep2.mp3").absoluteString): the server answered 404 Not Found; check the address"
        // The second run has only the failing episode left to try.
        for quiet in [false, true] {
            let archive = await runMonsoon(["archive", feed, "-o", "A"] + (quiet ? ["--quiet"] : []), in: folder.path)
            #expect(archive.status == 1)
            let errors = archive.errors.split(separator: "\n")
            #expect(errors.contains { $0.hasPrefix("monsoon: e") && $0.hasSuffix(failure) }, "quiet \(quiet): \(archive.errors)")
            #expect(!archive.output.contains("failed"), "quiet \(quiet): \(archive.output)")
            #expect(errors.filter { !$0.contains(" failed: ") }.allSatisfy { $0.count <= SummaryLines.width }, "the summary fits: \(archive.errors)")
            #expect(quiet ? archive.output.isEmpty : archive.output.contains("finished e"), "quiet \(quiet): \(archive.output)")
            Self.checkStyle(archive.errors, of: "archive, quiet \(quiet)")
        }
        let get = await runMonsoon(["get", "--quiet", server.url("/ep2.mp3").absoluteString, server.url("/ep1.mp3").absoluteString, "-o", "G"], in: folder.path)
        #expect(get.status == 1 && get.errors.split(separator: "\n").first.map { $0.hasPrefix("monsoon: d") && $0.hasSuffix(failure) } == true, "\(get.errors)")

        // Everything archived already: no bytes moved, so none are counted.
        server.setRoute("/ep2.mp3", Route(body: .pattern(size: 20_002, seed: 2), contentType: "audio/mpeg"))
        #expect(await runMonsoon(["archive", feed, "-o", "A"], in: folder.path).status == 0)
        let again = await runMonsoon(["archive", feed, "-o", "A"], in: folder.path)
        #expect(again.status == 0 && again.errors == "monsoon: archived: 0 downloaded, 3 skipped (already archived), 0 failed\n", "\(again.errors)")
        let plan = await runMonsoon(["archive", feed, "-o", "A", "--dry-run"], in: folder.path)
        #expect(plan.status == 0 && !plan.output.contains("per host:") && plan.output.contains("\ntotal: nothing to download;"), "\(plan.output)")
        #expect(!plan.output.split(separator: "\n", omittingEmptySubsequences: false).dropLast().contains(""), "no empty line: \(plan.output)")
        for run in [again, plan] { #expect(!(run.output + run.errors).contains("0 B"), "\(run.output)\(run.errors)") }
    }

    /// However many counts a summary has, none of its lines is wider than 100 columns, and a part
    /// never breaks; what fits stays on one line, for scripts.
    @Test func summaryLinesFitInOneHundredColumns() {
        let parts = ["archived: 123456 downloaded", "123456 skipped (already archived)", "123456 failed", "123456 left queued for lack of disk space",
                     "123456 paused", "123456 removed", "123456 interrupted", "123456 not started", "123456 feeds not read"]
        let lines = SummaryLines.packed(parts)
        #expect(lines.count > 1 && lines.allSatisfy { $0.count <= 100 && $0.hasPrefix("monsoon: ") }, "\(lines)")
        #expect(lines.map { $0.dropFirst("monsoon: ".count) }.joined(separator: ", ") == parts.joined(separator: ", "))
        #expect(SummaryLines.packed(["1 of 1 downloaded", "2 failed"], prefix: "") == ["1 of 1 downloaded, 2 failed"])
        var tally = GetReporter.Tally()
        #expect(GetReporter.amounts(tally, elapsed: 0.01).isEmpty, "no 0 B transferred in 0.0 s")
        tally.resumed = 2_048
        #expect(GetReporter.amounts(tally, elapsed: 0.01) == "2.0 KiB resumed from parts")
    }

    /// The address a text without a scheme probably meant: http for a local server or a port,
    /// https for a name; nothing for a file name, a path, a word or another scheme.
    @Test func anAddressWithoutItsSchemeGetsOne() {
        let cases: [(String, String?)] = [
            ("127.0.0.1:8765/feed.xml", "http://127.0.0.1:8765/feed.xml"), ("localhost/feed", "http://localhost/feed"),
            ("[::1]:80/a.mp3", "http://[::1]:80/a.mp3"), ("example.com/feed.xml", "https://example.com/feed.xml"),
            ("user:pw@example.com/feed", "https://user:pw@example.com/feed"), ("example.com:8080", "http://example.com:8080"),
            ("feed.xml", nil), ("example.com", nil), ("podcasts/feed.xml", nil), ("/tmp/feed.xml", nil), ("./feed.xml", nil),
            ("ftp://example.com/feed.xml", nil), ("not a url", nil), ("1.2.3/x", nil), ("", nil),
        ]
        for (text, expected) in cases { #expect(URLArgument.suggestion(text) == expected, "\(text)") }
        #expect(URLArgument.notURL("user:pw@example.com/feed", advice: "-") == "'***@example.com/feed' is not an http or https URL; did you mean https://***:***@example.com/feed?", "credentials never shown")
    }

    /// `refresh` and `sync` print their lines per podcast on standard output, the same lines, and
    /// their failures on standard error, the same way.
    @Test func refreshAndSyncSayTheSameOnTheSameStreams() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        server.setRoute("/feed.xml", Route(body: .bytes(Array(PodcastCommandTests.feed(title: "Morning Show", count: 2).utf8)), contentType: "application/rss+xml"))
        server.setRoute("/gone.xml", Route(body: .bytes(Array(PodcastCommandTests.feed(title: "Gone Show", count: 1).utf8)), contentType: "application/rss+xml"))
        for feed in ["/feed.xml", "/gone.xml"] {
            #expect(await runMonsoon(["add", server.url(feed).absoluteString], in: folder.path).status == 0)
        }
        server.setRoute("/gone.xml", Route(body: .bytes(Array("no".utf8)), status: 404))
        let failure = "monsoon: Gone Show: cannot fetch \(server.url("/gone.xml").absoluteString): the server answered 404 Not Found; check the address\n"
        let refreshed = await runMonsoon(["refresh"], in: folder.path)
        #expect(refreshed.status == 1)
        #expect(refreshed.output == "Morning Show: 0 new, 0 updated\n" && refreshed.errors == failure, "\(refreshed.output)\(refreshed.errors)")
        let synced = await runMonsoon(["sync"], in: folder.path)
        #expect(synced.status == 1)
        #expect(synced.output.hasPrefix("Morning Show: 0 new, 0 updated\n"), "\(synced.output)")
        #expect(synced.errors.hasPrefix(failure), "\(synced.errors)")
        Self.checkStyle(synced.errors, of: "sync", names: ["Gone Show"])
    }

    /// What is wrong with the form of a message, or nil: curly quotes, parentheses inside
    /// parentheses, a hint in parentheses instead of after "; ".
    static func formProblem(_ text: String) -> String? {
        if text.contains(where: "\u{2018}\u{2019}\u{201C}\u{201D}".contains) { return "curly quotes" }
        var depth = 0
        // Quoted input ('(?:') is the user's text, not the message's parentheses.
        for character in text.replacingOccurrences(of: "'[^' ]*'", with: "''", options: .regularExpression) {
            if character == "(" { depth += 1 } else if character == ")" { depth = max(0, depth - 1) }
            if depth > 1 { return "parentheses inside parentheses" }
        }
        if text.range(of: #"\((check|try|run|use|give|see|set|retry|install|remove|delete|restore|the next 'monsoon) "#, options: .regularExpression) != nil {
            return "a hint in parentheses: it goes after '; '"
        }
        return nil
    }

    /// The text of the string literals on a line of Swift, each interpolation shown as `…` (its
    /// parentheses are code).
    static func literals(_ line: String) -> [String] {
        var found: [String] = [], text = "", inside = false, code = 0
        var characters = line.makeIterator()
        while let character = characters.next() {
            if code > 0 {
                // Inside an interpolation: its own literals and parentheses are code.
                if character == "\"" { while let next = characters.next(), next != "\"" { if next == "\\" { _ = characters.next() } } }
                if character == "(" { code += 1 } else if character == ")" { code -= 1 }
            } else if !inside {
                if character == "\"" { inside = true; text = "" }
            } else if character == "\\" {
                let next = characters.next()
                if next == "(" { code = 1; text += "…" } else if let next { text += "\\" + String(next) }
            } else if character == "\"" {
                inside = false; found.append(text)
            } else {
                text += String(character)
            }
        }
        return found
    }

    /// Every literal a message is made of, whichever the message's type: straight quotes, no
    /// parentheses inside parentheses, a hint after "; ", never an empty message (a scan of the
    /// sources, for messages no test above reaches).
    @Test func messageLiteralsHaveOneForm() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources").path
        let calls = try NSRegularExpression(pattern: #"(ValidationError\(|CLIError[.(]|context\.(error|warnOnce)\(|errors\.line\(|StandardError\.write\(|\w+Error\(\.\w+, |\w+Error\.\w+\(|message: |reason: |message \+?= |verdict \+= |\.unknown\(|\.newVersion\()"#)
        var offenders: [String] = [], scanned = 0
        let enumerator = FileManager.default.enumerator(atPath: sources)
        while let file = enumerator?.nextObject() as? String {
            guard file.hasSuffix(".swift"), !file.hasPrefix("MonsoonTestServer"), !file.hasPrefix("monsoon-") else { continue }
            let text = try String(contentsOfFile: sources + "/" + file, encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let line = String(line)
                guard !line.trimmingCharacters(in: .whitespaces).hasPrefix("//"), !line.contains("\"\"\""),
                      calls.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)) != nil else { continue }
                scanned += 1
                let problems = Self.literals(line).compactMap(Self.formProblem)
                    + (line.range(of: #"(CLIError\(message: |ValidationError\()"""#, options: .regularExpression) != nil ? ["an empty message"] : [])
                for problem in problems { offenders.append("\(file):\(number + 1): \(problem): \(line.trimmingCharacters(in: .whitespaces))") }
            }
        }
        #expect(scanned > 300, "the scan finds the messages: \(scanned) lines")
        #expect(offenders.isEmpty, "messages speak with one voice:\n\(offenders.joined(separator: "\n"))")
        // The scan itself: what it must catch, and what it must let through.
        #expect(Self.literals(#"throw CLIError(message: "a (b \(c ? "(" : ")")) d")"#) == ["a (b …) d"])
        #expect(Self.formProblem("got a web page (\u{201C}Login\u{201D})") == "curly quotes")
        #expect(Self.formProblem("cannot connect (unknown host (no such name))") == "parentheses inside parentheses")
        #expect(Self.formProblem("it uses '(?', and only '(?:' is taken") == nil)
        #expect(Self.formProblem("unknown host (check the address)") != nil && Self.formProblem("unknown host; check the address") == nil)
    }

    /// What the messages are made of: no literal given to an error starts with a capital or ends
    /// with a period (a cheap scan of the sources, for messages no test above reaches).
    @Test func errorLiteralsInTheSourcesFollowTheStyle() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources").path
        let calls = #"(ValidationError\(|CLIError\(message: |CLIError\.usage\(|context\.error\(|context\.warnOnce\(|FeedError\(\.\w+, |FeedError\.make\(\.\w+, |LibraryError\.\w+\(|DownloadError\(\.\w+, )""#
        let capital = try NSRegularExpression(pattern: calls + #"[A-Z]"#)
        let period = try NSRegularExpression(pattern: calls + #"(?:[^"\\]|\\.)*\.""#)
        var offenders: [String] = []
        let enumerator = FileManager.default.enumerator(atPath: sources)
        while let file = enumerator?.nextObject() as? String {
            guard file.hasSuffix(".swift"), !file.hasPrefix("MonsoonTestServer"), !file.hasPrefix("monsoon-") else { continue }
            let text = try String(contentsOfFile: sources + "/" + file, encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let line = String(line)
                let range = NSRange(line.startIndex..., in: line)
                if capital.firstMatch(in: line, range: range) != nil || period.firstMatch(in: line, range: range) != nil {
                    offenders.append("\(file):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        #expect(offenders.isEmpty, "messages must start lowercase and end without a period:\n\(offenders.joined(separator: "\n"))")
    }
}

extension MessageStyleTests {
    /// An archive of two podcasts, one episode of each gone: each failure starts with its podcast,
    /// as a refresh's line does, with --quiet or without; `finished ID PATH BYTES` keeps its
    /// fields for scripts (`--json` names the podcast).
    @Test func aRunOfSeveralPodcastsNamesThePodcastOfEachFailure() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        let shows = ["On Curl", "Net Talk"]
        var feeds: [String] = [], failures: [String] = [], bodies: [Body] = []
        for (index, show) in shows.enumerated() {
            bodies.append(.pattern(size: 1_000 + index, seed: UInt64(index)))
            server.setRoute("/\(index)/ok.mp3", Route(body: bodies[index], contentType: "audio/mpeg"))
            server.setRoute("/\(index)/gone.mp3", Route(body: .bytes(Array("gone".utf8)), status: 404))
            server.setRoute("/feed\(index).xml", LiveViewTests.feed([("Episode 1", server.url("/\(index)/ok.mp3").absoluteString, 1_000 + index),
                                                                     ("Episode 2", server.url("/\(index)/gone.mp3").absoluteString, nil)], title: show))
            feeds.append(server.url("/feed\(index).xml").absoluteString)
            failures.append(" failed: \(server.url("/\(index)/gone.mp3").absoluteString): the server answered 404 Not Found; check the address")
        }
        // The second run has only the two missing episodes left to try.
        for quiet in [false, true] {
            let run = await runMonsoon(["archive"] + feeds + ["-o", "A"] + (quiet ? ["--quiet"] : []), in: folder.path)
            #expect(run.status == 1, "\(run.errors)")
            let errors = run.errors.split(separator: "\n")
            for (show, failure) in zip(shows, failures) {
                #expect(errors.filter { $0.hasPrefix("monsoon: \(show): e") && $0.hasSuffix(failure) }.count == 1, "quiet \(quiet): \(run.errors)")
            }
            Self.checkStyle(run.errors, of: "archive of two podcasts, quiet \(quiet)", names: shows)
            let finished = run.output.split(separator: "\n").filter { $0.hasPrefix("finished ") }
            #expect(finished.count == (quiet ? 0 : 2), "quiet \(quiet): \(run.output)")
            for line in finished {
                let fields = line.split(separator: " ")
                let path = String(line.dropFirst("finished \(fields[1]) ".count).dropLast(" \(fields.last!)".count))
                let body = try #require(bodies.first { String($0.count) == fields.last! }, "\(line)")
                #expect(try SHA256.hex(fileAt: path.hasPrefix("/") ? path : folder.file(path)) == body.sha256Hex(), "\(line)")
            }
        }
        for index in shows.indices { #expect(server.requests(for: "/\(index)/gone.mp3").count == 2) }
    }
}
