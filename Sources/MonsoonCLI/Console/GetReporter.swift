import FoundationEssentials
import Synchronization
import MonsoonPodcasts
import MonsoonEngine

/// Shows what a downloading command is doing: live progress on a terminal, one plain
/// line per finished download otherwise, everything else on standard error; and, at the
/// end, the summary and the exit status.
///
/// A `get` answers for its own downloads only (`answerFor(_:)`): events of other
/// downloads the same engine runs (those another `get` handed over) are ignored.
final class GetReporter: Sendable {
    /// A class: a run changes its rows a field at a time, and each change of a value this size
    /// through the dictionary copied it out and back, through an allocation (a fifth of what an
    /// archive's events cost).
    final class Row {
        var name: String
        /// Which episode it is, when the run knows (a download queued by an earlier version lacks it in its `userInfo`).
        var episode: EpisodeLabel?
        /// The name is the file's (or the title): nothing better is to come.
        var named = false
        var status: DownloadStatus = .queued
        var removed = false
        var bytes = 0
        var total: Int?
        /// The size the feed declared (or the queue knows), for the bytes left before a server gives one.
        var expectedSize: Int?
        /// `started` was said: once per download and run, however often it is retried.
        var announcedStart = false
        /// Body bytes this run's reported attempts wrote (the rest of a completed file was resumed from its part).
        var transferred = 0
        /// Where the attempt under way started (its resume offset), while it is not reported: an
        /// attempt cut short by Ctrl-C is never reported, and what it wrote was transferred all the same.
        var attemptBase: Int?
        /// Its bytes when a hand-off follower first saw it run in another process: what that
        /// process wrote since is transferred, and none of it is this run's to call resumed (`observed`).
        var observedFrom: Int?
        var observed = false
        var error: DownloadError?
        var retryAt: Date?
        /// The reason a hold for room was last said with: said once per hold, however often the
        /// row is read again (a hand-off follower reads it at every change of the database).
        var announcedHold: String?
        var rate = RecentSpeed()

        init(name: String) {
            self.name = name
        }
    }

    struct State {
        var rows: [DownloadID: Row] = [:]
        /// The downloads this run answers for; nil: every download it hears of.
        var own: Set<DownloadID>?
        /// What the summary counts: the URLs given, or the downloads queued at the start.
        var expected: Int
        var alreadyThere = 0
        /// The downloads counted in `alreadyThere` (or as skipped by `archive`), when known.
        var thereIDs = Set<DownloadID>()
        var notURLs = 0
        var completed = 0
        var block = LiveBlock()
        var started = Date()
        /// Body bytes seen arriving in this run, of every download: the run's speed, and so its ETA.
        var arrived = 0
        var rate = RecentSpeed()
        /// The podcasts of the episodes in the run: with more than one, lines name theirs.
        var podcasts = Set<String>()
        var finishedBytes = 0
        /// Body bytes of the attempts reported in this run.
        var transferredBytes = 0
        /// `--write-info-json` and `--exec`: handed each completion (`AfterDownload`).
        var afterDownload: AfterDownload?
        /// Downloads whose file is in place but whose sidecar or hook failed: failures of the run.
        var afterFailures = Set<DownloadID>()
        /// The after-download work had a problem of no one download's (the run fails).
        var afterProblem = false
        /// Another process runs the downloads; this run follows them through the database.
        var following = false
    }

    /// What a run came to, for the summary line and the exit status.
    struct Tally: Equatable {
        var expected = 0
        /// Bytes of the downloads completed in this run.
        var bytes = 0
        /// Body bytes this run transferred (a hand-off follower counts from when it first saw each download).
        var transferred = 0
        /// Bytes of the completed downloads that were in their parts already, not transferred.
        var resumed = 0
        var completed = 0
        var alreadyThere = 0
        var failed = 0
        var paused = 0
        var removed = 0
        var interrupted = 0
        var notStarted = 0
        var notURLs = 0
        /// Left queued, waiting for room on the disk (their parts kept).
        var waitingForSpace = 0
        var diskFull = false
        /// Of `failed`, files already there before the run (counted in `alreadyThere` too, or as
        /// skipped by `archive`) whose sidecar or hook failed: taken out of those counts.
        var failedThere = 0
        /// Of `failed`, files of earlier runs that no count of this run includes (`download` catching
        /// up an owed hook) whose sidecar or hook failed.
        var failedEarlier = 0
        var afterProblem = false
    }

    /// How events are written when they are not drawn live.
    enum Style: Sendable {
        /// `get` and `download`: a finished file as `PATH<TAB>BYTES` on standard output,
        /// everything else on standard error.
        case files
        /// `archive` and `sync`: one line per event on standard output (started, finished,
        /// retrying, failed, paused, removed).
        case events
        /// `--json`: one JSON object per event on standard output, never a live view.
        case json
    }

    let context: CommandContext
    let quiet: Bool
    let verbose: Bool
    let style: Style
    /// Whether `finish` prints the `N of M downloaded` line (`archive` prints its own).
    private let summarizes: Bool
    let state: Mutex<State>
    let live: Bool
    /// ANSI colours on the live view, unless `NO_COLOR` is set (no-color.org).
    let colors: Bool
    /// The time the speeds are measured by; a test drives it.
    let clock: @Sendable () -> Date

    /// - Parameter expected: how many downloads the summary counts (`N of expected`); a
    ///   run that answers for every download adds those handed to it as they come.
    init(context: CommandContext, quiet: Bool, verbose: Bool, expected: Int, style: Style = .files, summarizes: Bool = true,
         clock: @escaping @Sendable () -> Date = { Date() }) {
        self.clock = clock
        self.context = context
        self.quiet = quiet
        self.verbose = verbose
        self.style = style
        self.summarizes = summarizes
        state = Mutex(State(expected: expected))
        live = context.isTerminal && !quiet && style != .json
        colors = live && (context.environment["NO_COLOR"] ?? "").isEmpty
    }

    /// From now on, only these downloads count and are shown (a `get`'s own). Call it
    /// before the first event is handled.
    func answerFor(_ downloads: [(id: DownloadID, url: URL)]) {
        state.withLock { state in
            state.own = Set(downloads.map(\.id))
            state.rows.reserveCapacity(state.rows.count + downloads.count)   // one table, not a doubling series
            for (id, url) in downloads where state.rows[id] == nil {
                state.rows[id] = Row(name: shownName(Self.name(of: url)))
            }
        }
    }

    /// The same for an archive's requests: named after their episodes, with the feed's lengths.
    func answerFor(_ requests: [DownloadRequest]) {
        answerFor(requests.map { ($0.id, $0.url) })
        state.withLock { state in
            for request in requests {
                state.rows[request.id]?.expectedSize = request.expectedSize
                label(&state, request)
            }
        }
    }

    /// The downloads a run of the whole queue starts with (`monsoon download`), with the bytes
    /// each still needs when known: counted as queued, and in the bytes left, before any of them
    /// sends an event (one that never starts sends none).
    func expect(_ pending: [(id: DownloadID, remaining: Int?)], requests: [DownloadRequest]) {
        let requests = Dictionary(requests.map { ($0.id, $0) }) { first, _ in first }
        state.withLock { state in
            for (id, remaining) in pending where state.rows[id] == nil {
                let row = Row(name: id.rawValue)
                row.expectedSize = remaining
                state.rows[id] = row
                if let request = requests[id] { label(&state, request) }
            }
        }
    }

    /// Names an episode's row by its title, and counts its podcast.
    private func label(_ state: inout State, _ request: DownloadRequest) {
        guard let episode = EpisodeLabel(request), state.rows[request.id] != nil else { return }
        state.rows[request.id]?.episode = episode
        state.rows[request.id]?.name = episode.title
        if let podcast = episode.podcast { state.podcasts.insert(podcast) }
    }

    /// URLs that were done before the run (their file is there): counted as downloaded.
    /// - Parameter ids: those of them the queue knows (a sidecar or hook of theirs that fails is
    ///   taken out of the count, and counted failed).
    func countAlreadyThere(_ count: Int, ids: [DownloadID] = []) {
        state.withLock { state in
            state.alreadyThere += count
            state.thereIDs.formUnion(ids)
        }
    }

    /// Downloads a command counts as done before the run in a count of its own (`archive`'s skipped).
    func countsAsThere(_ ids: [DownloadID]) {
        state.withLock { $0.thereIDs.formUnion(ids) }
    }

    /// Lines of the input that were not http or https URLs: named already, counted here.
    func countNotURLs(_ count: Int) {
        state.withLock { $0.notURLs += count }
    }

    /// Another process runs this run's downloads (true), or this run's engine does from now on
    /// (false, after a takeover): what the follower saw transferred is kept, and counted once.
    func follow(_ following: Bool) {
        state.withLock { state in
            state.following = following
            guard !following else { return }
            for (id, row) in state.rows {
                guard let from = row.observedFrom else { continue }
                let seen = max(0, row.bytes - from)
                state.rows[id]?.observedFrom = nil
                state.rows[id]?.transferred += seen
                state.transferredBytes += seen
            }
        }
    }

    /// The downloads this run answers for that may still change (for a `get` that follows
    /// downloads another process runs).
    var unsettled: [DownloadID] {
        state.withLock { state in
            // One waiting for room is settled for this run: it is left queued, and said so.
            state.rows.filter { !$0.value.removed && $0.value.status.isActive && $0.value.error?.code != .notEnoughDiskSpace }
                .map(\.key).sorted { $0.rawValue < $1.rawValue }
        }
    }

    func handle(_ event: DownloadEvent) {
        state.withLock { state in
            switch event {
            case .added(let download):
                guard state.own == nil else { return }
                if state.rows[download.id] == nil { state.expected += 1 }
                let row = Row(name: shownName(Self.name(of: download)))
                row.expectedSize = download.request.expectedSize
                state.rows[download.id] = row
            case .progress(let id, let bytes, let total):
                guard state.own?.contains(id) ?? true, let before = state.rows[id]?.bytes else { return }
                arrive(&state, id, bytes: bytes, before: before)
                state.rows[id]?.total = total
            case .statusChanged(let download):
                guard state.own?.contains(download.id) ?? true else { return }
                update(&state, with: download)
            case .removed(let id):
                guard state.own?.contains(id) ?? true, state.rows[id]?.removed == false else { return }
                state.rows[id]?.removed = true
                announce(&state, .removed, id: id.rawValue)
            case .attempt(let attempt):
                guard state.own?.contains(attempt.id) ?? true else { return }
                state.rows[attempt.id]?.transferred += attempt.bytes
                state.rows[attempt.id]?.attemptBase = nil
                state.transferredBytes += attempt.bytes
                if verbose { describe(&state, attempt) }
            }
        }
    }

    private func update(_ state: inout State, with download: Download) {
        // A run of the whole queue (`download`) lists what is queued once its engine has started:
        // one that had finished already by then is still this run's, and counts in `N of M`.
        let row: Row
        if let known = state.rows[download.id] {
            row = known
        } else {
            if state.own == nil { state.expected += 1 }
            row = Row(name: "")
            state.rows[download.id] = row
        }
        if row.episode == nil { label(&state, download.request) }
        // Bytes that came during an attempt count in the speed; those a new one starts from do not.
        if row.status == .downloading { arrive(&state, download.id, bytes: download.bytes, before: row.bytes) }
        if state.following && !row.observed {
            row.observed = true
            row.observedFrom = download.bytes
        }
        let previous = row.status
        row.status = download.status
        row.bytes = download.bytes
        row.total = download.total ?? row.total
        row.expectedSize = download.request.expectedSize ?? row.expectedSize
        row.name = row.episode?.title ?? shownName(Self.name(of: download))
        row.named = row.episode != nil || download.filePath != nil
        row.error = download.lastError
        row.retryAt = download.retryAt
        // Its speed is shown only while it downloads: ten thousand finished rows need not keep their samples.
        if download.status == .completed || download.status == .failed { row.rate = RecentSpeed() }
        defer { if live && clock().timeIntervalSince(state.block.lastDraw) >= 0.1 { draw(&state) } }   // at most ten redraws a second
        let id = download.id.rawValue
        // Made only for a line that shows it: most changes show none.
        let url = { Redaction.redact(download.request.url) }
        // Held for room on the disk: queued again (or still), its part kept; said once per hold.
        if download.status == .queued, let error = download.lastError, error.code == .notEnoughDiskSpace {
            if row.announcedHold != error.message {
                row.announcedHold = error.message
                announce(&state, .waitingForSpace(url: url(), reason: error.message), id: id)
            }
            return
        }
        row.announcedHold = nil
        guard previous != download.status else { return }
        switch download.status {
        case .completed:
            state.completed += 1
            state.finishedBytes += download.bytes
            state.afterDownload?.completed(download)
            // A counted body (`get --discard`) has no file: its URL stands for it, with its hash.
            announce(&state, .finished(path: download.filePath ?? url(), name: row.name, bytes: download.bytes,
                                          checksum: download.filePath == nil ? download.checksum : nil), id: id)
        case .failed:
            var reason = download.lastError?.message ?? "unknown error"
            // `get` and `download` take --cacert: say so where trusting an authority would help.
            if download.lastError?.code == .untrustedCertificate { reason += "; if you trust the server, give its certificate authority with --cacert FILE" }
            if download.lastError?.code == .privateAddress { reason += "; if you trust the feed, allow it with --allow-private or 'monsoon config set allow-private on'" }
            announce(&state, .failed(url: url(), reason: reason), id: id)
        case .paused:
            announce(&state, .paused, id: id)
        case .waitingToRetry:
            let wait = download.retryAt.map { max(0, Int($0.timeIntervalSinceNow.rounded(.up))) } ?? 0
            announce(&state, .retrying(url: url(), seconds: wait, reason: download.lastError?.message ?? "the attempt failed"), id: id)
        case .downloading:
            // A retry's new attempt is no new start: its `retrying` line said it already.
            if !state.following { row.attemptBase = download.bytes }
            guard !row.announcedStart else { break }
            row.announcedStart = true
            announce(&state, .started(url: download.request.url), id: id)
        case .queued:
            break
        }
    }

    /// Running downloads shown by their URL's last part: their file is named once the response
    /// comes, and no event says so (`name(_:)` is told).
    var unnamed: [DownloadID] {
        guard live else { return [] }
        return state.withLock { state in
            state.rows.filter { !$0.value.named && $0.value.episode == nil && $0.value.status == .downloading }.map(\.key)
        }
    }

    /// A row's name as the run shows it: only the live view shows names (a finished line without
    /// it gives the path), and working one out parses the URL, at every status change of every
    /// download; without the view, none is made.
    private func shownName(_ name: @autoclosure () -> String) -> String {
        live ? name() : ""
    }

    /// A running download's file name, once it has one (a CDN's `a1b2c3` says nothing).
    func name(_ download: Download) {
        guard let path = download.filePath else { return }
        state.withLock { state in
            guard state.rows[download.id]?.episode == nil else { return }
            state.rows[download.id]?.name = path.fileName
            state.rows[download.id]?.named = true
        }
    }

    func redraw() {
        guard live else { return }
        state.withLock { draw(&$0) }
    }

    var tally: Tally {
        state.withLock { state in
            var tally = Tally(expected: state.expected, bytes: state.finishedBytes, transferred: state.transferredBytes,
                              alreadyThere: state.alreadyThere, notURLs: state.notURLs)
            for (id, row) in state.rows {
                if let base = row.attemptBase { tally.transferred += max(0, row.bytes - base) }
                if let from = row.observedFrom { tally.transferred += max(0, row.bytes - from) }
                if row.removed { tally.removed += 1; continue }
                switch row.status {
                case .completed where state.afterFailures.contains(id):
                    tally.failed += 1
                case .completed:
                    tally.completed += 1
                    // What another process brought before this run looked is not known to be resumed.
                    if !row.observed { tally.resumed += max(0, row.bytes - row.transferred) }
                case .failed:
                    tally.failed += 1
                    if row.error?.code == .notEnoughDiskSpace { tally.diskFull = true }
                case .paused: tally.paused += 1
                case .downloading, .waitingToRetry: tally.interrupted += 1
                case .queued:
                    if row.error?.code == .notEnoughDiskSpace {
                        tally.waitingForSpace += 1
                        tally.diskFull = true
                    } else if row.bytes > 0 {
                        tally.interrupted += 1
                    } else {
                        tally.notStarted += 1
                    }
                }
            }
            if state.own == nil {
                // Downloads that never changed status sent no event: queued, not started.
                let seen = tally.completed + tally.failed + tally.paused + tally.removed + tally.interrupted + tally.notStarted + tally.waitingForSpace
                tally.notStarted += max(0, state.expected - seen)
            }
            // A file already there whose sidecar or hook failed (caught up at the end) is a failure, not a
            // success: taken out of the count that held it, if one did.
            let caughtUp = state.afterFailures.filter { state.rows[$0] == nil }
            tally.failedThere = caughtUp.filter(state.thereIDs.contains).count
            tally.failedEarlier = caughtUp.count - tally.failedThere
            tally.failed += caughtUp.count
            tally.afterProblem = state.afterProblem
            return tally
        }
    }

    /// The last word: on a terminal, clears the block; prints the summary when there is
    /// something to say (always on a terminal).
    func finish(interrupted: Bool) {
        let tally = self.tally
        state.withLock { state in
            if live {
                // Ctrl-C's `^C`, echoed by the terminal below the block, is cleared with it: the summary starts a clean line.
                state.block.clear(context)
                context.output.writeVerbatim("\r\u{1B}[K")
            }
            guard summarizes, !quiet || interrupted else { return }
            let amounts = Self.amounts(tally, elapsed: max(0.001, Date().timeIntervalSince(state.started)))
            let prefix = live && !interrupted ? "" : "monsoon: "
            var lines = [prefix + Self.summary(tally) + (amounts.isEmpty ? "" : " (\(amounts))")]
            if TerminalText.displayWidth(lines[0]) > SummaryLines.width {
                lines = SummaryLines.packed(Self.summary(tally).split(separator: ", ").map(String.init), prefix: prefix) + (amounts.isEmpty ? [] : [prefix + amounts])
            }
            if interrupted { lines.insert("monsoon: interrupted: part files kept; run the same command again to resume", at: 0) }
            let allDone = tally.completed + tally.alreadyThere == tally.expected && tally.notURLs == 0 && tally.failed == 0
            if live || interrupted || !allDone || verbose {
                for line in lines { context.errors.line(line) }
            }
        }
    }

    /// `63 MiB transferred in 130.8 s, 12 MiB resumed from parts`: the speed a run had is what it
    /// transferred, not what its parts held. Empty when no byte moved: `0 B in 0.0 s` tells nothing.
    static func amounts(_ tally: Tally, elapsed: Double) -> String {
        [tally.transferred > 0 ? "\(ByteCount.format(tally.transferred)) transferred in \(duration(elapsed))" : nil,
         tally.resumed > 0 ? "\(ByteCount.format(tally.resumed)) resumed from parts" : nil].compactMap { $0 }.joined(separator: ", ")
    }

    /// `N of M downloaded`, then what else happened, in a fixed order.
    static func summary(_ tally: Tally) -> String {
        var parts = ["\(tally.completed + tally.alreadyThere - tally.failedThere) of \(tally.expected + tally.notURLs) downloaded"]
        func add(_ count: Int, _ text: String) { if count > 0 { parts.append("\(count) \(text)") } }
        add(tally.alreadyThere - tally.failedThere, "already there")
        add(tally.failed, "failed")
        add(tally.paused, "paused")
        add(tally.removed, "removed")
        add(tally.interrupted, "interrupted")
        add(tally.notStarted, "not started")
        add(tally.waitingForSpace, "left queued for lack of disk space")
        add(tally.notURLs, tally.notURLs == 1 ? "not a URL" : "not URLs")
        return parts.joined(separator: ", ")
    }

    /// 3 when a download failed or was left queued for lack of disk space, else 2 when input lines were not
    /// URLs, else 1 when a download did not complete (failed, paused, removed), else 0.
    /// `paused` and `removed` count only for a run that answers for its own downloads:
    /// `monsoon download` is steered by the user on purpose.
    func exitStatus() -> Int32 {
        let tally = self.tally
        let ownsDownloads = state.withLock { $0.own != nil }
        if tally.diskFull { return ExitStatus.diskFull }
        if tally.notURLs > 0 { return ExitStatus.usage }
        if tally.failed > 0 || tally.interrupted + tally.notStarted > 0 || tally.afterProblem { return ExitStatus.failure }
        if ownsDownloads && tally.paused + tally.removed > 0 { return ExitStatus.failure }
        return ExitStatus.success
    }

}
