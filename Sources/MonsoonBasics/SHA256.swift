import CCrypto
import FoundationEssentials
import Glibc

/// SHA-256 through OpenSSL's libcrypto (hardware SHA where the CPU has it): of downloaded files
/// (archive manifests, verify), of bodies as they arrive, and of every body the test server serves.
public enum SHA256 {
    /// The digest of `data` as 64 lowercase hex digits.
    public static func hex(_ data: Data) -> String {
        var hasher = Hasher()
        hasher.update(data)
        return hasher.finalizeHex()
    }

    /// The digest of the file at `path` as lowercase hex, read in 1 MiB blocks.
    /// - Throws: the system's error when the file cannot be opened or read.
    public static func hex(fileAt path: String) throws(POSIXError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw posixError() }
        defer { close(fd) }
        let block = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { block.deallocate() }
        var hasher = Hasher()
        while true {
            let count = read(fd, block.baseAddress, block.count)
            if count > 0 {
                hasher.update(UnsafeRawBufferPointer(rebasing: block[0..<count]))
            } else if count == 0 {
                break
            } else if errno != EINTR {
                throw posixError()
            }
        }
        return hasher.finalizeHex()
    }

    private static func posixError() -> POSIXError {
        POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }

    /// The hex digest of a running digest (`monsoon_sha256_new`), which it finishes (for the engine,
    /// which feeds one from curl's write callback).
    package static func hex(finishing context: OpaquePointer) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        let length = monsoon_digest_final(context, &digest)
        return hex(digest.prefix(Int(length)))
    }

    /// `bytes` as lowercase hex.
    static func hex(_ bytes: some Collection<UInt8>) -> String {
        // By hand: String(format:) goes through Foundation's formatter for each byte, of every file.
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Incremental SHA-256: feed data with `update`, then call `finalize` (or `finalizeHex`) once.
    public struct Hasher: Sendable {
        private var state = Context()

        public init() {}

        public mutating func update(_ data: Data) {
            data.withUnsafeBytes { update($0) }
        }

        public mutating func update(_ bytes: UnsafeRawBufferPointer) {
            guard let base = bytes.baseAddress, bytes.count > 0 else { return }
            // Copy on write: a copy of a hasher goes on from where the original was.
            if !isKnownUniquelyReferenced(&state) { state = Context(copying: state) }
            monsoon_digest_update(state.pointer, base, bytes.count)
        }

        /// The digest as 64 lowercase hex digits. It finishes the hasher: call it only once.
        public mutating func finalizeHex() -> String {
            // Finishing changes the context: a copy sharing it keeps its own.
            if !isKnownUniquelyReferenced(&state) { state = Context(copying: state) }
            return SHA256.hex(finishing: state.pointer)
        }
    }

    /// One OpenSSL SHA-256 context, freed with the last hasher that holds it.
    private final class Context: @unchecked Sendable {
        // Safe to share: a hasher copies its context before changing it unless it holds the
        // only reference, so a context is changed by one owner and only read by the others.
        let pointer: OpaquePointer

        init() {
            // Nil means memory ran out, where Swift's own allocations stop the process as well.
            guard let made = monsoon_sha256_new() else { fatalError("cannot make a SHA-256 context: out of memory") }
            pointer = made
        }

        init(copying other: Context) {
            guard let made = monsoon_digest_copy(other.pointer) else { fatalError("cannot copy a SHA-256 context: out of memory") }
            pointer = made
        }

        deinit { monsoon_digest_free(pointer) }
    }
}
