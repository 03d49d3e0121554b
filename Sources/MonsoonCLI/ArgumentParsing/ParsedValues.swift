/// The words read from the command line for one command, converted to elements and keyed by
/// property path, together with the specs that turn them into property values.
struct ParsedValues {
    /// The elements read for each property path, in command-line order.
    var elements: [[String]: [any Sendable]]
    let specs: [[String]: ArgumentSpec]

    init(specs: [[String]: ArgumentSpec], elements: [[String]: [any Sendable]] = [:]) {
        self.specs = specs
        self.elements = elements
    }

    mutating func append(_ element: any Sendable, at path: [String]) {
        elements[path, default: []].append(element)
    }

    func hasInput(at path: [String]) -> Bool {
        elements[path]?.isEmpty == false
    }

    /// The final value of the property at `path`: built from what the command line gave, or
    /// the value without input (the default, nil or empty).
    func resolvedValue(at path: [String]) throws -> any Sendable {
        guard let spec = specs[path] else {
            throw ParseError.declarationError("no @Option, @Flag or @Argument at '\(path.joined(separator: "."))'.")
        }
        if let given = elements[path], !given.isEmpty, let value = spec.assemble(given) {
            return value
        }
        if let value = spec.valueWithoutInput() { return value }
        // The parser reports missing required inputs before decoding; this is a safety net.
        throw ParseError.missingArgument(ArgumentDefinition(path: path, spec: spec).display())
    }
}
