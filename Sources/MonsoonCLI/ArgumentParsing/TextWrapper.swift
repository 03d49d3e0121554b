/// Word wrapping for help text.
enum TextWrapper {
    /// Breaks `text` into lines of at most `width` characters at spaces. A word longer than
    /// `width` gets a line of its own rather than being cut.
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: true) {
            if line.isEmpty {
                line = String(word)
            } else if line.count + 1 + word.count <= width {
                line += " " + word
            } else {
                lines.append(line)
                line = String(word)
            }
        }
        if !line.isEmpty || lines.isEmpty { lines.append(line) }
        return lines
    }

    /// Wraps each line of multi-line text to `width` columns, keeping blank lines. Lines that
    /// begin with a space are kept as written, so examples and tables keep their layout.
    static func wrapParagraphs(_ text: String, width: Int) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).flatMap { line -> [String] in
            if line.isEmpty || line.first == " " { return [String(line)] }
            return wrap(String(line), width: width)
        }.joined(separator: "\n")
    }

    /// `text` wrapped to `width` columns, each line after the first indented by `indent`
    /// spaces, for a first line that follows a label such as "Usage: ".
    static func hanging(_ text: String, width: Int, indent: Int) -> String {
        wrap(text, width: width - indent).joined(separator: "\n" + String(repeating: " ", count: indent))
    }
}
