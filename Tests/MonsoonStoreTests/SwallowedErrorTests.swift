import Foundation
import Testing

/// An error dropped with `try?` must say why it cannot matter: a comment on the same line, or
/// on the line before (which also covers the `try?` lines right under it). Anything else is an
/// error swallowed, which Monsoon never does: it is reported when it happens.
@Suite struct SwallowedErrorTests {
    /// The package's `Sources` folder, found from this file's place in `Tests`.
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources").path

    /// `file:line: text` for every `try?` in `text` without its comment.
    static func uncommented(in text: String, file: String) -> [String] {
        var found: [String] = []
        var previous = ""
        var previousAccepted = false
        for (index, line) in text.components(separatedBy: "\n").enumerated() {
            let code = line.trimmingCharacters(in: .whitespaces)
            let hasTry = code.range(of: #"(^|[^A-Za-z0-9_])try\?"#, options: .regularExpression) != nil
            if hasTry {
                // A comment: `//` after the code, not one inside a URL (`https://`) or a string.
                let trailing = code.range(of: #"(^|[^:"/])//[^/]"#, options: .regularExpression) != nil
                let explained = trailing || (previous.hasPrefix("//") && !previous.hasPrefix("///")) || previousAccepted
                if !explained { found.append("\(file):\(index + 1): \(code)") }
                previousAccepted = explained
            } else {
                previousAccepted = false
            }
            previous = code
        }
        return found
    }

    @Test func everyTryQuestionMarkInSourcesSaysWhyItsErrorCannotMatter() throws {
        let files = try #require(FileManager.default.enumerator(atPath: Self.sources)).compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }
        #expect(files.count > 50, "the sources were found at \(Self.sources)")
        var found: [String] = []
        for file in files.sorted() {
            let text = try String(contentsOfFile: Self.sources + "/" + file, encoding: .utf8)
            found += Self.uncommented(in: text, file: file)
        }
        #expect(found.isEmpty, "try? without a comment saying why its error cannot matter:\n\(found.joined(separator: "\n"))")
    }

    /// The rule itself: a comment on the line or the line before; a doc comment is not one.
    @Test func theRuleTellsAnExplainedTryFromASwallowedOne() {
        #expect(Self.uncommented(in: "let a = try? f()   // why", file: "f").isEmpty)
        #expect(Self.uncommented(in: "// why\ntry? f()\ntry? g()", file: "f").isEmpty)
        #expect(Self.uncommented(in: "func f(retry: Retry? = nil)", file: "f").isEmpty)
        #expect(Self.uncommented(in: "/// docs\nlet a = try? f()", file: "f") == ["f:2: let a = try? f()"])
        #expect(Self.uncommented(in: "x()\n_ = try? f()", file: "f") == ["f:2: _ = try? f()"])
        #expect(Self.uncommented(in: "let a = try? get(\"https://example.com\")", file: "f") == ["f:1: let a = try? get(\"https://example.com\")"],
                "a URL's // is no comment")
    }
}
