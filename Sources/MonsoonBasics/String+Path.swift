import FoundationEssentials
import Glibc

/// Paths as text, by the rules of Foundation's `NSString` path methods (not in FoundationEssentials),
/// so that every name they made is made the same.
extension String {
    /// This path and `component`, one slash between them; either alone when the other is empty.
    package func joiningPath(_ component: String) -> String {
        if component.isEmpty { return self }
        if isEmpty { return component }
        return hasSuffix("/") ? self + component : self + "/" + component
    }

    /// The last component: `b` of `/a/b/`, `/` of `/`.
    package var fileName: String {
        let fixed = slashesFixed
        guard fixed.utf8.count > 1, let slash = fixed.utf8.lastIndex(of: UInt8(ascii: "/")) else { return fixed }
        return String(fixed[fixed.utf8.index(after: slash)...])
    }

    /// The folder the path names a thing in: `/a` of `/a/b/`, `/` of `/a`, `` of `a`. Slashes
    /// repeated inside are kept (the system reads `a//b` as `a/b`): found on the UTF-8 bytes,
    /// without a copy, for it is asked of every download's path.
    package var parentPath: String {
        let bytes = utf8
        let slash = UInt8(ascii: "/")
        var end = bytes.endIndex
        while end > bytes.startIndex, bytes[bytes.index(before: end)] == slash { end = bytes.index(before: end) }
        guard end > bytes.startIndex else { return isEmpty ? "" : "/" }
        guard var cut = bytes[..<end].lastIndex(of: slash) else { return "" }
        while cut > bytes.startIndex, bytes[bytes.index(before: cut)] == slash { cut = bytes.index(before: cut) }
        return cut == bytes.startIndex ? "/" : String(self[..<cut])
    }

    /// What follows the last dot of the last component: `mp3` of `a/b.mp3`; empty for `.hidden`, `..` and `b`.
    package var fileExtension: String {
        let name = fileName
        guard name.utf8.count > 1, let dot = name.utf8.lastIndex(of: UInt8(ascii: ".")), dot != name.startIndex, name != ".." else { return "" }
        return String(name[name.utf8.index(after: dot)...])
    }

    /// The path with a leading `~` or `~user` as that home, `.` (but a leading one in a relative
    /// path) and empty components dropped, and `..` taken back in an absolute path. Symbolic
    /// links are left as they are: the path a user gave is the one shown, and checked for links
    /// where that matters (`LocalFile.firstLink`).
    package var standardizedPath: String {
        let path = expandingTilde
        let absolute = path.hasPrefix("/")
        var kept: [Substring] = []
        for component in path.split(separator: "/") where component != "." {
            if component == "..", absolute {
                _ = kept.popLast()
            } else {
                kept.append(component)
            }
        }
        // A relative path that starts at `.` keeps it, as NSString did: `.` alone stays a path
        // the system opens, not an empty one.
        if !absolute, path == "." || path.hasPrefix("./") { return kept.isEmpty ? "." : "./" + kept.joined(separator: "/") }
        return (absolute ? "/" : "") + kept.joined(separator: "/")
    }

    /// A leading `~` (or `~user`) as that user's home folder; the path as it is when there is none.
    package var expandingTilde: String {
        guard hasPrefix("~") else { return self }
        let end = firstIndex(of: "/") ?? endIndex
        let user = self[index(after: startIndex)..<end]
        let home: String?
        if user.isEmpty {
            home = Self.homeFolder
        } else {
            home = getpwnam(String(user)).map { String(cString: $0.pointee.pw_dir) }
        }
        var result = (home ?? String(self[..<end])) + self[end...]
        if result.utf8.count > 1, result.hasSuffix("/") { result.removeLast() }
        return result
    }

    /// The user's home folder: `$HOME`, else the password database's.
    package static var homeFolder: String? {
        if let home = getenv("HOME"), home.pointee != 0 { return String(cString: home) }
        return getpwuid(getuid()).map { String(cString: $0.pointee.pw_dir) }
    }

    /// Runs of slashes as one, and no slash at the end (`/` itself is kept, `//` is not: as NSString).
    private var slashesFixed: String {
        // On the bytes: `contains("//")` searches far slower, and every download's path is asked.
        let slash = UInt8(ascii: "/")
        // A plain loop, not `zip`: the first zip of these two views costs the runtime a search through
        // every conformance for each, a fifth of a millisecond of a `get`.
        var (previous, doubled): (UInt8, Bool) = (0, false)
        for byte in utf8 {
            doubled = byte == slash && previous == slash
            if doubled { break }
            previous = byte
        }
        guard self != "/", utf8.last == slash || doubled else { return self }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        for byte in utf8 where !(byte == UInt8(ascii: "/") && bytes.last == UInt8(ascii: "/")) { bytes.append(byte) }
        if bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }
}
