import CCrypto
import CCurl
import FoundationEssentials

/// Where a download's body goes, decided at its first byte, and the disk worker's answer for
/// the part it goes to. The transfer decides with its head, its phase and the record it is
/// handed; what only the loop can do (the record's machine, asking for the part) is returned.
extension Transfer {
    /// What the loop does once the head was decided on.
    enum FirstByte {
        /// Decided here (counted, discarded, cut short): nothing more.
        case done
        /// The body goes to a part: the download's machine is told, then the part is asked for
        /// (`asking`), unless it is held back until the body shows whether it comes whole.
        case prepare(BodyPreparation, asking: Bool)
    }

    /// Decides where the body goes, from the head and what `record` knows, and sets `record` as
    /// it is from now on. Called from curl's write callback (or at the end for a body-less answer).
    /// - Parameters:
    ///   - table: where a body waiting for its part is kept, and the part epochs.
    ///   - space: whether the announced rest fits beside the other running downloads.
    func decideBody(_ record: inout DownloadRecord, table: TransferTable, space: SpaceGovernor, diskReserve: Int, now: Date) -> FirstByte {
        guard let id = downloadID else { return .done }
        switch BodyDecision.decide(head: head, plan: plan, state: record.resume, expectedMediaType: record.request.expectedMediaType) {
        case .discard:
            handle(.decided(.discard))
        case .fail(let error):
            abort(error)
        case .restartFresh(let reason):
            handle(.abort(.restart(reason: reason)))
        case .write(_, let total) where { if case .discard = record.request.destination { true } else { false } }():
            // Nothing to name, check or create: the body is counted (and hashed).
            if case .discard(let checksum) = record.request.destination, checksum { progress.digest = monsoon_sha256_new() }
            record.total = total
            record.bytes = 0
            record.finalURL = easy.string(CURLINFO_EFFECTIVE_URL)
            progress.fileSize = 0
            progress.total = total
            handle(.decided(.count))
        case .write(let offset, let total):
            if let total, total > limits.maxFileBytes {
                abort(limits.tooLarge(announced: total))
                return .done
            }
            // The length is known now: the rest must fit beside the other running downloads.
            if let total, let error = space.shortfall(of: self, needed: total - offset, running: table.running.values) {
                // Held for what it really needs, and refused before a byte again until that fits.
                progress.total = total
                record.total = total
                abort(error)
                return .done
            }
            var newState: ResumeState?
            if offset == 0 || record.resume == nil {
                newState = ResumeState(url: record.request.url.absoluteString, etag: head.etag, lastModified: head.lastModified, total: total)
                record.startPartOver(epoch: table.nextPartEpoch())
                record.resume = newState
            }
            record.finalURL = easy.string(CURLINFO_EFFECTIVE_URL)
            record.total = total
            record.bytes = offset
            // Hashed as it is written only from its first byte: the digest must be the whole file's.
            if offset == 0, record.request.owner.hashesBody, progress.digest == nil { progress.digest = monsoon_sha256_new() }
            // When a part with a checkpoint starts over, the reset is flushed before a byte of
            // the new part exists, so a power cut can never pair new bytes with an older, higher
            // checkpoint. A new download has no checkpoint to undo: an ordinary commit does.
            let durably = offset == 0 && record.checkpointResetPending
            record.checkpointResetPending = false
            // The name, the space check, the row and the part happen on the disk worker; curl
            // holds the body meanwhile (the write callback pauses the transfer).
            handle(.decided(.part))
            progress.fileSize = offset
            progress.total = total
            table.preparing[id] = self
            var preparation = BodyPreparation(
                row: record, attempt: ObjectIdentifier(self), contentDisposition: head.contentDisposition,
                contentType: head.contentType, finalURL: record.finalURL, offset: offset, total: total,
                newState: offset == 0 ? newState : nil, durably: durably, diskReserve: diskReserve)
            if offset == 0, head.status == 200, let answer = warcExchanges?.last { preparation.warcHead = WARCHeadAttribute.encode(answer) }
            // A small file may come whole before its part is needed: then it is written in one pass.
            return .prepare(preparation, asking: !holdsPart(preparation, running: table.runs(self), now: now))
        }
        return .done
    }

    /// Whether the part `preparation` asks for can wait: a fresh file of a known size that fits
    /// the buffer and the budget, to be named in its folder (so no row holds a name for it yet).
    /// Not with a WARC, whose records are written as the file is placed.
    private func holdsPart(_ preparation: BodyPreparation, running: Bool, now: Date) -> Bool {
        guard running, warcExchanges == nil, preparation.offset == 0, !preparation.durably, preparation.isToBeNamed,
              let total = preparation.total, total > 0, total <= Self.earlyLimit, let budget = early.budget,
              EarlyBudget.charge(total) <= budget.available, early.buffer == nil else { return false }
        handle(.partHeld(preparation, since: now))
        return true
    }

    /// How long a body may wait in memory for the rest of it before its part is asked for: what a
    /// killed run may lose of a slow small file.
    static let heldPartSeconds: TimeInterval = 1

    /// The part held back since before `now - heldPartSeconds`, to be asked for now (nil: none).
    func heldPartDue(now: Date) -> BodyPreparation? {
        guard let wait = state.phase.partWait, wait.held != nil, now.timeIntervalSince(wait.heldSince) >= Self.heldPartSeconds,
              case .askForPart(let preparation) = handle(.partWanted) else { return nil }
        return preparation
    }

    /// The disk worker's answer for the part: writes what came meanwhile into it and lets curl go
    /// on, or cuts the attempt short; one stopped meanwhile lets the answer go (`.ignored`).
    /// - Returns: what the phase said; `.finish` for an attempt that ended meanwhile.
    func partAnswered(_ outcome: BodyPreparation.Outcome, placer: Placer) -> Action {
        var action: Action
        switch outcome {
        case .ready(let fd, let path):
            action = handle(.partReady)
            if case .ignored = action { break }
            part.fd = fd
            part.path = PartFile.path(for: path)
            part.writebackStart = progress.fileSize
            part.checkpoint.requested = progress.fileSize
            writeEarly()
        case .failed(let error, _, let transient):
            action = handle(.partFailed(error, transient: transient))
            if case .ignored = action { break }
            discardEarly()
        }
        switch action {
        case .ignored:
            // Stopped meanwhile (paused, removed, shut down): the part stays for a later attempt.
            discardEarly()
            if case .ready(let fd, _) = outcome { placer.closePart(fd) }
        case .goOn:
            // curl delivers the held bytes (perhaps before this returns); an aborted transfer ends.
            goOn()
        case .none, .pause, .askForPart, .awaitPart, .finish:
            // Its body all fitted in `early`, another reason holds it, or it ended (the loop finishes it).
            break
        }
        return action
    }

    /// The whole body came into `early` before its part was asked for: it is the file.
    func wholeBodyCame(table: TransferTable) {
        if let id = downloadID { table.preparing[id] = nil }
        progress.fileSize = early.count
        progress.thisAttempt = early.count
    }
}
