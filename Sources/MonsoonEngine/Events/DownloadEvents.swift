
/// The manager's events, as an `AsyncSequence`.
///
/// Unlike a plain `AsyncStream`, a slow consumer costs bounded memory without
/// losing anything that matters: `.progress` events are coalesced per download
/// (the consumer sees the newest), every other event is kept, and order is kept
/// (a download's pending progress is never reported after its later status change).
///
/// The subscription ends when the sequence and its iterators are gone, so a consumer
/// that stops listening costs nothing. Like `AsyncStream`, it is unicast: with several
/// iterators, each event goes to one. A cancelled task's `next()` returns what is already
/// buffered, then nil; the other iterators go on.
public struct DownloadEvents: AsyncSequence, Sendable {
    public typealias Element = DownloadEvent

    let subscription: Subscription

    /// An iterator over the subscription's events; with several, each event goes to one of them.
    public func makeAsyncIterator() -> Iterator { Iterator(subscription: subscription) }

    /// Takes events from the subscription's buffer, oldest first.
    public struct Iterator: AsyncIteratorProtocol {
        let subscription: Subscription

        /// The next event, waiting until one comes; nil once the subscription has ended.
        public mutating func next() async -> DownloadEvent? {
            await subscription.subscriber.next()
        }
    }

    /// Unsubscribes when the last sequence or iterator holding it goes away.
    final class Subscription: Sendable {
        let subscriber: EventSubscriber

        init(_ subscriber: EventSubscriber) { self.subscriber = subscriber }

        deinit {
            subscriber.finish()
            subscriber.onTermination(subscriber)
        }
    }
}

/// One consumer's buffer.
final class EventSubscriber: Sendable {
    private enum Slot {
        case event(DownloadEvent)
        /// A progress placeholder: its numbers are read from `latest` when taken,
        /// so a burst of progress for one download occupies one slot.
        case progress(DownloadID)
    }

    private struct Pending {
        var bytes: Int
        var total: Int?
        /// Where its slot is, counted from the first slot ever queued.
        var position: Int
    }

    private struct State {
        var slots: [Slot] = []
        var head = 0
        /// Slots dropped from the front of `slots` so far.
        var base = 0
        var latest: [DownloadID: Pending] = [:]
        /// Iterators waiting for an event, oldest first, each under the token of its `next()` call.
        var waiters: [(token: Int, continuation: CheckedContinuation<DownloadEvent?, Never>)] = []
        var lastToken = 0
        var finished = false

        mutating func append(_ event: DownloadEvent) {
            if case .progress(let id, let bytes, let total) = event {
                if latest[id] != nil {
                    latest[id]?.bytes = bytes
                    latest[id]?.total = total
                } else {
                    latest[id] = Pending(bytes: bytes, total: total, position: base + slots.count)
                    slots.append(.progress(id))
                }
                return
            }
            // Seal the download's pending progress where it stands, so a later
            // progress event cannot jump ahead of this one.
            if let pending = latest.removeValue(forKey: event.downloadID) {
                slots[pending.position - base] = .event(.progress(id: event.downloadID, bytes: pending.bytes, total: pending.total))
            }
            slots.append(.event(event))
        }

        mutating func take() -> DownloadEvent? {
            guard head < slots.count else { return nil }
            let slot = slots[head]
            head += 1
            if head > 1024, head * 2 > slots.count {   // compact now and then
                slots.removeFirst(head)
                base += head
                head = 0
            }
            switch slot {
            case .event(let event): return event
            case .progress(let id):
                guard let value = latest.removeValue(forKey: id) else { return take() }
                return .progress(id: id, bytes: value.bytes, total: value.total)
            }
        }
    }

    private let state = Locked(State())
    let kinds: DownloadEvent.Kinds
    let onTermination: @Sendable (EventSubscriber) -> Void

    init(kinds: DownloadEvent.Kinds, onTermination: @escaping @Sendable (EventSubscriber) -> Void) {
        self.kinds = kinds
        self.onTermination = onTermination
    }

    func send(_ event: DownloadEvent) {
        send(CollectionOfOne(event))
    }

    /// Sends events in order, under one lock.
    func send(_ events: some Sequence<DownloadEvent>) {
        // Each waiter and the event it gets are paired under one lock: taken apart, another
        // iterator could take the event in between and this waiter would get nil, which
        // ends its stream early.
        let deliveries = state.withLock { state -> [(CheckedContinuation<DownloadEvent?, Never>, DownloadEvent)] in
            guard !state.finished else { return [] }
            for event in events { state.append(event) }
            var deliveries: [(CheckedContinuation<DownloadEvent?, Never>, DownloadEvent)] = []
            while !state.waiters.isEmpty, let next = state.take() {
                deliveries.append((state.waiters.removeFirst().continuation, next))
            }
            return deliveries
        }
        // Resumed outside the lock.
        for (waiter, next) in deliveries { waiter.resume(returning: next) }
    }

    /// Iterators waiting in `next()` for an event, for the tests of their cancellation. Nothing
    /// else reads it.
    var waitingIterators: Int { state.withLock { $0.waiters.count } }

    func finish() {
        let waiters = state.withLock { state -> [CheckedContinuation<DownloadEvent?, Never>] in
            state.finished = true
            defer { state.waiters.removeAll() }
            return state.waiters.map(\.continuation)
        }
        for waiter in waiters { waiter.resume(returning: nil) }
    }

    /// The next event; nil once finished, or, for a cancelled task, once nothing is buffered.
    /// A cancellation ends only its own wait: another iterator of the same subscription goes on.
    func next() async -> DownloadEvent? {
        // What is buffered is taken without waiting: a consumer that keeps up with a burst
        // (a thousand small files) takes most events here, without a continuation each.
        if let event = state.withLock({ $0.take() }) { return event }
        let token = state.withLock { state in
            state.lastToken += 1
            return state.lastToken
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<DownloadEvent?, Never>) in
                let immediate: DownloadEvent?? = state.withLock { state in
                    if let event = state.take() { return .some(event) }
                    // Checked under the lock: a cancellation that came before the waiter was
                    // added found nothing to end in `onCancel`, so it is answered here.
                    if state.finished || Task.isCancelled { return .some(nil) }
                    state.waiters.append((token, continuation))
                    return .none
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<DownloadEvent?, Never>? in
                guard let index = state.waiters.firstIndex(where: { $0.token == token }) else { return nil }
                return state.waiters.remove(at: index).continuation
            }
            waiter?.resume(returning: nil)
        }
    }
}

/// All current subscribers.
final class EventHub: Sendable {
    private struct State {
        var subscribers: [ObjectIdentifier: EventSubscriber] = [:]
        /// What the subscribers want between them.
        var wanted: DownloadEvent.Kinds = []
        var closed = false

        mutating func updateWanted() {
            wanted = subscribers.values.reduce(into: []) { $0.formUnion($1.kinds) }
        }
    }

    private let state = Locked(State())

    /// A new subscription to `kinds` of events; after shutdown, one that is already finished.
    func subscribe(_ kinds: DownloadEvent.Kinds = .all) -> DownloadEvents {
        let subscriber = EventSubscriber(kinds: kinds) { [weak self] subscriber in
            self?.state.withLock { state in
                state.subscribers[ObjectIdentifier(subscriber)] = nil
                state.updateWanted()
            }
        }
        let closed = state.withLock { state -> Bool in
            if !state.closed {
                state.subscribers[ObjectIdentifier(subscriber)] = subscriber
                state.updateWanted()
            }
            return state.closed
        }
        if closed { subscriber.finish() }
        return DownloadEvents(subscription: DownloadEvents.Subscription(subscriber))
    }

    var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// Whether any subscriber wants events of `kinds` (so whether to build them at all).
    func wants(_ kinds: DownloadEvent.Kinds) -> Bool { state.withLock { !$0.wanted.isDisjoint(with: kinds) } }

    func send(_ events: [DownloadEvent]) {
        guard !events.isEmpty else { return }
        let targets = state.withLock { Array($0.subscribers.values) }
        for subscriber in targets {
            subscriber.send(events.lazy.filter { subscriber.kinds.contains($0.kind) })
        }
    }

    func finishAll() {
        let targets = state.withLock { state -> [EventSubscriber] in
            state.closed = true
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
        for subscriber in targets { subscriber.finish() }
    }
}
