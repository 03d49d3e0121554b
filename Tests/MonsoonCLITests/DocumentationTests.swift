import Foundation
import MonsoonPodcasts
import Testing
@testable import MonsoonCLI

/// The README a newcomer reads in five minutes; `monsoon help` and the manual page are the
/// complete reference, and never send an installed user to a README they do not have.
@Suite struct DocumentationTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func lines(_ path: String) throws -> [String] {
        // As `wc -l` counts them: the newline that ends the last line starts no line.
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    @Test func theReadmesStayShort() throws {
        #expect(try Self.lines("README.md").count <= 400)
        #expect(try Self.lines("Benchmarks/README.md").count <= 250)
    }

    /// From nothing to an archive kept up to date, in the first 40 lines: install, archive or
    /// add, verify, sync; and the two commands of the house: the demo and the tests.
    @Test func theQuickStartComesFirst() throws {
        let opening = try Self.lines("README.md").prefix(40)
        func has(_ pattern: String) -> Bool { opening.contains { $0.range(of: pattern, options: .regularExpression) != nil } }
        for pattern in [#"apt-get install|make install|make deb"#, #"monsoon (archive|add) "#, #"monsoon verify"#, #"monsoon sync"#, #"make demo"#, #"make test"#] {
            #expect(has(pattern), "the first 40 lines of the README lack \(pattern)")
        }
    }

    /// The exit statuses the README lists are the ones the manual page documents.
    @Test func theReadmesExitStatusesAreTheManuals() async throws {
        let readme = try Self.lines("README.md")
        let listed = Set(readme.compactMap { line -> Int32? in
            guard line.hasPrefix("| ") else { return nil }
            return Int32(line.dropFirst(2).prefix { $0.isNumber })
        })
        let statuses: Set<Int32> = [ExitStatus.success, ExitStatus.failure, ExitStatus.usage, ExitStatus.diskFull, ExitStatus.interrupted]
        #expect(listed == statuses, "\(listed)")
        let folder = Folder()
        defer { folder.remove() }
        let manual = await runMonsoon(["completions", "man"], in: folder.path)
        for status in statuses { #expect(manual.output.contains(".It Li \(status)\n"), "the manual lists exit status \(status)") }
    }

    /// `help archive` is the reference for the template: every placeholder, and no pointer to a README.
    @Test func theHelpIsTheReference() async throws {
        let folder = Folder()
        defer { folder.remove() }
        let help = await runMonsoon(["help", "archive"], in: folder.path)
        for variable in NamingTemplate.variables { #expect(help.output.contains("{\(variable)}"), "help archive lacks {\(variable)}") }
        let manual = await runMonsoon(["completions", "man"], in: folder.path)
        #expect(!help.output.contains("README") && !manual.output.contains("README"))
        // And it ends by sending its reader to the page.
        let root = await runMonsoon(["help"], in: folder.path)
        #expect(root.output.trimmingCharacters(in: .newlines).hasSuffix("'man monsoon' for every detail."), "\(root.output)")
    }

    /// scripts/reference-roff.py makes docs/REFERENCE.md the manual's DETAILS (the install test
    /// reads the result): the markdown it uses as mdoc, and nothing roff would take for a
    /// request, an escape or a macro.
    @Test func theReferenceBecomesTheManualsDetails() async throws {
        let folder = Folder()
        defer { folder.remove() }
        let markdown = """
            # Left out
            ## Get `-o`
            .dot and \\back 'quote
            - a **bold** [link](#x)
              - nested
            | Field | What |
            | --- | --- |
            | `a"b` | c |
            ```
            .code -x
            ```
            """
        try markdown.write(toFile: folder.file("in.md"), atomically: true, encoding: .utf8)
        let script = Self.root.appendingPathComponent("scripts/reference-roff.py").path
        let converted = try await ArchiveCommandTests.shell("/bin/bash", [], input: "python3 '\(script)' '\(folder.file("in.md"))' 2>&1")
        #expect(converted.status == 0)
        #expect(converted.output.split(separator: "\n") == [
            ".Sh DETAILS", #".Ss "Get \fB\-o\fR""#, #"\&.dot and \eback 'quote"#, ".Bl -bullet", ".It", #"a \fBbold\fR link"#,
            ".Bl -bullet -compact", ".It", "nested", ".El", ".El", ".Bl -tag -width Ds", #".It "Field""#, "What",
            #".It "\fBa\(dqb\fR""#, "c", ".El", ".Bd -literal -offset indent", #"\&.code \-x"#, ".Ed",
        ], "\(converted.output)")
    }
}
