import CZlib
import FoundationEssentials
import Glibc

/// Writes gzip members into a file, one at a time: a WARC record is one member, so a reader
/// can seek to any record, and a file cut short loses only its last record.
///
/// - Important: used by one thread at a time (the WARC writer's).
final class GzipMemberWriter {
    private let stream: UnsafeMutablePointer<z_stream>
    private let output: UnsafeMutablePointer<UInt8>
    private static let outputSize = 256 << 10
    private var fd: Int32 = -1
    /// The file's name, for errors.
    private var path = ""
    private var open = false
    /// Compressed bytes written to the file by this member so far.
    private(set) var written = 0

    init() {
        // zlib keeps a pointer back to its stream: it must never move, so it is allocated once.
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        output = .allocate(capacity: Self.outputSize)
    }

    deinit {
        if open { deflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
        output.deallocate()
    }

    /// Starts a member at the end of `fd` (the file at `path`), compressed at `level` (zlib's 0, stored, to 9).
    func begin(fd: Int32, path: String, level: Int32) throws(WARCError) {
        if open { deflateEnd(stream) }
        stream.pointee = z_stream()
        guard monsoon_deflate_init_gzip(stream, level) == Z_OK else {
            throw WARCError(.compression, "zlib cannot start compressing a WARC record (out of memory?)")
        }
        open = true
        self.fd = fd
        self.path = path
        written = 0
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(WARCError) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: UInt8.self))
        stream.pointee.avail_in = UInt32(bytes.count)
        while stream.pointee.avail_in > 0 {
            try run(Z_NO_FLUSH)
        }
    }

    func write(_ bytes: [UInt8]) throws(WARCError) {
        let result: Result<Void, WARCError> = bytes.withUnsafeBytes { raw in Result { () throws(WARCError) in try write(raw) } }
        try result.get()
    }

    /// The compressed bytes so far against the bytes given so far (0 before any).
    var compressedFraction: Double {
        Double(stream.pointee.total_out) / Double(max(1, stream.pointee.total_in))
    }

    /// From here on, what it is given is stored (deflate level 0), in the same member: for a
    /// body that turned out not to compress, whatever its `Content-Type` said.
    func storeFromHere() throws(WARCError) {
        stream.pointee.next_in = nil
        stream.pointee.avail_in = 0
        // What was given so far goes out first, compressed as it was begun; deflateParams
        // itself needs room for nothing more then.
        while try run(Z_BLOCK) == Z_OK && stream.pointee.avail_out == 0 {}
        stream.pointee.next_out = output
        stream.pointee.avail_out = UInt32(Self.outputSize)
        let result = deflateParams(stream, 0, Z_DEFAULT_STRATEGY)
        guard result == Z_OK else { throw WARCError(.compression, "zlib cannot change a WARC record's compression (code \(result))") }
        let produced = Self.outputSize - Int(stream.pointee.avail_out)
        try Self.writeAll(fd, UnsafeRawBufferPointer(start: output, count: produced), path: path)
        written += produced
    }

    /// Ends the member: the rest of the compressed data and the gzip trailer go to the file.
    func finish() throws(WARCError) {
        stream.pointee.next_in = nil
        stream.pointee.avail_in = 0
        while try run(Z_FINISH) != Z_STREAM_END {}
        deflateEnd(stream)
        open = false
    }

    /// One call of deflate, its output written out.
    @discardableResult
    private func run(_ flush: Int32) throws(WARCError) -> Int32 {
        stream.pointee.next_out = output
        stream.pointee.avail_out = UInt32(Self.outputSize)
        let result = deflate(stream, flush)
        guard result == Z_OK || result == Z_STREAM_END || result == Z_BUF_ERROR else {
            throw WARCError(.compression, "zlib failed compressing a WARC record (code \(result))")
        }
        let produced = Self.outputSize - Int(stream.pointee.avail_out)
        try Self.writeAll(fd, UnsafeRawBufferPointer(start: output, count: produced), path: path)
        written += produced
        return result
    }

    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(WARCError) {
        var done = 0
        while done < bytes.count {
            let result = Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
            if result < 0 {
                if errno == EINTR { continue }
                throw WARCError.system("cannot write the WARC file \(path)", errno: errno)
            }
            done += result
        }
    }
}

/// Where the complete gzip members of a file end: how a WARC file left open by a killed run
/// is cut back to its last complete record.
enum GzipMemberScan {
    /// The offset just past the last complete member of `fd` (read from its start), and how
    /// many complete members come before it. Stops at the first damaged or unfinished one.
    /// `first`: the first `firstBytes` bytes the first member holds, uncompressed (a WARC's
    /// `warcinfo`, which says who wrote the file).
    /// - Throws: when the file cannot be read (an I/O error is not its end: nothing may be cut).
    static func completeEnd(of fd: Int32, path: String, firstBytes: Int = 0) throws(WARCError) -> (end: Int, members: Int, first: [UInt8]) {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer { stream.deinitialize(count: 1); stream.deallocate() }
        guard monsoon_inflate_init_gzip(stream) == Z_OK else {
            throw WARCError(.compression, "zlib cannot start reading \(path) (out of memory?); it is left as it is")
        }
        defer { inflateEnd(stream) }
        let inputSize = 1 << 20, outputSize = 256 << 10
        let input = UnsafeMutablePointer<UInt8>.allocate(capacity: inputSize)
        let output = UnsafeMutablePointer<UInt8>.allocate(capacity: outputSize)
        defer { input.deallocate(); output.deallocate() }
        var readOffset = 0      // file bytes read into `input` so far
        var end = 0
        var members = 0
        var first: [UInt8] = []
        while true {
            if stream.pointee.avail_in == 0 {
                let count = try FileRead.pread(fd, UnsafeMutableRawBufferPointer(start: input, count: inputSize), at: readOffset) { code in
                    WARCError.system("cannot read \(path), left open by an earlier run, so it is left as it is (copy what can be read of it elsewhere, "
                                     + "move it away, then run again)", errno: code)
                }
                if count == 0 { return (end, members, first) }   // the end of the file
                readOffset += count
                stream.pointee.next_in = input
                stream.pointee.avail_in = UInt32(count)
            }
            stream.pointee.next_out = output
            stream.pointee.avail_out = UInt32(outputSize)
            let result = inflate(stream, Z_NO_FLUSH)
            if members == 0, first.count < firstBytes {
                let produced = outputSize - Int(stream.pointee.avail_out)
                first += UnsafeBufferPointer(start: output, count: min(produced, firstBytes - first.count))
            }
            switch result {
            case Z_STREAM_END:
                end = readOffset - Int(stream.pointee.avail_in)
                members += 1
                inflateReset(stream)
            case Z_OK, Z_BUF_ERROR:
                continue
            default:
                return (end, members, first)   // damaged: cut here
            }
        }
    }
}

/// `pread` with its interruptions retried.
enum FileRead {
    /// Bytes read into `buffer` from `offset` (0 at the end of the file).
    /// - Throws: `failure(errno)` when the file cannot be read.
    static func pread(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer, at offset: Int,
                      failure: (Int32) -> WARCError) throws(WARCError) -> Int {
        while true {
            let count = Glibc.pread(fd, buffer.baseAddress, buffer.count, off_t(offset))
            if count >= 0 { return count }
            if errno != EINTR { throw failure(errno) }
        }
    }
}
