/// A named command-line input that takes a value: `--jobs 4`, `--jobs=4`, `-j 4` or `-j4`.
///
/// The property's type decides how the option behaves:
///
///     @Option var name: String                  // required
///     @Option var jobs = 4                      // may be left out; help shows "(default: 4)"
///     @Option var home: String?                 // may be left out; nil when it is
///     @Option var header: [String] = []         // repeatable: --header A --header B
///
/// Values are read through `ExpressibleByArgument`. Names default to `.long`, the property
/// name in kebab case; `valueName` is the word shown in `<…>` (the property name by default).
@propertyWrapper
struct Option<Value: Sendable>: Sendable, Decodable, ArgumentSpecProviding {
    private var storage: WrapperStorage<Value>

    var wrappedValue: Value {
        get { storage.currentValue(wrapper: "An @Option") }
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

extension Option where Value: ExpressibleByArgument {
    /// An option with a default value, used when the option isn't given.
    init(
        wrappedValue: Value,
        name: NameSpecification = .long,
        help: String? = nil,
        valueName: String? = nil
    ) {
        self.init(spec: .value(
            of: Value.self, kind: .option(name), arity: .single, help: help, valueName: valueName,
            defaultValue: wrappedValue, defaultDescription: wrappedValue.defaultValueDescription))
    }

    /// A required option.
    init(name: NameSpecification = .long, help: String? = nil, valueName: String? = nil) {
        self.init(spec: .value(
            of: Value.self, kind: .option(name), arity: .single, help: help, valueName: valueName,
            defaultValue: nil, defaultDescription: nil))
    }
}

extension Option {
    /// An optional option: nil when it isn't given.
    init<Element: ExpressibleByArgument>(
        name: NameSpecification = .long,
        help: String? = nil,
        valueName: String? = nil
    ) where Value == Element? {
        self.init(spec: .value(
            of: Element.self, kind: .option(name), arity: .optional, help: help, valueName: valueName,
            defaultValue: nil, defaultDescription: nil))
    }

    /// An optional option with an initial value: `@Option var format: Format? = .text`.
    init<Element: ExpressibleByArgument>(
        wrappedValue: Element?,
        name: NameSpecification = .long,
        help: String? = nil,
        valueName: String? = nil
    ) where Value == Element? {
        self.init(spec: .value(
            of: Element.self, kind: .option(name), arity: .optional, help: help, valueName: valueName,
            defaultValue: wrappedValue.map { $0 as Element? },
            defaultDescription: wrappedValue?.defaultValueDescription))
    }

    /// A repeatable option collecting every occurrence in order. Given at least once, its
    /// values replace the default.
    init<Element: ExpressibleByArgument>(
        wrappedValue: [Element],
        name: NameSpecification = .long,
        help: String? = nil,
        valueName: String? = nil
    ) where Value == [Element] {
        let description = wrappedValue.map(\.defaultValueDescription).joined(separator: ", ")
        self.init(spec: .value(
            of: Element.self, kind: .option(name), arity: .array, help: help, valueName: valueName,
            defaultValue: wrappedValue, defaultDescription: description.isEmpty ? nil : description))
    }

    /// A repeatable option that is empty when it isn't given.
    init<Element: ExpressibleByArgument>(
        name: NameSpecification = .long,
        help: String? = nil,
        valueName: String? = nil
    ) where Value == [Element] {
        self.init(spec: .value(
            of: Element.self, kind: .option(name), arity: .array, help: help, valueName: valueName,
            defaultValue: nil, defaultDescription: nil))
    }
}
