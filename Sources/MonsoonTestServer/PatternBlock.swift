
/// The generator behind ``Body/pattern(size:seed:)``.
///
/// One 64 KiB block of pseudo-random bytes is computed once per seed; byte `p` of the
/// body is `base[p % 64 KiB]` xor byte `p % 8` of a 64-bit key derived from the seed and
/// the block number `p / 64 KiB`. That keeps generation as cheap as a memcpy plus an xor
/// per word (it must keep up with multi-GiB loopback benchmarks) while every block of
/// every body differs (the key is 64 bits, so two blocks collide with probability 2⁻⁶⁴).
final class PatternBlock: Sendable {
    static let size = 64 * 1024

    let seed: UInt64
    /// Immutable after init, so sharing between connection threads is safe.
    let base: [UInt8]

    private static let cache = Locked<[UInt64: PatternBlock]>([:])

    /// The (cached) block for `seed`; caching makes many small pattern responses cheap.
    static func forSeed(_ seed: UInt64) -> PatternBlock {
        cache.withLock { cache in
            if let block = cache[seed] { return block }
            if cache.count >= 256 { cache.removeAll() }  // bound memory for seed-happy callers
            let block = PatternBlock(seed: seed)
            cache[seed] = block
            return block
        }
    }

    private init(seed: UInt64) {
        self.seed = seed
        var state = seed ^ 0x6A09_E667_F3BC_C908
        base = [UInt8](unsafeUninitializedCapacity: Self.size) { buffer, count in
            let raw = UnsafeMutableRawPointer(buffer.baseAddress!)
            for word in 0..<(Self.size / 8) {
                state = state &+ 0x9E37_79B9_7F4A_7C15
                raw.storeBytes(of: Self.mix(state).littleEndian, toByteOffset: word * 8, as: UInt64.self)
            }
            count = Self.size
        }
    }

    /// SplitMix64's finalizer: a fast, well-distributed 64-bit mixer.
    static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The xor key of block number `block`.
    func key(block: Int) -> UInt64 {
        Self.mix(seed &* 0xD1B5_4A32_D192_ED03 ^ Self.mix(UInt64(truncatingIfNeeded: block) &+ 0x8CB9_2BA7_2F3D_8DD7))
    }

    /// Writes the body bytes at `offset ..< offset + buffer.count` into `buffer`.
    func fill(_ buffer: UnsafeMutableRawBufferPointer, offset: Int) {
        guard let dest = buffer.baseAddress, buffer.count > 0 else { return }
        base.withUnsafeBytes { base in
            var position = offset
            var written = 0
            while written < buffer.count {
                let inBlock = position % Self.size
                let n = min(Self.size - inBlock, buffer.count - written)
                let out = dest + written
                out.copyMemory(from: base.baseAddress! + inBlock, byteCount: n)
                // Rotate the key so that byte j of each word gets key byte (position + j) % 8.
                let shift = UInt64((position % 8) * 8)
                let key = key(block: position / Self.size)
                let rotated = shift == 0 ? key : (key >> shift) | (key << (64 - shift))
                let mask = rotated.littleEndian
                let words = n / 8
                for i in 0..<words {
                    let at = i * 8
                    let value = out.loadUnaligned(fromByteOffset: at, as: UInt64.self)
                    out.storeBytes(of: value ^ mask, toByteOffset: at, as: UInt64.self)
                }
                for i in (words * 8)..<n {
                    let keyByte = UInt8(truncatingIfNeeded: key >> UInt64(((position + i) % 8) * 8))
                    out.storeBytes(of: out.load(fromByteOffset: i, as: UInt8.self) ^ keyByte, toByteOffset: i, as: UInt8.self)
                }
                position += n
                written += n
            }
        }
    }
}
