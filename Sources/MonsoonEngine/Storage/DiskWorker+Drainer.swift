import Foundation

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
            var segment: [Work] = []
            for item in items {
                switch item {
                case .job(let body):
                    run(segment)
                    segment.removeAll()
                    body(connection.store)
                case .publish, .then:
                    break
                default:
                    segment.append(item)
                }
            }
            run(segment)
            for item in items {
                switch item {
                case .publish(let events):
                    hub.send(events)
                case .then(let body):
                    body(connection.unreported)
                    connection.unreported = nil
                default:
                    break
                }
            }
        }

        /// What a run of work came to, answered to the loop once it is committed.
        private struct Answers {
            var saved: [DownloadID] = []
            var prepared: [(BodyPreparation, Choice)] = []
            var starts: [(DownloadID, StartPreparation.Outcome)] = []
        }

        /// Saves a run of rows in one transaction (flushed to disk when a completion or a
        /// checkpoint reset is among them), then opens the parts prepared in it and answers the loop.
        private func run(_ segment: [Work]) {
            guard !segment.isEmpty else { return }
            var answers = Answers()
            if let store = connection.store {
                let durably = segment.contains { item in
                    switch item {
                    case .prepare(let preparation): preparation.durably
                    case .save(_, let durably): durably
                    default: false
                    }
                }
                do {
                    try store.transaction(durably: durably) {
                        for item in segment { try perform(item, store: store, into: &answers) }
                    }
                } catch {
                    report(error)
                    answers = Self.failed(segment, answers, error)
                }
            } else {
                // Without a store only the disk work is left (no saves are submitted).
                for item in segment { perform(item, into: &answers) }
            }
            if !answers.starts.isEmpty { inbox.post { [starts = answers.starts] loop in for (id, outcome) in starts { loop.startPrepared(id, outcome) } } }
            // Only now, with the rows committed (and flushed, for a reset checkpoint), the parts.
            let outcomes = answers.prepared.map { open($0.0, $0.1) }
            if !outcomes.isEmpty {
                let posted = inbox.post { loop in for (id, attempt, outcome) in outcomes { loop.bodyPrepared(id, attempt: attempt, outcome) } }
                // The engine has shut down: the parts stay for a later run.
                if !posted { for case (_, _, .ready(let fd, _)) in outcomes { close(fd) } }
            }
            if !answers.saved.isEmpty { inbox.post { [saved = answers.saved] in $0.rowsSaved(saved) } }
        }

        private func perform(_ item: Work, store: DownloadStore, into answers: inout Answers) throws {
            switch item {
            case .save(let row, _):
                try store.update(row)
                answers.saved.append(row.request.id)
            case .saveProgress(let id, let sequence, let bytes, let total, let checkpoint):
                try store.updateProgress(id: id, sequence: sequence, bytes: bytes, total: total, checkpoint: checkpoint)
            case .delete(let id, let sequence):
                try store.delete(id, sequence: sequence)
            case .prepare(let preparation):
                // The row first, with its name (so a killed run finds the part).
                let choice = try choose(preparation) { try store.owner(ofPath: $0) }
                if let path = choice.path {
                    var row = preparation.row
                    row.filePath = path
                    try store.update(row)
                }
                answers.prepared.append((preparation, choice))
            case .prepareStart(let preparation):
                answers.starts.append((preparation.id, Self.start(preparation) { try store.record(withID: $0) }))
            case .removeFiles(let paths):
                for path in paths { PartFile.remove(path) }
            case .publish, .then, .job:
                break
            }
        }

        private func perform(_ item: Work, into answers: inout Answers) {
            switch item {
            case .prepareStart(let preparation):
                answers.starts.append((preparation.id, Self.start(preparation) { _ in nil }))
            case .prepare(let preparation):
                let claimedPaths = self.claimedPaths
                let choice = choose(preparation) { path in claimedPaths.withLock { $0[path] } }
                if let path = choice.path { claimedPaths.withLock { $0[path] = preparation.row.request.id } }
                answers.prepared.append((preparation, choice))
            case .removeFiles(let paths):
                for path in paths { PartFile.remove(path) }
            case .save, .saveProgress, .delete, .publish, .then, .job:
                break
            }
        }

        /// The answers when the run's transaction failed: nothing of it was saved, and
        /// everything in it still gets an answer (nothing waits forever).
        private static func failed(_ segment: [Work], _ answers: Answers, _ error: Error) -> Answers {
            var result = Answers()
            let failure = DownloadError(.fileSystem, "could not save the download in the database: \(error); the part file is kept")
            let chosen = Dictionary(answers.prepared.map { ($0.0.attempt, $0.1.path) }, uniquingKeysWith: { first, _ in first })
            let answered = Dictionary(answers.starts, uniquingKeysWith: { first, _ in first })
            for item in segment {
                switch item {
                case .prepare(let preparation):
                    result.prepared.append((preparation, Choice(path: chosen[preparation.attempt] ?? nil, error: failure)))
                case .prepareStart(let preparation):
                    // A read that worked stands; the rest are answered with the error.
                    result.starts.append((preparation.id, answered[preparation.id] ?? .failed(ErrorBox(error: error))))
                case .removeFiles(let paths):
                    for path in paths { PartFile.remove(path) }   // disk work, not rolled back: done all the same
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
            return .ready(StartPreparation.plan(record, diskReserve: preparation.diskReserve))
        }

        private struct Choice {
            var path: String?
            var error: DownloadError?
        }

        /// The file's path: the one it has, or a free name in its folder (the response's name, or
        /// "name (2).ext" when another download holds it or a file of that name is already there);
        /// and whether the rest of the body has room there.
        private func choose(_ preparation: BodyPreparation, owner: (String) throws -> DownloadID?) rethrows -> Choice {
            let id = preparation.row.request.id
            let path: String
            if let existing = preparation.row.filePath {
                path = existing
            } else if let (folder, name) = preparation.name {
                var candidate = (folder as NSString).appendingPathComponent(name)
                var counter = 2
                while try (owner(candidate).map { $0 != id } ?? false) || PartFile.exists(candidate) || PartFile.exists(PartFile.path(for: candidate)) {
                    // Numbered before a real extension only ("Ep. 5" is not "Ep" plus " 5").
                    let ext = FileNaming.nameExtension(name).map { String(name.suffix($0.count)) } ?? ""
                    let stem = ext.isEmpty ? name : String(name.dropLast(ext.count + 1))
                    let numbered = ext.isEmpty ? "\(stem) (\(counter))" : "\(stem) (\(counter)).\(ext)"
                    candidate = (folder as NSString).appendingPathComponent(numbered)
                    counter += 1
                }
                path = candidate
            } else {
                return Choice(path: nil, error: DownloadError(.fileSystem, "the download has no file to write to"))
            }
            if let total = preparation.total,
               let free = FileSystem.freeSpace(at: FileSystem.nearestExistingFolder((path as NSString).deletingLastPathComponent)),
               free < (total - preparation.offset) + preparation.diskReserve {
                let message = EngineLoop.diskSpaceMessage(needed: total - preparation.offset, free: free, reserve: preparation.diskReserve)
                return Choice(path: path, error: DownloadError(.notEnoughDiskSpace, message))
            }
            return Choice(path: path, error: nil)
        }

        /// Opens the part at the preparation's offset (storing the resume state with a new one).
        private func open(_ preparation: BodyPreparation, _ choice: Choice) -> (DownloadID, ObjectIdentifier, BodyPreparation.Outcome) {
            let outcome: BodyPreparation.Outcome
            if let path = choice.path, choice.error == nil {
                do {
                    let fd = try PartFile.open(PartFile.path(for: path), at: preparation.offset)
                    if let state = preparation.newState { PartFile.writeState(state, fd: fd) }
                    outcome = .ready(fd: fd, path: path)
                } catch {
                    outcome = .failed(error, path: path)
                }
            } else {
                outcome = .failed(choice.error ?? DownloadError(.fileSystem, "the download has no file to write to"), path: choice.path)
            }
            return (preparation.row.request.id, preparation.attempt, outcome)
        }

        private func report(_ error: Error) {
            if connection.unreported == nil { connection.unreported = error }
            let box = ErrorBox(error: error)
            inbox.post { $0.storeError = box.error }
        }
    }
}
