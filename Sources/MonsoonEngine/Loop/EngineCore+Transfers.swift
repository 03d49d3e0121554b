import CCrypto
import CCurl
import Foundation

/// Starting, deciding and finishing download transfers.
extension EngineCore {
    func schedule(now: Date) {
        scheduler.needsScheduling = false
        guard !stopping else { return }
        let policy = Scheduler(maxConcurrent: configuration.maxConcurrentDownloads, maxPerHost: configuration.maxDownloadsPerHost)
        // Whole files handed to the worker hold no slot: `space.earlyBudget` bounds their bodies (and
        // their number: each is charged 64 KiB at least), and once a slow worker has it all, the next
        // bodies wait in curl for their parts, their transfers holding their slots.
        // Nothing starts before the queue is restored (`requestRestore`); fetches do.
        for entry in persistence.restoring ? [] : scheduler.select(policy, endedAwaitingParts: transfers.endedAwaitingParts, now: now) {
            // The slot is taken now; the disk worker looks at the part (and reads the row when
            // it is not in memory), then `startPrepared` starts the transfer.
            scheduler.take(entry)
            let record = records.hot[entry.id]   // one copy, for the three looks below
            if let record, case .discard = record.request.destination {
                // Nothing on disk to look at: the plan is made here.
                startPrepared(entry.id, .ready(StartPreparation.plan(record)))
            } else if let record, let ready = space.plannedStart(of: record, awaitingPart: persistence.awaitsPart(entry.id), now: now) {
                startPrepared(entry.id, .ready(ready))
            } else {
                persistence.hand(.prepareStart(StartPreparation(id: entry.id, record: record)))
            }
        }
        prefetchStarts()
        fetches.start(configuration: configuration, transfers: transfers, multi: multi)
    }

    /// Starts the attempt the disk worker planned, unless the download was paused, removed or
    /// released meanwhile.
    func startPrepared(_ id: DownloadID, _ outcome: StartPreparation.Outcome) {
        guard let entry = scheduler.starting[id] else { return }   // removed meanwhile
        guard case .ready(let ready) = outcome else {
            scheduler.releaseStartingSlot(id)
            if case .failed(let box) = outcome {
                persistence.failed(box.error)
                // The row could not be read (the database busy, say): back in the queue, its host
                // held a moment so the next turn does not ask again at once. A download paused
                // meanwhile is found so when its row is read.
                if records.hot[id].map({ $0.status == .queued }) ?? true, runs(id) {
                    scheduler.queue.insert(id, key: entry.key, hosts: entry.hosts)
                    scheduler.hold(HostPair(first: entry.hosts.first), until: configuration.clock.now.addingTimeInterval(1))
                }
            }
            return
        }
        var record = records.hot[id] ?? ready.record
        guard record.status == .queued, runs(id), !stopping else {
            scheduler.releaseStartingSlot(id)
            return
        }
        scheduler.queue.remove(key: record.queueKey)   // when paused and resumed meanwhile
        let plan = ready.plan
        if let part = ready.part {
            record.resume = plan.offset > 0 ? part.state : nil
            record.bytes = plan.offset
            record.highWater = max(record.highWater, plan.offset)
            if part.discarded { record.startPartOver(epoch: transfers.nextPartEpoch()) }
        }
        records[id] = record
        if let refusal = DownloadRequest.refusal(of: record.request.url) {
            scheduler.releaseStartingSlot(id)
            fail(id, DownloadError(.unsupportedScheme, refusal))
            return
        }
        // What the server said the file is (an earlier attempt's), else what the caller expects.
        let known = record.resume?.total ?? record.total
        let expected = known ?? record.request.expectedSize
        guard let volume = roomToStart(id, record, ready, known: known, expected: expected) else { return }
        let transfer = Transfer.download(id, record, plan: plan, expected: expected, volume: volume, engine: self)
        guard multi.add(transfer.easy) else {
            scheduler.releaseStartingSlot(id)
            fail(id, DownloadError(.network, "libcurl refused to start the transfer"))
            return
        }
        // The slot taken at selection is the transfer's now, with the hosts it counts on.
        transfer.countedHosts = entry.hosts.each
        scheduler.readAhead.remove(id)
        records.started(id)
        scheduler.starting[id] = nil
        transfers.started(transfer)
        records[id] = record
        // Saved with the first body byte (its name and status in one commit): a run killed
        // before it leaves the row queued, which is what it is.
        move(id, .start, saving: false)
    }

    /// Removes a running transfer, keeping its part file for a later resume.
    /// - Returns: false when curl could not let go of the transfer (asked from inside one of its
    ///   callbacks, by a refusal): the transfer is cut short (its callbacks answer 0 from now on)
    ///   and stopped once curl has returned (`afterCurl`); freed inside the callback, it would
    ///   leave curl a handle and a callback pointing at nothing.
    @discardableResult
    func stopTransfer(_ id: DownloadID) -> Bool {
        if let transfer = transfers.running[id], !multi.remove(transfer.easy) {
            transfer.handle(.abort(.stopped))
            transfers.afterCurl(.stop(id, transfer))
            return false
        }
        // A part being prepared is closed when it comes back, and what came for it meanwhile is
        // dropped; an ended attempt that waited for it no longer holds back a start.
        if let waiting = transfers.preparing.removeValue(forKey: id) {
            waiting.discardEarly()
            if waiting.state.phase.partWait?.ended != nil { scheduler.needsScheduling = true }
        }
        guard let transfer = transfers.running[id] else { return true }
        transfers.removeHandle(transfer.easy.raw)
        releaseSlot(id)
        placements.recordAttempt(id, transfer, keepsBody: true)
        transfer.closePart(on: placer)   // what came early was dropped with `preparing` above
        if case .writing = transfer.state.phase { records.update(id) { $0.bytes = transfer.progress.fileSize } }
        return true
    }

    /// Runs what had to wait for curl to return (`stopTransfer` from inside a callback).
    func runAfterCurl() {
        for action in transfers.takeAfterCurl() {
            switch action {
            case .stop(let id, let transfer): if transfers.running[id] === transfer { stopTransfer(id) }
            case .failRefused(let id, let error): failRefused(id, error)
            }
        }
    }

    func releaseSlot(_ id: DownloadID) {
        guard let ended = transfers.endRunning(id) else { return }
        scheduler.releaseSlot(countedOn: ended.countedHosts)
        // What it still expected to write is no longer spoken for: a held download may fit now.
        if ended.limits.volume != nil { releaseSpaceHolds() }
        // Told last: a refusal stops the transfer (`refused`), which then finds no slot to release
        // again, instead of asking the machine the same question without end.
        _ = handle(id, .attemptEnded)
    }

    /// The host that answered `transfer` at the end of its redirects, counted for the per-host
    /// limit from now on (a tracking redirector in front of a CDN: the CDN's limit holds too).
    /// - Returns: its id and name.
    @discardableResult
    func countAnsweringHost(_ transfer: Transfer) -> (id: Int, key: String)? {
        guard let url = transfer.easy.string(CURLINFO_EFFECTIVE_URL), let key = HostKey.of(text: url) else { return nil }
        let host = scheduler.hosts.id(key)
        if let id = transfer.downloadID {
            records.update(id) { $0.answeredHost = key }
            // Only while it holds a slot: a transfer that ended has been taken off the counts.
            if transfers.running[id] === transfer, !transfer.countedHosts.contains(host) {
                transfer.countedHosts.append(host)
                scheduler.count([host])
            }
        }
        return (host, key)
    }

    // MARK: - The first body byte

    /// Decides where the body goes, once the status and headers are known.
    /// Called from curl's write callback (or at the end for a body-less response).
    func decideBody(_ transfer: Transfer) {
        guard let id = transfer.downloadID else {
            transfer.handle(.abort(.stopped))
            return
        }
        // Before the record is copied out: a copy taken first would be written back below
        // without the host it sets (and its change would copy the shared fields).
        countAnsweringHost(transfer)
        guard var record = records[id] else {
            transfer.handle(.abort(.stopped))
            return
        }
        switch BodyDecision.decide(head: transfer.head, plan: transfer.plan, state: record.resume, expectedMediaType: record.request.expectedMediaType) {
        case .discard:
            transfer.handle(.decided(.discard))
        case .fail(let error):
            transfer.abort(error)
        case .restartFresh(let reason):
            transfer.handle(.abort(.restart(reason: reason)))
        case .write(_, let total) where { if case .discard = record.request.destination { return true } else { return false } }():
            // Nothing to name, check or create: the body is counted (and hashed).
            if case .discard(let checksum) = record.request.destination, checksum { transfer.progress.digest = monsoon_sha256_new() }
            record.total = total
            record.bytes = 0
            record.finalURL = transfer.easy.string(CURLINFO_EFFECTIVE_URL)
            records[id] = record
            transfer.progress.fileSize = 0
            transfer.progress.total = total
            transfer.handle(.decided(.count))
        case .write(let offset, let total):
            if let total, total > transfer.limits.maxFileBytes {
                transfer.abort(transfer.limits.tooLarge(announced: total))
                return
            }
            // The length is known now: the rest must fit beside the other running downloads.
            if let total, let error = space.shortfall(of: transfer, needed: total - offset, running: transfers.running.values) {
                // Held for what it really needs, and refused before a byte again until that fits.
                transfer.progress.total = total
                records.update(id) { $0.total = total }
                transfer.abort(error)
                return
            }
            var newState: ResumeState?
            if offset == 0 || record.resume == nil {
                newState = ResumeState(url: record.request.url.absoluteString, etag: transfer.head.etag, lastModified: transfer.head.lastModified, total: total)
                record.startPartOver(epoch: transfers.nextPartEpoch())
                record.resume = newState
            }
            record.finalURL = transfer.easy.string(CURLINFO_EFFECTIVE_URL)
            record.total = total
            record.bytes = offset
            // When a part with a checkpoint starts over, the reset is flushed before a byte of
            // the new part exists, so a power cut can never pair new bytes with an older, higher
            // checkpoint. A new download has no checkpoint to undo: an ordinary commit does.
            let durably = offset == 0 && record.checkpointResetPending
            record.checkpointResetPending = false
            records[id] = record
            // The name, the space check, the row and the part happen on the disk worker; curl
            // holds the body meanwhile (the write callback pauses the transfer).
            transfer.handle(.decided(.part))
            transfer.progress.fileSize = offset
            transfer.progress.total = total
            transfers.preparing[id] = transfer
            // Ended already (a body-less 2xx): its slot is free, and it ends once the part is ready.
            // Refused (a fault, reported): nothing is prepared for it. Still running, it is inside
            // curl's write callback, where `refused` cuts it short (aborted).
            if transfers.running[id] === transfer, case .refuse? = handle(id, .bodyPreparing) {
                // Its reset was to be flushed with the part's row, which will not be written now.
                if durably { records.update(id) { $0.checkpointResetPending = true } }
                return
            }
            var preparation = BodyPreparation(
                row: record, attempt: ObjectIdentifier(transfer), contentDisposition: transfer.head.contentDisposition,
                contentType: transfer.head.contentType, finalURL: record.finalURL, offset: offset, total: total,
                newState: offset == 0 ? newState : nil, durably: durably, diskReserve: configuration.diskReserve)
            if offset == 0, transfer.head.status == 200, let answer = transfer.warcExchanges?.last {
                preparation.warcHead = WARCHeadAttribute.encode(answer)
            }
            // A small file may come whole before its part is needed: then it is written in one pass.
            if !holdsPart(transfer, preparation) { askForPart(preparation) }
        }
    }

    /// The disk worker's answer for a part: write into it (letting curl go on), or fail the attempt.
    func bodyPrepared(_ id: DownloadID, sequence: Int, attempt: ObjectIdentifier, _ outcome: BodyPreparation.Outcome) {
        if persistence.persistent { records.saved([id]) }
        persistence.partAnswered(id)
        let transfer = transfers.preparing[id].flatMap { ObjectIdentifier($0) == attempt ? $0 : nil }
        if let transfer {
            transfers.preparing[id] = nil
            // One fewer ended attempt waits for its part: a start it held back may go now.
            if transfer.state.phase.partWait?.ended != nil { scheduler.needsScheduling = true }
            handle(id, .bodyReady)
        }
        let path: String? = switch outcome {
        case .ready(_, let chosen): chosen
        case .failed(_, let chosen, _): chosen
        }
        if let path {
            if var record = records.hot[id], record.sequence == sequence {
                // The name sticks for later attempts and runs. The worker saved the row with it;
                // saved again only if that failed, or a save queued since (still unconfirmed,
                // as every later one is here) would write the row without it.
                if record.filePath != path {
                    record.filePath = path
                    records[id] = record
                    switch outcome {
                    case .failed: persist(id)
                    case .ready: if records.hasSavesInFlight(id) { persist(id) }
                    }
                }
            } else if transfer == nil {
                // Removed meanwhile: its part, made after the removal, goes too.
                persistence.hand(.removeFiles([PartFile.path(for: path)], root: records[id]?.request.root, afterCommit: false))
                releasePath(path, of: id)
            }
        }
        guard let transfer else {
            if case .ready(let fd, _) = outcome { placer.closePart(fd) }
            return
        }
        let action: Transfer.Action
        switch outcome {
        case .ready(let fd, let path):
            action = transfer.handle(.partReady)
            if case .ignored = action { break }
            let size = transfer.progress.fileSize
            transfer.part.fd = fd
            transfer.part.path = PartFile.path(for: path)
            transfer.part.writebackStart = size
            transfer.part.checkpoint.requested = size
            transfer.writeEarly()
        case .failed(let error, _, let transient):
            action = transfer.handle(.partFailed(error, transient: transient))
            if case .ignored = action { break }
            // Its row may not have been saved: a reset checkpoint is flushed again next time.
            records.update(id) { $0.checkpointResetPending = true }
            transfer.discardEarly()
        }
        switch action {
        case .ignored:
            // Stopped meanwhile (paused, removed, shut down): the part stays for a later attempt.
            transfer.discardEarly()
            if case .ready(let fd, _) = outcome { placer.closePart(fd) }
        case .finish(let code):
            // A body-less response: its (empty) part is ready, so the attempt can end now.
            let host = records[id]?.host ?? ""
            finishDownload(id, transfer, code: code)
            report(id, host: host, transfer, code: code)
        case .goOn:
            // curl delivers the held bytes (perhaps before this returns); an aborted transfer ends.
            transfer.goOn()
        case .none, .pause, .askForPart, .awaitPart:
            // Its body all fitted in `early`, or another reason holds it.
            break
        }
    }
}
