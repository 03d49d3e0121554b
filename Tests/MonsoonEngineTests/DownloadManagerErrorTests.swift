import Foundation
import Testing
import MonsoonEngine

/// `DownloadManagerError` is a struct with an open set of codes: the same messages the enum
/// it replaced printed (the CLI shows them), a code to decide on, and room for codes to come.
@Suite struct DownloadManagerErrorTests {
    @Test func eachRefusalKeepsItsMessageAndNamesItsCodeAndDownload() {
        let cases: [(DownloadManagerError, DownloadManagerError.Code, String, DownloadID?)] = [
            (.duplicate("a"), .duplicate, "a download with id a already exists", "a"),
            (.notFound("b"), .notFound, "no download has id b", "b"),
            (.invalidRequest("c", "only http and https URLs can be downloaded"), .invalidRequest,
             "download c cannot start: only http and https URLs can be downloaded", "c"),
            (.shutDown, .shutDown, "the download manager has been shut down", nil),
            (.storage("could not save the change: the disk is full"), .storage, "could not save the change: the disk is full", nil),
        ]
        for (error, code, message, download) in cases {
            #expect(error.code == code)
            #expect(error.description == message)
            #expect(error.download == download)
        }
    }

    @Test func aCodeFromANewerMonsoonIsKeptAndFallsToTheDefault() {
        let later = DownloadManagerError(DownloadManagerError.Code(rawValue: "quotaExceeded"), "over quota")
        #expect(later.code.rawValue == "quotaExceeded")
        #expect(later.code != .storage)
        let decision: String
        switch later.code {
        case .notFound, .shutDown: decision = "gone"
        default: decision = "report"
        }
        #expect(decision == "report")
    }

    @Test func aRealRefusalCarriesItsCode() async throws {
        let manager = DownloadManager()
        let missing = await #expect(throws: DownloadManagerError.self) { try await manager.pause("nope") }
        #expect(missing?.code == .notFound)
        #expect(missing?.download == "nope")
        await manager.shutdown()
        let late = await #expect(throws: DownloadManagerError.self) { try await manager.pause("nope") }
        #expect(late?.code == .shutDown)
    }
}
