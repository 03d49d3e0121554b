/// A type whose stored properties are command-line inputs, declared with `@Option`, `@Flag`,
/// `@Argument` and `@OptionGroup`: a command, or a group of inputs shared by commands.
///
/// The parser learns the inputs by running `init()` (see `ParsingContext`), so declaration
/// order is help order and positional order. Other stored properties need a default.
protocol ParsableArguments: Sendable {
    /// Makes the command from its declarations; conforming types write `init() {}`.
    init()

    /// Checks the parsed values together; throw `ValidationError` to reject the command line.
    /// Runs after parsing, before the command is returned. Does nothing by default.
    mutating func validate() throws
}

extension ParsableArguments {
    mutating func validate() throws {}
}

/// A command of the CLI: its inputs as property wrappers, its name, help and subcommands in
/// `configuration`. `CommandParser.parse` returns the chosen command, parsed and validated;
/// running it is up to the caller's own protocol that adds `run`.
protocol ParsableCommand: ParsableArguments {
    static var configuration: CommandConfiguration { get }
}

extension ParsableCommand {
    /// The name, then the aliases: every word that selects the command.
    static var commandNames: [String] {
        [configuration.commandName] + configuration.aliases
    }
}
