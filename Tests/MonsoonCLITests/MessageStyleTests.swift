import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonCLI

/// One voice: every diagnostic on standard error is `monsoon: <message>`, lowercase but for a
/// name, a path, a URL or quoted input, without a closing period; a hint follows a `;`; a usage
/// error adds the usage and the pointer to help, and exits 2. (README: Messages and exit codes.)
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
            Case(arguments: ["add", missing], status: failure, firstLine: "monsoon: cannot fetch \(missing): the server answered 404 Not Found"),
            Case(arguments: ["inspect", missing], status: failure, firstLine: "monsoon: cannot fetch \(missing): the server answered 404 Not Found"),
            Case(arguments: ["archive", missing, "-o", "A"], status: failure, firstLine: "monsoon: cannot fetch \(missing): the server answered 404 Not Found"),
            Case(arguments: ["archive", "--dry-run", missing, "-o", "A"], status: failure, firstLine: "monsoon: cannot fetch \(missing): the server answered 404 Not Found"),
            Case(arguments: ["get", server.url("/missing.mp3").absoluteString], status: failure,
                 firstLine: "monsoon: d1 failed: \(server.url("/missing.mp3").absoluteString): the server answered 404 Not Found"),
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
        let failure = "monsoon: Gone Show: cannot fetch \(server.url("/gone.xml").absoluteString): the server answered 404 Not Found\n"
        let refreshed = await runMonsoon(["refresh"], in: folder.path)
        #expect(refreshed.status == 1)
        #expect(refreshed.output == "Morning Show: 0 new, 0 updated\n" && refreshed.errors == failure, "\(refreshed.output)\(refreshed.errors)")
        let synced = await runMonsoon(["sync"], in: folder.path)
        #expect(synced.status == 1)
        #expect(synced.output.hasPrefix("Morning Show: 0 new, 0 updated\n"), "\(synced.output)")
        #expect(synced.errors.hasPrefix(failure), "\(synced.errors)")
        Self.checkStyle(synced.errors, of: "sync", names: ["Gone Show"])
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
