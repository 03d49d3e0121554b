import MonsoonEngine
import Testing
@testable import MonsoonCLI

// MARK: - Fixtures: a small CLI shaped like `monsoon`

/// An option value type with a fixed set of words.
private enum FixtureFormat: String, CaseIterable, ExpressibleByArgument {
    case text, json
}

/// Options shared by every fixture command, to test global options.
private struct FixtureGlobals: ParsableArguments {
    @Option("--home", help: "Monsoon's data folder.", valueName: "dir") var home: String?
    @Flag("-q", "--quiet", help: "Print less.") var quiet = false
    @Flag("-v", "--verbose", help: "Print more.") var verbose = false
    init() {}
}

private struct FixtureGet: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Download URLs.",
        discussion: "Downloads each URL into the output folder, resuming partial files and retrying failures with backoff.\n\n  monsoon get -o ~/podcasts https://example.com/a.mp3")

    @OptionGroup var global: FixtureGlobals
    @Option("-i", help: "Read URLs from FILE, one per line (- for stdin).", valueName: "file") var inputFile: String?
    @Option("-o", "--out", help: "The output folder.", valueName: "dir") var out: String = "."
    @Option("-j", "--jobs", help: "Downloads at once.", valueName: "n") var jobs: Int = 4
    @Option("--retries", help: "Attempts per download.", valueName: "n") var retries: Int = 5
    @Option("--per-host", help: "Downloads at once per host.", valueName: "n") var perHost: Int?
    @Option("--format", help: "Output format.", valueName: "format") var format: FixtureFormat = .text
    @Option("--limit", help: "Speed limit in MB/s.", valueName: "rate") var limit: Double?
    @Flag("--json", help: "Print JSON lines.") var json = false
    @Argument(help: "URLs to download.", valueName: "url") var urls: [String] = []
    init() {}

    mutating func validate() throws {
        if jobs < 1 { throw ValidationError("--jobs must be at least 1") }
    }
}

private struct FixtureList: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List downloads.", aliases: ["ls"])
    @OptionGroup var global: FixtureGlobals
    @Option("--limit", help: "Show at most this many.", valueName: "n") var limit: Int?
    init() {}
}

private struct FixtureRemove: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove downloads.")
    @OptionGroup var global: FixtureGlobals
    @Flag("--delete-files", help: "Also delete the files.") var deleteFiles = false
    @Argument(help: "The download to remove first.", valueName: "first") var first: String
    @Argument(help: "Where to log.", valueName: "log") var log: String?
    init() {}
}

private struct FixtureClear: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "clear", abstract: "Clear downloads.")
    @Argument(help: "The downloads.", valueName: "id") var ids: [Int]
    init() {}
}

/// `downloads` lists unless told otherwise, like `monsoon downloads`.
private struct FixtureDownloads: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "downloads", abstract: "Manage downloads.",
        subcommands: [FixtureList.self, FixtureRemove.self, FixtureClear.self], defaultSubcommand: FixtureList.self)
    init() {}
}

private struct FixtureRoot: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monsoon", abstract: "A podcast download engine.", version: "0.1.0",
        subcommands: [FixtureGet.self, FixtureDownloads.self])
    @OptionGroup var global: FixtureGlobals
    init() {}
}

/// A validation error in a group applies to every command including it.
private struct FixtureStrictGlobals: ParsableArguments {
    @Option("--level", help: "A level from 1 to 3.", valueName: "n") var level: Int = 1
    init() {}
    mutating func validate() throws {
        guard (1...3).contains(level) else { throw ValidationError("--level must be from 1 to 3") }
    }
}

private struct FixtureStrict: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "strict", abstract: "Strict.")
    @OptionGroup var strict: FixtureStrictGlobals
    init() {}
}

private func requireSendable<T: Sendable>(_: T.Type) {}

// MARK: - Helpers

/// Parses and expects a command of type `T`.
private func parse<T: ParsableCommand>(
    _ arguments: [String], as type: T.Type, root: any ParsableCommand.Type = FixtureRoot.self,
    sourceLocation: SourceLocation = #_sourceLocation
) throws -> T {
    let result = CommandParser.parse(arguments, root: root)
    guard case .command(let command) = result else {
        Issue.record("Expected a command, got \(result)", sourceLocation: sourceLocation)
        throw ValidationError("test")
    }
    return try #require(command as? T, sourceLocation: sourceLocation)
}

/// Parses and expects a usage error; returns its first line's message and the usage line.
private func usageError(
    _ arguments: [String], root: any ParsableCommand.Type = FixtureRoot.self, sourceLocation: SourceLocation = #_sourceLocation
) -> (message: String, usage: String) {
    let result = CommandParser.parse(arguments, root: root)
    guard case .usageError(let text) = result else {
        Issue.record("Expected a usage error, got \(result)", sourceLocation: sourceLocation)
        return ("", "")
    }
    let lines = text.split(separator: "\n").map(String.init)
    #expect(lines[0].hasPrefix("monsoon: "), sourceLocation: sourceLocation)
    return (String(lines[0].dropFirst("monsoon: ".count)), String(lines[1].dropFirst("Usage: ".count)))
}

/// Parses and expects text for standard output: help or the version.
private func help(
    _ arguments: [String], root: any ParsableCommand.Type = FixtureRoot.self, sourceLocation: SourceLocation = #_sourceLocation
) -> String {
    let result = CommandParser.parse(arguments, root: root)
    guard case .output(let text) = result else {
        Issue.record("Expected help, got \(result)", sourceLocation: sourceLocation)
        return ""
    }
    return text
}

// MARK: - Options

@Suite struct ArgumentParserOptionTests {
    @Test func defaultsWhenNothingIsGiven() throws {
        let get = try parse(["get"], as: FixtureGet.self)
        #expect(get.out == "." && get.jobs == 4 && get.retries == 5 && get.perHost == nil && get.inputFile == nil)
        #expect(get.format == .text && get.limit == nil && get.json == false && get.urls == [])
        #expect(get.global.home == nil && get.global.quiet == false)
    }

    @Test(arguments: [["get", "--out", "/tmp/a"], ["get", "--out=/tmp/a"], ["get", "-o", "/tmp/a"]])
    func valueForms(arguments: [String]) throws {
        #expect(try parse(arguments, as: FixtureGet.self).out == "/tmp/a")
    }

    @Test func shortAndLongNames() throws {
        #expect(try parse(["get", "-j", "8"], as: FixtureGet.self).jobs == 8)
        #expect(try parse(["get", "--jobs", "8"], as: FixtureGet.self).jobs == 8)
        #expect(try parse(["get", "--retries=2"], as: FixtureGet.self).retries == 2)
        let get = try parse(["get", "--per-host", "2", "-i", "list.txt"], as: FixtureGet.self)
        #expect(get.perHost == 2 && get.inputFile == "list.txt")
    }

    @Test func dashAloneAndNegativeNumbersAreValues() throws {
        #expect(try parse(["get", "-i", "-"], as: FixtureGet.self).inputFile == "-")
        #expect(try parse(["get", "--retries", "-1"], as: FixtureGet.self).retries == -1)
    }

    @Test func lastValueWins() throws {
        #expect(try parse(["get", "-j", "2", "--jobs", "3"], as: FixtureGet.self).jobs == 3)
    }

    @Test func enumAndDoubleValues() throws {
        let get = try parse(["get", "--format", "json", "--limit", "1.5"], as: FixtureGet.self)
        #expect(get.format == .json && get.limit == 1.5)
    }

    @Test func flags() throws {
        let get = try parse(["get", "-q", "-v", "--json"], as: FixtureGet.self)
        #expect(get.global.quiet && get.global.verbose && get.json)
        #expect(usageError(["get", "-qv"]).message == "unknown option '-qv'", "no clusters of short names")
        #expect(usageError(["get", "-j3"]).message == "unknown option '-j3'", "a value is a word of its own")
    }

    @Test func commandsAreSendableAndPlainValues() throws {
        requireSendable(FixtureGet.self)
        var get = try parse(["get"], as: FixtureGet.self)
        var copy = get
        copy.jobs = 9
        get.out = "x"
        #expect(get.jobs == 4 && copy.jobs == 9 && get.out == "x" && copy.out == ".")
        #expect(FixtureGet().jobs == 4, "made outside the parser, a command holds its defaults")
    }
}

// MARK: - Positional arguments

@Suite struct ArgumentParserPositionalArgumentTests {
    @Test func arrayArgumentInterleavedWithOptions() throws {
        let get = try parse(["get", "a", "-j", "2", "b", "--json", "c"], as: FixtureGet.self)
        #expect(get.urls == ["a", "b", "c"] && get.jobs == 2 && get.json)
    }

    @Test func doubleDashEndsOptions() throws {
        let get = try parse(["get", "--json", "--", "-weird", "--help", "-h", "--", "get"], as: FixtureGet.self)
        #expect(get.json && get.urls == ["-weird", "--help", "-h", "--", "get"])
    }

    @Test func requiredOptionalAndOneOrMore() throws {
        let remove = try parse(["downloads", "remove", "a", "log"], as: FixtureRemove.self)
        #expect(remove.first == "a" && remove.log == "log")
        #expect(try parse(["downloads", "remove", "a"], as: FixtureRemove.self).log == nil)
        #expect(try parse(["downloads", "clear", "1", "2"], as: FixtureClear.self).ids == [1, 2])
        #expect(usageError(["downloads", "remove"]).message == "missing expected argument '<first>'")
        let error = usageError(["downloads", "clear"])
        #expect(error.message == "missing expected argument '<id> ...'")
        #expect(error.usage == "monsoon downloads clear <id> ...")
    }

    @Test func unexpectedExtraArguments() {
        #expect(usageError(["downloads", "remove", "a", "b", "c"]).message == "unexpected argument 'c'")
        let two = usageError(["downloads", "list", "x", "y"])
        #expect(two.message == "unexpected arguments 'x', 'y'")
        #expect(two.usage == "monsoon downloads list [<options>]")
    }
}

// MARK: - Subcommands and global options

@Suite struct ArgumentParserSubcommandTests {
    @Test func globalsBeforeOrAfterTheSubcommandLaterWins() throws {
        let before = try parse(["--home", "/x", "-q", "get", "u"], as: FixtureGet.self)
        #expect(before.global.home == "/x" && before.global.quiet && before.urls == ["u"])
        let after = try parse(["get", "u", "--home", "/x", "-q"], as: FixtureGet.self)
        #expect(after.global.home == "/x" && after.global.quiet)
        #expect(try parse(["--home", "/x", "get", "--home=/y"], as: FixtureGet.self).global.home == "/y")
    }

    @Test func globalsCarryThroughAnIntermediateCommandWithoutThem() throws {
        let list = try parse(["--home", "/x", "downloads", "list", "--limit", "3"], as: FixtureList.self)
        #expect(list.global.home == "/x" && list.limit == 3)
    }

    @Test func aliasesSelectTheCommandAndShowInHelp() throws {
        #expect(try parse(["downloads", "ls", "--limit", "2"], as: FixtureList.self).limit == 2)
        #expect(help(["downloads", "--help"]).contains("  list, ls                List downloads. (default)"))
        #expect(help(["help", "downloads", "ls"]).hasPrefix("Usage: monsoon downloads list"))
        #expect(usageError(["downloads", "lss"]).message.contains("did you mean 'ls'?"))
    }

    @Test func defaultSubcommandTakesUnknownOptions() throws {
        #expect(try parse(["downloads"], as: FixtureList.self).limit == nil)
        let list = try parse(["-q", "downloads", "--limit", "2"], as: FixtureList.self)
        #expect(list.global.quiet && list.limit == 2)
        #expect(help(["--help"]).contains("Usage: monsoon [<options>] <command>"))
        #expect(help(["downloads", "--help"]).hasPrefix("Usage: monsoon downloads [<command>]"))
    }

    @Test func subcommandOptionBeforeItsNameIsUnknown() {
        let error = usageError(["--jobs", "3", "get"])
        #expect(error.message == "unknown option '--jobs'")
        #expect(error.usage == "monsoon [<options>] <command>")
    }

    @Test func unknownAndMissingSubcommands() {
        #expect(usageError(["gte"]).message == "unknown command 'gte'; did you mean 'get'?")
        #expect(usageError(["frobnicate"]).message == "unknown command 'frobnicate'")
        #expect(usageError(["downloads", "lst"]).message == "unknown command 'lst'; did you mean 'list'?")
        let error = usageError([])
        #expect(error.message == "missing command; expected one of: get, downloads")
        #expect(error.usage == "monsoon [<options>] <command>")
        #expect(usageError(["-q"]).message == "missing command; expected one of: get, downloads")
    }

    @Test func version() {
        #expect(help(["--version"]) == "0.1.0")
        #expect(usageError(["get", "--version"]).message == "unknown option '--version'")
    }
}

// MARK: - Errors

@Suite struct ArgumentParserUsageErrorTests {
    @Test func invalidValues() {
        let error = usageError(["get", "--jobs", "abc"])
        #expect(error.message == "the value 'abc' is invalid for '--jobs <n>': not a whole number")
        #expect(error.usage == "monsoon get [<options>] [<url> ...]")
        #expect(usageError(["get", "-j", "x"]).message == "the value 'x' is invalid for '-j <n>': not a whole number")
        #expect(usageError(["get", "--limit", "fast"]).message == "the value 'fast' is invalid for '--limit <rate>': not a number")
        #expect(usageError(["get", "--format", "xml"]).message
            == "the value 'xml' is invalid for '--format <format>': expected one of 'text', 'json'")
        #expect(usageError(["downloads", "--status", "faild"], root: Monsoon.self).message
            == "the value 'faild' is invalid for '--status <status>': expected one of 'queued', 'downloading', 'interrupted', 'waitingToRetry', 'paused', 'completed', 'failed'; did you mean 'failed'?")
        // What a listing can show: every engine status, and interrupted.
        #expect(Set(ListDownloads.ShownStatus.allCases.map(\.rawValue)) == Set(DownloadStatus.allCases.map(\.rawValue) + ["interrupted"]))
        #expect(usageError(["downloads", "clear", "1", "two"]).message == "the value 'two' is invalid for '<id>': not a whole number")
    }

    @Test func missingValue() {
        #expect(usageError(["get", "--out"]).message == "missing value for '--out <dir>'")
        #expect(usageError(["get", "-o"]).message == "missing value for '-o <dir>'")
        #expect(usageError(["get", "-i", "--json"]).message == "missing value for '-i <file>'")
    }

    @Test func unknownOptionWithSuggestion() {
        #expect(usageError(["get", "--outt", "x"]).message == "unknown option '--outt'; did you mean '--out'?")
        #expect(usageError(["get", "--jbos", "2"]).message == "unknown option '--jbos'; did you mean '--jobs'?")
        #expect(usageError(["get", "--per", "2"]).message == "unknown option '--per'; did you mean '--per-host'?")
        #expect(usageError(["get", "--zzz"]).message == "unknown option '--zzz'")
        #expect(usageError(["get", "-x"]).message == "unknown option '-x'")
        #expect(usageError(["get", "-json"]).message == "unknown option '-json'; did you mean '--json'?")
        #expect(usageError(["get", "-quite"]).message == "unknown option '-quite'; did you mean '--quiet'?")
    }

    @Test func flagWithValue() {
        #expect(usageError(["get", "--json=yes"]).message == "the flag '--json' does not take a value")
    }

    @Test func validationErrors() {
        let error = usageError(["get", "--jobs", "0"])
        #expect(error.message == "--jobs must be at least 1")
        #expect(error.usage == "monsoon get [<options>] [<url> ...]")
        #expect(usageError(["--level", "7"], root: FixtureStrict.self).message == "--level must be from 1 to 3")
    }

    @Test func standardErrorText() {
        guard case .usageError(let text) = CommandParser.parse(["get", "--outt"], root: FixtureRoot.self) else {
            Issue.record("expected a usage error")
            return
        }
        #expect(text == """
            monsoon: unknown option '--outt'; did you mean '--out'?
            Usage: monsoon get [<options>] [<url> ...]
              See 'monsoon get --help' for more information.
            """)
        guard case .usageError(let nested) = CommandParser.parse(["downloads", "remove"], root: FixtureRoot.self) else {
            Issue.record("a subcommand missing its argument is a usage error"); return
        }
        #expect(nested.hasSuffix("  See 'monsoon downloads remove --help' for more information."))
    }

    @Test func spellingSuggestions() {
        #expect(SpellingSuggestion.editDistance("jbos", "jobs") == 1)
        #expect(SpellingSuggestion.editDistance("kitten", "sitting") == 3)
        #expect(SpellingSuggestion.closest(to: "retires", among: ["retries", "resume"]) == "retries")
        #expect(SpellingSuggestion.closest(to: "x", among: ["out", "jobs"]) == nil)
    }
}

// MARK: - Help

@Suite struct ArgumentParserHelpTests {
    @Test func rootHelp() {
        let text = help(["--help"])
        #expect(text.hasPrefix("Usage: monsoon [<options>] <command>\n\nA podcast download engine.\n"))
        #expect(text.contains("OPTIONS:\n  --home <dir>            Monsoon's data folder.\n  -q, --quiet             Print less.\n"))
        #expect(text.contains("  --version               Show the version.\n"))
        #expect(text.contains("  -h, --help              Show help information."))
        #expect(text.contains("COMMANDS:\n  get                     Download URLs.\n  downloads               Manage downloads."))
        #expect(text.contains("\n  help                    Show the help of a command"))
        #expect(text.hasSuffix("  See 'monsoon help <command>', and 'man monsoon' for every detail."))
        #expect(!text.contains("ARGUMENTS:"))
    }

    @Test func subcommandHelp() {
        let text = help(["get", "--help"])
        #expect(text.hasPrefix("Usage: monsoon get [<options>] [<url> ...]\n\nDownload URLs.\n\nDownloads each URL"))
        #expect(text.contains("\n\n  monsoon get -o ~/podcasts https://example.com/a.mp3\n"))
        #expect(text.contains("ARGUMENTS:\n  <url>                   URLs to download.\n"))
        #expect(text.contains("  -i <file>               Read URLs from FILE, one per line (- for stdin).\n"))
        #expect(text.contains("  -o, --out <dir>         The output folder. (default: .)\n"))
        #expect(text.contains("  -j, --jobs <n>          Downloads at once. (default: 4)\n"))
        #expect(text.contains("  --per-host <n>          Downloads at once per host.\n"))
        #expect(text.contains("  --format <format>       Output format. (values: text, json; default: text)\n"))
        #expect(text.contains("  --json                  Print JSON lines.\n"))
        #expect(!text.contains("--version") && !text.contains("COMMANDS:"))
        // Declaration order: group options first, then the command's own.
        let home = text.firstRange(of: "--home")!.lowerBound, input = text.firstRange(of: "-i <file>")!.lowerBound
        #expect(home < input && input < text.firstRange(of: "--json ")!.lowerBound)
    }

    @Test func helpIsWrappedToEightyColumns() {
        for text in [help(["get", "-h"]), help(["--help"]), help(["downloads", "remove", "-h"])] {
            for line in text.split(separator: "\n") { #expect(line.count <= 80, "too long: \(line)") }
        }
        #expect(help(["get", "-h"]).contains("Downloads each URL into the output folder, resuming partial files and retrying\nfailures with backoff."))
        #expect(TextWrapper.wrap("aaa bbb ccc", width: 7) == ["aaa bbb", "ccc"])
        #expect(TextWrapper.wrap("abcdefghij k", width: 4) == ["abcdefghij", "k"])
        #expect(TextWrapper.wrapParagraphs("a b\n\n  keep   this", width: 1) == "a\nb\n\n  keep   this")
    }

    @Test func helpCommand() {
        #expect(help(["help", "get"]) == help(["get", "--help"]))
        #expect(help(["help"]) == help(["--help"]))
        #expect(help(["help", "downloads", "list"]) == help(["downloads", "list", "-h"]))
        #expect(help(["downloads", "help", "remove"]) == help(["downloads", "remove", "-h"]))
        #expect(usageError(["help", "nope"]).message == "unknown command 'nope'")
        #expect(help(["help", "help"]).hasPrefix("Usage: monsoon help [<command> ...]\n\nShow the help of a command"))
    }

    @Test func helpSaysCommandThroughout() {
        for text in [help(["--help"]), help(["downloads", "--help"]), help(["help", "help"])] {
            #expect(!text.lowercased().contains("subcommand"), "\(text)")
        }
        #expect(!usageError(["frob"]).message.lowercased().contains("subcommand"))
    }

    @Test func helpAnywhereWinsOverErrors() throws {
        let getHelp = help(["get", "--help"])
        #expect(help(["get", "--jobs", "abc", "-h"]) == getHelp)
        #expect(help(["get", "--bogus", "--help"]) == getHelp)
        #expect(help(["--home", "/x", "get", "u", "-q", "-h"]) == getHelp)
        #expect(try parse(["get", "--", "-h"], as: FixtureGet.self).urls == ["-h"], "after --, -h is a word")
    }

    @Test func requiredAndOptionalArgumentsInHelp() {
        let text = help(["downloads", "remove", "-h"])
        #expect(text.hasPrefix("Usage: monsoon downloads remove [<options>] <first> [<log>]\n"))
        #expect(text.contains("ARGUMENTS:\n  <first>                 The download to remove first.\n  <log>                   Where to log."))
    }

    @Test func longLabelsPutTheDescriptionOnTheNextLine() {
        struct Long: ParsableCommand {
            static let configuration = CommandConfiguration(commandName: "long", abstract: "Long.")
            @Option("--a-rather-long-option-name", help: "Something long.", valueName: "a-long-value-name") var name: String?
            init() {}
        }
        #expect(help(["-h"], root: Long.self).contains("  --a-rather-long-option-name <a-long-value-name>\n                          Something long.\n"))
    }
}

// MARK: - Declarations

/// Declarations with one mistake each, which only the declaration check can find.
private struct BrokenCommands: ParsableCommand {
    struct Twice: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "twice", abstract: "A name declared twice.")
        @OptionGroup var global: FixtureGlobals
        @Flag("-q", "--quick", help: "Be quick.") var quick = false
        init() {}
    }

    struct AfterVariadic: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "after-variadic", abstract: "An argument after an array.")
        @Argument(help: "Words.", valueName: "word") var words: [String] = []
        @Argument(help: "Never reached.", valueName: "last") var last: String
        init() {}
    }

    struct Careless: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "Careless", abstract: "")
        @Option("--out", "-", help: "", valueName: "dir") var out: String?
        @Flag("--on", help: "Always on.") var on = true
        @Argument(help: "Optional.", valueName: "first") var first: String?
        @Argument(help: "Required after optional.", valueName: "second") var second: String
        init() {}
    }

    static let configuration = CommandConfiguration(
        commandName: "broken", abstract: "Broken.", subcommands: [Twice.self, AfterVariadic.self, Careless.self, Twice.self],
        defaultSubcommand: FixtureGet.self)
    @OptionGroup var global: FixtureGlobals
    @Argument(help: "A word where a command name goes.", valueName: "word") var word: String?
    init() {}
}

@Suite struct ArgumentParserDeclarationTests {
    /// Walks every command reachable from `monsoon`: a declaration mistake fails here, not for a user.
    @Test func everyMonsoonCommandIsDeclaredSoundly() {
        #expect(DeclarationCheck.problems([Monsoon.self, HelpCommand.self]) == [])
        #expect(DeclarationCheck.problems([Monsoon.self]) == [])
        func leaves(_ command: any ParsableCommand.Type) -> [any ParsableCommand.Type] {
            command.configuration.subcommands.isEmpty ? [command] : command.configuration.subcommands.flatMap(leaves)
        }
        for leaf in leaves(Monsoon.self) {
            #expect(leaf is any RunnableCommand.Type, "'\(leaf.configuration.commandName)' has no run(_:)")
        }
    }

    @Test func theCheckFindsEachMistake() {
        let problems = DeclarationCheck.problems([BrokenCommands.self])
        let expected = [
            "broken: a command with subcommands takes no arguments (a word names a subcommand)",
            "broken: a command with subcommands declares options only in groups its commands include",
            "broken after-variadic: --home, --quiet, --verbose, -q, -v given before its name would be lost: include their group",
            "broken: the command name 'twice' is used twice, or is 'help'",
            "broken: its default subcommand is not one of its subcommands",
            "broken twice: '-q' is declared twice, or reserved",
            "broken after-variadic: <last> comes after <word> ..., which takes every word",
            "broken Careless: --home, --quiet, --verbose, -q, -v given before its name would be lost: include their group",
            "broken Careless: a command name is not a lowercase word",
            "broken Careless: no abstract",
            "broken Careless: --out <dir> has no help text",
            "broken Careless: '-' is not -x or --name",
            "broken Careless: --on is on by default, and nothing turns it off",
            "broken Careless: the required <second> comes after the optional <first>",
        ]
        for problem in expected { #expect(problems.contains(problem), "\(problems)") }
        #expect(problems.count == expected.count + 1, "\(problems)")  // `twice` is checked twice
    }
}
