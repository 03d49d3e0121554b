import Foundation
import MonsoonBasics
import Testing

/// `NamedThread` starts POSIX threads under names Linux shows (`top -H`, crash reports).
@Suite struct NamedThreadTests {
    /// The calling thread's name as Linux reports it.
    private static func ownName() -> String {
        do {
            let comm = try String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
            return String(comm.dropLast())   // the kernel ends it with a line feed
        } catch {
            return "unreadable: \(error)"
        }
    }

    /// The calling thread's stack size, as glibc's `pthread_getattr_np` says (a GNU call Swift's
    /// Glibc module leaves out, so looked up by name).
    private static func ownStackSize() -> Int {
        typealias GetAttributes = @convention(c) (pthread_t, UnsafeMutablePointer<pthread_attr_t>) -> Int32
        guard let symbol = dlsym(nil, "pthread_getattr_np") else { return -1 }
        var attributes = pthread_attr_t()
        guard unsafeBitCast(symbol, to: GetAttributes.self)(pthread_self(), &attributes) == 0 else { return -1 }
        defer { pthread_attr_destroy(&attributes) }
        var size = 0
        pthread_attr_getstacksize(&attributes, &size)
        return size
    }

    /// The name a thread started as `name` reports from inside, joined before the answer.
    private static func nameSeen(starting name: String) throws -> String? {
        let seen = Locked<String?>(nil)
        let thread = try #require(NamedThread.start(named: name) { seen.withLock { $0 = ownName() } })
        #expect(pthread_join(thread, nil) == 0)
        return seen.withLock { $0 }
    }

    @Test func aStartedThreadRunsUnderItsNameAndIsJoinedWhenItsBodyIsDone() throws {
        let release = DispatchSemaphore(value: 0)
        let seen = Locked<String?>(nil)
        let thread = try #require(NamedThread.start(named: "monsoon.engine") {
            release.wait()
            seen.withLock { $0 = Self.ownName() }
        })
        #expect(seen.withLock { $0 } == nil, "the body waits on its own thread")

        release.signal()
        #expect(pthread_join(thread, nil) == 0)

        #expect(seen.withLock { $0 } == "monsoon.engine")
    }

    @Test func aLongNameIsCutToLinuxs15Bytes() throws {
        #expect(try Self.nameSeen(starting: "monsoon.persistence.gateway") == "monsoon.persist")
        #expect(try Self.nameSeen(starting: "srv65535-123456") == "srv65535-123456", "15 bytes are kept whole")
        #expect(try Self.nameSeen(starting: "日本語のスレッド") == "日本語のス", "15 bytes, five characters of three")
    }

    @Test func aNameIsCutBetweenCharacters() throws {
        // Sixteen bytes whose fifteenth is half an "é": the name is the seven whole ones. (Cut
        // inside, the half became U+FFFD, three bytes, and Linux refused the 17-byte name: the
        // thread kept its creator's.)
        #expect(try Self.nameSeen(starting: "éééééééé") == "ééééééé")
        #expect(try Self.nameSeen(starting: "monsoon.engine👍") == "monsoon.engine")
    }

    @Test func aDetachedThreadRunsUnderItsName() {
        let done = DispatchSemaphore(value: 0)
        let seen = Locked<String?>(nil)
        NamedThread.detach(named: "monsoon.after") {
            seen.withLock { $0 = Self.ownName() }
            done.signal()
        }
        // The limit only keeps a broken thread from hanging the run; the body takes microseconds.
        #expect(done.wait(timeout: .now() + 60) == .success)
        #expect(seen.withLock { $0 } == "monsoon.after")
    }

    @Test func aThreadHasTheStackItAskedFor() throws {
        // glibc may hand a thread a cached stack up to four times the size asked for.
        let sizes = Locked<[Int]>([])
        let small = try #require(NamedThread.start(named: "small", stackSize: 1 << 20) { sizes.withLock { $0.append(Self.ownStackSize()) } })
        #expect(pthread_join(small, nil) == 0)
        let usual = try #require(NamedThread.start(named: "usual") { sizes.withLock { $0.append(Self.ownStackSize()) } })
        #expect(pthread_join(usual, nil) == 0)

        var defaults = pthread_attr_t()
        pthread_attr_init(&defaults)
        defer { pthread_attr_destroy(&defaults) }
        var defaultSize = 0
        pthread_attr_getstacksize(&defaults, &defaultSize)
        let recorded = sizes.withLock { $0 }
        try #require(recorded.count == 2)
        #expect((1 << 20 ... 4 << 20).contains(recorded[0]))
        #expect(recorded[1] >= defaultSize)
    }
}
