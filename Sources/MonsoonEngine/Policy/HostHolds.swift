import FoundationEssentials

/// The hosts of a download: its URL's, and the one that answered at the end of its redirects
/// (the same until an attempt tells it). Holds and per-host limits apply to both: a tracking
/// redirector in front of a CDN is two hosts, and the CDN is the one that says "too many".
struct HostPair: Hashable {
    var first: Int
    var last: Int

    init(first: Int, last: Int? = nil) {
        self.first = first
        self.last = last ?? first
    }

    /// Each host once.
    var each: [Int] { first == last ? [first] : [first, last] }
}

/// Which hosts are held, and why: pure decisions, performed by the loop.
///
/// A hold is for the host, not for one object. A 429 speaks for the whole host; so do 503s that
/// name a window (`Retry-After`) from at least two different downloads within it (a CDN whose
/// origin is down, and says for how long). One download's 503, and any 503 without a window (an
/// object whose origin failed, here and there), delay only that download.
struct HostHolds {
    /// Held hosts, until when.
    private(set) var until: [Int: Date] = [:]
    /// Recent 503s by host: which download, and until when its retry window runs.
    private var recent503: [Int: [(download: DownloadID, until: Date)]] = [:]

    /// Why a host is held, for the retrying line.
    enum Reason: Equatable {
        case tooManyRequests
        case serviceUnavailable(downloads: Int)
    }

    /// What an error status means for the hosts of `download`; the hold when there is one.
    /// - Parameters:
    ///   - hosts: the download's hosts (the one that answered last).
    ///   - retryAt: when the download itself will try again (its Retry-After or backoff).
    ///   - namesWindow: the answer carried a `Retry-After`.
    mutating func record(status: Int, download: DownloadID, hosts: HostPair, retryAt: Date, namesWindow: Bool = true, now: Date) -> (until: Date, reason: Reason)? {
        switch status {
        case 429:
            hold(hosts, until: retryAt)
            return (retryAt, .tooManyRequests)
        case 503 where namesWindow:
            let host = hosts.last
            var log = (recent503[host] ?? []).filter { $0.until > now && $0.download != download }
            let others = Set(log.map(\.download))
            log.append((download, retryAt))
            recent503[host] = log
            guard !others.isEmpty else { return nil }
            // The hold lasts as long as the longest window among them.
            let end = log.map(\.until).max() ?? retryAt
            hold(hosts, until: end)
            return (end, .serviceUnavailable(downloads: others.count + 1))
        default:
            return nil
        }
    }

    /// Holds `hosts` until `date` (or longer, if already held longer).
    mutating func hold(_ hosts: HostPair, until date: Date) {
        for host in hosts.each { until[host] = max(until[host] ?? date, date) }
    }

    /// Lifts the holds of `hosts` (the user retries a download on them now).
    mutating func lift(_ hosts: HostPair) {
        for host in hosts.each {
            until[host] = nil
            recent503[host] = nil
        }
    }

    /// Forgets what has run out.
    mutating func expire(now: Date) {
        until = until.filter { $0.value > now }
        recent503 = recent503.compactMapValues { log in
            let kept = log.filter { $0.until > now }
            return kept.isEmpty ? nil : kept
        }
    }

    /// Whether any of `hosts` is held at `now`.
    func isHeld(_ hosts: HostPair, now: Date) -> Bool {
        hosts.each.contains { (until[$0] ?? .distantPast) > now }
    }

    /// "the host cdn.example.org is held until 12:00:03 UTC (503s from 2 downloads)".
    static func text(host: String, until: Date, reason: HostHolds.Reason) -> String {
        let seconds = Int(until.timeIntervalSince1970.rounded(.up)) % 86_400
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let clock = "\(two(seconds / 3600)):\(two(seconds % 3600 / 60)):\(two(seconds % 60)) UTC"
        let why = switch reason {
        case .tooManyRequests: "it answered 429 Too Many Requests"
        case .serviceUnavailable(let downloads): "503s from \(downloads) downloads"
        }
        return "the host \(host) is held until \(clock) (\(why))"
    }
}
