import FoundationEssentials
import Dispatch

/// The disk reserve: the disks downloads write to (what each may still take), the downloads held
/// until their disk has room, and what bodies held in memory may take together (`earlyBudget`).
/// It decides; `EngineCore` holds, queues or fails the downloads.
///
/// - Important: confined to the transfer thread; only `measure` leaves it, to read the free space
///   on a queue of its own (never behind a flush) and answer through the inbox.
final class SpaceGovernor {
    typealias Running = Dictionary<DownloadID, Transfer>.Values

    /// Whether a download about to start may (`roomToStart`): on which disk (nil: not measured),
    /// or it fails (read-only), or it waits for room (see `SpaceHold.trusted`).
    enum Room {
        case starts(Volume?)
        case readOnly(DownloadError)
        case noRoom(DownloadError, volume: UInt64, needed: Int, trusted: Bool)
    }

    private(set) var volumes: [UInt64: Volume] = [:]
    var holds: [DownloadID: SpaceHold] = [:]
    /// What bodies waiting in memory for their parts, or written whole (`WholeFile`), may hold.
    let earlyBudget = EarlyBudget(bytes: EarlyBudget.total)
    /// The disk each download folder was last measured on, and when: a start into a folder
    /// measured a moment ago needs no measurement (its allowance counts the writes since).
    private var folders: [String: (space: VolumeSpace, at: Date)] = [:]
    private var lastCheck = Date.distantPast
    private let gauge = DispatchQueue(label: "monsoon.space")
    private let inbox: EngineInbox
    /// Bytes that must stay free on each disk (`EngineConfiguration.diskReserve`).
    let reserve: Int
    private let reading: @Sendable (String) -> VolumeSpace?

    init(inbox: EngineInbox, reserve: Int, reading: @escaping @Sendable (String) -> VolumeSpace? = VolumeSpace.measure) {
        self.inbox = inbox
        self.reserve = reserve
        self.reading = reading
    }

    /// The loop's volume for a measurement made before an attempt: a new one from the measurement,
    /// or the one it knows. A known volume nothing writes to right now (`idle`) takes the measurement,
    /// which is fresher than its last (space the engine freed itself, a stale part removed, counts at
    /// once); one being written to keeps its allowance, which counts the writes since.
    /// - Parameter measuredNow: `space` was measured for this start (false: `recentSpace`'s).
    func volume(for space: VolumeSpace, folder: String, now: Date, idle: Bool, measuredNow: Bool = true) -> Volume {
        if measuredNow { folders[folder] = (space, now) }
        if let known = volumes[space.volume] {
            if idle && !known.measuring {
                known.allowance = space.free - reserve
                known.measuredAt = now
            }
            return known
        }
        let volume = Volume(id: space.volume, folder: folder, allowance: space.free - reserve, measuredAt: now)
        volumes[space.volume] = volume
        return volume
    }

    /// What `folder`'s disk measured last, when that was less than `SpacePolicy.measureInterval`
    /// ago; nil: it must be measured.
    func recentSpace(of folder: String, now: Date) -> VolumeSpace? {
        guard let (space, at) = folders[folder], now.timeIntervalSince(at) < SpacePolicy.measureInterval, now >= at,
              volumes[space.volume] != nil else { return nil }
        return space
    }

    /// The plan of a download that has no file yet, made on the loop without asking the disk
    /// worker: no name, so no part to look at (`awaitingPart`: one is being asked for), and its
    /// folder's disk measured less than `SpacePolicy.measureInterval` ago. Its allowance then stands
    /// as the loop keeps it (the last measurement less every byte written since), as it does for a
    /// disk being written to, which `check` measures at that interval. Most of a large queue of new
    /// downloads starts so, without a round trip each. A body discarded has nothing on disk to
    /// look at: always planned here. Nil: the disk worker plans it.
    func plannedStart(of record: DownloadRecord, awaitingPart: Bool, now: Date) -> StartPreparation.Ready? {
        if case .discard = record.request.destination { return StartPreparation.plan(record) }
        guard record.filePath == nil, !awaitingPart, let space = recentSpace(of: record.request.destination.folder, now: now) else { return nil }
        var ready = StartPreparation.Ready(record: record, plan: AttemptPlan(offset: 0, ifRange: nil))
        ready.space = space
        ready.spaceReused = true
        return ready
    }

    /// What the running downloads on `volume` still expect to write (unknown sizes count nothing).
    func committedBytes(on volume: Volume, by running: Running, excluding excluded: Transfer? = nil) -> Int {
        var sum = 0
        for transfer in running where transfer.limits.volume === volume && transfer !== excluded {
            if let expected = transfer.progress.total ?? transfer.progress.expected { sum += max(0, expected - transfer.progress.fileSize) }
        }
        return sum
    }

    /// Before a byte is asked for: what a download still needs must fit beside what the running
    /// downloads on its disk still need, above the reserve.
    /// - Parameters:
    ///   - measured: its disk, measured for this start (`reused`: a moment ago, for another); nil: not measured.
    ///   - offset: where its part goes on from; `known`: the length a server gave; `expected`: that, else the caller's.
    func roomToStart(folder: String, measured: VolumeSpace?, reused: Bool, offset: Int, known: Int?, expected: Int?,
                     now: Date, running: Running) -> Room {
        guard let measured else { return .starts(nil) }
        if measured.readOnly {
            return .readOnly(DownloadError(.fileSystem, "the disk holding \(folder) is mounted read-only: nothing can be written there; "
                                            + "download to another folder (-o), or remount it read-write"))
        }
        let disk = volume(for: measured, folder: folder, now: now,
                          idle: !reused && !running.contains { $0.limits.volume?.id == measured.volume }, measuredNow: !reused)
        // A length a server gave refuses a start; a length the caller expects (a feed's, which may
        // be anything) only defers it while other downloads write to the disk: with the disk to
        // itself, it is asked for, and the response's own length decides (a huge bogus one must not
        // keep an episode from ever being asked for).
        let needed = expected.map { max(0, $0 - offset) }
        let committed = committedBytes(on: disk, by: running)
        let fits = SpacePolicy.fits(needed: needed ?? 0, allowance: disk.allowance, committed: committed)
        let othersWrite = running.contains { $0.limits.volume === disk }
        let full = !SpacePolicy.fits(needed: 0, allowance: disk.allowance, committed: committed)
        guard (fits || (known == nil && !othersWrite)) && !full else {
            let message = Self.message(folder: disk.folder, needed: needed, committed: committed, allowance: disk.allowance,
                                       reserve: reserve, stoppedAt: nil)
            return .noRoom(DownloadError(.notEnoughDiskSpace, message), volume: disk.id,
                           needed: needed ?? SpacePolicy.unknownSizeNeed, trusted: known != nil || full)
        }
        return .starts(disk)
    }

    /// Once the length is known: why the rest of `transfer`'s file (`needed` bytes) does not fit
    /// beside the other running downloads (nil: it fits, or its disk is not measured).
    func shortfall(of transfer: Transfer, needed: Int, running: Running) -> DownloadError? {
        guard let volume = transfer.limits.volume else { return nil }
        let committed = committedBytes(on: volume, by: running, excluding: transfer)
        guard !SpacePolicy.fits(needed: needed, allowance: volume.allowance, committed: committed) else { return nil }
        return DownloadError(.notEnoughDiskSpace, Self.message(folder: volume.folder, needed: needed, committed: committed,
                                                               allowance: volume.allowance, reserve: reserve, stoppedAt: nil))
    }

    /// Once a turn: measures the disks that paused transfers wait for at once, and every
    /// `SpacePolicy.measureInterval` those that downloads write to or wait for.
    func check(now: Date, running: Running) {
        for transfer in running where transfer.state.paused.contains(.space) {
            if let volume = transfer.limits.volume { measure(volume) }
        }
        guard now.timeIntervalSince(lastCheck) >= SpacePolicy.measureInterval else { return }
        lastCheck = now
        var busy = Set(holds.values.compactMap(\.volume))
        for transfer in running { if let volume = transfer.limits.volume { busy.insert(volume.id) } }
        for id in busy {
            if let volume = volumes[id], now.timeIntervalSince(volume.measuredAt) >= SpacePolicy.measureInterval { measure(volume) }
        }
    }

    /// When the loop must wake to measure the disks downloads wait for (nil: none waits).
    var nextCheck: Date? {
        holds.isEmpty ? nil : lastCheck.addingTimeInterval(SpacePolicy.measureInterval)
    }

    /// A measurement of disk `id` came back (nil: it could not be made): the allowance is set
    /// anew, and transfers paused for room go on or stop.
    func measured(_ id: UInt64, free: Int?, writtenAtRequest: Int, now: Date, running: Running) {
        guard let volume = volumes[id] else { return }
        volume.measuring = false
        volume.measuredAt = now
        if let free {
            volume.allowance = SpacePolicy.allowance(free: free, reserve: reserve, writtenSinceRequest: volume.written - writtenAtRequest)
        } else {
            // The disk cannot be measured any more: writes go on, and a full disk still stops
            // them (ENOSPC), with the part kept.
            volume.allowance = Int.max / 4
        }
        for transfer in running where transfer.limits.volume === volume && transfer.state.paused.contains(.space) {
            let action = transfer.handle(.resumed(.space))
            if transfer.state.spaceWanted > volume.allowance {
                transfer.abort(DownloadError(.notEnoughDiskSpace, Self.message(
                    folder: volume.folder, needed: nil, committed: 0, allowance: volume.allowance, reserve: reserve,
                    stoppedAt: transfer.progress.fileSize)))
            }
            // curl delivers the held bytes again: written now, or refused once aborted.
            if case .goOn = action { transfer.goOn() }
        }
    }

    /// Takes out the holds whose downloads fit on their disk now, in queue order, to queue again.
    func releasable(running: Running) -> [(id: DownloadID, hold: SpaceHold)] {
        guard !holds.isEmpty else { return [] }
        var byVolume: [UInt64: [(id: DownloadID, key: QueueIndex.Key, needed: Int)]] = [:]
        for (id, hold) in holds {
            if let volume = hold.volume { byVolume[volume, default: []].append((id, hold.key, hold.needed)) }
        }
        var letGo: [(id: DownloadID, hold: SpaceHold)] = []
        for (volumeID, held) in byVolume {
            guard let volume = volumes[volumeID] else { continue }
            let ordered = held.sorted { $0.key < $1.key }
            let released = SpacePolicy.releasable(ordered.map { (id: $0.id, needed: $0.needed) }, allowance: volume.allowance,
                                                  committed: committedBytes(on: volume, by: running))
            for id in released { if let hold = holds.removeValue(forKey: id) { letGo.append((id, hold)) } }
            // The disk to itself, and still no room by the caller's reckoning: the first held on a
            // length only expected is asked for, and the server's own length decides.
            if released.isEmpty, !running.contains(where: { $0.limits.volume === volume }),
               let untried = ordered.first(where: { holds[$0.id]?.trusted == false }), let hold = holds.removeValue(forKey: untried.id) {
                letGo.append((untried.id, hold))
            }
        }
        return letGo
    }

    /// Measures `volume` again, unless a measurement is on its way (answered as `.spaceMeasured`).
    func measure(_ volume: Volume) {
        guard !volume.measuring else { return }
        volume.measuring = true
        let (id, folder, stamp, inbox, reading) = (volume.id, volume.folder, volume.written, inbox, reading)
        gauge.async {
            let space = reading(folder)
            inbox.send(.spaceMeasured(volume: id, free: space.flatMap { $0.volume == id ? $0.free : nil }, writtenAtRequest: stamp))
        }
    }

    func waitUntilDone() {
        gauge.sync {}
    }

    /// Why a download cannot start or go on for lack of room on the disk holding `folder`.
    /// - Parameters:
    ///   - needed: what it still needs (nil: unknown); `committed`: what the running downloads
    ///     there still need; `allowance`: what may still be written before the reserve.
    ///   - stoppedAt: the part's size, when a running download stopped.
    static func message(folder: String, needed: Int?, committed: Int, allowance: Int, reserve: Int, stoppedAt: Int?) -> String {
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
