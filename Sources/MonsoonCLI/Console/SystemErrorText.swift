import Foundation

/// Plain words for a file system error Foundation reports: the system's own reason ("not a
/// directory"), never Foundation's "The operation could not be completed. (NSCocoaErrorDomain
/// error 512.)", which says neither what happened nor what to do.
enum SystemErrorText {
    static func reason(_ error: Error) -> String {
        let nsError = error as NSError
        let underlying = (nsError.userInfo[NSUnderlyingErrorKey] as? any Error).map { $0 as NSError }
        guard let posix = [nsError, underlying].compactMap({ $0 }).first(where: { $0.domain == NSPOSIXErrorDomain }) else {
            return "the file system refused it (error \(nsError.code))"
        }
        let text = String(cString: strerror(Int32(posix.code)))
        return text.prefix(1).lowercased() + text.dropFirst()
    }
}
