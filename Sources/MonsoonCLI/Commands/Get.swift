import Foundation
import MonsoonPodcasts
import MonsoonEngine

/// `monsoon get`: download URLs into a folder.
struct Get: RunnableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Download URLs into a folder, several at a time, resuming where a previous run stopped.",
        discussion: """
            Each file is named after the server's Content-Disposition, else the last part of the final URL. \
            Bytes go to '<name>.part' until the download is complete and checked. Ctrl-C stops cleanly and \
            keeps the part files; running the same command again resumes them with Range requests.

            Exit status: 0 when every download succeeded, 1 when some failed, 2 on a usage error, \
            3 when a download failed for lack of disk space, 130 on Ctrl-C.
            """
    )

    @OptionGroup var global: GlobalOptions

    @OptionGroup var transfer: TransferOptions

    @Option(name: .customShort("i"), help: "Also read URLs from FILE, one per line ('-' for standard input; blank lines and # comments are skipped).", valueName: "file")
    var inputFile: String?

    @Option(name: [.customShort("o"), .long("out")], help: "The folder to download into (created when missing).", valueName: "dir")
    var out: String = "."

    @Argument(help: "The URLs to download (http or https).", valueName: "url")
    var urls: [String] = []

    init() {}

    mutating func validate() throws {
        if urls.isEmpty && inputFile == nil { throw ValidationError("Give at least one URL, or a file of URLs with -i.") }
    }

    func run(_ context: CommandContext) async throws -> Int32 {
        let inputs = try collectInputs(context)
        guard !inputs.valid.isEmpty || !inputs.invalid.isEmpty else {
            throw CLIError.usage("no URLs to download: \(inputFile ?? "the input") is empty")
        }
        for text in inputs.invalid {
            context.error("skipped '\(Redaction.redact(text))': not an http or https URL")
        }
        let home = try Home(option: global.home, context: context)
        let folder = context.absolutePath(out)
        try createFolder(folder)

        guard let lock = try HomeLock(path: home.lockPath) else {
            return try await handOff(inputs.valid, folder: folder, home: home, context: context)
        }
        defer { withExtendedLifetime(lock) {} }

        let manager = try QueueRun.openManager(home, configuration: transfer.configuration)
        let session = QueueRun(manager, context: context, global: global)

        // A URL already queued for this folder is the same download: resume it, or
        // report it done when its file is still there.
        let parts = PartialDownloads.find(in: folder)
        var requests: [DownloadRequest] = []
        for url in inputs.valid {
            guard let download = await manager.downloads(of: url).last(where: { Self.isIn(folder, $0) }) else {
                let destination: DownloadRequest.Destination = parts[url.absoluteString].map { .file($0) } ?? .directory(folder)
                requests.append(DownloadRequest(id: DownloadID(""), url: url, destination: destination))
                continue
            }
            if needsRetry(download, context: context) { try? await manager.retry(download.id) }
        }
        do {
            try await manager.enqueue(contentsOf: requests)
        } catch {
            await manager.shutdown()
            throw CLIError(message: "\(error)")
        }
        return await session.run(extraFailures: inputs.invalid.count)
    }

    /// Another process runs this home's queue: add the URLs to it (or ask it to retry
    /// them) and wait until it has taken them; it downloads them.
    private func handOff(_ urls: [URL], folder: String, home: Home, context: CommandContext) async throws -> Int32 {
        let store = try home.openStore()
        var fresh: [DownloadRequest] = []
        var retried: [DownloadID] = []
        for url in urls {
            guard let download = try store.downloads(of: url).last(where: { Self.isIn(folder, $0) }) else {
                fresh.append(DownloadRequest(id: DownloadID(""), url: url, destination: .directory(folder)))
                continue
            }
            if needsRetry(download, context: context) {
                try store.post(.retry(download.id))
                retried.append(download.id)
            }
        }
        let ids = try store.add(fresh)
        if !ids.isEmpty { try store.post(.adoptNewDownloads) }
        let handed = ids + retried
        guard !handed.isEmpty else { return ExitStatus.success }
        try await Control.waitUntilTaken(store, otherwise: "the running monsoon did not take the downloads within 10 s; they are queued (\(handed.map(\.rawValue).joined(separator: ", "))): run 'monsoon download' when it has stopped")
        let pid = HomeLock.holder(at: home.lockPath).map { " (pid \($0))" } ?? ""
        context.error("another monsoon\(pid) is downloading in \(home.path): handed it \(handed.count) download\(handed.count == 1 ? "" : "s") (\(handed.map(\.rawValue).joined(separator: ", "))); follow them with 'monsoon downloads'")
        return ExitStatus.success
    }

    /// What a URL already in the queue for this folder needs: a completed one whose file is
    /// still there is reported as done; one whose file is gone, a failed or a paused one is
    /// retried; an active one goes on by itself.
    private func needsRetry(_ download: Download, context: CommandContext) -> Bool {
        switch download.status {
        case .completed:
            if let path = download.filePath, FileManager.default.fileExists(atPath: path) {
                if !global.quiet { context.output.line("\(path)\t\(download.bytes)\talready downloaded (\(download.id))") }
                return false
            }
            return true
        case .failed, .paused:
            return true
        case .queued, .downloading, .waitingToRetry:
            return false
        }
    }

    private static func isIn(_ folder: String, _ download: Download) -> Bool {
        switch download.request.destination {
        case .directory(let path): return path == folder
        case .file(let path): return (path as NSString).deletingLastPathComponent == folder
        }
    }

    private func createFolder(_ folder: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw CLIError(message: "cannot create the folder \(folder): \((error as NSError).localizedDescription)")
        }
    }

    /// The URLs from the command line and the input file, in order, without repeats.
    private func collectInputs(_ context: CommandContext) throws -> (valid: [URL], invalid: [String]) {
        var texts = urls
        if let inputFile {
            let data: Data
            if inputFile == "-" {
                data = context.readStandardInput()
            } else {
                let path = context.absolutePath(inputFile)
                guard let contents = FileManager.default.contents(atPath: path) else {
                    throw CLIError(message: "cannot read the URL list \(path): no such readable file")
                }
                data = contents
            }
            for line in String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline) {
                let text = line.trimmingCharacters(in: .whitespaces)
                if text.isEmpty || text.hasPrefix("#") { continue }
                texts.append(text)
            }
        }
        var seen = Set<String>()
        var valid: [URL] = []
        var invalid: [String] = []
        for text in texts {
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host?.isEmpty == false else {
                invalid.append(text)
                continue
            }
            if seen.insert(url.absoluteString).inserted { valid.append(url) }
        }
        return (valid, invalid)
    }
}
