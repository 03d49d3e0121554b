import Foundation
import Testing
@testable import MonsoonEngine

/// A transfer's phase and pause reasons as a table: every state (phase × what its part waits
/// with × pause reasons) against every event, each with the action it answers and the state it
/// leaves. An event that does not apply answers `.ignored` and changes nothing: the loop then
/// does nothing more (a part that comes for an attempt stopped meanwhile is closed, a second
/// reason to cut an attempt short is dropped, the first one stands).
@Suite struct TransferStateTests {
    private typealias State = Transfer.State
    private typealias Phase = Transfer.Phase
    private typealias Event = Transfer.Event
    private typealias Action = Transfer.Action

    private final class Attempt: Sendable {}
    private static let attempt = Attempt()
    private static let part = BodyPreparation(
        row: DownloadRecord(request: DownloadRequest(id: "s", url: URL(string: "http://example.com/s")!, destination: .directory("/tmp")),
                            sequence: 1, host: "example.com"),
        attempt: ObjectIdentifier(attempt), contentDisposition: nil, contentType: nil, finalURL: nil, offset: 0, total: 10,
        newState: nil, durably: false, diskReserve: 0)
    private static let error = DownloadError(.fileSystem, "cannot write")
    private static let ok = Transfer.Code(rawValue: 0)
    private static let partialFile = Transfer.Code(rawValue: 18)
    private static let received = Transfer.Code(rawValue: 56)
    private static let code = ok
    private static let since = Date(timeIntervalSince1970: 1_700_000_000)

    private static let phases: [Phase] = [
        .awaitingHead,
        .preparingPart(Transfer.PartWait()),
        .preparingPart(Transfer.PartWait(held: part, heldSince: since)),
        .preparingPart(Transfer.PartWait(ended: Self.partialFile)),
        .writing, .wholeBody(part), .counting, .discarding(bytes: 5), .inMemory([1, 2]),
        .aborted(.failed(error, transient: true)), .aborted(.restart(reason: "another version")), .aborted(.stopped),
    ]
    private static let pauses: [Transfer.PauseReasons] = [[], .space, .rate, .preparing, [.rate, .preparing]]
    private static let events: [Event] = [
        .decided(.part), .decided(.count), .decided(.discard), .decided(.memory),
        .partHeld(part, since: since), .partWanted, .partReady, .partFailed(error, transient: false),
        .ended(Self.ok, bodyWhole: true), .ended(Self.received, bodyWhole: false),
        .abort(.failed(error, transient: false)), .abort(.restart(reason: "moved")), .abort(.stopped),
        .paused(.space), .paused(.rate), .paused(.preparing), .paused([.rate, .preparing]), .paused([.space, .preparing]),
        .resumed(.space), .resumed(.rate), .resumed(.preparing),
    ]

    /// What the machine must answer, written out case by case apart from its code: the action and
    /// the state after; nil: ignored, nothing changed.
    private static func expected(_ state: State, _ event: Event) -> (Action, State)? {
        var after = state
        let wait = state.phase.partWait
        if case .resumed(let reasons) = event {
            guard !state.paused.isDisjoint(with: reasons) else { return nil }
            after.paused.subtract(reasons)
            return (wait == nil && after.paused.isEmpty ? .goOn : .none, after)
        }
        if case .aborted = state.phase { return nil }
        switch event {
        case .abort(let abort):
            after.phase = .aborted(abort)
            return (.none, after)
        case .decided(let destination):
            guard case .awaitingHead = state.phase else { return nil }
            after.phase = switch destination {
            case .part: .preparingPart(Transfer.PartWait())
            case .count: .counting
            case .discard: .discarding(bytes: 0)
            case .memory: .inMemory([])
            }
            return (.none, after)
        case .partHeld(let part, let since):
            guard let wait, wait.held == nil, wait.ended == nil else { return nil }
            after.phase = .preparingPart(Transfer.PartWait(held: part, heldSince: since))
            return (.none, after)
        case .partWanted:
            guard let wait, let held = wait.held else { return nil }
            after.phase = .preparingPart(Transfer.PartWait(held: nil, heldSince: wait.heldSince, ended: wait.ended))
            return (.askForPart(held), after)
        case .partReady, .partFailed:
            guard let wait else { return nil }
            if case .partFailed(let error, let transient) = event { after.phase = .aborted(.failed(error, transient: transient)) } else { after.phase = .writing }
            if let ended = wait.ended { return (.finish(ended), after) }
            guard state.paused.contains(.preparing) else { return (.none, after) }
            after.paused.remove(.preparing)
            return (after.paused.isEmpty ? .goOn : .none, after)
        case .ended(let code, let whole):
            guard let wait else { return (.none, state) }
            guard wait.ended == nil else { return nil }
            if let held = wait.held, whole {
                after.phase = .wholeBody(held)
                return (.none, after)
            }
            after.phase = .preparingPart(Transfer.PartWait(ended: code))
            return (.awaitPart(asking: wait.held), after)
        case .paused(let reasons):
            let allowed: Bool = switch state.phase {
            case .writing: reasons.isSubset(of: [.space, .rate])
            case .counting: reasons == .rate
            case .preparingPart: reasons.contains(.preparing) && !reasons.contains(.space)
            default: false
            }
            guard allowed else { return nil }
            after.paused.formUnion(reasons)
            return (.pause, after)
        case .resumed:
            return nil   // answered above
        }
    }

    @Test func everyEventInEveryState() {
        var pairs = 0
        var ignored = 0
        for phase in Self.phases {
            for paused in Self.pauses {
                for event in Self.events {
                    let state = State(phase: phase, paused: paused)
                    var machine = state
                    let action = machine.handle(event)
                    pairs += 1
                    let place = "\(Self.describe(event)) in \(Self.describe(state))"
                    if let (answer, after) = Self.expected(state, event) {
                        #expect(Self.describe(action) == Self.describe(answer), "\(place)")
                        #expect(Self.describe(machine) == Self.describe(after), "\(place)")
                    } else {
                        ignored += 1
                        #expect(Self.describe(action) == "ignored", "\(place) must be ignored")
                        #expect(Self.describe(machine) == Self.describe(state), "ignoring changes nothing: \(place)")
                    }
                }
            }
        }
        #expect(pairs == Self.phases.count * Self.pauses.count * Self.events.count)
        #expect(ignored > 0 && ignored < pairs)
    }

    /// A small file's attempt: its part held back, the body paused when it outgrows the buffer
    /// under the rate limit, the part asked for, ready, and the limit the last to let it go.
    @Test func aHeldPartIsAskedForThenReadyAndTheLastReasonLetsItGo() {
        var state = State()
        #expect(Self.describe(state.handle(.decided(.part))) == "none")
        #expect(Self.describe(state.handle(.partHeld(Self.part, since: Self.since))) == "none")
        #expect(Self.describe(state.handle(.paused([.rate, .preparing]))) == "pause")
        #expect(Self.describe(state.handle(.partWanted)) == "askForPart(s)")
        #expect(Self.describe(state.handle(.partWanted)) == "ignored", "asked once")
        #expect(Self.describe(state.handle(.resumed(.rate))) == "none", "the part is not ready yet")
        #expect(Self.describe(state.handle(.partReady)) == "goOn")
        #expect(Self.describe(state) == "writing []")
        #expect(state.body == .written)
        #expect(Self.describe(state.handle(.ended(Self.code, bodyWhole: false))) == "none", "finished now")
    }

    /// A body that came whole before its part was asked for is written in one pass; one that
    /// did not waits for its part, asked for now, and finishes when it comes.
    @Test func anAttemptEndingBeforeItsPartIsWholeOrWaits() {
        var whole = State(phase: .preparingPart(Transfer.PartWait(held: Self.part, heldSince: Self.since)))
        #expect(Self.describe(whole.handle(.ended(Self.code, bodyWhole: true))) == "none")
        #expect(whole.body == .written)
        var cut = State(phase: .preparingPart(Transfer.PartWait(held: Self.part, heldSince: Self.since)))
        #expect(Self.describe(cut.handle(.ended(Self.received, bodyWhole: false))) == "awaitPart(s)")
        #expect(Self.describe(cut.handle(.partFailed(Self.error, transient: true))) == "finish(\(Self.received.rawValue))")
        #expect(cut.body == .none)
        #expect(cut.phase.abort?.error == Self.error && cut.phase.abort?.isTransient == true)
    }

    /// An attempt cut short keeps its first reason; a pause on it is still lifted, so curl hands
    /// the held bytes to the callback, which refuses them and ends it.
    @Test func theFirstAbortStandsAndItsPausesAreStillLifted() {
        var state = State(phase: .writing)
        #expect(Self.describe(state.handle(.paused(.space))) == "pause")
        #expect(Self.describe(state.handle(.abort(.restart(reason: "another version")))) == "none")
        #expect(Self.describe(state.handle(.abort(.failed(Self.error, transient: false)))) == "ignored")
        #expect(state.phase.abort?.restartReason == "another version" && state.phase.abort?.error == nil)
        #expect(Self.describe(state.handle(.resumed(.space))) == "goOn")
        #expect(state.body == .none)
    }

    // MARK: - Descriptions, to compare values whose payloads are not Equatable

    private static func describe(_ state: State) -> String {
        let reasons = [(Transfer.PauseReasons.space, "space"), (.rate, "rate"), (.preparing, "preparing")]
            .filter { state.paused.contains($0.0) }.map(\.1)
        return "\(describe(state.phase)) [\(reasons.joined(separator: ","))]"
    }

    private static func describe(_ phase: Phase) -> String {
        switch phase {
        case .awaitingHead: "awaitingHead"
        case .preparingPart(let wait):
            "preparingPart(held: \(wait.held?.row.request.id.rawValue ?? "-") since \(wait.heldSince.timeIntervalSince1970), ended: \(wait.ended.map { "\($0.rawValue)" } ?? "-"))"
        case .writing: "writing"
        case .wholeBody(let part): "wholeBody(\(part.row.request.id.rawValue))"
        case .counting: "counting"
        case .discarding(let bytes): "discarding(\(bytes))"
        case .inMemory(let bytes): "inMemory(\(bytes))"
        case .aborted(let abort): "aborted(\(describe(abort)))"
        }
    }

    private static func describe(_ abort: Transfer.Abort) -> String {
        switch abort {
        case .failed(let error, let transient): "failed(\(error.message), transient: \(transient))"
        case .restart(let reason): "restart(\(reason))"
        case .stopped: "stopped"
        }
    }

    private static func describe(_ action: Action) -> String {
        switch action {
        case .none: "none"
        case .ignored: "ignored"
        case .pause: "pause"
        case .goOn: "goOn"
        case .askForPart(let part): "askForPart(\(part.row.request.id.rawValue))"
        case .awaitPart(let asking): "awaitPart(\(asking?.row.request.id.rawValue ?? "-"))"
        case .finish(let code): "finish(\(code.rawValue))"
        }
    }

    private static func describe(_ event: Event) -> String {
        switch event {
        case .abort(let abort): "abort(\(describe(abort)))"
        case .partHeld: "partHeld"
        default: "\(event)"
        }
    }
}
