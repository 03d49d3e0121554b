import Foundation
import MonsoonPodcasts
import MonsoonEngine

/// `monsoon downloads`: list the queue.
struct Downloads: RunnableCommand {
    static let configuration = CommandConfiguration(
        commandName: "downloads",
        abstract: "List the download queue, in enqueue order.",
        discussion: "While a monsoon downloads, the list shows its progress (saved about once a second)."
    )

    @OptionGroup var global: GlobalOptions

    @Flag(name: .long, help: "Print a JSON array of objects: id, url, destination, status, bytes, total, progress, error.")
    var json = false

    init() {}

    func run(_ context: CommandContext) async throws -> Int32 {
        let home = try Home(option: global.home, context: context)
        let store = try home.openStore()
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
        do {
            try store.forEachSummary { summary in
                if json {
                    buffer += (count == 0 ? "\n  " : ",\n  ") + Self.json(summary)
                } else {
                    buffer += Self.line(summary) + "\n"
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
            buffer += "The queue is empty. Add downloads with 'monsoon get URL...'.\n"
        }
        flush(true)
        return ExitStatus.success
    }

    static func line(_ download: DownloadSummary) -> String {
        let progress = download.progress.map { "\(Int(($0 * 100).rounded(.down)))%" } ?? "-"
        let size = download.total.map { "\(ByteCount.format(download.bytes)) / \(ByteCount.format($0))" } ?? ByteCount.format(download.bytes)
        var line = "\(download.id.rawValue.padding(toLength: 6, withPad: " ", startingAt: 0)) \(download.status.rawValue.padding(toLength: 14, withPad: " ", startingAt: 0)) \(progress.padding(toLength: 5, withPad: " ", startingAt: 0)) \(size.padding(toLength: 22, withPad: " ", startingAt: 0)) "
        line += download.filePath ?? Redaction.redact(download.url)
        if let error = download.error, download.status == .failed || download.status == .waitingToRetry {
            line += "  (\(error))"
        }
        return line
    }

    /// One object of the documented shape: id, url, destination, status, bytes,
    /// total (null when unknown), progress (0 to 1 or null), error (null or a message).
    static func json(_ download: DownloadSummary) -> String {
        let destination = download.isFolder ? (download.filePath ?? download.destination) : download.destination
        let error = download.status == .completed ? nil : download.error
        return "{\"id\": \(JSONText.string(download.id.rawValue)), \"url\": \(JSONText.string(Redaction.redact(download.url))), "
            + "\"destination\": \(JSONText.string(destination)), \"status\": \"\(download.status.rawValue)\", \"bytes\": \(download.bytes), "
            + "\"total\": \(download.total.map(String.init) ?? "null"), \"progress\": \(download.progress.map { JSONText.number($0) } ?? "null"), "
            + "\"error\": \(error.map(JSONText.string) ?? "null")}"
    }
}
