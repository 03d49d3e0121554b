/// The name, help text and subcommands of a `ParsableCommand`.
struct CommandConfiguration: Sendable {
    /// The word that selects the command; nil derives it from the type name (`Get` → `get`).
    var commandName: String?
    /// Other words that select the command (`subscribe` for `add`), listed beside its name in help.
    var aliases: [String]
    /// A one-line description, shown in help and in the parent's list of subcommands.
    var abstract: String
    /// Longer help text, shown after the abstract. Lines are wrapped at 80 columns, except
    /// lines that begin with a space, which are shown as written (for examples).
    var discussion: String
    /// The whole usage line after "Usage: ", starting with the command path
    /// ("monsoon get [<options>] <url> ..."); nil generates it from the declarations.
    var usage: String?
    /// The version printed by `--version`; only the root command's is used, and an empty
    /// string means no `--version` option.
    var version: String
    /// The commands selected by a word after this command's own options.
    var subcommands: [any ParsableCommand.Type]
    /// The subcommand to run when none is named; nil makes a missing subcommand an error.
    var defaultSubcommand: (any ParsableCommand.Type)?

    init(
        commandName: String? = nil,
        abstract: String = "",
        discussion: String = "",
        usage: String? = nil,
        version: String = "",
        subcommands: [any ParsableCommand.Type] = [],
        defaultSubcommand: (any ParsableCommand.Type)? = nil,
        aliases: [String] = []
    ) {
        self.commandName = commandName
        self.aliases = aliases
        self.abstract = abstract
        self.discussion = discussion
        self.usage = usage
        self.version = version
        self.subcommands = subcommands
        self.defaultSubcommand = defaultSubcommand
    }

    /// The subcommand selected by `word`, if any.
    func subcommand(named word: String) -> (any ParsableCommand.Type)? {
        subcommands.first { $0.commandNames.contains(word) }
    }

    /// Every word that selects a subcommand, names and aliases, for messages and suggestions.
    var subcommandWords: [String] {
        subcommands.flatMap { $0.commandNames }
    }
}
