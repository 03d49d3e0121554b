@testable import MonsoonCLI

/// Finds the mistakes in command declarations that the compiler can't: a name declared twice
/// (only the first would match), an argument no word can reach, a flag nothing can turn off.
/// A test runs it over every command reachable from the root, so a mistake fails the tests
/// rather than a user; the parser itself trusts the declarations.
enum DeclarationCheck {
    /// One line per mistake, naming the command; empty when all is well.
    ///
    /// - Parameter inherited: the option names of the commands above, which the last command
    ///   must include: only it is made, with the values given before its name.
    static func problems(_ path: [any ParsableCommand.Type], inherited: Set<String> = []) -> [String] {
        let configuration = path[path.count - 1].configuration
        let declarations = ParsingContext.declarations(of: path[path.count - 1])
        let arguments = declarations.filter { $0.kind == .argument }
        var found: [String] = []
        func check(_ condition: Bool, _ problem: @autoclosure () -> String) {
            if !condition { found.append(path.map { $0.configuration.commandName }.joined(separator: " ") + ": " + problem()) }
        }
        check(isWord(configuration.commandName) && configuration.aliases.allSatisfy(isWord), "a command name is not a lowercase word")
        check(!configuration.abstract.isEmpty, "no abstract")
        var names = Set(["-h", "--help"] + (path.count == 1 && !configuration.version.isEmpty ? ["--version"] : []))
        for declaration in declarations {
            let shown = declaration.display()
            check(!declaration.help.isEmpty, "\(shown) has no help text")
            check(declaration.kind == .flag || isWord(declaration.valueName), "\(shown) has no value name")
            check(declaration.kind == .argument || !declaration.names.isEmpty, "an option of '\(declaration.help)' has no name")
            check(declaration.kind != .flag || declaration.defaultText == nil, "\(shown) is on by default, and nothing turns it off")
            for name in declaration.names {
                let isShort = name.count == 2 && name.first == "-" && name != "--"
                check(isShort || (name.hasPrefix("--") && isWord(String(name.dropFirst(2)))), "'\(name)' is not -x or --name")
                check(names.insert(name).inserted, "'\(name)' is declared twice, or reserved")
            }
        }
        for (first, second) in zip(arguments, arguments.dropFirst()) {
            check(!first.isArray, "\(second.display()) comes after \(first.display()) ..., which takes every word")
            check(first.isArray || first.isRequired || !second.isRequired, "the required \(second.display()) comes after the optional \(first.display())")
        }
        let own = Set(declarations.flatMap(\.names))
        guard !configuration.subcommands.isEmpty else {
            let lost = inherited.subtracting(own).sorted().joined(separator: ", ")
            check(lost.isEmpty, "\(lost) given before its name would be lost: include their group")
            return found
        }
        check(arguments.isEmpty, "a command with subcommands takes no arguments (a word names a subcommand)")
        check(declarations.allSatisfy { $0.group != nil }, "a command with subcommands declares options only in groups its commands include")
        var words: Set = ["help"]
        for name in configuration.subcommands.flatMap({ $0.commandNames }) {
            check(words.insert(name).inserted, "the command name '\(name)' is used twice, or is 'help'")
        }
        if let fallback = configuration.defaultSubcommand {
            check(configuration.subcommands.contains { $0 == fallback }, "its default subcommand is not one of its subcommands")
        }
        return found + configuration.subcommands.flatMap { problems(path + [$0], inherited: inherited.union(own)) }
    }

    /// Lowercase letters, digits and inner dashes: `per-host`, `get`, `yyyy-mm-dd`.
    private static func isWord(_ text: String) -> Bool {
        !text.isEmpty && !text.hasPrefix("-") && !text.hasSuffix("-")
            && text.allSatisfy { $0 == "-" || ($0.isASCII && ($0.isLowercase || $0.isNumber)) }
    }
}
