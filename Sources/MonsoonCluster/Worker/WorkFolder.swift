import FoundationEssentials
import Glibc
import MonsoonEngine

/// A worker's work folder, inside the shared folder: the parts of its downloads, each named after
/// its job and lease token ("j<job>-t<token>"), until a finished file takes its archive name.
struct WorkFolder {
    let path: String
    /// The shared folder (the engine confines the files it touches to it).
    let root: String

    /// Takes over the largest part an earlier holder of the job left in the work folder (a worker
    /// killed, or one that lost its lease), so the engine resumes it instead of fetching those
    /// bytes again; the others go. Only this worker holds the job now: every other lease of it
    /// is over.
    func adoptPart(of job: ClaimedJob, as id: DownloadID) -> (destination: String, bytes: Int)? {
        let prefix = "j\(job.lease.job)-t"
        // No work folder listing: nothing to take over.
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [])
            .filter { $0.hasPrefix(prefix) && $0.hasSuffix(PartFile.suffix) && !$0.hasPrefix(id.rawValue + ".") }
        let sized = names.map { name -> (String, Int) in
            let size = (try? FileManager.default.attributesOfItem(atPath: path + "/" + name)[.size] as? Int) ?? 0   // gone meanwhile: nothing
            return (name, size)
        }.sorted { $0.1 > $1.1 }
        defer { for (name, _) in sized.dropFirst() { unlink(path + "/" + name) } }
        guard let largest = sized.first else { return nil }
        let old = String(largest.0.dropLast(PartFile.suffix.count))
        // What follows "j<job>-t<token>" in its name is the extension its holder's answer gave.
        let ext = old.drop { $0 != "." }
        let destination = path + "/" + id.rawValue + ext
        let bytes = PartFile.adopt(from: path + "/" + old, to: destination, root: root)
        return bytes > 0 ? (destination, bytes) : nil
    }
}
