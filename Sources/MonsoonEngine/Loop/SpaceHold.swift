/// A queued download that waits for room on its disk instead of starting (or going on).
struct SpaceHold {
    var key: QueueIndex.Key
    var hosts: HostPair
    /// Its disk (nil: it could not be measured; then only a retry lets it go).
    var volume: UInt64?
    var needed: Int
    /// `needed` is what the disk or a server said (false: a caller's expected size).
    var trusted = true
}
