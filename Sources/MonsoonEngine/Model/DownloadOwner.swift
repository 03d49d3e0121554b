/// Who asked for a download, and so who answers for its file once it is done: the queue keeps it
/// beside the download (the `owner` column), and those who follow the queue ask for theirs by it
/// (`DownloadStateReading.states(ownedBy:changedSince:)`). An id says nothing of its owner.
public enum DownloadOwner: String, Sendable, CaseIterable {
    /// Asked for directly (`monsoon get`, the API): nobody else answers for it.
    case direct
    /// A podcast episode's audio or video.
    case episode
    /// A podcast's cover art.
    case artwork
    /// An episode's transcript.
    case transcript
    /// An episode's chapters.
    case chapters
    /// A damaged archived file fetched again (`verify --repair`).
    case repair
    /// A job of the shared library's cluster queue.
    case job
}

extension DownloadOwner {
    /// Whether its body is hashed (SHA-256) as it is written, into `Download.checksum`: an
    /// episode's and a cluster job's, whose digest is recorded (a manifest, the ledger), so that
    /// nobody reads the file back to hash it. Only an attempt that writes the file from its first
    /// byte hashes it; a resumed one leaves the checksum unknown.
    var hashesBody: Bool { self == .episode || self == .job }

    /// The owner of a download saved before the queue kept owners, from the id its owner gave it
    /// (`e12` an episode's, `a3` artwork, `t12` a transcript, `c12` chapters, `r4` a repair,
    /// `j7-t2` a cluster job's; any other, `d17` say, direct). Only the migration that fills
    /// the column asks this: an id is never read for its owner otherwise.
    static func ofLegacyID(_ id: String) -> DownloadOwner {
        guard let letter = id.first else { return .direct }
        let rest = id.dropFirst()
        // The number exactly as its owner wrote it: "e007" or "e-notes" is a direct download named so.
        func isNumber<S: StringProtocol>(_ text: S) -> Bool { Int(text).map { String($0) == text } ?? false }
        switch letter {
        case "e" where isNumber(rest): return .episode
        case "a" where isNumber(rest): return .artwork
        case "t" where isNumber(rest): return .transcript
        case "c" where isNumber(rest): return .chapters
        case "r" where isNumber(rest): return .repair
        case "j":
            let parts = rest.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, isNumber(parts[0]), parts[1].first == "t", isNumber(parts[1].dropFirst()) else { return .direct }
            return .job
        default: return .direct
        }
    }
}
