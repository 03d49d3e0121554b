import FoundationEssentials

/// Signed links that expire, as private feeds and CDNs hand them out: a route with
/// ``Route/signing`` answers 403 unless its query carries `expires` (Unix seconds, still to come)
/// and the `sig` this signer gave for that path and time.
///
/// ```swift
/// let signing = URLSigning(lifetime: 5)
/// server.setRoute("/ep1.mp3", Route(body: .pattern(size: 1 << 20, seed: 1), signing: signing))
/// let base = server.url("/ep1.mp3")   // captured as a value: a route never holds its server
/// server.setRoute("/feed.xml", Route(body: .generated { Array(feed(signing.sign(base)).utf8) }))
/// ```
///
/// Every feed fetch then gives fresh links, which the media routes refuse 5 s later.
public struct URLSigning: Sendable {
    /// How long a link stays good after `sign` made it, in seconds (rounded up to whole seconds).
    public var lifetime: Double
    /// The time links are signed at and checked against: the system's, or a test's own, which it
    /// moves to see a link expire without waiting for it.
    public let clock: @Sendable () -> Date
    /// Known only to this signer (and its copies): a link made up or edited by a client is refused.
    private let secret: UInt64

    /// A signer whose links last `lifetime` seconds, by `clock`.
    public init(lifetime: Double, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.lifetime = lifetime
        self.clock = clock
        secret = UInt64.random(in: 1...UInt64.max)
    }

    /// `url` with `expires` and `sig` added to its query, good until `lifetime` seconds after now
    /// by the signer's clock.
    public func sign(_ url: URL) -> URL {
        sign(url, now: clock())
    }

    /// `url` with `expires` and `sig` added to its query, good until `lifetime` seconds after `now`.
    public func sign(_ url: URL, now: Date) -> URL {
        let expires = Int((now.timeIntervalSince1970 + lifetime).rounded(.up))
        let separator = url.query == nil ? "?" : "&"
        return URL(string: url.absoluteString + "\(separator)expires=\(expires)&sig=\(signature(path: url.path, expires: expires))")!
    }

    /// Whether a request for `target` (path and query, as sent) carries a good signature, unexpired
    /// by the signer's clock.
    func accepts(_ target: String) -> Bool {
        guard let question = target.firstIndex(of: "?") else { return false }
        let path = String(target[..<question])
        var expires: Int?
        var sig: String?
        for pair in target[target.index(after: question)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { continue }
            if parts[0] == "expires" { expires = Int(parts[1]) }
            if parts[0] == "sig" { sig = parts[1] }
        }
        guard let expires, let sig, Double(expires) > clock().timeIntervalSince1970 else { return false }
        return sig == signature(path: path.percentDecoded ?? path, expires: expires)
    }

    private func signature(path: String, expires: Int) -> String {
        String(SHA256.hex(Data("\(secret)|\(path)|\(expires)".utf8)).prefix(16))
    }
}
