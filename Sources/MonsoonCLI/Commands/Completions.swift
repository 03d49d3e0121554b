import FoundationEssentials

/// `monsoon completions bash|zsh|fish|man`: a completion script, which asks `monsoon` at each Tab,
/// or the manual page.
struct Completions: RunnableCommand {
    static let configuration = CommandConfiguration(
        commandName: "completions",
        abstract: "Print a shell completion script (bash, zsh or fish), or the manual page (man).",
        discussion: """
            The script asks monsoon (as found on PATH) what fits at each Tab: commands, options, the values \
            an option takes, and the podcasts of your library. Install it where your shell looks for completions \
            ('make install' does, for all three):

              monsoon completions bash > ~/.local/share/bash-completion/completions/monsoon
              monsoon completions zsh > "${fpath[1]}/_monsoon"
              monsoon completions fish > ~/.config/fish/completions/monsoon.fish

            'man' prints monsoon(1) in mdoc, made from the commands' declarations (dated $SOURCE_DATE_EPOCH when set, \
            else today):

              monsoon completions man | man -l -
            """)
    enum Output: String, CaseIterable, ExpressibleByArgument { case bash, zsh, fish, man }

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The shell, or man.", valueName: "shell") var output: Output
    init() {}

    func run(_ context: CommandContext) async throws -> Int32 {
        let program = Monsoon.configuration.commandName
        switch output {
        case .bash: context.output.write(CompletionScript.script(program: program, shell: .bash))
        case .zsh: context.output.write(CompletionScript.script(program: program, shell: .zsh))
        case .fish: context.output.write(CompletionScript.script(program: program, shell: .fish))
        case .man:
            // Reproducible builds set it, so that the page is the same byte for byte.
            let epoch = context.environment["SOURCE_DATE_EPOCH"].flatMap(TimeInterval.init)
            context.output.write(Monsoon.manual(date: epoch.map { Date(timeIntervalSince1970: $0) } ?? Date()))
        }
        return ExitStatus.success
    }
}
