import Foundation
import Testing
@testable import MonsoonCluster
import MonsoonEngine

/// Putting a finished file in place, tried again after a commit that failed: the database went
/// away after the file took its name, and the worker tries once it is back.
@Suite struct FilePublisherTests {
    private func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("monsoon-publish-\(UUID().uuidString)").path(percentEncoded: false)
        try FileManager.default.createDirectory(atPath: path + "/.monsoon-work", withIntermediateDirectories: true)
        return path
    }

    @Test func aSecondTryFindsItsFileInPlace() throws {
        let root = try folder()
        defer { try? FileManager.default.removeItem(atPath: root) }   // a leftover folder in /tmp harms nothing
        let work = root + "/.monsoon-work/j1-t1.mp3"
        let bytes = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try bytes.write(to: URL(filePath: work))
        let sha256 = SHA256.hex(bytes)
        #expect(try FilePublisher.publish(work, to: "Feed/e1.mp3", under: root, sha256: sha256) { false } == .published)
        #expect(!FileManager.default.fileExists(atPath: work))
        // The commit failed: the same entry again, its work file gone.
        #expect(try FilePublisher.publish(work, to: "Feed/e1.mp3", under: root, sha256: sha256) { false } == .alreadyThere)
        #expect(FileManager.default.contents(atPath: root + "/Feed/e1.mp3") == bytes)
    }

    @Test func otherBytesInPlaceAreNotTakenForItsFile() throws {
        let root = try folder()
        defer { try? FileManager.default.removeItem(atPath: root) }   // a leftover folder in /tmp harms nothing
        try FileManager.default.createDirectory(atPath: root + "/Feed", withIntermediateDirectories: true)
        try Data("another job's bytes".utf8).write(to: URL(filePath: root + "/Feed/e1.mp3"))
        #expect(throws: FilePublisher.Failure.self) {
            try FilePublisher.publish(root + "/.monsoon-work/gone.mp3", to: "Feed/e1.mp3", under: root, sha256: SHA256.hex(Data("these".utf8))) { false }
        }
        #expect(FileManager.default.contents(atPath: root + "/Feed/e1.mp3") == Data("another job's bytes".utf8))
    }
}
