import Foundation
import MonsoonBasics
import Testing

/// `Locked` lets threads take turns with a value, or with nothing but the right to run alone.
@Suite struct LockedTests {
    /// Counts without a lock of its own: only `Locked<Void>` keeps its increments apart.
    private final class Counter: @unchecked Sendable {
        var value = 0
    }

    @Test func aPlainLockLetsOneThreadInAtATime() throws {
        let lock = Locked()
        let counter = Counter()
        let threads = try (0..<4).map { index in
            try #require(NamedThread.start(named: "counter\(index)") {
                for _ in 0..<10_000 { lock.withLock { counter.value += 1 } }
            })
        }
        for thread in threads { #expect(pthread_join(thread, nil) == 0) }
        #expect(lock.withLock { counter.value } == 40_000)
    }

    @Test func withLockGivesBackTheBodysResultAndItsError() {
        struct Refused: Error {}
        let lock = Locked()
        #expect(lock.withLock { "inside" } == "inside")
        #expect(throws: Refused.self) { try lock.withLock { throw Refused() } }
        #expect(lock.withLock { true }, "not left locked by the throw")

        let names = Locked(["a"])
        names.withLock { $0.append("b") }
        #expect(names.withLock { $0 } == ["a", "b"])
    }
}
