import Foundation
import Testing
@testable import MonsoonEngine

/// The loop's outbox: progress is reported at most every `progressInterval` of the engine's
/// clock, events are handed out once, and the idle waiters are each resumed once.
@Suite struct EventOutboxTests {
    private let now = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func progressIsThrottledByTheClock() {
        var outbox = EventOutbox()
        let first = outbox.progressDue(now: now, force: false)
        let tooSoon = outbox.progressDue(now: now + EventOutbox.progressInterval / 2, force: false)
        #expect(first && !tooSoon)
        #expect(outbox.nextProgress == now + EventOutbox.progressInterval, "the poll wakes for the next report")
        let forced = outbox.progressDue(now: now + EventOutbox.progressInterval / 2, force: true)
        #expect(forced, "a forced report is never held back")
        let early = outbox.progressDue(now: now + EventOutbox.progressInterval, force: false)
        let due = outbox.progressDue(now: now + EventOutbox.progressInterval * 1.5, force: false)
        #expect(!early && due, "the interval counts from the last report, forced or not")
    }

    @Test func eventsAreHandedOutOnceInOrder() {
        var outbox = EventOutbox()
        let none = outbox.take()
        #expect(none == nil)
        outbox.append(.progress(id: "a", bytes: 1, total: 10))
        outbox.append(.progress(id: "b", bytes: 2, total: nil))
        let taken = outbox.take()?.map { event -> String in
            guard case .progress(let id, _, _) = event else { return "other" }
            return id.rawValue
        }
        #expect(taken == ["a", "b"])
        let again = outbox.take()
        #expect(again == nil && outbox.pending.isEmpty)
    }

    @Test func idleWaitersAreTakenOnceAndResumed() async {
        var outbox = EventOutbox()
        let (registered, register) = AsyncStream.makeStream(of: CheckedContinuation<Void, Never>.self)
        let waiters = (0..<2).map { _ in
            Task { await withCheckedContinuation { register.yield($0) } }
        }
        var iterator = registered.makeAsyncIterator()
        for _ in waiters {
            let waiter = await iterator.next()!
            outbox.waitForIdle(waiter)
        }
        let taken = outbox.takeIdleWaiters()
        #expect(taken.count == 2 && outbox.idleWaiters.isEmpty)
        let again = outbox.takeIdleWaiters()
        #expect(again.isEmpty, "each waiter is resumed once")
        for waiter in taken { waiter.resume() }
        for waiter in waiters { await waiter.value }
    }
}
