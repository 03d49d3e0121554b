import CCrypto

/// A running SHA-1 (OpenSSL's), for the digests of WARC records.
///
/// - Important: used by one thread at a time (the WARC writer's).
final class SHA1 {
    private let context: OpaquePointer

    /// - Throws: when memory ran out.
    init() throws(WARCError) {
        guard let context = monsoon_sha1_new() else {
            throw WARCError(.digest, "cannot compute the SHA-1 digests WARC records need: out of memory")
        }
        self.context = context
    }

    deinit { monsoon_digest_free(context) }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        monsoon_digest_update(context, base, bytes.count)
    }

    func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// `sha1:` and the digest in base32 (WARC's `WARC-Block-Digest` and `WARC-Payload-Digest`); finishes it.
    func finishLabel() -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        let length = monsoon_digest_final(context, &digest)
        return "sha1:" + Base32.encode(digest.prefix(Int(length)))
    }

    /// The label of `bytes`' digest.
    static func label(of bytes: [UInt8]) throws(WARCError) -> String {
        let digest = try SHA1()
        digest.update(bytes)
        return digest.finishLabel()
    }
}
