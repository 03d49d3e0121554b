import FoundationEssentials
import MonsoonBasics

/// SHA-256 of files (archive manifests, verify) and of bodies as they arrive (`Download.checksum`),
/// as the engine reports its failures.
public enum FileDigest {
    /// The hex SHA-256 of the file at `path`.
    /// - Throws: `DownloadError` (`.fileSystem`) when the file cannot be read.
    public static func sha256(ofFile path: String) throws(DownloadError) -> String {
        do {
            return try SHA256.hex(fileAt: path)
        } catch {
            throw FileSystem.error("cannot read \(path)", errno: error.code.rawValue)
        }
    }

    /// The hex digest of a SHA-256 state, which it finishes.
    static func hex(finishing context: OpaquePointer) -> String {
        SHA256.hex(finishing: context)
    }
}
