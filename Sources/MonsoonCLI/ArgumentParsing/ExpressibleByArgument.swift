/// A type whose values can be read from one command-line word, such as the `4` in `--jobs 4`.
///
/// `String`, `Int` and `Double` conform. A `String` enum adopts `CaseIterable` too, so help and
/// errors list its words: `enum Shell: String, CaseIterable, ExpressibleByArgument { case bash, zsh }`.
protocol ExpressibleByArgument: Sendable {
    /// Creates a value from one word, or returns nil when the word isn't valid.
    init?(argument: String)

    /// Completes "The value 'x' is invalid for '--jobs <n>': …", so lowercase with no period.
    static var invalidValueReason: String { get }

    /// Every accepted word, for help and errors; empty when any word of the right form is.
    static var allValueStrings: [String] { get }
}

extension ExpressibleByArgument {
    static var invalidValueReason: String {
        allValueStrings.isEmpty ? "not a valid value" : "expected one of " + allValueStrings.map { "'\($0)'" }.joined(separator: ", ")
    }

    static var allValueStrings: [String] { [] }
}

extension ExpressibleByArgument where Self: RawRepresentable & CaseIterable, RawValue == String {
    init?(argument: String) { self.init(rawValue: argument) }

    static var allValueStrings: [String] { allCases.map(\.rawValue) }
}

extension String: ExpressibleByArgument {
    init?(argument: String) { self = argument }
}

extension Int: ExpressibleByArgument {
    init?(argument: String) { self.init(argument, radix: 10) }

    static var invalidValueReason: String { "not a whole number" }
}

extension Double: ExpressibleByArgument {
    init?(argument: String) { self.init(argument) }

    static var invalidValueReason: String { "not a number" }
}
