import CCrypto
import Foundation

/// SHA-256 through OpenSSL's libcrypto (hardware SHA where the CPU has it): of files (archive
/// manifests, verify) and of bodies as they arrive (`Destination.discard(checksum: true)`).
public enum FileDigest {
    /// The hex SHA-256 of the file at `path`, read in 1 MiB blocks.
    /// - Throws: `DownloadError` (`.fileSystem`) when the file cannot be read.
    public static func sha256(ofFile path: String) throws(DownloadError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw FileSystem.error("cannot read \(path)", errno: errno) }
        defer { close(fd) }
        guard let context = monsoon_sha256_new() else { throw DownloadError(.fileSystem, "cannot compute SHA-256: OpenSSL has no SHA-256") }
        defer { EVP_MD_CTX_free(context) }
        let block = 1 << 20
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: block, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = read(fd, buffer, block)
            if count < 0 {
                if errno == EINTR { continue }
                throw FileSystem.error("cannot read \(path)", errno: errno)
            }
            if count == 0 { break }
            EVP_DigestUpdate(context, buffer, count)
        }
        return hex(finishing: context)
    }

    /// The hex digest of a SHA-256 state, which it finishes.
    static func hex(finishing context: OpaquePointer) -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &digest, &length)
        let hex = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(Int(length) * 2)
        for byte in digest.prefix(Int(length)) {
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
