import FoundationEssentials
import Glibc

/// Plain words for a file system error Foundation reports: the system's own reason ("not a
/// directory"), never Foundation's "The operation could not be completed. (NSCocoaErrorDomain
/// error 512.)", which says neither what happened nor what to do.
package enum SystemErrorText {
    package static func reason(_ error: any Error) -> String {
        let posix = error as? POSIXError ?? (error as? CocoaError)?.underlying as? POSIXError
        guard let posix else {
            return "the file system refused it (error \((error as? CocoaError)?.code.rawValue ?? -1))"
        }
        let text = String(cString: strerror(posix.code.rawValue))
        return text.prefix(1).lowercased() + text.dropFirst()
    }
}
