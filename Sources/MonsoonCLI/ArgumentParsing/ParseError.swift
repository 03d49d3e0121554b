/// A mistake found in the command line; `message` is what the user is shown.
enum ParseError: Error, Equatable {
    /// An option name the command doesn't have, with a close spelling it does have.
    case unknownOption(String, suggestion: String?)
    /// An option given as the last word, or followed by another option instead of its value.
    /// The associated text is the option with its value name: "--out <out>".
    case missingValue(String)
    /// A word that the option's or argument's type rejected.
    case invalidValue(String, input: String, reason: String)
    /// A flag written with a value: `--json=yes`.
    case flagWithValue(String)
    /// A required option or positional argument that wasn't given.
    case missingArgument(String)
    /// Positional words left after every argument took its share.
    case unexpectedArguments([String])
    /// A word in subcommand position that names no subcommand, with a close spelling.
    case unknownSubcommand(String, suggestion: String?)
    /// A command with subcommands (and no default subcommand) given none.
    case missingSubcommand([String])
    /// The message of a `ValidationError` thrown by `validate()`.
    case validationFailed(String)
    /// A mistake in a command's declaration rather than in the command line.
    case declarationError(String)

    var message: String {
        switch self {
        case .unknownOption(let name, let suggestion):
            return "Unknown option '\(name)'." + Self.didYouMean(suggestion)
        case .missingValue(let input):
            return "Missing value for '\(input)'."
        case .invalidValue(let value, let input, let reason):
            return "The value '\(value)' is invalid for '\(input)': \(reason)."
        case .flagWithValue(let name):
            return "The flag '\(name)' does not take a value."
        case .missingArgument(let input):
            return "Missing expected argument '\(input)'."
        case .unexpectedArguments(let words):
            let quoted = words.map { "'\($0)'" }.joined(separator: ", ")
            return (words.count == 1 ? "Unexpected argument " : "Unexpected arguments ") + quoted + "."
        case .unknownSubcommand(let name, let suggestion):
            return "Unknown command '\(name)'." + Self.didYouMean(suggestion)
        case .missingSubcommand(let names):
            return "Missing command; expected one of: \(names.joined(separator: ", "))."
        case .validationFailed(let message):
            return message
        case .declarationError(let problem):
            return "Internal error in a command declaration: \(problem)"
        }
    }

    private static func didYouMean(_ suggestion: String?) -> String {
        suggestion.map { " Did you mean '\($0)'?" } ?? ""
    }
}
