/// Reads a command line against the commands declared from a root command.
///
/// Options may come in any order among arguments, and `--` ends them. The first word naming a
/// subcommand hands the rest of the line to it; options of an `@OptionGroup` type both commands
/// include are accepted on either side of it. `-h`/`--help` anywhere before `--`, or
/// `help [<command> ...]`, asks for the help of the command reached. Only the last command is
/// made and validated: the declaration check makes sure it includes the groups above it.
struct CommandParser {
    /// What the command line asks for.
    enum Result {
        /// The command to run, parsed and validated.
        case command(any ParsableCommand)
        /// Help or the version, for standard output (exit status 0).
        case output(String)
        /// A usage error for standard error (exit status 2): "monsoon: …", the usage, a pointer to help.
        case usageError(String)
    }

    private let words: [String]
    private var index = 0
    /// The commands reached, root first; errors show the usage of the last.
    private var path: [any ParsableCommand.Type]
    /// The words read for each declaration of the last command.
    private var values: [[String]] = []
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
            return .command(try ParsingContext.make(parser.path[parser.path.count - 1], words: parser.values))
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
            values = declarations.map { declaration in
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
                    let name = word.hasPrefix("--") ? String(word.prefix { $0 != "=" }) : word
                    if let fallback = configuration.defaultSubcommand, !declarations.contains(where: { $0.names.contains(name) }) {
                        index -= 1  // an option this command doesn't know is its default subcommand's
                        subcommand = fallback
                    } else {
                        try readOption(word, declarations)
                    }
                } else if configuration.subcommands.isEmpty {
                    positionals.append(word)
                } else if word == "help" {
                    return HelpGenerator.help(try helpTarget())
                } else {
                    subcommand = try Self.subcommand(word, of: configuration)
                }
            }
            try assign(positionals, declarations)
            if subcommand == nil && !configuration.subcommands.isEmpty && !helpRequested {
                guard let fallback = configuration.defaultSubcommand else {
                    let names = configuration.subcommands.map { $0.configuration.commandName }
                    throw ValidationError("missing command; expected one of: \(names.joined(separator: ", "))")
                }
                subcommand = fallback
            }
            guard let subcommand else { return nil }
            for (declaration, given) in zip(declarations, values) {
                if let group = declaration.group { carried[group, default: [:]][declaration.names.first ?? ""] = given }
            }
            path.append(subcommand)
        }
    }

    /// Reads `--name`, `--name=value` or `-n`, and the value of an option from the next word
    /// when it isn't attached.
    private mutating func readOption(_ word: String, _ declarations: [Declaration]) throws {
        let name = word.hasPrefix("--") ? String(word.prefix { $0 != "=" }) : word
        guard let found = declarations.firstIndex(where: { $0.names.contains(name) }) else {
            // "-json" for "--json": suggest the long option.
            let names = declarations.flatMap(\.names).filter { $0.hasPrefix("--") } + ["--help"] + (path.count == 1 ? ["--version"] : [])
            let closest = SpellingSuggestion.closest(to: String(name.drop { $0 == "-" }), among: names.map { String($0.dropFirst(2)) })
            throw ValidationError("unknown option '\(name)'" + (closest.map { "; did you mean '--\($0)'?" } ?? ""))
        }
        let attached = name == word ? nil : String(word.dropFirst(name.count + 1))
        guard declarations[found].kind == .option else {
            guard attached == nil else { throw ValidationError("the flag '\(name)' does not take a value") }
            return values[found].append("")
        }
        try record(attached ?? nextValue(declarations[found], name, declarations), at: found, name, declarations)
    }

    /// The word after an option, as its value; a word that is an option itself isn't taken, so
    /// `--out --json` says the value is missing.
    private mutating func nextValue(_ declaration: Declaration, _ spelling: String, _ declarations: [Declaration]) throws -> String {
        guard index < words.count, !Self.isOption(words[index], declarations) else {
            throw ValidationError("missing value for '\(declaration.display(spelling))'")
        }
        index += 1
        return words[index - 1]
    }

    /// Hands the positional words to the arguments in declaration order and checks that each
    /// required one got its word.
    private mutating func assign(_ positionals: [String], _ declarations: [Declaration]) throws {
        var rest = positionals[...]
        for (offset, declaration) in declarations.enumerated() where declaration.kind == .argument {
            let taken = declaration.isArray ? rest : rest.prefix(1)
            rest = rest.dropFirst(taken.count)
            for word in taken { try record(word, at: offset, nil, declarations) }
            if declaration.isRequired && taken.isEmpty {
                throw ValidationError("missing expected argument '\(declaration.display())\(declaration.isArray ? " ..." : "")'")
            }
        }
        guard rest.isEmpty else {
            let quoted = rest.map { "'\($0)'" }.joined(separator: ", ")
            throw ValidationError((rest.count == 1 ? "unexpected argument " : "unexpected arguments ") + quoted)
        }
    }

    /// Checks a value against its declaration's type and keeps it.
    private mutating func record(_ value: String, at offset: Int, _ spelling: String?, _ declarations: [Declaration]) throws {
        let declaration = declarations[offset]
        guard declaration.accepts(value) else {
            let closest = SpellingSuggestion.closest(to: value, among: declaration.allowedValues)
            throw ValidationError("the value '\(value)' is invalid for '\(declaration.display(spelling))': \(declaration.invalidValueReason)"
                + (closest.map { "; did you mean '\($0)'?" } ?? ""))
        }
        values[offset].append(value)
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

    private static func subcommand(_ word: String, of configuration: CommandConfiguration) throws -> any ParsableCommand.Type {
        if let found = configuration.subcommands.first(where: { $0.commandNames.contains(word) }) { return found }
        let closest = SpellingSuggestion.closest(to: word, among: configuration.subcommands.flatMap { $0.commandNames } + ["help"])
        throw ValidationError("unknown command '\(word)'" + (closest.map { "; did you mean '\($0)'?" } ?? ""))
    }

    /// Whether `word` is an option rather than a value: it starts with a dash and isn't "-"
    /// (standard input) or a negative number, unless the command declares it (`-4`).
    private static func isOption(_ word: String, _ declarations: [Declaration]) -> Bool {
        guard word.count > 1, word.hasPrefix("-") else { return false }
        return Double(word) == nil || word.dropFirst().first?.isLetter == true || declarations.contains { $0.names.contains(word) }
    }
}
