import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The content a ``Route`` serves.
///
/// Bodies are always streamed in chunks by the server, so even multi-GiB
/// `pattern` or `file` bodies never sit in memory as a whole.
public enum Body: Sendable {
    /// Literal bytes, held in memory.
    case bytes([UInt8])
    /// Deterministic pseudo-random content of `size` bytes, computed on the fly.
    ///
    /// The same seed always gives the same bytes; different seeds differ in every
    /// 64 KiB block. Within one body, every 64 KiB block is distinct too, so a chunk
    /// written at the wrong offset is detectable by comparing hashes.
    case pattern(size: Int, seed: UInt64)
    /// A file on disk, read in chunks while serving. A file that cannot be opened is served as 404.
    case file(String)
    /// Bytes made afresh by `make` for each response (and each use of `count` or `data()`):
    /// a feed whose signed links are new at every fetch, say.
    case generated(@Sendable () -> [UInt8])

    /// The body's length in bytes (for `file`, its current size on disk, or 0 if it cannot be read).
    public var count: Int {
        switch self {
        case .bytes(let bytes):
            return bytes.count
        case .pattern(let size, _):
            return max(0, size)
        case .file(let path):
            var info = stat()
            return stat(path, &info) == 0 ? Int(info.st_size) : 0
        case .generated(let make):
            return make().count
        }
    }

    /// The whole body, for tests to compare or hash. Materializes it: keep to moderate sizes.
    public func data() -> Data {
        switch self {
        case .bytes(let bytes):
            return Data(bytes)
        case .generated(let make):
            return Data(make())
        case .file(let path):
            // A file that cannot be read serves an empty body: the test that named it sees its check fail.
            return (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()
        case .pattern(let size, let seed):
            var data = Data(count: max(0, size))
            data.withUnsafeMutableBytes { PatternBlock.forSeed(seed).fill($0, offset: 0) }
            return data
        }
    }

    /// The SHA-256 of the body as lowercase hex, computed in chunks (never materializes the body).
    public func sha256Hex() -> String {
        guard let (source, size) = BodySource.open(self) else { return SHA256.hex(Data()) }
        var hasher = SHA256.Hasher()
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { chunk.deallocate() }
        var offset = 0
        while offset < size {
            let want = min(chunk.count, size - offset)
            let got = source.read(offset: offset, into: UnsafeMutableRawBufferPointer(rebasing: chunk[0..<want]))
            if got <= 0 { break }
            hasher.update(UnsafeRawBufferPointer(rebasing: chunk[0..<got]))
            offset += got
        }
        return hasher.finalizeHex()
    }
}

/// A body opened for one response: knows its size and reads any part of it into a caller's buffer.
enum BodySource {
    case bytes([UInt8])
    case pattern(PatternBlock)
    case file(OpenFile)

    /// Opens `body`; `nil` when it is a file that cannot be opened.
    static func open(_ body: Body) -> (BodySource, size: Int)? {
        switch body {
        case .bytes(let bytes):
            return (.bytes(bytes), bytes.count)
        case .generated(let make):
            let bytes = make()
            return (.bytes(bytes), bytes.count)
        case .pattern(let size, let seed):
            return (.pattern(PatternBlock.forSeed(seed)), max(0, size))
        case .file(let path):
            guard let file = OpenFile(path: path) else { return nil }
            return (.file(file), file.size)
        }
    }

    /// Copies body bytes starting at `offset` into `buffer`; returns how many (fewer only at end of a file).
    func read(offset: Int, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard buffer.count > 0, let base = buffer.baseAddress else { return 0 }
        switch self {
        case .bytes(let bytes):
            let n = max(0, min(buffer.count, bytes.count - offset))
            bytes.withUnsafeBytes { source in
                if n > 0 { base.copyMemory(from: source.baseAddress! + offset, byteCount: n) }
            }
            return n
        case .pattern(let block):
            block.fill(buffer, offset: offset)
            return buffer.count
        case .file(let file):
            var done = 0
            while done < buffer.count {
                let n = pread(file.fd, base + done, buffer.count - done, off_t(offset + done))
                if n > 0 {
                    done += n
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    break  // end of file (it shrank) or an I/O error: the caller sees a short read
                }
            }
            return done
        }
    }
}

/// An open file descriptor that closes itself, so no response path can leak it.
final class OpenFile {
    let fd: Int32
    let size: Int

    init?(path: String) {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            Glibc.close(fd)
            return nil
        }
        self.fd = fd
        self.size = Int(info.st_size)
    }

    deinit { Glibc.close(fd) }
}
