import FoundationEssentials

/// The shared queue at one moment (`cluster status`): its workers, its hosts and its totals, read
/// in one snapshot, every age and window by the database's clock.
public struct ClusterStatus: Sendable, Hashable {
    /// The database's time when it was read.
    public var at: Date
    /// Every worker that registered, by name.
    public var workers: [Worker]
    /// Every host with a job or a setting, by name.
    public var hosts: [Host]
    public var totals: Totals

    /// A worker process, as it registered and last renewed its leases.
    public struct Worker: Sendable, Hashable {
        public var name: String
        /// The machine it runs on.
        public var node: String
        public var pid: Int
        public var startedAt: Date
        /// Its last lease renewal.
        public var heartbeatAt: Date
        /// Seconds since `heartbeatAt`, by the database's clock.
        public var heartbeatAge: Double
        /// When it stopped cleanly; nil while it runs (or when it died).
        public var stoppedAt: Date?
        /// All it has downloaded, as of its last renewal.
        public var bytes: Int64
        /// What its transfers received a second over the period before its last renewal,
        /// unfinished ones included: 0 once it is idle.
        public var speed: Int64
        /// The jobs running under its leases.
        public var running: Int
        /// Not stopped, and renewed within its lease: a silent worker is dead or cut off, and its
        /// jobs go back to the queue once their leases expire. Its speed is 0 then.
        public var alive: Bool
        /// Whether it leads the cluster's maintenance (its lead has not run out).
        public var leads = false
    }

    /// A host: its politeness, its counters and its jobs.
    public struct Host: Sendable, Hashable {
        public var host: String
        /// Jobs running on it (the counter its limit is held to: a job whose redirects end here
        /// counts too).
        public var running: Int
        public var maxConnections: Int
        public var minIntervalMilliseconds: Int
        /// Until when no job starts on it; nil when it is not held now.
        public var heldUntil: Date?
        /// Its jobs (those whose URL names it), by state.
        public var jobs: JobCounts
        /// Its least interval holds its next request back now: until `nextStartAt`, or, when that
        /// is nil, until the request under way is answered.
        public var spaced = false
        /// When its next request may start, when its least interval puts that off now.
        public var nextStartAt: Date?
        /// When the first of its jobs scheduled for a retry is due.
        public var nextRetryAt: Date?

        /// Waiting to run: available, or scheduled for a retry.
        public var queued: Int { jobs[.available] + jobs[.scheduled] }
        /// Failed for good or dead.
        public var failed: Int { jobs[.failed] + jobs[.dead] }

        /// Why its queued jobs wait now, the reason that lifts last first; nil when none waits, or
        /// the host holds none back (they wait for a worker with a free slot).
        public var waiting: Waiting? {
            guard queued > 0 else { return nil }
            if let heldUntil { return .held(until: heldUntil) }
            if jobs[.available] > 0 {
                if running >= maxConnections { return .atLimit }
                if spaced { return .spaced(until: nextStartAt) }
                return nil
            }
            return nextRetryAt.map { .retrying(next: $0) }
        }
    }

    /// What holds a host's queued jobs back.
    public enum Waiting: Sendable, Hashable {
        /// Held after it answered 429 Too Many Requests: no job starts there until then.
        case held(until: Date)
        /// As many jobs run there as its `maxConnections` allow, across every worker.
        case atLimit
        /// Its least interval between requests puts the next one off until then; nil: until the
        /// request under way is answered, and the interval after it.
        case spaced(until: Date?)
        /// Only jobs scheduled for a retry wait, after a failure; the first is due then.
        case retrying(next: Date)
    }

    public struct Totals: Sendable, Hashable {
        /// Every job, by state.
        public var jobs: JobCounts
        /// The files in the ledger, and their bytes.
        public var files: Int
        public var bytes: Int64
        /// Downloads completed in the last minute, and in the last ten.
        public var lastMinute: Window
        public var lastTenMinutes: Window
        /// What the live workers last said they download a second, together.
        public var speed: Int64
    }

    /// The downloads completed in the last `seconds`, from the ledger.
    public struct Window: Sendable, Hashable {
        public var seconds: Int
        public var jobs: Int
        public var bytes: Int64

        /// Averages over the whole window.
        public var jobsPerSecond: Double { Double(jobs) / Double(seconds) }
        public var bytesPerSecond: Double { Double(bytes) / Double(seconds) }
    }
}

/// Jobs counted by state; a state without any counts 0. A job whose lease ran out is counted
/// apart (`expiredLeases`), not as running: its worker is gone or cut off, and the next
/// maintenance takes it back.
public struct JobCounts: Sendable, Hashable {
    public var counts: [JobState: Int]
    public var expiredLeases = 0

    public init(_ counts: [JobState: Int] = [:]) {
        self.counts = counts
    }

    public subscript(state: JobState) -> Int {
        get { counts[state] ?? 0 }
        set { counts[state] = newValue }
    }

    /// Every job counted.
    public var total: Int { counts.values.reduce(0, +) + expiredLeases }
}
