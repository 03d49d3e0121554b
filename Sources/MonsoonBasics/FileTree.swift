import Glibc

/// What is under a folder, depth first, without following a symbolic link (FoundationEssentials
/// has no directory enumerator). Memory grows with the depth, not with the number of files.
package enum FileTree {
    package enum Kind: Sendable { case file, folder, link, other }

    /// Calls `visit` with each path under `root` (relative to it) and its kind; a folder is gone
    /// into when `visit` returns true. A folder that cannot be opened (gone meanwhile, or not
    /// readable) is passed over, as Foundation's enumerator did.
    /// - Returns: false when `root` itself cannot be opened.
    @discardableResult
    package static func walk(_ root: String, _ visit: (_ path: String, _ kind: Kind) throws -> Bool) rethrows -> Bool {
        guard let top = opendir(root) else { return false }
        var open: [(handle: OpaquePointer, prefix: String)] = [(top, "")]
        defer { for folder in open { closedir(folder.handle) } }
        while let (handle, prefix) = open.last {
            guard let entry = readdir(handle) else {
                closedir(handle)
                open.removeLast()
                continue
            }
            let name = Self.name(of: entry)
            if name == "." || name == ".." { continue }
            let path = prefix + name
            let kind = Self.kind(entry.pointee.d_type, at: root + "/" + path)
            if try visit(path, kind), kind == .folder, let inner = opendir(root + "/" + path) {
                open.append((inner, path + "/"))
            }
        }
        return true
    }

    /// The name of an entry `readdir` gave, read where it is: a copy of the whole `dirent` reads as
    /// far as the longest name could go, past the end of a short entry and maybe of readdir's buffer.
    package static func name(of entry: UnsafeMutablePointer<dirent>) -> String {
        // A stored field of an imported C struct: its offset is known.
        String(cString: UnsafeRawPointer(entry).advanced(by: MemoryLayout<dirent>.offset(of: \.d_name)!).assumingMemoryBound(to: CChar.self))
    }

    /// The kind readdir gave, or lstat's when the file system does not say (DT_UNKNOWN).
    private static func kind(_ type: UInt8, at path: String) -> Kind {
        switch Int(type) {
        case Int(DT_REG): return .file
        case Int(DT_DIR): return .folder
        case Int(DT_LNK): return .link
        case Int(DT_UNKNOWN):
            var info = stat()
            guard lstat(path, &info) == 0 else { return .other }
            switch info.st_mode & S_IFMT {
            case S_IFREG: return .file
            case S_IFDIR: return .folder
            case S_IFLNK: return .link
            default: return .other
            }
        default: return .other
        }
    }
}
