/// Shell completion scripts generated from the command declarations, so they never drift
/// from what the parser accepts (as swift-argument-parser's `--generate-completion-script`).
enum CompletionScript {
    /// The shells scripts are made for.
    enum Shell: String, CaseIterable, ExpressibleByArgument {
        case bash, zsh, fish
    }

    /// A command path with what may follow it.
    private struct Node {
        var path: [String]
        var options: [(names: [String], takesValue: Bool, help: String)]
        var subcommands: [(name: String, abstract: String)]
    }

    /// The script for `shell`, covering every command reachable from `root`.
    static func script(for root: any ParsableCommand.Type, shell: Shell) -> String {
        let nodes = walk(root, path: [root.configuration.commandName])
        let program = root.configuration.commandName
        switch shell {
        case .bash: return bash(nodes, program: program)
        case .zsh: return zsh(nodes, program: program)
        case .fish: return fish(nodes, program: program)
        }
    }

    private static func walk(_ command: any ParsableCommand.Type, path: [String]) -> [Node] {
        let configuration = command.configuration
        let options = ParsingContext.declarations(of: command).filter { $0.kind != .argument }.map {
            (names: $0.names, takesValue: $0.kind == .option, help: $0.help)
        } + [(names: ["--help", "-h"], takesValue: false, help: "Show help information.")]
        let subcommands = configuration.subcommands.flatMap { command in command.commandNames.map { ($0, command.configuration.abstract) } }
            + (path.count == 1 ? [("help", HelpCommand.configuration.abstract)] : [])
        return [Node(path: path, options: options, subcommands: subcommands)]
            + configuration.subcommands.flatMap { subcommand in
                subcommand.commandNames.flatMap { walk(subcommand, path: path + [$0]) }
            }
    }

    private static func bash(_ nodes: [Node], program: String) -> String {
        var cases = ""
        for node in nodes {
            let words = (node.subcommands.map(\.name) + node.options.flatMap(\.names)).joined(separator: " ")
            let valued = node.options.filter(\.takesValue).flatMap(\.names).joined(separator: "|")
            cases += "        \"\(node.path.dropFirst().joined(separator: " "))\")\n"
            if !valued.isEmpty { cases += "            case \"$prev\" in \(valued)) COMPREPLY=($(compgen -f -- \"$cur\")); return ;; esac\n" }
            cases += "            words=\"\(words)\" ;;\n"
        }
        return """
            # bash completion for \(program): source it, or save it as
            # /etc/bash_completion.d/\(program) (or ~/.local/share/bash-completion/completions/\(program)).
            _\(program)() {
                local cur prev cmdpath words i
                cur="${COMP_WORDS[COMP_CWORD]}"
                prev="${COMP_WORDS[COMP_CWORD-1]}"
                cmdpath=""
                for ((i = 1; i < COMP_CWORD; i++)); do
                    case "|\(nodes.dropFirst().map { $0.path.dropFirst().joined(separator: " ") }.joined(separator: "|"))|" in
                        *"|${cmdpath:+$cmdpath }${COMP_WORDS[i]}|"*) cmdpath="${cmdpath:+$cmdpath }${COMP_WORDS[i]}" ;;
                    esac
                done
                case "$cmdpath" in
            \(cases)        *) words="" ;;
                esac
                COMPREPLY=($(compgen -W "$words" -- "$cur"))
            }
            complete -o default -F _\(program) \(program)

            """
    }

    private static func zsh(_ nodes: [Node], program: String) -> String {
        func quote(_ text: String) -> String { text.replacingOccurrences(of: "'", with: "'\\''").replacingOccurrences(of: "[", with: "\\[").replacingOccurrences(of: "]", with: "\\]").replacingOccurrences(of: ":", with: "\\:") }
        var cases = ""
        for node in nodes {
            let commands = node.subcommands.map { "'\($0.name):\(quote($0.abstract))'" }
            let options = node.options.map { option -> String in
                let spec = "[\(quote(option.help))]\(option.takesValue ? ":value:_files" : "")'"
                // Braces expand only with a comma: one name is written plainly.
                guard option.names.count > 1 else { return "'\(option.names[0])\(spec)" }
                return "'(\(option.names.joined(separator: " ")))'{\(option.names.joined(separator: ","))}'\(spec)"
            }
            cases += "    \"\(node.path.dropFirst().joined(separator: " "))\")\n"
            if !commands.isEmpty { cases += "      subcommands=(\(commands.joined(separator: " ")))\n" }
            cases += "      options=(\(options.joined(separator: " "))) ;;\n"
        }
        return """
            #compdef \(program)
            # zsh completion for \(program): save it as _\(program) in a folder of $fpath.
            _\(program)() {
              local -a subcommands options
              local cmdpath="" word
              for word in ${words[2,CURRENT-1]}; do
                [[ $word == -* ]] && continue
                case "${cmdpath:+$cmdpath }$word" in
            \(nodes.dropFirst().map { "      \"\($0.path.dropFirst().joined(separator: " "))\") cmdpath=\"${cmdpath:+$cmdpath }$word\" ;;" }.joined(separator: "\n"))
                esac
              done
              case "$cmdpath" in
            \(cases)  esac
              _arguments -s $options '*:file:_files'
              (( ${#subcommands} )) && _describe 'command' subcommands
            }
            _\(program) "$@"

            """
    }

    private static func fish(_ nodes: [Node], program: String) -> String {
        func quote(_ text: String) -> String { "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'" }
        var lines = ["# fish completion for \(program): save it as ~/.config/fish/completions/\(program).fish", "complete -c \(program) -f"]
        for node in nodes {
            let condition: String
            if node.path.count == 1 {
                condition = "__fish_use_subcommand"
            } else {
                let parent = node.path.dropFirst().dropLast()
                let seen = "__fish_seen_subcommand_from \(node.path.last ?? "")"
                condition = parent.isEmpty ? seen : "__fish_seen_subcommand_from \(parent.last ?? ""); and \(seen)"
            }
            for (name, abstract) in node.subcommands {
                lines.append("complete -c \(program) -n \(quote(condition)) -a \(name) -d \(quote(abstract))")
            }
            for option in node.options {
                var line = "complete -c \(program) -n \(quote(condition))"
                for name in option.names {
                    line += name.hasPrefix("--") ? " -l \(name.dropFirst(2))" : " -s \(name.dropFirst())"
                }
                if option.takesValue { line += " -r -F" }
                lines.append(line + " -d \(quote(option.help))")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
