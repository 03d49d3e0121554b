import FoundationEssentials

/// The queue as listings read it (`monsoon downloads`, `status`, a command following its own
/// downloads).
///
/// - Important: confined to one thread at a time, like a database connection.
package protocol QueueListing: AnyObject {
    /// Every download, in enqueue order.
    func downloads() throws -> [Download]
    /// One download, by id.
    func download(withID id: DownloadID) throws -> Download?
    /// The downloads of `url`, in enqueue order.
    func downloads(of url: URL) throws -> [Download]
    /// The downloads among `ids` that exist, in enqueue order.
    func downloads(withIDs ids: [DownloadID]) throws -> [Download]
    /// How many downloads are in each status.
    func counts() throws -> [DownloadStatus: Int]
    /// Streams the queue for listing, in enqueue order.
    func forEachSummary(_ body: (DownloadSummary) throws -> Void) throws
    /// The downloads that will run, in the order they start, with the bytes each still needs
    /// (nil while unknown) and its folder.
    func pending() throws -> [PendingDownload]
}
