import Testing
@testable import MonsoonCLI

// MARK: - Fixtures: a small CLI shaped like `monsoon`

/// An option value type with a fixed set of words.
private enum FixtureFormat: String, CaseIterable, ExpressibleByArgument {
    case text, json
}

/// Options shared by every fixture command, to test global options.
private struct FixtureGlobals: ParsableArguments {
    @Option(name: .long, help: "Monsoon's data folder.", valueName: "dir") var home: String?
    @Flag(name: .shortAndLong, help: "Print less.") var quiet = false
    @Flag(name: .shortAndLong, help: "Print more.") var verbose = false
    init() {}
}

private struct FixtureGet: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Download URLs.",
        discussion: "Downloads each URL into the output folder, resuming partial files and retrying failures with backoff.\n\n  monsoon get -o ~/podcasts https://example.com/a.mp3",
        usage: nil)

    @OptionGroup var global: FixtureGlobals
    @Option(name: .customShort("i"), help: "Read URLs from FILE, one per line (- for stdin).", valueName: "file")
    var inputFile: String?
    @Option(name: [.customShort("o"), .long("out")], help: "The output folder.") var out: String = "."
    @Option(name: .shortAndLong, help: "Downloads at once.") var jobs: Int = 4
    @Option(name: .long, help: "Attempts per download.") var retries: Int = 5
    @Option(name: .customLong("per-host"), help: "Downloads at once per host.") var perHost: Int?
    @Option(name: .long, help: "An extra request header (repeatable).") var header: [String] = []
    @Option(help: "Output format.") var format: FixtureFormat = .text
    @Option(help: "Speed limit in MB/s.") var limit: Double?
    @Flag(name: .long, help: "Print JSON lines.") var json = false
    @Flag(inversion: .prefixedNo, help: "Resume partial files.") var resume = true
    @Argument(help: "URLs to download.", valueName: "url") var urls: [String] = []
    init() {}

    mutating func validate() throws {
        if jobs < 1 { throw ValidationError("--jobs must be at least 1.") }
    }
}

private struct FixtureList: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List downloads.", aliases: ["ls"])
    @OptionGroup var global: FixtureGlobals
    @Option(help: "Show at most this many.") var limit: Int?
    init() {}
}

private struct FixtureRemove: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove downloads.")
    @OptionGroup var global: FixtureGlobals
    @Flag(help: "Also delete the files.") var deleteFiles = false
    @Argument(help: "The download to remove first.") var first: String
    @Argument(help: "More downloads.", valueName: "id") var more: [String]
    @Argument(help: "Where to log.") var log: String
    init() {}
}

private struct FixtureDownloads: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "downloads",
        abstract: "Manage downloads.",
        subcommands: [FixtureList.self, FixtureRemove.self])
    init() {}
}

private struct FixtureRoot: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monsoon",
        abstract: "A podcast download engine.",
        version: "0.1.0",
        subcommands: [FixtureGet.self, FixtureDownloads.self])
    @OptionGroup var global: FixtureGlobals
    init() {}
}

/// A root with a default subcommand.
private struct FixtureDefaultRoot: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monsoon",
        subcommands: [FixtureGet.self, FixtureDownloads.self],
        defaultSubcommand: FixtureGet.self)
    @OptionGroup var global: FixtureGlobals
    init() {}
}

/// A single command with required inputs and a configured usage line.
private struct FixtureCopy: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy a file.", usage: "fixture-copy [--mode <mode>] <source> [<target>]")
    @Option(help: "Permission bits.") var mode: String
    @Option(name: .shortAndLong, help: "How many copies.") var count: Int = 1
    @Argument(help: "The file to copy.") var source: String
    @Argument(help: "Where to copy it.") var target: String?
    init() {}
}

/// One or more positional words, and a type name that becomes the command name.
private struct FixtureEcho: ParsableCommand {
    @Argument(help: "Words to print.") var words: [String]
    @Option(name: .customLong("sep"), help: "The separator.") var separator: String = " "
    init() {}
}

/// A validation error in a group applies to every command including it.
private struct FixtureStrictGlobals: ParsableArguments {
    @Option(help: "A level from 1 to 3.") var level: Int = 1
    init() {}
    mutating func validate() throws {
        guard (1...3).contains(level) else { throw ValidationError("--level must be from 1 to 3.") }
    }
}

private struct FixtureStrict: ParsableCommand {
    @OptionGroup var strict: FixtureStrictGlobals
    init() {}
}

/// A stored property without a wrapper is a declaration mistake the parser reports.
private struct FixtureBroken: ParsableCommand {
    @Flag var ok = false
    var notAnArgument = 0
    init() {}
}

private func requireSendable<T: Sendable>(_: T.Type) {}

// MARK: - Helpers

/// Parses and expects a command of type `T`.
private func parse<T: ParsableCommand>(
    _ arguments: [String],
    as type: T.Type,
    root: any ParsableCommand.Type = FixtureRoot.self,
    sourceLocation: SourceLocation = #_sourceLocation
) throws -> T {
    let result = CommandParser.parse(arguments, root: root)
    guard case .command(let command) = result else {
        Issue.record("Expected a command, got \(result)", sourceLocation: sourceLocation)
        throw ParseError.declarationError("test")
    }
    return try #require(command as? T, sourceLocation: sourceLocation)
}

/// Parses and expects a usage error; returns its message and usage line.
private func usageError(
    _ arguments: [String],
    root: any ParsableCommand.Type = FixtureRoot.self,
    sourceLocation: SourceLocation = #_sourceLocation
) -> (message: String, usage: String) {
    let result = CommandParser.parse(arguments, root: root)
    guard case .usageError(let message, let usage) = result else {
        Issue.record("Expected a usage error, got \(result)", sourceLocation: sourceLocation)
        return ("", "")
    }
    return (message, usage)
}

/// Parses and expects help text.
private func help(
    _ arguments: [String],
    root: any ParsableCommand.Type = FixtureRoot.self,
    sourceLocation: SourceLocation = #_sourceLocation
) -> String {
    let result = CommandParser.parse(arguments, root: root)
    guard case .help(let text) = result else {
        Issue.record("Expected help, got \(result)", sourceLocation: sourceLocation)
        return ""
    }
    return text
}

// MARK: - Options

@Suite struct ArgumentParserOptionTests {
    @Test func defaultsWhenNothingIsGiven() throws {
        let get = try parse(["get"], as: FixtureGet.self)
        #expect(get.out == ".")
        #expect(get.jobs == 4)
        #expect(get.retries == 5)
        #expect(get.perHost == nil)
        #expect(get.inputFile == nil)
        #expect(get.header == [])
        #expect(get.format == .text)
        #expect(get.limit == nil)
        #expect(get.json == false)
        #expect(get.resume == true)
        #expect(get.urls == [])
        #expect(get.global.home == nil)
        #expect(get.global.quiet == false)
    }

    @Test(arguments: [
        ["get", "--out", "/tmp/a"],
        ["get", "--out=/tmp/a"],
        ["get", "-o", "/tmp/a"],
        ["get", "-o/tmp/a"],
    ])
    func valueForms(arguments: [String]) throws {
        #expect(try parse(arguments, as: FixtureGet.self).out == "/tmp/a")
    }

    @Test func shortAndLongDerivedNames() throws {
        #expect(try parse(["get", "-j", "8"], as: FixtureGet.self).jobs == 8)
        #expect(try parse(["get", "-j8"], as: FixtureGet.self).jobs == 8)
        #expect(try parse(["get", "--jobs", "8"], as: FixtureGet.self).jobs == 8)
        #expect(try parse(["get", "--retries=2"], as: FixtureGet.self).retries == 2)
    }

    @Test func kebabCaseAndCustomNames() throws {
        let get = try parse(["get", "--per-host", "2", "-i", "list.txt"], as: FixtureGet.self)
        #expect(get.perHost == 2)
        #expect(get.inputFile == "list.txt")
        #expect(ArgumentNaming.kebabCase("perHost") == "per-host")
        #expect(ArgumentNaming.kebabCase("inputFile") == "input-file")
        #expect(ArgumentNaming.kebabCase("URLList") == "url-list")
        #expect(ArgumentNaming.kebabCase("maxHTTPRetries") == "max-http-retries")
        #expect(FixtureEcho.resolvedCommandName == "fixture-echo")
    }

    @Test func nameSpecifications() {
        let derived = NameSpecification([.short, .long]).resolved(forProperty: "maxJobs")
        #expect(derived.long == ["max-jobs"] && derived.short == ["m"])
        let custom = NameSpecification([.customLong("--x-y"), .long("z"), .customShort("Q")]).resolved(forProperty: "p")
        #expect(custom.long == ["x-y", "z"] && custom.short == ["Q"])
        #expect(NameSpecification.short.resolved(forProperty: "jobs").short == ["j"])
    }

    @Test func dashAloneIsAValue() throws {
        #expect(try parse(["get", "-i", "-"], as: FixtureGet.self).inputFile == "-")
    }

    @Test func negativeNumberIsAValue() throws {
        let get = try parse(["get", "--retries", "-1"], as: FixtureGet.self)
        #expect(get.retries == -1)
    }

    @Test func repeatedArrayOptionKeepsOrder() throws {
        let get = try parse(["get", "--header", "A: 1", "--header=B: 2", "--header", "C"], as: FixtureGet.self)
        #expect(get.header == ["A: 1", "B: 2", "C"])
    }

    @Test func lastScalarWins() throws {
        #expect(try parse(["get", "-j", "2", "--jobs", "3"], as: FixtureGet.self).jobs == 3)
    }

    @Test func enumAndDoubleValues() throws {
        let get = try parse(["get", "--format", "json", "--limit", "1.5"], as: FixtureGet.self)
        #expect(get.format == .json)
        #expect(get.limit == 1.5)
    }

    @Test func flagsAndCombinedShortFlags() throws {
        let get = try parse(["get", "-qv", "--json"], as: FixtureGet.self)
        #expect(get.global.quiet)
        #expect(get.global.verbose)
        #expect(get.json)
    }

    @Test func combinedFlagsEndingInAnOption() throws {
        let attached = try parse(["get", "-qj3"], as: FixtureGet.self)
        #expect(attached.global.quiet && attached.jobs == 3)
        let separate = try parse(["get", "-qj", "3"], as: FixtureGet.self)
        #expect(separate.global.quiet && separate.jobs == 3)
    }

    @Test func invertedFlag() throws {
        #expect(try parse(["get", "--no-resume"], as: FixtureGet.self).resume == false)
        #expect(try parse(["get", "--no-resume", "--resume"], as: FixtureGet.self).resume == true)
    }

    @Test func requiredOptionAndConfiguredUsage() throws {
        let copy = try parse(["--mode", "644", "a"], as: FixtureCopy.self, root: FixtureCopy.self)
        #expect(copy.mode == "644")
        #expect(copy.source == "a")
        #expect(copy.target == nil)
        #expect(copy.count == 1)
        let error = usageError(["a"], root: FixtureCopy.self)
        #expect(error.message == "Missing expected argument '--mode <mode>'.")
        #expect(error.usage == "fixture-copy [--mode <mode>] <source> [<target>]")
    }

    @Test func commandsAreSendable() {
        // Compiles only if the property wrappers keep user commands Sendable.
        requireSendable(FixtureGet.self)
        requireSendable(FixtureRoot.self)
    }

    @Test func assignedValuesStick() throws {
        var get = try parse(["get"], as: FixtureGet.self)
        var copy = get
        copy.jobs = 9
        get.out = "x"
        #expect(get.jobs == 4 && copy.jobs == 9)
        #expect(get.out == "x" && copy.out == ".")
    }
}

// MARK: - Positional arguments

@Suite struct ArgumentParserPositionalArgumentTests {
    @Test func arrayArgumentInterleavedWithOptions() throws {
        let get = try parse(["get", "a", "-j", "2", "b", "--json", "c"], as: FixtureGet.self)
        #expect(get.urls == ["a", "b", "c"])
        #expect(get.jobs == 2)
        #expect(get.json)
    }

    @Test func doubleDashEndsOptions() throws {
        let get = try parse(["get", "--json", "--", "-weird", "--help", "-h", "--", "get"], as: FixtureGet.self)
        #expect(get.json)
        #expect(get.urls == ["-weird", "--help", "-h", "--", "get"])
    }

    @Test func requiredSingleOptionalAndOneOrMore() throws {
        let remove = try parse(["downloads", "remove", "a", "b", "c", "log"], as: FixtureRemove.self)
        #expect(remove.first == "a")
        #expect(remove.more == ["b", "c"])
        #expect(remove.log == "log")
    }

    @Test func oneOrMoreNeedsOne() {
        let error = usageError(["downloads", "remove", "a", "log"])
        #expect(error.message == "Missing expected argument '<id> ...'.")
        #expect(error.usage == "monsoon downloads remove [<options>] <first> <id> ... <log>")
    }

    @Test func missingRequiredArgument() {
        #expect(usageError(["downloads", "remove"]).message == "Missing expected argument '<first>'.")
        #expect(usageError([], root: FixtureEcho.self).message == "Missing expected argument '<words> ...'.")
    }

    @Test func optionalArgument() throws {
        let copy = try parse(["--mode=600", "a", "b"], as: FixtureCopy.self, root: FixtureCopy.self)
        #expect(copy.target == "b")
    }

    @Test func unexpectedExtraArguments() {
        let one = usageError(["--mode=600", "a", "b", "c"], root: FixtureCopy.self)
        #expect(one.message == "Unexpected argument 'c'.")
        let two = usageError(["downloads", "list", "x", "y"])
        #expect(two.message == "Unexpected arguments 'x', 'y'.")
        #expect(two.usage == "monsoon downloads list [<options>]")
    }
}

// MARK: - Subcommands and global options

@Suite struct ArgumentParserSubcommandTests {
    @Test func globalsBeforeTheSubcommand() throws {
        let get = try parse(["--home", "/x", "-q", "get", "u"], as: FixtureGet.self)
        #expect(get.global.home == "/x")
        #expect(get.global.quiet)
        #expect(get.urls == ["u"])
    }

    @Test func globalsAfterTheSubcommand() throws {
        let get = try parse(["get", "u", "--home", "/x", "-q"], as: FixtureGet.self)
        #expect(get.global.home == "/x")
        #expect(get.global.quiet)
    }

    @Test func laterGlobalsWin() throws {
        let get = try parse(["--home", "/x", "get", "--home=/y"], as: FixtureGet.self)
        #expect(get.global.home == "/y")
    }

    @Test func globalsCarryThroughAnIntermediateCommandWithoutThem() throws {
        let list = try parse(["--home", "/x", "downloads", "list", "--limit", "3"], as: FixtureList.self)
        #expect(list.global.home == "/x")
        #expect(list.limit == 3)
    }

    @Test func aliasesSelectTheCommandAndShowInHelp() throws {
        let list = try parse(["downloads", "ls", "--limit", "2"], as: FixtureList.self)
        #expect(list.limit == 2)
        #expect(help(["downloads", "--help"]).contains("  list, ls                List downloads."))
        #expect(help(["help", "downloads", "ls"]).hasPrefix("Usage: monsoon downloads list"))
        #expect(usageError(["downloads", "lss"]).message.contains("Did you mean 'ls'?"))
    }

    @Test func nestedSubcommands() throws {
        let remove = try parse(["downloads", "remove", "--delete-files", "a", "b", "c"], as: FixtureRemove.self)
        #expect(remove.deleteFiles)
        #expect(remove.first == "a" && remove.more == ["b"] && remove.log == "c")
    }

    @Test func subcommandOptionBeforeItsNameIsUnknown() {
        let error = usageError(["--jobs", "3", "get"])
        #expect(error.message == "Unknown option '--jobs'.")
        #expect(error.usage == "monsoon [<options>] <command>")
    }

    @Test func unknownSubcommandWithSuggestion() {
        let error = usageError(["gte"])
        #expect(error.message == "Unknown command 'gte'. Did you mean 'get'?")
        #expect(usageError(["frobnicate"]).message == "Unknown command 'frobnicate'.")
        #expect(usageError(["downloads", "lst"]).message == "Unknown command 'lst'. Did you mean 'list'?")
    }

    @Test func missingSubcommand() {
        let error = usageError([])
        #expect(error.message == "Missing command; expected one of: get, downloads.")
        #expect(error.usage == "monsoon [<options>] <command>")
        #expect(usageError(["-q"]).message == "Missing command; expected one of: get, downloads.")
        #expect(usageError(["downloads"]).message == "Missing command; expected one of: list, remove.")
    }

    @Test func defaultSubcommand() throws {
        let bare = try parse([], as: FixtureGet.self, root: FixtureDefaultRoot.self)
        #expect(bare.jobs == 4)
        let urls = try parse(["-q", "a", "b"], as: FixtureGet.self, root: FixtureDefaultRoot.self)
        #expect(urls.global.quiet && urls.urls == ["a", "b"])
        let options = try parse(["--home", "/h", "-j", "2", "a"], as: FixtureGet.self, root: FixtureDefaultRoot.self)
        #expect(options.global.home == "/h" && options.jobs == 2 && options.urls == ["a"])
        let named = try parse(["downloads", "list"], as: FixtureList.self, root: FixtureDefaultRoot.self)
        #expect(named.limit == nil)
    }

    @Test func version() {
        guard case .version(let text) = CommandParser.parse(["--version"], root: FixtureRoot.self) else {
            Issue.record("expected the version")
            return
        }
        #expect(text == "0.1.0")
        #expect(usageError(["get", "--version"]).message == "Unknown option '--version'.")
    }
}

// MARK: - Errors

@Suite struct ArgumentParserUsageErrorTests {
    @Test func invalidValue() {
        let error = usageError(["get", "--jobs", "abc"])
        #expect(error.message == "The value 'abc' is invalid for '--jobs <jobs>': not a whole number.")
        #expect(error.usage == "monsoon get [<options>] [<url> ...]")
        #expect(usageError(["get", "-jx"]).message == "The value 'x' is invalid for '-j <jobs>': not a whole number.")
        #expect(usageError(["get", "--limit", "fast"]).message
            == "The value 'fast' is invalid for '--limit <limit>': not a number.")
    }

    @Test func invalidEnumValueListsTheChoices() {
        #expect(usageError(["get", "--format", "xml"]).message
            == "The value 'xml' is invalid for '--format <format>': expected one of 'text', 'json'.")
    }

    @Test func invalidPositionalValue() {
        struct Numbers: ParsableCommand {
            @Argument var values: [Int] = []
            init() {}
        }
        #expect(usageError(["1", "two"], root: Numbers.self).message
            == "The value 'two' is invalid for '<values>': not a whole number.")
    }

    @Test func missingValue() {
        #expect(usageError(["get", "--out"]).message == "Missing value for '--out <out>'.")
        #expect(usageError(["get", "-o"]).message == "Missing value for '-o <out>'.")
        #expect(usageError(["get", "-i", "--json"]).message == "Missing value for '-i <file>'.")
    }

    @Test func unknownOptionWithSuggestion() {
        #expect(usageError(["get", "--outt", "x"]).message == "Unknown option '--outt'. Did you mean '--out'?")
        #expect(usageError(["get", "--jbos", "2"]).message == "Unknown option '--jbos'. Did you mean '--jobs'?")
        #expect(usageError(["get", "--per", "2"]).message == "Unknown option '--per'. Did you mean '--per-host'?")
        #expect(usageError(["get", "--zzz"]).message == "Unknown option '--zzz'.")
        #expect(usageError(["get", "-x"]).message == "Unknown option '-x'.")
        #expect(usageError(["get", "-json"]).message == "Unknown option '-json'. Did you mean '--json'?")
    }

    @Test func flagWithValue() {
        #expect(usageError(["get", "--json=yes"]).message == "The flag '--json' does not take a value.")
    }

    @Test func validationErrors() {
        let error = usageError(["get", "--jobs", "0"])
        #expect(error.message == "--jobs must be at least 1.")
        #expect(error.usage == "monsoon get [<options>] [<url> ...]")
        #expect(usageError(["--level", "7"], root: FixtureStrict.self).message == "--level must be from 1 to 3.")
    }

    @Test func unwrappedPropertyIsReported() {
        #expect(usageError([], root: FixtureBroken.self).message.contains("'notAnArgument' must be declared with"))
    }

    @Test func standardErrorText() {
        let error = usageError(["get", "--outt"])
        let text = CommandParser.usageErrorText(message: error.message, usage: error.usage, root: FixtureRoot.self)
        #expect(text == """
            Error: Unknown option '--outt'. Did you mean '--out'?
            Usage: monsoon get [<options>] [<url> ...]
              See 'monsoon get --help' for more information.
            """)
        let nested = usageError(["downloads", "remove"])
        #expect(CommandParser.usageErrorText(message: nested.message, usage: nested.usage, root: FixtureRoot.self)
            .hasSuffix("  See 'monsoon downloads remove --help' for more information."))
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
        #expect(text.hasSuffix("  See 'monsoon help <command>' for detailed help."))
        #expect(!text.contains("ARGUMENTS:"))
    }

    @Test func subcommandHelp() {
        let text = help(["get", "--help"])
        #expect(text.hasPrefix("Usage: monsoon get [<options>] [<url> ...]\n\nDownload URLs.\n\nDownloads each URL"))
        #expect(text.contains("\n\n  monsoon get -o ~/podcasts https://example.com/a.mp3\n"))
        #expect(text.contains("ARGUMENTS:\n  <url>                   URLs to download.\n"))
        #expect(text.contains("  -i <file>               Read URLs from FILE, one per line (- for stdin).\n"))
        #expect(text.contains("  -o, --out <out>         The output folder. (default: .)\n"))
        #expect(text.contains("  -j, --jobs <jobs>       Downloads at once. (default: 4)\n"))
        #expect(text.contains("  --retries <retries>     Attempts per download. (default: 5)\n"))
        #expect(text.contains("  --per-host <per-host>   Downloads at once per host.\n"))
        #expect(text.contains("  --format <format>       Output format. (values: text, json; default: text)\n"))
        #expect(text.contains("  --[no-]resume           Resume partial files. (default: --resume)\n"))
        #expect(text.contains("  --json                  Print JSON lines.\n"))
        #expect(!text.contains("--version"))
        #expect(!text.contains("COMMANDS:"))
        // Declaration order: group options first, then the command's own.
        let home = text.firstRange(of: "--home")!.lowerBound
        let input = text.firstRange(of: "-i <file>")!.lowerBound
        let json = text.firstRange(of: "--json ")!.lowerBound
        #expect(home < input && input < json)
    }

    @Test func helpIsWrappedToEightyColumns() {
        for text in [help(["get", "-h"]), help(["--help"]), help(["downloads", "remove", "-h"])] {
            for line in text.split(separator: "\n") {
                #expect(line.count <= 80, "too long: \(line)")
            }
        }
        let text = help(["get", "-h"])
        // The long description continues under its column.
        #expect(text.contains("  --header <header>       An extra request header (repeatable).\n"))
        #expect(text.contains("Downloads each URL into the output folder, resuming partial files and retrying\nfailures with backoff."))
    }

    @Test func helpSubcommand() {
        #expect(help(["help", "get"]) == help(["get", "--help"]))
        #expect(help(["help"]) == help(["--help"]))
        #expect(help(["help", "downloads", "list"]) == help(["downloads", "list", "-h"]))
        #expect(help(["downloads", "help", "remove"]) == help(["downloads", "remove", "-h"]))
        #expect(usageError(["help", "nope"]).message == "Unknown command 'nope'.")
    }

    @Test func helpOfHelp() {
        let text = help(["help", "help"])
        #expect(text.hasPrefix("Usage: monsoon help [<command> ...]\n\nShow the help of a command"))
        #expect(help(["--help"]).contains("\n  help                    Show the help of a command"))
    }

    @Test func helpSaysCommandThroughout() {
        for text in [help(["--help"]), help(["downloads", "--help"]), help(["help", "help"])] {
            #expect(!text.lowercased().contains("subcommand"), "\(text)")
        }
        #expect(!usageError(["frob"]).message.lowercased().contains("subcommand"))
        #expect(!usageError(["downloads"]).message.lowercased().contains("subcommand"))
    }

    @Test func helpAnywhereWinsOverErrors() throws {
        let getHelp = help(["get", "--help"])
        #expect(help(["get", "--jobs", "abc", "-h"]) == getHelp)
        #expect(help(["get", "--bogus", "--help"]) == getHelp)
        #expect(help(["--home", "/x", "get", "u", "-qh"]) == getHelp)
        #expect(help(["downloads", "remove", "--help"]).contains("Usage: monsoon downloads remove"))
        // After "--", -h is a positional word.
        #expect(try parse(["get", "--", "-h"], as: FixtureGet.self).urls == ["-h"])
    }

    @Test func defaultSubcommandHelp() {
        let text = help(["--help"], root: FixtureDefaultRoot.self)
        #expect(text.hasPrefix("Usage: monsoon [<options>] [<command>]"))
        #expect(text.contains("  get                     Download URLs. (default)"))
    }

    @Test func helpOfRequiredInputs() {
        let text = FixtureRemove.helpMessage()
        #expect(text.contains("ARGUMENTS:\n  <first>                 The download to remove first.\n  <id>                    More downloads.\n  <log>                   Where to log."))
        let echo = FixtureEcho.helpMessage()
        #expect(echo.hasPrefix("Usage: fixture-echo [<options>] <words> ...\n"))
        #expect(echo.contains("  --sep <sep>             The separator. (default:  )") == false)
    }

    @Test func longLabelsPutTheDescriptionOnTheNextLine() {
        struct Long: ParsableCommand {
            @Option(help: "Something long.", valueName: "a-long-value-name") var aRatherLongOptionName: String?
            init() {}
        }
        let text = Long.helpMessage()
        #expect(text.contains("  --a-rather-long-option-name <a-long-value-name>\n                          Something long.\n"))
    }

    @Test func textWrapper() {
        #expect(TextWrapper.wrap("aaa bbb ccc", width: 7) == ["aaa bbb", "ccc"])
        #expect(TextWrapper.wrap("abcdefghij k", width: 4) == ["abcdefghij", "k"])
        #expect(TextWrapper.wrapParagraphs("a b\n\n  keep   this", width: 1) == "a\nb\n\n  keep   this")
    }
}
