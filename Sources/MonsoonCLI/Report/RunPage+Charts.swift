import MonsoonEngine

/// Throughput over time (overall and per host) and time to first byte per host.
extension RunPage {
    private static let plotLeft = 90.0
    private static let hostColours = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22"]

    func throughputChart() -> String {
        guard let throughput = report.throughput, !throughput.overall.isEmpty else {
            return "<p class=\"note\">No bytes over time were recorded.</p>"
        }
        let bucket = throughput.bucketSeconds
        // The hosts that moved the most, each its own colour; the rest are in the overall line only.
        let hosts = throughput.hosts.keys.sorted { (throughput.hosts[$0]?.reduce(0, +) ?? 0, $1) > (throughput.hosts[$1]?.reduce(0, +) ?? 0, $0) }
            .prefix(Self.chartHosts)
        let peak = (throughput.overall.max() ?? 0) / bucket
        let top = 8.0, bottom = 228.0
        let x = SVGAxis(maximum: span, from: Self.plotLeft, to: Self.width - 16)
        let y = SVGAxis(maximum: peak * 1.05, from: bottom, to: top)
        func line(_ series: [Double], host: String, attributes: String) -> String {
            // A step per bucket: its rate held over its time.
            var points: [String] = []
            points.reserveCapacity(series.count * 2)
            for (index, bytes) in series.enumerated() {
                let rate = y.position(bytes / bucket)
                points.append("\(Self.pixels(x.position(Double(index) * bucket))),\(Self.pixels(rate))")
                points.append("\(Self.pixels(x.position(Double(index + 1) * bucket))),\(Self.pixels(rate))")
            }
            return "<polyline class=\"series\(host == "overall" ? " overall" : "")\" data-host=\"\(Self.escape(host))\"\(attributes) "
                + "points=\"\(points.joined(separator: " "))\"><title>\(Self.escape(host))</title></polyline>"
        }
        var lines: [String] = []
        var keys = ["<span class=\"item\"><svg width=\"14\" height=\"4\"><rect width=\"14\" height=\"4\" fill=\"#222\"/></svg> overall</span>"]
        for (index, host) in hosts.enumerated() {
            let colour = Self.hostColours[index % Self.hostColours.count]
            lines.append(line(throughput.hosts[host] ?? [], host: host, attributes: " style=\"stroke:\(colour)\""))
            keys.append("<span class=\"item\"><svg width=\"14\" height=\"4\"><rect width=\"14\" height=\"4\" fill=\"\(colour)\"/></svg> \(Self.escape(host))</span>")
        }
        // Drawn last, dashed: over a single host's line, both show.
        lines.append(line(throughput.overall, host: "overall", attributes: ""))
        var notes: [String] = []
        if throughput.hosts.count > hosts.count {
            notes.append("\(throughput.hosts.count - hosts.count) more hosts are in the overall line only")
        }
        if let limit = throughput.hostLimit, report.hosts.count > limit {
            notes.append("the report keeps bytes over time for \(limit) hosts")
        }
        notes.append("each request's bytes are spread evenly from its first byte to its end, in steps of \(SVGAxis.seconds(bucket))")
        let height = bottom + 28
        return "<div class=\"legend\">\(keys.joined(separator: " "))</div>\n"
            + "<svg class=\"chart throughput-chart\" width=\"\(Self.pixels(Self.width))\" height=\"\(Self.pixels(height))\" viewBox=\"0 0 \(Self.pixels(Self.width)) \(Self.pixels(height))\" "
            + "role=\"img\" aria-label=\"bytes per second over the run's seconds\">\n"
            + xAxis(x, top: top, bottom: bottom) + "\n" + yAxis(y, left: Self.plotLeft, label: { "\(ByteCount.format(Int($0)))/s" }) + "\n"
            + "<g class=\"throughput\" data-bucket-seconds=\"\(Self.pixels(bucket))\">\n\(lines.joined(separator: "\n"))\n</g>\n</svg>\n"
            + "<p class=\"note\">\(Self.escape(notes.joined(separator: "; "))).</p>"
    }

    func timeToFirstByteChart() -> String {
        let hosts = report.hosts.keys.filter { report.hosts[$0]?.timeToFirstByteSeconds.p50 != nil }.sorted()
        guard !hosts.isEmpty else { return "<p class=\"note\">No request got a first byte.</p>" }
        let shown = hosts.prefix(Self.listedHosts)
        let row = 18.0, top = 4.0
        let bottom = top + row * Double(shown.count)
        let slowest = shown.compactMap { report.hosts[$0]?.timeToFirstByteSeconds.p90 }.max() ?? 0
        let x = SVGAxis(maximum: slowest * 1.05, from: 180, to: Self.width - 16)
        var bars: [String] = []
        for (index, host) in shown.enumerated() {
            guard let ttfb = report.hosts[host]?.timeToFirstByteSeconds, let p50 = ttfb.p50 else { continue }
            let y = top + row * Double(index)
            let p90 = ttfb.p90 ?? p50
            func rect(_ kind: String, _ value: Double, inset: Double) -> String {
                "<rect class=\"\(kind)\" x=\"\(Self.pixels(x.from))\" y=\"\(Self.pixels(y + inset))\" width=\"\(Self.pixels(max(1, x.position(value) - x.from)))\" "
                    + "height=\"\(Self.pixels(row - 2 * inset))\" data-seconds=\"\(Self.pixels(Self.rounded(value)))\"><title>\(kind) \(SVGAxis.duration(value))</title></rect>"
            }
            bars.append("<g class=\"host\" data-host=\"\(Self.escape(host))\"><text x=\"174\" y=\"\(Self.pixels(y + row * 0.7))\" text-anchor=\"end\">"
                        + "\(Self.escape(String(host.prefix(28))))</text>\(rect("p90", p90, inset: 2))\(rect("p50", p50, inset: 5))</g>")
        }
        let height = bottom + 28
        let more = hosts.count > shown.count ? " \(hosts.count - shown.count) more hosts are in the table." : ""
        return "<div class=\"legend\"><span class=\"item\"><svg width=\"14\" height=\"10\"><rect width=\"14\" height=\"10\" fill=\"#2f6fb3\"/></svg> median (p50)</span> "
            + "<span class=\"item\"><svg width=\"14\" height=\"10\"><rect width=\"14\" height=\"10\" fill=\"#a8c5e6\"/></svg> p90</span></div>\n"
            + "<svg class=\"chart ttfb-chart\" width=\"\(Self.pixels(Self.width))\" height=\"\(Self.pixels(height))\" viewBox=\"0 0 \(Self.pixels(Self.width)) \(Self.pixels(height))\" "
            + "role=\"img\" aria-label=\"seconds to the first byte per host\">\n"
            + xAxis(x, top: top, bottom: bottom) + "\n<g class=\"ttfb\">\n\(bars.joined(separator: "\n"))\n</g>\n</svg>"
            + (more.isEmpty ? "" : "<p class=\"note\">\(more)</p>")
    }

    /// A value axis along `left`, its ticks labelled by `label`.
    private func yAxis(_ y: SVGAxis, left: Double, label: (Double) -> String) -> String {
        let ticks = y.ticks(count: 4).map { tick in
            "<g class=\"tick\" data-value=\"\(Self.pixels(tick))\"><line x1=\"\(Self.pixels(left - 4))\" x2=\"\(Self.pixels(left))\" y1=\"\(Self.pixels(y.position(tick)))\" "
                + "y2=\"\(Self.pixels(y.position(tick)))\"/><text class=\"tick\" x=\"\(Self.pixels(left - 6))\" y=\"\(Self.pixels(y.position(tick) + 4))\" "
                + "text-anchor=\"end\">\(Self.escape(label(tick)))</text></g>"
        }
        return "<g class=\"axis y\" data-unit=\"B/s\" data-max=\"\(Self.pixels(y.maximum))\"><line x1=\"\(Self.pixels(left))\" x2=\"\(Self.pixels(left))\" "
            + "y1=\"\(Self.pixels(y.from))\" y2=\"\(Self.pixels(y.to))\"/>\(ticks.joined())</g>"
    }
}
