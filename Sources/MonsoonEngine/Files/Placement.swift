import CCurl
import FoundationEssentials
import Glibc

/// Moves a finished part file into place, off the transfer thread.
///
/// Order matters for durability: flush the file, rename it over the destination
/// (atomic: the destination never holds a partial file), then flush the folder
/// so the rename itself survives a power cut.
struct Placement: Sendable {
    /// The part's descriptor; -1 for a part no attempt has open (one already whole), opened here.
    var fd: Int32
    var partPath: String
    var destination: String
    var lastModified: Date?
    /// Below it, no symbolic link is followed (`DownloadRequest.root`).
    var root: String?
    /// With a WARC: the file's records, written (and flushed) before its rename.
    var warc: WARCPayload?

    /// Sets the file's time and starts writing its last bytes back, without waiting: with
    /// every file of a batch started first, the flushes that follow share journal commits.
    /// - Parameter hint: start the writeback now (`sync_file_range`), so the fsyncs of a batch's
    ///   files overlap; for a batch of one, its fsync alone does the same.
    func startFlush(hint: Bool = true) {
        if let lastModified { Self.setModificationTime(fd, lastModified) }
        if hint { _ = monsoon_start_writeback(fd, 0, 0) }   // a hint; the fsync below is what counts
    }

    /// Gives the file the server's time, leaving its access time.
    static func setModificationTime(_ fd: Int32, _ date: Date) {
        let seconds = date.timeIntervalSince1970
        var times = [timespec](repeating: timespec(tv_sec: Int(seconds), tv_nsec: 0), count: 2)
        times[0].tv_nsec = monsoon_utime_omit()   // leave the access time
        // Best effort: a file whose time cannot be set is still the right file.
        _ = futimens(fd, &times)
    }

    /// Flushes the file and renames it into place; the folder is flushed by the batch
    /// (`Placement.performBatch`), once per folder. Closes the descriptor.
    ///
    /// The rename happens in the folder reached from the root without following a link
    /// (`ConfinedFolder`), and never over a symbolic link planted at the file's name.
    func moveIntoPlace() throws(DownloadError) {
        defer { close(fd) }
        if fsync(fd) != 0 {
            throw FileSystem.error("cannot flush \(partPath)", errno: errno)
        }
        let folder = try ConfinedFolder.open(destination.parentPath, root: root, create: true)
        defer { close(folder) }
        let name = destination.fileName
        if ConfinedFolder.isLink(folder, name) { throw ConfinedFolder.linkError(destination, root: root ?? destination.parentPath) }
        if PartFile.folderChanges.withLock({ renameat(folder, partPath.fileName, folder, name) }) != 0 {
            throw FileSystem.error("cannot move \(partPath) to \(destination)", errno: errno)
        }
    }

    /// Group commit: every file of the batch flushed and renamed, then each folder flushed
    /// once (a folder that cannot be flushed fails its files: their renames might not survive
    /// a power cut).
    ///
    /// With a WARC, each file's records are written and flushed before it is renamed: a file in
    /// place always has its records on disk (a killed run may leave records of a part not yet
    /// renamed; the next run places it and records it again).
    /// - Returns: each file's result, and the downloads whose records were written.
    static func performBatch(_ batch: [(DownloadID, Placement)], warc: WARCArchive?)
        -> (results: [(DownloadID, Result<Void, DownloadError>)], recorded: [DownloadID]) {
        let opened: [(DownloadID, Result<Placement, DownloadError>)] = batch.map { id, placement in
            guard placement.fd < 0 else { return (id, .success(placement)) }
            var reopened = placement
            reopened.fd = FileSystem.retrying { open(placement.partPath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) }
            if reopened.fd < 0 { return (id, .failure(FileSystem.error("cannot open \(placement.partPath)", errno: errno))) }
            return (id, .success(reopened))
        }
        for case (_, .success(let placement)) in opened { placement.startFlush(hint: opened.count > 1) }
        let (recorded, written) = recordInWARC(opened, warc: warc)
        var results: [(DownloadID, Result<Void, DownloadError>)] = recorded.map { id, placement in
            (id, placement.flatMap { placement in Result { () throws(DownloadError) in try placement.moveIntoPlace() } })
        }
        var folders: [String: Result<Void, DownloadError>] = [:]
        for (index, (_, placement)) in batch.enumerated() {
            guard case .success = results[index].1 else { continue }
            let folder = placement.destination.parentPath
            if folders[folder] == nil {
                folders[folder] = Result { () throws(DownloadError) in try FileSystem.syncDirectory(folder) }
            }
            if case .failure(let error) = folders[folder] { results[index].1 = .failure(error) }
        }
        return (results, written)
    }

    /// The WARC records of the batch's files, flushed together; a file whose records could not
    /// be written fails (its part is kept and closed, not renamed).
    /// The head kept with the part (`WARCHeadAttribute`) goes with its payload.
    private static func recordInWARC(_ opened: [(DownloadID, Result<Placement, DownloadError>)], warc: WARCArchive?)
        -> ([(DownloadID, Result<Placement, DownloadError>)], written: [DownloadID]) {
        var jobs: [(index: Int, payload: WARCPayload)] = []
        for (index, (_, result)) in opened.enumerated() {
            guard case .success(let placement) = result, var payload = placement.warc else { continue }
            payload.earlierHead = readWARCHead(placement.fd)
            jobs.append((index, payload))
        }
        guard let warc, !jobs.isEmpty else { return (opened, []) }
        let errors = warc.writePayloads(jobs.map(\.payload))
        var recorded = opened
        var written: [DownloadID] = []
        for ((index, _), error) in zip(jobs, errors) {
            guard let error else {
                written.append(opened[index].0)
                continue
            }
            guard case .success(let placement) = opened[index].1 else { continue }
            close(placement.fd)
            recorded[index].1 = .failure(error.downloadError)
        }
        return (recorded, written)
    }

    /// The head of the 200 that began the part, when a run with --warc kept it (else nil).
    private static func readWARCHead(_ fd: Int32) -> WARCExchange? {
        var buffer = [UInt8](repeating: 0, count: WARCHeadAttribute.maxBytes)
        let length = monsoon_fgetxattr(fd, WARCHeadAttribute.name, &buffer, buffer.count)
        return length > 0 ? WARCHeadAttribute.decode(Array(buffer[..<Int(length)])) : nil
    }
}
