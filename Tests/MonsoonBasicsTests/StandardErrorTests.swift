import Foundation
import MonsoonBasics
import Testing

/// `StandardError.write` puts each text on file descriptor 2 in one piece.
@Suite struct StandardErrorTests {
    @Test func linesFromThreadsWritingAtOnceArriveWhole() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let captured = open(folder.file("stderr"), O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        try #require(captured >= 0)
        let saved = dup(2)
        try #require(saved >= 0)
        // Standard error is the process's: for these few lines it goes to the file, and whatever
        // other tests write meanwhile is passed on below, not lost.
        dup2(captured, 2)
        let threads = try (0..<4).map { thread in
            try #require(NamedThread.start(named: "writer\(thread)") {
                for line in 0..<100 { StandardError.write("writer \(thread) line \(line) é日本 " + String(repeating: "x", count: 500) + "\n") }
            })
        }
        for thread in threads { pthread_join(thread, nil) }
        dup2(saved, 2)
        close(saved)
        close(captured)

        let lines = try String(contentsOfFile: folder.file("stderr"), encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        let ours = lines.filter { $0.hasPrefix("writer ") }
        StandardError.write(lines.filter { !$0.hasPrefix("writer ") && !$0.isEmpty }.map { $0 + "\n" }.joined())
        #expect(ours.count == 400)
        #expect(Set(ours).count == 400)
        #expect(ours.allSatisfy { $0.hasSuffix(" é日本 " + String(repeating: "x", count: 500)) }, "none cut into by another")
    }
}
