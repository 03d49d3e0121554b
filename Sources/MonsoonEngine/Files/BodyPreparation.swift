import FoundationEssentials

/// What the disk worker needs to get a part file ready when a download's first body byte
/// arrives: the name to choose (or the one already chosen), the space to check, the row to
/// save and the part to open. A value, so it crosses from the transfer thread.
struct BodyPreparation: Sendable {
    /// The row as it should be saved, less the file path when that is still to be chosen.
    var row: DownloadRecord
    /// Which attempt asked (a later answer for an attempt that was stopped is dropped).
    var attempt: ObjectIdentifier
    var contentDisposition: String?
    var contentType: String?
    var finalURL: String?
    /// Where writing starts in the part (the bytes before it are kept).
    var offset: Int
    var total: Int?
    /// The resume state to store with a new part (nil: keep the part's).
    var newState: ResumeState?
    /// With --warc, for a part begun at byte 0 by a 200: its head, kept with the part
    /// (`WARCHeadAttribute`). A part begun at byte 0 without one loses any it had.
    var warcHead: [UInt8]? = nil
    /// The row resets a checkpoint: it must be on disk before a byte of the new part is.
    var durably: Bool
    var diskReserve: Int

    /// The answer, back on the transfer thread.
    enum Outcome: Sendable {
        case ready(fd: Int32, path: String)
        /// No part could be opened (or the row saved); the attempt ends with this. `transient`:
        /// the database could not save the row (busy, say), so the attempt is retried.
        case failed(DownloadError, path: String?, transient: Bool)

        /// The name the disk worker chose, if any.
        var path: String? {
            switch self {
            case .ready(_, let path): path
            case .failed(_, let path, _): path
            }
        }
    }

    /// The file is still to be named in its folder (`name`, which takes more work to say so).
    var isToBeNamed: Bool {
        guard row.filePath == nil else { return false }
        switch row.request.destination {
        case .directory, .named: return true
        case .file, .discard: return false
        }
    }

    /// The file's name in `folder` when it is still to be chosen, from the response.
    var name: (folder: String, name: String)? {
        guard row.filePath == nil else { return nil }
        switch row.request.destination {
        case .directory(let folder):
            return (folder, FileNaming.name(contentDisposition: contentDisposition, finalURL: finalURL))
        case .named(let folder, let stem):
            return (folder, FileNaming.name(stem: stem, finalURL: finalURL, mediaTypes: [contentType, row.request.expectedMediaType]))
        case .file, .discard:
            return nil
        }
    }
}
