import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonEngine

/// A download's state machine as a table: every state (status × phase × what is pending, with
/// and without restarts) against every event, each with the action it answers and the state it
/// leaves, or its refusal, which changes nothing.
@Suite struct DownloadStateMachineTests {
    private typealias Machine = DownloadRecord.StateMachine
    private typealias Event = Machine.Event
    private typealias Phase = Machine.Phase

    private static let request = DownloadRequest(id: "r", url: URL(string: "http://example.com/r")!, destination: .file("/tmp/r"))
    private static let lifecycleEvents: [DownloadLifecycle.Event] = [.start, .pause, .requeue, .retryLater, .complete, .foundComplete, .fail, .holdForSpace]
    private static let events: [Event] = lifecycleEvents.map(Event.lifecycle) + [
        .bodyPreparing, .bodyReady, .attemptEnded, .placeStarted, .placeLanded, .restarted, .restartsForgotten,
        .removeRequested(deleteFile: true), .replaceRequested(request),
    ]
    private static let pendings: [Machine.Pending?] = [nil, .removal(deleteFile: false), .replacement(request)]

    /// Where each status event leads from each status (absent: refused), for a download with no transfer.
    private static let statusTable: [DownloadStatus: [DownloadLifecycle.Event: DownloadStatus]] = [
        .queued: [.start: .downloading, .pause: .paused, .retryLater: .waitingToRetry, .foundComplete: .completed,
                  .fail: .failed, .holdForSpace: .queued],
        .downloading: [.pause: .paused, .requeue: .queued, .retryLater: .waitingToRetry, .complete: .completed,
                       .fail: .failed, .holdForSpace: .queued],
        .paused: [.requeue: .queued, .foundComplete: .completed, .fail: .failed],
        .waitingToRetry: [.pause: .paused, .requeue: .queued, .foundComplete: .completed, .fail: .failed],
        .completed: [.requeue: .queued],
        .failed: [.requeue: .queued],
    ]

    /// What the machine must answer, written out case by case apart from its code: the action and
    /// the state after; nil: refused.
    private static func expected(_ state: Machine, _ event: Event) -> (Machine.Action, Machine)? {
        let (status, phase, pending, restarts) = (state.status, state.phase, state.pending, state.restarts)
        switch event {
        case .lifecycle(let lifecycle):
            guard phase == .idle, let next = statusTable[status]?[lifecycle] else { return nil }
            let newPhase: Phase = lifecycle == .start ? .running : .idle
            return (.moved(from: status, to: next), Machine(status: next, phase: newPhase, pending: pending, restarts: restarts))
        case .bodyPreparing:
            guard phase == .running else { return nil }
            return (.none, Machine(status: status, phase: .preparing, pending: pending, restarts: restarts))
        case .bodyReady:
            switch phase {
            case .preparing: return (.none, Machine(status: status, phase: .running, pending: pending, restarts: restarts))
            case .idle: return (.none, state)
            case .running, .placing: return nil
            }
        case .attemptEnded:
            guard phase == .running || phase == .preparing else { return nil }
            return (.none, Machine(status: status, phase: .idle, pending: pending, restarts: restarts))
        case .placeStarted:
            guard phase == .idle, status == .downloading else { return nil }
            return (.none, Machine(status: status, phase: .placing, pending: pending, restarts: restarts))
        case .placeLanded:
            guard phase == .placing else { return nil }
            return (.landed(pending: pending), Machine(status: status, phase: .idle))
        case .restarted:
            guard phase == .idle, status == .downloading else { return nil }
            return (.none, Machine(status: status, phase: phase, pending: pending, restarts: restarts + 1))
        case .restartsForgotten:
            guard phase == .idle else { return nil }
            return (.none, Machine(status: status, phase: phase, pending: pending, restarts: 0))
        case .removeRequested(let deleteFile):
            guard phase == .placing else { return (.proceed, state) }
            return (.deferred, Machine(status: status, phase: phase, pending: .removal(deleteFile: deleteFile), restarts: restarts))
        case .replaceRequested(let request):
            guard phase == .placing else { return (.proceed, state) }
            if case .removal = pending { return (.deferred, state) }   // a removal outweighs it
            return (.deferred, Machine(status: status, phase: phase, pending: .replacement(request), restarts: restarts))
        }
    }

    private static var states: [Machine] {
        var states: [Machine] = []
        for status in DownloadStatus.allCases {
            for phase in Phase.allCases {
                for pending in pendings {
                    for restarts in [0, 2] { states.append(Machine(status: status, phase: phase, pending: pending, restarts: restarts)) }
                }
            }
        }
        return states
    }

    @Test func everyEventInEveryState() {
        var pairs = 0
        var refusals = 0
        for state in Self.states {
            for event in Self.events {
                var machine = state
                let action = machine.handle(event)
                pairs += 1
                if let (answer, after) = Self.expected(state, event) {
                    #expect(action == answer, "\(event) in \(state)")
                    #expect(machine == after, "\(event) in \(state)")
                } else {
                    refusals += 1
                    guard case .refuse(let reason) = action else {
                        Issue.record("\(event) in \(state) must be refused, not answered \(action)")
                        continue
                    }
                    #expect(machine == state, "a refusal changes nothing: \(event) in \(state)")
                    #expect(reason.contains("\(state.status)"), "the refusal says where the download is: \(reason)")
                }
            }
        }
        #expect(pairs == DownloadStatus.allCases.count * Phase.allCases.count * Self.pendings.count * 2 * Self.events.count)
        #expect(refusals > 0 && refusals < pairs)
    }

    @Test func aDownloadRunsPreparesAndIsPlaced() {
        var machine = Machine()
        #expect(machine.handle(.lifecycle(.start)) == .moved(from: .queued, to: .downloading))
        #expect(machine.handle(.bodyPreparing) == .none && machine.phase == .preparing && machine.isRunning)
        #expect(machine.handle(.bodyReady) == .none && machine.phase == .running)
        #expect(machine.handle(.attemptEnded) == .none && !machine.isRunning)
        #expect(machine.handle(.placeStarted) == .none && machine.isPlacing && !machine.isAtRest)
        #expect(machine.handle(.replaceRequested(Self.request)) == .deferred)
        #expect(machine.handle(.removeRequested(deleteFile: true)) == .deferred)
        #expect(machine.handle(.placeLanded) == .landed(pending: .removal(deleteFile: true)))
        #expect(machine.handle(.lifecycle(.complete)) == .moved(from: .downloading, to: .completed))
        #expect(machine.isAtRest)
    }

    @Test func restartsCountUntilTheFileLandsOrTheUserAsksAgain() {
        var machine = Machine(status: .downloading, phase: .idle)
        #expect(machine.handle(.restarted) == .none && machine.handle(.restarted) == .none && machine.restarts == 2)
        #expect(machine.handle(.lifecycle(.requeue)) == .moved(from: .downloading, to: .queued))
        #expect(!machine.isAtRest, "a download restarting is not at rest: its count stays in memory")
        #expect(machine.handle(.restartsForgotten) == .none && machine.restarts == 0 && machine.isAtRest)
    }
}

/// A transition the machine refuses, asked of a running engine: never ignored.
@Suite struct RefusedTransitionTests {
    @Test func aRefusalFailsTheDownloadAndIsReported() async throws {
        let folder = TemporaryFolder()
        defer { folder.remove() }
        var configuration = fastConfiguration()
        configuration.maxConcurrentDownloads = 0   // stays queued
        let manager = DownloadManager(configuration: configuration)
        try await manager.enqueue(request("a", URL(string: "http://127.0.0.1:9/a")!, to: folder.file("a")))
        // A placement's answer for a download that was never placed: a fault of the driver.
        let action = try await manager.perform(rows: ["a"], now: { loop in .success(loop.handle("a", .placeLanded)) })
        guard case .refuse(let reason)? = action else {
            Issue.record("refused, not \(String(describing: action))")
            return
        }
        #expect(reason.contains("queued"))
        let failed = try await waitFor(manager, "a", .failed)
        #expect(failed.lastError?.code == .engineFault)
        let reported = await manager.persistenceError() as? DownloadError
        #expect(reported?.code == .engineFault, "kept for persistenceError")
        await manager.shutdown()
    }

    /// A refusal that comes from inside curl's write callback (the first body byte of an attempt
    /// the machine no longer thinks is running): curl cannot let go of a transfer there, so the
    /// transfer is cut short there and let go once curl has returned. The download fails, nothing
    /// is written, and the engine goes on with the next one.
    @Test func aRefusalInsideCurlsCallbackStopsTheTransferOnceCurlReturns() async throws {
        let server = try TestServer()
        let folder = TemporaryFolder()
        defer { folder.remove(); server.stop() }
        let late = Body.pattern(size: 300_000, seed: 7)
        let next = Body.pattern(size: 40_000, seed: 8)
        // Its answer waits until the fault below is made, however busy the machine.
        let gate = Gate()
        server.setRoute("/late.bin", Route(body: late, gate: gate))
        server.setRoute("/next.bin", Route(body: next))
        let manager = DownloadManager(configuration: fastConfiguration(concurrency: 1))
        try await manager.enqueue(request("late", server.url("/late.bin"), to: folder.file("late.bin")))
        try await eventually("the request") { server.requests(for: "/late.bin").count == 1 }
        // A fault of the driver, made on purpose: the machine hears that the attempt ended while
        // curl still waits for its answer, so the first body byte's `bodyPreparing` is refused.
        let ended = try await manager.perform(rows: ["late"], now: { loop in .success(loop.handle("late", .attemptEnded)) })
        #expect(ended == DownloadRecord.StateMachine.Action.none)
        gate.open()
        let failed = try await waitFor(manager, "late", .failed)
        #expect(failed.lastError?.code == .engineFault)
        #expect((await manager.persistenceError() as? DownloadError)?.code == .engineFault)
        #expect(!FileManager.default.fileExists(atPath: folder.file("late.bin")), "no file for the failed download")
        try await manager.enqueue(request("next", server.url("/next.bin"), to: folder.file("next.bin")))
        _ = try await waitFor(manager, "next", .completed)
        #expect(sha256(ofFile: folder.file("next.bin")) == next.sha256Hex())
        await manager.shutdown()
    }
}
