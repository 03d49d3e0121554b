import FoundationEssentials
import Glibc
import MonsoonEngine

/// Reads what a command is given to read (a file, standard input), never more than a limit: a
/// 200 MB file given as an OPML list must be refused, not loaded whole (and copied) first.
public enum BoundedInput {
    /// Why an input was not read.
    public enum Failure: Error, Sendable, Equatable {
        /// More than the limit: `size` bytes when the file says so (a regular file), nil when that
        /// only showed while reading (a pipe, a device).
        case tooLarge(size: Int?)
        case folder
        /// The system refused: `open` or `read` failed with this `errno`.
        case system(Int32)

        /// What happened, in words, for "`NAME`: …".
        public func message(limit: Int, what: String) -> String {
            switch self {
            case .tooLarge(let size?):
                let shown = ByteCount.format(size) == ByteCount.format(limit) ? "\(size) bytes" : ByteCount.format(size)
                return "it is \(shown), more than the limit of \(ByteCount.format(limit)) for \(what); it was not read"
            case .tooLarge(nil):
                return "it is larger than the limit of \(ByteCount.format(limit)) for \(what); it was not read"
            case .folder:
                return "it is a folder, not \(what)"
            case .system(let code):
                return code == ENOENT ? "no such file" : "cannot be read: \(String(cString: strerror(code)))"
            }
        }
    }

    public static func read(path: String, limit: Int) throws(Failure) -> Data {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .system(errno) }
        defer { close(descriptor) }
        return try read(descriptor: descriptor, limit: limit)
    }

    /// Everything `descriptor` gives until its end. A regular file larger than `limit` is refused
    /// from its size (`fstat`) before a byte is read; anything else (a pipe, a terminal, a device)
    /// is read until its end or until more than `limit` bytes came, and then refused, the rest unread.
    public static func read(descriptor: Int32, limit: Int) throws(Failure) -> Data {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .system(errno) }
        let kind = status.st_mode & S_IFMT
        if kind == S_IFDIR { throw .folder }
        let size = kind == S_IFREG ? Int(status.st_size) : 0
        if size > limit { throw .tooLarge(size: size) }
        // One byte past the limit is read, to tell "exactly the limit" from "more"; a regular file
        // that grows while it is read is caught the same way.
        let ceiling = limit == .max ? Int.max : limit + 1
        var data = Data(count: min(max(size + 1, 64 << 10), ceiling))
        var count = 0
        while true {
            if count == data.count {
                guard data.count < ceiling else { throw .tooLarge(size: nil) }
                data.count = data.count > ceiling / 2 ? ceiling : data.count * 2
            }
            let got = data.withUnsafeMutableBytes { buffer in
                Glibc.read(descriptor, buffer.baseAddress! + count, buffer.count - count)
            }
            if got == 0 { break }
            if got < 0 {
                if errno == EINTR { continue }
                throw .system(errno)
            }
            count += got
        }
        data.count = count
        return data
    }

    /// `data`, unless it is longer than `limit`: standard input given in memory (in-process tests).
    public static func read(_ data: Data, limit: Int) throws(Failure) -> Data {
        guard data.count <= limit else { throw .tooLarge(size: nil) }
        return data
    }
}
