import FoundationEssentials
import MonsoonEngine
import MonsoonPodcasts

extension AfterDownload {
    /// One file: its metadata read (and written beside it when asked), then its hook run.
    /// A step that fails is that download's failure: said on standard error (and in `--json`),
    /// counted, and the command exits 1.
    func perform(_ job: Job, with worker: Worker) {
        let download = job.download
        let label = Self.label(download)
        guard let path = download.filePath, LocalFile.size(at: path) != nil else {
            reporter.afterDownloadFailed(download.id, line: "\(label): its file is gone, so no metadata was written and no hook run",
                                         json: ("afterDownload", [("error", JSONText.string("its file is gone"))]))
            return
        }
        var info: EpisodeInfo
        var isPrivate = EpisodeInfo.carriesCredentials(download)
        do {
            let episode = EpisodeQueue.episodeID(of: download.request)
            // The library's hash of this very file, when it has one: a large file is not read again.
            let known = try episode.flatMap { try EpisodeInfo.knownSHA256(episode: $0, path: path, in: worker.database) }
            info = try EpisodeInfo(download: download, path: path, downloaded: job.fresh ? Date() : nil, sha256: known)
            if let episode { try info.describeEpisode(episode, in: worker.database) }
            if let podcast = info.podcast, !isPrivate { isPrivate = try EpisodeQueue.carriesCredentials(podcast: podcast.id, in: worker.database) }
        } catch {
            reporter.afterDownloadFailed(download.id, line: "\(label): cannot read its metadata: \(error)",
                                         json: ("afterDownload", [("path", JSONText.string(path)), ("error", JSONText.string("\(error)"))]))
            return
        }
        var sidecar: String?
        if writesInfoJSON || info.podcast.map({ infoJSONPodcasts.contains($0.id) }) == true {
            let target = InfoSidecar.path(for: path)
            do {
                if job.fresh || !Self.isFile(target) {
                    try InfoSidecar.write(try info.encoded(), besideFile: path, root: download.request.root, isPrivate: isPrivate)
                    reporter.afterDownloadEvent("infoJSON", [("id", JSONText.string(download.id.rawValue)), ("path", JSONText.string(target))])
                }
                sidecar = target
            } catch {
                // The hook waits for the next run: it may read the sidecar.
                reporter.afterDownloadFailed(download.id, line: "\(label): cannot write its metadata: \(error)",
                                             json: ("infoJSON", [("path", JSONText.string(target)), ("error", JSONText.string("\(error)"))]))
                return
            }
        }
        guard let hook, job.runsHook, let ledger = worker.ledger else { return }
        runHook(hook, for: download, path: path, info: info, sidecar: sidecar, ledger: ledger, fresh: job.fresh)
    }

    private func runHook(_ hook: HookCommand, for download: Download, path: String, info: EpisodeInfo, sidecar: String?, ledger: HookLedger, fresh: Bool) {
        let label = Self.label(download)
        let id = JSONText.string(download.id.rawValue)
        let environment = Self.environment(context.environment, info: info, path: path, download: download, sidecar: sidecar)
        let outcome: HookLedger.Outcome
        do {
            // After Ctrl-C no hook starts (this one stays owed, for the next run).
            guard !state.withLock({ $0.stopping }) else { return }
            // Taken in one statement: another monsoon that saw this file complete (one following
            // the run, or the one running it) does not run it too.
            guard try ledger.claim(download.id, fresh: fresh) else {
                let other = (try? ledger.runner(of: download.id)).flatMap { $0 }   // only for the line: the claim's answer is what counts
                reporter.afterDownloadNote("\(label): its hook runs in another monsoon" + (other.map { " (\($0))" } ?? "") + ", which reports it")
                return
            }
            let program = try hook.program(for: path, searchPath: environment["PATH"], directory: context.currentDirectory)
            let process = try HookProcess(program: program, arguments: hook.arguments(file: path), environment: environment, directory: context.currentDirectory)
            let stopped = state.withLock { state in
                state.running.insert(process.pid)
                return state.stopping
            }
            if stopped { HookProcess.terminate(process.pid, grace: .seconds(context.timings.hookGrace)) }   // `stop` came between the start and the line above
            // Prefixed with the download's id: hooks running at once can be told apart.
            let prefix = download.id.rawValue + ": "
            outcome = process.wait { line in self.reporter.afterDownloadOutput(prefix + line) }
            state.withLock { _ = $0.running.remove(process.pid) }
        } catch let error as HookError {
            // It did not run: failed, so the next run tries again (once the program is there).
            do { try ledger.record(download.id, file: path, outcome: .exited(127)) } catch {
                reporter.afterDownloadProblem("cannot record the hook of \(label): \(error)")
            }
            reporter.afterDownloadFailed(download.id, line: "\(label): the hook did not run: \(error.message)",
                                         json: ("hook", [("id", id), ("path", JSONText.string(path)), ("exitStatus", "null"), ("signal", "null"),
                                                         ("error", JSONText.string(error.message))]))
            return
        } catch {
            reporter.afterDownloadFailed(download.id, line: "\(label): the hook did not run: cannot record it: \(error)",
                                         json: ("hook", [("id", id), ("path", JSONText.string(path)), ("exitStatus", "null"), ("signal", "null"),
                                                         ("error", JSONText.string("cannot record it: \(error)"))]))
            return
        }
        do { try ledger.record(download.id, file: path, outcome: outcome) } catch {
            reporter.afterDownloadProblem("cannot record that the hook of \(label) ran (it may run again on the next run): \(error)")
        }
        var fields = [("id", id), ("path", JSONText.string(path))]
        switch outcome {
        case .exited(let code): fields += [("exitStatus", String(code)), ("signal", "null")]
        case .killed(let signal): fields += [("exitStatus", "null"), ("signal", String(signal))]
        case .lost: fields += [("exitStatus", "null"), ("signal", "null")]
        }
        if outcome.succeeded {
            reporter.afterDownloadEvent("hook", fields, verboseLine: "\(label): the hook ran: \(outcome.description)")
        } else {
            reporter.afterDownloadFailed(download.id, line: "\(label): the hook failed: \(outcome.description)", json: ("hook", fields))
        }
    }

    /// The parent's environment and the file's `MONSOON_*` variables (docs/REFERENCE.md's table). Those
    /// with nothing to say are not set (a plain download has no episode's), and the parent's own
    /// of the same names (a monsoon run from a hook) are taken out.
    static func environment(_ parent: [String: String], info: EpisodeInfo, path: String, download: Download, sidecar: String?) -> [String: String] {
        let episode = info.episode, podcast = info.podcast
        let variables: KeyValuePairs<String, String?> = [
            "FILE": path, "ID": download.id.rawValue, "URL": info.download.sourceURL, "FINAL_URL": info.download.finalURL,
            "ETAG": info.download.etag, "LAST_MODIFIED": info.download.lastModified, "BYTES": String(info.download.bytes),
            "SHA256": info.download.sha256, "INFO_JSON": sidecar, "EPISODE_ID": episode.map { String($0.id) }, "TITLE": episode?.title,
            "GUID": episode?.guid, "DATE": episode?.published, "SEASON": episode?.season.map(String.init),
            "EPISODE": episode?.episode.map(String.init), "LINK": episode?.link, "PODCAST": podcast?.title, "FEED_URL": podcast?.feedURL,
        ]
        var environment = parent
        for (name, value) in variables {
            // A value with a NUL cannot be passed on (the C string would end there): left out.
            environment["MONSOON_" + name] = value.flatMap { $0.contains("\0") ? nil : $0 }
        }
        return environment
    }

}
