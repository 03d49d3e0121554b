import MonsoonEngine

/// Caps on the files a podcast's downloads may make, so no server fills a disk with a body that never ends (the disk
/// reserve is the last line). An episode may grow past its declared length (ads inserted per listener, a re-encode),
/// so its cap is twice that plus 64 MiB; under 1 MiB is no length at all (feeds write 0, 1 or a guess).
public enum SizeLimits {
    /// Nil when the feed declares no length worth trusting.
    public static func episode(declaredLength length: Int?) -> DownloadRequest.SizeLimit? {
        guard let length, length >= 1 << 20 else { return nil }
        let (doubled, overflow) = length.multipliedReportingOverflow(by: 2)
        let bytes = overflow ? Int.max : doubled.addingReportingOverflow(64 << 20).overflow ? Int.max : doubled + (64 << 20)
        return .init(bytes: bytes, reason: "twice the \(ByteCount.format(length)) its feed declares, plus 64 MiB")
    }

    /// Cover art: the largest a podcast directory accepts is a few MB.
    public static let artwork = DownloadRequest.SizeLimit(bytes: 20 << 20, reason: "the cap for artwork")
    /// A transcript, even with word-level timings for hours of talk.
    public static let transcript = DownloadRequest.SizeLimit(bytes: 20 << 20, reason: "the cap for a transcript")
    public static let chapters = DownloadRequest.SizeLimit(bytes: 10 << 20, reason: "the cap for chapters")
}
