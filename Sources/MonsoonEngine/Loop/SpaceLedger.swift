import Foundation

/// One file system the loop writes to, and how much more may be written there before its
/// reserve is reached (see `SpacePolicy`).
///
/// - Important: confined to the transfer thread, where curl's write callback spends from it.
final class Volume {
    let id: UInt64
    /// A folder on it, to measure it by.
    let folder: String
    /// Bytes that may still be written: the last measurement's free space, less the reserve,
    /// less every byte written since. Negative once something else filled the disk.
    var allowance: Int
    /// Every byte the loop wrote there (to tell which writes a measurement has not seen).
    var written = 0
    /// A measurement is on its way.
    var measuring = false
    var measuredAt: Date

    init(id: UInt64, folder: String, allowance: Int, measuredAt: Date) {
        self.id = id
        self.folder = folder
        self.allowance = allowance
        self.measuredAt = measuredAt
    }
}

/// A queued download that waits for room on its disk instead of starting (or going on).
struct SpaceHold {
    var key: QueueIndex.Key
    var hosts: HostPair
    /// Its disk (nil: it could not be measured; then only a retry lets it go).
    var volume: UInt64?
    /// What it still needs to be let go.
    var needed: Int
    /// `needed` is what the disk or a server said (false: a caller's expected size, see
    /// `EngineCore.holdForSpace`).
    var trusted = true
}

/// The disks downloads write to, and the downloads held until their disk has room.
///
/// - Important: confined to the transfer thread; only `measure` leaves it, to `statvfs` on a
///   queue of its own (never behind a flush) and answer through the inbox.
final class SpaceLedger {
    private(set) var volumes: [UInt64: Volume] = [:]
    var holds: [DownloadID: SpaceHold] = [:]
    /// The disk each download folder was last measured on, and when: a start into a folder
    /// measured a moment ago needs no measurement (its allowance counts the writes since).
    private var folders: [String: (space: VolumeSpace, at: Date)] = [:]
    private let gauge = DispatchQueue(label: "monsoon.space")

    /// The loop's volume for a measurement made before an attempt: a new one from the measurement,
    /// or the one it knows. A known volume nothing writes to right now (`idle`) takes the measurement,
    /// which is fresher than its last (space the engine freed itself, a stale part removed, counts at
    /// once); one being written to keeps its allowance, which counts the writes since.
    /// - Parameter measuredNow: `space` was measured for this start (false: `recentSpace`'s).
    func volume(for space: VolumeSpace, folder: String, reserve: Int, now: Date, idle: Bool, measuredNow: Bool = true) -> Volume {
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

    /// Measures `volume` again, unless a measurement is on its way; the answer comes as
    /// `EngineLoop.Message.spaceMeasured`.
    func measure(_ volume: Volume, inbox: EngineInbox) {
        guard !volume.measuring else { return }
        volume.measuring = true
        let (id, folder, stamp) = (volume.id, volume.folder, volume.written)
        gauge.async {
            let space = VolumeSpace.measure(folder)
            inbox.send(.spaceMeasured(volume: id, free: space.flatMap { $0.volume == id ? $0.free : nil }, writtenAtRequest: stamp))
        }
    }

    /// Returns once the measurements asked for so far have been posted (at shutdown).
    func waitUntilDone() {
        gauge.sync {}
    }
}
