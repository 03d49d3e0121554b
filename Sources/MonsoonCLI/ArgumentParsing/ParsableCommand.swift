/// A command of the CLI: its inputs as property wrappers and its name, help and subcommands in
/// `configuration`.
///
///     struct Get: ParsableCommand {
///         static let configuration = CommandConfiguration(commandName: "get", abstract: "Download URLs.")
///         @Option(name: .shortAndLong) var jobs = 4
///         @Argument(valueName: "url") var urls: [String] = []
///         init() {}
///     }
///
/// `CommandParser.parse` returns the chosen command, parsed and validated; running it is up to
/// the caller, through its own protocol that adds `run()`.
protocol ParsableCommand: ParsableArguments {
    /// The command's name, help text and subcommands.
    static var configuration: CommandConfiguration { get }
}

extension ParsableCommand {
    static var configuration: CommandConfiguration { CommandConfiguration() }

    /// The name that selects the command: `configuration.commandName`, or else the type name
    /// in kebab case.
    static var resolvedCommandName: String {
        configuration.commandName ?? ArgumentNaming.kebabCase(String(describing: self))
    }

    /// The name, then the aliases: every word that selects the command.
    static var commandNames: [String] {
        [resolvedCommandName] + configuration.aliases
    }

    /// The generated help text of this command, as `--help` prints it when the command is the
    /// root.
    static func helpMessage() -> String {
        HelpGenerator.helpText(for: [self])
    }
}
