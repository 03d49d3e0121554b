import FoundationEssentials
import Glibc
import MonsoonEngine
import MonsoonPodcasts

extension Verify {
    /// What `--repair` did with one file.
    struct Repair {
        var target: ArchiveRepair.Target
        /// Nil: repaired; else why not.
        var failure: String?
    }

    /// Downloads at once for a repair: few files, usually from one host.
    static let repairJobs = 4

    /// Fetches the missing and changed files of `report` again through the engine (the home's
    /// transfer settings), each into a hidden part beside it, and puts it in place only when its
    /// bytes are those the manifest lists.
    func repair(_ report: ArchiveVerifier.Report, context: CommandContext) async throws -> [Repair] {
        let session = try EpisodeFileSession.open(global, context: context)
        let targets: [ArchiveRepair.Target] = try session.run { files in
            try ArchiveRepair.targets(of: report) { entry, path, feedURL in try files.repairSource(of: entry, at: path, feedURL: feedURL) }
        }
        var repairs = targets.map { Repair(target: $0, failure: $0.reason.map { "cannot fetch it: \($0)" }) }
        let fetchable = repairs.indices.filter { repairs[$0].failure == nil }
        guard !fetchable.isEmpty else { return repairs }
        let home = try Home(option: global.home, context: context)
        let manager = DownloadManager(configuration: try TransferOptions().configuration(scope: .wholeQueue, home: home, context: context, jobs: Self.repairJobs))
        // Subscribed before the first enqueue: no status change is missed.
        let events = manager.events(.statusChanged)
        var pending = Set<DownloadID>()
        for index in fetchable {
            let target = repairs[index].target
            guard let url = target.url else { continue }   // none is fetchable without one
            let temporary = ArchiveRepair.temporaryPath(for: target.path)
            let folder = target.path.parentPath
            // A copy a killed repair finished but never judged is not trusted: fetched again.
            if unlink(temporary) != 0 && errno != ENOENT {
                repairs[index].failure = "cannot remove the earlier copy \(temporary): \(String(cString: strerror(errno)))"
                continue
            }
            // A missing file's folder (a template's year folder) may have gone with it.
            if let failure = Self.makeFolders(folder) {
                repairs[index].failure = "cannot create its folder \(folder): \(failure)"
                continue
            }
            do {
                _ = try await manager.enqueue(DownloadRequest(
                    id: DownloadID("r\(index)"), url: url, destination: .file(temporary), expectedSize: target.entry.size,
                    sizeLimit: .init(bytes: max(1, target.entry.size), reason: "the size its manifest lists"), root: folder, owner: .repair))
                pending.insert(DownloadID("r\(index)"))
            } catch {
                repairs[index].failure = "cannot fetch it: \(LibrarySession.message(error))"
            }
        }
        // Until each is done, failed, or held for room on the disk (which would never end by itself).
        var outcomes: [DownloadID: Download] = [:]
        if !pending.isEmpty {
            for await event in events {
                guard case .statusChanged(let download) = event, pending.contains(download.id) else { continue }
                let heldForSpace = download.status == .queued && download.lastError?.code == .notEnoughDiskSpace
                guard download.status == .completed || download.status == .failed || heldForSpace else { continue }
                outcomes[download.id] = download
                pending.remove(download.id)
                if pending.isEmpty { break }
            }
        }
        // Stops what is held for room, its part kept (verify leaves `.part` files out).
        await manager.shutdown()
        for index in fetchable where repairs[index].failure == nil {
            guard let url = repairs[index].target.url else { continue }
            repairs[index].failure = Self.settle(repairs[index].target, from: url, download: outcomes[DownloadID("r\(index)")])
        }
        return repairs
    }

    /// Creates `folder` and those above it that are missing; the system's reason when it cannot.
    private static func makeFolders(_ folder: String) -> String? {
        var missing: [String] = []
        var current = folder
        while current.count > 1 && !FileManager.default.fileExists(atPath: current) {
            missing.append(current)
            current = current.parentPath
        }
        for path in missing.reversed() where mkdir(path, 0o755) != 0 && errno != EEXIST { return String(cString: strerror(errno)) }
        return nil
    }

    /// Puts a fetched copy in place when the manifest's hash says it is the file, else says why not
    /// and leaves the file as it is. Nil: repaired.
    private static func settle(_ target: ArchiveRepair.Target, from url: URL, download: Download?) -> String? {
        let temporary = ArchiveRepair.temporaryPath(for: target.path)
        guard let download, download.status == .completed else {
            // Its part stays (verify leaves `.part` files out): the next repair resumes it.
            return "cannot fetch it from \(Redaction.redact(url)): " + (download?.lastError.map { "\($0.message)" } ?? "the download was stopped before it ended")
                + "; run 'monsoon verify --repair' again later"
        }
        let sha256: String
        do { sha256 = try FileDigest.sha256(ofFile: temporary) } catch {
            return "cannot read the copy fetched into \(temporary): \(error.message)"
        }
        let size = LocalFile.size(at: temporary) ?? 0
        switch ArchiveRepair.judge(size: size, sha256: sha256, for: target.entry) {
        case .matches:
            // The file's own permissions stay (a private feed's copy is the owner's alone); a missing
            // feed copy whose URL carries credentials is made private, as `archive` makes it.
            var status = stat()
            let mode: mode_t? = stat(target.path, &status) == 0 ? status.st_mode & 0o7777
                : target.entry.kind == "feed" && Redaction.redact(url) != url.absoluteString ? 0o600 : nil
            if let mode, chmod(temporary, mode) != 0 {
                return "cannot set the permissions of the copy fetched into \(temporary): \(String(cString: strerror(errno)))"
            }
            guard rename(temporary, target.path) == 0 else {
                return "cannot put the copy fetched into \(temporary) in its place: \(String(cString: strerror(errno)))"
            }
            return nil
        case .differs(let size, let sha256):
            // The fetched copy is not what the archive promised: it goes, the file stays.
            if unlink(temporary) != 0 && errno != ENOENT {
                return "the server now serves other bytes, and the copy \(temporary) cannot be removed: \(String(cString: strerror(errno)))"
            }
            return "\(Redaction.redact(url)) now serves other bytes (\(size) bytes, SHA-256 \(sha256.prefix(12))…) than the manifest lists "
                + "(\(target.entry.size) bytes, \(target.entry.sha256.prefix(12))…): " + (target.missing ? "nothing was written" : "the file was left as it is")
                + "; restore it from a copy of your own"
        }
    }
}
