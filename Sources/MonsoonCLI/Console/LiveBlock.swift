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

    /// Draws `lines` (escaped and cut to the width already) in place of the block, below `above`
    /// (lines that stay, as a finished download's), in one write: up to the block's first row, each
    /// line over the old one, then clear to the end of the screen. A terminal never shows the block
    /// erased and not yet drawn again. `paint` may colour a line of `lines` (by its index), which
    /// takes no columns.
    mutating func show(_ lines: [String], above: [String] = [], _ context: CommandContext, at now: Date = Date(),
                       paint: (Int, String) -> String = { $1 }) {
        var frame = drawnWidths.isEmpty ? "" : "\r\u{1B}[\(Self.physicalRows(drawnWidths, width: context.terminalWidth))A"
        for line in above + lines.enumerated().map(paint) { frame += line + "\u{1B}[K\n" }
        context.output.writeVerbatim(frame + "\u{1B}[J")
        drawnWidths = lines.map(TerminalText.displayWidth)
        lastDraw = now
    }

    /// Up to the block's first row, erasing nothing: a line written next (on standard error) takes
    /// that row's place, and the next `show` draws the block below it.
    mutating func rewind(_ context: CommandContext) {
        guard !drawnWidths.isEmpty else { return }
        context.output.writeVerbatim("\r\u{1B}[\(Self.physicalRows(drawnWidths, width: context.terminalWidth))A")
        drawnWidths = []
    }

    /// The rows lines of these display widths take on a terminal `width` columns wide.
    static func physicalRows(_ widths: [Int], width: Int) -> Int {
        let columns = max(1, width)
        return widths.reduce(0) { $0 + max(1, ($1 + columns - 1) / columns) }
    }
}
