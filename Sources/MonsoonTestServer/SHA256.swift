import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// SHA-256 (FIPS 180-4) in pure Swift, because CryptoKit is not available on Linux.
public enum SHA256 {
    /// The digest of `data` as 64 lowercase hex digits.
    public static func hex(_ data: Data) -> String {
        var hasher = Hasher()
        hasher.update(data)
        return hasher.finalizeHex()
    }

    /// The digest of the file at `path` as lowercase hex, read in 1 MiB chunks.
    /// Throws a `POSIXError` when the file cannot be opened or read.
    public static func hex(fileAt path: String) throws -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw posixError() }
        defer { close(fd) }
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { chunk.deallocate() }
        var hasher = Hasher()
        while true {
            let n = read(fd, chunk.baseAddress, chunk.count)
            if n > 0 {
                hasher.update(UnsafeRawBufferPointer(rebasing: chunk[0..<n]))
            } else if n == 0 {
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

    /// Incremental SHA-256: feed data with `update`, then call `finalize` once.
    public struct Hasher: Sendable {
        private var h: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (
        0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19
        )
        /// Bytes of an incomplete 64-byte block carried to the next `update`.
        private var pending: [UInt8] = []
        private var length: UInt64 = 0

        public init() {}

        public mutating func update(_ data: Data) {
            data.withUnsafeBytes { update($0) }
        }

        public mutating func update(_ bytes: UnsafeRawBufferPointer) {
            guard bytes.count > 0 else { return }
            length &+= UInt64(bytes.count)
            var input = bytes
            if !pending.isEmpty {
                let take = min(64 - pending.count, input.count)
                pending.append(contentsOf: input[0..<take])
                input = UnsafeRawBufferPointer(rebasing: input[take...])
                guard pending.count == 64 else { return }
                let block = pending
                block.withUnsafeBytes { compress($0) }
                pending.removeAll(keepingCapacity: true)
            }
            let whole = input.count / 64 * 64
            if whole > 0 { compress(UnsafeRawBufferPointer(rebasing: input[0..<whole])) }
            if whole < input.count { pending.append(contentsOf: input[whole...]) }
        }

        /// The 32-byte digest. Padding is appended, so call it only once.
        public mutating func finalize() -> [UInt8] {
            let bitLength = length &* 8
            var tail = pending
            tail.append(0x80)
            while tail.count % 64 != 56 { tail.append(0) }
            for shift in stride(from: 56, through: 0, by: -8) {
                tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
            }
            tail.withUnsafeBytes { compress($0) }
            pending.removeAll()
            let words = [h.0, h.1, h.2, h.3, h.4, h.5, h.6, h.7]
            return words.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> UInt32(24 - 8 * $0)) } }
        }

        /// The digest as 64 lowercase hex digits.
        public mutating func finalizeHex() -> String {
            let digits = Array("0123456789abcdef".utf8)
            var out: [UInt8] = []
            out.reserveCapacity(64)
            for byte in finalize() {
                out.append(digits[Int(byte >> 4)])
                out.append(digits[Int(byte & 0x0f)])
            }
            return String(decoding: out, as: UTF8.self)
        }

        /// Processes whole 64-byte blocks. Written with locals, raw pointers and a 16-word
        /// rolling message schedule so debug builds stay usable and release builds are fast.
        private mutating func compress(_ blocks: UnsafeRawBufferPointer) {
            guard let base = blocks.baseAddress else { return }
            var (h0, h1, h2, h3, h4, h5, h6, h7) = h
            let w = UnsafeMutablePointer<UInt32>.allocate(capacity: 16)
            defer { w.deallocate() }
            // One array access per call; inside, a buffer pointer has no bounds checks in release.
            SHA256.roundConstants.withUnsafeBufferPointer { k in
            var offset = 0
            while offset + 64 <= blocks.count {
                var a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, hh = h7
                for i in 0..<64 {
                    let wi: UInt32
                    if i < 16 {
                        wi = UInt32(bigEndian: base.loadUnaligned(fromByteOffset: offset + i * 4, as: UInt32.self))
                    } else {
                        let x = w[(i - 15) & 15], y = w[(i - 2) & 15]
                        let s0 = x.rotatedRight(7) ^ x.rotatedRight(18) ^ (x >> 3)
                        let s1 = y.rotatedRight(17) ^ y.rotatedRight(19) ^ (y >> 10)
                        wi = w[i & 15] &+ s0 &+ w[(i - 7) & 15] &+ s1
                    }
                    w[i & 15] = wi
                    let s1 = e.rotatedRight(6) ^ e.rotatedRight(11) ^ e.rotatedRight(25)
                    let ch = (e & f) ^ (~e & g)
                    let t1 = hh &+ s1 &+ ch &+ k[i] &+ wi
                    let s0 = a.rotatedRight(2) ^ a.rotatedRight(13) ^ a.rotatedRight(22)
                    let maj = (a & b) ^ (a & c) ^ (b & c)
                    hh = g; g = f; f = e; e = d &+ t1
                    d = c; c = b; b = a; a = t1 &+ s0 &+ maj
                }
                h0 &+= a; h1 &+= b; h2 &+= c; h3 &+= d
                h4 &+= e; h5 &+= f; h6 &+= g; h7 &+= hh
                offset += 64
            }
            }
            h = (h0, h1, h2, h3, h4, h5, h6, h7)
        }
    }

    fileprivate static let roundConstants: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]
}

extension UInt32 {
    @inline(__always)
    fileprivate func rotatedRight(_ n: UInt32) -> UInt32 { (self &>> n) | (self &<< (32 &- n)) }
}
