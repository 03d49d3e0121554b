import CCrypto

/// A running SHA-1 (OpenSSL's), for the digests of WARC records.
///
/// - Important: used by one thread at a time (the WARC writer's).
final class SHA1 {
    private let context: OpaquePointer

    /// - Throws: when OpenSSL has no SHA-1 (a FIPS build that forbids it) or memory ran out.
    init() throws(WARCError) {
        guard let context = monsoon_sha1_new() else {
            throw WARCError(.digest, "OpenSSL cannot compute SHA-1 (a FIPS build that forbids it, or out of memory), which WARC digests need")
        }
        self.context = context
    }

    deinit { EVP_MD_CTX_free(context) }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        EVP_DigestUpdate(context, base, bytes.count)
    }

    func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// `sha1:` and the digest in base32 (WARC's `WARC-Block-Digest` and `WARC-Payload-Digest`); finishes it.
    func finishLabel() -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &digest, &length)
        return "sha1:" + Base32.encode(digest.prefix(Int(length)))
    }

    /// The label of `bytes`' digest.
    static func label(of bytes: [UInt8]) throws(WARCError) -> String {
        let digest = try SHA1()
        digest.update(bytes)
        return digest.finishLabel()
    }
}
