import Foundation
import Testing
import MonsoonStore
@testable import MonsoonPodcasts

/// The podcast layer's errors are structs with open codes: a caller decides on the code, and
/// the message (what the CLI prints) is unchanged.
@Suite struct LibraryErrorTests {
    @Test func aLookupThatFindsNothingOrTooMuchSaysWhichByItsCode() throws {
        let fixture = try LibraryFixture()
        let missing = #expect(throws: LibraryError.self) { try fixture.library.findPodcast("nothing") }
        #expect(missing?.code == .notFound)
        #expect(missing?.message == "no podcast has id or title 'nothing'; list them with 'monsoon podcasts'")
        #expect(LibraryError(.ambiguous, "two match").code == .ambiguous)
        #expect(LibraryError(.ambiguous, "two match").description == "two match")
    }

    @Test func aFolderWithoutAManifestIsNotAnArchive() throws {
        let folder = FileManager.default.temporaryDirectory.path(percentEncoded: false) + "/monsoon-errors-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let error = #expect(throws: EpisodeFileError.self) { _ = try ArchiveVerifier.verify(folder) }
        #expect(error?.code == .notAnArchive)
        #expect(error?.message.hasPrefix("no \(Manifest.fileName) in \(folder) or its folders") == true)
        #expect(EpisodeFileError("cannot read x").code == .fileSystem)
    }

    @Test func feedCodesAreAnOpenSet() {
        #expect(FeedError.Code(rawValue: "malformed") == .malformed)
        #expect(FeedError.Code(rawValue: "fromALaterMonsoon").rawValue == "fromALaterMonsoon")
    }
}
