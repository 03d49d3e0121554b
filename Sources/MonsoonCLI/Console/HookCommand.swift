import FoundationEssentials
import Glibc
import MonsoonBasics

/// `--exec CMD`, split into words as a shell splits a simple command, and nothing more: the
/// program is run directly, so `$`, `;`, `|`, `>`, `*` and `~` are plain characters, and a file's
/// title never reaches a shell unless the user writes one (`sh -c '...' sh {}`).
///
/// Blanks (space, tab, newline, carriage return) separate words; `'...'` keeps what is inside as
/// it is, `"..."` too but `\"` and `\\` stand for `"` and `\`; outside quotes `\` keeps the next
/// character. `''` and `""` make an empty word. In each word, every `{}` becomes the file's path.

struct HookCommand: Sendable, Equatable {
    /// The words as written, `{}` not yet replaced; the first is the program.
    let words: [String]

    init(_ text: String) throws(HookError) {
        var words: [String] = []
        var word = ""
        var inWord = false
        var characters = text.makeIterator()
        while let character = characters.next() {
            switch character {
            // "\r\n" is one Character in Swift: a command written on Windows splits as on Unix.
            case " ", "\t", "\n", "\r", "\r\n":
                if inWord { words.append(word) }
                word = ""
                inWord = false
            case "'":
                inWord = true
                while true {
                    guard let next = characters.next() else { throw HookError(.syntax, "a ' is not closed; close it, or write \\' for the character") }
                    if next == "'" { break }
                    word.append(next)
                }
            case "\"":
                inWord = true
                while true {
                    guard let next = characters.next() else { throw HookError(.syntax, "a \" is not closed; close it, or write \\\" for the character") }
                    if next == "\"" { break }
                    if next == "\\" {
                        guard let escaped = characters.next() else { throw HookError(.syntax, "a \" is not closed; close it, or write \\\" for the character") }
                        if escaped != "\"" && escaped != "\\" { word.append("\\") }
                        word.append(escaped)
                    } else {
                        word.append(next)
                    }
                }
            case "\\":
                guard let next = characters.next() else { throw HookError(.syntax, "it ends with a \\ that escapes nothing; remove it, or write \\\\ for the character") }
                inWord = true
                word.append(next)
            default:
                inWord = true
                word.append(character)
            }
        }
        if inWord { words.append(word) }
        guard let program = words.first, !program.isEmpty else { throw HookError(.syntax, "it names no program; give one, like --exec 'cp {} /backup/'") }
        self.words = words
    }

    /// The program and its arguments for the file at `path`.
    func arguments(file path: String) -> [String] {
        words.map { $0.replacing("{}", with: path) }
    }

    /// The program's path for the file at `file` (the first word with `{}` replaced, so `--exec
    /// '{}'` runs the file itself): a name with a `/` as it is (relative to `directory`), else
    /// the first executable file of that name in `PATH`'s folders, as a shell finds it.
    /// - Throws: `HookError` (`.notFound`) saying what to do.
    func program(for file: String, searchPath: String?, directory: String) throws(HookError) -> String {
        let name = arguments(file: file)[0]
        if name.contains("/") {
            let path = (name.hasPrefix("/") ? name : directory.joiningPath(name)).standardizedPath
            guard FileManager.default.fileExists(atPath: path) else {
                throw HookError(.notFound, "the hook's program \(path) does not exist; check the path given with --exec")
            }
            guard access(path, X_OK) == 0 else {
                throw HookError(.notFound, "the hook's program \(path) is not executable; make it so (chmod +x) or run it through its interpreter (--exec 'sh \(name) {}')")
            }
            return path
        }
        for folder in (searchPath ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":", omittingEmptySubsequences: false) {
            let base = folder.isEmpty ? directory : (String(folder).hasPrefix("/") ? String(folder) : directory.joiningPath(String(folder)))
            let candidate = base.joiningPath(name)
            var info = stat()
            if stat(candidate, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, access(candidate, X_OK) == 0 { return candidate }
        }
        throw HookError(.notFound, "the hook's program '\(name)' is not in any folder of PATH; install it, or give its full path in --exec")
    }
}

enum HookDomain: ErrorDomain {}

/// Why a hook could not run, or its command could not be read. Its message is one line: what
/// went wrong and what to do.
typealias HookError = CodedError<HookDomain>

extension HookError.Code {
    /// `--exec`'s text cannot be split into words (an unclosed quote).
    static var syntax: Self { Self(rawValue: "syntax") }
    /// The program is not there, or not executable.
    static var notFound: Self { Self(rawValue: "notFound") }
    /// The system refused to start it.
    static var cannotStart: Self { Self(rawValue: "cannotStart") }
}
