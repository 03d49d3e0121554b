import CCurl
import FoundationEssentials
import Glibc

extension WholeFile {
    /// The whole files of one run of the disk worker, from their unnamed writing to the answers.
    ///
    /// Before the run's transaction: each file written into an unnamed file of its folder and
    /// flushed (all started first, so their flushes share journal commits). In the transaction:
    /// each named (`link`), then their folders flushed, then their rows. After the commit: the
    /// answers. Where a file system has no unnamed files, the file goes through a part as any
    /// download's does (its row names it first), all in this one pass.
    struct Run {
        private struct Item {
            var whole: WholeFile
            /// Its tag (`WholeFile.owner`); empty without a store: no row of it can be missing.
            var owner: String
            /// Its folder and the name the response gives it (`BodyPreparation.name`), worked out once.
            var named: (folder: String, name: String)?
            var folderPath: String { named?.folder ?? "" }
            var fd: Int32 = -1
            var folder: Int32 = -1
            /// The file system has no unnamed files: written through a part, named by its row.
            var throughPart = false
            var path: String?
            var error: DownloadError?
            var linked = false
            var rowSaved = false
            /// The failure was the database's: worth another attempt.
            var transient = false
        }

        private var items: [Item] = []
        /// By download: one whole file at most each (it is being placed meanwhile). Not by attempt: a
        /// transfer freed may give its address, and so its identifier, to the next one.
        private var byDownload: [DownloadID: Int] = [:]
        /// The folders' descriptors, by root and folder.
        private var folders: [String: Int32] = [:]

        var isEmpty: Bool { items.isEmpty }

        /// Writes and flushes the whole files of `segment`, unnamed.
        /// - Parameter queue: the identity of the queue whose rows name them (nil: no store).
        init(_ segment: [DiskWorker.Work], queue: String?) {
            for case .writeWhole(let whole) in segment {
                byDownload[whole.preparation.row.request.id] = items.count
                let item = Item(whole: whole, owner: queue.map(whole.owner(queue:)) ?? "", named: whole.preparation.name,
                                throughPart: !WholeFile.canNameUnnamedFiles)
                items.append(item)
            }
            guard !items.isEmpty else { return }
            for index in items.indices { write(index) }
            for index in items.indices where items[index].fd >= 0 && items[index].error == nil {
                if fsync(items[index].fd) != 0 { fail(index, FileSystem.error("cannot flush a file in \(items[index].folderPath)", errno: errno)) }
            }
        }

        private mutating func write(_ index: Int) {
            let whole = items[index].whole
            guard let folderPath = items[index].named?.folder else {
                return fail(index, DownloadError(.fileSystem, "the download has no file to write to"))
            }
            let folder: Int32
            do throws(DownloadError) {
                folder = try open(folderPath, root: whole.preparation.row.request.root)
            } catch {
                return fail(index, error)
            }
            items[index].folder = folder
            guard !items[index].throughPart else { return }
            let fd = PartFile.folderChanges.withLock { FileSystem.retrying { WholeFile.openUnnamed(in: folder) } }
            guard fd >= 0 else {
                if [EOPNOTSUPP, EISDIR, EINVAL].contains(errno) { items[index].throughPart = true } else {
                    fail(index, FileSystem.error("cannot create a file in \(folderPath)", errno: errno))
                }
                return
            }
            items[index].fd = fd
            if let error = FileSystem.writeAll(fd, whole.body.buffer.baseAddress!, whole.body.count).error {
                return fail(index, FileSystem.error("cannot write a file in \(folderPath)", errno: error))
            }
            if let lastModified = whole.lastModified { Placement.setModificationTime(fd, lastModified) }
            WholeFile.tag(fd, items[index].owner)
            if items.count > 1 { _ = monsoon_start_writeback(fd, 0, 0) }   // a hint: the fsync is what counts
        }

        private mutating func open(_ folder: String, root: String?) throws(DownloadError) -> Int32 {
            let key = (root ?? "") + "\0" + folder
            if let fd = folders[key] { return fd }
            let fd = try ConfinedFolder.open(folder, root: root, create: true)
            folders[key] = fd
            return fd
        }

        private mutating func fail(_ index: Int, _ error: DownloadError) {
            items[index].error = error
            if items[index].fd >= 0 {
                close(items[index].fd)   // unnamed: it goes with its descriptor
                items[index].fd = -1
            }
        }

        /// The file has no unnamed copy to name: the worker names it as a part (`choosePart`).
        func goesThroughPart(_ whole: WholeFile) -> Bool {
            // One that failed already (its folder, say) is answered with that failure, not named.
            byDownload[whole.preparation.row.request.id].map { items[$0].throughPart && items[$0].error == nil } ?? false
        }

        /// Gives the file of `whole` the first name `choose` offers that its link finds free, or
        /// holding the download's own file (left by a run killed before its row said so).
        /// `choose` is handed the name worked out before, and how to tell a name taken: the plain
        /// name is looked at by its link alone (`EEXIST`), so the usual free one costs no other
        /// call; a numbered one is looked at first, so a hundred of them cost one pass.
        mutating func link(_ whole: WholeFile,
                           choose: ((folder: String, name: String)?, (String) -> Bool) throws -> (path: String?, error: DownloadError?)) rethrows {
            guard let index = byDownload[whole.preparation.row.request.id], items[index].fd >= 0 else { return }
            let folder = items[index].folder
            let owner = items[index].owner
            let plain = items[index].named.map { $0.folder.joiningPath($0.name) }
            var taken: Set<String> = []
            for _ in 0..<100 {
                let choice = try choose(items[index].named) { candidate in
                    taken.contains(candidate) || (candidate != plain && PartFile.exists(candidate)
                                                  && WholeFile.tagged(folder, candidate.fileName, owner) == nil)
                }
                guard let path = choice.path, choice.error == nil else {
                    return fail(index, choice.error ?? DownloadError(.fileSystem, "the download has no file to write to"))
                }
                let linked = PartFile.folderChanges.withLock {
                    WholeFile.name(items[index].fd, in: items[index].folder, as: path.fileName)
                }
                if linked == 0 {
                    items[index].path = path
                    items[index].linked = true
                    return
                }
                guard errno == EEXIST else { return fail(index, FileSystem.error("cannot name \(path)", errno: errno)) }
                // This download's own file, named by a run killed before its row said so: replaced
                // (its row says nothing of it; a kill in between leaves the row to run again).
                // Checked again just before: still the same file (a user's put there meanwhile stays).
                if let file = WholeFile.tagged(folder, path.fileName, owner),
                   Self.identity(folder, path.fileName).map({ $0 == file }) == true,
                   unlinkat(folder, path.fileName, 0) == 0,
                   PartFile.folderChanges.withLock({ WholeFile.name(items[index].fd, in: items[index].folder, as: path.fileName) }) == 0 {
                    items[index].path = path
                    items[index].linked = true
                    return
                }
                taken.insert(path)
            }
            fail(index, DownloadError(.fileSystem, "no free name for the file in \(items[index].folderPath)"))
        }

        /// The device and inode of `name` in `folder` (never through a link).
        private static func identity(_ folder: Int32, _ name: String) -> (device: UInt, inode: UInt)? {
            var info = stat()
            guard fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
            return (UInt(info.st_dev), UInt(info.st_ino))
        }

        /// The name chosen for a file that goes through a part (its row, naming it, is saved first).
        mutating func choosePart(_ whole: WholeFile, path: String?, error: DownloadError?) {
            guard let index = byDownload[whole.preparation.row.request.id] else { return }
            items[index].path = path
            if let error { fail(index, error) }
        }

        /// Flushes the folders the files were named in, so the names survive a power cut before
        /// the rows saying so commit; a folder that cannot be flushed fails its files.
        /// - Returns: the rows to save as completed now.
        mutating func flushFolders() -> [DownloadRecord] {
            var flushed: [Int32: DownloadError?] = [:]
            var rows: [DownloadRecord] = []
            for index in items.indices where items[index].linked {
                let folder = items[index].folder
                if flushed[folder] == nil {
                    flushed[folder] = fsync(folder) == 0 ? .some(nil) : FileSystem.error("cannot flush the folder \(items[index].folderPath)", errno: errno)
                }
                if case .some(.some(let error)) = flushed[folder] {
                    // Its name might not survive a power cut, and no row will say it is there: gone.
                    if let path = items[index].path { unlinkat(folder, path.fileName, 0) }
                    items[index].linked = false
                    items[index].path = nil   // no row may name what is not there
                    items[index].error = error
                    continue
                }
                if var row = items[index].whole.completedRow {
                    row.filePath = items[index].path
                    rows.append(row)
                }
            }
            return rows
        }

        /// The run's transaction failed (`error`): nothing of it was saved. The files named before
        /// the failure stay in place (their folders flushed; the loop saves their rows again); the
        /// others are unnamed, and gone with their descriptors, and their downloads are tried again.
        mutating func transactionFailed(_ error: Error) {
            _ = flushFolders()   // its rows would not be saved now: the loop saves those files' rows again
            for index in items.indices where !items[index].linked {
                items[index].path = nil   // a part's name, chosen in the transaction, was not saved either
                guard items[index].error == nil else { continue }
                fail(index, DownloadError(.fileSystem, "could not save the download in the database: \(error)"))
                items[index].transient = true
            }
        }

        /// The rows of these downloads are committed.
        mutating func rowsCommitted(_ ids: [DownloadID]) {
            for id in ids { if let index = byDownload[id] { items[index].rowSaved = true } }
        }

        /// Writes the files that go through a part (their rows committed), closes everything,
        /// and answers for each file.
        mutating func finish() -> [WholeFile.Answer] {
            var answers: [WholeFile.Answer] = []
            for index in items.indices {
                if items[index].throughPart, items[index].error == nil, let path = items[index].path { writeThroughPart(index, path) }
                if items[index].fd >= 0 { close(items[index].fd) }
                let item = items[index]
                let whole = item.whole
                let done = item.error == nil && (item.linked || item.throughPart)
                answers.append(WholeFile.Answer(
                    id: whole.preparation.row.request.id, sequence: whole.preparation.row.sequence, path: item.path,
                    result: done ? .success(()) : .failure(item.error ?? DownloadError(.fileSystem, "the file was not written")),
                    rowSaved: item.rowSaved, transient: item.transient, volume: whole.volume, body: whole.body))
            }
            for fd in folders.values { close(fd) }
            folders = [:]
            items = []
            return answers
        }

        /// Without unnamed files: the part's way, in one go (opened, written, flushed, renamed).
        private mutating func writeThroughPart(_ index: Int, _ path: String) {
            let whole = items[index].whole
            let root = whole.preparation.row.request.root
            do throws(DownloadError) {
                let (fd, _) = try PartFile.open(PartFile.path(for: path), at: 0, root: root)
                if let error = FileSystem.writeAll(fd, whole.body.buffer.baseAddress!, whole.body.count).error {
                    close(fd)
                    throw FileSystem.error("cannot write \(PartFile.path(for: path))", errno: error)
                }
                let placement = Placement(fd: fd, partPath: PartFile.path(for: path), destination: path, lastModified: whole.lastModified, root: root)
                placement.startFlush(hint: false)
                try placement.moveIntoPlace()
                try FileSystem.syncDirectory(path.parentPath)
            } catch {
                items[index].error = error
            }
        }
    }

}
