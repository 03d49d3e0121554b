/// The engine's own notes beside its queue (the boot id of the last restore, say).
///
/// - Important: confined to one thread at a time, like a database connection.
package protocol QueueNotes: AnyObject {
    /// The note under `key`, if any.
    func meta(_ key: String) throws -> String?
    /// Sets the note under `key`.
    func setMeta(_ key: String, _ value: String) throws
    /// The note under `key`, set to `value` first if there is none (another connection's, set
    /// meanwhile, stands).
    func meta(_ key: String, orSet value: String) throws -> String
}
