extension EngineConfiguration {
    /// How requests go out: who they say they are, whom they trust for HTTPS, which way they
    /// connect, and how long they may take to.
    public struct Network: Sendable, Equatable {
        /// Sent when a request gives no User-Agent.
        public var userAgent = "Monsoon/0.1"
        /// Where to send HTTPS-verification trust (nil: the system's).
        public var caBundlePath: String?
        /// A proxy for every request (`http://`, `https://`, `socks5://` …); nil: curl's default,
        /// which reads `http_proxy`, `https_proxy` and `no_proxy` from the environment.
        public var proxy: String?
        /// Which IP version to connect with.
        public var ipVersion: IPVersion = .any
        /// Seconds allowed to connect.
        public var connectTimeout: Double = 30

        /// The defaults: curl's proxy and trust, either IP version, 30 s to connect.
        public init() {}
    }
}
