import FoundationEssentials

/// Lines of a live view on a terminal, redrawn in place (`get`'s transfers, a worker's line).
/// Lines are cut to the terminal's width less one, so none wraps; when the terminal is resized,
/// the block drawn at the old width is cleared by the rows its lines take at the new one (a
/// terminal that rewraps, as tmux and VTE do, may have wrapped them).
struct LiveBlock {
    /// The display widths of the lines on screen (empty: none).
    private var drawnWidths: [Int] = []
    /// When it was last drawn: views redraw at most a few times a second.
    private(set) var lastDraw = Date.distantPast

    /// From the line below the block: to column 0 (where the terminal may have echoed `^C`), up
    /// the rows the block takes at the terminal's width now, and clear to the end of the screen.
    mutating func clear(_ context: CommandContext) {
        guard !drawnWidths.isEmpty else { return }
        context.output.writeVerbatim("\r\u{1B}[\(Self.physicalRows(drawnWidths, width: context.terminalWidth))A\u{1B}[J")
        drawnWidths = []
    }

    /// Draws `lines` (escaped and cut to the width already) in place of the block; `paint` may
    /// colour a line (by its index), which takes no columns.
    mutating func show(_ lines: [String], _ context: CommandContext, paint: (Int, String) -> String = { $1 }) {
        clear(context)
        context.output.writeVerbatim(lines.enumerated().map { paint($0.offset, $0.element) + "\n" }.joined())
        drawnWidths = lines.map(TerminalText.displayWidth)
        lastDraw = Date()
    }

    /// The rows lines of these display widths take on a terminal `width` columns wide.
    static func physicalRows(_ widths: [Int], width: Int) -> Int {
        let columns = max(1, width)
        return widths.reduce(0) { $0 + max(1, ($1 + columns - 1) / columns) }
    }
}
