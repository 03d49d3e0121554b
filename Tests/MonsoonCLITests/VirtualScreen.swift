@testable import MonsoonCLI

/// A small terminal for tests: prints characters by their display width with automatic wrap,
/// and follows `\r`, `\n`, `ESC[nA` (up), `ESC[J` (clear to the end), `ESC[K` (clear the line);
/// colours and other sequences are skipped. A resize rewraps what is on it, as tmux and VTE do:
/// rows a long line wrapped into are joined and split again at the new width.
final class VirtualScreen: @unchecked Sendable {
    // Only touched from the test's task.
    struct Row {
        var text = ""
        var width = 0
        /// The line goes on in the next row (it was wrapped there, not ended).
        var wrapped = false
    }

    private(set) var columns: Int
    let height: Int
    private(set) var rows: [Row] = [Row()]
    private var row = 0
    private var column = 0
    /// The terminal's "pending wrap": at the last column, the next character goes to the next row.
    private var pendingWrap = false
    /// How often a line ran past the edge and wrapped, ever.
    private(set) var wraps = 0
    /// Every line as it stood when it was ended by a line feed: the frames a snapshot of the
    /// screen may have missed (a busy test reads the terminal seldom).
    private(set) var ended: [String] = []

    init(columns: Int, rows: Int) {
        self.columns = columns
        height = rows
    }

    /// The rows a user sees (the last `height`).
    var visible: [String] { rows.suffix(height).map(\.text) }

    /// The rows with text.
    var lines: [String] { rows.map(\.text).filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty } }

    func play(_ text: String) {
        var iterator = text.makeIterator()
        while let character = iterator.next() {
            switch character {
            case "\r\n":
                column = 0
                newline()
            case "\r":
                column = 0
                pendingWrap = false
            case "\n":
                newline()
            case "\u{1B}":
                guard let next = iterator.next() else { return }
                guard next == "[" else { continue }
                var parameters = ""
                while let part = iterator.next() {
                    if part.isLetter || part == "@" || part == "~" {
                        perform(part, parameters)
                        break
                    }
                    parameters.append(part)
                }
            default:
                put(character)
            }
        }
    }

    private func newline() {
        ended.append(rows[row].text)
        pendingWrap = false
        row += 1
        if row == rows.count { rows.append(Row()) }
    }

    private func perform(_ command: Character, _ parameters: String) {
        switch command {
        case "A":
            let count = Int(parameters) ?? 1
            let top = max(0, rows.count - height)
            row = max(top, row - count)
            pendingWrap = false
        case "J":
            cut(row, at: column)
            rows.removeSubrange((row + 1)...)
            rows[row].wrapped = false
        case "K":
            cut(row, at: column)
        default:
            break   // colours and the rest draw nothing
        }
    }

    /// Keeps the first `columns` columns of a row.
    private func cut(_ index: Int, at columns: Int) {
        var kept = ""
        var width = 0
        for character in rows[index].text {
            let next = TerminalText.displayWidth(character)
            if width + next > columns { break }
            kept.append(character)
            width += next
        }
        rows[index].text = kept
        rows[index].width = width
    }

    private func put(_ character: Character) {
        let width = TerminalText.displayWidth(character)
        if pendingWrap || column + width > columns {
            rows[row].wrapped = true
            wraps += 1
            newline()
            column = 0
        }
        // Overwrites what is under the cursor (the live view only ever writes on cleared rows).
        if rows[row].width > column { cut(row, at: column) }
        if rows[row].width < column { rows[row].text += String(repeating: " ", count: column - rows[row].width) }
        rows[row].text.append(character)
        column += width
        rows[row].width = column
        pendingWrap = column >= columns
    }

    /// A new width: every line rewrapped; the cursor stays at the start of its line's rows.
    func resize(columns newColumns: Int) {
        var logical: [(text: String, holdsCursor: Bool)] = []
        var current = ""
        var holdsCursor = false
        for (index, line) in rows.enumerated() {
            current += line.text
            if index == row { holdsCursor = true }
            if !line.wrapped || index == rows.count - 1 {
                logical.append((current, holdsCursor))
                current = ""
                holdsCursor = false
            }
        }
        columns = newColumns
        rows = []
        var cursorRow = 0
        for (text, holds) in logical {
            if holds { cursorRow = rows.count }
            var piece = Row()
            for character in text {
                let width = TerminalText.displayWidth(character)
                if piece.width + width > newColumns {
                    piece.wrapped = true
                    rows.append(piece)
                    piece = Row()
                }
                piece.text.append(character)
                piece.width += width
            }
            rows.append(piece)
        }
        row = cursorRow
        column = 0
        pendingWrap = false
    }
}
