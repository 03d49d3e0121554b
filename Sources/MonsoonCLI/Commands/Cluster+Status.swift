import FoundationEssentials
import MonsoonCluster
import MonsoonEngine

struct ClusterStatusCommand: RunnableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the shared queue: its workers, its busy hosts, and its totals and throughput.",
        discussion: """
            A worker is alive while it renews its leases: one silent for longer than its lease is \
            shown as silent, without a speed (its jobs go back to the queue as their leases \
            expire, and are not counted running meanwhile); a worker stopped or silent for 10 \
            minutes is no longer listed. The worker that leads the maintenance (takes back expired \
            leases, removes finished jobs) is marked leader. Hosts are listed \
            when they have jobs queued, running or failed, or are held (after a 429), busiest \
            first, 20 at the most; --json lists every worker and host. Then why jobs wait, for \
            the 5 hosts holding the most back: at their connection limit, held after a 429, \
            spacing their requests, or with jobs waiting to retry. Throughput counts the \
            downloads completed in the last minute and the last 10 minutes; a worker's speed \
            is what its transfers received over its last renewal period, unfinished ones \
            included. Times are the database's.

            Examples:

              monsoon cluster status
              monsoon cluster status --json
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var database: ClusterDatabase
    @Flag("--json", help: "Print JSON: workers (name, node, pid, startedAt, heartbeatAt, heartbeatAge, stoppedAt, alive, leader, running, bytes, speed), hosts (host, running, maxConnections, minIntervalMs, heldUntil, jobs, waiting), totals (jobs, files, bytes, lastMinute, lastTenMinutes, speed); jobs by state, with expiredLeases.")
    var json = false
    init() {}

    /// The most hosts the text lists.
    static let hostLimit = 20
    /// The most hosts whose waiting jobs the text explains.
    static let waitingLimit = 5

    func run(_ context: CommandContext) async throws -> Int32 {
        let status = try await database.withConnection(context) { try ClusterAdmin(connection: $0).status() }
        if json {
            context.output.write(Self.json(status))
        } else {
            context.output.write(Self.text(status, terminalWidth: context.isTerminal ? context.terminalWidth : nil))
        }
        return ExitStatus.success
    }

    static func text(_ status: ClusterStatus, terminalWidth: Int?) -> String {
        var text = workers(status.workers, terminalWidth: terminalWidth) + "\n" + hosts(status, terminalWidth: terminalWidth) + "\n"
        let waiting = waiting(status)
        if !waiting.isEmpty { text += waiting + "\n" }
        let totals = status.totals
        text += "jobs: " + JobState.allCases.map { "\(totals.jobs[$0]) \($0.rawValue)" }.joined(separator: ", ")
            + (totals.jobs.expiredLeases > 0 ? ", \(totals.jobs.expiredLeases) whose leases ran out (taken back at the next maintenance)" : "")
            + " (\(totals.jobs.total) in all)\n"
        text += "downloaded: \(totals.files) file\(totals.files == 1 ? "" : "s"), \(ByteCount.format(Int(totals.bytes)))"
            + "; last minute \(window(totals.lastMinute)); last 10 min \(window(totals.lastTenMinutes)); workers now \(speed(totals.speed))\n"
        let dead = totals.jobs[.dead], failed = totals.jobs[.failed]
        if dead > 0 {
            text += "\(dead) job\(dead == 1 ? "" : "s") dead (attempts spent by workers that stopped holding \(dead == 1 ? "it" : "them")): "
                + "'monsoon cluster retry --all' runs \(dead == 1 ? "it" : "them") again"
                + (failed > 0 ? ", and the \(failed) failed" : "") + "\n"
        }
        return text
    }

    /// The workers that did not stop, by name; the stopped ones counted.
    static func workers(_ workers: [ClusterStatus.Worker], terminalWidth: Int?) -> String {
        let running = workers.filter { $0.stoppedAt == nil }
        let stopped = workers.count - running.count
        var text = ""
        if running.isEmpty {
            text += workers.isEmpty ? "no worker has registered\n" : "no worker is running\n"
        } else {
            let table = TextTable([.init(title: "STATE", width: 7), .init(title: "JOBS", width: 5), .init(title: "HEARTBEAT", width: 10),
                                   .init(title: "SPEED", width: 12), .init(title: "DOWNLOADED", width: 10)],
                                  name: "WORKER", terminalWidth: terminalWidth)
            text += table.header + "\n"
            for worker in running {
                text += table.row([worker.alive ? "alive" : "silent", String(worker.running), age(worker.heartbeatAge) + " ago",
                                   worker.alive ? speed(worker.speed) : "-", ByteCount.format(Int(worker.bytes))],
                                  name: "\(worker.name) (\(worker.node), pid \(worker.pid)\(worker.leads ? ", leader" : ""))") + "\n"
            }
        }
        if stopped > 0 { text += "\(stopped) stopped worker\(stopped == 1 ? "" : "s") not shown (--json lists them)\n" }
        return text
    }

    /// The hosts with something queued, running, held or failed: the most running first, then
    /// the most queued.
    static func hosts(_ status: ClusterStatus, terminalWidth: Int?) -> String {
        let busy = status.hosts.filter { $0.queued > 0 || $0.running > 0 || $0.heldUntil != nil || $0.failed > 0 }
            .sorted { ($0.running, $0.queued, $1.host) > ($1.running, $1.queued, $0.host) }
        guard !busy.isEmpty else { return "no host has jobs queued, running or failed, nor is held\n" }
        let table = TextTable([.init(title: "RUNNING", width: 8), .init(title: "QUEUED", width: 7), .init(title: "DONE", width: 7),
                               .init(title: "FAILED", width: 7), .init(title: "INTERVAL", width: 9), .init(title: "HELD", width: 10)],
                              name: "HOST", terminalWidth: terminalWidth)
        var text = table.header + "\n"
        for host in busy.prefix(hostLimit) {
            let held = host.heldUntil.map { "for " + age($0.timeIntervalSince(status.at)) } ?? "-"
            text += table.row(["\(host.running)/\(host.maxConnections)", String(host.queued), String(host.jobs[.completed]), String(host.failed),
                               host.minIntervalMilliseconds == 0 ? "-" : HostInterval.format(host.minIntervalMilliseconds), held],
                              name: host.host) + "\n"
        }
        if busy.count > hostLimit { text += "… and \(busy.count - hostLimit) more host\(busy.count - hostLimit == 1 ? "" : "s") (--json lists them)\n" }
        return text
    }

    /// Why jobs wait, a line per host, for the hosts holding the most queued jobs back.
    static func waiting(_ status: ClusterStatus) -> String {
        let waiting = status.hosts.compactMap { host in host.waiting.map { (host, $0) } }
            .sorted { ($0.0.queued, $1.0.host) > ($1.0.queued, $0.0.host) }
        var text = waiting.prefix(waitingLimit).map { "waiting: " + reason($0.1, of: $0.0, at: status.at) + "\n" }.joined()
        if waiting.count > waitingLimit {
            let more = waiting.count - waitingLimit
            text += "waiting: … and \(more) more host\(more == 1 ? "" : "s") (--json says why for each)\n"
        }
        return text
    }

    /// "127.0.0.1:8080 is at its limit of 2 connections: 136 jobs wait; 'monsoon cluster host
    /// 127.0.0.1:8080 --max-connections N' raises it".
    static func reason(_ waiting: ClusterStatus.Waiting, of host: ClusterStatus.Host, at now: Date) -> String {
        let jobs = "\(host.queued) job\(host.queued == 1 ? "" : "s")"
        let wait = host.queued == 1 ? "waits" : "wait"
        switch waiting {
        case .atLimit:
            return "\(host.host) is at its limit of \(host.maxConnections) connection\(host.maxConnections == 1 ? "" : "s"): \(jobs) \(wait); "
                + "'monsoon cluster host \(host.host) --max-connections N' raises it"
        case .held(let until):
            return "\(host.host) is held for \(age(until.timeIntervalSince(now))) more after it answered 429 Too Many Requests: \(jobs) \(wait)"
        case .spaced(let until):
            let next = until.map { "the next in \(age($0.timeIntervalSince(now)))" } ?? "the next once the one under way is answered"
            return "\(host.host) takes a request every \(HostInterval.format(host.minIntervalMilliseconds)) at most, \(next): \(jobs) \(wait) their turn; "
                + "'monsoon cluster host \(host.host) --min-interval TIME' changes it"
        case .retrying(let next):
            return "\(host.host): \(jobs) \(wait) to retry after failing, the next in \(age(next.timeIntervalSince(now)))"
        }
    }

    /// "12 (0.2/s, 3.1 MiB/s)"
    static func window(_ window: ClusterStatus.Window) -> String {
        "\(window.jobs) (\(String(cFormat: "%.2f", window.jobsPerSecond))/s, \(speed(Int64(window.bytesPerSecond.rounded()))))"
    }

    static func speed(_ bytesPerSecond: Int64) -> String { ByteCount.format(Int(bytesPerSecond)) + "/s" }

    /// "4 s", "3 min", "2 h", "5 d": rounded down, as a heartbeat's age or a hold's time left.
    static func age(_ seconds: Double) -> String {
        let whole = max(0, Int(seconds.rounded(.down)))
        switch whole {
        case ..<120: return "\(whole) s"
        case ..<7200: return "\(whole / 60) min"
        case ..<172_800: return "\(whole / 3600) h"
        default: return "\(whole / 86400) d"
        }
    }

    /// `{"workers": [...], "hosts": [...], "totals": {...}}`, keys in camelCase as the other
    /// commands' JSON, times as ISO 8601 in UTC, speeds in bytes a second, ages in seconds.
    static func json(_ status: ClusterStatus) -> String {
        let workers = status.workers.map { worker in
            "{\"name\": \(JSONText.string(worker.name)), \"node\": \(JSONText.string(worker.node)), \"pid\": \(worker.pid), "
                + "\"startedAt\": \(LibraryJSON.date(worker.startedAt)), \"heartbeatAt\": \(LibraryJSON.date(worker.heartbeatAt)), "
                + "\"heartbeatAge\": \(JSONText.number((worker.heartbeatAge * 10).rounded() / 10)), \"stoppedAt\": \(LibraryJSON.date(worker.stoppedAt)), "
                + "\"alive\": \(worker.alive), \"leader\": \(worker.leads), \"running\": \(worker.running), \"bytes\": \(worker.bytes), \"speed\": \(worker.speed)}"
        }
        let hosts = status.hosts.map { host in
            "{\"host\": \(JSONText.string(host.host)), \"running\": \(host.running), \"maxConnections\": \(host.maxConnections), "
                + "\"minIntervalMs\": \(host.minIntervalMilliseconds), \"heldUntil\": \(LibraryJSON.date(host.heldUntil)), \"jobs\": \(jobs(host.jobs)), "
                + "\"waiting\": \(waiting(host))}"
        }
        let totals = status.totals
        func window(_ window: ClusterStatus.Window) -> String {
            "{\"seconds\": \(window.seconds), \"jobs\": \(window.jobs), \"bytes\": \(window.bytes), "
                + "\"jobsPerSecond\": \(JSONText.number(window.jobsPerSecond)), \"bytesPerSecond\": \(JSONText.number(window.bytesPerSecond.rounded()))}"
        }
        return "{\"at\": \(LibraryJSON.date(status.at)),\n"
            + "\"workers\": [\(workers.isEmpty ? "" : "\n  " + workers.joined(separator: ",\n  ") + "\n")],\n"
            + "\"hosts\": [\(hosts.isEmpty ? "" : "\n  " + hosts.joined(separator: ",\n  ") + "\n")],\n"
            + "\"totals\": {\"jobs\": \(jobs(totals.jobs)), \"files\": \(totals.files), \"bytes\": \(totals.bytes), "
            + "\"lastMinute\": \(window(totals.lastMinute)), \"lastTenMinutes\": \(window(totals.lastTenMinutes)), \"speed\": \(totals.speed)}}\n"
    }

    /// Why a host's queued jobs wait: `{"reason": "atLimit", "jobs": 136, "until": null}`
    /// (`held`, `spaced`, `retrying`: until the hold ends, the next turn (null while a request
    /// under way holds it), the first retry), or null.
    static func waiting(_ host: ClusterStatus.Host) -> String {
        guard let waiting = host.waiting else { return "null" }
        let (reason, until): (String, Date?) = switch waiting {
        case .atLimit: ("atLimit", nil)
        case .held(let until): ("held", until)
        case .spaced(let until): ("spaced", until)
        case .retrying(let next): ("retrying", next)
        }
        return "{\"reason\": \"\(reason)\", \"jobs\": \(host.queued), \"until\": \(LibraryJSON.date(until))}"
    }

    /// Every state, in the order of `JobState`, with its count.
    static func jobs(_ counts: JobCounts) -> String {
        "{" + JobState.allCases.map { "\"\($0.rawValue)\": \(counts[$0])" }.joined(separator: ", ") + ", \"expiredLeases\": \(counts.expiredLeases)}"
    }
}
