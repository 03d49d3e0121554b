import MonsoonEngine

/// The timeline's part of the `--report` JSON: `outcomes`, `timeline`, `downloads` and `throughput`.
extension RunTimeline {
    /// The members to add to the report's object (without braces), for a run that lasted `wall` seconds.
    func jsonMembers(wall: Double) -> String {
        var outcomes: [String: Int] = [:]
        for id in endings.keys { outcomes[outcome(of: id), default: 0] += 1 }
        let outcomeList = outcomes.keys.sorted().map { "\(JSONText.string($0)): \(outcomes[$0] ?? 0)" }.joined(separator: ", ")
        let downloads = traces.map { json($0, wall: wall) }.joined(separator: ",\n  ")
        let hosts = throughput.hosts.keys.sorted().map { "\(JSONText.string($0)): \(Self.json(throughput.hosts[$0] ?? []))" }
        return "\"outcomes\": {\(outcomeList)},\n \"timeline\": {\"downloads\": \(endings.count), \"detailed\": \(traces.count), "
            + "\"leftOut\": \(downloadsLeftOut), \"detailLimit\": \(Self.detailLimit), \"attemptLimit\": \(Self.attemptLimit)},\n"
            + " \"throughput\": {\"bucketSeconds\": \(JSONText.number(throughput.bucketSeconds)), \"hostLimit\": \(Throughput.hostLimit), "
            + "\"overall\": \(Self.json(throughput.overall)),\n  \"hosts\": {\(hosts.joined(separator: ",\n  "))}},\n"
            + " \"downloads\": [\(downloads.isEmpty ? "" : "\n  " + downloads)]"
    }

    private func json(_ trace: Trace, wall: Double) -> String {
        var phases: [String] = []
        for (index, phase) in trace.phases.enumerated() {
            let end: Double
            if index + 1 < trace.phases.count {
                end = trace.phases[index + 1].start
            } else {
                // A download left running, queued or paused is so until the run's end; an ending is a moment.
                end = ["completed", "failed", "removed"].contains(phase.status) ? phase.start : max(phase.start, wall)
            }
            phases.append("{\"status\": \(JSONText.string(phase.status)), \"start\": \(Self.seconds(phase.start)), \"end\": \(Self.seconds(end))}")
        }
        let attempts = trace.attempts.map { attempt in
            "{\"start\": \(Self.seconds(attempt.start)), \"end\": \(Self.seconds(attempt.end)), \"bytes\": \(attempt.bytes), "
                + "\"status\": \(attempt.status), \"resumedFrom\": \(attempt.resumedFrom), "
                + "\"timeToFirstByte\": \(attempt.timeToFirstByte.map(Self.seconds) ?? "null"), \"newConnections\": \(attempt.newConnections), "
                + "\"outcome\": \(attempt.error == nil ? "\"completed\"" : "\"failed\""), \"error\": \(attempt.error.map(JSONText.string) ?? "null")}"
        }
        return "{\"id\": \(JSONText.string(trace.id)), \"host\": \(JSONText.string(trace.host)), \"url\": \(JSONText.string(trace.url)), "
            + "\"name\": \(JSONText.string(trace.name)), \"podcast\": \(LibraryJSON.string(trace.podcast)), \"title\": \(LibraryJSON.string(trace.title)), "
            + "\"failure\": \(trace.failure.map { "{\"kind\": \(JSONText.string($0.kind)), \"message\": \(JSONText.string($0.message))}" } ?? "null"), "
            + "\"outcome\": \(JSONText.string(outcome(of: DownloadID(trace.id)))), "
            + "\"bytes\": \(trace.attempts.reduce(0) { $0 + $1.bytes }), "
            + "\"phases\": [\(phases.joined(separator: ", "))], \"phasesLeftOut\": \(trace.phasesLeftOut),\n   "
            + "\"attempts\": [\(attempts.joined(separator: ", "))], \"attemptsLeftOut\": \(trace.attemptsLeftOut)}"
    }

    /// Seconds to the millisecond.
    static func seconds(_ value: Double) -> String { JSONText.number((value * 1000).rounded() / 1000) }

    private static func json(_ series: [Double]) -> String {
        "[" + series.map { String(Int($0.rounded())) }.joined(separator: ", ") + "]"
    }
}
