/// The listings' columns (`podcasts`, `downloads`, `queue`, `episodes`): fixed widths counted in terminal
/// columns, not characters, so a CJK title or an emoji never shifts the columns after it; a
/// header row names them. The name column is cut in the middle (its extension kept) to fit a
/// terminal's width; a pipe gets it whole, for scripts.
struct TextTable {
    struct Column {
        var title: String
        var width: Int
    }

    /// The fixed columns, then the name.
    var columns: [Column]
    var nameTitle: String
    /// Columns left for the name, or nil for no limit (not a terminal).
    var nameWidth: Int?
    /// The most the name takes even on a wide terminal, when columns follow it.
    var nameLimit: Int?

    /// - Parameter terminalWidth: the terminal's width, or nil when the output is not one.
    init(_ columns: [Column], name: String, terminalWidth: Int?, nameLimit: Int? = nil) {
        self.columns = columns
        nameTitle = name
        self.nameLimit = nameLimit
        let fixed = columns.reduce(0) { $0 + $1.width + 1 }
        // One column short of the edge: a line as wide as the terminal wraps on some of them.
        nameWidth = terminalWidth.map { max(8, min(nameLimit ?? .max, $0 - 1 - fixed)) }
    }

    var header: String { row(columns.map(\.title), name: nameTitle, padName: false) }

    /// One line: each value padded to its column, then the name (cut to fit); `padName` pads
    /// it to its width for a column that follows it.
    func row(_ values: [String], name: String, padName: Bool = false) -> String {
        var line = ""
        for (value, column) in zip(values, columns) {
            line += TerminalText.pad(value, width: column.width) + " "
        }
        guard let nameWidth else {
            return line + (padName ? TerminalText.pad(name, width: nameLimit ?? 0) : name)
        }
        // Escaped first, as the terminal will be given it: an escape takes columns too.
        let shown = TerminalText.middleCut(TerminalText.escape(name, keepingLayout: false), width: nameWidth)
        return line + (padName ? TerminalText.pad(shown, width: nameWidth) : shown)
    }
}
