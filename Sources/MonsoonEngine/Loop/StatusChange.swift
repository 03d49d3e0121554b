import FoundationEssentials

/// A download's status change as its lifecycle decided it (`RecordTable.move`): what the core
/// carries, in one place (`EngineCore.move`), into the line, the waiting set, space holds, the
/// save queue and the events. A value made on the transfer thread.
struct StatusChange: Equatable {
    let old: DownloadStatus
    let new: DownloadStatus
    let key: QueueIndex.Key
    let host: String
    /// The host that answered the last attempt at the end of its redirects.
    let answered: String?
    let retryAt: Date?
}
