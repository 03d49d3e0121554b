import Foundation
import Testing
@testable import MonsoonEngine
import MonsoonStore

/// What every `QueueStore` must do, run against each implementation in
/// `QueueStoreImplementation.all`: rows saved and read back, writes that name a stale
/// sequence changing nothing, deletions, commands between processes, and the podcast
/// layer's queries by id lists (more ids than one statement may bind among them).
@Suite struct QueueStoreConformanceTests {
    // MARK: The engine's rows

    @Test(arguments: QueueStoreImplementation.all)
    func aRowReadsBackAsItWasSaved(_ implementation: QueueStoreImplementation) throws {
        do {
            let queue = try implementation.open()
            defer { queue.remove() }
            let store = queue.store
            var full = Self.row("full", sequence: 0, status: .waitingToRetry, destination: .named(folder: "/srv/files", stem: "episode"))
            full.request.priority = 3
            full.request.expectedSize = 1_000
            full.request.expectedMediaType = "audio/mpeg"
            full.request.headers = ["Authorization": "Bearer x"]
            full.request.userInfo = ["episode": "42"]
            full.request.sizeLimit = .init(bytes: 5_000, reason: "the feed's length")
            full.request.root = "/srv"
            full.request.addresses = .publicOnly
            full.counters = .init(attempts: 2, backoffLevel: 1)
            full.retryAt = Date(timeIntervalSince1970: 1_700_000_000)
            full.lastError = DownloadError(.httpStatus, "HTTP 503", httpStatus: 503)
            full.bytes = 400
            full.total = 1_000
            full.checkpoint = 300
            full.resume = ResumeState(url: "https://example.org/full", etag: "\"v1\"", lastModified: "Mon, 01 Dec 2025 10:00:00 GMT", total: 1_000)
            let sequence = try store.insert(full)
            #expect(sequence > 0)
            try store.update({ var saved = full; saved.sequence = sequence; return saved }())

            let read = try #require(try store.record(withID: "full"))
            #expect(read.sequence == sequence)
            #expect(read.request == full.request)
            #expect(read.status == .waitingToRetry)
            #expect(read.counters == full.counters)
            #expect(read.retryAt == full.retryAt)
            #expect(read.lastError == full.lastError)
            #expect(read.bytes == 400 && read.total == 1_000 && read.checkpoint == 300)
            #expect(read.resume == full.resume)
            #expect(try store.record(withID: "missing") == nil)
            #expect(try store.download(withID: "full")?.request == full.request)
        }
    }

    @Test(arguments: QueueStoreImplementation.all)
    func rowsListInEnqueueOrderByIDAndByURL(_ implementation: QueueStoreImplementation) throws {
        do {
            let queue = try implementation.open()
            defer { queue.remove() }
            let store = queue.store
            let first = try store.nextSequence()
            for (index, id) in ["c", "a", "b"].enumerated() {
                #expect(try store.insert(Self.row(DownloadID(id), sequence: 0)) == first + index)
            }
            #expect(try store.nextSequence() == first + 3)
            // An explicit sequence is kept (the engine numbers a batch itself).
            #expect(try store.insert(Self.row("z", sequence: first + 10)) == first + 10)
            #expect(try store.nextSequence() == first + 11)

            #expect(try store.downloads().map(\.id) == ["c", "a", "b", "z"])
            #expect(try store.records(withIDs: ["z", "missing", "a", "c"]).map(\.request.id) == ["c", "a", "z"])
            // Across the chunks an implementation may cut a long list into, too.
            try store.transaction {
                for index in 0..<1_100 { _ = try store.insert(Self.row(DownloadID("many\(index)"), sequence: 0)) }
            }
            let many = (0..<1_100).map { DownloadID("many\($0)") }
            #expect(try store.records(withIDs: many.reversed()).map(\.request.id) == many)
            #expect(try store.downloads(withIDs: many.shuffled()).map(\.id) == many)
            // Streamed whole, however an implementation pages it.
            var all: [DownloadID] = []
            try store.forEachRecord { all.append($0.request.id) }
            #expect(all == ["c", "a", "b", "z"] + many)
            var summaries: [DownloadID] = []
            try store.forEachSummary { summaries.append($0.id) }
            #expect(summaries == all)
            #expect(try store.downloads().count == all.count)
            for record in try store.records(withIDs: many) { try store.delete(record.request.id, sequence: record.sequence) }
            #expect(try store.downloads(withIDs: ["b", "missing"]).map(\.id) == ["b"])
            #expect(try store.records(of: Self.url("a")).map(\.request.id) == ["a"])
            #expect(try store.downloads(of: Self.url("b")).map(\.id) == ["b"])
            var streamed: [DownloadID] = []
            try store.forEachRecord { streamed.append($0.request.id) }
            #expect(streamed == ["c", "a", "b", "z"])
            streamed = []
            try store.forEachRecord(after: first + 1, skippingUnreadable: nil) { streamed.append($0.request.id) }
            #expect(streamed == ["b", "z"])
        }
    }

    /// A taken id fails its insert alone, with a constraint violation (the engine then takes the
    /// next number, or refuses a duplicate), and the transaction it was in goes on.
    @Test(arguments: QueueStoreImplementation.all)
    func aTakenIDFailsItsInsertAloneAsAConstraintViolation(_ implementation: QueueStoreImplementation) throws {
        do {
            let queue = try implementation.open()
            defer { queue.remove() }
            let store = queue.store
            _ = try store.insert(Self.row("taken", sequence: 0))
            try store.transaction {
                _ = try store.insert(Self.row("before", sequence: 0))
                let error = #expect(throws: StoreError.self) { _ = try store.insert(Self.row("taken", sequence: 0)) }
                #expect(error?.isConstraintViolation == true, "\(String(describing: error))")
                _ = try store.insert(Self.row("after", sequence: 0))
            }
            #expect(try store.downloads().map(\.id) == ["taken", "before", "after"])
        }
    }

    @Test(arguments: QueueStoreImplementation.all)
    func writesNamingAStaleSequenceChangeNothing(_ implementation: QueueStoreImplementation) throws {
        do {
            let queue = try implementation.open()
            defer { queue.remove() }
            let store = queue.store
            var record = Self.row("a", sequence: 0)
            record.sequence = try store.insert(record)

            record.restoreStatus(.downloading)
            record.filePath = "/srv/a.mp3"
            record.finalURL = "https://cdn.example.org/a.mp3"
            try store.update(record)
            try store.updateProgress(id: "a", sequence: record.sequence, bytes: 10, total: 100, checkpoint: nil)
            try store.updateProgress(id: "a", sequence: record.sequence, bytes: 20, total: 100, checkpoint: 15)
            var read = try #require(try store.record(withID: "a"))
            #expect(read.status == .downloading && read.bytes == 20 && read.total == 100 && read.checkpoint == 15)
            #expect(read.filePath == "/srv/a.mp3" && read.finalURL == "https://cdn.example.org/a.mp3")

            // A renewed link: the URL changes with the state it goes with.
            record.bytes = 20
            record.total = 100
            record.checkpoint = 15
            record.request.url = URL(string: "https://example.org/renewed")!
            record.urlChanged = true
            try store.update(record)
            #expect(try store.record(withID: "a")?.request.url == record.request.url)

            // The download was removed and added again: the old one's saves must not land.
            try store.delete("a", sequence: record.sequence + 1)
            #expect(try store.record(withID: "a") != nil)
            var stale = record
            stale.sequence += 1
            stale.restoreStatus(.failed)
            try store.update(stale)
            try store.updateProgress(id: "a", sequence: stale.sequence, bytes: 99, total: nil, checkpoint: 99)
            read = try #require(try store.record(withID: "a"))
            #expect(read.status == .downloading && read.bytes == 20 && read.checkpoint == 15)
            try store.delete("a", sequence: record.sequence)
            #expect(try store.record(withID: "a") == nil)
        }
    }

    // MARK: Statuses, paths, listing

    @Test(arguments: QueueStoreImplementation.all)
    func statusesCountsPendingAndSummaries(_ implementation: QueueStoreImplementation) throws {
        do {
            let queue = try implementation.open()
            defer { queue.remove() }
            let store = queue.store
            var queued = Self.row("q", sequence: 0, destination: .directory("/srv/q"))
            queued.lastError = DownloadError(.httpStatus, "HTTP 500 last time", httpStatus: 500)
            queued.total = 100
            queued.bytes = 30
            var full = Self.row("full", sequence: 0, destination: .directory("/srv/full"))
            full.lastError = DownloadError(.notEnoughDiskSpace, "the disk is full")
            full.request.priority = 5
            var running = Self.row("run", sequence: 0, status: .downloading, destination: .file("/srv/run/file.mp3"))
            running.filePath = "/srv/run/file.mp3"
            var done = Self.row("done", sequence: 0, status: .completed)
            done.filePath = "/srv/done.mp3"
            for record in [queued, full, running, done, Self.row("paused", sequence: 0, status: .paused)] {
                var saved = record
                saved.sequence = try store.insert(record)
                try store.update(saved)
            }

            #expect(try store.ids(withStatus: .queued) == ["q", "full"])
            #expect(try store.ids(withStatus: .failed) == [])
            #expect(try store.counts() == [.queued: 2, .downloading: 1, .completed: 1, .paused: 1])
            #expect(try store.owner(ofPath: "/srv/run/file.mp3") == "run")
            #expect(try store.owner(ofPath: "/srv/done.mp3") == nil)   // a finished download owns its file no more

            let pending = try store.pending()
            #expect(pending.map(\.id) == ["full", "q", "run"])   // priority first, then enqueue order
            #expect(pending[1].remaining == 70 && pending[1].folder == "/srv/q")
            #expect(pending[2].folder == "/srv/run")

            var summaries: [DownloadSummary] = []
            try store.forEachSummary { summaries.append($0) }
            #expect(summaries.map(\.id) == ["q", "full", "run", "done", "paused"])
            // A queued download's error is an earlier attempt's, unless it waits for room on its disk.
            #expect(summaries[0].error == nil && summaries[1].error == "the disk is full")
            #expect(summaries[2].filePath == "/srv/run/file.mp3" && !summaries[2].isFolder && summaries[0].isFolder)
        }
    }

    @Test(arguments: QueueStoreImplementation.all)
    func aRequestChangesOnlyBeforeItsFileIsNamed(_ implementation: QueueStoreImplementation) throws {
        do {
            let queue = try implementation.open()
            defer { queue.remove() }
            let store = queue.store
            _ = try store.insert(Self.row("new", sequence: 0))
            var named = Self.row("named", sequence: 0)
            named.sequence = try store.insert(named)
            named.filePath = "/srv/named.mp3"
            try store.update(named)

            #expect(try store.updateRequest(DownloadRequest(id: "new", url: Self.url("new"), destination: .file("/srv/other.mp3"), priority: 7,
                                                            sizeLimit: .init(bytes: 10, reason: "test"), root: "/srv", addresses: .publicOnly)))
            let new = try #require(try store.record(withID: "new"))
            #expect(new.request.destination == .file("/srv/other.mp3") && new.request.priority == 7 && new.request.root == "/srv")
            #expect(new.request.sizeLimit == .init(bytes: 10, reason: "test") && new.request.addresses == .publicOnly)
            #expect(try !store.updateRequest(DownloadRequest(id: "named", url: Self.url("named"), destination: .directory("/elsewhere"), priority: 9)))
            let kept = try #require(try store.record(withID: "named"))
            #expect(kept.request.destination == named.request.destination && kept.request.priority == 9 && kept.request.addresses == .any)
            #expect(try !store.updateRequest(DownloadRequest(id: "missing", url: Self.url("missing"), destination: .directory("/x"))))
        }
    }

    // MARK: Deletions

    @Test(arguments: QueueStoreImplementation.all)
    func forgettingTakesOnlyTheStatusesNamed(_ implementation: QueueStoreImplementation) throws {
        do {
            let queue = try implementation.open()
            defer { queue.remove() }
            let store = queue.store
            // More ids than one statement binds at once.
            let statuses: [DownloadStatus] = [.completed, .failed, .queued, .paused]
            let ids = (0..<1_200).map { DownloadID("e\($0)") }
            try store.transaction {
                for (index, id) in ids.enumerated() {
                    var record = Self.row(id, sequence: 0, status: statuses[index % statuses.count])
                    record.sequence = try store.insert(record)
                    try store.update(record)
                }
            }
            #expect(try store.forget(ids + ["missing"], ifIn: [.completed]) == 300)
            #expect(try store.forget(Array(ids.prefix(8)), ifIn: [.completed, .failed]) == 2)
            #expect(try store.forget(ids, ifIn: []) == 0)
            #expect(try store.counts() == [.failed: 298, .queued: 300, .paused: 300])
            #expect(try store.forget(withStatus: [.failed, .paused]) == 598)
            #expect(try store.forget(withStatus: []) == 0)
            #expect(try store.counts() == [.queued: 300])
        }
    }

    // MARK: The engine's notes and transactions

    @Test(arguments: QueueStoreImplementation.all)
    func metaAndTransactions(_ implementation: QueueStoreImplementation) throws {
        do {
            let queue = try implementation.open()
            defer { queue.remove() }
            let store = queue.store
            #expect(try store.meta("boot_id") == nil)
            try store.setMeta("boot_id", "one")
            try store.setMeta("boot_id", "two")
            #expect(try store.meta("boot_id") == "two")
            // Set only where there is none: the first one made stands.
            #expect(try store.meta("queue_identity", orSet: "first") == "first")
            #expect(try queue.connect().meta("queue_identity", orSet: "second") == "first")

            struct Abandoned: Error {}
            #expect(throws: Abandoned.self) {
                try store.transaction {
                    _ = try store.insert(Self.row("rolled back", sequence: 0))
                    throw Abandoned()
                }
            }
            #expect(try store.record(withID: "rolled back") == nil)
            let sequence = try store.transaction(durably: true) { try store.insert(Self.row("kept", sequence: 0)) }
            #expect(try queue.connect().record(withID: "kept")?.sequence == sequence)
        }
    }

    // MARK: Other processes

    @Test(arguments: QueueStoreImplementation.all)
    func commandsReachTheRunningProcessInOrder(_ implementation: QueueStoreImplementation) throws {
        do {
            let queue = try implementation.open()
            defer { queue.remove() }
            let running = queue.store
            let other = try queue.connect()
            let before = try running.changeCounter()
            let first = try other.post([.pause("a")])
            let second = try other.post([.setPriority("b", 4)])
            let third = try other.post([.resumeAll])
            #expect(first < second && second < third)
            #expect(try running.changeCounter() != before)   // another connection wrote

            let (commands, last) = try running.commands(after: 0)
            #expect(commands == [.pause("a"), .setPriority("b", 4), .resumeAll])
            #expect(last == third)
            #expect(try running.commands(after: second).commands == [.resumeAll])
            #expect(try other.hasPendingCommands(through: first))
            try running.deleteCommands(through: second)
            #expect(try !other.hasPendingCommands(through: second))
            #expect(try other.hasPendingCommands(through: .max))
            try running.deleteCommands(through: last)
            #expect(try !other.hasPendingCommands(through: .max))
            #expect(try running.commands(after: 0).commands.isEmpty)

            // Many at once (a hand-off): in order, numbered on, the last one's number returned.
            let batch: [DownloadCommand] = [.retry("a"), .claim("a", by: 7), .claim("b", by: 7)]
            let end = try other.post(batch)
            #expect(try running.commands(after: last) == (batch, end))
            #expect(try other.post([]) == 0, "nothing posted")
        }
    }

    @Test(arguments: QueueStoreImplementation.all)
    func processesAddingAtOnceGetDistinctIDsAndSequences(_ implementation: QueueStoreImplementation) throws {
        do {
            let queue = try implementation.open()
            defer { queue.remove() }
            _ = try queue.store.insert(Self.row("existing", sequence: 0))
            let added = Locked<[[DownloadID]]>([])
            let failures = Locked<[String]>([])
            let connect = queue.connect
            // Two processes, each with its own connection, adding in batches at the same time.
            DispatchQueue.concurrentPerform(iterations: 2) { process in
                do {
                    let store = try connect()
                    for batch in 0..<10 {
                        let requests = (0..<20).map { index in
                            DownloadRequest(id: index == 0 ? "" : DownloadID("p\(process)-\(batch)-\(index)"), url: Self.url("p\(process)"),
                                            destination: index == 1 ? .file("/srv/p\(process)-\(batch).mp3") : .directory("/srv"))
                        }
                        let ids = try store.add(requests)
                        added.withLock { $0.append(ids) }
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            #expect(failures.withLock { $0 } == [])
            let ids = added.withLock { $0 }.flatMap { $0 }
            #expect(ids.count == 400 && Set(ids).count == 400)
            #expect(ids.filter { $0.rawValue.hasPrefix("d") }.count == 20)   // an empty id is given one from its sequence
            let records = try queue.store.records(withIDs: ids)
            #expect(records.count == 400 && Set(records.map(\.sequence)).count == 400)
            #expect(records.filter { $0.filePath != nil }.count == 20)   // a file destination is the file at once
            #expect(try queue.store.nextSequence() > records.map(\.sequence).max() ?? 0)
        }
    }

    // MARK: Following the queue: states by id and by owner

    @Test(arguments: QueueStoreImplementation.all)
    func statesOfDownloadsByIDs(_ implementation: QueueStoreImplementation) throws {
        do {
            let queue = try implementation.open()
            defer { queue.remove() }
            let store = queue.store
            let ids = (0..<1_200).map { DownloadID("e\($0)") }
            try store.transaction {
                for id in ids { _ = try store.insert(Self.row(id, sequence: 0)) }
            }
            var done = try #require(try store.record(withID: "e7"))
            done.restoreStatus(.completed)
            done.bytes = 1_234
            done.filePath = "/srv/e7.mp3"
            done.finalURL = "https://cdn.example.org/e7.mp3"
            done.resume = ResumeState(url: "https://cdn.example.org/e7.mp3", etag: "\"e7\"", lastModified: "Mon, 01 Dec 2025 10:00:00 GMT", total: 1_234)
            try store.update(done)
            var waiting = try #require(try store.record(withID: "e8"))
            waiting.lastError = DownloadError(.httpStatus, "HTTP 500 last time", httpStatus: 500)
            try store.update(waiting)
            var full = try #require(try store.record(withID: "e9"))
            full.lastError = DownloadError(.notEnoughDiskSpace, "the disk is full")
            try store.update(full)

            let states = Dictionary(uniqueKeysWithValues: try store.states(of: ids.reversed() + ["missing"]).map { ($0.id, $0) })
            #expect(states.count == ids.count && Set(states.keys) == Set(ids))   // those that exist
            let state = try #require(states["e7"])
            #expect(state.status == .completed && state.bytes == 1_234 && state.filePath == "/srv/e7.mp3")
            #expect(state.finalURL == "https://cdn.example.org/e7.mp3" && state.etag == "\"e7\"")
            #expect(state.lastModified == "Mon, 01 Dec 2025 10:00:00 GMT" && state.root == "/srv")
            #expect(states["e8"]?.error?.message == "HTTP 500 last time" && states["e8"]?.currentError == nil)
            #expect(states["e9"]?.currentError == "the disk is full" && states["e9"]?.error?.code == .notEnoughDiskSpace)
            #expect(try store.states(of: []).isEmpty)
        }
    }

    @Test(arguments: QueueStoreImplementation.all)
    func statesByOwnerAndChangeTime(_ implementation: QueueStoreImplementation) throws {
        do {
            let queue = try implementation.open()
            defer { queue.remove() }
            let store = queue.store
            // The owner, not the id, says whose a download is: "e-notes" is direct, "x9" an episode's.
            let owned: [(String, DownloadOwner)] = [("e1", .episode), ("d1", .direct), ("e-notes", .direct), ("a1", .artwork), ("e2", .episode),
                                                    ("x9", .episode), ("j1-t1", .job)]
            for (id, owner) in owned { _ = try store.insert(Self.row(DownloadID(id), sequence: 0, owner: owner)) }
            #expect(try store.states(ownedBy: .episode, changedSince: nil).map(\.id) == ["e1", "e2", "x9"])
            #expect(try store.states(ownedBy: .episode, changedSince: nil).allSatisfy { $0.owner == .episode })
            #expect(try store.states(ownedBy: .direct, changedSince: nil).map(\.id) == ["d1", "e-notes"])
            #expect(try store.states(ownedBy: .transcript, changedSince: nil).isEmpty)
            #expect(try store.record(withID: "j1-t1")?.request.owner == .job)
            #expect(try store.records(withIDs: ["a1"]).first?.request.owner == .artwork)

            var second = try #require(try store.record(withID: "e2"))
            second.restoreStatus(.paused)
            try store.update(second)
            let saved = try #require(try store.states(of: ["e2"]).first)
            let changed = try store.states(ownedBy: .episode, changedSince: saved.updated)
            #expect(changed.map(\.id).contains("e2"))
            #expect(changed.allSatisfy { $0.updated >= saved.updated })
            #expect(try store.states(ownedBy: .episode, changedSince: .distantFuture).isEmpty)
        }
    }

    // MARK: Helpers

    static func url(_ id: String) -> URL { URL(string: "https://example.org/\(id)")! }

    /// A row as the engine makes one; its fields are set here alone, so a change to the
    /// record's layout changes this suite in one place.
    static func row(_ id: DownloadID, sequence: Int, status: DownloadStatus = .queued,
                    destination: DownloadRequest.Destination = .directory("/srv"), owner: DownloadOwner = .direct) -> DownloadRecord {
        var record = DownloadRecord(request: DownloadRequest(id: id, url: url(id.rawValue), destination: destination, root: "/srv", owner: owner),
                                    sequence: sequence, host: "example.org")
        record.restoreStatus(status)
        return record
    }
}
