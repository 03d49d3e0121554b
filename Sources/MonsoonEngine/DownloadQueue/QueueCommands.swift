/// What processes that do not run the queue tell the one that does: commands, and downloads
/// they add.
///
/// - Important: confined to one thread at a time, like a database connection.
package protocol QueueCommands: AnyObject {
    /// Posts commands for the process running this queue, in one transaction; returns the last
    /// one's number (0 for none).
    @discardableResult
    func post(_ commands: [DownloadCommand]) throws -> Int
    /// Whether any posted command (or any up to number `seq`) still waits for the running process.
    func hasPendingCommands(through seq: Int) throws -> Bool
    /// The commands posted after `seq`, in order, with the last one's number (read only).
    func commands(after seq: Int) throws -> (commands: [DownloadCommand], last: Int)
    /// Deletes the commands up to number `seq` (once applied).
    func deleteCommands(through seq: Int) throws
    /// Adds downloads from a process that does not run the queue; returns their ids.
    func add(_ requests: [DownloadRequest]) throws -> [DownloadID]
    /// A number that moves when another connection changes the queue: read the rows again
    /// only when it does.
    func changeCounter() throws -> Int
}
