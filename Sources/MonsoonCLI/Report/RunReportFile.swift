import Foundation

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

    struct Download: Decodable {
        var id: String
        var host: String
        var url: String
        var name: String
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

    /// The report in `data`; `path` names it in the error.
    static func decode(_ data: Data, path: String) throws -> RunReportFile {
        do {
            return try JSONDecoder().decode(RunReportFile.self, from: data)
        } catch let error as DecodingError {
            throw CLIError(message: "\(path) is not a Monsoon run report (\(Self.describe(error))); give the FILE that --report wrote")
        }
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
