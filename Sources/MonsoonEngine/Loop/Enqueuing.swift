import FoundationEssentials
import MonsoonStore

/// What adding a batch of downloads decides apart from the loop: the checks before anything
/// changes (on the transfer thread) and the rows' insert (on the disk worker). Stateless: the
/// loop passes what it knows, and performs the answer.
enum Enqueuing {
    /// What the disk worker wrote for an enqueue.
    struct Inserted: Sendable {
        var records: [DownloadRecord] = []
        var adopted: RestoreReader.NewRows = ([], nil)
    }

    /// Why a batch is refused before anything changes (nil: it may be added): ids, schemes,
    /// shared part files.
    /// - Parameters:
    ///   - known: whether a download of that id exists.
    ///   - pathOwner: which download writes to a path already (without a store; with one, the
    ///     disk worker checks the rows in the inserting transaction).
    static func refusal(of requests: [DownloadRequest], replacing: Bool, persistent: Bool,
                        known: (DownloadID) -> Bool, pathOwner: (String) -> DownloadID?) -> DownloadManagerError? {
        var seen = Set<DownloadID>()
        var paths: [String: DownloadID] = [:]
        for request in requests {
            if !request.id.rawValue.isEmpty {
                if !replacing && (known(request.id) || seen.contains(request.id)) { return .duplicate(request.id) }
                seen.insert(request.id)
            }
            if case .discard = request.destination, persistent {
                return .invalidRequest(request.id, "a download that writes nothing is not kept in a queue: use a manager without a database")
            }
            if let refusal = DownloadRequest.refusal(of: request.url) { return .invalidRequest(request.id, refusal) }
            // Two downloads must never share a part file: one would truncate the other's bytes.
            if case .file(let path) = request.destination {
                if let refusal = LocalFile.lengthRefusal(of: path) { return .invalidRequest(request.id, refusal) }
                if let other = paths[path] ?? (persistent ? nil : pathOwner(path)), other != request.id {
                    return .invalidRequest(request.id, "download \(other) already writes to \(path)")
                }
                paths[path] = request.id
            }
        }
        return nil
    }

    /// How a batch goes in (`plan`): what to insert, the id each request answers with (nil: its
    /// inserted row's), the downloads replaced, and the machine's refusals for the core to report.
    struct Plan {
        var inserts: [DownloadRequest] = []
        var answers: [DownloadID?] = []
        var replaced: [DownloadRecord] = []
        var refused: [(DownloadID, DownloadRecord.StateMachine.Action)] = []
    }

    /// Transfer thread: a request for a download whose file is being placed replaces it once it
    /// lands (answering with its id); any other with an id known replaces that download.
    static func plan(_ requests: [DownloadRequest], records: inout RecordTable) -> Plan {
        var plan = Plan()
        for request in requests {
            let id = request.id
            if !id.rawValue.isEmpty, records[id]?.placing == true, let action = records.update(id, { $0.handle(.replaceRequested(request)) }) {
                if case .refuse = action { plan.refused.append((id, action)) }
                if case .deferred = action {
                    plan.answers.append(id)
                    continue
                }
            }
            if !id.rawValue.isEmpty, let old = records[id] { plan.replaced.append(old) }
            plan.inserts.append(request)
            plan.answers.append(nil)
        }
        return plan
    }

    /// Disk worker: the rows, numbered and inserted (with a store), each with the bytes its part
    /// already holds; first the rows other processes added after `after`, and the deletions of
    /// the downloads replaced, in the same transaction.
    static func insert(_ requests: [DownloadRequest], into store: (any QueueStore)?, replacing deletions: [(DownloadID, Int)],
                       adoptingAfter after: Int) -> Result<Inserted, DownloadManagerError> {
        var written = Inserted()
        // Numbered in place below: a second array of the batch's records would double the
        // peak of a large enqueue (at 8,000 downloads, 7 MB more).
        written.records = requests.map { request in
            var record = DownloadRecord(request: request, sequence: 0, host: HostKey.of(request.url))
            if case .file(let path) = request.destination {
                record.filePath = path
                if let size = PartFile.size(at: PartFile.path(for: path)) { record.bytes = size }
            }
            return record
        }
        guard let store else { return .success(written) }
        do {
            // One transaction for the whole batch: a hundred thousand rows in one commit.
            try store.transaction {
                for (id, sequence) in deletions { try store.delete(id, sequence: sequence) }
                written.adopted = try RestoreReader.newRows(in: store, after: after)
                var next = try store.nextSequence()
                for index in written.records.indices {
                    let request = written.records[index].request
                    if case .file(let path) = request.destination, let other = try store.owner(ofPath: path), other != request.id {
                        throw DownloadManagerError.invalidRequest(request.id, "download \(other) already writes to \(path)")
                    }
                    let automatic = request.id.rawValue.isEmpty
                    while true {
                        written.records[index].sequence = next
                        if automatic { written.records[index].request.id = DownloadID("d\(next)") }
                        next += 1
                        do {
                            _ = try store.insert(written.records[index])   // its sequence is the one set above
                            break
                        } catch let error as StoreError where error.isConstraintViolation {
                            // `d<N>` already taken by an explicit id: take the next number.
                            if automatic { continue }
                            throw DownloadManagerError.duplicate(request.id)
                        }
                    }
                }
            }
            return .success(written)
        } catch let refusal as DownloadManagerError {
            return .failure(refusal)
        } catch {
            return .failure(.storage("could not save the downloads", cause: error))
        }
    }
}
