import CCurl
import Foundation

/// The disk reserve, before and during transfers: downloads start only when what they still
/// need fits beside the running ones, a write never eats into the reserve as last measured,
/// and a download that runs out of room waits, queued with its part, until there is room again.
extension EngineCore {
    /// What the running downloads on `volume` still expect to write (those of unknown size count
    /// nothing: their writes are checked as they come).
    func committedBytes(on volume: Volume, excluding excluded: Transfer? = nil) -> Int {
        var sum = 0
        for transfer in running.values where transfer.limits.volume === volume && transfer !== excluded {
            if let expected = transfer.progress.total ?? transfer.progress.expected { sum += max(0, expected - transfer.progress.fileSize) }
        }
        return sum
    }

    /// Before a byte is asked for: what a download about to start still needs must fit beside what
    /// the running downloads on the same disk still need, above the reserve (unknown sizes count
    /// nothing here; their writes are checked as they come).
    /// - Returns: whether it starts, and on which disk (nil: not measured); when it does not, it
    ///   gave its slot back, then failed (a read-only disk) or waits, queued, for room.
    func roomToStart(_ id: DownloadID, _ record: DownloadRecord, _ ready: StartPreparation.Ready, known: Int?, expected: Int?) -> (starts: Bool, volume: Volume?) {
        guard let measured = ready.space else { return (true, nil) }
        let folder = record.request.destination.folder
        if measured.readOnly {
            scheduler.releaseStartingSlot(id)
            fail(id, DownloadError(.fileSystem, "the disk holding \(folder) is mounted read-only: nothing can be written there; "
                                   + "download to another folder (-o), or remount it read-write"))
            return (false, nil)
        }
        let disk = space.volume(for: measured, folder: folder, reserve: configuration.diskReserve, now: configuration.clock.now,
                                idle: !ready.spaceReused && !running.values.contains { $0.limits.volume?.id == measured.volume },
                                measuredNow: !ready.spaceReused)
        // A length a server gave refuses a start; a length the caller expects (a feed's, which may
        // be anything) only defers it while other downloads write to the disk: with the disk to
        // itself, it is asked for, and the response's own length decides (a huge bogus one must not
        // keep an episode from ever being asked for).
        let needed = expected.map { max(0, $0 - ready.plan.offset) }
        let committed = committedBytes(on: disk)
        let fits = SpacePolicy.fits(needed: needed ?? 0, allowance: disk.allowance, committed: committed)
        let othersWrite = running.values.contains { $0.limits.volume === disk }
        let full = !SpacePolicy.fits(needed: 0, allowance: disk.allowance, committed: committed)
        guard (fits || (known == nil && !othersWrite)) && !full else {
            scheduler.releaseStartingSlot(id)
            let message = Self.spaceMessage(folder: disk.folder, needed: needed, committed: committed, allowance: disk.allowance,
                                            reserve: configuration.diskReserve, stoppedAt: nil)
            holdForSpace(id, DownloadError(.notEnoughDiskSpace, message), volume: disk.id, needed: needed ?? SpacePolicy.unknownSizeNeed,
                         trusted: known != nil || full)
            return (false, disk)
        }
        return (true, disk)
    }

    /// Once a turn: measures the disks that paused transfers wait for at once, and every
    /// `SpacePolicy.measureInterval` those that downloads write to or wait for.
    func checkSpace(now: Date) {
        for transfer in running.values where transfer.state.paused.contains(.space) {
            if let volume = transfer.limits.volume { space.measure(volume, inbox: inbox) }
        }
        guard now.timeIntervalSince(lastSpaceCheck) >= SpacePolicy.measureInterval else { return }
        lastSpaceCheck = now
        var busy = Set(space.holds.values.compactMap(\.volume))
        for transfer in running.values { if let volume = transfer.limits.volume { busy.insert(volume.id) } }
        for id in busy {
            if let volume = space.volumes[id], now.timeIntervalSince(volume.measuredAt) >= SpacePolicy.measureInterval { space.measure(volume, inbox: inbox) }
        }
    }

    /// A measurement of disk `id` came back (nil: it could not be made): the allowance is set
    /// anew, transfers paused for room go on or stop, and held downloads that fit now are queued.
    func spaceMeasured(_ id: UInt64, _ free: Int?, writtenAtRequest: Int) {
        guard let volume = space.volumes[id] else { return }
        volume.measuring = false
        volume.measuredAt = configuration.clock.now
        if let free {
            volume.allowance = SpacePolicy.allowance(free: free, reserve: configuration.diskReserve, writtenSinceRequest: volume.written - writtenAtRequest)
        } else {
            // The disk cannot be measured any more: writes go on, and a full disk still stops
            // them (ENOSPC), with the part kept.
            volume.allowance = Int.max / 4
        }
        for transfer in running.values where transfer.limits.volume === volume && transfer.state.paused.contains(.space) {
            let action = transfer.handle(.resumed(.space))
            if transfer.state.spaceWanted > volume.allowance {
                transfer.abort(DownloadError(.notEnoughDiskSpace, Self.spaceMessage(
                    folder: volume.folder, needed: nil, committed: 0, allowance: volume.allowance, reserve: configuration.diskReserve,
                    stoppedAt: transfer.progress.fileSize)))
            }
            // curl delivers the held bytes again: written now, or refused once aborted.
            if case .goOn = action { transfer.goOn() }
        }
        releaseSpaceHolds()
    }

    /// Keeps a download queued, out of the scheduler's way, until its disk has room for what it
    /// still needs (`releaseSpaceHolds`), or the user retries it; says why in its error.
    /// - Parameter trusted: `needed` comes from the disk itself or a server's length; false for a
    ///   caller's expected size, which may be wrong: such a hold is let go to try once its disk has
    ///   no other download to make room for.
    func holdForSpace(_ id: DownloadID, _ error: DownloadError, volume: UInt64?, needed: Int, trusted: Bool = true) {
        guard let key = records.update(id, { record -> (QueueIndex.Key, String, String?) in
            record.lastError = error
            return (record.queueKey, record.host, record.answeredHost ?? record.finalURL.flatMap(Self.hostKey(text:)))
        }) else { return }
        space.holds[id] = SpaceHold(key: key.0, hosts: hostPair(host: key.1, answered: key.2), volume: volume, needed: max(1, needed), trusted: trusted)
        move(id, .holdForSpace)
    }

    /// Queues again, in queue order, the held downloads that fit on their disk now.
    func releaseSpaceHolds() {
        guard !space.holds.isEmpty else { return }
        var byVolume: [UInt64: [(id: DownloadID, key: QueueIndex.Key, needed: Int)]] = [:]
        for (id, hold) in space.holds {
            if let volume = hold.volume { byVolume[volume, default: []].append((id, hold.key, hold.needed)) }
        }
        for (volumeID, held) in byVolume {
            guard let volume = space.volumes[volumeID] else { continue }
            let ordered = held.sorted { $0.key < $1.key }
            let released = SpacePolicy.releasable(ordered.map { (id: $0.id, needed: $0.needed) }, allowance: volume.allowance,
                                                  committed: committedBytes(on: volume))
            for id in released { letGoOfSpaceHold(id) }
            // The disk to itself, and still no room by the caller's reckoning: the first held on a
            // length only expected is asked for, and the server's own length decides.
            if released.isEmpty, !running.values.contains(where: { $0.limits.volume === volume }),
               let untried = ordered.first(where: { space.holds[$0.id]?.trusted == false }) {
                letGoOfSpaceHold(untried.id)
            }
        }
    }

    /// Back in the queue: the start checks the room again.
    func letGoOfSpaceHold(_ id: DownloadID) {
        guard let hold = space.holds.removeValue(forKey: id), runs(id) else { return }
        scheduler.queue.insert(id, key: hold.key, hosts: hold.hosts)
        scheduler.needsScheduling = true
    }

    /// Why a download cannot start or go on for lack of room on the disk holding `folder`.
    /// - Parameters:
    ///   - needed: what it still needs (nil: unknown); `committed`: what the running downloads
    ///     there still need; `allowance`: what may still be written before the reserve.
    ///   - stoppedAt: the part's size, when a running download stopped.
    static func spaceMessage(folder: String, needed: Int?, committed: Int, allowance: Int, reserve: Int, stoppedAt: Int?) -> String {
        let free = max(0, allowance + reserve)
        var text = "not enough disk space on the disk holding \(folder.isEmpty ? "." : folder): "
        if let needed {
            text += "\(ByteCount.format(needed)) needed"
            if committed > 0 { text += " beside \(ByteCount.format(committed)) for the downloads running there" }
            text += " and a \(ByteCount.format(reserve)) reserve, \(ByteCount.format(free)) free"
        } else {
            text += "\(ByteCount.format(free)) free and a \(ByteCount.format(reserve)) reserve that must stay free"
        }
        if let stoppedAt { text += "; stopped at \(ByteCount.format(stoppedAt)), the part kept" }
        return text + "; free some space, then run again to resume"
    }
}
