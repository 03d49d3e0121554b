/// One pass of the parser over a command line.
///
/// It walks from the root command down through the subcommands named on the line, reading the
/// words that belong to each command into that command's `ParsedValues`, then builds and
/// validates every command on the path and returns the last one.
struct ParsingSession {
    private typealias Elements = [[String]: [any Sendable]]

    /// A command reached on the command line, with what was read for it.
    private struct Level {
        var command: any ParsableCommand.Type
        var values: ParsedValues
    }

    /// How the words of one command ended.
    private enum LevelOutcome {
        /// A subcommand takes over from the next word.
        case descend(any ParsableCommand.Type)
        /// The command line ended at this command.
        case finished
        /// `help [subcommand...]` asked for the help of this path.
        case help([any ParsableCommand.Type])
        case version(String)
    }

    private let words: [String]
    private let root: any ParsableCommand.Type
    private var index = 0
    /// The commands reached so far, root first; errors show the usage of the last one.
    private var path: [any ParsableCommand.Type]
    private var levels: [Level] = []
    private var helpRequested: Bool
    /// The values of each option group read so far, by group type, keyed by path inside the
    /// group. They seed the groups of the same type in subcommands, which is what makes the
    /// options of a shared group global.
    private var carried: [ObjectIdentifier: Elements] = [:]

    init(arguments: [String], root: any ParsableCommand.Type) {
        words = arguments
        self.root = root
        path = [root]
        // -h/--help wins over any mistake on the line, even one found before the flag is
        // reached, so look for it first. Words after "--" are positional, never help.
        helpRequested = arguments.prefix { $0 != "--" }.contains { $0 == "-h" || $0 == "--help" }
    }

    mutating func run() -> ParseResult {
        do {
            switch try parseCommandLine() {
            case .help(let target): return .help(HelpGenerator.helpText(for: target))
            case .version(let version): return .version(version)
            case .descend, .finished: break
            }
            if helpRequested { return .help(HelpGenerator.helpText(for: path)) }
            return .command(try buildCommands())
        } catch {
            if helpRequested { return .help(HelpGenerator.helpText(for: path)) }
            // validate() may throw errors of its own; show them as they describe themselves.
            let message = (error as? ParseError)?.message ?? String(describing: error)
            return .usageError(message: message, usage: HelpGenerator.usageLine(for: path))
        }
    }

    // MARK: - Reading words

    private mutating func parseCommandLine() throws -> LevelOutcome {
        var command = root
        while true {
            let definition = CommandDefinition(command)
            var values = ParsedValues(specs: definition.specs, elements: seeds(for: definition))
            let outcome = try parseWords(of: command, definition, &values)
            levels.append(Level(command: command, values: values))
            guard case .descend(let subcommand) = outcome else { return outcome }
            carry(from: definition, values)
            command = subcommand
            path.append(subcommand)
        }
    }

    /// Reads words for `command` until a subcommand takes over or the line ends.
    private mutating func parseWords(
        of command: any ParsableCommand.Type,
        _ definition: CommandDefinition,
        _ values: inout ParsedValues
    ) throws -> LevelOutcome {
        let configuration = command.configuration
        var positionals: [String] = []
        var afterTerminator = false
        while index < words.count {
            let word = words[index]
            if afterTerminator {
                positionals.append(word)
                index += 1
                continue
            }
            switch word {
            case "--":
                afterTerminator = true
                index += 1
                continue
            case "-h", "--help":
                helpRequested = true
                index += 1
                continue
            case "--version" where levels.isEmpty && !configuration.version.isEmpty:
                return .version(configuration.version)
            default:
                break
            }

            // "-4" is a number, unless the command declares it as an option (curl's -4 and -6).
            if Self.looksLikeOption(word) || (word.count == 2 && recognizes(word, definition)) {
                // An option this command doesn't know may belong to the default subcommand.
                if let fallback = configuration.defaultSubcommand, !recognizes(word, definition) {
                    try finish(definition, positionals: positionals, &values)
                    return .descend(fallback)
                }
                index += 1
                try parseOption(word, definition, &values)
                continue
            }

            if !configuration.subcommands.isEmpty {
                if let subcommand = configuration.subcommand(named: word) {
                    index += 1
                    try finish(definition, positionals: positionals, &values)
                    return .descend(subcommand)
                }
                if word == "help" {
                    index += 1
                    return .help(try helpTarget())
                }
                if definition.positionals.isEmpty {
                    if let fallback = configuration.defaultSubcommand {
                        try finish(definition, positionals: positionals, &values)
                        return .descend(fallback)
                    }
                    let names = configuration.subcommandWords + ["help"]
                    throw ParseError.unknownSubcommand(
                        word, suggestion: SpellingSuggestion.closest(to: word, among: names))
                }
            }
            positionals.append(word)
            index += 1
        }

        try finish(definition, positionals: positionals, &values)
        if !configuration.subcommands.isEmpty && !helpRequested {
            if let fallback = configuration.defaultSubcommand { return .descend(fallback) }
            throw ParseError.missingSubcommand(configuration.subcommands.map { $0.resolvedCommandName })
        }
        return .finished
    }

    /// Reads one option word (`--name`, `--name=value`, `-abc`) and any value it takes from
    /// the following word. `index` is already past `word`.
    private mutating func parseOption(
        _ word: String,
        _ definition: CommandDefinition,
        _ values: inout ParsedValues
    ) throws {
        if word.hasPrefix("--") {
            try parseLongOption(word, definition, &values)
        } else {
            try parseShortOptions(word, definition, &values)
        }
    }

    private mutating func parseLongOption(
        _ word: String,
        _ definition: CommandDefinition,
        _ values: inout ParsedValues
    ) throws {
        let body = word.dropFirst(2)
        let name: String
        let attached: String?
        if let equals = body.firstIndex(of: "=") {
            name = String(body[..<equals])
            attached = String(body[body.index(after: equals)...])
        } else {
            name = String(body)
            attached = nil
        }
        let spelling = "--" + name

        if let argument = definition.argument(long: name) {
            if argument.spec.isFlag {
                guard attached == nil else { throw ParseError.flagWithValue(spelling) }
                values.append(true, at: argument.path)
            } else {
                let value = try attached ?? nextValue(for: argument, spelling: spelling)
                try record(value, for: argument, spelling: spelling, in: &values)
            }
        } else if let argument = definition.argument(inverted: name) {
            guard attached == nil else { throw ParseError.flagWithValue(spelling) }
            values.append(false, at: argument.path)
        } else {
            throw ParseError.unknownOption(spelling, suggestion: suggestion(forLong: name, definition))
        }
    }

    /// Reads a cluster of short names: flags (`-qv`) possibly ending in one option, whose value
    /// is the rest of the word (`-j4`, `-oDIR`) or else the next word.
    private mutating func parseShortOptions(
        _ word: String,
        _ definition: CommandDefinition,
        _ values: inout ParsedValues
    ) throws {
        let letters = Array(word.dropFirst())
        var position = 0
        while position < letters.count {
            let letter = letters[position]
            position += 1
            let spelling = "-" + String(letter)
            if letter == "h" {
                helpRequested = true
                continue
            }
            guard let argument = definition.argument(short: letter) else {
                // "-quiet" for "--quiet": point at the long option rather than at one letter.
                if letters.count > 1, let long = suggestion(forLong: String(letters), definition) {
                    throw ParseError.unknownOption(word, suggestion: long)
                }
                throw ParseError.unknownOption(spelling, suggestion: nil)
            }
            if argument.spec.isFlag {
                values.append(true, at: argument.path)
                continue
            }
            let rest = String(letters[position...])
            let value = rest.isEmpty ? try nextValue(for: argument, spelling: spelling) : rest
            do {
                try record(value, for: argument, spelling: spelling, in: &values)
            } catch ParseError.invalidValue where !rest.isEmpty && recognizes("-" + word, definition) {
                // "-json" read as "-j son" failed; the user surely meant the long option.
                throw ParseError.unknownOption(word, suggestion: "-" + word)
            }
            return
        }
    }

    /// The word after an option, as its value. A word that looks like an option isn't taken,
    /// so `--out --json` reports the missing value instead of writing to "--json"; "-" (stdin)
    /// and negative numbers are values.
    private mutating func nextValue(for argument: ArgumentDefinition, spelling: String) throws -> String {
        guard index < words.count, !Self.looksLikeOption(words[index]) else {
            throw ParseError.missingValue(argument.display(as: spelling))
        }
        index += 1
        return words[index - 1]
    }

    /// Converts `word` with the input's type and stores it.
    private func record(
        _ word: String,
        for argument: ArgumentDefinition,
        spelling: String?,
        in values: inout ParsedValues
    ) throws {
        guard let element = argument.spec.parseElement(word) else {
            throw ParseError.invalidValue(
                word, input: argument.display(as: spelling), reason: argument.spec.invalidValueReason)
        }
        values.append(element, at: argument.path)
    }

    /// Hands the positional words of a command to its arguments in declaration order and
    /// checks that every required input was given.
    private func finish(
        _ definition: CommandDefinition,
        positionals words: [String],
        _ values: inout ParsedValues
    ) throws {
        var remaining = words[...]
        let positionals = definition.positionals
        for (offset, argument) in positionals.enumerated() {
            switch argument.spec.arity {
            case .single, .optional:
                if let word = remaining.popFirst() {
                    try record(word, for: argument, spelling: nil, in: &values)
                } else if argument.spec.isRequired && !values.hasInput(at: argument.path) {
                    throw ParseError.missingArgument(argument.display())
                }
            case .array:
                // An array takes all it can, leaving one word for each required argument after it.
                let reserved = positionals[(offset + 1)...].filter(\.spec.isRequired).count
                let taken = remaining.prefix(max(0, remaining.count - reserved))
                remaining = remaining.dropFirst(taken.count)
                for word in taken { try record(word, for: argument, spelling: nil, in: &values) }
                if argument.spec.isRequired && !values.hasInput(at: argument.path) {
                    throw ParseError.missingArgument(argument.display() + " ...")
                }
            }
        }
        if !remaining.isEmpty { throw ParseError.unexpectedArguments(Array(remaining)) }
        for argument in definition.named where argument.spec.isRequired && !values.hasInput(at: argument.path) {
            throw ParseError.missingArgument(argument.display())
        }
    }

    /// The path named after `help`: `monsoon help downloads list` shows `downloads list`.
    private mutating func helpTarget() throws -> [any ParsableCommand.Type] {
        var target = path
        while index < words.count {
            let word = words[index]
            index += 1
            if word.hasPrefix("-") { continue }  // `help get --help` still means get's help
            if word == "help" { return target + [HelpCommand.self] }
            guard let configuration = target.last?.configuration,
                  let subcommand = configuration.subcommand(named: word) else {
                let names = target.last?.configuration.subcommandWords ?? []
                throw ParseError.unknownSubcommand(word, suggestion: SpellingSuggestion.closest(to: word, among: names + ["help"]))
            }
            target.append(subcommand)
        }
        return target
    }

    // MARK: - Global options

    /// Remembers the values of `definition`'s option groups for subcommands with the same groups.
    private mutating func carry(from definition: CommandDefinition, _ values: ParsedValues) {
        for group in definition.groups {
            var inside: Elements = [:]
            for (path, elements) in values.elements where path.starts(with: group.path) {
                inside[Array(path.dropFirst(group.path.count))] = elements
            }
            carried[group.type] = inside
        }
    }

    /// The values already given, before this command's name, to groups it shares with the
    /// commands above it. Words after the name add to them (arrays) or replace them (others).
    private func seeds(for definition: CommandDefinition) -> Elements {
        var seeded: Elements = [:]
        for group in definition.groups {
            for (inner, elements) in carried[group.type] ?? [:] {
                seeded[group.path + inner] = elements
            }
        }
        return seeded
    }

    // MARK: - Building commands

    /// Decodes and validates each command on the path, root first, and returns the last.
    private mutating func buildCommands() throws -> any ParsableCommand {
        var built: (any ParsableCommand)?
        for (depth, level) in levels.enumerated() {
            path = levels[...depth].map(\.command)  // errors show the usage of this command
            do {
                var command = try level.command.init(from: ArgumentDecoder(values: level.values, path: []))
                try command.validate()
                built = command
            } catch let error as ValidationError {
                throw ParseError.validationFailed(error.message)
            }
        }
        guard let built else { throw ParseError.declarationError("no command was parsed.") }
        return built
    }

    // MARK: - Helpers

    /// Whether `word` is an option name rather than a value: it starts with a dash, isn't
    /// just "-" (stdin), and isn't a negative number.
    static func looksLikeOption(_ word: String) -> Bool {
        guard word.count > 1, word.hasPrefix("-") else { return false }
        let second = word.dropFirst().first
        let isNumber = (second?.isNumber == true || second == ".") && Double(word) != nil
        return !isNumber
    }

    /// Whether `definition` has the option `word` starts with.
    private func recognizes(_ word: String, _ definition: CommandDefinition) -> Bool {
        if word.hasPrefix("--") {
            let name = String(word.dropFirst(2).prefix { $0 != "=" })
            return definition.argument(long: name) != nil || definition.argument(inverted: name) != nil
        }
        guard let letter = word.dropFirst().first else { return false }
        return letter == "h" || definition.argument(short: letter) != nil
    }

    private func suggestion(forLong name: String, _ definition: CommandDefinition) -> String? {
        var candidates = definition.allLongNames + ["help"]
        if levels.isEmpty && !root.configuration.version.isEmpty { candidates.append("version") }
        return SpellingSuggestion.closest(to: name, among: candidates).map { "--" + $0 }
    }
}
