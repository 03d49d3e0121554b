import MonsoonEngine

/// What failed and why, and the words the page uses for outcomes and skips.
extension RunPage {
    static let outcomeWords = ["completed": "completed", "failed": "failed", "interrupted": "interrupted", "paused": "paused", "removed": "removed",
                               "queued": "left waiting for disk space", "notStarted": "not started"]

    /// By `ArchiveRun.Plan.skips`' reasons.
    static let skipWords = [
        "alreadyArchived": "already archived", "missingFromDisk": "archived before but gone from disk (--refetch-missing fetches them)",
        "extrasThere": "artwork, transcripts or chapters already there", "noMediaFile": "without a media file",
        "dates": "outside --since and --until", "pattern": "left out by --match or --exclude", "latest": "older than --latest",
        "limit": "over --limit, left for a later run",
    ]

    /// A row per failed download: its podcast, its name, the kind of failure in words, and the message the run gave.
    func failureTable() -> String {
        let failed = podcastGroups(report.downloads ?? []).flatMap(\.downloads).filter { $0.outcome == "failed" }
        guard !failed.isEmpty else { return "" }
        let rows = failed.map { download in
            // A report from before failures were recorded still has its last request's error.
            let kind = download.failure.map { DownloadError.Code(rawValue: $0.kind).words } ?? "–"
            let message = download.failure?.message ?? download.attempts.last?.error ?? "–"
            let cells = [download.podcast ?? "", download.title ?? download.name, kind, message]
            return "<tr data-download=\"\(Self.escape(download.id))\">" + cells.map { "<td>\(Self.escape($0))</td>" }.joined() + "</tr>"
        }
        let detailed = report.outcomes?["failed"].map { $0 > failed.count } ?? false
        return "<h2>Failures</h2>\n<table class=\"failures\">\n<thead><tr><th>Podcast</th><th>Download</th><th>What happened</th><th>Why</th></tr></thead>\n"
            + "<tbody>\n\(rows.joined(separator: "\n"))\n</tbody>\n</table>"
            + (detailed ? "<p class=\"note\">More downloads failed than the report keeps the detail of.</p>" : "")
    }
}
