/// A named input that takes a value: `--out DIR`, `--out=DIR`, `-o DIR` or `-oDIR`. Given more
/// than once, the last value wins.
///
///     @Option("-o", "--out", help: "The folder.", valueName: "dir") var out = "."   // a default
///     @Option("--limit", help: "At most N.", valueName: "n") var limit: Int?          // nil unless given
@propertyWrapper
struct Option<Value: Sendable>: Sendable {
    var wrappedValue: Value
}

extension Option where Value: ExpressibleByArgument {
    /// An option with a default, used when it isn't given.
    init(wrappedValue: Value, _ names: String..., help: String, valueName: String) {
        let declaration = Declaration(
            kind: .option, names: names, help: help, valueName: valueName, defaultText: "\(wrappedValue)")
        self.wrappedValue = ParsingContext.declare(declaration, of: Value.self).last ?? wrappedValue
    }
}

extension Option {
    /// An option that is nil unless given.
    init<Element: ExpressibleByArgument>(_ names: String..., help: String, valueName: String, completion: CompletionKind? = nil) where Value == Element? {
        let declaration = Declaration(kind: .option, names: names, help: help, valueName: valueName, completion: completion)
        wrappedValue = ParsingContext.declare(declaration, of: Element.self).last
    }
}
