import Dispatch
import FoundationEssentials
import Glibc
import MonsoonStore
import Synchronization

extension ArchiveRun {
    /// Writes the members' manifests two at a time, each pair of hands on a connection of its own: the downloads are
    /// done, and one at a time a first archive of 10,000 episodes spent its last 0.15 s on one core. Members that share
    /// a folder (one manifest) go to the same hands, in order: the folder as the file system knows it, so two paths to
    /// one (a podcast's own root reached through a link, say) never merge into its manifest at once.
    /// - Returns: the failures, by index in `members`, in that order.
    func writeManifests(of members: [Member], databasePath: String) -> [(index: Int, error: any Error)] {
        let lanes = Self.lanes(of: members.map { $0.folder ?? "" })
        let failures = Mutex<[(index: Int, error: any Error)]>([])
        DispatchQueue.concurrentPerform(iterations: lanes.count) { [lanes] lane in
            var files: EpisodeFiles?
            for index in lanes[lane] {
                do {
                    let opened = try files ?? EpisodeFiles(database: Database(path: databasePath))
                    files = opened
                    try writeManifest(of: members[index], files: opened)
                } catch {
                    files = nil   // the next opens a connection afresh: nothing of this failure stays with it
                    failures.withLock { $0.append((index, error)) }
                }
            }
        }
        return failures.withLock { $0 }.sorted { $0.index < $1.index }
    }

    /// Two lanes of indexes into `folders`, as even as the folders allow: one folder's all in the same lane, in order.
    static func lanes(of folders: [String]) -> [[Int]] {
        var lanes: [[Int]] = [[], []]
        var laneOfFolder: [String: Int] = [:]
        for (index, folder) in folders.enumerated() {
            let key = identity(of: folder)
            let lane = laneOfFolder[key] ?? (lanes[0].count <= lanes[1].count ? 0 : 1)
            laneOfFolder[key] = lane
            lanes[lane].append(index)
        }
        return lanes
    }

    /// Its device and inode; its path when it cannot be looked at (its manifest then fails on its own).
    private static func identity(of folder: String) -> String {
        var info = stat()
        guard stat(folder, &info) == 0 else { return folder }
        return "\(info.st_dev):\(info.st_ino)"
    }
}
