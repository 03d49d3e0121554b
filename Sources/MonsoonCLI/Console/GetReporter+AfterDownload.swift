import FoundationEssentials
import MonsoonEngine

/// What `AfterDownload` says through the reporter: its lines pass the live view (cleared first)
/// and its failures count in the run's tally, so a failed hook fails the run.
extension GetReporter {
    /// From now on, completions go to `after` too, and `settle` waits for it.
    func register(_ after: AfterDownload) {
        state.withLock { $0.afterDownload = after }
    }

    /// Lets the after-download work finish before the summary (`AfterDownload.settle`).
    /// - Returns: whether the run is interrupted (before, or while it waited for hooks).
    func settle(interrupted: Bool) async -> Bool {
        guard let after = state.withLock({ $0.afterDownload }) else { return interrupted }
        return await after.settle(interrupted: interrupted)
    }

    /// A step after a download failed: said on standard error (always, `--json` too; after the
    /// podcast's name when the run has several), in
    /// `--json` as `event` with `fields`, and the download counts as failed.
    func afterDownloadFailed(_ id: DownloadID, line: String, json: (event: String, fields: [(String, String)])) {
        state.withLock { state in
            state.afterFailures.insert(id)
            emitLine(&state, speaker(state, id) + line, toErrors: true)
            if style == .json {
                let fields = json.fields.contains { $0.0 == "id" } ? json.fields : [("id", JSONText.string(id.rawValue))] + json.fields
                context.output.line(Self.jsonLine(json.event, fields))
            }
        }
    }

    /// A step after a download went well: an event of `--json`, and with `--verbose` a line.
    func afterDownloadEvent(_ event: String, _ fields: [(String, String)], verboseLine: String? = nil) {
        state.withLock { state in
            if style == .json {
                context.output.line(Self.jsonLine(event, fields))
            } else if verbose, let verboseLine {
                emitLine(&state, "monsoon: " + verboseLine, toErrors: true)
            }
        }
    }

    /// Something worth a line with `--verbose` only (in `--json` too, on standard error).
    func afterDownloadNote(_ line: String) {
        guard verbose else { return }
        state.withLock { emitLine(&$0, "monsoon: " + line, toErrors: true) }
    }

    /// A line a hook wrote (on its standard output or error): on standard error, escaped as
    /// any text from outside is.
    func afterDownloadOutput(_ line: String) {
        state.withLock { emitLine(&$0, line, toErrors: true) }
    }

    /// Something went wrong that is no one download's: said, and the run fails.
    func afterDownloadProblem(_ message: String) {
        state.withLock { state in
            state.afterProblem = true
            emitLine(&state, "monsoon: " + message, toErrors: true)
        }
    }
}
