import CCurl
import FoundationEssentials

extension Transfer {
    /// curl's result for an attempt (its tests name it without importing curl).
    typealias Code = CURLcode

    /// Where an attempt's body goes (its phase) and what holds it paused, changed only through
    /// `handle`, which says what the caller does next. As curl keeps one state per transfer,
    /// changed in one place (`mstate()`), with its pause reasons as bits of one word. A value,
    /// with its own table tests (`TransferStateTests`).
    struct State {
        var phase: Phase = .awaitingHead
        var paused: PauseReasons = []
        /// The chunk the disk's allowance could not take when the transfer was paused for `.space`.
        var spaceWanted = 0
    }

    /// Where the body goes, decided at its first byte.
    enum Phase {
        /// No body byte yet (decided then, or at the end for a body-less answer).
        case awaitingHead
        /// The disk worker is getting the part ready; the body waits in `early`, then (past its
        /// limit) in curl, paused.
        case preparingPart(PartWait)
        /// Into the part file (`part.fd`).
        case writing
        /// The whole body came into `early` before its part was asked for: the disk worker writes
        /// its file in one pass (`WholeFile`).
        case wholeBody(BodyPreparation)
        /// A `.discard` download's body: counted, hashed when `progress.digest` is set, dropped.
        case counting
        /// An error body, counted and dropped.
        case discarding(bytes: Int)
        /// A fetch's body, kept whole.
        case inMemory([UInt8])
        /// Cut short: its callbacks answer 0 from now on, and curl ends it with a write error.
        case aborted(Abort)
    }

    /// What a part being prepared waits with.
    struct PartWait {
        /// The part, not asked for yet: a small file whose whole body may come into `early`
        /// first, then written in one pass (`WholeFile`); asked for as soon as the body will not
        /// come whole without a pause, or not soon (`heldSince`).
        var held: BodyPreparation?
        var heldSince = Date.distantPast
        /// The attempt ended (a body-less 2xx, or cut short while paused): it finishes with this
        /// code once the part is ready.
        var ended: Code?
    }

    /// Why an attempt was cut short.
    enum Abort {
        /// For good, unless `transient` (the database's failure, not the download's).
        case failed(DownloadError, transient: Bool)
        /// The bytes do not fit the part (another version, the wrong offset): it starts over.
        case restart(reason: String)
        /// Stopped by the loop (paused, removed, refused): no error of its own.
        case stopped
    }

    /// Why curl holds the transfer paused: it goes on once none is left.
    struct PauseReasons: OptionSet {
        let rawValue: UInt8
        /// The next chunk would eat into the disk's reserve as last measured.
        static let space = PauseReasons(rawValue: 1)
        /// The rate limit's bucket was empty.
        static let rate = PauseReasons(rawValue: 2)
        /// `early` is full (or may take no more) while the part is prepared.
        static let preparing = PauseReasons(rawValue: 4)
    }

    /// Where the head says the body goes.
    enum Destination {
        case part, count, discard, memory
    }

    enum Event {
        case decided(Destination)
        /// A small file's part is held back until the body shows whether it comes whole.
        case partHeld(BodyPreparation, since: Date)
        /// The held part is wanted now.
        case partWanted
        case partReady
        case partFailed(DownloadError, transient: Bool)
        /// curl ended the attempt; `bodyWhole`: cleanly, with the whole body in `early`.
        case ended(Code, bodyWhole: Bool)
        case abort(Abort)
        case paused(PauseReasons)
        case resumed(PauseReasons)
    }

    enum Action {
        case none
        /// The event does not apply in this phase (an answer for an attempt stopped meanwhile, a
        /// second reason to cut short): nothing changed, and the caller does nothing more.
        case ignored
        /// The write callback answers `CURL_WRITEFUNC_PAUSE`.
        case pause
        /// Nothing holds the transfer any more: let curl go on.
        case goOn
        /// Send this part to the disk worker.
        case askForPart(BodyPreparation)
        /// The attempt ended while its part is prepared: it finishes once the part is ready,
        /// after asking for it when it was held back.
        case awaitPart(asking: BodyPreparation?)
        /// The part came after the attempt ended: finish it now with curl's code.
        case finish(Code)
    }
}

extension Transfer.State {
    /// The one place a transfer's phase and pause reasons change.
    mutating func handle(_ event: Transfer.Event) -> Transfer.Action {
        switch (event, phase) {
        case (.resumed(let reasons), _):
            // An aborted transfer too: let go, curl hands its callback the held bytes, refused.
            guard !paused.isDisjoint(with: reasons) else { return .ignored }
            paused.subtract(reasons)
            if case .preparingPart = phase { return .none }   // the part's readiness lets it go
            return paused.isEmpty ? .goOn : .none
        case (_, .aborted):
            // Cut short for good: the first reason stands, and no callback pauses it again.
            return .ignored
        case (.abort(let abort), _):
            phase = .aborted(abort)
            return .none
        case (.decided(let destination), .awaitingHead):
            switch destination {
            case .part: phase = .preparingPart(Transfer.PartWait())
            case .count: phase = .counting
            case .discard: phase = .discarding(bytes: 0)
            case .memory: phase = .inMemory([])
            }
            return .none
        case (.partHeld(let part, let since), .preparingPart(let wait)) where wait.held == nil && wait.ended == nil:
            phase = .preparingPart(Transfer.PartWait(held: part, heldSince: since))
            return .none
        case (.partWanted, .preparingPart(var wait)):
            guard let part = wait.held else { return .ignored }
            wait.held = nil
            phase = .preparingPart(wait)
            return .askForPart(part)
        case (.partReady, .preparingPart(let wait)):
            phase = .writing
            return partAnswered(wait)
        case (.partFailed(let error, let transient), .preparingPart(let wait)):
            phase = .aborted(.failed(error, transient: transient))
            return partAnswered(wait)
        case (.ended(let code, let bodyWhole), .preparingPart(let wait)) where wait.ended == nil:
            if let part = wait.held, bodyWhole {
                phase = .wholeBody(part)
                return .none
            }
            phase = .preparingPart(Transfer.PartWait(ended: code))
            return .awaitPart(asking: wait.held)
        case (.ended, .awaitingHead), (.ended, .writing), (.ended, .wholeBody), (.ended, .counting), (.ended, .discarding), (.ended, .inMemory):
            return .none
        case (.paused(let reasons), .writing) where reasons.isSubset(of: [.space, .rate]),
             (.paused(let reasons), .counting) where reasons == .rate,
             (.paused(let reasons), .preparingPart) where reasons.contains(.preparing) && reasons.isSubset(of: [.preparing, .rate]):
            paused.formUnion(reasons)
            return .pause
        default:
            return .ignored
        }
    }

    /// The disk worker answered for the part: an attempt that ended meanwhile finishes now; one
    /// paused for it goes on, once nothing else holds it.
    private mutating func partAnswered(_ wait: Transfer.PartWait) -> Transfer.Action {
        if let code = wait.ended { return .finish(code) }
        guard paused.contains(.preparing) else { return .none }   // its body all fitted in `early`
        paused.remove(.preparing)
        return paused.isEmpty ? .goOn : .none
    }

    /// What the body amounts to, for the attempt's end.
    var body: DownloadLifecycle.AttemptEnd.Body {
        switch phase {
        case .writing, .wholeBody: .written
        case .counting: .counted
        default: .none
        }
    }
}

extension Transfer.Phase {
    /// Why the attempt was cut short, if it was.
    var abort: Transfer.Abort? {
        if case .aborted(let abort) = self { return abort }
        return nil
    }
}

extension Transfer.Abort {
    var error: DownloadError? {
        if case .failed(let error, _) = self { return error }
        return nil
    }

    var isTransient: Bool {
        if case .failed(_, let transient) = self { return transient }
        return false
    }

    var restartReason: String? {
        if case .restart(let reason) = self { return reason }
        return nil
    }
}

extension Transfer.Phase {
    /// What a part being prepared waits with, in that phase.
    var partWait: Transfer.PartWait? {
        if case .preparingPart(let wait) = self { return wait }
        return nil
    }

    /// The part a whole body is to be written as, in that phase.
    var wholeBody: BodyPreparation? {
        if case .wholeBody(let preparation) = self { return preparation }
        return nil
    }
}
