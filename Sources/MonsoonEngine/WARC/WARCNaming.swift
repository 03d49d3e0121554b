import CCurl
import FoundationEssentials
import Glibc

/// Where a run's WARC files go and what they are called: `STEM-00000.warc.gz`, numbered on from
/// the highest number already in the folder (a rerun never writes over an earlier run's files),
/// `….warc.gz.open` while being written.
struct WARCNaming: Sendable {
    let folder: String
    let stem: String

    init(path: String) {
        var isFolder: Bool = false
        if path.hasSuffix("/") || (FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && isFolder) {
            folder = path
            stem = "monsoon"
            return
        }
        folder = path.parentPath.isEmpty ? "." : path.parentPath
        var name = path.fileName
        for suffix in [".warc.gz", ".warc", ".gz"] where name.hasSuffix(suffix) {
            name = String(name.dropLast(suffix.count))
            break
        }
        stem = name.isEmpty ? "monsoon" : name
    }

    /// The final name of file `number`.
    func path(_ number: Int) -> String {
        let digits = String(number)
        return folder.joiningPath("\(stem)-\(String(repeating: "0", count: max(0, 5 - digits.count)))\(digits).warc.gz")
    }

    /// The name of file `number` while it is written.
    func openPath(_ number: Int) -> String { path(number) + ".open" }

    /// What a file being begun is called before it gets its number (hidden, and never taken
    /// for a leftover to repair): `.STEM-new-UUID.warc.gz`.
    func temporaryPath() -> String {
        folder.joiningPath(temporaryPrefix + UUID().uuidString.lowercased() + ".warc.gz")
    }

    private var temporaryPrefix: String { "." + stem + "-new-" }

    /// The number of a file of this stem (finished or open), from its name.
    func number(of name: String) -> (number: Int, isOpen: Bool)? {
        let prefix = stem + "-"
        guard name.hasPrefix(prefix) else { return nil }
        var rest = name.dropFirst(prefix.count)
        let isOpen = rest.hasSuffix(".warc.gz.open")
        guard isOpen || rest.hasSuffix(".warc.gz") else { return nil }
        rest = rest.dropLast(isOpen ? 13 : 8)
        guard rest.count >= 5, rest.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int(rest) else { return nil }
        return (number, isOpen)
    }

    /// The numbers of this stem's files in the folder.
    func existing() -> [(number: Int, isOpen: Bool)] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).compactMap(number(of:))   // an unreadable folder fails at the first write, with its reason
    }

    /// Whether `head`, the start of a file's first record, is the `warcinfo` Monsoon begins each
    /// file with, naming the file `name`.
    static func isOurs(_ head: [UInt8], name: String) -> Bool {
        let lines = String(decoding: head, as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false)
        guard lines.count > 2, lines[0] == "WARC/1.1", lines[1] == "WARC-Type: warcinfo" else { return false }
        return lines.prefix { !$0.isEmpty }.contains { $0 == "WARC-Filename: \(name)" }
    }

    /// Files a killed run left open (and no process holds): cut back to their last whole
    /// record and given their final names (the next free number when a file has that name
    /// already); an empty one is deleted, and so is a file a killed run was beginning
    /// (`temporaryPath`). A file that Monsoon did not begin, or that cannot be read, is left as
    /// it is, and said.
    /// - Returns: what was done, a line per file.
    func repairLeftovers() throws(WARCError) -> [String] {
        var done: [String] = []
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []   // an unreadable folder fails at the first write, with its reason
        for name in names where name.hasPrefix(temporaryPrefix) {
            let path = folder.joiningPath(name)
            let fd = FileSystem.retrying { Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) }
            guard fd >= 0 else { continue }   // gone meanwhile, or not ours to delete: it is never read as a WARC
            defer { Glibc.close(fd) }
            // Locked: another run is beginning it now.
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { unlink(path) }   // a leftover that stays is only a hidden, unused file
        }
        var highest = names.compactMap(number(of:)).map(\.number).max() ?? -1
        for (number, isOpen) in names.compactMap(number(of:)) where isOpen {
            let path = openPath(number)
            let fd = FileSystem.retrying { Glibc.open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW) }
            guard fd >= 0 else { throw WARCError.system("cannot repair \(path), left open by an earlier run", errno: errno) }
            defer { Glibc.close(fd) }
            // Another monsoon writing it now holds its lock: it is that run's to close.
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { continue }
            var info = stat()
            guard fstat(fd, &info) == 0 else { throw WARCError.system("cannot repair \(path), left open by an earlier run", errno: errno) }
            let size = Int(info.st_size)
            if size == 0 {
                // Nothing in it to lose: a run stopped before its first record reached the disk.
                guard unlink(path) == 0 else { throw WARCError.system("cannot delete \(path), left empty by an earlier run", errno: errno) }
                done.append("\(path) was left empty by a run that was stopped: deleted")
                continue
            }
            let (end, members, first) = try GzipMemberScan.completeEnd(of: fd, path: path, firstBytes: 4096)
            // Only a file Monsoon began is cut and named: its first record is the warcinfo that names it.
            guard members > 0, Self.isOurs(first, name: self.path(number).fileName) else {
                done.append("\(path) was not begun by Monsoon (its first record is not Monsoon's warcinfo naming it): left as it is; "
                            + "move it away if it is not wanted there")
                continue
            }
            guard ftruncate(fd, off_t(end)) == 0, fsync(fd) == 0 else { throw WARCError.system("cannot repair \(path)", errno: errno) }
            var final = self.path(number)
            var renamed = ""
            while monsoon_rename_noreplace(path, final) != 0 {
                guard errno == EEXIST else { throw WARCError.system("cannot rename \(path) to \(final)", errno: errno) }
                // A finished file has its name: never replaced; this one takes the next free number.
                highest += 1
                final = self.path(highest)
                renamed = " (\(self.path(number).fileName) was taken, so it is named \(final.fileName))"
            }
            let cut = size > end ? "cut to its last whole record (\(members) in all; \(size - end) bytes of an unfinished one removed)"
                                 : "every record in it whole (\(members))"
            done.append("\(final) was left open by a run that was stopped: \(cut)\(renamed)")
        }
        if !done.isEmpty {
            do { try FileSystem.syncDirectory(folder) } catch { throw WARCError(.fileSystem, "cannot flush the WARC folder \(folder): \(error.message)") }
        }
        return done
    }
}
