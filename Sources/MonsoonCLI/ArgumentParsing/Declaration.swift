/// One input a command declares with `@Option`, `@Flag` or `@Argument`, as the parser, help
/// and completions see it. `ParsingContext` collects them while the command's `init()` runs.
struct Declaration {
    enum Kind { case option, flag, argument }

    var kind: Kind
    /// The spellings, as declared (`-o`, `--out`); empty for an argument.
    var names: [String]
    var help: String
    /// The word shown in `<…>`; empty for a flag.
    var valueName: String
    /// An array argument, which takes every positional word left.
    var isArray = false
    var isRequired = false
    /// The default as help shows it; for a flag, set only when it's on by default (a mistake).
    var defaultText: String?
    var allowedValues: [String] = []
    /// Candidates the program finds at Tab, besides `allowedValues`.
    var completion: CompletionKind?
    var invalidValueReason = ""
    var accepts: (String) -> Bool = { _ in true }
    /// The `@OptionGroup` type it was declared in: a subcommand including the same group gets
    /// the values given before its name, which is what makes the group's options global.
    var group: ObjectIdentifier?

    /// How usage and errors show it: `--out <dir>` (with the user's spelling), `--json`, `<url>`.
    func display(_ spelling: String? = nil) -> String {
        let name = spelling ?? names.first { $0.hasPrefix("--") } ?? names.first ?? ""
        switch kind {
        case .argument: return "<\(valueName)>"
        case .flag: return name
        case .option: return "\(name) <\(valueName)>"
        }
    }
}
