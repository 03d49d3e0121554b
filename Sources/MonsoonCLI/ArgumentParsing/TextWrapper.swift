/// Word wrapping for help text.
enum TextWrapper {
    /// Breaks `text` into lines of at most `width` characters at spaces; a longer word gets a
    /// line of its own rather than being cut.
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if line.isEmpty {
                line = String(word)
            } else if line.count + 1 + word.count <= width {
                line += " " + word
            } else {
                lines.append(line)
                line = String(word)
            }
        }
        return lines + [line]
    }

    /// Wraps each line of `text`, keeping blank lines and lines that begin with a space (examples).
    static func wrapParagraphs(_ text: String, width: Int) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).flatMap { line in
            line.isEmpty || line.first == " " ? [String(line)] : wrap(String(line), width: width)
        }.joined(separator: "\n")
    }
}
