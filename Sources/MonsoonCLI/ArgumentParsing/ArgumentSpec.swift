/// What one `@Option`, `@Flag` or `@Argument` declares about a command-line input, with the
/// value type erased so the parser can treat all of them alike.
///
/// A property wrapper doesn't know the name of the property it wraps; the parser adds that
/// when it finds the wrapper by reflection (see `CommandDefinition`).
struct ArgumentSpec: Sendable {
    /// How the input appears on the command line.
    enum Kind: Sendable {
        /// `--name value`, `--name=value`, `-n value` or `-nvalue`.
        case option(NameSpecification)
        /// `--name` alone, and `--no-name` when inverted.
        case flag(NameSpecification, inversion: FlagInversion?)
        /// A word matched by position.
        case positional
    }

    /// How many values the input takes.
    enum Arity: Sendable {
        /// Exactly one value; when given more than once, the last one wins.
        case single
        /// Zero or one value: the property is an `Optional`.
        case optional
        /// Any number of values, kept in command-line order: the property is an `Array`.
        case array
    }

    var kind: Kind
    var arity: Arity
    var help: String?
    /// The name shown in `<…>`; nil means the property name in kebab case.
    var valueName: String?
    /// The declared default, of the property's full type (`T`, `T?` or `[T]`); nil when the
    /// declaration has none.
    var defaultValue: (any Sendable)?
    /// The default as shown in help, or nil to show none.
    var defaultDescription: String?
    /// Every accepted word, for help and errors; empty when the type accepts any word of its form.
    var allowedValues: [String]
    /// Completes "The value 'x' is invalid for '--jobs <jobs>': …".
    var invalidValueReason: String
    /// Converts one command-line word into an element, or returns nil when the word is invalid.
    var parseElement: @Sendable (String) -> (any Sendable)?
    /// Builds the property's value from the elements read for it, in command-line order;
    /// nil only for a single value given no elements.
    var assemble: @Sendable ([any Sendable]) -> (any Sendable)?

    var isPositional: Bool {
        if case .positional = kind { return true }
        return false
    }

    var isFlag: Bool {
        if case .flag = kind { return true }
        return false
    }

    /// Whether the command line must supply the input: a single value without a default, or a
    /// positional array declared without a default ("one or more").
    var isRequired: Bool {
        guard defaultValue == nil else { return false }
        switch arity {
        case .single: return !isFlag
        case .optional: return false
        case .array: return isPositional
        }
    }

    /// The property's value when the command line doesn't mention it: the default, or what an
    /// absent optional or array means (nil, or empty); nil for a required input.
    func valueWithoutInput() -> (any Sendable)? {
        if let defaultValue { return defaultValue }
        switch arity {
        case .single: return nil
        case .optional, .array: return assemble([])
        }
    }
}

extension ArgumentSpec {
    /// The spec of an option or positional argument whose elements are of type `T`.
    ///
    /// - Parameter defaultValue: the declared default, of the property's full type
    ///   (`T`, `T?` or `[T]` to match `arity`).
    static func value<T: ExpressibleByArgument>(
        of type: T.Type,
        kind: Kind,
        arity: Arity,
        help: String?,
        valueName: String?,
        defaultValue: (any Sendable)?,
        defaultDescription: String?
    ) -> ArgumentSpec {
        let assemble: @Sendable ([any Sendable]) -> (any Sendable)?
        switch arity {
        case .single: assemble = { elements in elements.last }
        case .optional: assemble = { elements in (elements.last as? T) as any Sendable }
        case .array: assemble = { elements in elements.compactMap { $0 as? T } as any Sendable }
        }
        return ArgumentSpec(
            kind: kind,
            arity: arity,
            help: help,
            valueName: valueName,
            defaultValue: defaultValue,
            defaultDescription: defaultDescription,
            allowedValues: T.allValueStrings,
            invalidValueReason: T.invalidValueReason,
            parseElement: { word in T(argument: word) },
            assemble: assemble
        )
    }
}

/// Lets the parser read the spec out of a property wrapper found by reflection.
protocol ArgumentSpecProviding {
    /// The declaration, or nil once the wrapper holds a parsed value.
    var argumentSpec: ArgumentSpec? { get }
}

/// The state of an `@Option`, `@Flag` or `@Argument`: a declaration until the parser fills it.
enum WrapperStorage<Value: Sendable>: Sendable {
    /// Made by the declaration (`@Option(...) var x = 4`); the parser reads it by reflection.
    case definition(ArgumentSpec)
    /// Made by the parser, or by assigning to the property.
    case value(Value)

    var argumentSpec: ArgumentSpec? {
        if case .definition(let spec) = self { return spec }
        return nil
    }

    /// The wrapped value. Before parsing it's the declared default, so code in `init()` may
    /// read properties that have one.
    func currentValue(wrapper: String) -> Value {
        switch self {
        case .value(let value):
            return value
        case .definition(let spec):
            if let value = spec.valueWithoutInput() as? Value { return value }
            fatalError("\(wrapper) without a default value was read before the command line was parsed.")
        }
    }
}
