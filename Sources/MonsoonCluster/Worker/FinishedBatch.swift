/// When a worker records the downloads that finished, in one round trip: 20 ms after the first, so that others
/// finishing meanwhile join it; at once when nothing it holds is still under way (no later finish could join), or
/// once the batch holds 50.
enum FinishedBatch {
    static let deadline = Duration.milliseconds(20)

    static func recordsNow(finished: Int, underWay: Int) -> Bool {
        underWay == 0 || finished >= 50
    }
}
