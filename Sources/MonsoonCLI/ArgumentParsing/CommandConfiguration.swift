/// The name, help text and subcommands of a `ParsableCommand`.
struct CommandConfiguration: Sendable {
    var commandName: String
    /// A one-line description, shown in help and in the parent's list of commands.
    var abstract = ""
    /// Longer help, after the abstract. Lines are wrapped at 80 columns, except lines that begin
    /// with a space, which are shown as written (for examples).
    var discussion = ""
    /// The version printed by `--version`; only the root's counts, and "" means no `--version`.
    var version = ""
    /// The commands selected by a word after this command's options.
    var subcommands: [any ParsableCommand.Type] = []
    /// The subcommand run when none is named (`monsoon queue` lists it); it also takes the
    /// options this command doesn't know (`monsoon queue --json`).
    var defaultSubcommand: (any ParsableCommand.Type)?
    /// Other words that select the command (`subscribe` for `add`), shown beside its name.
    var aliases: [String] = []
}
