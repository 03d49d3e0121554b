import MonsoonEngine

/// The timeline: one row per download, grouped by podcast, its phases as bars on a time axis in seconds.
extension RunPage {
    /// The label column's width and the margins around the plot.
    private static let labelWidth = 240.0
    private static let axisHeight = 28.0
    /// Rows stay tall enough for their label however many there are: the page grows instead.
    private static let rowHeight = 14.0
    private static let headingHeight = 20.0
    /// Columns of a label (`TerminalText` columns: a wide character is two), cut in the middle
    /// to fit the label column at 11 px.
    static let labelColumns = 36

    /// Seconds the charts span: the run, or the last thing recorded if a clock made it later.
    var span: Double {
        var span = report.wallSeconds
        for download in report.downloads ?? [] {
            for phase in download.phases { span = max(span, phase.end) }
            for attempt in download.attempts { span = max(span, attempt.end) }
        }
        return max(span, 0.001)
    }

    func timeline() -> String {
        let downloads = report.downloads ?? []
        guard !downloads.isEmpty else { return "<p class=\"note\">No download was recorded.</p>" }
        let plotTop = 4.0
        let x = SVGAxis(maximum: span, from: Self.labelWidth, to: Self.width - 16)
        var parts: [String] = []
        var top = plotTop
        for (podcast, members) in podcastGroups(downloads) {
            if let podcast {
                parts.append("<g class=\"podcast\" data-downloads=\"\(members.count)\"><text class=\"heading\" x=\"4\" y=\"\(Self.pixels(top + 14))\">"
                             + "\(Self.escape(TerminalText.middleCut(podcast, width: 120)))<title>\(Self.escape(podcast))</title></text></g>")
                top += Self.headingHeight
            }
            for download in members {
                parts.append(bar(download, top: top, height: Self.rowHeight, x: x))
                top += Self.rowHeight
            }
        }
        let height = top + Self.axisHeight
        return "<svg class=\"chart timeline-chart\" width=\"\(Self.pixels(Self.width))\" height=\"\(Self.pixels(height))\" "
            + "viewBox=\"0 0 \(Self.pixels(Self.width)) \(Self.pixels(height))\" role=\"img\" aria-label=\"one bar per download over the run's seconds\">\n"
            + xAxis(x, top: plotTop, bottom: top) + "\n"
            + "<g class=\"timeline\" data-downloads=\"\(downloads.count)\">\n\(parts.joined(separator: "\n"))\n</g>\n</svg>"
    }

    /// The downloads by podcast, in the order each podcast came first, those of none last; with no podcast at all, one
    /// group without a heading.
    func podcastGroups(_ downloads: [RunReportFile.Download]) -> [(podcast: String?, downloads: [RunReportFile.Download])] {
        var groups: [(podcast: String?, downloads: [RunReportFile.Download])] = []
        var index: [String: Int] = [:]
        var others: [RunReportFile.Download] = []
        for download in downloads {
            guard let podcast = download.podcast, !podcast.isEmpty else {
                others.append(download)
                continue
            }
            let at = index[podcast] ?? groups.count
            if at == groups.count {
                index[podcast] = at
                groups.append((podcast, []))
            }
            groups[at].downloads.append(download)
        }
        if !others.isEmpty { groups.append((groups.isEmpty ? nil : "Other downloads", others)) }
        return groups
    }

    /// One download's bar: its queued, retrying and paused phases as thin bars, each attempt as
    /// a paler part (waiting for the first byte) and a full one (transferring), in its outcome's colour.
    private func bar(_ download: RunReportFile.Download, top: Double, height: Double, x: SVGAxis) -> String {
        var rects: [String] = []
        func rect(_ kind: String, from: Double, to: Double, thickness: Double, tip: String, failed: Bool = false) {
            // At least a pixel wide: a download that took no time still shows.
            let left = x.position(from)
            let width = max(1, x.position(to) - left)
            let y = top + (height - height * thickness) / 2
            rects.append("<rect class=\"phase-\(kind)\(failed ? " failed-attempt" : "")\" x=\"\(Self.pixels(left))\" y=\"\(Self.pixels(y))\" width=\"\(Self.pixels(width))\" "
                         + "height=\"\(Self.pixels(max(1, height * thickness * 0.9)))\"><title>\(Self.escape(tip))</title></rect>")
        }
        for phase in download.phases {
            let seconds = "\(SVGAxis.seconds(Self.rounded(phase.start)))–\(SVGAxis.seconds(Self.rounded(phase.end)))"
            switch phase.status {
            case "queued": rect("queued", from: phase.start, to: phase.end, thickness: 0.35, tip: "queued \(seconds)")
            case "waitingToRetry": rect("retrying", from: phase.start, to: phase.end, thickness: 0.35, tip: "waiting to retry \(seconds)")
            case "paused": rect("paused", from: phase.start, to: phase.end, thickness: 0.35, tip: "paused \(seconds)")
            default: continue   // downloading is drawn by its attempts; an ending is a moment
            }
        }
        for attempt in download.attempts {
            let firstByte = attempt.timeToFirstByte.map { min(attempt.end, attempt.start + $0) } ?? attempt.end
            let what = attempt.status > 0 ? "HTTP \(attempt.status)" : "no response"
            let result = attempt.error.map { "failed: \($0)" } ?? "\(attempt.bytes) bytes"
            // An attempt that failed is outlined in red where it ended.
            let failed = attempt.error != nil
            rect("waiting", from: attempt.start, to: firstByte, thickness: 1, tip: "\(what), first byte after \(SVGAxis.duration(firstByte - attempt.start))",
                 failed: failed && attempt.timeToFirstByte == nil)
            if attempt.timeToFirstByte != nil {
                rect("transferring", from: firstByte, to: attempt.end, thickness: 1, tip: "\(what): \(result)", failed: failed)
            }
        }
        let name = download.title ?? download.name
        let full = [download.podcast, name].compactMap { $0?.isEmpty == false ? $0 : nil }.joined(separator: ": ")
        let label = "<text class=\"label\" x=\"\(Self.pixels(Self.labelWidth - 6))\" y=\"\(Self.pixels(top + height * 0.75))\" text-anchor=\"end\">"
            + "\(Self.escape(TerminalText.middleCut(name, width: Self.labelColumns)))<title>\(Self.escape(full))</title></text>"
        let tip = "\(full) (\(download.id)): \(Self.outcomeWords[download.outcome] ?? download.outcome), \(ByteCount.format(download.bytes)), \(download.url)"
        return "<g class=\"download \(Self.escape(download.outcome))\" data-download=\"\(Self.escape(download.id))\" data-outcome=\"\(Self.escape(download.outcome))\" "
            + "data-host=\"\(Self.escape(download.host))\"><title>\(Self.escape(tip))</title>" + label + rects.joined() + "</g>"
    }

    /// A time axis in seconds along `bottom`, with faint grid lines up to `top`.
    func xAxis(_ x: SVGAxis, top: Double, bottom: Double) -> String {
        let ticks = x.ticks()
        let grid = ticks.map { "<line x1=\"\(Self.pixels(x.position($0)))\" x2=\"\(Self.pixels(x.position($0)))\" y1=\"\(Self.pixels(top))\" y2=\"\(Self.pixels(bottom))\"/>" }
        let labels = ticks.map { tick in
            "<g class=\"tick\" data-value=\"\(Self.pixels(tick))\"><line x1=\"\(Self.pixels(x.position(tick)))\" x2=\"\(Self.pixels(x.position(tick)))\" "
                + "y1=\"\(Self.pixels(bottom))\" y2=\"\(Self.pixels(bottom + 4))\"/><text class=\"tick\" x=\"\(Self.pixels(x.position(tick)))\" "
                + "y=\"\(Self.pixels(bottom + 16))\" text-anchor=\"middle\">\(SVGAxis.seconds(tick))</text></g>"
        }
        return "<g class=\"grid\">\(grid.joined())</g>\n<g class=\"axis x\" data-unit=\"s\" data-max=\"\(Self.pixels(x.maximum))\">"
            + "<line x1=\"\(Self.pixels(x.from))\" x2=\"\(Self.pixels(x.to))\" y1=\"\(Self.pixels(bottom))\" y2=\"\(Self.pixels(bottom))\"/>"
            + labels.joined() + "</g>"
    }
}
