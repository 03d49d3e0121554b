import FoundationEssentials

/// The record-level changes the loop decides here, where the record lies (no copy out and back).
extension RecordTable {
    /// A refused answer of a download's machine: a fault in the loop, which the core reports.
    struct Refusal: Error, Equatable {
        let action: DownloadRecord.StateMachine.Action
    }

    /// Moves a download as the lifecycle says `event` does.
    /// - Returns: the change, or the machine's refusal; nil when there is no such download.
    mutating func move(_ id: DownloadID, _ event: DownloadLifecycle.Event) -> Result<StatusChange, Refusal>? {
        update(id) { record in
            let action = record.handle(.lifecycle(event))
            guard case .moved(let old, _) = action else { return .failure(Refusal(action: action)) }
            if record.status != .waitingToRetry { record.retryAt = nil }
            // No longer waiting for room (queued in line again, or started): it no longer says so.
            if event != .holdForSpace, record.lastError?.code == .notEnoughDiskSpace, record.status == .queued || record.status == .downloading {
                record.lastError = nil
            }
            return .success(StatusChange(old: old, new: record.status, key: record.queueKey, host: record.host,
                                         answered: record.answeredHostKey, retryAt: record.retryAt))
        }
    }

    /// What the disk worker's name for a part comes to: nothing more, a save, or (removed
    /// meanwhile) the part, made after the removal, deleted too.
    enum Naming: Equatable {
        case kept, save, orphan(root: String?)
    }

    /// The disk worker named the part of row `sequence` of `id` `path`; the name sticks for later
    /// attempts and runs. The worker saved the row with it (`saved`): saved again only if that
    /// failed, or a save queued since (still unconfirmed) would write the row without it.
    /// - Parameter stopped: no attempt waits for the part any more.
    mutating func named(_ id: DownloadID, sequence: Int, path: String, saved: Bool, stopped: Bool) -> Naming {
        guard hot[id]?.sequence == sequence else { return stopped ? .orphan(root: self[id]?.request.root) : .kept }
        let changed = update(id) { record in
            defer { record.filePath = path }
            return record.filePath != path
        } ?? false
        return changed && (!saved || hasSavesInFlight(id)) ? .save : .kept
    }

    /// A part flushed up to `length` is its checkpoint if still the same part (`epoch`), further
    /// than the last and at most `limit` (what the running attempt wrote). Returns whether it moved.
    @discardableResult
    mutating func checkpointFlushed(_ id: DownloadID, epoch: Int, length: Int, limit: Int = .max) -> Bool {
        update(id) { record in
            guard record.partEpoch == epoch, length > record.checkpoint, length <= limit else { return false }
            record.checkpoint = length
            return true
        } ?? false
    }

    /// What a failed attempt comes to (`RetryPolicy`), noted in the record: its counters and, for
    /// a retry, its error and time.
    /// - Returns: when it retries, or the error it fails with; nil when there is no such download.
    mutating func retryOrFail(_ id: DownloadID, _ failure: RetryPolicy.Failure, policy: RetryPolicy, now: Date, random: Double) -> Result<Date, DownloadError>? {
        update(id) { record in
            var failure = failure
            failure.hostAnswered = record.answeredHost != nil || record.checkpoint > 0
            switch policy.decide(failure, counters: record.counters, random: random) {
            case .retry(let delay, let counters):
                let at = now.addingTimeInterval(delay)
                (record.counters, record.lastError, record.retryAt) = (counters, failure.error, at)
                return .success(at)
            case .fail(let error, let counters):
                record.counters = counters
                return .failure(error)
            }
        }
    }

    /// Discards what the part held, for an attempt from the first byte into part `epoch`; nil: no such download.
    mutating func restartPart(_ id: DownloadID, epoch: Int) -> DownloadRecord? {
        update(id) { record in
            (record.resume, record.bytes) = (nil, 0)
            record.startPartOver(epoch: epoch)
            return record
        }
    }
}
