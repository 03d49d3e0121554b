import Foundation
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
        let downloads = try home.openStore().downloads()
        if json {
            context.output.line(Self.json(downloads))
            return ExitStatus.success
        }
        if downloads.isEmpty {
            if !global.quiet { context.output.line("The queue is empty. Add downloads with 'monsoon get URL...'.") }
            return ExitStatus.success
        }
        for download in downloads {
            context.output.line(Self.line(download))
        }
        return ExitStatus.success
    }

    static func line(_ download: Download) -> String {
        let progress = download.progress.map { "\(Int(($0 * 100).rounded(.down)))%" } ?? "-"
        let size = download.total.map { "\(ByteCount.format(download.bytes)) / \(ByteCount.format($0))" } ?? ByteCount.format(download.bytes)
        var line = "\(download.id.rawValue.padding(toLength: 6, withPad: " ", startingAt: 0)) \(download.status.rawValue.padding(toLength: 14, withPad: " ", startingAt: 0)) \(progress.padding(toLength: 5, withPad: " ", startingAt: 0)) \(size.padding(toLength: 22, withPad: " ", startingAt: 0)) "
        line += download.filePath ?? Redaction.redact(download.request.url)
        if let error = download.lastError, download.status == .failed || download.status == .waitingToRetry {
            line += "  (\(error.message))"
        }
        return line
    }

    /// The documented shape: an array of objects with id, url, destination, status,
    /// bytes, total (null when unknown), progress (0 to 1 or null) and error (null or a message).
    static func json(_ downloads: [Download]) -> String {
        let objects: [[String: Any]] = downloads.map { download in
            let destination: String = switch download.request.destination {
            case .file(let path): path
            case .directory(let path): download.filePath ?? path
            }
            return [
                "id": download.id.rawValue,
                "url": Redaction.redact(download.request.url),
                "destination": destination,
                "status": download.status.rawValue,
                "bytes": download.bytes,
                "total": download.total.map { $0 as Any } ?? NSNull(),
                "progress": download.progress.map { $0 as Any } ?? NSNull(),
                "error": download.lastError.map { $0.message as Any } ?? NSNull(),
            ]
        }
        let data = (try? JSONSerialization.data(withJSONObject: objects, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])) ?? Data("[]".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
