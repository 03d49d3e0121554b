import Foundation
import MonsoonBasics
import Testing

/// `FileTree.walk` lists what is under a real folder, depth first, and never goes through a link.
@Suite struct FileTreeTests {
    /// A tree with files, nested and empty folders, a hidden file, a FIFO, a link to a file and a
    /// link to a folder outside it.
    private static func makeTree() throws -> TemporaryFolder {
        let folder = try TemporaryFolder()
        try folder.write("root/a.txt", "a")
        try folder.write("root/.hidden")
        try folder.write("root/sub/b.txt", "b")
        try folder.write("root/sub/deeper/c.txt", "c")
        try folder.write("root/skip/inner.txt")
        try folder.write("root/skip/further/more.txt")
        try folder.makeFolder("root/empty")
        try folder.write("outside/secret.txt", "s")
        try folder.link("root/linked-folder", to: "../outside")
        try folder.link("root/linked-file", to: "a.txt")
        #expect(mkfifo(folder.file("root/fifo"), 0o600) == 0)
        return folder
    }

    private static func walk(_ root: String, skipping skipped: Set<String> = []) -> (found: Bool, visits: [(path: String, kind: FileTree.Kind)]) {
        var visits: [(path: String, kind: FileTree.Kind)] = []
        let found = FileTree.walk(root) { path, kind in
            visits.append((path, kind))
            return !skipped.contains(path)
        }
        return (found, visits)
    }

    @Test func everyPathIsVisitedOnceWithItsKindAndLinksAreNotEntered() throws {
        let folder = try Self.makeTree()
        defer { folder.remove() }

        let (found, visits) = Self.walk(folder.file("root"))

        #expect(found)
        let kinds = Dictionary(visits.map { ($0.path, "\($0.kind)") }, uniquingKeysWith: { first, _ in first })
        #expect(kinds == [
            "a.txt": "file", ".hidden": "file", "fifo": "other", "empty": "folder",
            "sub": "folder", "sub/b.txt": "file", "sub/deeper": "folder", "sub/deeper/c.txt": "file",
            "skip": "folder", "skip/inner.txt": "file", "skip/further": "folder", "skip/further/more.txt": "file",
            "linked-folder": "link", "linked-file": "link",
        ])
        #expect(visits.count == kinds.count, "each once")
        #expect(Set(visits.map(\.path)) == Set(try FileManager.default.subpathsOfDirectory(atPath: folder.file("root"))), "as Foundation's enumerator")
    }

    @Test func aFoldersContentsFollowItBeforeAnythingElse() throws {
        let folder = try Self.makeTree()
        defer { folder.remove() }

        let paths = Self.walk(folder.file("root")).visits.map(\.path)

        for (index, path) in paths.enumerated() {
            let inside = paths.indices.filter { paths[$0].hasPrefix(path + "/") }
            #expect(inside == Array(index + 1 ..< index + 1 + inside.count), "what is in \(path) comes right after it")
        }
    }

    @Test func aFolderTheVisitorSaysNoToIsNotEntered() throws {
        let folder = try Self.makeTree()
        defer { folder.remove() }

        let paths = Self.walk(folder.file("root"), skipping: ["skip", "sub/deeper"]).visits.map(\.path)

        #expect(paths.contains("skip") && paths.contains("sub/deeper"), "visited, not entered")
        #expect(!paths.contains { $0.hasPrefix("skip/") || $0.hasPrefix("sub/deeper/") })
        #expect(paths.contains("sub/b.txt") && paths.contains("a.txt"), "the rest still walked")
    }

    @Test func aRootThatIsNotAFolderIsNotWalked() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try folder.write("file")
        try folder.makeFolder("empty")

        for root in [folder.file("missing"), folder.file("file"), ""] {
            let (found, visits) = Self.walk(root)
            #expect(!found, "\(root)")
            #expect(visits.isEmpty, "\(root)")
        }
        let (found, visits) = Self.walk(folder.file("empty"))
        #expect(found && visits.isEmpty, "an empty folder is walked")
    }

    @Test func aThrowingVisitorStopsTheWalk() throws {
        struct Stop: Error {}
        let folder = try Self.makeTree()
        defer { folder.remove() }

        var visited = 0
        #expect(throws: Stop.self) {
            try FileTree.walk(folder.file("root")) { _, _ in
                visited += 1
                if visited == 3 { throw Stop() }
                return true
            }
        }
        #expect(visited == 3)
    }

    @Test(.disabled(if: geteuid() == 0, "root opens every folder"))
    func aFolderThatCannotBeOpenedIsPassedOver() throws {
        let folder = try Self.makeTree()
        try folder.write("root/locked/hidden.txt")
        #expect(chmod(folder.file("root/locked"), 0) == 0)
        defer {
            _ = chmod(folder.file("root/locked"), 0o700)   // for the removal: a failure shows as a folder left behind
            folder.remove()
        }

        let (found, visits) = Self.walk(folder.file("root"))

        #expect(found)
        #expect(visits.contains { $0.path == "locked" && $0.kind == .folder })
        #expect(!visits.contains { $0.path.hasPrefix("locked/") })
        #expect(visits.contains { $0.path == "sub/deeper/c.txt" }, "the rest still walked")
    }
}
