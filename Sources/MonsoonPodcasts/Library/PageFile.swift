import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Where the later pages of a paged feed wait between the walk that fetches them and the parse that
/// stores them (see ``FeedFetcher/Loaded``): a temporary file without a name, unlinked as soon as it
/// is made, so nothing is left behind however the process ends.
///
/// Each page is written here as soon as the walk has read it, and its bytes dropped; the parse that
/// stores the feed reads one page back at a time. Memory holds one page, whatever the number of
/// pages (a feed of 100 pages of 45 MiB each, served gzipped at 46 KB a page, took 4.7 GB when they
/// were kept in memory), and the feed is still stored in one transaction that never waits on the
/// network.
///
/// In `$TMPDIR`, else `/var/tmp`, else `/tmp`, the order SQLite looks in for its temporary files:
/// `/tmp` is memory on many systems, `/var/tmp` a disk.
package final class PageFile: Sendable {
    private let descriptor: Int32
    /// The folder the file is in, for messages.
    let folder: String

    /// A new, empty file; the error says why none could be made in any of the folders.
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
            // Not inherited by the programs Monsoon runs (hooks, a player): spawns close all but
            // their own descriptors anyway, this is for any other.
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            self.descriptor = descriptor
            self.folder = folder
            return
        }
        throw FeedError(.unreadable, "cannot make a temporary file in \(failure.folder) for the pages of a paged feed: \(failure.reason); "
                        + "set TMPDIR to a folder Monsoon can write to")
    }

    deinit { close(descriptor) }

    /// Writes `data`, the document of `page` (its name for messages), at `offset`.
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

    /// The bytes in `range`, the document of `page` (its name for messages), as written.
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
