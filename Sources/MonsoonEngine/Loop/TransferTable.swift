import CCurl
import FoundationEssentials
import Glibc

/// The running attempts (each a `Transfer`, which drives its own handle and phase): by easy
/// handle and by download, those whose parts are being prepared, the easy handles kept between
/// transfers, the run's rate limit, and what must wait until curl has returned.
///
/// - Important: confined to the transfer thread; it holds nothing of `EngineCore`. A class, not a
///   struct: curl calls back into the core from inside `curl_easy_pause` while `pace` runs, and
///   the core then reads and changes these tables.
final class TransferTable {
    /// What had to wait until curl returned (asked from inside one of its callbacks).
    enum AfterCurl {
        /// Stop this attempt of the download, if it is still the running one.
        case stop(DownloadID, Transfer)
        case failRefused(DownloadID, DownloadError)
    }

    /// Every transfer, downloads and fetches, for curl's completion messages.
    private(set) var byHandle: [UnsafeMutableRawPointer: Transfer] = [:]
    private(set) var running: [DownloadID: Transfer] = [:]
    /// Downloads whose part is being prepared by the worker, by their (paused) attempt.
    var preparing: [DownloadID: Transfer] = [:]
    private var afterCurl: [AfterCurl] = []
    let easyHandles: EasyHandlePool
    let rateLimiter: RateLimiter?
    private var partEpochs = 0

    init(maxConcurrentDownloads: Int, maxBytesPerSecond: Int?) {
        easyHandles = EasyHandlePool(limit: min(64, maxConcurrentDownloads) + 4)
        rateLimiter = maxBytesPerSecond.map { RateLimiter(bytesPerSecond: $0) }
    }

    /// An attempt (a download's or a fetch's), added to curl.
    func started(_ transfer: Transfer) {
        byHandle[transfer.easy.raw] = transfer
        if let id = transfer.downloadID { running[id] = transfer }
    }

    @discardableResult
    func removeHandle(_ raw: UnsafeMutableRawPointer) -> Transfer? {
        byHandle.removeValue(forKey: raw)
    }

    func endRunning(_ id: DownloadID) -> Transfer? {
        running.removeValue(forKey: id)
    }

    /// Whether `transfer` is still the running attempt of its download (one stopped by a pause
    /// or a removal is not: what comes of it is ignored).
    func runs(_ transfer: Transfer) -> Bool {
        guard let id = transfer.downloadID else { return false }
        return running[id] === transfer
    }

    func afterCurl(_ action: AfterCurl) {
        afterCurl.append(action)
    }

    func takeAfterCurl() -> [AfterCurl] {
        guard !afterCurl.isEmpty else { return [] }
        defer { afterCurl.removeAll() }
        return afterCurl
    }

    /// The attempt of download `id` whose part the disk worker answered for, no longer waiting (nil:
    /// stopped meanwhile, or the answer is an earlier attempt's).
    func takePreparing(_ id: DownloadID, attempt: ObjectIdentifier) -> Transfer? {
        guard let transfer = preparing[id], ObjectIdentifier(transfer) == attempt else { return nil }
        preparing[id] = nil
        return transfer
    }

    /// A flush for `id`'s checkpoint came back: the size its attempt has written, if the same attempt
    /// still runs (never one reloaded or restarted since), which may ask for the next.
    func checkpointFlushed(_ id: DownloadID, attempt: ObjectIdentifier) -> Int? {
        guard let current = running[id], ObjectIdentifier(current) == attempt else { return nil }
        current.part.checkpoint.inFlight = false
        return current.progress.fileSize
    }

    /// The host that answered `transfer` at the end of its redirects (its id and name), noted in its
    /// record and counted for the per-host limit from then on (a tracking redirector in front of a
    /// CDN: the CDN's limit holds too): once, and only while the attempt holds a slot.
    @discardableResult
    func countAnsweringHost(of transfer: Transfer, scheduler: inout DownloadScheduler, records: inout RecordTable) -> (id: Int, key: String)? {
        guard let url = transfer.easy.string(CURLINFO_EFFECTIVE_URL), let key = HostKey.of(text: url) else { return nil }
        let host = scheduler.hosts.id(key)
        if let id = transfer.downloadID { records.update(id) { $0.answeredHost = key } }
        if runs(transfer), !transfer.countedHosts.contains(host) {
            transfer.countedHosts.append(host)
            scheduler.count([host])
        }
        return (host, key)
    }

    /// A part epoch never used before in this process, so a late checkpoint of an old
    /// part can never be taken for the current one, even after the record was reloaded.
    func nextPartEpoch() -> Int {
        partEpochs += 1
        return partEpochs
    }

    /// Attempts that ended while their part is prepared (they hold no slot, but a start waits
    /// for them past as many as there are slots: `EngineCore.schedule`).
    var endedAwaitingParts: Int {
        preparing.values.reduce(0) { $0 + ($1.state.phase.partWait?.ended != nil ? 1 : 0) }
    }

    /// Every few MiB a part has grown, starts writing it back (on the placer's queue): the disk
    /// keeps up during the transfer instead of all at once in the final fsync.
    func startDueWriteback(_ placer: Placer) {
        for transfer in running.values where transfer.part.fd >= 0 && transfer.progress.fileSize - transfer.part.writebackStart >= Transfer.writebackStep {
            let fd = fcntl(transfer.part.fd, F_DUPFD_CLOEXEC, 0)
            guard fd >= 0 else { continue }   // only a hint: the placement's fsync writes it all
            placer.startWriteback(fd, offset: transfer.part.writebackStart, length: transfer.progress.fileSize - transfer.part.writebackStart)
            transfer.part.writebackStart = transfer.progress.fileSize
        }
    }

    /// At shutdown: every attempt out of curl and forgotten, a fetch cancelled; a download keeps its
    /// bytes, and its part is flushed and closed, the answer saving its checkpoint (`stoppedPartFlushed`).
    /// - Returns: the downloads whose attempts ended, for the core to put back in line for the next run.
    func shutDown(multi: MultiHandle?, records: inout RecordTable, placements: inout Placements, placer: Placer, inbox: EngineInbox) -> [DownloadID] {
        var ended: [DownloadID] = []
        for transfer in byHandle.values {
            multi?.remove(transfer.easy)   // there since the transfer started
            guard case .download(let id) = transfer.purpose else {
                if case .fetch(let job) = transfer.purpose { job.complete(.cancelled) }
                continue
            }
            ended.append(id)
            let length = transfer.progress.fileSize
            records.update(id) { $0.bytes = length }
            placements.recordAttempt(id, transfer, keepsBody: true)
            guard case .writing = transfer.state.phase, transfer.part.fd >= 0 else { continue }
            let epoch = records[id]?.partEpoch ?? 0
            records.hold(id)
            placer.flush(transfer.part.fd) { flushed in
                inbox.send(.stoppedPartFlushed(id, epoch: epoch, length: length, flushed: flushed))
            }
            transfer.part.fd = -1
        }
        // The last references to some: released here, on this thread.
        byHandle.removeAll()
        running.removeAll()
        preparing.removeAll()
        rateLimiter?.clear()
        return ended
    }
}
