import Foundation
import Testing
@testable import MonsoonEngine

/// When an error status holds a host, and when it delays one download only.
@Suite struct HostHoldsTests {
    let now = Date(timeIntervalSince1970: 1_700_000_000)
    let cdn = HostPair(first: 0, last: 1)

    @Test func oneDownloadsServiceUnavailableDelaysOnlyIt() {
        var holds = HostHolds()
        #expect(holds.record(status: 503, download: "a", hosts: cdn, retryAt: now.addingTimeInterval(5), now: now) == nil)
        #expect(!holds.isHeld(cdn, now: now))
        // The same download again is still one download.
        #expect(holds.record(status: 503, download: "a", hosts: cdn, retryAt: now.addingTimeInterval(9), now: now.addingTimeInterval(6)) == nil)
    }

    @Test func serviceUnavailableFromTwoDownloadsInTheWindowHoldsBothHosts() throws {
        var holds = HostHolds()
        _ = holds.record(status: 503, download: "a", hosts: cdn, retryAt: now.addingTimeInterval(5), now: now)
        let recorded = holds.record(status: 503, download: "b", hosts: HostPair(first: 2, last: 1), retryAt: now.addingTimeInterval(3), now: now.addingTimeInterval(1))
        let hold = try #require(recorded)
        #expect(hold.until == now.addingTimeInterval(5) && hold.reason == .serviceUnavailable(downloads: 2))
        #expect(holds.isHeld(HostPair(first: 1), now: now.addingTimeInterval(4)), "the host that answered")
        #expect(holds.isHeld(HostPair(first: 2), now: now.addingTimeInterval(4)), "and the second one's own")
        #expect(!holds.isHeld(cdn, now: now.addingTimeInterval(5.5)))
    }

    /// Without `Retry-After`, a 503 names no window: however many there are, each delays only its
    /// own download (objects failing here and there on a CDN that is otherwise well).
    @Test func serviceUnavailableWithoutAWindowNeverHolds() {
        var holds = HostHolds()
        for download in ["a", "b", "c"] {
            #expect(holds.record(status: 503, download: DownloadID(download), hosts: cdn, retryAt: now.addingTimeInterval(2), namesWindow: false, now: now) == nil)
        }
        #expect(!holds.isHeld(cdn, now: now))
    }

    @Test func aServiceUnavailableAfterTheWindowStartsAfresh() {
        var holds = HostHolds()
        _ = holds.record(status: 503, download: "a", hosts: cdn, retryAt: now.addingTimeInterval(2), now: now)
        #expect(holds.record(status: 503, download: "b", hosts: cdn, retryAt: now.addingTimeInterval(5), now: now.addingTimeInterval(3)) == nil)
    }

    @Test func tooManyRequestsHoldsAtOnce() throws {
        var holds = HostHolds()
        let recorded = holds.record(status: 429, download: "a", hosts: cdn, retryAt: now.addingTimeInterval(7), now: now)
        let hold = try #require(recorded)
        #expect(hold.until == now.addingTimeInterval(7) && hold.reason == .tooManyRequests)
        #expect(holds.isHeld(HostPair(first: 0), now: now) && holds.isHeld(HostPair(first: 1), now: now))
        holds.lift(cdn)
        #expect(!holds.isHeld(cdn, now: now))
    }

    @Test func otherStatusesHoldNothing() {
        var holds = HostHolds()
        #expect(holds.record(status: 500, download: "a", hosts: cdn, retryAt: now.addingTimeInterval(5), now: now) == nil)
        #expect(holds.record(status: 500, download: "b", hosts: cdn, retryAt: now.addingTimeInterval(5), now: now) == nil)
    }

    @Test func theRetryingLineSaysWhy() {
        let text = HostHolds.text(host: "cdn.example.org", until: Date(timeIntervalSince1970: 1_700_000_003), reason: .serviceUnavailable(downloads: 2))
        #expect(text == "the host cdn.example.org is held until 22:13:23 UTC (503s from 2 downloads)")
    }
}
