/// Help, usage lines and usage errors made from the declarations, so they never drift from what
/// the parser accepts. Help reads: usage, abstract, discussion, then the ARGUMENTS, OPTIONS and
/// COMMANDS sections, wrapped to 80 columns.
enum HelpGenerator {
    static let lineWidth = 80
    /// Where descriptions start in the sections; a longer label puts its description below.
    static let descriptionColumn = 26

    /// The help of the last command of `path` (root first).
    static func help(_ path: [any ParsableCommand.Type]) -> String {
        let configuration = path[path.count - 1].configuration
        let declarations = ParsingContext.declarations(of: path[path.count - 1])
        var sections = [usageBlock(path)]
        for text in [configuration.abstract, configuration.discussion] where !text.isEmpty {
            sections.append(TextWrapper.wrapParagraphs(text, width: lineWidth))
        }
        let arguments = declarations.filter { $0.kind == .argument }.map { row($0.display(), describe($0)) }
        if !arguments.isEmpty { sections.append((["ARGUMENTS:"] + arguments).joined(separator: "\n")) }
        var options = declarations.filter { $0.kind != .argument }.map { declaration in
            let names = declaration.names.joined(separator: ", ")
            return row(declaration.kind == .flag ? names : "\(names) <\(declaration.valueName)>", describe(declaration))
        }
        if path.count == 1 && !configuration.version.isEmpty { options.append(row("--version", "Show the version.")) }
        options.append(row("-h, --help", "Show help information."))
        sections.append((["OPTIONS:"] + options).joined(separator: "\n"))
        if !configuration.subcommands.isEmpty {
            let rows = configuration.subcommands.map { subcommand in
                let isDefault = subcommand == configuration.defaultSubcommand
                return row(subcommand.commandNames.joined(separator: ", "), subcommand.configuration.abstract + (isDefault ? " (default)" : ""))
            } + [row("help", HelpCommand.configuration.abstract)]
            sections.append((["COMMANDS:"] + rows).joined(separator: "\n"))
            sections.append("  See '\(commandPath(path)) help <command>', and 'man \(path[0].configuration.commandName)' for every detail.")
        }
        return sections.joined(separator: "\n\n")
    }

    /// `monsoon get [<options>] [<url> ...]`: the path, `[<options>]`, the arguments, `<command>`.
    static func usage(_ path: [any ParsableCommand.Type]) -> String {
        let configuration = path[path.count - 1].configuration
        let declarations = ParsingContext.declarations(of: path[path.count - 1])
        var parts = [commandPath(path)]
        if declarations.contains(where: { $0.kind != .argument }) { parts.append("[<options>]") }
        for argument in declarations where argument.kind == .argument {
            let shown = argument.display() + (argument.isArray ? " ..." : "")
            parts.append(argument.isRequired ? shown : "[\(shown)]")
        }
        if !configuration.subcommands.isEmpty { parts.append(configuration.defaultSubcommand == nil ? "<command>" : "[<command>]") }
        return parts.joined(separator: " ")
    }

    /// The three lines of a usage error: the message (`monsoon: …`, as every diagnostic), the
    /// usage, where to read more.
    static func usageError(_ message: String, path: [any ParsableCommand.Type]) -> String {
        "monsoon: \(message)\n\(usageBlock(path))\n  See '\(commandPath(path)) --help' for more information."
    }

    /// The commands from `root` down to `command`, for the usage of a usage error a command finds
    /// as it runs; just `[root]` when `command` is not among them.
    static func path(to command: any ParsableCommand.Type, from root: any ParsableCommand.Type) -> [any ParsableCommand.Type] {
        func search(_ path: [any ParsableCommand.Type]) -> [any ParsableCommand.Type]? {
            guard let last = path.last else { return nil }
            if ObjectIdentifier(last) == ObjectIdentifier(command) { return path }
            return last.configuration.subcommands.lazy.compactMap { search(path + [$0]) }.first
        }
        return search([root]) ?? [root]
    }

    /// "Usage: " and the usage line, later lines under the first.
    private static func usageBlock(_ path: [any ParsableCommand.Type]) -> String {
        "Usage: " + TextWrapper.wrap(usage(path), width: lineWidth - 7).joined(separator: "\n       ")
    }

    private static func commandPath(_ path: [any ParsableCommand.Type]) -> String {
        path.map { $0.configuration.commandName }.joined(separator: " ")
    }

    /// The help text, then the allowed values and the default: "Format. (values: text, json; default: text)".
    static func describe(_ declaration: Declaration) -> String {
        var notes: [String] = []
        if !declaration.allowedValues.isEmpty { notes.append("values: " + declaration.allowedValues.joined(separator: ", ")) }
        if let shown = declaration.defaultText, !shown.isEmpty, declaration.kind == .option { notes.append("default: " + shown) }
        return notes.isEmpty ? declaration.help : declaration.help + " (" + notes.joined(separator: "; ") + ")"
    }

    /// One entry of a section: the label indented by two, the description in its own column.
    private static func row(_ label: String, _ text: String) -> String {
        let indent = String(repeating: " ", count: descriptionColumn)
        let body = TextWrapper.wrap(text, width: lineWidth - descriptionColumn).joined(separator: "\n" + indent)
        let label = "  " + label
        guard label.count + 2 <= descriptionColumn else { return label + "\n" + indent + body }
        return label + String(repeating: " ", count: descriptionColumn - label.count) + body
    }
}
