import FoundationEssentials
import MonsoonBasics
import Glibc

/// Reading and writing the files of run reports: the JSON `--report` writes and its page.
enum ReportFile {
    /// The most a report may hold to be read back: 1,000 detailed downloads and the rest
    /// come to a few MiB; more is not a report Monsoon wrote.
    static let readLimit = 64 << 20

    /// Writes `text` to `path` atomically (a reader never sees half a file); `what` names it in the error.
    static func write(_ text: String, to path: String, what: String) throws {
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw CLIError(message: "cannot write \(what) \(path): \(SystemErrorText.reason(error)); give a path in a folder that exists and you can write")
        }
    }

    /// The bytes of the report at `path`, refused when larger than `readLimit`.
    static func read(_ path: String) throws -> Data {
        do {
            return try BoundedInput.read(path: path, limit: readLimit)
        } catch .tooLarge {
            throw CLIError(message: "\(path) is larger than \(readLimit >> 20) MiB, so it is not a Monsoon run report; give the FILE that --report wrote")
        } catch {
            let reason = switch error {
            case .system(ENOENT): "there is no such file"
            case .system(EACCES): "it cannot be read (permissions?)"
            default: error.message(limit: readLimit, what: "a run report")
            }
            throw CLIError(message: "cannot read the report \(path): \(reason); give the FILE that --report wrote")
        }
    }
}
