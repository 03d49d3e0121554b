import FoundationEssentials
import Glibc

extension DiskWorker {
    /// The worker's side: everything here runs on its serial queue.
    final class Drainer: Sendable {
        let connection: Connection
        let inbox: EngineInbox
        let hub: EventHub
        let claimedPaths = Locked<[String: DownloadID]>([:])

        init(connection: Connection, inbox: EngineInbox, hub: EventHub) {
            self.connection = connection
            self.inbox = inbox
            self.hub = hub
        }

        /// Takes everything waiting: the longer the queue, the more rows share a transaction.
        /// Rows are saved in one transaction per run between jobs; then the events and `then`s
        /// go out, in order (each after the rows submitted before it, and the later ones too).
        func drain(_ items: [Work]) {
            // Where each run that failed to save started and ended, for the `then`s after them.
            var failures: [(range: Range<Int>, error: Error)] = []
            var segment: [Work] = []
            var start = 0
            func flush(upTo end: Int) {
                if let error = run(segment) { failures.append((start..<end, error)) }
                segment.removeAll()
                start = end
            }
            for (index, item) in items.enumerated() {
                switch item {
                case .job(let body):
                    flush(upTo: index)
                    body(connection.store)
                    start = index + 1
                case .publish, .then:
                    break
                default:
                    segment.append(item)
                }
            }
            flush(upTo: items.count)
            // Each `then` hears of a failure to save what was submitted between the previous
            // `then` and itself: its own command's rows, not others'.
            var since = 0
            for (index, item) in items.enumerated() {
                switch item {
                case .publish(let events):
                    hub.send(events)
                case .then(let body):
                    body(failures.first { $0.range.overlaps(since..<index) }?.error)
                    since = index + 1
                default:
                    break
                }
            }
        }

        /// What a run of work came to, answered to the loop once it is committed.
        private struct Answers {
            var saved: [DownloadID] = []
            var deleted: [(DownloadID, Int)] = []
            /// Files to delete once the rows are committed, each with its root.
            var removals: [(path: String, root: String?)] = []
            var prepared: [(BodyPreparation, Choice)] = []
            var starts: [(DownloadID, StartPreparation.Outcome)] = []
        }

        /// Saves a run of rows, then opens the parts prepared in it and answers the loop.
        ///
        /// When the run must be flushed (a completion is among its rows), the parts that need no
        /// flush go first, in a transaction of their own: a transfer waiting for its part (curl
        /// holds its body meanwhile) never waits for another download's `fdatasync`. Their rows
        /// are no other item's in the run, so the order of each row's saves stands.
        /// - Returns: why the rows could not be saved, if they could not.
        @discardableResult
        private func run(_ segment: [Work]) -> Error? {
            guard connection.store != nil, segment.contains(where: \.mustBeFlushed) else { return runTransaction(segment) }
            let (early, rest) = Self.partsFirst(segment)
            guard !early.isEmpty, !rest.isEmpty else { return runTransaction(segment) }
            let first = runTransaction(early)
            let second = runTransaction(rest)
            return first ?? second
        }

        /// The part preparations that can go before the rest of `segment`: not flushed
        /// themselves, and for downloads nothing else in the segment is about. None when the
        /// segment deletes files in order with its work (a part started over must be gone
        /// before anything after it looks).
        static func partsFirst(_ segment: [Work]) -> (early: [Work], rest: [Work]) {
            var counts: [DownloadID: Int] = [:]
            for item in segment {
                switch item {
                case .removeFiles(_, _, afterCommit: false): return ([], segment)
                default: if let id = item.downloadID { counts[id, default: 0] += 1 }
                }
            }
            var early: [Work] = []
            var rest: [Work] = []
            for item in segment {
                if case .prepare(let preparation) = item, !preparation.durably, counts[preparation.row.request.id] == 1 {
                    early.append(item)
                } else {
                    rest.append(item)
                }
            }
            return (early, rest)
        }

        /// Saves a run of rows in one transaction (flushed to disk when a completion or a
        /// checkpoint reset is among them), then opens the parts prepared in it and answers the loop.
        /// - Returns: why the rows could not be saved, if they could not.
        private func runTransaction(_ segment: [Work]) -> Error? {
            guard !segment.isEmpty else { return nil }
            var answers = Answers()
            var failure: Error?
            // The whole files are written (unnamed) before the transaction, which names them.
            var wholes = WholeFile.Run(segment, queue: segment.contains(where: \.isWholeFile) ? connection.queueIdentity() : nil)
            if let store = connection.store {
                let durably = segment.contains(where: \.mustBeFlushed)
                var completed: [DownloadID] = []
                do {
                    try store.transaction(durably: durably) {
                        for item in segment { try perform(item, store: store, wholes: &wholes, into: &answers) }
                        // Their folders flushed first: a row never says a file is in place before it is.
                        for row in wholes.flushFolders() {
                            try store.update(row)
                            completed.append(row.request.id)
                        }
                    }
                    wholes.rowsCommitted(completed)
                } catch {
                    report(error)
                    failure = error
                    answers = Self.failed(segment, answers, error)
                    wholes.transactionFailed(error)
                }
            } else {
                // Without a store only the disk work is left (no saves are submitted).
                for item in segment { perform(item, wholes: &wholes, into: &answers) }
                _ = wholes.flushFolders()   // rows to save come only with a store: there are none
            }
            if !answers.starts.isEmpty { inbox.send(.startsPrepared(answers.starts)) }
            if !wholes.isEmpty {
                let written = wholes.finish()
                // The engine has shut down: nobody takes the bodies back.
                if !inbox.send(.wholesWritten(written)) { for answer in written { answer.body.buffer.deallocate() } }
            }
            // Only now, with the rows committed (and flushed, for a reset checkpoint), the parts.
            // Posted before this run's `rowsSaved`: the loop then still counts every save queued
            // after a prepare as unconfirmed, which is how it knows whether one of them wrote
            // the row without the new name (`bodyPrepared`).
            let outcomes = answers.prepared.map { open($0.0, $0.1) }
            if !outcomes.isEmpty {
                let posted = inbox.send(.bodiesPrepared(outcomes))
                // The engine has shut down: the parts stay for a later run.
                if !posted { for case (_, .ready(let fd, _)) in outcomes { close(fd) } }
            }
            for removal in answers.removals { PartFile.remove(removal.path, root: removal.root) }
            if !answers.saved.isEmpty || !answers.deleted.isEmpty {
                inbox.send(.rowsSaved(answers.saved, deleted: answers.deleted))
            }
            return failure
        }

        private func perform(_ item: Work, store: any QueueStore, wholes: inout WholeFile.Run, into answers: inout Answers) throws {
            switch item {
            case .writeWhole(let whole):
                if wholes.goesThroughPart(whole) {
                    let choice = try namePart(whole.preparation, store: store)
                    wholes.choosePart(whole, path: choice.path, error: choice.error)
                } else {
                    try wholes.link(whole) { named, taken in
                        let choice = try choose(whole.preparation, named: named, taken: taken, checksSpace: false) { try store.owner(ofPath: $0) }
                        return (choice.path, choice.error)
                    }
                }
            case .save(let row, _):
                try store.update(row)
                answers.saved.append(row.request.id)
            case .saveProgress(let id, let sequence, let bytes, let total, let checkpoint):
                try store.updateProgress(id: id, sequence: sequence, bytes: bytes, total: total, checkpoint: checkpoint)
            case .delete(let id, let sequence):
                try store.delete(id, sequence: sequence)
                answers.deleted.append((id, sequence))
            case .prepare(let preparation):
                answers.prepared.append((preparation, try namePart(preparation, store: store)))
            case .prepareStart(let preparation):
                answers.starts.append((preparation.id, Self.start(preparation) { try store.record(withID: $0) }))
            case .removeFiles(let paths, let root, let afterCommit):
                if afterCommit { answers.removals += paths.map { ($0, root) } } else { for path in paths { PartFile.remove(path, root: root) } }
            case .publish, .then, .job:
                break
            }
        }

        private func perform(_ item: Work, wholes: inout WholeFile.Run, into answers: inout Answers) {
            switch item {
            case .writeWhole(let whole):
                let claimedPaths = self.claimedPaths
                let owner = { (path: String) in claimedPaths.withLock { $0[path] } }
                if wholes.goesThroughPart(whole) {
                    let choice = claimPart(whole.preparation)
                    wholes.choosePart(whole, path: choice.path, error: choice.error)
                } else {
                    // No row of it can be missing: a file already there is never its own.
                    wholes.link(whole) { named, _ in
                        let choice = choose(whole.preparation, named: named, checksSpace: false, owner: owner)
                        return (choice.path, choice.error)
                    }
                }
            case .prepareStart(let preparation):
                answers.starts.append((preparation.id, Self.start(preparation) { _ in nil }))
            case .prepare(let preparation):
                answers.prepared.append((preparation, claimPart(preparation)))
            case .removeFiles(let paths, let root, _):
                for path in paths { PartFile.remove(path, root: root) }
            case .save, .saveProgress, .delete, .publish, .then, .job:
                break
            }
        }

        /// Chooses the part's name and saves the row with it, before the part exists (so a killed
        /// run finds the part). The name sticks even when its disk is short of room.
        private func namePart(_ preparation: BodyPreparation, store: any QueueStore) throws -> Choice {
            let choice = try choose(preparation) { try store.owner(ofPath: $0) }
            if let path = choice.path {
                var row = preparation.row
                row.filePath = path
                try store.update(row)
            }
            return choice
        }

        /// Without a store: chooses the part's name and claims it in memory.
        private func claimPart(_ preparation: BodyPreparation) -> Choice {
            let claimedPaths = self.claimedPaths
            let choice = choose(preparation) { path in claimedPaths.withLock { $0[path] } }
            if let path = choice.path { claimedPaths.withLock { $0[path] = preparation.row.request.id } }
            return choice
        }

        /// The answers when the run's transaction failed: nothing of it was saved, and
        /// everything in it still gets an answer (nothing waits forever).
        private static func failed(_ segment: [Work], _ answers: Answers, _ error: Error) -> Answers {
            var result = Answers()
            let failure = DownloadError(.fileSystem, "could not save the download in the database: \(error); the part file is kept")
            // By download and attempt: a stopped attempt's transfer, freed, may give its address (and
            // so its identifier) to another download's attempt in the same segment.
            let chosen = Dictionary(answers.prepared.map { (PreparedKey($0.0), $0.1.path) }, uniquingKeysWith: { first, _ in first })
            let answered = Dictionary(answers.starts, uniquingKeysWith: { first, _ in first })
            for item in segment {
                switch item {
                case .prepare(let preparation):
                    result.prepared.append((preparation, Choice(path: chosen[PreparedKey(preparation)] ?? nil, error: failure, transient: true)))
                case .prepareStart(let preparation):
                    // A read that worked stands; the rest are answered with the error.
                    result.starts.append((preparation.id, answered[preparation.id] ?? .failed(ErrorBox(error: error))))
                case .removeFiles(let paths, let root, false):
                    for path in paths { PartFile.remove(path, root: root) }   // a part started over: done all the same
                default:
                    break
                }
            }
            return result
        }

        private static func start(_ preparation: StartPreparation, read: (DownloadID) throws -> DownloadRecord?) -> StartPreparation.Outcome {
            let record: DownloadRecord
            if let known = preparation.record {
                record = known
            } else {
                do {
                    guard let row = try read(preparation.id) else { return .missing }
                    record = row
                } catch {
                    return .failed(ErrorBox(error: error))
                }
            }
            return .ready(StartPreparation.plan(record))
        }

        private struct PreparedKey: Hashable {
            var id: DownloadID
            var attempt: ObjectIdentifier
            init(_ preparation: BodyPreparation) { (id, attempt) = (preparation.row.request.id, preparation.attempt) }
        }

        private struct Choice {
            var path: String?
            var error: DownloadError?
            /// The failure was the database's (busy, say): worth another attempt.
            var transient = false
        }

        /// The file's path: the one it has, or a free name in its folder (the response's name, or
        /// "name (2).ext" when another download holds it or a file of that name is already there);
        /// and whether the rest of the body has room there.
        /// - Parameters:
        ///   - named: the preparation's `name`, when worked out already.
        ///   - taken: whether a file at a name keeps the download from it: one there, by default; for
        ///     a whole file, one its link found there that is not its own (`WholeFile.Run.link` tries
        ///     the name first, so a free one costs no look).
        ///   - checksSpace: whether the body is still to be written (a whole file's is already: the
        ///     loop's allowance let its bytes in as they came).
        private func choose(_ preparation: BodyPreparation, named: (folder: String, name: String)?? = nil, taken: (String) -> Bool = PartFile.exists,
                            checksSpace: Bool = true, owner: (String) throws -> DownloadID?) rethrows -> Choice {
            let id = preparation.row.request.id
            let path: String
            if let existing = preparation.row.filePath {
                path = existing
            } else if let (folder, name) = named ?? preparation.name {
                var candidate = folder.joiningPath(name)
                var counter = 2
                while try (owner(candidate).map { $0 != id } ?? false) || taken(candidate)
                        || PartFile.exists(PartFile.path(for: candidate)) {
                    // Numbered before a real extension only ("Ep. 5" is not "Ep" plus " 5").
                    let ext = FileNaming.nameExtension(name).map { String(name.suffix($0.count)) } ?? ""
                    let stem = ext.isEmpty ? name : String(name.dropLast(ext.count + 1))
                    let numbered = ext.isEmpty ? "\(stem) (\(counter))" : "\(stem) (\(counter)).\(ext)"
                    candidate = folder.joiningPath(numbered)
                    counter += 1
                }
                path = candidate
            } else {
                return Choice(path: nil, error: DownloadError(.fileSystem, "the download has no file to write to"))
            }
            if let refusal = LocalFile.lengthRefusal(of: path) { return Choice(path: nil, error: DownloadError(.fileSystem, refusal)) }
            if checksSpace, let total = preparation.total,
               let free = FileSystem.freeSpace(at: FileSystem.nearestExistingFolder(path.parentPath)),
               free < (total - preparation.offset) + preparation.diskReserve {
                let message = SpaceGovernor.message(folder: path.parentPath, needed: total - preparation.offset, committed: 0,
                                                      allowance: free - preparation.diskReserve, reserve: preparation.diskReserve, stoppedAt: nil)
                return Choice(path: path, error: DownloadError(.notEnoughDiskSpace, message))
            }
            return Choice(path: path, error: nil)
        }

        /// Opens the part at the preparation's offset (storing the resume state with a new one).
        private func open(_ preparation: BodyPreparation, _ choice: Choice) -> (BodyPreparation, BodyPreparation.Outcome) {
            let outcome: BodyPreparation.Outcome
            if let path = choice.path, choice.error == nil {
                do {
                    let (fd, created) = try PartFile.open(PartFile.path(for: path), at: preparation.offset, root: preparation.row.request.root)
                    if let state = preparation.newState { PartFile.writeState(state, fd: fd) }
                    // A part made now has no head of an earlier one to drop.
                    if preparation.offset == 0, preparation.warcHead != nil || !created { PartFile.writeWARCHead(preparation.warcHead, fd: fd) }
                    outcome = .ready(fd: fd, path: path)
                } catch {
                    outcome = .failed(error, path: path, transient: false)
                }
            } else {
                outcome = .failed(choice.error ?? DownloadError(.fileSystem, "the download has no file to write to"), path: choice.path, transient: choice.transient)
            }
            return (preparation, outcome)
        }

        private func report(_ error: Error) {
            inbox.saveFailures.record(error)   // kept past shutdown, when the message below is refused
            inbox.send(.storeFailed(ErrorBox(error: error)))
        }
    }
}

extension DiskWorker.Work {
    /// Its transaction must be flushed to disk with its commit.
    var mustBeFlushed: Bool {
        switch self {
        case .prepare(let preparation): preparation.durably
        case .writeWhole(let whole): whole.completedRow != nil   // a completion
        case .save(_, let durably): durably
        default: false
        }
    }

    var isWholeFile: Bool {
        if case .writeWhole = self { return true }
        return false
    }

    /// The download it is about, when it is about one.
    var downloadID: DownloadID? {
        switch self {
        case .save(let record, _): record.request.id
        case .saveProgress(let id, _, _, _, _): id
        case .prepareStart(let preparation): preparation.id
        case .prepare(let preparation): preparation.row.request.id
        case .writeWhole(let whole): whole.preparation.row.request.id
        case .delete(let id, _): id
        case .removeFiles, .job, .publish, .then: nil
        }
    }
}
