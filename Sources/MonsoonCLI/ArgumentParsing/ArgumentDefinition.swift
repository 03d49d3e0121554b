/// One input of a command as the parser sees it: a wrapper's spec, plus the names and place
/// that come from the property it wraps.
struct ArgumentDefinition {
    /// Property names from the command down to the wrapped property, e.g. `["global", "home"]`
    /// for `home` inside `@OptionGroup var global`. Also the coding-key path used to decode it.
    var path: [String]
    var spec: ArgumentSpec
    /// Long names without dashes: `per-host`.
    var longNames: [String]
    var shortNames: [Character]
    /// `no-json` for a flag declared with `.prefixedNo`.
    var invertedNames: [String]
    /// The word shown in `<…>`.
    var valueName: String

    init(path: [String], spec: ArgumentSpec) {
        let property = path.last ?? ""
        self.path = path
        self.spec = spec
        valueName = spec.valueName ?? ArgumentNaming.kebabCase(property)
        switch spec.kind {
        case .option(let names):
            (longNames, shortNames) = names.resolved(forProperty: property)
            invertedNames = []
        case .flag(let names, let inversion):
            (longNames, shortNames) = names.resolved(forProperty: property)
            invertedNames = inversion == .prefixedNo ? longNames.map { "no-" + $0 } : []
        case .positional:
            (longNames, shortNames, invertedNames) = ([], [], [])
        }
    }

    /// The name to show when the user's own spelling isn't known: the first long name,
    /// else the first short one.
    var preferredName: String {
        if let long = longNames.first { return "--" + long }
        if let short = shortNames.first { return "-" + String(short) }
        return ""
    }

    /// How help and errors refer to the input: `--jobs <jobs>`, `-i <file>`, `--json`, `<url>`.
    ///
    /// - Parameter spelling: the name as the user wrote it (`-j`), to echo it back in errors.
    func display(as spelling: String? = nil) -> String {
        if spec.isPositional { return "<\(valueName)>" }
        let name = spelling ?? preferredName
        return spec.isFlag ? name : "\(name) <\(valueName)>"
    }
}
