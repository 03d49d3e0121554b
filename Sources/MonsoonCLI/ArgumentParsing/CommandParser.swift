/// Reads a command line against the commands declared from a root command.
///
/// Options may come in any order among arguments, and `--` ends them. The first word naming a
/// subcommand hands the rest of the line to it; options of an `@OptionGroup` type both commands
/// include are accepted on either side of it. `-h`/`--help` anywhere before `--`, or
/// `help [<command> ...]`, asks for the help of the command reached.
struct CommandParser {
    /// What the command line asks for.
    enum Result {
        /// The command to run, parsed and validated.
        case command(any ParsableCommand)
        /// Help or the version, for standard output (exit status 0).
        case output(String)
        /// A usage error, for standard error (exit status 2), e.g.
        ///
        ///     Error: Unknown option '--outt'. Did you mean '--out'?
        ///     Usage: monsoon get [<options>] [<url> ...]
        ///       See 'monsoon get --help' for more information.
        case usageError(String)
    }

    private let words: [String]
    private var index = 0
    /// The commands reached, root first; errors show the usage of the last.
    private var path: [any ParsableCommand.Type]
    /// For each command of `path`, the words read for each of its declarations.
    private var levels: [[[String]]] = []
    private var helpRequested: Bool
    /// The words read for group options so far, by group type and option name.
    private var carried: [ObjectIdentifier: [String: [String]]] = [:]

    /// Parses `arguments` (without the program name) against `root`.
    static func parse(_ arguments: [String], root: any ParsableCommand.Type) -> Result {
        // -h wins over any mistake, even one found before it is reached; after "--" it's a word.
        let help = arguments.prefix { $0 != "--" }.contains { $0 == "-h" || $0 == "--help" }
        var parser = CommandParser(words: arguments, path: [root], helpRequested: help)
        do {
            if let output = try parser.readCommands() { return .output(output) }
            if parser.helpRequested { return .output(HelpGenerator.help(parser.path)) }
            let path = parser.path
            var command: any ParsableCommand = try ParsingContext.make(root, words: parser.levels[0])
            for depth in path.indices.dropFirst() {
                parser.path = Array(path[...depth])  // a validation error shows this command's usage
                command = try ParsingContext.make(path[depth], words: parser.levels[depth])
            }
            return .command(command)
        } catch {
            if parser.helpRequested { return .output(HelpGenerator.help(parser.path)) }
            return .usageError(HelpGenerator.usageError("\(error)", path: parser.path))
        }
    }

    /// Reads the words of each command down the path; returns the text of `--version` or of
    /// `help <command>` when a word asks for it.
    private mutating func readCommands() throws -> String? {
        while true {
            let configuration = path[path.count - 1].configuration
            let declarations = ParsingContext.declarations(of: path[path.count - 1])
            var values = declarations.map { declaration in
                declaration.group.flatMap { carried[$0]?[declaration.names.first ?? ""] } ?? []
            }
            var positionals: [String] = []
            var subcommand: (any ParsableCommand.Type)?
            while subcommand == nil && index < words.count {
                let word = words[index]
                index += 1
                if word == "--" {
                    positionals += words[index...]
                    index = words.count
                } else if word == "-h" || word == "--help" {
                    continue
                } else if word == "--version" && path.count == 1 && !configuration.version.isEmpty {
                    return configuration.version
                } else if Self.isOption(word, declarations) {
                    if let fallback = configuration.defaultSubcommand, !declarations.contains(where: { $0.names.contains(Self.name(word)) }) {
                        index -= 1  // an option this command doesn't know is its default subcommand's
                        subcommand = fallback
                    } else {
                        try readOption(word, declarations, &values)
                    }
                } else if configuration.subcommands.isEmpty {
                    positionals.append(word)
                } else if word == "help" {
                    return HelpGenerator.help(try helpTarget())
                } else {
                    subcommand = try Self.subcommand(word, of: configuration)
                }
            }
            try Self.assign(positionals, declarations, &values)
            levels.append(values)
            if subcommand == nil && !configuration.subcommands.isEmpty && !helpRequested {
                guard let fallback = configuration.defaultSubcommand else {
                    let names = configuration.subcommands.map { $0.configuration.commandName }.joined(separator: ", ")
                    throw ValidationError("Missing command; expected one of: \(names).")
                }
                subcommand = fallback
            }
            guard let subcommand else { return nil }
            for (declaration, given) in zip(declarations, values) where declaration.kind != .argument {
                if let group = declaration.group { carried[group, default: [:]][declaration.names.first ?? ""] = given }
            }
            path.append(subcommand)
        }
    }

    /// Reads `--name`, `--name=value` or a cluster of short names (`-qv`, `-j4`, `-qo DIR`),
    /// and the value of an option from the next word when it isn't attached.
    private mutating func readOption(_ word: String, _ declarations: [Declaration], _ values: inout [[String]]) throws {
        if !word.hasPrefix("--") && word.count > 2 && declarations.contains(where: { $0.names.contains("-" + word) }) {
            throw ValidationError("Unknown option '\(word)'. Did you mean '-\(word)'?")  // "-json" isn't "-j son"
        }
        if word.hasPrefix("--") {
            let name = Self.name(word)
            guard let found = declarations.firstIndex(where: { $0.names.contains(name) }) else {
                throw Self.unknownOption(name, suggesting: name, declarations, atRoot: path.count == 1)
            }
            let attached = word.firstIndex(of: "=").map { String(word[word.index(after: $0)...]) }
            if declarations[found].kind == .flag {
                guard attached == nil else { throw ValidationError("The flag '\(name)' does not take a value.") }
                values[found].append("")
            } else {
                try Self.record(attached ?? nextValue(declarations[found], name, declarations), at: found, name, declarations, &values)
            }
            return
        }
        var letters = word.dropFirst()
        while let letter = letters.popFirst() {
            let name = "-" + String(letter)
            if letter == "h" {
                helpRequested = true
                continue
            }
            guard let found = declarations.firstIndex(where: { $0.names.contains(name) }) else {
                // "-quiet" for "--quiet": point at the long option rather than at one letter.
                throw word.count > 2 ? Self.unknownOption(word, suggesting: "-" + word, declarations, atRoot: path.count == 1)
                    : ValidationError("Unknown option '\(name)'.")
            }
            if declarations[found].kind == .flag {
                values[found].append("")
            } else {
                let value = letters.isEmpty ? try nextValue(declarations[found], name, declarations) : String(letters)
                return try Self.record(value, at: found, name, declarations, &values)
            }
        }
    }

    /// The word after an option, as its value; a word that is an option itself isn't taken, so
    /// `--out --json` says the value is missing.
    private mutating func nextValue(_ declaration: Declaration, _ spelling: String, _ declarations: [Declaration]) throws -> String {
        guard index < words.count, !Self.isOption(words[index], declarations) else {
            throw ValidationError("Missing value for '\(declaration.display(spelling))'.")
        }
        index += 1
        return words[index - 1]
    }

    /// The path named after `help`: `monsoon help downloads clear` shows `downloads clear`.
    private func helpTarget() throws -> [any ParsableCommand.Type] {
        var target = path
        for word in words[index...] where !word.hasPrefix("-") {
            if word == "help" { return target + [HelpCommand.self] }
            target.append(try Self.subcommand(word, of: target[target.count - 1].configuration))
        }
        return target
    }

    /// Hands the positional words to the arguments in declaration order and checks that each
    /// required one got its word.
    private static func assign(_ positionals: [String], _ declarations: [Declaration], _ values: inout [[String]]) throws {
        var rest = positionals[...]
        for (offset, declaration) in declarations.enumerated() where declaration.kind == .argument {
            let taken = declaration.isArray ? rest : rest.prefix(1)
            rest = rest.dropFirst(taken.count)
            for word in taken { try record(word, at: offset, nil, declarations, &values) }
            if declaration.isRequired && taken.isEmpty {
                throw ValidationError("Missing expected argument '\(declaration.display())\(declaration.isArray ? " ..." : "")'.")
            }
        }
        guard rest.isEmpty else {
            let quoted = rest.map { "'\($0)'" }.joined(separator: ", ")
            throw ValidationError((rest.count == 1 ? "Unexpected argument " : "Unexpected arguments ") + quoted + ".")
        }
    }

    /// Checks a value against its declaration's type and keeps it.
    private static func record(
        _ value: String, at offset: Int, _ spelling: String?, _ declarations: [Declaration], _ values: inout [[String]]
    ) throws {
        let declaration = declarations[offset]
        guard declaration.accepts(value) else {
            throw ValidationError(
                "The value '\(value)' is invalid for '\(declaration.display(spelling))': \(declaration.invalidValueReason).")
        }
        values[offset].append(value)
    }

    private static func subcommand(_ word: String, of configuration: CommandConfiguration) throws -> any ParsableCommand.Type {
        if let found = configuration.subcommands.first(where: { $0.commandNames.contains(word) }) { return found }
        let names = configuration.subcommands.flatMap { $0.commandNames } + ["help"]
        throw ValidationError("Unknown command '\(word)'." + didYouMean(SpellingSuggestion.closest(to: word, among: names)))
    }

    private static func unknownOption(_ spelling: String, suggesting long: String, _ declarations: [Declaration], atRoot: Bool) -> ValidationError {
        let names = declarations.flatMap(\.names).filter { $0.hasPrefix("--") } + ["--help"] + (atRoot ? ["--version"] : [])
        let closest = SpellingSuggestion.closest(to: String(long.dropFirst(2)), among: names.map { String($0.dropFirst(2)) })
        return ValidationError("Unknown option '\(spelling)'." + didYouMean(closest.map { "--" + $0 }))
    }

    private static func didYouMean(_ suggestion: String?) -> String {
        suggestion.map { " Did you mean '\($0)'?" } ?? ""
    }

    /// `--out` for `--out=DIR`.
    private static func name(_ word: String) -> String {
        String(word.prefix { $0 != "=" })
    }

    /// Whether `word` is an option rather than a value: it starts with a dash and isn't "-"
    /// (standard input) or a negative number, unless the command declares it (`-4`).
    static func isOption(_ word: String, _ declarations: [Declaration]) -> Bool {
        guard word.count > 1, word.hasPrefix("-") else { return false }
        let isNumber = Double(word) != nil && word.dropFirst().first?.isLetter == false
        return !isNumber || declarations.contains { $0.names.contains(word) }
    }
}
