import FoundationEssentials
import Glibc
import MonsoonEngine

/// A `get` while another process runs the home's queue: hand the URLs over, then follow
/// them through the database to the end, taking the queue over if that process ends first.
extension Get {
    func handOff(_ urls: [URL], folder: String, home: Home, reporter: GetReporter, runReport: RunReport?, afterDownload: AfterDownload?,
                 context: CommandContext) async throws -> Int32 {
        let store = try home.openStore()
        var plan = Plan()
        var lastCommand = 0
        let ids = try CLIError.prefixing("cannot hand the downloads to the running monsoon") {
            for url in urls {
                plan.add(url, known: try store.downloads(of: url), folder: folder, skipExisting: skipExisting)
            }
            try afterDownload?.owe(plan.owed)
            lastCommand = try store.post(plan.retried.map { .retry($0) })
            // With their hooks recorded as owed in the same transaction (`AfterDownload.add`): the running
            // monsoon may take rows in at any moment (another command's adopt).
            let ids = try afterDownload.map { try $0.add(plan.requests(folder: folder)) } ?? store.add(plan.requests(folder: folder))
            afterDownload?.catchUp(plan.alreadyThereIDs)
            if !ids.isEmpty { lastCommand = try store.post([.adoptNewDownloads]) }
            // A `get` that runs the queue starts only its own downloads: these are claimed
            // for as long as this process lives (a claim of a dead process is ignored).
            lastCommand = try store.post((ids + plan.activeIDs + plan.retried).map { .claim($0, by: getpid()) })
            return ids
        }
        report(plan, fresh: ids, to: reporter, context: context)
        let handed = ids + plan.activeIDs + plan.retried
        let pid = HomeLock.holder(at: home.lockPath)?.mention ?? ""
        if noWait {
            // Handed over is all this asks for; only input that was not a URL fails it.
            let status = reporter.tally.notURLs > 0 ? ExitStatus.usage : ExitStatus.success
            guard !handed.isEmpty else { return status }
            try await Control.waitUntilTaken(store, otherwise: "the running monsoon did not take the downloads within 10 s; they are queued (\(Control.mention(handed))): run 'monsoon download' when it has stopped")
            if !global.quiet {
                context.error("another monsoon\(pid) is downloading in \(home.path): handed it \(handed.count) download\(handed.count == 1 ? "" : "s") (\(Control.mention(handed))); follow them with 'monsoon downloads'")
            }
            return status
        }
        if !handed.isEmpty && (global.verbose || (context.isTerminal && !global.quiet)) {
            context.error("another monsoon\(pid) is downloading in \(home.path); it runs \(handed.count == 1 ? "this download" : "these \(handed.count) downloads") and this command follows \(handed.count == 1 ? "it" : "them")")
        }
        var follower = HandOffFollower(global: global, transfer: transfer, home: home, store: store, reporter: reporter, context: context, jobs: 4)
        follower.observe = { runReport?.observe($0) }
        return try await follower.follow(handedThrough: lastCommand, retried: Set(plan.retried))
    }
}
