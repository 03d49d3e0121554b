import FoundationEssentials
import Glibc
import Synchronization

/// Where a command's text goes: a file descriptor, or memory for in-process tests.
public final class TextOutput: Sendable {
    private enum Target: Sendable { case descriptor(Int32), memory }

    private let target: Target
    /// A terminal (or captured as one): invisible characters are shown escaped too (see `TerminalText`).
    let isTerminal: Bool
    private let buffer = Mutex("")
    /// The lines `lineOnce` has written.
    private let said = Mutex(Set<String>())

    public init(descriptor: Int32) {
        target = .descriptor(descriptor)
        isTerminal = isatty(descriptor) == 1
    }

    /// Collects the text in memory; read it with `text`. `terminal`: escaped as for a terminal.
    public static func capturing(terminal: Bool = true) -> TextOutput { TextOutput(terminal: terminal) }

    private init(terminal: Bool) {
        target = .memory
        isTerminal = terminal
    }

    /// Writes text for a person: control characters from feeds or servers are shown escaped, and
    /// on a terminal invisible ones too (`TerminalText`); tabs and line feeds are kept.
    public func write(_ text: String) {
        writeVerbatim(TerminalText.escape(text, invisible: isTerminal))
    }

    /// Writes `text` as it is: the live view's and the player's own escape sequences, around
    /// text they escaped themselves.
    func writeVerbatim(_ text: String) {
        switch target {
        case .descriptor(let fd):
            var text = text
            text.withUTF8 { Self.write(fd, UnsafeRawBufferPointer($0)) }
        case .memory:
            buffer.withLock { $0 += text }
        }
    }

    /// Writes bytes as they are (UTF-8 text built elsewhere, a large JSON document, whose strings
    /// escape every control character).
    public func write(_ data: Data) {
        switch target {
        case .descriptor(let fd):
            data.withUnsafeBytes { Self.write(fd, $0) }
        case .memory:
            buffer.withLock { $0 += String(decoding: data, as: UTF8.self) }
        }
    }

    private static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(fd, base + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return   // a closed pipe: nothing more to say
            }
            offset += written
        }
    }

    public func line(_ line: String) { write(line + "\n") }

    /// Whether `other` writes to this terminal: a line for one may then go out through the other,
    /// in one write with a live view's frame, and no reader can tell.
    func sharesTerminal(with other: TextOutput) -> Bool {
        guard other !== self else { return true }
        guard isTerminal, other.isTerminal, case .descriptor(let mine) = target, case .descriptor(let theirs) = other.target else { return false }
        var (own, others) = (stat(), stat())
        return fstat(mine, &own) == 0 && fstat(theirs, &others) == 0 && own.st_rdev == others.st_rdev
    }

    /// Writes `line` unless this output has already had it: a warning about the home, say,
    /// from a command that opens it several times.
    public func lineOnce(_ line: String) {
        if said.withLock({ $0.insert(line).inserted }) { self.line(line) }
    }

    /// What a capturing output has collected.
    public var text: String { buffer.withLock { $0 } }
}

/// Everything a command may touch of its surroundings, so commands run the same
/// in-process (tests) and as the `monsoon` binary.
public struct CommandContext: Sendable {
    public var output: TextOutput
    public var errors: TextOutput
    public var environment: [String: String]
    public var currentDirectory: String
    /// Whether standard output is a terminal (live progress) or not (plain lines).
    public var isTerminal: Bool
    /// The terminal's width now (it follows resizes when `width` is updated on SIGWINCH).
    public var terminalWidth: Int {
        get { width.current }
        set { width = TerminalWidth(newValue) }
    }
    public var width: TerminalWidth
    /// Reads standard input to its end, refusing more than `limit` bytes (for `-i -`, `import -`):
    /// ``BoundedInput/read(descriptor:limit:)`` for the binary.
    public var readStandardInput: @Sendable (_ limit: Int) throws(BoundedInput.Failure) -> Data
    public var interruption: Interruption
    /// Where `play` reads its keys: a descriptor (standard input for the binary) read only when
    /// it is a terminal, or -1 for none.
    public var keyInput: Int32
    /// Periods and waits; tests shorten them.
    public var timings = Timings()

    public init(
        output: TextOutput, errors: TextOutput, environment: [String: String], currentDirectory: String,
        isTerminal: Bool, terminalWidth: Int = 80, readStandardInput: @escaping @Sendable (_ limit: Int) throws(BoundedInput.Failure) -> Data = { _ in Data() },
        interruption: Interruption = Interruption(), keyInput: Int32 = -1, width: TerminalWidth? = nil
    ) {
        self.keyInput = keyInput
        self.output = output
        self.errors = errors
        self.environment = environment
        self.currentDirectory = currentDirectory
        self.isTerminal = isTerminal
        self.width = width ?? TerminalWidth(terminalWidth)
        self.readStandardInput = readStandardInput
        self.interruption = interruption
    }

    /// Resolves a path given on the command line against the current folder.
    public func absolutePath(_ path: String) -> String {
        let expanded = path.expandingTilde
        let joined = expanded.hasPrefix("/") ? expanded : currentDirectory.joiningPath(expanded)
        return joined.standardizedPath
    }

    /// Prints `monsoon: <message>` on standard error.
    public func error(_ message: String) {
        errors.line("monsoon: \(message)")
    }

    /// Prints a warning on standard error, once per run however often it applies.
    public func warnOnce(_ message: String) {
        errors.lineOnce("monsoon: warning: \(message)")
    }
}
