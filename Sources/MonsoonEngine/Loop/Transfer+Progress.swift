import FoundationEssentials

extension Transfer {
    /// How far the body has come.
    struct Progress {
        /// What the part holds (or the count has reached) so far.
        var fileSize = 0
        /// The length the response announced.
        var total: Int?
        /// The size the download is expected to reach before the response tells it, for the space
        /// the running downloads still need.
        var expected: Int?
        var thisAttempt = 0
        /// The size last reported to listeners (-1: none yet).
        var reported = -1
        /// The SHA-256 state of the body, when asked for or its owner's files are hashed (a `monsoon_digest`).
        var digest: OpaquePointer?
    }

    /// The part file being written, and what the loop has asked of the disk for it.
    struct Part {
        var fd: Int32 = -1
        var path: String?
        /// Where the next early writeback starts.
        var writebackStart = 0
        var checkpoint = PartCheckpoint()
    }
}
