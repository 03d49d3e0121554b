import FoundationEssentials
import MonsoonPodcasts
import MonsoonEngine

struct Downloads: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "downloads",
        abstract: "List the download queue (the default), or clear finished entries from it.",
        discussion: "Examples:\n\n  monsoon downloads\n  monsoon downloads --status failed\n  monsoon downloads clear --failed",
        subcommands: [ListDownloads.self, ClearDownloads.self],
        defaultSubcommand: ListDownloads.self)

    @OptionGroup var global: GlobalOptions

    init() {}
}

struct ListDownloads: RunnableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the download queue, in enqueue order.",
        discussion: """
            While a monsoon downloads, the list shows its progress (saved about once a second). \
            A download that was running when its monsoon was killed shows as 'interrupted': the \
            next 'monsoon download' (or a 'monsoon get' of its URL) resumes it.

            Examples:

              monsoon downloads --json
              monsoon downloads --status interrupted
            """
    )

    @OptionGroup var global: GlobalOptions

    @Flag("--json", help: "Print a JSON array of objects: id, url, destination, file, status, bytes, total, progress, error.")
    var json = false

    /// The statuses a listing shows: the engine's, and `interrupted` for a download
    /// marked downloading while no process holds the home's lock.
    enum ShownStatus: String, CaseIterable, ExpressibleByArgument {
        case queued, downloading, interrupted, waitingToRetry, paused, completed, failed
    }

    @Option("--status", help: "Only downloads in this status.", valueName: "status")
    var status: ShownStatus?

    init() {}

    func run(_ context: CommandContext) async throws -> Int32 {
        let home = try Home(option: global.home, context: context, use: .reading)
        let store = try home.openStore()
        // A row says "downloading" until its process saves another state; only while a
        // process holds the lock is that true. Checked before reading, so a download that a
        // process starts meanwhile shows as interrupted at worst, never the other way round.
        let running = HomeLock.isHeld(at: home.lockPath)
        // Streamed a row at a time: a queue of a hundred thousand lists in a fraction
        // of a second, in flat memory. Output is written in blocks, not per line.
        var buffer = ""
        var count = 0
        func flush(_ force: Bool = false) {
            if force || buffer.utf8.count > 64 * 1024 {
                context.output.write(buffer)
                buffer.removeAll(keepingCapacity: true)
            }
        }
        if json { buffer += "[" }
        let table = Self.table(terminalWidth: context.isTerminal ? context.terminalWidth : nil)
        do {
            try store.forEachSummary { summary in
                let shown = Self.shownStatus(summary.status, running: running)
                if let status, status.rawValue != shown { return }
                if json {
                    buffer += (count == 0 ? "\n  " : ",\n  ") + Self.json(summary, status: shown)
                } else {
                    if count == 0 { buffer += table.row(table.columns.map(\.title), name: "FILE", padName: true) + " URL\n" }
                    buffer += Self.line(summary, status: shown, table: table) + "\n"
                }
                count += 1
                flush()
            }
        } catch {
            throw CLIError(message: "cannot read the download queue: \(error)")
        }
        if json {
            buffer += count == 0 ? "]\n" : "\n]\n"
        } else if count == 0 && !global.quiet {
            buffer += status == nil
                ? "the queue is empty; add downloads with 'monsoon get URL...'\n"
                : "No download is \(status?.rawValue ?? "").\n"
        }
        flush(true)
        return ExitStatus.success
    }

    static func shownStatus(_ status: DownloadStatus, running: Bool) -> String {
        status == .downloading && !running ? "interrupted" : status.rawValue
    }

    /// Fixed columns, then the file (on a terminal cut in the middle to 40 columns, fewer on a narrow
    /// one; whole in a pipe, where a long path pushes the URL right but never runs into it), the URL,
    /// and the error, if any, after "error:".
    static func table(terminalWidth: Int?) -> TextTable {
        TextTable([.init(title: "ID", width: 6), .init(title: "STATUS", width: 14), .init(title: "DONE", width: 5), .init(title: "SIZE", width: 22)],
                  name: "FILE", terminalWidth: terminalWidth, nameLimit: 40)
    }

    static func line(_ download: DownloadSummary, status: String, table: TextTable) -> String {
        let progress = download.progress.map { "\(Int(($0 * 100).rounded(.down)))%" } ?? "-"
        let size = download.total.map { "\(ByteCount.format(download.bytes)) / \(ByteCount.format($0))" } ?? ByteCount.format(download.bytes)
        var line = table.row([download.id.rawValue, status, progress, size], name: download.filePath ?? "-", padName: true) + " " + Redaction.redact(download.url)
        // A queued one with an error is waiting for room on its disk: it says so.
        if let error = download.error, download.status == .failed || download.status == .waitingToRetry || download.status == .queued {
            line += "  error: " + error
        }
        return line
    }

    /// One object of the documented shape: id, url, destination, file (null until named),
    /// status, bytes, total (null when unknown), progress (0 to 1 or null), error (null or a message).
    static func json(_ download: DownloadSummary, status: String) -> String {
        let destination = download.isFolder ? (download.filePath ?? download.destination) : download.destination
        let error = download.status == .completed ? nil : download.error
        return "{\"id\": \(JSONText.string(download.id.rawValue)), \"url\": \(JSONText.string(Redaction.redact(download.url))), "
            + "\"destination\": \(JSONText.string(destination)), \"file\": \(download.filePath.map(JSONText.string) ?? "null"), "
            + "\"status\": \"\(status)\", \"bytes\": \(download.bytes), "
            + "\"total\": \(download.total.map(String.init) ?? "null"), \"progress\": \(download.progress.map { JSONText.number($0) } ?? "null"), "
            + "\"error\": \(error.map(JSONText.string) ?? "null")}"
    }
}

struct ClearDownloads: RunnableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clear",
        abstract: "Forget completed downloads (and failed ones with --failed); files are not touched.",
        discussion: """
            The downloaded files, and the part files of failed downloads, stay where they are. \
            A later 'monsoon get' of a forgotten URL whose part file is still there resumes it.

            Examples:

              monsoon downloads clear
              monsoon downloads clear --failed
            """
    )

    @OptionGroup var global: GlobalOptions

    @Flag("--failed", help: "Also forget failed downloads.")
    var failed = false

    init() {}

    func run(_ context: CommandContext) async throws -> Int32 {
        let home = try Home(option: global.home, context: context)
        let store = try home.openStore()
        let statuses: Set<DownloadStatus> = failed ? [.completed, .failed] : [.completed]
        let count = try CLIError.prefixing("cannot clear the download queue") { try store.forget(withStatus: statuses) }

        if !global.quiet {
            let what = failed ? "completed or failed" : "completed"
            context.output.line("forgot \(count) \(what) download\(count == 1 ? "" : "s"); their files are untouched")
        }
        return ExitStatus.success
    }
}
