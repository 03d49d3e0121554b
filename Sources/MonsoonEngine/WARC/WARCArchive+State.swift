import Foundation

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
        let gzip = GzipMemberWriter()

        init(naming: WARCNaming, configuration: WARCConfiguration) {
            self.naming = naming
            self.configuration = configuration
            nextNumber = (naming.existing().map(\.number).max() ?? -1) + 1
        }

        /// The file records go to now: the current one, or the next, begun with its `warcinfo`.
        func ensureOpen() throws(WARCError) -> OpenFile {
            if closed { throw WARCError(.closed, "the WARC was already closed") }
            if current == nil { try openNext() }
            return current!
        }

        /// Begins the next free number (another process may take one meanwhile: `O_EXCL`
        /// skips it), locked against repair by another run, with its `warcinfo` record.
        func openNext() throws(WARCError) {
            while true {
                let number = nextNumber
                nextNumber += 1
                guard access(naming.path(number), F_OK) != 0 else { continue }
                let path = naming.openPath(number)
                let fd = FileSystem.retrying { Glibc.open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o644) }
                if fd < 0 {
                    if errno == EEXIST { continue }
                    throw WARCError.system("cannot create the WARC file \(path)", errno: errno)
                }
                // Held for as long as the file is open: no other run's repair touches it.
                _ = flock(fd, LOCK_EX | LOCK_NB)   // a new name of our own: nobody else can hold it
                current = OpenFile(fd: fd, number: number, size: 0, warcinfoID: WARCRecord.newID())
                files.append(naming.path(number))
                do {
                    try writeWarcinfo()
                    try syncFolder()
                } catch {
                    Glibc.close(fd)
                    unlink(path)   // nothing of it is worth keeping; a failure here is reported by the throw
                    current = nil
                    files.removeLast()
                    throw error
                }
                return
            }
        }

        /// Flushes the current file, gives it its final name and flushes the folder.
        func closeCurrent() throws(WARCError) {
            guard let file = current else { return }
            current = nil
            defer { Glibc.close(file.fd) }
            guard fsync(file.fd) == 0 else { throw WARCError.system("cannot flush the WARC file \(naming.openPath(file.number))", errno: errno) }
            guard rename(naming.openPath(file.number), naming.path(file.number)) == 0 else {
                throw WARCError.system("cannot rename \(naming.openPath(file.number)) to \(naming.path(file.number))", errno: errno)
            }
            try syncFolder()
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
                    // The file may end in a broken record: it stays `.open`, to be repaired by the next run.
                    Glibc.close(file.fd)
                    current = nil
                    closed = true
                    throw WARCError(error.code, error.message + "; the WARC could not be cut back to its last whole record, so nothing more is written to it")
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
            try gzip.begin(fd: file.fd, level: 6)
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
                text += "\(name): \(String(value.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }))\r\n"
            }
            let block = Array(text.utf8)
            // No WARC-Payload-Digest: a warcinfo record has no payload (WARC 1.1 §4, §5.9).
            let record = WARCRecord(type: "warcinfo", id: file.warcinfoID, date: Date(), targetURI: nil,
                                    fields: [("WARC-Filename", LocalFile.name(of: naming.path(file.number)))],
                                    contentType: "application/warc-fields", contentLength: block.count, blockDigest: SHA1.label(of: block))
            try write(record, blocks: [block])
        }
    }
}
