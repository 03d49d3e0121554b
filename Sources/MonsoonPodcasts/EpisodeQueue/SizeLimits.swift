import MonsoonEngine

/// Caps on the files a podcast's downloads may make, so no server fills a disk with a body
/// that never ends (the disk reserve, checked as bytes arrive, is the last line).
///
/// An episode may grow past the length its feed declares (ads inserted per listener, a
/// re-encode), so its cap is generous: twice the declared length plus 64 MiB. A declared length
/// under 1 MiB is no length at all (feeds write 0, 1 or a guess for files they do not know), so
/// such an episode gets no cap of its own. Artwork, transcripts and chapters are small by
/// nature: each kind has a fixed cap.
public enum SizeLimits {
    /// The cap for an episode whose feed declares `length` bytes; nil when it declares none worth trusting.
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
    /// A chapters file.
    public static let chapters = DownloadRequest.SizeLimit(bytes: 10 << 20, reason: "the cap for chapters")
}
