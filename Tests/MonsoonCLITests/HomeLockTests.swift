import Foundation
import Testing
@testable import MonsoonCLI

/// `monsoon.lock` says who holds it, whatever a holder before wrote there.
@Suite struct HomeLockTests {
    @Test func theLockFileSaysExactlyWhoHoldsIt() throws {
        let folder = Folder()
        defer { folder.remove() }
        let path = folder.file("monsoon.lock")
        // A longer line, left by an earlier holder, and a word after it.
        try "4194304 download\nstale\n".write(toFile: path, atomically: false, encoding: .utf8)
        let lock = try #require(try HomeLock(path: path, role: .get))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "\(getpid()) get\n")
        let holder = try #require(HomeLock.holder(at: path))
        #expect(holder.pid == getpid() && holder.role == .get && holder.isAlive)
        #expect(try HomeLock(path: path, role: .brief) == nil, "held: a second taker is refused")
        withExtendedLifetime(lock) {}
    }
}
