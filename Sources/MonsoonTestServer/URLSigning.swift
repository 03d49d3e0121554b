import Foundation

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
    /// Known only to this signer (and its copies): a link made up or edited by a client is refused.
    private let secret: UInt64
    /// Where the signer reads the time, to sign and to check links: the system's clock, or one a
    /// test moves on (a link expires at once, without waiting for it).
    public let now: @Sendable () -> Date

    /// A signer whose links last `lifetime` seconds of `now`'s time.
    public init(lifetime: Double, now: @escaping @Sendable () -> Date = { Date() }) {
        self.lifetime = lifetime
        self.now = now
        secret = UInt64.random(in: 1...UInt64.max)
    }

    /// `url` with `expires` and `sig` added to its query, good until `lifetime` seconds after `now`
    /// (nil: the signer's clock).
    public func sign(_ url: URL, now: Date? = nil) -> URL {
        let expires = Int(((now ?? self.now()).timeIntervalSince1970 + lifetime).rounded(.up))
        let separator = url.query == nil ? "?" : "&"
        return URL(string: url.absoluteString + "\(separator)expires=\(expires)&sig=\(signature(path: url.path, expires: expires))")!
    }

    /// Whether a request for `target` (path and query, as sent) carries a good, unexpired signature.
    func accepts(_ target: String, now: Date) -> Bool {
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
        guard let expires, let sig, Double(expires) > now.timeIntervalSince1970 else { return false }
        return sig == signature(path: path.removingPercentEncoding ?? path, expires: expires)
    }

    private func signature(path: String, expires: Int) -> String {
        String(SHA256.hex(Data("\(secret)|\(path)|\(expires)".utf8)).prefix(16))
    }
}
