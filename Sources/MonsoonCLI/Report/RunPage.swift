import FoundationEssentials
import MonsoonEngine

/// The page of a run (`monsoon report`, `--report-html`): one self-contained HTML file, inline CSS
/// and SVG, nothing fetched (its Content-Security-Policy forbids any load): a timeline with a bar
/// per download, throughput over time overall and per host, time to first byte and a table per
/// host. Everything the report got from servers (hosts, URLs, names, errors) is HTML-escaped here.
///
/// For a browser's DOM to check: `g.timeline` holds a `g.podcast` heading per podcast, each followed
/// by a `g.download[data-download][data-outcome]` per download with its `text.label`; axes are
/// `g.axis.x`, `g.axis.y` with `text.tick` labels; `g.throughput` holds a
/// `polyline.series[data-host]` per host and `overall`; `g.ttfb` a `g.host[data-host]` each; the
/// tables are `table.failures` and `table.hosts`. An inline script counts what really rendered (bars
/// and lines with a width, labels inside the page) into the body's `data-rendered-*`.

struct RunPage {
    let report: RunReportFile

    /// The hosts the throughput chart draws a line for, besides the overall one.
    static let chartHosts = 8
    /// The hosts the time-to-first-byte chart and the table show.
    static let listedHosts = 200

    static let width = 960.0

    /// The page of the report in `data` (as `--report` wrote it); `path` names it in errors.
    static func html(reportData data: Data, path: String) throws -> String {
        RunPage(report: try RunReportFile.decode(data, path: path)).html()
    }

    func html() -> String {
        let title = "monsoon \(report.command): \(report.started)"
        return """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(Self.escape(title))</title>
        <style>\(Self.css)</style>
        </head>
        <body>
        \(header())
        <h2>Downloads</h2>
        \(legend())
        \(timeline())
        \(failureTable())
        <h2>Throughput</h2>
        \(throughputChart())
        <h2>Time to first byte</h2>
        \(timeToFirstByteChart())
        <h2>Hosts</h2>
        \(hostTable())
        <script>\(Self.script)</script>
        </body>
        </html>

        """
    }

    private func header() -> String {
        let overall = report.overall
        var lines = ["<h1>monsoon \(Self.escape(report.command))</h1>",
                     "<p class=\"summary\">Started \(Self.escape(report.started)), ended \(Self.escape(report.ended)): "
                        + "\(SVGAxis.seconds(Self.rounded(report.wallSeconds))); \(ByteCount.format(overall.bytes)) at "
                        + "\(ByteCount.format(Int(overall.throughputBytesPerSecond)))/s in \(overall.attempts) requests.</p>"]
        if let outcomes = report.outcomes, !outcomes.isEmpty {
            let counts = outcomes.keys.sorted().map {
                "<span class=\"outcome\" data-outcome=\"\(Self.escape($0))\">\(outcomes[$0] ?? 0) \(Self.escape(Self.outcomeWords[$0] ?? $0))</span>"
            }
            lines.append("<p class=\"outcomes\">Downloads: \(counts.joined(separator: ", ")).</p>")
        }
        if let skipped = report.skipped, !skipped.isEmpty {
            let counts = skipped.keys.sorted { (skipped[$0] ?? 0, $1) > (skipped[$1] ?? 0, $0) }.map {
                "<span class=\"skip\" data-reason=\"\(Self.escape($0))\">\(skipped[$0] ?? 0) \(Self.escape(Self.skipWords[$0] ?? $0))</span>"
            }
            lines.append("<p class=\"skipped\">Not downloaded: \(counts.joined(separator: ", ")).</p>")
        }
        if let timeline = report.timeline, timeline.leftOut > 0 {
            lines.append("<p class=\"note\">The timeline shows the first \(timeline.detailed) of \(timeline.downloads) downloads "
                         + "(a report keeps the detail of at most \(timeline.detailLimit)); throughput, outcomes and hosts count them all.</p>")
        }
        if report.downloads == nil {
            lines.append("<p class=\"note\">This report was written by a Monsoon that did not record downloads: only the hosts are shown.</p>")
        }
        return lines.joined(separator: "\n")
    }

    private func legend() -> String {
        let outcomes = ["completed", "failed", "interrupted", "paused", "removed", "queued", "notStarted"]
        let phases = [("queued", "queued"), ("waiting", "waiting for the first byte"), ("transferring", "transferring"),
                      ("transferring failed-attempt", "a request that failed"), ("retrying", "waiting to retry"), ("paused", "paused")]
        let outcomeItems = outcomes.map {
            "<span class=\"item\"><svg width=\"14\" height=\"10\"><rect class=\"swatch \($0)\" width=\"14\" height=\"10\"/></svg> \(Self.outcomeWords[$0] ?? $0)</span>"
        }
        let phaseItems = phases.map { "<span class=\"item\"><svg width=\"14\" height=\"10\"><rect class=\"swatch phase-\($0.0)\" width=\"14\" height=\"10\"/></svg> \($0.1)</span>" }
        return "<div class=\"legend\">Outcome: \(outcomeItems.joined(separator: " "))<br>Phase: \(phaseItems.joined(separator: " "))</div>"
    }

    private func hostTable() -> String {
        let hosts = report.hosts.keys.sorted { (report.hosts[$0]?.bytes ?? 0, $1) > (report.hosts[$1]?.bytes ?? 0, $0) }
        var rows: [String] = []
        for host in hosts.prefix(Self.listedHosts) {
            guard let tally = report.hosts[host] else { continue }
            rows.append(Self.row(name: host, tally, cell: "td", attributes: " data-host=\"\(Self.escape(host))\""))
        }
        let header = ["Host", "Bytes", "Throughput", "Requests", "Completed", "Failed requests", "First byte p50", "p90", "p99",
                      "Resumed", "Connections opened", "reused"].map { "<th>\($0)</th>" }.joined()
        let more = hosts.count > Self.listedHosts ? "<p class=\"note\">\(hosts.count - Self.listedHosts) more hosts are in the report.</p>" : ""
        return "<table class=\"hosts\">\n<thead><tr>\(header)</tr></thead>\n<tbody>\n\(rows.joined(separator: "\n"))\n</tbody>\n"
            + "<tfoot>\(Self.row(name: "all hosts", report.overall, cell: "th", attributes: ""))</tfoot>\n</table>\(more)"
    }

    private static func row(name: String, _ tally: RunReportFile.Tally, cell: String, attributes: String) -> String {
        // A status by its number, any other failure in words.
        let failures = tally.failedAttemptsByStatus.keys.sorted().map { key in
            "\(Int(key).map { "HTTP \($0)" } ?? DownloadError.Code(rawValue: key).words): \(tally.failedAttemptsByStatus[key] ?? 0)"
        }.joined(separator: ", ")
        let seconds: (Double?) -> String = { $0.map(SVGAxis.duration) ?? "–" }
        let cells = [name, ByteCount.format(tally.bytes), ByteCount.format(Int(tally.throughputBytesPerSecond)) + "/s", String(tally.attempts),
                     String(tally.completedAttempts), failures.isEmpty ? "–" : failures, seconds(tally.timeToFirstByteSeconds.p50),
                     seconds(tally.timeToFirstByteSeconds.p90), seconds(tally.timeToFirstByteSeconds.p99), ByteCount.format(tally.resumedBytes),
                     String(tally.connections.opened), String(tally.connections.reused)]
        return "<tr\(attributes)>" + cells.map { "<\(cell)>\(escape($0))</\(cell)>" }.joined() + "</tr>"
    }

    /// Seconds to the millisecond, for labels.
    static func rounded(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }

    /// A number for an SVG attribute: two decimals at most.
    static func pixels(_ value: Double) -> String {
        let rounded = (value * 100).rounded() / 100
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }

    /// Text made safe inside HTML elements and quoted attributes.
    static func escape(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            // Controls are not text: shown as the replacement character rather than passed on.
            case _ where scalar.value < 0x20 && scalar != "\n" && scalar != "\t", _ where (0x7F...0x9F).contains(scalar.value): result += "\u{FFFD}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
