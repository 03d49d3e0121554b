/// What a command changes in the stored queue itself: requests while no engine runs it, and
/// finished downloads it forgets (their files stay).
///
/// - Important: confined to one thread at a time, like a database connection.
package protocol QueueHousekeeping: AnyObject {
    /// Changes a stored download's request (its id's) while no engine runs the queue (see `DownloadStore`).
    @discardableResult
    func updateRequest(_ request: DownloadRequest) throws -> Bool
    /// Forgets every download in one of `statuses`; returns how many.
    func forget(withStatus statuses: Set<DownloadStatus>) throws -> Int
    /// Forgets those of `ids` whose status is one of `statuses` (their files stay); returns how many.
    func forget(_ ids: [DownloadID], ifIn statuses: Set<DownloadStatus>) throws -> Int
}
