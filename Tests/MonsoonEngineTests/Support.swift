import Foundation
import MonsoonStore
import MonsoonTestServer
@testable import MonsoonEngine

/// A fresh temporary folder, removed by `remove()`.
struct TemporaryFolder {
    let path: String

    init() {
        let base = FileManager.default.temporaryDirectory.path(percentEncoded: false)
        path = (base as NSString).appendingPathComponent("monsoon-tests-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }

    func contents() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// Engine settings that make retries quick in tests. No stall is seen for a minute: a test holds
/// transfers with gates (`Route(gate:)`) for as long as its own turns take, however busy the
/// machine; a test of the stall detector sets its own, short, `stallSeconds`.
func fastConfiguration(concurrency: Int = 4, retries: Int = 5) -> EngineConfiguration {
    var configuration = EngineConfiguration()
    configuration.maxConcurrentDownloads = concurrency
    configuration.retry = RetryPolicy(maxRetries: retries, baseDelay: 0.05, maxDelay: 5, jitter: 0.1)
    configuration.network.connectTimeout = 5
    configuration.stall = EngineConfiguration.Stall(bytesPerSecond: 1024, seconds: 60)
    configuration.diskReserve = 0
    return configuration
}

/// A clock the test moves (`EngineConfiguration.clock`): waits pass without sleeping.
final class ManualClock: Sendable {
    private let time = Locked(Date(timeIntervalSince1970: 1_800_000_000))

    var now: Date { time.withLock { $0 } }
    var clock: EngineClock { EngineClock { [time] in time.withLock { $0 } } }

    /// Moves the time on; the engine sees it at its next turn (any command wakes it).
    func advance(by seconds: TimeInterval) {
        time.withLock { $0 += seconds }
    }
}

struct Timeout: Error, CustomStringConvertible {
    var description: String
}

/// Waits (polling, with a generous deadline) until `id` reaches `status`.
@discardableResult
func waitFor(_ manager: DownloadManager, _ id: DownloadID, _ statuses: Set<DownloadStatus>, seconds: Double = 30) async throws -> Download {
    let deadline = Date().addingTimeInterval(seconds)
    var last: Download?
    while Date() < deadline {
        last = try await manager.download(withID: id)
        if let last, statuses.contains(last.status) { return last }
        try await Task.sleep(nanoseconds: 20_000_000)
    }
    throw Timeout(description: "\(id) did not reach \(statuses) in \(seconds) s; last: \(String(describing: last))")
}

@discardableResult
func waitFor(_ manager: DownloadManager, _ id: DownloadID, _ status: DownloadStatus, seconds: Double = 30) async throws -> Download {
    try await waitFor(manager, id, [status], seconds: seconds)
}

/// Waits (polling) until `id`'s download is `what` says; on timeout, the error says what it last was.
@discardableResult
func waitFor(_ manager: DownloadManager, _ id: DownloadID, _ what: String, seconds: Double = 30,
             until condition: (Download) -> Bool) async throws -> Download {
    let deadline = Date().addingTimeInterval(seconds)
    var last: Download?
    while Date() < deadline {
        last = try await manager.download(withID: id)
        if let last, condition(last) { return last }
        try await Task.sleep(nanoseconds: 20_000_000)
    }
    throw Timeout(description: "\(id) did not become \(what) in \(seconds) s; last: \(String(describing: last))")
}

/// Waits until `condition` holds.
func eventually(seconds: Double = 30, _ what: String = "condition", _ condition: () async throws -> Bool) async throws {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try await condition() { return }
        try await Task.sleep(nanoseconds: 20_000_000)
    }
    throw Timeout(description: "\(what) did not hold within \(seconds) s")
}

func sha256(ofFile path: String) -> String {
    (try? SHA256.hex(fileAt: path)) ?? "missing \(path)"
}

func request(_ id: DownloadID, _ url: URL, to path: String, priority: Int = 0, mediaType: String? = nil) -> DownloadRequest {
    DownloadRequest(id: id, url: url, destination: .file(path), priority: priority, expectedMediaType: mediaType)
}

/// Records every event of a manager from its creation, so a test can wait for a
/// transitional status (downloading, paused, waitingToRetry) without missing it,
/// however slowly the test itself gets scheduled.
final class EventRecorder: Sendable {
    private let events = Locked<[DownloadEvent]>([])
    private let task: Task<Void, Never>

    init(_ manager: DownloadManager) {
        let stream = manager.events()
        let events = self.events
        task = Task { for await event in stream { events.withLock { $0.append(event) } } }
    }

    deinit { task.cancel() }

    var all: [DownloadEvent] { events.withLock { $0 } }

    /// The statuses `id` went through, in order.
    func statuses(of id: DownloadID) -> [DownloadStatus] {
        all.compactMap { event in
            if case .statusChanged(let download) = event, download.id == id { return download.status }
            return nil
        }
    }

    /// Waits until `id` has reported `status` (at any point since recording began).
    @discardableResult
    func waitFor(_ id: DownloadID, _ status: DownloadStatus, seconds: Double = 30) async throws -> Download {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let found = all.lazy.compactMap { event -> Download? in
                if case .statusChanged(let download) = event, download.id == id, download.status == status { return download }
                return nil
            }.first
            if let found { return found }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        throw Timeout(description: "\(id) did not report \(status) within \(seconds) s; it reported \(statuses(of: id))")
    }
}

/// Blocks this thread (one of its own: a `holdDatabase` body, never a task) until `condition`
/// holds, polling, or `seconds` pass; whether it held.
@discardableResult
func block(seconds: Double = 30, until condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        guard Date() < deadline else { return false }
        usleep(1000)
    }
    return true
}

/// Another process's hold on the database `path`, from a thread of its own (in the full suite a
/// test's task may wait seconds for a turn): once `ready` says so, it takes the write lock
/// (`begin`), runs `whileHeld` holding it, and commits. The result is `whileHeld`'s value, or why
/// the lock could not be taken or let go; nil until then.
func holdDatabase<T: Sendable>(_ path: String, begin: String = "BEGIN IMMEDIATE", once ready: @escaping @Sendable () -> Bool,
                               _ whileHeld: @escaping @Sendable (Database) throws -> T) -> Locked<Result<T, Error>?> {
    let result = Locked<Result<T, Error>?>(nil)
    Thread {
        let outcome = Result { () throws -> T in
            let connection = try Database(path: path)
            while !ready() { usleep(1000) }
            try connection.execute(begin)
            let value = try whileHeld(connection)
            try connection.execute("COMMIT")
            return value
        }
        result.withLock { $0 = outcome }
    }.start()
    return result
}

extension DownloadStateReading {
    /// `forEachState(ownedBy:changedSince:)`, gathered.
    func states(ownedBy owner: DownloadOwner, changedSince since: Date?) throws -> [StoredDownloadState] {
        var states: [StoredDownloadState] = []
        try forEachState(ownedBy: owner, changedSince: since) { states.append($0) }
        return states
    }
}
