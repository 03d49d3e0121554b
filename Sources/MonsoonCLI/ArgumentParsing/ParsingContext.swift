/// Where the property wrappers of a command being made register, and where they find their
/// values.
///
/// A property wrapper can't see the property it wraps, but a command's `init()` runs the
/// wrappers' initializers in declaration order. So the parser makes a command inside a
/// context: the n-th wrapper to register records the n-th declaration, and takes the words the
/// parser read for it. Made outside a context (no parsing), wrappers hold their defaults.
final class ParsingContext: @unchecked Sendable {
    // @unchecked: an instance is made, bound to `current` and read within one synchronous call
    // on one thread (`declarations(of:)` or `make(_:words:)`), and never escapes it; @TaskLocal
    // only requires Sendable because a task-local value could be read from child tasks.
    @TaskLocal private static var current: ParsingContext?

    private var declarations: [Declaration] = []
    /// The words read for each declaration, by position; nil when only declaring.
    private let words: [[String]]?
    /// The `@OptionGroup` types being made, innermost last.
    private var groups: [ObjectIdentifier] = []
    /// The first error thrown by a group's `validate()`.
    private var groupError: (any Error)?

    private init(words: [[String]]?) {
        self.words = words
    }

    /// The inputs `type` declares, in declaration order (a group's in its place).
    static func declarations(of type: any ParsableArguments.Type) -> [Declaration] {
        let context = ParsingContext(words: nil)
        _ = $current.withValue(context) { type.init() }
        return context.declarations
    }

    /// Makes `type` with `words[n]` given to its n-th declaration, then validates its groups
    /// and itself.
    static func make(_ type: any ParsableCommand.Type, words: [[String]]) throws -> any ParsableCommand {
        let context = ParsingContext(words: words)
        var command = $current.withValue(context) { type.init() }
        if let error = context.groupError { throw error }
        try command.validate()
        return command
    }

    /// Records a wrapper's declaration and returns the values given for it, in command-line
    /// order (already checked by the parser, so none is dropped).
    static func declare<Element: ExpressibleByArgument>(_ declaration: Declaration, of _: Element.Type) -> [Element] {
        guard let context = current else { return [] }
        var declaration = declaration
        declaration.allowedValues = Element.allValueStrings
        declaration.invalidValueReason = Element.invalidValueReason
        declaration.accepts = { Element(argument: $0) != nil }
        declaration.group = context.groups.last
        context.declarations.append(declaration)
        let given = context.words.map { $0[context.declarations.count - 1] } ?? []
        return given.compactMap(Element.init(argument:))
    }

    /// Makes an `@OptionGroup`'s value, its declarations marked as the group's.
    static func group<Group: ParsableArguments>(_ type: Group.Type) -> Group {
        guard let context = current else { return Group() }
        context.groups.append(ObjectIdentifier(type))
        defer { context.groups.removeLast() }
        var group = Group()
        if context.words != nil && context.groupError == nil {
            // Validated here, so a shared group's rules hold in every command including it.
            do { try group.validate() } catch { context.groupError = error }
        }
        return group
    }
}
