/// The inputs of a command, including those of its option groups, found by reflecting on a
/// fresh instance of it.
struct CommandDefinition {
    /// An `@OptionGroup` inside the command.
    struct Group {
        /// The group's `ParsableArguments` type; groups of the same type share values across
        /// a command and its subcommands.
        var type: ObjectIdentifier
        /// Property names from the command down to the group.
        var path: [String]
    }

    /// Every input, in declaration order (groups expanded in place).
    private(set) var arguments: [ArgumentDefinition] = []
    private(set) var groups: [Group] = []
    private var longIndex: [String: Int] = [:]
    private var shortIndex: [Character: Int] = [:]
    private var invertedIndex: [String: Int] = [:]

    init(_ type: any ParsableArguments.Type) {
        collect(from: type.init(), path: [])
        for (offset, argument) in arguments.enumerated() {
            // The first declaration of a name wins, like the first matching case of a switch.
            for name in argument.longNames where longIndex[name] == nil { longIndex[name] = offset }
            for letter in argument.shortNames where shortIndex[letter] == nil { shortIndex[letter] = offset }
            for name in argument.invertedNames where invertedIndex[name] == nil { invertedIndex[name] = offset }
        }
    }

    /// Options and flags, in declaration order.
    var named: [ArgumentDefinition] { arguments.filter { !$0.spec.isPositional } }

    /// Positional arguments, in declaration (and so matching) order.
    var positionals: [ArgumentDefinition] { arguments.filter(\.spec.isPositional) }

    /// The specs by property path, for decoding.
    var specs: [[String]: ArgumentSpec] {
        Dictionary(arguments.map { ($0.path, $0.spec) }, uniquingKeysWith: { first, _ in first })
    }

    /// Every long name (without dashes) that `--name` can match, for spelling suggestions.
    var allLongNames: [String] { arguments.flatMap { $0.longNames + $0.invertedNames } }

    func argument(long name: String) -> ArgumentDefinition? { longIndex[name].map { arguments[$0] } }

    func argument(short letter: Character) -> ArgumentDefinition? { shortIndex[letter].map { arguments[$0] } }

    /// The flag that `--no-<name>` turns off.
    func argument(inverted name: String) -> ArgumentDefinition? { invertedIndex[name].map { arguments[$0] } }

    private mutating func collect(from instance: any ParsableArguments, path: [String]) {
        for child in Mirror(reflecting: instance).children {
            // A wrapped property `x` is stored as `_x`, which is what reflection shows.
            guard let label = child.label, label.hasPrefix("_") else { continue }
            let childPath = path + [String(label.dropFirst())]
            if let provider = child.value as? any ArgumentSpecProviding, let spec = provider.argumentSpec {
                arguments.append(ArgumentDefinition(path: childPath, spec: spec))
            } else if let group = child.value as? any OptionGroupProviding {
                let arguments = group.groupArguments
                groups.append(Group(type: ObjectIdentifier(type(of: arguments)), path: childPath))
                collect(from: arguments, path: childPath)
            }
        }
    }
}
