import Foundation
import MonsoonPodcasts
import MonsoonTestServer
import Testing
@testable import MonsoonCLI

/// `make install`: the Makefile's own recipe run on the debug build into a temporary DESTDIR, then
/// the page read by `man` and the completions found by bash, zsh and fish as a user's would be.
@Suite struct InstallTests {
    /// The package's folder, where the Makefile is.
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// A library with two podcasts, one with a space in its title, in the folder's home.
    static func subscribe(in folder: Folder, server: TestServer) async {
        for (path, title) in [("/morning.xml", "Morning Show"), ("/evening.xml", "Evening News"), ("/evil.xml", "Evil\u{202E}Show")] {
            let feed = PodcastCommandTests.feed(title: title, count: 2)
            server.setRoute(path, Route(body: .bytes(Array(feed.utf8)), contentType: "application/rss+xml"))
            let added = await runMonsoon(["add", server.url(path).absoluteString], in: folder.path)
            #expect(added.status == 0, "\(added.errors)")
        }
    }

    @Test func installPutsThePageAndTheCompletionsWhereManAndTheShellsFindThem() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        await Self.subscribe(in: folder, server: server)
        let destination = folder.file("destdir")
        let prefix = destination + "/usr/local"
        // Not the flags of a `make test` that runs this test (its jobserver is not ours).
        let make = "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C '\(Self.packageRoot)' install-files BIN='\(monsoonBinary)' DESTDIR='\(destination)' PREFIX=/usr/local 2>&1"
        let installed = try await ArchiveCommandTests.shell("/bin/bash", [], input: make)
        #expect(installed.status == 0, "\(installed.output)")
        #expect(installed.output.contains("stripped"), "\(installed.output)")
        let binary = prefix + "/bin/monsoon"
        let page = prefix + "/share/man/man1/monsoon.1"
        let files = [binary, page, prefix + "/share/bash-completion/completions/monsoon", prefix + "/share/zsh/site-functions/_monsoon",
                     prefix + "/share/fish/vendor_completions.d/monsoon.fish"]
        for file in files { #expect(FileManager.default.fileExists(atPath: file), "\(file)") }
        // Stripped, and still runs.
        let symbols = try await ArchiveCommandTests.shell("/bin/bash", [], input: "nm '\(binary)' 2>&1; '\(binary)' --version")
        #expect(symbols.output.contains("no symbols") && symbols.output.hasSuffix(MonsoonCLI.version + "\n"), "\(symbols.output)")

        // man renders it, with every section and command; groff has nothing to say about it, nor
        // man as lintian runs it (the reference has the word "warning" in it, so its output cannot tell).
        let rendered = try await ArchiveCommandTests.shell("/bin/bash", [], input: "MANWIDTH=80 man -P cat -l '\(page)' 2>&1")
        #expect(rendered.status == 0)
        for heading in ["NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "EXIT STATUS", "ENVIRONMENT", "FILES", "EXAMPLES", "DETAILS"] {
            #expect(rendered.output.contains("\n\(heading)\n"), "\(heading)")
        }
        for command in Monsoon.configuration.subcommands.map({ $0.configuration.commandName }) + ["downloads clear", "config set", "help"] {
            #expect(rendered.output.contains("\n   \(command)\n"), "\(command)")
        }
        #expect(rendered.output.contains("--home dir") && rendered.output.contains("MONSOON_HOME") && rendered.output.contains("130"))
        let checked = try await ArchiveCommandTests.shell("/bin/bash", [], input: "groff -mdoc -ww -z '\(page)' 2>&1")
        #expect(checked.status == 0 && checked.output.isEmpty, "\(checked.output)")
        let linted = try await ArchiveCommandTests.shell("/bin/bash", [], input: "LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z '\(page)' 2>&1 >/dev/null")
        #expect(linted.status == 0 && linted.output.isEmpty, "\(linted.output)")

        // Its DETAILS are docs/REFERENCE.md: the events' JSON fields, the exit statuses, every
        // setting; and, installed, it never sends its reader to a README.
        #expect(!rendered.output.contains("README"))
        let source = try String(contentsOfFile: page, encoding: .utf8)
        let details = try #require(source.range(of: "\n.Sh DETAILS\n")).upperBound
        let reference = source[details...].replacing("\\-", with: "-")
        for field in ["transferredBytes", "\\fBpodcast\\fR", "\\fBepisode\\fR", "waitingForSpace", "timeToFirstByte"] + SettingKey.allCases.map({ "\\fB\($0.rawValue)\\fR" }) {
            #expect(reference.contains(field), "\(field)")
        }
        for status in [ExitStatus.success, ExitStatus.failure, ExitStatus.usage, ExitStatus.diskFull, ExitStatus.interrupted] {
            #expect(reference.contains(".It \"\(status)\"\n"), "exit status \(status)")
        }

        // bash-completion loads the script from $XDG_DATA_DIRS at the first Tab; it asks the
        // installed monsoon, which answers from the home.
        let bash = """
            export PATH='\(prefix)/bin':"$PATH" XDG_DATA_DIRS='\(prefix)/share' MONSOON_HOME='\(folder.file(".monsoon"))'
            source /usr/share/bash-completion/bash_completion
            __load_completion monsoon
            comp() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _monsoon; printf '%s\\n' "${COMPREPLY[@]}" --; }
            # Readline's own, outside a Tab: said, to see that file names are turned off.
            compopt() { echo "compopt $*"; }
            comp monsoon ge; comp monsoon episodes ''; comp monsoon episodes 'Morning\\ S'; comp monsoon --home '\(folder.file("none"))' episodes ''
            """
        let completed = try await ArchiveCommandTests.shell("/bin/bash", [], input: bash)
        #expect(completed.output == "get\n--\nMorning\\ Show\nEvening\\ News\n--\nMorning\\ Show\n--\ncompopt +o default\n--\n", "\(completed.output)")
        #expect(!FileManager.default.fileExists(atPath: folder.file("none")), "a Tab creates no home")

        // zsh finds _monsoon in its fpath (on Debian, /usr/local/share/zsh/site-functions is in it).
        // make test installs zsh and fish (TEST_PACKAGES): a missing shell fails here, never skips.
        let zsh = "fpath=('\(prefix)/share/zsh/site-functions' $fpath); autoload -U compinit; compinit -u -D; print -r -- $_comps[monsoon]"
        let zshFound = try await ArchiveCommandTests.shell("/usr/bin/zsh", ["-f"], input: zsh)
        #expect(zshFound.output == "_monsoon\n", "\(zshFound.output)")
        // fish finds it among its vendor completions.
        let fish = """
            set -x PATH '\(prefix)/bin' $PATH; set -x MONSOON_HOME '\(folder.file(".monsoon"))'
            set -p fish_complete_path '\(prefix)/share/fish/vendor_completions.d'
            complete -C 'monsoon ge'; echo end; complete -C "monsoon --home '\(folder.file("none"))' episodes "; echo end; complete -C 'monsoon episodes Mo'
            """
        let fishFound = try await ArchiveCommandTests.shell("/usr/bin/fish", [], input: fish)
        #expect(fishFound.output.hasPrefix("get\tDownload URLs") && fishFound.output.hasSuffix("\nend\nend\nMorning Show\n"), "\(fishFound.output)")

        let removed = try await ArchiveCommandTests.shell("/bin/bash", [], input: "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C '\(Self.packageRoot)' uninstall DESTDIR='\(destination)' PREFIX=/usr/local 2>&1")
        #expect(removed.status == 0, "\(removed.output)")
        for file in files { #expect(!FileManager.default.fileExists(atPath: file), "\(file)") }
    }

    @Test func podcastsAreCompletedFromTheHomeTheCommandLineNames() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        await Self.subscribe(in: folder, server: server)
        // A title with an invisible character (U+202E turns text around) is never offered.
        for (words, expected) in [(["episodes", ""], "Morning Show\nEvening News\n"), (["episodes", "Ev"], "Evening News\n"),
                                  (["refresh", "--json", "M"], "Morning Show\n"), (["queue", "add", "--podcast", "E"], "Evening News\n"),
                                  (["--home", folder.file(".monsoon"), "unsubscribe", "Mo"], "Morning Show\n"),
                                  (["--home=\(folder.file(".monsoon"))", "unsubscribe", "Mo"], "Morning Show\n"),
                                  (["--home", "=", folder.file(".monsoon"), "episodes", "Mo"], "Morning Show\n")] {
            let asked = await runMonsoon(["__complete", "monsoon"] + words, in: folder.path)
            #expect(asked.status == 0 && asked.output == expected && asked.errors.isEmpty, "\(words): \(asked.output)\(asked.errors)")
        }
        // No podcast fits: none, and no file name either (status 1 tells the scripts).
        let none = await runMonsoon(["__complete", "monsoon", "episodes", "Zz"], in: folder.path)
        #expect(none.status == 1 && none.output.isEmpty && none.errors.isEmpty)
        // No library there: nothing, said nowhere, and no home made.
        let elsewhere = folder.file("elsewhere")
        for (words, environment) in [(["--home", elsewhere, "episodes", ""], [:]), (["episodes", ""], ["MONSOON_HOME": elsewhere]),
                                     (["episodes", ""], ["XDG_DATA_HOME": elsewhere, "HOME": elsewhere])] {
            let asked = await runMonsoon(["__complete", "monsoon"] + words, in: folder.path, environment: environment)
            #expect(asked.status == 1 && asked.output.isEmpty && asked.errors.isEmpty, "\(words): \(asked.output)\(asked.errors)")
            #expect(!FileManager.default.fileExists(atPath: elsewhere))
        }
    }

    /// A title that begins with "-" would be taken for an option once completed: never offered.
    @Test func aTitleThatLooksLikeAnOptionIsNeverOffered() async throws {
        let server = try TestServer()
        let folder = Folder()
        defer { folder.remove(); server.stop() }
        for (path, title) in [("/minus.xml", "-ism Weekly"), ("/plain.xml", "Isms")] {
            server.setRoute(path, Route(body: .bytes(Array(PodcastCommandTests.feed(title: title, count: 1).utf8)), contentType: "application/rss+xml"))
            #expect(await runMonsoon(["add", server.url(path).absoluteString], in: folder.path).status == 0)
        }
        let asked = await runMonsoon(["__complete", "monsoon", "episodes", ""], in: folder.path)
        #expect(asked.status == 0 && asked.output == "Isms\n", "\(asked.output)\(asked.errors)")
        let dashed = await runMonsoon(["__complete", "monsoon", "episodes", "-i"], in: folder.path)
        #expect(!dashed.output.contains("-ism Weekly"), "\(dashed.output)")
    }

    @Test func theManualIsMdocMadeFromTheDeclarations() async throws {
        let folder = Folder()
        defer { folder.remove() }
        let manual = await runMonsoon(["completions", "man"], in: folder.path, environment: ["SOURCE_DATE_EPOCH": "0"])
        #expect(manual.status == 0 && manual.errors.isEmpty)
        let lines = manual.output.split(separator: "\n").map(String.init)
        #expect(Array(lines.dropFirst().prefix(3)) == [".Dd January 1, 1970", ".Dt MONSOON 1", ".Os \"monsoon \(MonsoonCLI.version)\""])
        for line in [".Sh NAME", ".Nm monsoon", ".Ss \"get\"", ".Ss \"downloads clear\"", ".Sh \"EXIT STATUS\"", ".It Li 130", ".It Ev MONSOON_HOME",
                     ".It Fl \"o\" , Fl \"\\-out\" , Fl \"\\-output\" Ar \"dir\"", ".It Ar \"podcast\""] {
            #expect(lines.contains(line), "\(line)")
        }
        // The global options are told once, not in every command's list.
        #expect(lines.filter { $0 == ".It Fl \"\\-home\" Ar \"dir\"" }.count == 1)
        #expect(!FileManager.default.fileExists(atPath: folder.file(".monsoon")), "printing the page opens no home")

        // What could make a line a request, or roff read it otherwise, is escaped.
        #expect(ManualGenerator.text(".hidden \\ back-slash") == "\\&.hidden \\e back\\-slash")
        #expect(ManualGenerator.text("'quoted' caf\u{E9} \u{2026}") == "\\&'quoted' caf\\[u00E9] \\[u2026]")
        #expect(ManualGenerator.quoted("Say \"No\"") == "\"Say \\(dqNo\\(dq\"")
        #expect(ManualGenerator.paragraphs("One.\nTwo:\n\n  monsoon get -o x\n    indented\nThree.\n\n  x\n\nFour.")
                == [".Pp", "One.", "Two:", ".Bd -literal -offset indent", "monsoon get \\-o x", "  indented", ".Ed", "Three.",
                    ".Bd -literal -offset indent", "x", ".Ed", ".Pp", "Four."])
    }
}
