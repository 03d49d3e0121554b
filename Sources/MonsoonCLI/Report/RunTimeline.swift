import FoundationEssentials
import MonsoonEngine
import MonsoonPodcasts

/// What a run's page needs, gathered from the run's events: each download's phases (from its
/// status changes) and attempts, its outcome, and bytes over time (`Throughput`).
///
/// Bounded however long the run: the first `detailLimit` downloads seen keep their detail
/// (at most `attemptLimit` attempts and `phaseLimit` phases each); later ones only count
/// towards the outcomes, the throughput and the hosts. Times are seconds from the run's start.
struct RunTimeline {
    static let detailLimit = 1000
    static let attemptLimit = 50
    static let phaseLimit = 100

    /// A stretch of a download's life in one status (`queued`, `downloading`, `waitingToRetry`, …).
    struct Phase: Equatable {
        var status: String
        var start: Double
    }

    /// One request of a download; read back from the report as it was written.
    struct Attempt: Equatable, Decodable {
        var start: Double
        var end: Double
        var bytes: Int
        var status: Int
        var resumedFrom: Int
        var timeToFirstByte: Double?
        var newConnections: Int
        var error: String?
    }

    /// One download in detail.
    struct Trace {
        var id: String
        var host: String
        var url: String
        var name: String
        /// An episode's podcast and title, from its request.
        var podcast: String?
        var title: String?
        /// Why it failed, when it did: the kind of failure (`DownloadError.Code`) and its message.
        var failure: (kind: String, message: String)?
        var phases: [Phase] = []
        var attempts: [Attempt] = []
        var attemptsLeftOut = 0
        var phasesLeftOut = 0
    }

    /// How a download was left, for every download of the run (detailed or not).
    struct Ending {
        var status: String
        var started = false
    }

    /// The run's start: times are seconds since.
    let start: Date
    private(set) var traces: [Trace] = []
    private var detailed: [DownloadID: Int] = [:]
    private(set) var endings: [DownloadID: Ending] = [:]
    private(set) var throughput = Throughput()
    /// When the run's first download event came: a download first seen starting was queued since.
    private var firstEvent: Double?

    init(start: Date) { self.start = start }

    var downloadsLeftOut: Int { max(0, endings.count - traces.count) }

    mutating func observe(_ event: DownloadEvent, at date: Date) {
        let time = max(0, date.timeIntervalSince(start))
        if firstEvent == nil { firstEvent = time }
        switch event {
        case .added(let download):
            enter(download, status: DownloadStatus.queued.rawValue, at: time)
        case .statusChanged(let download):
            enter(download, status: download.status.rawValue, at: time)
        case .removed(let id):
            guard endings[id] != nil else { return }
            endings[id]?.status = "removed"
            if let index = detailed[id] { Self.append(Phase(status: "removed", start: time), to: &traces[index]) }
        case .attempt(let report):
            add(report)
        case .progress:
            return
        }
    }

    /// What a download came to at the end of the run: `completed`, `failed`, `paused`,
    /// `removed`, `interrupted` (still running or waiting to retry), `notStarted`, or `queued`
    /// (started, then left queued: waiting for disk space).
    func outcome(of id: DownloadID) -> String {
        guard let ending = endings[id] else { return "notStarted" }
        switch ending.status {
        case DownloadStatus.downloading.rawValue, DownloadStatus.waitingToRetry.rawValue: return "interrupted"
        case DownloadStatus.queued.rawValue: return ending.started ? "queued" : "notStarted"
        default: return ending.status
        }
    }

    private mutating func enter(_ download: Download, status: String, at time: Double) {
        let id = download.id
        var ending = endings[id] ?? Ending(status: status)
        ending.status = status
        if status == DownloadStatus.downloading.rawValue { ending.started = true }
        endings[id] = ending
        let index: Int
        if let known = detailed[id] {
            index = known
        } else {
            guard traces.count < Self.detailLimit else { return }
            let url = download.request.url
            var trace = Trace(id: id.rawValue, host: Self.hostKey(url), url: Redaction.redact(url.absoluteString),
                              name: download.filePath.map { $0.fileName } ?? url.lastPathComponent,
                              podcast: download.request.userInfo[EpisodeQueue.podcastKey], title: EpisodeLabel(download.request)?.title)
            // Seen first as it starts (`get` does not listen for `.added`): it was queued since the run queued its first.
            if status != DownloadStatus.queued.rawValue { trace.phases.append(Phase(status: DownloadStatus.queued.rawValue, start: min(firstEvent ?? time, time))) }
            index = traces.count
            traces.append(trace)
            detailed[id] = index
        }
        if let path = download.filePath { traces[index].name = path.fileName }
        if status == DownloadStatus.failed.rawValue, let error = download.lastError { traces[index].failure = (error.code.rawValue, error.message) }
        if traces[index].phases.last?.status != status { Self.append(Phase(status: status, start: time), to: &traces[index]) }
    }

    private mutating func add(_ report: AttemptReport) {
        let start = max(0, report.started.timeIntervalSince(self.start))
        let end = start + report.duration
        // The bytes flowed between the first byte and the end.
        throughput.add(bytes: report.bytes, from: start + (report.timeToFirstByte ?? 0), to: end, host: report.host)
        guard let index = detailed[report.id] else { return }
        if traces[index].attempts.isEmpty { traces[index].host = report.host }
        guard traces[index].attempts.count < Self.attemptLimit else {
            traces[index].attemptsLeftOut += 1
            return
        }
        traces[index].attempts.append(Attempt(
            start: start, end: end, bytes: report.bytes, status: report.status, resumedFrom: report.resumedFrom,
            timeToFirstByte: report.timeToFirstByte, newConnections: report.newConnections, error: report.error?.message))
    }

    private static func append(_ phase: Phase, to trace: inout Trace) {
        guard trace.phases.count < phaseLimit else {
            trace.phasesLeftOut += 1
            return
        }
        trace.phases.append(phase)
    }

    /// The host (and port) of a URL, as attempts name it.
    static func hostKey(_ url: URL) -> String {
        let host = url.host?.lowercased() ?? ""
        return url.port.map { "\(host):\($0)" } ?? host
    }
}
