import MonsoonEngine
enum ClusterRefresh {
    struct Outcome: Sendable {}
    static func run(_ job: ClaimedJob, manager: DownloadManager, queue: JobQueue) async throws -> Outcome { Outcome() }
}
