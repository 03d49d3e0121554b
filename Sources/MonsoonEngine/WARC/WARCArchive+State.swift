import CCurl
import FoundationEssentials
import Glibc

extension WARCArchive {
    /// The writer: the file being written, the numbering, the first failure.
    ///
    /// `@unchecked Sendable`: touched only on the archive's serial queue (and by `open`, before
    /// the archive is shared).
    final class State: @unchecked Sendable {
        struct OpenFile {
            var fd: Int32
            var number: Int
            /// Bytes in the file (every write appends).
            var size: Int
            var warcinfoID: String
        }

        let naming: WARCNaming
        let configuration: WARCConfiguration
        var current: OpenFile?
        var nextNumber: Int
        /// Every file begun, by its final name.
        var files: [String] = []
        /// The first record that could not be written (said at `close`).
        var failure: WARCError?
        var closed = false
        /// The failure after which nothing more is written (a file that could not be cut back).
        var stoppedBy: WARCError?
        /// Files (by number) whose flush, close or rename failed: their records are not on disk.
        var failedFiles: [Int: WARCError] = [:]
        let gzip = GzipMemberWriter()

        init(naming: WARCNaming, configuration: WARCConfiguration) {
            self.naming = naming
            self.configuration = configuration
            nextNumber = (naming.existing().map(\.number).max() ?? -1) + 1
        }

        /// The file records go to now: the current one, or the next, begun with its `warcinfo`.
        func ensureOpen() throws(WARCError) -> OpenFile {
            if let stoppedBy { throw WARCError(stoppedBy.code, "an earlier failure stopped the WARC: \(stoppedBy.message)") }
            if closed { throw WARCError(.closed, "the WARC was already closed") }
            if current == nil { try openNext() }
            return current!
        }

        /// Begins the next free number with its `warcinfo`. The file is created and locked
        /// under a name of its own (that no run repairs) and only then linked to its `.open`
        /// name, so another run's repair never finds it empty or unlocked; `link` refuses a
        /// number another run took meanwhile, and the next is tried. Private to its owner
        /// (0600): requests are recorded as sent, credentials included.
        func openNext() throws(WARCError) {
            let temporary = naming.temporaryPath()
            let fd = FileSystem.retrying { Glibc.open(temporary, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600) }
            guard fd >= 0 else { throw WARCError.system("cannot create a WARC file in \(naming.folder)", errno: errno) }
            // Once linked, the file lives on under its `.open` name; before, nothing of it is worth keeping.
            defer { unlink(temporary) }
            // Held for as long as the file is open: no other run's repair touches it. A name of
            // our own, just created: nobody else can hold it, so this cannot fail.
            _ = flock(fd, LOCK_EX | LOCK_NB)
            while true {
                let number = nextNumber
                nextNumber += 1
                guard access(naming.path(number), F_OK) != 0 else { continue }
                current = OpenFile(fd: fd, number: number, size: 0, warcinfoID: WARCRecord.newID())
                do throws(WARCError) {
                    // The warcinfo names the file: written again for each number tried.
                    guard ftruncate(fd, 0) == 0 else { throw WARCError.system("cannot write the WARC file \(temporary)", errno: errno) }
                    try writeWarcinfo()
                    if link(temporary, naming.openPath(number)) != 0 {
                        if errno == EEXIST { continue }
                        throw WARCError.system("cannot create the WARC file \(naming.openPath(number))", errno: errno)
                    }
                    files.append(naming.path(number))
                    do { try syncFolder() } catch {
                        unlink(naming.openPath(number))   // a failure here is reported by the throw
                        files.removeLast()
                        throw error
                    }
                } catch {
                    Glibc.close(fd)
                    current = nil
                    throw error
                }
                return
            }
        }

        /// Flushes the current file, gives it its final name (never over another file: one that
        /// appeared meanwhile leaves it `.open`, for the next run to name) and flushes the folder.
        /// A failure is kept by the file's number: every record written to it failed.
        func closeCurrent() throws(WARCError) {
            guard let file = current else { return }
            current = nil
            do throws(WARCError) {
                let flushed = fsync(file.fd) == 0
                let flushError = errno
                let released = Glibc.close(file.fd) == 0
                let closeError = errno
                guard flushed, released else {
                    throw WARCError.system("cannot flush the WARC file \(naming.openPath(file.number))", errno: flushed ? closeError : flushError)
                }
                try Self.rename(naming.openPath(file.number), to: naming.path(file.number))
                try syncFolder()
            } catch {
                failedFiles[file.number] = error
                throw error
            }
        }

        /// Renames `from` to `to` unless a file is there (it is never replaced).
        static func rename(_ from: String, to: String) throws(WARCError) {
            guard monsoon_rename_noreplace(from, to) != 0 else { return }
            if errno == EEXIST {
                throw WARCError(.fileSystem, "cannot rename \(from) to \(to): a file of that name appeared meanwhile (another run writing the same WARC name?); "
                                + "\(from) is left as it is, and the next run with --warc gives it a free number")
            }
            throw WARCError.system("cannot rename \(from) to \(to)", errno: errno)
        }

        func syncFolder() throws(WARCError) {
            do { try FileSystem.syncDirectory(naming.folder) } catch {
                throw WARCError(error.code == .notEnoughDiskSpace ? .diskFull : .fileSystem, "cannot flush the WARC folder: \(error.message)")
            }
        }

        /// Writes a group of records that belong together (a request and its response, a
        /// download's requests and its file): all, or none (a failure cuts the file back to
        /// where the group began). A file past the size limit is closed after the group.
        func group(_ body: () throws(WARCError) -> Void) throws(WARCError) {
            let file = try ensureOpen()
            do {
                try body()
            } catch {
                if ftruncate(file.fd, off_t(file.size)) != 0 {
                    // The file may end in a broken record: it stays `.open`, to be repaired by the next
                    // run. What was written to it and not flushed failed too.
                    Glibc.close(file.fd)
                    current = nil
                    let stopped = WARCError(error.code, error.message + "; the WARC could not be cut back to its last whole record, so nothing more is written to it")
                    stoppedBy = stopped
                    failedFiles[file.number] = stopped
                    throw stopped
                }
                current?.size = file.size
                throw error
            }
            if let size = current?.size, size >= configuration.maxFileBytes { try closeCurrent() }
        }

        /// A group written when the engine asks, without waiting: a failure is kept for `close`.
        func writeAsync(_ body: () throws(WARCError) -> Void) {
            do { try group(body) } catch { failure = failure ?? error }
        }

        /// Appends one record (one gzip member) to the current file: its head, then its block,
        /// given in `blocks`, one after the other.
        func write(_ record: WARCRecord, blocks: [[UInt8]]) throws(WARCError) {
            let file = try ensureOpen()
            try gzip.begin(fd: file.fd, path: naming.openPath(file.number), level: 6)
            try gzip.write(record.head())
            for block in blocks { try gzip.write(block) }
            try gzip.write(WARCRecord.trailer)
            try gzip.finish()
            current?.size += gzip.written
        }

        private func writeWarcinfo() throws(WARCError) {
            guard let file = current else { return }
            var text = "software: \(configuration.software) libcurl/\(Curl.version)\r\nformat: WARC File Format 1.1\r\n"
                + "conformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n"
            for (name, value) in configuration.info {
                text += "\(name): \(WARCRecord.oneLine(value))\r\n"
            }
            let block = Array(text.utf8)
            // No WARC-Payload-Digest: a warcinfo record has no payload (WARC 1.1 §4, §5.9).
            let record = WARCRecord(type: "warcinfo", id: file.warcinfoID, date: Date(), targetURI: nil,
                                    fields: [("WARC-Filename", naming.path(file.number).fileName)],
                                    contentType: "application/warc-fields", contentLength: block.count, blockDigest: try SHA1.label(of: block))
            try write(record, blocks: [block])
        }
    }
}
