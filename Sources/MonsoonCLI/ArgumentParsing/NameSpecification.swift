/// How an option or flag is spelled on the command line: any number of long names (`--out`)
/// and short names (`-o`).
///
/// Long names derived from the property are its name in kebab case (`perHost` → `--per-host`);
/// short names derived from it are its first character (`jobs` → `-j`). `-h` and `--help`
/// are reserved for help, and `--version` on the root command for the version.
///
///     @Option(name: .shortAndLong) var jobs = 4                       // -j, --jobs
///     @Option(name: [.customShort("o"), .long("out")]) var out = "."  // -o, --out
struct NameSpecification: Sendable, ExpressibleByArrayLiteral {
    /// One name, or a rule for deriving one from the property name.
    struct Element: Sendable, Hashable {
        enum Kind: Sendable, Hashable {
            case derivedLong
            case customLong(String)
            case derivedShort
            case customShort(Character)
        }

        var kind: Kind

        /// The property name in kebab case: `perHost` → `--per-host`.
        static var long: Element { Element(kind: .derivedLong) }

        /// The given long name; leading dashes are optional: `.long("out")` → `--out`.
        static func long(_ name: String) -> Element { customLong(name) }

        /// The given long name; leading dashes are optional: `.customLong("per-host")`.
        static func customLong(_ name: String) -> Element {
            Element(kind: .customLong(String(name.drop { $0 == "-" })))
        }

        /// The first character of the property name: `jobs` → `-j`.
        static var short: Element { Element(kind: .derivedShort) }

        /// The given short name: `.customShort("i")` → `-i`.
        static func customShort(_ letter: Character) -> Element { Element(kind: .customShort(letter)) }
    }

    var elements: [Element]

    init(_ elements: [Element]) {
        self.elements = elements
    }

    init(arrayLiteral elements: Element...) {
        self.elements = elements
    }

    /// The property name in kebab case: `perHost` → `--per-host`.
    static var long: NameSpecification { [.long] }

    /// The given long name: `.long("out")` → `--out`.
    static func long(_ name: String) -> NameSpecification { [.long(name)] }

    /// The given long name: `.customLong("per-host")` → `--per-host`.
    static func customLong(_ name: String) -> NameSpecification { [.customLong(name)] }

    /// The first character of the property name: `jobs` → `-j`.
    static var short: NameSpecification { [.short] }

    /// The given short name: `.customShort("i")` → `-i`.
    static func customShort(_ letter: Character) -> NameSpecification { [.customShort(letter)] }

    /// Both `-j` and `--jobs` for a property named `jobs`.
    static var shortAndLong: NameSpecification { [.short, .long] }

    /// The long names (without dashes) and short names this specification gives a property.
    func resolved(forProperty property: String) -> (long: [String], short: [Character]) {
        var long: [String] = []
        var short: [Character] = []
        for element in elements {
            switch element.kind {
            case .derivedLong: long.append(ArgumentNaming.kebabCase(property))
            case .customLong(let name): long.append(name)
            case .derivedShort: if let first = property.first { short.append(first) }
            case .customShort(let letter): short.append(letter)
            }
        }
        return (long, short)
    }
}
