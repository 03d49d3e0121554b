import FoundationEssentials

/// A worker's part in the cluster's maintenance: at each interval it asks to lead (the leader
/// renews its lead so) and, leading, does a round of it (`JobQueue.maintain`). Every worker asks,
/// so another takes over within a few intervals of a leader's death; the others only claim,
/// renew and complete.
struct QueueMaintainer {
    /// How often it asks and, leading, maintains.
    let seconds: Double
    let keepFinished: Double
    /// Whether it led at its last try.
    private(set) var leads = false

    init(_ configuration: WorkerConfiguration) {
        seconds = configuration.maintenanceSeconds ?? configuration.leaseSeconds / 4
        keepFinished = configuration.keepFinishedSeconds
    }

    /// One try to lead and, leading, one round; `report` is told when the lead changes hands,
    /// and when a round found a worker gone (its leases ran out, or its row is old), never for
    /// routine work.
    mutating func run(on queue: JobQueue, report: (String) -> Void) throws(PostgresError) {
        // Four intervals: a leader late for a round or two (a slow statement, a busy loop) keeps its lead.
        let leading = try queue.lead(for: 4 * seconds)
        if leading != leads { report(leading ? "leads the cluster's maintenance" : "no longer leads the cluster's maintenance: another worker took it over") }
        leads = leading
        guard leading else { return }
        let round = try queue.maintain(keepingFinished: keepFinished)
        if round.reaped > 0 || round.removedWorkers > 0 { report("maintenance: \(round)") }
    }
}
