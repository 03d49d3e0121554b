import CCurl
import FoundationEssentials

/// What this attempt comes to when it ends: the facts the lifecycle decides on, the report of it,
/// and its part let go.
extension Transfer {
    /// How this attempt ended, as facts (`DownloadLifecycle.outcome` decides what follows).
    /// - Parameters: what the download's record knew before it: the most its part ever held,
    ///   whether it has a file name, and its validators.
    func end(code: CURLcode, highWater: Int, hasFile: Bool, known: ResumeState?) -> DownloadLifecycle.AttemptEnd {
        let abort = state.phase.abort
        var end = DownloadLifecycle.AttemptEnd(
            body: state.body, abort: .init(restartReason: abort?.restartReason, error: abort?.error, isTransient: abort?.isTransient ?? false),
            status: head.status, curl: .init(code: Int(code.rawValue), text: code == CURLE_OK ? "" : errorText(code)),
            retryAfter: head.retryAfter, contentRange: head.contentRange, received: progress.fileSize, expected: progress.total,
            resumedFrom: plan.offset, highWater: highWater, hasFile: hasFile)
        end.etag = head.etag
        end.headComplete = head.isComplete
        end.lastModified = head.lastModified
        end.known = known
        return end
    }

    /// What the loop does once the attempt ended.
    enum Conclusion {
        /// Its part is still being prepared: it ends, and is reported, once the part is ready,
        /// after the part held back (`asking`) is asked for.
        case awaitPart(asking: BodyPreparation?)
        /// What the lifecycle says follows, with the record and the transfer set for it.
        case outcome(DownloadLifecycle.AttemptOutcome)
    }

    /// curl ended the attempt with `code`: what it comes to (`DownloadLifecycle.outcome`), with
    /// `record` set as it then is and its part let go unless it is to be placed; the WARC is told
    /// of it (`placements`).
    func conclude(_ code: Code, _ record: inout DownloadRecord, table: TransferTable, placements: inout Placements, placer: Placer,
                  stall: EngineConfiguration.Stall, now: Date) -> Conclusion {
        switch handle(.ended(code, bodyWhole: cameWhole(code: code))) {
        case .awaitPart(let asking): return .awaitPart(asking: asking)
        default: if case .wholeBody = state.phase { wholeBodyCame(table: table) }
        }
        let abort = state.phase.abort
        if state.body != .none {
            record.bytes = progress.fileSize
            progress.reported = progress.fileSize
        }
        let attempt = end(code: code, highWater: record.highWater, hasFile: record.filePath != nil, known: record.resume)
        let outcome = DownloadLifecycle.outcome(of: attempt, stall: stall, now: now)
        switch outcome {
        case .fail, .restartFresh: placements.recordAttempt(record.request.id, self, keepsBody: false)
        default: placements.recordAttempt(record.request.id, self, keepsBody: true)
        }
        // Progress is net: only bytes past the most the part has ever held count.
        if abort?.restartReason == nil && abort?.error == nil { record.highWater = max(record.highWater, progress.fileSize) }
        switch outcome {
        case .complete:
            // Nothing to place: the count (and the hash) is the result.
            record.checksum = progress.digest.map(FileDigest.hex(finishing:))
            record.bytes = progress.fileSize
            record.total = progress.fileSize
            record.lastError = nil
        case .placeWholePart(let total):
            // The part is placed as it is (the placer opens it).
            (progress.fileSize, progress.total) = (total, total)
            (record.total, record.bytes, record.checksum) = (total, total, nil)
        case .place: record.checksum = progress.digest.map(FileDigest.hex(finishing:))
        default: closePart(on: placer)
        }
        return .outcome(outcome)
    }

    /// What a download held for space waits for: the rest of its file, or the chunk the disk
    /// could not take.
    var spaceNeeded: Int {
        max(SpacePolicy.need(expected: progress.total ?? progress.expected, have: progress.fileSize), state.spaceWanted)
    }

    /// The run report's line for this attempt of download `id` (`error`: the download's, when it
    /// did not end complete).
    func report(_ id: DownloadID, host: String, error: DownloadError?) -> AttemptReport {
        let firstByte = easy.offset(CURLINFO_STARTTRANSFER_TIME_T)
        return AttemptReport(
            id: id, host: host, status: head.status, bytes: state.body == .none ? 0 : progress.thisAttempt, resumedFrom: plan.offset,
            timeToFirstByte: head.status > 0 && firstByte > 0 ? Double(firstByte) / 1_000_000 : nil,
            duration: Double(easy.offset(CURLINFO_TOTAL_TIME_T)) / 1_000_000,
            newConnections: easy.long(CURLINFO_NUM_CONNECTS), error: error)
    }

    /// Lets go of the part (closed on the placer's queue) and of a whole body held in memory that
    /// is not to be kept (none is, after a part was written).
    func closePart(on placer: Placer) {
        discardEarly()
        if part.fd >= 0 {
            placer.closePart(part.fd)
            part.fd = -1
        }
    }
}
