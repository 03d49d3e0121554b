import Foundation
import MonsoonStore
import MonsoonTestServer
import Testing
@testable import MonsoonEngine

/// A body that comes while its part is being prepared waits in memory (`Transfer.earlyLimit`),
/// and curl holds the rest; both are written once the part is open.
@Suite struct EarlyBodyTests {
    /// One at a time: the first file's body comes whole while the disk worker waits for the
    /// database, so its attempt ends and the next download is asked for before its part exists
    /// (its row read ahead, its start planned without the worker).
    @Test func aSmallFileLetsTheNextOneStartBeforeItsPartIsOpen() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let gate = Gate()
        defer { gate.open(); folder.remove(); server.stop() }
        let small = Body.pattern(size: 100_000, seed: 31)
        let next = Body.pattern(size: 50_000, seed: 13)
        server.setRoute("/small.bin", Route(body: small, gate: gate))
        server.setRoute("/next.bin", Route(body: next))
        let database = folder.file("queue.sqlite")
        // Time stands still for the engine: the disk's last measurement stays fresh, so the next
        // start is planned without the (held) worker however long the test's turns take.
        var configuration = fastConfiguration(concurrency: 1)
        configuration.clock = ManualClock().clock
        let manager = try DownloadManager(configuration: configuration, databasePath: database, watchesOtherProcesses: false)
        // Into a folder, named by the response: no file yet, so no part to look for before a start.
        _ = try await manager.enqueue(contentsOf: [DownloadRequest(id: "s", url: server.url("/small.bin"), destination: .directory(folder.path)),
                                                   DownloadRequest(id: "n", url: server.url("/next.bin"), destination: .directory(folder.path))])
        // Asked for: its part is prepared when its head comes, while this holds the lock.
        try await eventually("the first request") { server.requests(for: "/small.bin").count == 1 }
        let holder = try Database(path: database)
        try holder.execute("BEGIN IMMEDIATE")
        gate.open()
        try await eventually("the next download asked for while the lock is held") { server.requests(for: "/next.bin").count == 1 }
        #expect(!PartFile.exists(folder.file("small.bin.part")), "the first file's part still waits for the database")
        try holder.execute("COMMIT")

        #expect(try await waitFor(manager, "s", .completed).bytes == small.count)
        #expect(sha256(ofFile: folder.file("small.bin")) == small.sha256Hex())
        _ = try await waitFor(manager, "n", .completed)
        #expect(sha256(ofFile: folder.file("next.bin")) == next.sha256Hex())
        #expect(server.requests(for: "/small.bin").count == 1, "one attempt: the body was kept, not asked for again")
        #expect(await manager.persistenceError() == nil)
        await manager.shutdown()
    }

    /// Past the buffer's limit curl holds the rest, paused, and hands it over once the part is open.
    @Test func aLargerBodyIsHeldByCurlPastTheBuffer() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        let gate = Gate()
        defer { gate.open(); folder.remove(); server.stop() }
        let large = Body.pattern(size: 1_500_000, seed: 17)
        server.setRoute("/large.bin", Route(body: large, gate: gate))
        let database = folder.file("queue.sqlite")
        let manager = try DownloadManager(configuration: fastConfiguration(), databasePath: database, watchesOtherProcesses: false)
        _ = try await manager.enqueue(request("l", server.url("/large.bin"), to: folder.file("large.bin")))
        try await eventually("the request") { server.requests(for: "/large.bin").count == 1 }
        let holder = try Database(path: database)
        try holder.execute("BEGIN IMMEDIATE")
        gate.open()   // the head comes now: its part waits for the lock
        // Twice the buffer's worth sent: more than it holds came, and curl holds the rest.
        try await eventually("the body past the buffer") { server.bodyBytesSent >= 2 * Transfer.earlyLimit }
        #expect(!PartFile.exists(folder.file("large.bin.part")))
        try holder.execute("COMMIT")
        _ = try await waitFor(manager, "l", .completed)
        #expect(sha256(ofFile: folder.file("large.bin")) == large.sha256Hex())
        #expect(server.requests(for: "/large.bin").count == 1)
        #expect(await manager.persistenceError() == nil)
        await manager.shutdown()
    }

    /// Attempts that ended with their parts still to be prepared give their slots back, up to as
    /// many as there are slots: a stalled disk worker stops new starts instead of piling up bodies.
    /// (Bodies of no announced size: they need their parts from the start, never written whole;
    /// whole files waiting are bounded by the buffers' budget, `WholeFileTests`.)
    @Test func aStalledDiskWorkerHoldsBackNewStarts() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let bodies = (0..<20).map { Body.pattern(size: 30_000, seed: UInt64($0 + 3)) }
        // The first two answers wait until the lock is taken.
        let gate = Gate()
        let settled = Gate()   // a flag: the holder lets go once it opens
        defer { gate.open(); settled.open() }
        for (index, body) in bodies.enumerated() {
            server.setRoute("/f\(index).bin", Route(body: body, sendsContentLength: false, gate: index < 2 ? gate : nil))
        }
        let database = folder.file("queue.sqlite")
        // Time stands still for the engine: the disk's last measurement stays fresh, so starts are
        // planned without the (held) worker however long the test's turns take.
        var configuration = fastConfiguration(concurrency: 2)
        configuration.clock = ManualClock().clock
        let manager = try DownloadManager(configuration: configuration, databasePath: database, watchesOtherProcesses: false)
        // A thread of its own takes the lock as soon as the first request comes and counts what
        // comes while it holds it: this test's task may wait seconds for a turn when every suite
        // runs at once.
        let counts = holdDatabase(database, once: { !server.requests.isEmpty }) { _ in
            let before = server.requests.count
            gate.open()
            guard block(until: { settled.isOpen }) else { throw Timeout(description: "the starts never settled") }
            return (before: before, held: server.requests.count - before)
        }
        // Its own task: its answer may wait for the worker, which waits for the hold.
        let enqueued = Task {
            try await manager.enqueue(contentsOf: (0..<20).map { index in
                DownloadRequest(id: DownloadID("f\(index)"), url: server.url("/f\(index).bin"), destination: .directory(folder.path))
            })
        }
        // The first two, then two more once those ended waiting for their parts; then none, though
        // four more rows are in memory, read ahead (two slots' worth of ended attempts at most).
        try await eventually("four attempts ended before their parts") {
            try await manager.peek { $0.waitingForParts.attemptsEndedBeforeTheirParts } >= 4
        }
        let after = try await manager.peek { $0.waitingForParts }   // a turn later: what could start has
        #expect(after.attemptsEndedBeforeTheirParts == 4 && after.slotsTaken == 0, "\(after)")
        settled.open()
        _ = try await enqueued.value
        try await eventually("the lock held and let go") { counts.withLock { $0 != nil } }
        let (before, held) = try #require(counts.withLock { $0 }).get()
        #expect(before + held <= 4, "\(before) + \(held) downloads started while the disk worker waited")
        for index in 0..<20 {
            _ = try await waitFor(manager, DownloadID("f\(index)"), .completed)
            #expect(sha256(ofFile: folder.file("f\(index).bin")) == bodies[index].sha256Hex())
        }
        #expect(server.requests.count == 20)
        await manager.shutdown()
    }
}

/// The early bodies' budget counts each body as 64 KiB at least: it bounds how many wait, not only
/// their bytes (two thousand bodies of a kilobyte would fit 2 MiB).
@Suite struct EarlyBudgetTests {
    @Test func tinyBodiesAreChargedSixtyFourKibibytesEach() throws {
        let budget = EarlyBudget(bytes: 8 * Transfer.earlyLimit)
        var buffers: [UnsafeMutableRawBufferPointer] = []
        while let buffer = budget.take(1_000) { buffers.append(buffer) }
        #expect(buffers.count == 32)
        #expect(budget.available == 0)
        for buffer in buffers { budget.give(buffer) }
        #expect(budget.available == 8 * Transfer.earlyLimit)
        let large = try #require(budget.take(200_000))
        #expect(budget.available == 8 * Transfer.earlyLimit - 200_000, "a body past 64 KiB is charged its size")
        budget.give(large)
    }
}
