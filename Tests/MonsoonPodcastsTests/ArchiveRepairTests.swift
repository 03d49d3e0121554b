import Foundation
import Testing
@testable import MonsoonPodcasts

/// What `verify --repair` takes on: only the bytes the manifest promised.
@Suite struct ArchiveRepairTests {
    static func entry(_ file: String, size: Int = 3, sha256: String = "abc") -> Manifest.Entry {
        Manifest.Entry(kind: "episode", file: file, size: size, sha256: sha256, guid: "g-\(file)", sourceURL: "https://example.com/\(file)")
    }

    @Test func onlyTheManifestsBytesReplaceAFile() {
        let entry = Self.entry("a.mp3")
        #expect(ArchiveRepair.judge(size: 3, sha256: "abc", for: entry) == .matches)
        #expect(ArchiveRepair.judge(size: 3, sha256: "abd", for: entry) == .differs(size: 3, sha256: "abd"))
        #expect(ArchiveRepair.judge(size: 4, sha256: "abc", for: entry) == .differs(size: 4, sha256: "abc"))
    }

    @Test func theCopyWaitsHiddenBesideTheFileAsAPart() {
        #expect(ArchiveRepair.temporaryPath(for: "/A/Show/2024/Talk 1.mp3") == "/A/Show/2024/.Talk 1.mp3.monsoon-repair.part")
    }

    @Test func eachBrokenFileGetsItsOwnManifestsEntryAndSource() throws {
        let root = FileManager.default.temporaryDirectory.path(percentEncoded: false) + "/monsoon-repair-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }   // a temporary folder: nothing to keep
        try FileManager.default.createDirectory(atPath: root + "/Show/Nested", withIntermediateDirectories: true)
        try Manifest(podcast: "Show", feedURL: "https://example.com/feed", generated: "", files: [Self.entry("a.mp3"), Self.entry("b.mp3")]).write(in: root + "/Show")
        try Manifest(podcast: "Nested", feedURL: "https://example.com/n", generated: "", files: [Self.entry("c.mp3")]).write(in: root + "/Show/Nested")
        var report = ArchiveVerifier.Report()
        report.folders = [root + "/Show", root + "/Show/Nested"]
        report.missing = [root + "/Show/a.mp3", root + "/Show/Nested/c.mp3"]
        report.changed = [root + "/Show/b.mp3"]
        let targets = try ArchiveRepair.targets(of: report) { entry, _, feedURL in
            entry.file == "b.mp3" ? .failure(EpisodeFileError("no URL")) : .success(URL(string: feedURL + "/" + entry.file)!)
        }
        #expect(targets.map(\.path) == [root + "/Show/a.mp3", root + "/Show/b.mp3", root + "/Show/Nested/c.mp3"])
        #expect(targets.map(\.missing) == [true, false, true])
        #expect(targets.map { $0.url?.absoluteString } == ["https://example.com/feed/a.mp3", nil, "https://example.com/n/c.mp3"], "the nested folder's own manifest")
        #expect(targets[1].reason == "no URL")
    }
}
