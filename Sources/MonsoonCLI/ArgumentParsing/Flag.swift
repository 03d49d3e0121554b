/// How a flag can be turned off explicitly.
enum FlagInversion: Sendable {
    /// `--no-<name>` for each long name: `--json` / `--no-json`.
    case prefixedNo
}

/// A named on/off input: `--json`, `-q`, or several short flags at once (`-qv`).
///
///     @Flag(name: .shortAndLong, help: "Print less.") var quiet = false
///     @Flag(inversion: .prefixedNo, help: "Resume partial files.") var resume = true
///
/// Giving the flag sets the property to true, and `--no-<name>` (with `.prefixedNo`) to false;
/// the last one given wins.
@propertyWrapper
struct Flag: Sendable, Decodable, ArgumentSpecProviding {
    private var storage: WrapperStorage<Bool>

    var wrappedValue: Bool {
        get { storage.currentValue(wrapper: "A @Flag") }
        set { storage = .value(newValue) }
    }

    var argumentSpec: ArgumentSpec? { storage.argumentSpec }

    /// A flag whose value is `wrappedValue` when neither it nor its inversion is given.
    init(
        wrappedValue: Bool,
        name: NameSpecification = .long,
        inversion: FlagInversion? = nil,
        help: String? = nil
    ) {
        storage = .definition(ArgumentSpec(
            kind: .flag(name, inversion: inversion),
            arity: .single,
            help: help,
            valueName: nil,
            defaultValue: wrappedValue,
            defaultDescription: nil,
            allowedValues: [],
            invalidValueReason: "",
            parseElement: { _ in nil },  // flags never read a word
            assemble: { elements in elements.last }
        ))
    }

    /// A flag that is false unless given.
    init(name: NameSpecification = .long, inversion: FlagInversion? = nil, help: String? = nil) {
        self.init(wrappedValue: false, name: name, inversion: inversion, help: help)
    }

    /// Reads the parsed value; called by the `init(from:)` the compiler writes for the command.
    init(from decoder: any Decoder) throws {
        storage = .value(try ArgumentDecoder.value(of: Bool.self, from: decoder))
    }
}
