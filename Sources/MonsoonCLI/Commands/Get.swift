import Foundation
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

    @Option(name: .customShort("i"), help: "Also read URLs from FILE, one per line ('-' for standard input; blank lines and # comments are skipped).", valueName: "file")
    var inputFile: String?

    @Option(name: [.customShort("o"), .long("out")], help: "The folder to download into (created when missing).", valueName: "dir")
    var out: String = "."

    @Option(name: .shortAndLong, help: "Downloads running at once.", valueName: "n")
    var jobs: Int = 4

    @Option(name: .long, help: "Retries after the first attempt for transient failures.", valueName: "n")
    var retries: Int = 5

    @Option(name: .customLong("per-host"), help: "Downloads running at once to one host (default: no limit).", valueName: "n")
    var perHost: Int?

    @Option(name: .customLong("min-free"), help: "Free space to leave on the disk: a download that would eat into it does not start.", valueName: "size")
    var minFree: ByteSize = ByteSize(bytes: 64 << 20)

    @Argument(help: "The URLs to download (http or https).", valueName: "url")
    var urls: [String] = []

    init() {}

    mutating func validate() throws {
        if jobs < 1 { throw ValidationError("--jobs must be at least 1.") }
        if retries < 0 { throw ValidationError("--retries must be 0 or more.") }
        if let perHost, perHost < 1 { throw ValidationError("--per-host must be at least 1.") }
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
        let folder = context.absolutePath(out)
        try createFolder(folder)

        var configuration = EngineConfiguration()
        configuration.maxConcurrentDownloads = jobs
        configuration.maxDownloadsPerHost = perHost
        configuration.retry.maxRetries = retries
        configuration.diskReserve = minFree.bytes
        configuration.userAgent = "Monsoon/\(MonsoonCLI.version)"
        let manager = DownloadManager(configuration: configuration)

        // A part left by an earlier run of the same URL keeps its name and resumes.
        let parts = PartialDownloads.find(in: folder)
        let requests = inputs.valid.enumerated().map { index, url in
            let destination: DownloadRequest.Destination = parts[url.absoluteString].map { .file($0) } ?? .directory(folder)
            return DownloadRequest(id: DownloadID("\(index + 1)"), url: url, destination: destination)
        }
        let reporter = GetReporter(context: context, quiet: global.quiet, verbose: global.verbose, total: requests.count)
        let events = manager.events()
        try await manager.enqueue(contentsOf: requests)

        let interrupted = await withTaskGroup(of: Bool?.self) { group in
            group.addTask {
                for await event in events { reporter.handle(event) }
                return nil
            }
            if context.isTerminal && !global.quiet {
                group.addTask {
                    while !Task.isCancelled {
                        try? await Task.sleep(nanoseconds: 250_000_000)
                        reporter.redraw()
                    }
                    return nil
                }
            }
            group.addTask {
                await manager.waitUntilIdle()
                return false
            }
            group.addTask {
                await context.interruption.wait()
                return Task.isCancelled ? nil : true
            }
            var interrupted = false
            while let result = await group.next() {
                guard let result else { continue }
                interrupted = result
                break
            }
            // Ends the event stream (after its last events) and releases curl.
            await manager.shutdown()
            group.cancelAll()
            return interrupted
        }
        reporter.finish(interrupted: interrupted)
        if interrupted { return ExitStatus.interrupted }
        return reporter.exitStatus(invalidInputs: inputs.invalid.count)
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
