import FoundationEssentials

extension DownloadRecord {
    /// A download's whole state, as one value: its status, the phase of its transfer (running,
    /// its part being prepared, its file being placed), what was asked of it while its file is
    /// placed, and its immediate restarts in a row.
    ///
    /// Every change goes through `handle(_:)`, which takes an event and returns what the loop
    /// is to do (as async-http-client's `RequestBag.StateMachine`): the loop performs the answer
    /// and never sets a field itself. An event that cannot happen where the download is
    /// (a fault of the driver) is refused: nothing changes, and the loop reports it.
    ///
    ///     phase:  idle ──start──▶ running ──bodyPreparing──▶ preparing
    ///               ▲               │  ▲──────bodyReady──────────┘ │
    ///               └─attemptEnded──┴──────────────────────────────┘
    ///             idle (downloading) ──placeStarted──▶ placing ──placeLanded──▶ idle
    ///
    /// Status events (`DownloadLifecycle.Event` but `.start`) happen to a download whose
    /// transfer has ended: the loop stops a running one first. `DownloadLifecycle` says where
    /// each leads.
    struct StateMachine: Equatable, Sendable {
        /// Where the download's transfer is.
        enum Phase: Equatable, Sendable, CaseIterable {
            /// No attempt runs (it may hold a slot while the disk worker plans one: `EngineCore.starting`).
            case idle
            /// An attempt is running (its `Transfer` is in `EngineCore.running`).
            case running
            /// The running attempt's body waits while the disk worker names and opens its part.
            case preparing
            /// The finished file is being flushed and renamed into place.
            case placing
        }

        /// What was asked while the file is placed, done once it lands.
        enum Pending: Equatable, Sendable {
            /// Removed; `deleteFile`: the finished file goes too.
            case removal(deleteFile: Bool)
            /// Replaced by `enqueue(replacingExisting:)` with this request.
            case replacement(DownloadRequest)
        }

        enum Event: Equatable, Sendable {
            /// A status event (`.start` also begins the attempt: idle to running).
            case lifecycle(DownloadLifecycle.Event)
            /// The first body byte: the part is being prepared, the body held meanwhile.
            case bodyPreparing
            /// The part is open: the body goes on (ignored once the attempt ended meanwhile).
            case bodyReady
            /// The attempt ended or was stopped: its slot is free.
            case attemptEnded
            /// The whole part goes to the placer.
            case placeStarted
            /// The placer answered (the status event follows: complete, hold or fail).
            case placeLanded
            /// The part was dropped to start again at once.
            case restarted
            /// The user asked for it afresh (or its URL changed): restarts count from nothing.
            case restartsForgotten
            /// A removal was asked.
            case removeRequested(deleteFile: Bool)
            /// `enqueue(replacingExisting:)` was asked with a request of its id.
            case replaceRequested(DownloadRequest)
        }

        enum Action: Equatable, Sendable {
            /// Nothing more for the loop to do.
            case none
            /// The status moved (or stayed, for a hold) from `from` to `to`: the loop updates its
            /// queue index and waiting set, saves and reports.
            case moved(from: DownloadStatus, to: DownloadStatus)
            /// Asked while the file is placed: done once it lands.
            case deferred
            /// Do what was asked now (remove, or replace).
            case proceed
            /// The file landed: do `pending` now, if anything.
            case landed(pending: Pending?)
            /// The event cannot happen here; nothing changed. The loop reports it.
            case refuse(String)
        }

        private(set) var status: DownloadStatus
        private(set) var phase: Phase = .idle
        private(set) var pending: Pending?
        /// Immediate restarts in a row (a changing resource), so they cannot loop forever.
        private(set) var restarts = 0

        init(status: DownloadStatus = .queued) {
            self.status = status
        }

        /// For tests: any state.
        init(status: DownloadStatus, phase: Phase, pending: Pending? = nil, restarts: Int = 0) {
            self.status = status
            self.phase = phase
            self.pending = pending
            self.restarts = restarts
        }

        var isPlacing: Bool { phase == .placing }
        /// An attempt holds a slot (running, or its part being prepared).
        var isRunning: Bool { phase == .running || phase == .preparing }

        /// Nothing is happening to it but waiting for its turn (or for the user).
        var isAtRest: Bool {
            guard phase == .idle, pending == nil else { return false }
            switch status {
            case .queued, .paused: return restarts == 0
            case .completed, .failed: return true   // restarts only matter to a download that goes on
            case .downloading, .waitingToRetry: return false
            }
        }

        mutating func handle(_ event: Event) -> Action {
            switch (event, phase) {
            case (.lifecycle(.start), .idle):
                guard let next = DownloadLifecycle.status(after: .start, from: status) else { return refusal(event) }
                let old = status
                (status, phase) = (next, .running)
                return .moved(from: old, to: next)
            case (.lifecycle(let lifecycle), .idle) where lifecycle != .start:
                guard let next = DownloadLifecycle.status(after: lifecycle, from: status) else { return refusal(event) }
                let old = status
                status = next
                return .moved(from: old, to: next)
            case (.bodyPreparing, .running):
                phase = .preparing
                return .none
            case (.bodyReady, .preparing):
                phase = .running
                return .none
            case (.bodyReady, .idle):
                return .none   // stopped (or ended) while its part was prepared: nothing goes on
            case (.attemptEnded, .running), (.attemptEnded, .preparing):
                phase = .idle
                return .none
            case (.placeStarted, .idle) where status == .downloading:
                phase = .placing
                return .none
            case (.placeLanded, .placing):
                let done = pending
                (phase, pending, restarts) = (.idle, nil, 0)
                return .landed(pending: done)
            case (.restarted, .idle) where status == .downloading:
                restarts += 1
                return .none
            case (.restartsForgotten, .idle):
                restarts = 0
                return .none
            case (.removeRequested(let deleteFile), .placing):
                pending = .removal(deleteFile: deleteFile)   // a removal outweighs a replacement
                return .deferred
            case (.replaceRequested(let request), .placing):
                if case .removal = pending { return .deferred }
                pending = .replacement(request)
                return .deferred
            case (.removeRequested, _), (.replaceRequested, _):
                return .proceed   // the loop stops a running transfer as it removes
            default:
                return refusal(event)
            }
        }

        private func refusal(_ event: Event) -> Action {
            .refuse("\(event) cannot happen to a download that is \(status) (\(phase)\(pending.map { ", \($0) pending" } ?? ""))")
        }
    }
}
