/// A named on/off input, off unless given: `--json`, `-q`.
///
///     @Flag("-q", "--quiet", help: "Print less.") var quiet = false
@propertyWrapper
struct Flag: Sendable {
    var wrappedValue: Bool

    /// A flag; declare it `= false`, as nothing turns one off (the declaration check says so).
    init(wrappedValue: Bool, _ names: String..., help: String) {
        let declaration = Declaration(
            kind: .flag, names: names, help: help, valueName: "", defaultText: wrappedValue ? "true" : nil)
        let given = ParsingContext.declare(declaration, of: String.self)  // always: it registers the flag
        self.wrappedValue = wrappedValue || !given.isEmpty
    }
}
