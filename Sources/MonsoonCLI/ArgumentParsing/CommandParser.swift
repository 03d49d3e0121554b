/// The entry point of the argument parser.
///
///     switch CommandParser.parse(Array(CommandLine.arguments.dropFirst()), root: Monsoon.self) {
///     case .command(let command): try await (command as? any RunnableCommand)?.run(context)
///     case .help(let text), .version(let text): print(text)
///     case .usageError(let message, let usage):
///         printToStandardError(CommandParser.usageErrorText(message: message, usage: usage, root: Monsoon.self))
///         exit(2)
///     }
enum CommandParser {
    /// Parses `arguments` (without the program name) against `root` and returns the command to
    /// run (already validated), or the help, version or usage error to print instead.
    ///
    /// - Options may come in any order among positional arguments; `--` ends option parsing.
    /// - The first word that names a subcommand hands the rest of the line to it; options of an
    ///   `@OptionGroup` type that both commands include are accepted on either side of it.
    /// - `-h`/`--help` anywhere before `--`, or `help [subcommand...]`, returns the help of the
    ///   command reached; `--version` before any subcommand returns the root's version.
    static func parse(_ arguments: [String], root: any ParsableCommand.Type) -> ParseResult {
        var session = ParsingSession(arguments: arguments, root: root)
        return session.run()
    }

    /// The standard report of a usage error, three lines without a final newline:
    ///
    ///     Error: Unknown option '--outt'. Did you mean '--out'?
    ///     Usage: monsoon get [<options>] [<url> ...]
    ///       See 'monsoon get --help' for more information.
    ///
    /// The command named in the last line is read from the start of `usage`, following
    /// subcommand names down from `root`.
    static func usageErrorText(message: String, usage: String, root: any ParsableCommand.Type) -> String {
        var names: [String] = []
        var command: (any ParsableCommand.Type)? = nil
        for word in usage.split(separator: " ").map(String.init) {
            if let current = command {
                guard let subcommand = current.configuration.subcommand(named: word) else { break }
                command = subcommand
            } else {
                guard word == root.resolvedCommandName else { break }
                command = root
            }
            names.append(word)
        }
        if names.isEmpty { names = [root.resolvedCommandName] }
        return """
            Error: \(message)
            \(HelpGenerator.usageBlock(usage))
              See '\(names.joined(separator: " ")) --help' for more information.
            """
    }
}
