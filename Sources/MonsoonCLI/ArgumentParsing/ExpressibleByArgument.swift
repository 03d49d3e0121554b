/// A type whose values can be read from one command-line word, such as the `4` in `--jobs 4`.
///
/// `String`, `Int`, `Double` and `Bool` conform. For an enum with `String` raw values, declare
/// the conformance and also adopt `CaseIterable`, so help and errors can list the allowed words:
///
///     enum Format: String, CaseIterable, ExpressibleByArgument { case text, json }
///
/// The protocol refines `Sendable` because parsed values live inside the `Sendable` property
/// wrappers of a command; every type that makes sense on a command line already is.
protocol ExpressibleByArgument: Sendable {
    /// Creates a value from one command-line word, or returns nil when the word isn't valid.
    init?(argument: String)

    /// Why a rejected word is invalid. It completes the sentence
    /// "The value 'x' is invalid for '--jobs <jobs>': …", so it's lowercase with no final period.
    static var invalidValueReason: String { get }

    /// Every accepted word, shown in help and in errors; empty when any word of the right form
    /// is accepted.
    static var allValueStrings: [String] { get }

    /// How a default value is shown in help, as in "(default: 4)".
    var defaultValueDescription: String { get }
}

extension ExpressibleByArgument {
    static var invalidValueReason: String {
        let allowed = allValueStrings
        guard !allowed.isEmpty else { return "not a valid value" }
        return "expected one of " + allowed.map { "'\($0)'" }.joined(separator: ", ")
    }

    static var allValueStrings: [String] { [] }

    var defaultValueDescription: String { String(describing: self) }
}

extension ExpressibleByArgument where Self: RawRepresentable, RawValue == String {
    init?(argument: String) {
        self.init(rawValue: argument)
    }

    var defaultValueDescription: String { rawValue }
}

extension ExpressibleByArgument where Self: RawRepresentable & CaseIterable, RawValue == String {
    static var allValueStrings: [String] { allCases.map(\.rawValue) }
}

extension String: ExpressibleByArgument {
    init?(argument: String) {
        self = argument
    }
}

extension Int: ExpressibleByArgument {
    init?(argument: String) {
        self.init(argument, radix: 10)
    }

    static var invalidValueReason: String { "not a whole number" }
}

extension Double: ExpressibleByArgument {
    init?(argument: String) {
        self.init(argument)
    }

    static var invalidValueReason: String { "not a number" }
}

extension Bool: ExpressibleByArgument {
    init?(argument: String) {
        switch argument.lowercased() {
        case "true": self = true
        case "false": self = false
        default: return nil
        }
    }

    static var allValueStrings: [String] { ["true", "false"] }
}
