import FoundationEssentials
import MonsoonEngine
import MonsoonStore

extension PodcastLibrary {
    /// One line, redacted: the message of Monsoon's own errors, never a Foundation error's internal text.
    public static func message(for error: Error) -> String {
        let text: String
        switch error {
        case let error as FeedError: text = error.message
        case let error as LibraryError: text = error.description
        case let error as StoreError: text = error.message
        case let error as DownloadManagerError: text = error.description
        default: text = "an unexpected error (\(type(of: error))); please report it"
        }
        return Redaction.redactText(text)
    }
}
