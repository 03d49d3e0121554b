import Foundation
import MonsoonEngine

/// Puts a finished file under its archive name: never over another file (a name taken is
/// refused: a hard link, then the work name removed), never through a link below the worker's folder, and durably
/// (the folder is flushed after the rename, the file was by the engine before it).
enum FilePublisher {
    enum Outcome: Equatable {
        case published
        /// The name holds the same bytes already (a holder before this one published them and
        /// lost its lease before recording it): the new copy is dropped.
        case alreadyThere
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Moves `file` to `relativePath` under `root`.
    static func publish(_ file: String, to relativePath: String, under root: String, sha256: String) throws -> Outcome {
        let target = root + "/" + relativePath
        let folder = (target as NSString).deletingLastPathComponent
        let name = (target as NSString).lastPathComponent
        let folderFD = try ConfinedFolder.open(folder, root: root, create: true)
        defer { close(folderFD) }
        // A hard link takes the name only if it is free (no rename over another file), then the
        // work file's name goes. A crash between the two leaves a second name in the work folder,
        // which the next start clears.
        if linkat(AT_FDCWD, file, folderFD, name, 0) != 0 {
            let error = errno
            guard error == EEXIST else {
                throw Failure(description: "cannot put the file at \(target): \(String(cString: strerror(error)))")
            }
            guard (try? FileDigest.sha256(ofFile: target)) == sha256 else {
                throw Failure(description: "\(target) holds another file; it was left as it is (move it away, then retry the job)")
            }
            unlink(file)
            return .alreadyThere
        }
        unlink(file)
        // The name is durable once the folder is: without this a power cut could undo it after the commit.
        guard fsync(folderFD) == 0 else {
            throw Failure(description: "cannot flush the folder \(folder): \(String(cString: strerror(errno)))")
        }
        return .published
    }
}
