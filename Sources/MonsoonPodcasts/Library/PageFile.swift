import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Where the later pages of a paged feed wait between the walk that fetches them and the parse that stores them: a
/// temporary file unlinked as soon as it is made, so nothing is left behind however the process ends. Memory holds one
/// page, whatever their number (100 pages of 45 MiB, served gzipped at 46 KB a page, took 4.7 GB when kept in memory).
///
/// In `$TMPDIR`, else `/var/tmp`, else `/tmp`, the order SQLite looks in: `/tmp` is memory on many systems.
package final class PageFile: Sendable {
    private let descriptor: Int32
    /// For messages.
    let folder: String

    init() throws(FeedError) {
        var folders = ["/var/tmp", "/tmp"]
        if let chosen = getenv("TMPDIR").map({ String(cString: $0) }), !chosen.isEmpty { folders.insert(chosen, at: 0) }
        // The first folder's failure is the one to tell: the one asked for, or the usual one.
        var failure = (folder: folders[0], reason: "")
        for folder in folders {
            var template = Array("\(folder)/monsoon-pages.XXXXXX".utf8CString)
            let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
            guard descriptor >= 0 else {
                if failure.reason.isEmpty { failure.reason = String(cString: strerror(errno)) }
                continue
            }
            unlink(template)
            // Not inherited by programs Monsoon runs: spawns close all but their own descriptors anyway; this is for others.
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            self.descriptor = descriptor
            self.folder = folder
            return
        }
        throw FeedError(.unreadable, "cannot make a temporary file in \(failure.folder) for the pages of a paged feed: \(failure.reason); "
                        + "set TMPDIR to a folder Monsoon can write to")
    }

    deinit { close(descriptor) }

    /// `page` names the document for messages.
    func write(_ data: Data, at offset: Int, page: String) throws(FeedError) {
        let failure = data.withUnsafeBytes { raw -> Int32? in
            var done = 0
            while done < raw.count {
                let written = pwrite(descriptor, raw.baseAddress! + done, raw.count - done, off_t(offset + done))
                if written < 0, errno == EINTR { continue }
                guard written >= 0 else { return errno }
                done += written
            }
            return nil
        }
        if let failure {
            throw FeedError(.unreadable, "cannot keep \(page) in \(folder) while the other pages are read: \(String(cString: strerror(failure))); "
                            + "free some space there, or set TMPDIR to another folder")
        }
    }

    func read(_ range: Range<Int>, page: String) throws(FeedError) -> Data {
        var data = Data(count: range.count)
        let failure = data.withUnsafeMutableBytes { raw -> Int32? in
            var done = 0
            while done < raw.count {
                let read = pread(descriptor, raw.baseAddress! + done, raw.count - done, off_t(range.lowerBound + done))
                if read < 0, errno == EINTR { continue }
                // The file is unlinked and this process's alone: shorter than written only if the disk lost it.
                guard read > 0 else { return read < 0 ? errno : EIO }
                done += read
            }
            return nil
        }
        if let failure { throw FeedError(.unreadable, "cannot read \(page) back from \(folder): \(String(cString: strerror(failure)))") }
        return data
    }
}
