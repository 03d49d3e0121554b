import FoundationEssentials

/// The length last sent to be flushed for a checkpoint, and when; `inFlight` until the
/// flush's answer comes back.
struct PartCheckpoint {
    var requested = 0
    var requestedAt = Date()
    var inFlight = false
}
