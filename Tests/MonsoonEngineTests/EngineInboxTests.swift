import Foundation
import Testing
@testable import MonsoonEngine

/// The inbox wakes the transfer thread for every job: on a semaphore while curl loads, through the
/// multi handle after.
@Suite struct EngineInboxTests {
    /// A job posted before the handle is attached signalled the semaphore only: attaching wakes the
    /// handle for it, so the loop's first poll takes it at once instead of sleeping until its timeout.
    @Test func aJobPostedWhileCurlLoadsWakesTheFirstPoll() {
        let inbox = EngineInbox()
        #expect(inbox.post { _ in })
        inbox.waitForJobs()   // the semaphore's signal for it
        let multi = MultiHandle()
        defer { multi.cleanup() }
        inbox.attach(multi)
        let start = Date()
        multi.poll(milliseconds: 60_000)
        #expect(Date().timeIntervalSince(start) < 30, "woken, not timed out")
        #expect(inbox.takeJobs().count == 1)
    }

    /// Before the handle, each first job since the last take signals the semaphore; a wait may
    /// then find the jobs taken already, and finds the next one's signal after.
    @Test func jobsBeforeTheHandleSignalTheSemaphore() {
        let inbox = EngineInbox()
        inbox.post { _ in }
        inbox.post { _ in }   // not the first since the last take: no second signal
        inbox.waitForJobs()
        #expect(inbox.takeJobs().count == 2)
        inbox.post { _ in }
        inbox.waitForJobs()
        #expect(inbox.takeJobs().count == 1)
    }
}
