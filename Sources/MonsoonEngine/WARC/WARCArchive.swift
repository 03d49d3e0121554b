import FoundationEssentials
import Glibc
import Dispatch

/// What `--warc` asks for: where the WARC files go, when to start a new one, and what the
/// `warcinfo` record at the head of each says.
public struct WARCConfiguration: Sendable {
    /// The path given (`podcasts.warc.gz`): files are written beside it as `podcasts-00000.warc.gz`,
    /// `podcasts-00001.warc.gz`, … (`.open` while written). A folder: `monsoon-00000.warc.gz` in it.
    public var path: String
    /// A file is closed, and the next begun, once it reaches this size: by default 1 GB (10^9
    /// bytes), WARC 1.1's Annex C target. A record larger than that is written whole, in a file
    /// that outgrows it (Annex C allows it; segmentation would need `continuation` records).
    public var maxFileBytes: Int
    /// `software` in each `warcinfo` record (the program and its version).
    public var software: String
    /// The run's settings an operator sees, as further `warcinfo` fields (name, value), in order.
    public var info: [(name: String, value: String)]

    public init(path: String, maxFileBytes: Int = 1_000_000_000, software: String, info: [(name: String, value: String)] = []) {
        self.path = path
        self.maxFileBytes = maxFileBytes
        self.software = software
        self.info = info
    }
}

/// The WARC files of a run (ISO 28500, WARC/1.1, a gzip member per record), written off the
/// transfer thread as the engine captures requests and responses.
///
/// Opened before anything is downloaded (a folder that cannot be written is said at once),
/// shared by the engines of a run (`EngineConfiguration.warc`), closed at its end: the file
/// being written is named `….warc.gz.open` and gets its final name once closed, so a finished
/// name always holds whole records. A file a killed run left open is cut back to its last whole
/// record and given its final name by the next `open` of the same name.
///
/// Records of a completed download are written and flushed before the download is reported
/// complete (`writePayloads`); the others (redirect hops, error answers, feeds) are queued and
/// flushed with the next download's, or at `close`.
public final class WARCArchive: Sendable, Equatable {
    let queue = DispatchQueue(label: "monsoon.warc")
    /// Touched on `queue` alone.
    let state: State
    /// Bytes of fetched bodies queued and not yet written (`record(fetch:body:then:)`).
    private let queuedBytes = Locked(0)
    /// Past this, a fetch's result waits for its record to be written (`record(fetch:body:then:)`).
    static let queueBudget = 64 << 20
    /// The files a killed run had left open, repaired by `open`, each with what was done.
    public let repairs: [String]

    private init(state: State, repairs: [String]) {
        self.state = state
        self.repairs = repairs
    }

    /// Repairs what an earlier run left open, then opens the first file (with its `warcinfo`).
    /// Blocks its caller for the repair (each leftover is read whole): called once, before
    /// anything is fetched, never from the engine's threads.
    /// - Throws: `WARCError` when the folder cannot be created or written to.
    public static func open(_ configuration: WARCConfiguration) throws(WARCError) -> WARCArchive {
        let naming = WARCNaming(path: configuration.path)
        do {
            try FileManager.default.createDirectory(atPath: naming.folder, withIntermediateDirectories: true)
        } catch {
            throw WARCError(.notWritable, "cannot create the WARC folder \(naming.folder): \(SystemErrorText.reason(error)); give --warc a file in a folder you can write to")
        }
        guard access(naming.folder, W_OK | X_OK) == 0 else { throw WARCError.system("cannot write WARC files in \(naming.folder)", errno: errno) }
        let repairs = try naming.repairLeftovers()
        let state = State(naming: naming, configuration: configuration)
        try state.openNext()
        return WARCArchive(state: state, repairs: repairs)
    }

    public static func == (lhs: WARCArchive, rhs: WARCArchive) -> Bool { lhs === rhs }

    /// Closes the file being written (flushed, renamed to its final name) once everything queued is written.
    /// Blocks its caller until then (a thread of the caller's, for as long as the queued records
    /// take): called once, after the engines are shut down, when no event is left to consume.
    /// - Returns: every file the run wrote, in order.
    /// - Throws: the first failure to write a record during the run, or to close.
    @discardableResult
    public func close() throws(WARCError) -> [String] {
        let result: Result<[String], WARCError> = queue.sync {
            let state = self.state
            do throws(WARCError) {
                try state.closeCurrent()
            } catch {
                state.failure = state.failure ?? error
            }
            state.closed = true
            if let failure = state.failure { return .failure(failure) }
            return .success(state.files)
        }
        return try result.get()
    }

    /// Queues exchanges to be written as a `request` and a head-only `response` each.
    func record(_ exchanges: [WARCExchange]) {
        guard !exchanges.isEmpty else { return }
        queue.async { [state] in state.writeAsync { () throws(WARCError) in for exchange in exchanges { try state.writePair(exchange, body: nil) } } }
    }

    /// Queues an in-memory fetch's exchanges: the hops with their heads, the last with its
    /// `body`; then `deliver`s the fetch's result. Never waits (the engine calls it on the
    /// transfer thread): while the bodies queued are over `queueBudget`, the result is delivered
    /// only once this record is written, so whoever waits for it waits for the writer, and
    /// stops adding fetches.
    func record(fetch exchanges: [WARCExchange], body: [UInt8]?, then deliver: @escaping @Sendable () -> Void) {
        guard let last = exchanges.last else { return deliver() }
        let size = body?.count ?? 0
        let overBudget = queuedBytes.withLock { queued in
            defer { queued += size }
            return queued > Self.queueBudget
        }
        if !overBudget { deliver() }
        queue.async { [state, queuedBytes] in
            state.writeAsync { () throws(WARCError) in
                for hop in exchanges.dropLast() { try state.writePair(hop, body: nil) }
                try state.writePair(last, body: body)
            }
            queuedBytes.withLock { $0 -= size }
            if overBudget { deliver() }
        }
    }

    /// Writes each completed file's records and flushes them, before the downloads are said
    /// to be complete. Runs on the caller's thread (the placer's), waiting for the writer.
    /// - Returns: for each payload, nil when its records are on disk, else why not.
    func writePayloads(_ payloads: [WARCPayload]) -> [WARCError?] {
        queue.sync { state.writePayloads(payloads) }
    }
}
