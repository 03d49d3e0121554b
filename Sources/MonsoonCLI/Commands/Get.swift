import FoundationEssentials
import MonsoonPodcasts
import MonsoonEngine

/// A `get` answers for its own URLs: it starts, reports and counts only those, and leaves
/// the rest of the home's queue to `monsoon download`. When another process already runs
/// the queue, it hands its URLs over and follows them to the end (`Get+HandOff.swift`).
struct Get: RunnableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Download URLs into a folder, several at a time, resuming where a previous run stopped.",
        discussion: """
            Each file is named after the server's Content-Disposition, else the last part of the final URL; \
            an existing file is never overwritten (the new one gets ' (2)'). Bytes go to '<name>.part' until \
            the download is complete and checked. Ctrl-C stops cleanly and keeps the part files; running the \
            same command again resumes them with Range requests.

            When another monsoon is already downloading in the same home, the URLs are handed to it and this \
            command follows them to the end, printing and exiting as if it ran them itself.

            Exit status: 0 when every URL is downloaded, 1 when a download failed or was paused or removed \
            from another command, 2 on a usage error (also when some input lines were not URLs), 3 when a \
            download failed for lack of disk space, 130 on Ctrl-C.

            Examples:

              monsoon get https://example.com/a.mp3 https://example.com/b.mp3
              monsoon get -o ~/Downloads -j 8 -i urls.txt
              monsoon get --skip-existing -i urls.txt --json
              monsoon get --warc capture.warc.gz https://example.com/a.mp3
            """
    )

    static let handlesInterruption = true

    @OptionGroup var global: GlobalOptions

    @OptionGroup var transfer: TransferOptions

    @OptionGroup var output: RunOutputOptions

    @OptionGroup var after: AfterDownloadOptions
    @OptionGroup var warc: WARCOptions

    @Option("-i", help: "Also read URLs from FILE, one per line ('-' for standard input; blank lines and # comments are skipped).", valueName: "file")
    var inputFile: String?

    @Option("-o", "--out", "--output", help: "The folder to download into (created when missing).", valueName: "dir")
    var out: String = "."

    @Flag("--skip-existing", help: "Count a URL as done, without a request, when a file of its name (the last part of its path) is already in the folder.")
    var skipExisting = false

    @Flag("--no-wait", help: "When another monsoon is downloading, hand the URLs to it and return at once.")
    var noWait = false

    @Flag("--discard", help: "Write nothing: download, count (and with --checksum, hash) the bodies; for measuring. Prints URL<TAB>BYTES[<TAB>SHA-256].")
    var discard = false

    @Option("--checksum", help: "With --discard: hash each body (sha256).", valueName: "algorithm")
    var checksum: String?

    @Argument(help: "The URLs to download (http or https).", valueName: "url")
    var urls: [String] = []

    init() {}

    mutating func validate() throws {
        if urls.isEmpty && inputFile == nil { throw ValidationError("give at least one URL, or a file of URLs with -i") }
        if let checksum {
            guard checksum.lowercased() == "sha256" else { throw ValidationError("'\(checksum)' is not a checksum Monsoon computes; use sha256") }
            guard discard else { throw ValidationError("--checksum goes with --discard") }
        }
        if discard && skipExisting { throw ValidationError("--skip-existing has no meaning with --discard: nothing is written") }
        if after.isActive && discard { throw ValidationError("--write-info-json and --exec have no meaning with --discard: no file is written") }
        if after.isActive && noWait { throw ValidationError("--write-info-json and --exec need the command to wait for its files; leave out --no-wait") }
        if discard && warc.warc != nil { throw ValidationError("--warc records the files it downloads, and --discard keeps none: use one or the other") }
    }

    func run(_ context: CommandContext) async throws -> Int32 {
        let inputs = try collectInputs(context)
        if inputs.valid.isEmpty {
            guard let first = inputs.invalid.first else {
                throw CLIError.usage("no URLs to download: \(inputFile ?? "the input") is empty")
            }
            let more = inputs.invalid.count > 1 ? " (nor are \(inputs.invalid.count - 1) more)" : ""
            throw CLIError.usage(URLArgument.notURL(first, also: more, advice: "give full addresses like https://example.com/episode.mp3"))
        }
        for text in inputs.invalid {
            context.error("skipped '\(Redaction.redact(text))': not an http or https URL" + (URLArgument.hint(text).map { "; " + $0 } ?? ""))
        }
        let home = try Home(option: global.home, context: context)
        let reporter = GetReporter(context: context, quiet: global.quiet, verbose: global.verbose, expected: inputs.valid.count, style: output.json ? .json : .files)
        let runReport = output.makeReport()
        if discard { return try await discardBodies(inputs.valid, home: home, reporter: reporter, runReport: runReport, context: context) }
        let folder = context.absolutePath(out)
        try createFolder(folder)
        reporter.countNotURLs(inputs.invalid.count)
        let afterDownload = try AfterDownload.start(after, episodes: false, home: home, context: context, reporter: reporter)

        guard let lock = try await HomeLock.acquire(path: home.lockPath, role: .get) else {
            if warc.warc != nil { throw WARCOptions.handOffRefusal }
            let status = try await handOff(inputs.valid, folder: folder, home: home, reporter: reporter, runReport: runReport, afterDownload: afterDownload,
                                           context: context)
            try output.write(runReport, command: "get", context: context)
            return status
        }
        defer { withExtendedLifetime(lock) {} }
        // curl loads while the home opens: the engine made below waits for it no longer than it must.
        let preload = CurlPreload()
        defer { preload.finish() }

        var configuration = try transfer.configuration(scope: .claimedOnly, home: home, context: context, jobs: 4)
        configuration.warc = try warc.open(command: "get", settings: configuration, context: context)
        let manager: DownloadManager
        do {
            manager = try await QueueRun.openManager(home, configuration: configuration)
        } catch {
            WARCOptions.closeAfterFailure(configuration.warc, context: context)
            throw error
        }
        let session = QueueRun(manager, context: context, global: global, events: Self.reported)
        do {
            var plan = Plan()
            for (url, existing) in zip(inputs.valid, try await manager.downloads(of: inputs.valid)) {
                plan.add(url, known: existing, folder: folder, skipExisting: skipExisting)
            }
            try afterDownload?.owe(plan.owed)
            try await manager.claim(plan.activeIDs)
            try await manager.retry(plan.retried, claiming: true)
            let fresh: [DownloadID]
            if let afterDownload, afterDownload.hook != nil {
                // Their hooks are owed before they can start: added to the store with their ledger rows,
                // then taken in (held: this engine runs only what it claims) and started.
                fresh = try afterDownload.add(plan.requests(folder: folder))
                try await manager.adoptStoredDownloads()
                try await manager.claim(fresh)
            } else {
                fresh = try await Self.enqueue(plan.requests(folder: folder), into: manager, firstOnTheirOwn: 2 * configuration.maxConcurrentDownloads,
                                              batch: Self.enqueueBatch(concurrency: configuration.maxConcurrentDownloads))
            }
            afterDownload?.catchUp(plan.alreadyThereIDs)
            report(plan, fresh: fresh, to: reporter, context: context)
        } catch {
            let failure = await QueueRun.shutDown(manager, failing: CLIError(error, "cannot queue the downloads"), context: context)
            WARCOptions.closeAfterFailure(configuration.warc, context: context)
            throw failure
        }
        var status = await session.run(reporting: reporter) { runReport?.observe($0) }
        // After the engine's shutdown (in `run`): every record it queued is written by now.
        status = WARCOptions.close(configuration.warc, status: status, quiet: global.quiet, context: context)
        try output.write(runReport, command: "get", context: context)
        return status
    }

    /// The events a `get` reports from: not `.added`, since it names its own downloads
    /// (`GetReporter.answerFor`).
    private static let reported = DownloadEvent.Kinds.all.subtracting(.added)

    /// `--discard`: an engine of its own, in memory (no queue, no lock, no files), that counts
    /// and hashes the bodies: the network path alone, for benchmarks.
    private func discardBodies(_ urls: [URL], home: Home, reporter: GetReporter, runReport: RunReport?, context: CommandContext) async throws -> Int32 {
        // An engine in memory loads curl at its first download: here it loads as the engine starts.
        let preload = CurlPreload()
        defer { preload.finish() }
        var configuration = try transfer.configuration(scope: .wholeQueue, home: home, context: context, jobs: 4)
        configuration.diskReserve = 0
        let manager = DownloadManager(configuration: configuration)
        let session = QueueRun(manager, context: context, global: global, events: Self.reported)
        let ids: [DownloadID]
        do {
            ids = try await manager.enqueue(contentsOf: urls.map { DownloadRequest(id: "", url: $0, destination: .discard(checksum: checksum != nil)) })
        } catch {
            await manager.shutdown()
            throw CLIError(message: "cannot start the downloads: \(error)")
        }
        reporter.answerFor(Array(zip(ids, urls)))
        let status = await session.run(reporting: reporter) { runReport?.observe($0) }
        try output.write(runReport, command: "get", context: context)
        return status
    }

    struct Plan {
        /// New downloads, in order.
        var fresh: [URL] = []
        /// Already complete, with their files: (path, bytes).
        var alreadyThere: [(path: String, bytes: Int)] = []
        /// The downloads of those known to the queue (not those `--skip-existing` found).
        var alreadyThereIDs: [DownloadID] = []
        /// In the queue and unfinished: they go on.
        var active: [(id: DownloadID, url: URL)] = []
        /// Failed, paused, or complete with the file gone: queued again.
        var retriedDownloads: [(id: DownloadID, url: URL)] = []

        var retried: [DownloadID] { retriedDownloads.map(\.id) }
        var activeIDs: [DownloadID] { active.map(\.id) }
        /// The active and retried ones with their owners (an episode's download of the same
        /// URL into this folder stays the episode's): what owes a hook run.
        var owed: [AfterDownload.Owed] = []

        /// Sorts `url` by what the queue (`known`, its downloads; the latest into this folder
        /// counts) and the folder hold.
        mutating func add(_ url: URL, known: [Download], folder: String, skipExisting: Bool) {
            if skipExisting {
                let path = folder.joiningPath(DownloadRequest.Destination.defaultFileName(for: url))
                if let size = LocalFile.size(at: path) {
                    alreadyThere.append((path, size))
                    return
                }
            }
            guard let existing = known.last(where: { $0.request.destination.folder == folder }) else {
                fresh.append(url)
                return
            }
            if existing.status == .completed, let path = existing.filePath, let size = LocalFile.size(at: path) {
                alreadyThere.append((path, size))
                alreadyThereIDs.append(existing.id)
                return
            }
            if existing.status.isActive { active.append((existing.id, url)) } else { retriedDownloads.append((existing.id, url)) }
            owed.append((existing.id, existing.request.owner))
        }

        /// The requests of the new downloads: into the folder, or onto a part file found
        /// there (one whose download was forgotten), so it resumes.
        func requests(folder: String) -> [DownloadRequest] {
            guard !fresh.isEmpty else { return [] }
            let parts = PartialDownloads.find(in: folder)
            return fresh.map { url in
                let destination: DownloadRequest.Destination = parts[url.absoluteString].map { .file($0) } ?? .directory(folder)
                return DownloadRequest(id: DownloadID(""), url: url, destination: destination)
            }
        }
    }

    /// Tells the reporter which downloads are this run's, and prints the ones already there.
    func report(_ plan: Plan, fresh ids: [DownloadID], to reporter: GetReporter, context: CommandContext) {
        reporter.answerFor(Array(zip(ids, plan.fresh)) + plan.active + plan.retriedDownloads)
        reporter.countAlreadyThere(plan.alreadyThere.count, ids: plan.alreadyThereIDs)
        guard !global.quiet else { return }
        for (path, bytes) in plan.alreadyThere {
            context.output.line("\(path)\t\(bytes)\talready there")
        }
    }

    /// Queues `requests`, in order: the first `first` on their own when there are many more, then
    /// the rest in batches of `batch`. The downloads of each batch start while the disk worker
    /// writes the next one's rows, and no batch keeps it long from the small files that finish
    /// meanwhile: a thousand rows in one transaction kept the first download waiting 10 to 20 ms,
    /// and then the files of the first ones waiting as long behind them, their transfers idle.
    /// A failure of a later batch leaves the ones before it queued, as a run stopped there would,
    /// for the next run to go on with; its error says so (and keeps its code: a full disk still exits 3).
    static func enqueue(_ requests: [DownloadRequest], into manager: DownloadManager, firstOnTheirOwn first: Int, batch: Int) async throws -> [DownloadID] {
        guard !requests.isEmpty else { return [] }   // all known already: no trip to the disk worker for nothing
        guard first < requests.count / 4 else { return try await manager.enqueue(contentsOf: requests) }
        var ids = try await manager.enqueue(contentsOf: Array(requests.prefix(first)))
        var start = first
        while start < requests.count {
            let end = min(requests.count, start + max(1, batch))
            do {
                ids += try await manager.enqueue(contentsOf: Array(requests[start..<end]))
            } catch {
                throw DownloadManagerError(error.code, error.message + "; the first \(start) were queued: run the same command again to go on",
                                           download: error.download)
            }
            start = end
        }
        return ids
    }

    /// The rows a batch of `enqueue` writes after the first: a few milliseconds of the disk
    /// worker's time (about 12 µs a row), well within what the bodies waiting meanwhile may hold.
    static func enqueueBatch(concurrency: Int) -> Int {
        min(256, 32 * max(1, concurrency))
    }

    private func createFolder(_ folder: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw CLIError(message: "cannot create the folder \(folder): \(SystemErrorText.reason(error))")
        }
    }

    /// The URLs from the command line and the input file, in order, without repeats.
    private func collectInputs(_ context: CommandContext) throws -> (valid: [URL], invalid: [String]) {
        var texts = urls
        if let inputFile {
            let data: Data
            if inputFile == "-" {
                do { data = try context.readStandardInput(.max) } catch {
                    throw CLIError(message: "cannot read the URL list from standard input: \(error.message(limit: .max, what: "a URL list"))")
                }
            } else {
                let path = context.absolutePath(inputFile)
                guard let contents = FileManager.default.contents(atPath: path) else {
                    throw CLIError(message: "cannot read the URL list \(path): no such readable file")
                }
                data = contents
            }
            // Split and trimmed on the raw bytes: Character-wise splitting and Foundation's trimming
            // cost tens of thousands of instructions a line, and `Data`'s own slices thousands.
            let isBlank = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
            data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
                for line in bytes.split(whereSeparator: { $0 == 0x0A || $0 == 0x0D }) {
                    guard let first = line.firstIndex(where: { !isBlank($0) }), let last = line.lastIndex(where: { !isBlank($0) }) else { continue }
                    let text = line[first...last]
                    if text.first == UInt8(ascii: "#") { continue }
                    texts.append(String(decoding: text, as: UTF8.self))
                }
            }
        }
        var seen = Set<String>()
        var valid: [URL] = []
        var invalid: [String] = []
        for text in texts {
            guard let url = URL(string: text), DownloadRequest.isDownloadable(url) else {
                invalid.append(text)
                continue
            }
            if seen.insert(url.absoluteString).inserted { valid.append(url) }
        }
        return (valid, invalid)
    }
}
