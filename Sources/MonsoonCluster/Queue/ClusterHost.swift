import FoundationEssentials

/// The name a host's politeness row goes by: the URL's host in lowercase, with its port when the
/// port is not the scheme's own (two servers on one machine are two hosts; `http://a` and
/// `http://a:80` are one).
public enum ClusterHost {
    public static func key(of url: URL) -> String? {
        guard let host = url.host(percentEncoded: false)?.lowercased(), !host.isEmpty else { return nil }
        let standard = url.scheme?.lowercased() == "https" ? 443 : 80
        guard let port = url.port, port != standard else { return host }
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
