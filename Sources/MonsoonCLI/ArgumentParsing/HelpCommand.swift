/// `help [<command> ...]`: answered by the parser itself; declared so that `help help` has a
/// page and command lists a row.
struct HelpCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "help", abstract: "Show the help of a command (or of the program, with no command).")

    @Argument(help: "The command to explain, like 'get' or 'downloads clear'.", valueName: "command")
    var command: [String] = []

    init() {}
}
