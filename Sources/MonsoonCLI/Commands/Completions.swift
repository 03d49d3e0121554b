/// `monsoon completions bash|zsh|fish`: a completion script, which asks `monsoon` at each Tab.
struct Completions: RunnableCommand {
    static let configuration = CommandConfiguration(
        commandName: "completions",
        abstract: "Print a shell completion script (bash, zsh or fish).",
        discussion: """
            The script asks monsoon (as found on PATH) what fits at each Tab: commands, options, and the values \
            an option takes. Install it where your shell looks for completions:

              monsoon completions bash > ~/.local/share/bash-completion/completions/monsoon
              monsoon completions zsh > "${fpath[1]}/_monsoon"
              monsoon completions fish > ~/.config/fish/completions/monsoon.fish
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The shell.", valueName: "shell") var shell: CompletionScript.Shell
    init() {}

    func run(_ context: CommandContext) async throws -> Int32 {
        context.output.write(CompletionScript.script(program: Monsoon.configuration.commandName, shell: shell))
        return ExitStatus.success
    }
}
