import Foundation

/// A fresh folder under the system's temporary one, removed by `remove()`.
struct TemporaryFolder {
    let path: String

    init() throws {
        let base = FileManager.default.temporaryDirectory.path(percentEncoded: false)
        path = (base as NSString).appendingPathComponent("monsoon-basics-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }

    /// Writes `text` to `name` (folders on the way made).
    func write(_ name: String, _ text: String = "") throws {
        try FileManager.default.createDirectory(atPath: (file(name) as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: file(name), atomically: false, encoding: .utf8)
    }

    func makeFolder(_ name: String) throws {
        try FileManager.default.createDirectory(atPath: file(name), withIntermediateDirectories: true)
    }

    /// A symbolic link `name` holding `destination` as given (relative to the link's folder when not absolute).
    func link(_ name: String, to destination: String) throws {
        try FileManager.default.createSymbolicLink(atPath: file(name), withDestinationPath: destination)
    }

    func remove() {
        // A folder left behind in the temporary folder harms no later test: each makes its own.
        try? FileManager.default.removeItem(atPath: path)
    }
}
