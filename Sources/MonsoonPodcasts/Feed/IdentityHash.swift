/// A 128-bit digest of an identity's UTF-8 bytes: two independent 64-bit hashes.
///
/// 16 bytes an identity, where the `String` costs a hundred or more (``EpisodeIdentity/Registry``). Bytes are hashed, as
/// SQLite compares them: `String` equality would also match canonically equivalent texts, which the database keeps apart.
///
/// Not cryptographic: a publisher could craft two guids of its own feed that collide, which only makes one of its own
/// items a duplicate. By chance, two of a million identities collide with a probability under 10⁻²⁶.
struct IdentityHash: Hashable, Sendable {
    var first: UInt64
    var second: UInt64

    init(_ text: String) {
        var text = text
        self = text.withUTF8 { IdentityHash(bytes: UnsafeRawBufferPointer($0)) }
    }

    init(bytes: UnsafeRawBufferPointer) {
        first = Self.hash(bytes, seed: 0x243F_6A88_85A3_08D3, multiplier: 0x9E37_79B9_7F4A_7C15)
        second = Self.hash(bytes, seed: 0x1319_8A2E_0370_7344, multiplier: 0xC2B2_AE3D_27D4_EB4F)
    }

    init(first: UInt64, second: UInt64) {
        self.first = first
        self.second = second
    }

    /// The 128-bit product of `a` and `b`, folded to 64 bits: every input bit reaches every output bit.
    @inline(__always)
    private static func mix(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let product = a.multipliedFullWidth(by: b)
        return product.high ^ product.low
    }

    /// The tail padded with zeros and the length mixed in last, so texts that differ only by trailing zero bytes differ.
    private static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64, multiplier: UInt64) -> UInt64 {
        var state = seed
        var offset = 0
        let count = bytes.count
        while offset + 8 <= count {
            state = mix(state ^ bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self), multiplier)
            offset += 8
        }
        if offset < count {
            var tail: UInt64 = 0
            for index in offset..<count { tail |= UInt64(bytes[index]) << (UInt64(index - offset) * 8) }
            state = mix(state ^ tail, multiplier)
        }
        return mix(state ^ UInt64(count), multiplier ^ 0x5851_F42D_4C95_7F2D)
    }
}
