/// Bytes over time, overall and per host, in at most `maxBuckets` buckets: when the run
/// outgrows them, the bucket doubles and neighbours merge, so a run of days costs what a
/// run of minutes does. Each attempt's bytes are spread evenly from its first byte to its end
/// (attempts, not per-chunk progress, feed it: nothing on the hot path).
struct Throughput: Equatable {
    static let maxBuckets = 600
    /// Hosts beyond the first ones seen count towards `overall` only.
    static let hostLimit = 32

    private(set) var bucketSeconds = 0.1
    private(set) var overall: [Double] = []
    private(set) var hosts: [String: [Double]] = [:]

    /// `bytes` that arrived evenly between `from` and `to` (seconds from the run's start).
    mutating func add(bytes: Int, from: Double, to: Double, host: String) {
        guard bytes > 0, from.isFinite, to.isFinite else { return }
        let start = max(0, from)
        let end = max(start, to)
        while end >= bucketSeconds * Double(Self.maxBuckets) { merge() }
        let tracksHost = hosts[host] != nil || hosts.count < Self.hostLimit
        let first = Int(start / bucketSeconds)
        let last = min(Self.maxBuckets - 1, Int(end / bucketSeconds))
        for bucket in first...last {
            let share: Double
            if end - start < 1e-9 {
                share = Double(bytes)
            } else {
                let low = max(start, Double(bucket) * bucketSeconds)
                let high = min(end, Double(bucket + 1) * bucketSeconds)
                share = Double(bytes) * max(0, high - low) / (end - start)
            }
            Self.add(share, at: bucket, to: &overall)
            if tracksHost { Self.add(share, at: bucket, to: &hosts[host, default: []]) }
        }
    }

    private static func add(_ value: Double, at bucket: Int, to series: inout [Double]) {
        if series.count <= bucket { series.append(contentsOf: repeatElement(0, count: bucket + 1 - series.count)) }
        series[bucket] += value
    }

    private mutating func merge() {
        bucketSeconds *= 2
        overall = Self.merged(overall)
        for host in hosts.keys { hosts[host] = Self.merged(hosts[host] ?? []) }
    }

    private static func merged(_ series: [Double]) -> [Double] {
        stride(from: 0, to: series.count, by: 2).map { series[$0] + (($0 + 1 < series.count) ? series[$0 + 1] : 0) }
    }
}
