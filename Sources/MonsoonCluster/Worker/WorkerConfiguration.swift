import FoundationEssentials
import MonsoonEngine

/// What a worker needs: the shared database, where its files go, how many jobs it runs at once,
/// and the lease it holds them under.
public struct WorkerConfiguration: Sendable {
    /// The PostgreSQL connection string (a URL or libpq's key=value pairs).
    public var database: String
    /// The folder files land in, under the archive's names (`-o DIR`).
    public var folder: String
    /// Jobs run at once (`-j N`).
    public var slots: Int = 4
    /// The worker's name, unique in the cluster (its leases carry it; `cluster status` shows it).
    public var name: String
    /// The machine it runs on (the ledger records it).
    public var node: String
    /// How long a claim or a renewal holds a job. Leases are renewed every quarter of it; a
    /// worker that could not renew for three quarters stops every transfer.
    public var leaseSeconds: Double = 60
    /// How often the worker asks to lead the cluster's maintenance and, while it leads, does it:
    /// takes back expired leases, makes due retries available, removes finished jobs and gone
    /// workers. Nil: a quarter of the lease. A leader that has not asked again for four of these
    /// intervals (killed, paused, cut off) is replaced.
    public var maintenanceSeconds: Double?
    /// How long finished jobs (completed, failed, dead) stay in the shared queue before the
    /// leader removes them: 7 days.
    public var keepFinishedSeconds: Double = 7 * 86_400
    /// How long the worker waits before it tries the database again, when the database cannot be
    /// reached as it starts: the first wait, doubled each time up to the last.
    public var startRetry: (first: Double, most: Double) = (0.5, 30)
    /// How often the worker looks for jobs when no notification wakes it (the only way behind a
    /// transaction pooler, where LISTEN does not work).
    public var pollSeconds: Double = 2
    /// Write nothing: each body is counted and hashed, and its ledger row records where the file
    /// would be. For measuring the queue and the network (`make bench-cluster`).
    public var discard = false
    /// URLs from feeds may lead to loopback, private and link-local addresses even when the feed
    /// is not on one itself (`worker --allow-private`).
    public var allowPrivate = false
    /// The download engine's settings (retries, timeouts, the disk reserve). Per-host limits are
    /// the cluster's: the engine gets none of its own.
    public var engine = EngineConfiguration()
    /// Where the worker says what happens to it (the database lost and back, a lease lost, a job
    /// failed): one line each, without "monsoon: ". Standard error by default, with control
    /// characters (which names and messages from feeds may hold) shown as escapes.
    public var report: @Sendable (String) -> Void = { line in
        let safe = String(String.UnicodeScalarView(line.unicodeScalars.flatMap { scalar -> [Unicode.Scalar] in
            InvisibleCharacters.isControl(scalar) ? Array("\\u{\(String(scalar.value, radix: 16))}".unicodeScalars) : [scalar]
        }))
        StandardError.write("monsoon: \(safe)\n")
    }

    /// Told each job the worker ends and, at each tick, where it stands (`monsoon worker`'s live
    /// line and JSON lines); called on the worker's database thread, so it must be quick.
    public var observe: (@Sendable (WorkerActivity) -> Void)?

    /// Where the worker is about to put finished files in place: before their jobs are locked,
    /// and with them locked, before each file takes its name.
    enum PlacingStep: Sendable { case beforeLocking, locked }
    /// For tests: called at each `PlacingStep`, on the worker's database thread (blocking there
    /// pauses the worker as a stopped process would be).
    var placing: (@Sendable (PlacingStep) -> Void)?

    public init(database: String, folder: String, name: String, node: String) {
        self.database = database
        self.folder = folder
        self.name = name
        self.node = node
    }
}

/// What a worker did, when it stops.
public struct WorkerSummary: Sendable, Hashable {
    public var completed = 0
    public var failed = 0
    /// Jobs whose lease was lost while they ran (their files discarded).
    public var lost = 0
    /// Jobs handed back at the stop.
    public var released = 0
    public var refreshed = 0
    public var bytes: Int64 = 0
    /// Bytes of parts taken over from earlier holders of the jobs (not fetched again).
    public var adoptedBytes: Int64 = 0
    /// How long each claim's round trip took, in seconds (those that returned jobs).
    public var claimSeconds: [Double] = []
}
