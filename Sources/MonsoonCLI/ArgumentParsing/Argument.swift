/// A positional input. Arguments take the words that aren't options, in declaration order; the
/// property's type says how many:
///
///     @Argument(help: "…", valueName: "source") var source: String      // exactly one
///     @Argument(help: "…", valueName: "target") var target: String?     // zero or one
///     @Argument(help: "…", valueName: "url") var urls: [String] = []    // zero or more, last
///     @Argument(help: "…", valueName: "id") var ids: [Int]              // one or more, last
///
/// Words after `--` are always positional, so a value may begin with a dash.
@propertyWrapper
struct Argument<Value: Sendable>: Sendable {
    /// Nil only for a required argument of a command made outside the parser.
    private var value: Value?

    var wrappedValue: Value {
        get {
            guard let value else { preconditionFailure("A required @Argument was read in a command the parser did not make.") }
            return value
        }
        set { value = newValue }
    }
}

extension Argument where Value: ExpressibleByArgument {
    /// A required argument.
    init(help: String, valueName: String, completion: CompletionKind? = nil) {
        let declaration = Declaration(kind: .argument, names: [], help: help, valueName: valueName, isRequired: true, completion: completion)
        value = ParsingContext.declare(declaration, of: Value.self).last
    }
}

extension Argument {
    /// An optional argument: nil unless given.
    init<Element: ExpressibleByArgument>(help: String, valueName: String, completion: CompletionKind? = nil) where Value == Element? {
        let declaration = Declaration(kind: .argument, names: [], help: help, valueName: valueName, completion: completion)
        value = .some(ParsingContext.declare(declaration, of: Element.self).last)
    }

    /// Zero or more arguments; given any, they replace the default.
    init<Element: ExpressibleByArgument>(wrappedValue: [Element], help: String, valueName: String) where Value == [Element] {
        let declaration = Declaration(kind: .argument, names: [], help: help, valueName: valueName, isArray: true)
        let given = ParsingContext.declare(declaration, of: Element.self)
        value = given.isEmpty ? wrappedValue : given
    }

    /// One or more arguments.
    init<Element: ExpressibleByArgument>(help: String, valueName: String) where Value == [Element] {
        let declaration = Declaration(kind: .argument, names: [], help: help, valueName: valueName, isArray: true, isRequired: true)
        value = ParsingContext.declare(declaration, of: Element.self)
    }
}
