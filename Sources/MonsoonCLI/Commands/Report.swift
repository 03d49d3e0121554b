import FoundationEssentials

struct Report: RunnableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Write the page of a run (HTML, self-contained) from the JSON report --report wrote.",
        discussion: """
            The page shows a timeline with one bar per download (queued, waiting for the first byte, \
            transferring, waiting to retry; coloured by outcome), throughput over time overall and per host, \
            time to first byte per host, and a table per host. It is one file with inline SVG: it loads nothing. \
            Without -o the page goes to standard output. Exit status: 0 when written, 1 when FILE cannot be read \
            or is not a Monsoon run report, or the page cannot be written.

              monsoon get --report run.json URL...
              monsoon report run.json -o run.html
            """)
    @OptionGroup var global: GlobalOptions
    @Option("-o", "--output", help: "Write the page to FILE (atomically) instead of standard output.", valueName: "file")
    var output: String?
    @Argument(help: "The JSON run report, as --report wrote it.", valueName: "file") var file: String
    init() {}

    func run(_ context: CommandContext) async throws -> Int32 {
        let path = context.absolutePath(file)
        let page = try RunPage.html(reportData: try ReportFile.read(path), path: path)
        if let output {
            try ReportFile.write(page, to: context.absolutePath(output), what: "the page")
        } else {
            context.output.write(page)
        }
        return ExitStatus.success
    }
}
