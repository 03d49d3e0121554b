/// Shell completion. The script a shell sources is a stub that asks the program at each Tab
/// (`monsoon __complete WORDS...`, as cobra and clap do); the answer is made from the
/// declarations, so it never drifts from what the parser accepts and knows each command's
/// subcommands, options and the values of an enum.
enum CompletionScript {
    /// The shells scripts are made for.
    enum Shell: String, CaseIterable, ExpressibleByArgument { case bash, zsh, fish }

    /// The first word of a completion request; no command has this name.
    static let request = "__complete"

    /// The script for `shell`. An empty answer falls back to file names.
    static func script(program: String, shell: Shell) -> String {
        switch shell {
        case .bash:
            return """
                # bash completion for \(program): source it, or save it as
                # ~/.local/share/bash-completion/completions/\(program) (or /etc/bash_completion.d/\(program)).
                _\(program)() {
                    local words=("${COMP_WORDS[@]:0:COMP_CWORD}") answer candidate
                    # The word being typed as the program will read it: "Morning\\ S" is "Morning S".
                    words+=("${COMP_WORDS[COMP_CWORD]//\\\\/}")
                    COMPREPLY=()
                    answer=$(\(program) \(request) "${words[@]}" 2>/dev/null)
                    # 1: the program knows every value that fits here (podcasts), so no file name does.
                    [[ $? != 1 ]] || compopt +o default 2>/dev/null
                    while IFS= read -r candidate; do
                        # Quoted for the command line: a podcast's title may have spaces.
                        [[ -z $candidate ]] || { printf -v candidate '%q' "${candidate%%$'\\t'*}"; COMPREPLY+=("$candidate"); }
                    done <<< "$answer"
                }
                complete -o default -F _\(program) \(program)

                """
        case .zsh:
            return """
                #compdef \(program)
                # zsh completion for \(program): save it as _\(program) in a folder of $fpath.
                _\(program)() {
                  local -a candidates described
                  local candidate word
                  candidates=(${(f)"$(\(program) \(request) "${(@)words[1,CURRENT]}" 2>/dev/null)"})
                  # 1: the program knows every value that fits here (podcasts), so no file name does.
                  local refused=$?
                  # "word:description" for _describe, a colon in the word (a podcast's title) escaped.
                  for candidate in $candidates; do
                    word=${candidate%%$'\\t'*}
                    described+=("${word//:/\\\\:}${${candidate#"$word"}/$'\\t'/:}")
                  done
                  if (( ${#described} )); then
                    _describe '\(program)' described
                  elif (( refused != 1 )); then
                    _files
                  fi
                }
                _\(program) "$@"

                """
        case .fish:
            return """
                # fish completion for \(program): save it as ~/.config/fish/completions/\(program).fish
                function __\(program)_complete
                    set -l found (\(program) \(request) (commandline -opc) (commandline -ct) 2>/dev/null)
                    # 1: the program knows every value that fits here (podcasts), so no file name does.
                    set -l refused $status
                    if set -q found[1]
                        printf '%s\\n' $found
                    else if test $refused -ne 1
                        __fish_complete_path (commandline -ct)
                    end
                end
                complete -c \(program) -f -a '(__\(program)_complete)'

                """
        }
    }

    /// What a request is answered with.
    struct Answer {
        /// What may replace the word being typed, each with a tab and a description after it when
        /// it has one; none where a file name or free text goes.
        var candidates: [String]
        /// Whether a file name may fit when no candidate does: not where the program knows every
        /// value that fits (podcasts), which the scripts hear as exit status 1.
        var filesFit = true
    }

    /// The answer to a request: what may replace the last of `words` (the program's name first,
    /// the word being typed last). `context` serves the declarations' own completions.
    static func answer(_ words: [String], root: any ParsableCommand.Type, context: CommandContext) -> Answer {
        var path: [any ParsableCommand.Type] = [root]
        var declarations = ParsingContext.declarations(of: root)
        var positionals = 0
        var pendingOption: Declaration?
        /// After `help`, only command names follow.
        var helping = false
        func enter(_ subcommand: any ParsableCommand.Type) {
            path.append(subcommand)
            declarations = ParsingContext.declarations(of: subcommand)
            positionals = 0
        }
        for word in words.dropFirst().dropLast() {
            if word == "--" { return Answer(candidates: []) }
            let subcommands = path[path.count - 1].configuration.subcommands
            if pendingOption != nil {
                pendingOption = nil
            } else if word.hasPrefix("-") {
                // As the parser does: an option the command lacks is its default subcommand's.
                if let fallback = path[path.count - 1].configuration.defaultSubcommand, !declarations.contains(where: { $0.names.contains(word) }) {
                    enter(fallback)
                }
                pendingOption = declarations.first { $0.kind == .option && $0.names.contains(word) }
            } else if let subcommand = subcommands.first(where: { $0.commandNames.contains(word) }) {
                enter(subcommand)
            } else if word == "help" && !subcommands.isEmpty {
                helping = true
            } else {
                positionals += 1
            }
        }
        let configuration = path[path.count - 1].configuration
        let typed = words.count > 1 ? words[words.count - 1] : ""
        let commands = configuration.subcommands.flatMap { command in command.commandNames.map { ($0, command.configuration.abstract) } }
        var choices: [(word: String, help: String)]
        var filesFit = true
        func values(_ declaration: Declaration?) -> [(word: String, help: String)] {
            guard let declaration else { return [] }
            filesFit = declaration.completion == nil
            return (declaration.allowedValues + (declaration.completion?.candidates(words, context) ?? [])).map { ($0, "") }
        }
        if let pendingOption {
            choices = values(pendingOption)
        } else if helping {
            choices = commands
        } else if typed.hasPrefix("-") {
            let fallback = configuration.defaultSubcommand.map { ParsingContext.declarations(of: $0) } ?? []
            let declarations = declarations + fallback.filter { option in !declarations.contains { $0.names == option.names } }
            choices = declarations.filter { $0.kind != .argument }.flatMap { declaration in declaration.names.map { ($0, declaration.help) } }
                + [("--help", "Show help information.")]
        } else if !commands.isEmpty {
            choices = commands + (path.count == 1 ? [("help", HelpCommand.configuration.abstract)] : [])
        } else {
            let arguments = declarations.filter { $0.kind == .argument }
            let argument = positionals < arguments.count ? arguments[positionals] : arguments.last.flatMap { $0.isArray ? $0 : nil }
            choices = values(argument)
        }
        let candidates = choices.filter { $0.word.hasPrefix(typed) }.map { $0.help.isEmpty ? $0.word : $0.word + "\t" + $0.help }
        return Answer(candidates: candidates, filesFit: filesFit)
    }
}
