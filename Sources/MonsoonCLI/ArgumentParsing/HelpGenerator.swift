/// Builds help text and usage lines from command declarations, so they never drift apart from
/// what the parser accepts.
///
/// Help reads, in order: the usage line, the abstract, the discussion, then the ARGUMENTS,
/// OPTIONS and COMMANDS sections, all wrapped to 80 columns.
enum HelpGenerator {
    static let lineWidth = 80
    /// Where descriptions start in the sections; longer labels put them on the next line.
    static let descriptionColumn = 26

    /// The help text of the last command of `path` (the root command first).
    static func helpText(for path: [any ParsableCommand.Type]) -> String {
        guard let command = path.last else { return "" }
        let configuration = command.configuration
        let definition = CommandDefinition(command)
        var sections = [usageBlock(usageLine(for: path))]
        if !configuration.abstract.isEmpty {
            sections.append(TextWrapper.wrapParagraphs(configuration.abstract, width: lineWidth))
        }
        if !configuration.discussion.isEmpty {
            sections.append(TextWrapper.wrapParagraphs(configuration.discussion, width: lineWidth))
        }

        let arguments = definition.positionals.map { row(label: $0.display(), text: description(of: $0)) }
        if !arguments.isEmpty {
            sections.append((["ARGUMENTS:"] + arguments).joined(separator: "\n"))
        }

        var options = definition.named.map { row(label: label(of: $0), text: description(of: $0)) }
        if path.count == 1 && !configuration.version.isEmpty {
            options.append(row(label: "--version", text: "Show the version."))
        }
        options.append(row(label: "-h, --help", text: "Show help information."))
        sections.append((["OPTIONS:"] + options).joined(separator: "\n"))

        if !configuration.subcommands.isEmpty {
            let defaultID = configuration.defaultSubcommand.map { ObjectIdentifier($0) }
            let rows = configuration.subcommands.map { subcommand in
                let isDefault = ObjectIdentifier(subcommand) == defaultID
                let abstract = subcommand.configuration.abstract + (isDefault ? " (default)" : "")
                return row(label: subcommand.commandNames.joined(separator: ", "), text: abstract)
            } + [row(label: HelpCommand.resolvedCommandName, text: HelpCommand.configuration.abstract)]
            sections.append((["COMMANDS:"] + rows).joined(separator: "\n"))
            sections.append("  See '\(commandPath(path)) help <command>' for detailed help.")
        }
        return sections.joined(separator: "\n\n")
    }

    /// The usage line of the last command of `path`, without "Usage: ": the configured one, or
    /// one generated as `<command path> <required options> [<options>] <arguments> <subcommand>`.
    static func usageLine(for path: [any ParsableCommand.Type]) -> String {
        guard let command = path.last else { return "" }
        let configuration = command.configuration
        if let usage = configuration.usage { return usage }
        let definition = CommandDefinition(command)
        var parts = [commandPath(path)]
        let named = definition.named
        parts += named.filter(\.spec.isRequired).map { $0.display() }
        if named.contains(where: { !$0.spec.isRequired }) { parts.append("[<options>]") }
        for argument in definition.positionals {
            let name = argument.display()
            switch (argument.spec.arity, argument.spec.isRequired) {
            case (.array, true): parts.append("\(name) ...")
            case (.array, false): parts.append("[\(name) ...]")
            case (_, true): parts.append(name)
            case (_, false): parts.append("[\(name)]")
            }
        }
        if !configuration.subcommands.isEmpty {
            parts.append(configuration.defaultSubcommand == nil ? "<command>" : "[<command>]")
        }
        return parts.joined(separator: " ")
    }

    /// "Usage: " and the usage line, wrapped with later lines under the first.
    static func usageBlock(_ usage: String) -> String {
        let prefix = "Usage: "
        return prefix + TextWrapper.hanging(usage, width: lineWidth, indent: prefix.count)
    }

    /// The command names of `path` separated by spaces: "monsoon get".
    static func commandPath(_ path: [any ParsableCommand.Type]) -> String {
        path.map { $0.resolvedCommandName }.joined(separator: " ")
    }

    /// "-o, --out <out>", "-q, --quiet", "--[no-]resume".
    private static func label(of argument: ArgumentDefinition) -> String {
        let inverted = Set(argument.invertedNames)
        let longs = argument.longNames.map { inverted.contains("no-" + $0) ? "--[no-]" + $0 : "--" + $0 }
        let names = (argument.shortNames.map { "-" + String($0) } + longs).joined(separator: ", ")
        return argument.spec.isFlag ? names : "\(names) <\(argument.valueName)>"
    }

    /// The help text followed by the allowed values and the default, e.g.
    /// "Output format. (values: text, json; default: text)".
    private static func description(of argument: ArgumentDefinition) -> String {
        var notes: [String] = []
        if !argument.spec.allowedValues.isEmpty {
            notes.append("values: " + argument.spec.allowedValues.joined(separator: ", "))
        }
        if let shown = defaultDescription(of: argument), !shown.isEmpty {
            notes.append("default: " + shown)
        }
        var parts: [String] = []
        if let help = argument.spec.help, !help.isEmpty { parts.append(help) }
        if !notes.isEmpty { parts.append("(" + notes.joined(separator: "; ") + ")") }
        return parts.joined(separator: " ")
    }

    private static func defaultDescription(of argument: ArgumentDefinition) -> String? {
        guard argument.spec.isFlag else { return argument.spec.defaultDescription }
        // A plain flag is off unless given, which needs no note; an invertible one can default
        // either way, so say which spelling is the default.
        guard let long = argument.longNames.first, !argument.invertedNames.isEmpty,
              let isOn = argument.spec.defaultValue as? Bool else { return nil }
        return isOn ? "--" + long : "--no-" + long
    }

    /// One entry of a section: the label indented by two spaces, the description wrapped in a
    /// column of its own.
    private static func row(label: String, text: String) -> String {
        let labelText = "  " + label
        guard !text.isEmpty else { return labelText }
        let indent = String(repeating: " ", count: descriptionColumn)
        let lines = TextWrapper.wrap(text, width: lineWidth - descriptionColumn)
        let body = lines.joined(separator: "\n" + indent)
        if labelText.count + 2 <= descriptionColumn {
            return labelText + String(repeating: " ", count: descriptionColumn - labelText.count) + body
        }
        return labelText + "\n" + indent + body
    }
}
