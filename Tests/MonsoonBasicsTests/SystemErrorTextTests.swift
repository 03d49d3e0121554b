import Foundation
import MonsoonBasics
import Testing

/// `SystemErrorText` says what the system said, not "The operation could not be completed".
@Suite struct SystemErrorTextTests {
    @Test func aFileManagerErrorIsTheSystemsReason() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try folder.write("file")

        let missing = #expect(throws: CocoaError.self) { try FileManager.default.contentsOfDirectory(atPath: folder.file("missing")) }
        #expect(missing.map { SystemErrorText.reason($0) } == "no such file or directory")
        let notFolder = #expect(throws: CocoaError.self) { try FileManager.default.contentsOfDirectory(atPath: folder.file("file")) }
        #expect(notFolder.map { SystemErrorText.reason($0) } == "not a directory")
    }

    @Test func aPOSIXErrorIsStrerrorsTextStartingLowerCase() {
        #expect(SystemErrorText.reason(POSIXError(.EACCES)) == "permission denied")
        #expect(SystemErrorText.reason(POSIXError(.ENOSPC)) == "no space left on device")
        #expect(String(cString: strerror(EACCES)) == "Permission denied", "the C library's own words")
    }

    @Test func anErrorWithoutASystemReasonSaysWhichOneItWas() {
        struct Other: Error {}
        #expect(SystemErrorText.reason(CocoaError(.fileWriteOutOfSpace)) == "the file system refused it (error 640)")
        #expect(SystemErrorText.reason(Other()) == "the file system refused it (error -1)")
    }
}
