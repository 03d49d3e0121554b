import FoundationEssentials
import MonsoonEngine

extension WorkerSession {
    /// At each tick: connect again if the database was lost, renew the leases every quarter of
    /// a lease, stop everything once they could not be renewed for three quarters, record what
    /// waited for the database, and, at each maintenance interval, sweep the work folder and
    /// maintain the shared queue if this worker leads.
    func maintain() async {
        reconnectIfDue()
        let now = ContinuousClock.now
        if connected, now - lastRenewal >= renewalInterval { await renewAll() }
        if held.values.contains(where: { $0.finished == nil }), ContinuousClock.now - lastRenewal >= fenceAfter { await fence() }
        guard connected else { return }
        await settleFinished()
        // Discarding, there are no files to list.
        if !configuration.discard, now - lastManifests >= Self.manifestInterval { writeManifests() }
        if now - lastMaintenance >= .milliseconds(Int(maintainer.seconds * 1000)) {
            lastMaintenance = now
            database { try maintainer.run(on: $0, report: report) }
            sweepWorkFolder()
        }
    }

    /// How often, at the most, the manifests of the feeds it downloaded into are written.
    static let manifestInterval: Duration = .seconds(10)

    /// Writes the manifest of each feed with downloads recorded since its last one. A manifest
    /// that cannot be written is reported and tried again at the next turn; no job waits for it.
    func writeManifests() {
        guard !dirtyFeeds.isEmpty, connected else { return }
        lastManifests = .now
        for feed in dirtyFeeds.sorted() {
            // A failure is reported (its message names the manifest) and the feed stays to do.
            if database({ try ClusterManifests.write(feeds: [feed], root: configuration.folder, on: $0.connection) }) != nil { dirtyFeeds.remove(feed) }
        }
    }

    /// Renews every held lease in one statement; a job missing from the answer is stopped at once.
    func renewAll() async {
        let leases = Array(held.keys)
        // Bytes a second its transfers received over the period, unfinished ones included (what
        // `cluster status` shows): an idle worker's is 0.
        let speed = renewalSpeed.read(received.value)
        // The server counts the new lease from its statement's start: so does the fence here.
        let sent = ContinuousClock.now
        guard let renewed = database({ try $0.renew(leases, bytes: summary.bytes, speed: speed) }) else { return }
        lastRenewal = sent
        for lease in leases where !renewed.contains(lease) {
            if let finished = held[lease]?.finished {
                // Done, but no longer this worker's to record: left as a whole part, which the
                // holder of the job now takes over instead of downloading it again.
                keepAsPart(finished.filePath)
                report("lost \(lease) (taken back after its lease ran out) before recording it: its file was left for the worker that holds the job now")
            } else {
                report("lost \(lease) (paused, or taken back after its lease ran out): its transfer stopped")
            }
            summary.lost += 1
            await forget(lease, keepingPart: true)
        }
    }

    /// The leases could not be renewed for three quarters of their time: another worker may
    /// take the jobs soon, so every transfer stops here now, before a late write could race the
    /// new holder; its part stays in the work folder for whoever holds the job next. Files that
    /// finished wait: each is put in place once the database is back, if its job is still this
    /// worker's by its token (`settleFinished`), else left as a part for the new holder.
    func fence() async {
        let running = held.filter { $0.value.finished == nil }.map(\.key)
        await forget(running, keepingPart: true)
        summary.lost += running.count
        let waiting = held.count
        report("could not renew its leases for \(Int(configuration.leaseSeconds * 0.75)) s: stopped its \(running.count) transfers, their parts kept "
               + "for whoever runs the jobs" + (waiting > 0 ? "; \(waiting) finished files wait for the database" : ""))
    }

    /// At the stop: every job goes back to the queue, fenced, its transfer stopped.
    func releaseAll() async {
        let leases = Array(held.keys)
        guard !leases.isEmpty else { return }
        let released = database { try $0.release(leases) }
        summary.released += released?.count ?? 0
        await forget(leases, keepingPart: false)
    }
}
