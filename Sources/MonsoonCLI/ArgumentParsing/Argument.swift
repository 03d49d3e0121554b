/// A positional command-line input, matched by its place among the words that aren't options.
///
/// Positional arguments are filled in declaration order. The property's type decides how many
/// words one takes:
///
///     @Argument var source: String              // exactly one, required
///     @Argument var target: String?             // zero or one
///     @Argument var urls: [String] = []         // zero or more
///     @Argument var urls: [String]              // one or more
///
/// Words after `--` are always positional, so a value may begin with a dash.
@propertyWrapper
struct Argument<Value: Sendable>: Sendable, Decodable, ArgumentSpecProviding {
    private var storage: WrapperStorage<Value>

    var wrappedValue: Value {
        get { storage.currentValue(wrapper: "An @Argument") }
        set { storage = .value(newValue) }
    }

    var argumentSpec: ArgumentSpec? { storage.argumentSpec }

    /// Reads the parsed value; called by the `init(from:)` the compiler writes for the command.
    init(from decoder: any Decoder) throws {
        storage = .value(try ArgumentDecoder.value(of: Value.self, from: decoder))
    }

    private init(spec: ArgumentSpec) {
        storage = .definition(spec)
    }
}

extension Argument where Value: ExpressibleByArgument {
    /// A single argument with a default value, used when the word isn't given.
    init(wrappedValue: Value, help: String? = nil, valueName: String? = nil) {
        self.init(spec: .value(
            of: Value.self, kind: .positional, arity: .single, help: help, valueName: valueName,
            defaultValue: wrappedValue, defaultDescription: wrappedValue.defaultValueDescription))
    }

    /// A required single argument.
    init(help: String? = nil, valueName: String? = nil) {
        self.init(spec: .value(
            of: Value.self, kind: .positional, arity: .single, help: help, valueName: valueName,
            defaultValue: nil, defaultDescription: nil))
    }
}

extension Argument {
    /// An optional single argument: nil when the word isn't given.
    init<Element: ExpressibleByArgument>(
        help: String? = nil,
        valueName: String? = nil
    ) where Value == Element? {
        self.init(spec: .value(
            of: Element.self, kind: .positional, arity: .optional, help: help, valueName: valueName,
            defaultValue: nil, defaultDescription: nil))
    }

    /// An optional single argument with an initial value.
    init<Element: ExpressibleByArgument>(
        wrappedValue: Element?,
        help: String? = nil,
        valueName: String? = nil
    ) where Value == Element? {
        self.init(spec: .value(
            of: Element.self, kind: .positional, arity: .optional, help: help, valueName: valueName,
            defaultValue: wrappedValue.map { $0 as Element? },
            defaultDescription: wrappedValue?.defaultValueDescription))
    }

    /// Zero or more arguments; given at least one, the words replace the default.
    init<Element: ExpressibleByArgument>(
        wrappedValue: [Element],
        help: String? = nil,
        valueName: String? = nil
    ) where Value == [Element] {
        let description = wrappedValue.map(\.defaultValueDescription).joined(separator: ", ")
        self.init(spec: .value(
            of: Element.self, kind: .positional, arity: .array, help: help, valueName: valueName,
            defaultValue: wrappedValue, defaultDescription: description.isEmpty ? nil : description))
    }

    /// One or more arguments: declared without a default, at least one word is required.
    init<Element: ExpressibleByArgument>(
        help: String? = nil,
        valueName: String? = nil
    ) where Value == [Element] {
        self.init(spec: .value(
            of: Element.self, kind: .positional, arity: .array, help: help, valueName: valueName,
            defaultValue: nil, defaultDescription: nil))
    }
}
