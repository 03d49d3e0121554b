import FoundationEssentials
import MonsoonEngine

/// `--warc FILE` and `--warc-max-size SIZE`, of the commands that can record what they fetch
/// (`get`, `archive`): every request and response, in WARC files beside FILE.
struct WARCOptions: ParsableArguments {
    @Option("--warc", help: "Also record every request and response in WARC/1.1 files: FILE.warc.gz makes FILE-00000.warc.gz, FILE-00001.warc.gz, … (numbered on from those already there).", valueName: "file")
    var warc: String?

    @Option("--warc-max-size", help: "With --warc: start a new WARC file once one reaches SIZE, like 500M (default: 1 GB, 10^9 bytes).", valueName: "size")
    var warcMaxSize: ByteSize?

    init() {}

    func validate() throws {
        if warcMaxSize != nil && warc == nil { throw ValidationError("--warc-max-size goes with --warc FILE") }
        if let warcMaxSize, warcMaxSize.bytes < 1 { throw ValidationError("--warc-max-size must be at least 1 byte") }
        if let warc, warc.isEmpty { throw ValidationError("--warc needs a file name, like podcasts.warc.gz") }
    }

    /// The run's WARC, opened (with the files a killed run left open repaired, and said), or
    /// nil without `--warc`. Opened before anything is fetched: a folder that cannot be
    /// written to stops the command here.
    /// - Parameters:
    ///   - command: the command's name, for the `warcinfo` record.
    ///   - settings: the engine's settings, whose operator-visible ones go in the `warcinfo` record too.
    func open(command: String, settings: EngineConfiguration, context: CommandContext) throws -> WARCArchive? {
        guard let warc else { return nil }
        let maxBytes = warcMaxSize?.bytes ?? WARCConfiguration(path: "", software: "").maxFileBytes
        var info: [(name: String, value: String)] = [
            ("command", "monsoon \(command)"),
            ("user-agent", settings.network.userAgent),
            ("http-version", "HTTP/1.1"),
            ("jobs", String(settings.maxConcurrentDownloads)),
            ("warc-max-size", "\(maxBytes) bytes"),
        ]
        if let limit = settings.maxBytesPerSecond { info.append(("limit-rate", ByteCount.format(limit) + "/s")) }
        if settings.network.proxy != nil { info.append(("proxy", "yes")) }   // its address may hold credentials: never written
        let configuration = WARCConfiguration(path: context.absolutePath(warc), maxFileBytes: maxBytes,
                                              software: "Monsoon/\(MonsoonCLI.version)", info: info)
        let archive: WARCArchive
        do { archive = try WARCArchive.open(configuration) } catch { throw CLIError(message: "--warc: \(error.message)") }
        for repair in archive.repairs { context.error(repair) }
        return archive
    }

    /// Another monsoon runs the home's queue: it would do the downloads, and record nothing.
    static let handOffRefusal = CLIError(message: "--warc: another monsoon is downloading in this home, and the downloads handed to it would not be recorded; "
                                         + "run again once it has finished, or give this run a home of its own (--home DIR)")

    /// Closes the run's WARC when the command stops on an error of its own (which it then
    /// throws): what was recorded keeps its final name; a failure to close is said too.
    static func closeAfterFailure(_ archive: WARCArchive?, context: CommandContext) {
        guard let archive else { return }
        do { try archive.close() } catch { context.error("the WARC is incomplete: \(error.message)") }
    }

    /// Closes the run's WARC (after the engines are shut down), saying which files it wrote.
    /// - Returns: the status, made a failure when a record could not be written.
    static func close(_ archive: WARCArchive?, status: Int32, quiet: Bool, context: CommandContext) -> Int32 {
        guard let archive else { return status }
        do {
            let files = try archive.close()
            if !quiet { context.error("recorded the run in WARC: \(files.joined(separator: ", "))") }
            return status
        } catch {
            context.error("the WARC is incomplete: \(error.message)")
            return status == ExitStatus.success ? ExitStatus.failure : status
        }
    }
}
