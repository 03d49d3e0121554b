import FoundationEssentials

/// A run report as `--report` writes it, read back for its page. Reports written before the
/// timeline was recorded have no `downloads`, `throughput` or `outcomes`: their page shows the
/// hosts alone.
struct RunReportFile: Decodable {
    struct Percentiles: Decodable {
        var p50: Double?
        var p90: Double?
        var p99: Double?
    }

    struct Connections: Decodable {
        var opened: Int
        var reused: Int
    }

    struct Tally: Decodable {
        var bytes: Int
        var throughputBytesPerSecond: Double
        var attempts: Int
        var completedAttempts: Int
        var timeToFirstByteSeconds: Percentiles
        var failedAttemptsByStatus: [String: Int]
        var resumedBytes: Int
        var connections: Connections
    }

    struct Timeline: Decodable {
        var downloads: Int
        var detailed: Int
        var leftOut: Int
        var detailLimit: Int
    }

    struct Throughput: Decodable {
        var bucketSeconds: Double
        var hostLimit: Int?
        var overall: [Double]
        var hosts: [String: [Double]]
    }

    struct Phase: Decodable {
        var status: String
        var start: Double
        var end: Double
    }

    struct Failure: Decodable {
        var kind: String
        var message: String
    }

    struct Download: Decodable {
        var id: String
        var host: String
        var url: String
        var name: String
        /// Since reports group episodes by podcast and list failures.
        var podcast: String?
        var title: String?
        var failure: Failure?
        var outcome: String
        var bytes: Int
        var phases: [Phase]
        var attempts: [RunTimeline.Attempt]
        var attemptsLeftOut: Int?
    }

    var command: String
    var started: String
    var ended: String
    var wallSeconds: Double
    var overall: Tally
    var hosts: [String: Tally]
    var outcomes: [String: Int]?
    var timeline: Timeline?
    var throughput: Throughput?
    var downloads: [Download]?
    /// What the run did not download, by why (`RunReport.Skip`); an archive's only.
    var skipped: [String: Int]?

    /// The report in `data`; `path` names it in the error.
    static func decode(_ data: Data, path: String) throws -> RunReportFile {
        let report: RunReportFile
        do {
            report = try JSONDecoder().decode(RunReportFile.self, from: data)
        } catch let error as DecodingError {
            throw CLIError(message: "\(path) is not a Monsoon run report (\(Self.describe(error))); give the FILE that --report wrote")
        }
        // The page turns these numbers into integers and pixels: one no run can have (a century,
        // an exabyte a second, NaN) is refused here rather than trapping there.
        if let field = report.outOfRange {
            throw CLIError(message: "\(path) is not a Monsoon run report (\(field) is out of range); give the FILE that --report wrote")
        }
        return report
    }

    /// The first number no run can have, by its name; nil when all are in range.
    private var outOfRange: String? {
        let seconds = 0.0...3e9, rate = 0.0...1e15, count = 0...Int(1e15)
        func tally(_ tally: Tally, _ name: String) -> String? {
            if !rate.contains(tally.throughputBytesPerSecond) { return "\(name).throughputBytesPerSecond" }
            if ![tally.bytes, tally.attempts, tally.completedAttempts, tally.resumedBytes].allSatisfy(count.contains) { return "\(name).bytes" }
            let percentiles = [tally.timeToFirstByteSeconds.p50, tally.timeToFirstByteSeconds.p90, tally.timeToFirstByteSeconds.p99]
            return percentiles.compactMap { $0 }.allSatisfy(seconds.contains) ? nil : "\(name).timeToFirstByteSeconds"
        }
        if !seconds.contains(wallSeconds) { return "wallSeconds" }
        if let bad = tally(overall, "overall") ?? hosts.lazy.compactMap({ tally($1, "hosts.\($0)") }).first { return bad }
        if let throughput {
            if !(0.001...3e9).contains(throughput.bucketSeconds) { return "throughput.bucketSeconds" }
            if !(throughput.overall + throughput.hosts.values.joined()).allSatisfy(rate.contains) { return "throughput" }
        }
        for download in downloads ?? [] {
            let times: [Double] = download.phases.flatMap { [$0.start, $0.end] }
                + download.attempts.flatMap { attempt -> [Double] in [attempt.start, attempt.end, attempt.timeToFirstByte ?? 0] }
            if !times.allSatisfy(seconds.contains) || !count.contains(download.bytes)
                || !download.attempts.allSatisfy({ count.contains($0.bytes) && count.contains($0.resumedFrom) }) {
                return "downloads.\(download.id)"
            }
        }
        return nil
    }

    private static func describe(_ error: DecodingError) -> String {
        switch error {
        case .dataCorrupted: return "not JSON"
        case .keyNotFound(let key, let context): return "no \((context.codingPath + [key]).map(\.stringValue).joined(separator: "."))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "\(context.codingPath.map(\.stringValue).joined(separator: ".")) is not what a report holds"
        @unknown default: return "not a report's shape"
        }
    }
}
