// monsoon-soak: `make soak`. Downloads through the fault-injecting test server while the
// downloading `monsoon` process is killed with SIGKILL at random moments, then checks that
// nothing was lost, corrupted or fetched twice.
//
//   monsoon-soak [--monsoon PATH] [--downloads 300] [--kills 20] [--seed N] [--minutes 10]
//
// Each resource gets a random mix of the server's faults (dropped connections, stalls, bursts
// of 503 and 429 with Retry-After, short bodies), some are reached through a redirect, and some
// change (new bytes, new ETag) once their download has begun. At the end: every file
// byte-exact (a changed resource holding the version its row names, whole), no `.part` left,
// `PRAGMA integrity_check` ok, and the server sent at most 1.2 times the payload (a resource that
// changed mid-download counting one more full fetch). Exits 0 when all hold.

import FoundationEssentials
import MonsoonStore
import MonsoonTestServer
#if canImport(Glibc)
import Glibc
#endif

func argument(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    return arguments.firstIndex(of: name).flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
}

func fail(_ message: String) -> Never {
    print("soak: FAILED: \(message)")
    exit(1)
}

let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
let monsoon = argument("--monsoon") ?? root + "/.build/release/monsoon"
let count = argument("--downloads").flatMap(Int.init) ?? 300
let targetKills = argument("--kills").flatMap(Int.init) ?? 20
let seed = argument("--seed").flatMap(UInt64.init) ?? UInt64(Date().timeIntervalSince1970 * 1000)
let deadline = Date().addingTimeInterval((argument("--minutes").flatMap(Double.init) ?? 10) * 60)
guard FileManager.default.isExecutableFile(atPath: monsoon) else { fail("no monsoon at \(monsoon): run `make release` first") }
print("soak: seed \(seed) (repeat this run with --seed \(seed)); \(count) downloads, at least \(targetKills) kills")
var random = SeededGenerator(seed: seed)

// MARK: - The resources and their faults

let server = try TestServer()
let throttle = 800_000   // bytes per second per response: the run lasts long enough to be killed often
struct Resource {
    var index: Int
    var size: Int
    var seed: UInt64
    var redirected: Bool
    var changes: Bool
    var name: String { "ep-\(index).mp3" }
    var path: String { "/f/" + name }
}
var built: [Resource] = []
var faultCounts: [String: Int] = [:]
for index in 0..<count {
    let size = Int.random(in: 16 << 10 ... 2 << 20, using: &random)
    let resource = Resource(index: index, size: size, seed: random.next(), redirected: Int.random(in: 0..<10, using: &random) == 0,
                            changes: Int.random(in: 0..<20, using: &random) == 0)
    var faults: [Fault] = []
    if Bool.random(using: &random) {
        faults.append(.dropAfter(bytes: Int.random(in: 1 ... size / 2, using: &random), times: Int.random(in: 1...2, using: &random)))
        faultCounts["dropped connection", default: 0] += 1
    }
    if Int.random(in: 0..<5, using: &random) == 0 {
        faults.append(.stallAfter(bytes: Int.random(in: 1 ... size / 2, using: &random), seconds: 3, times: 1))
        faultCounts["stall", default: 0] += 1
    }
    if Int.random(in: 0..<4, using: &random) == 0 {
        faults.append(.status(Bool.random(using: &random) ? 503 : 429, times: Int.random(in: 1...3, using: &random), retryAfter: "1"))
        faultCounts["503/429 burst", default: 0] += 1
    }
    if Int.random(in: 0..<6, using: &random) == 0 {
        faults.append(.shortBody(missing: Int.random(in: 1 ... size / 2, using: &random), times: 1))
        faultCounts["short body", default: 0] += 1
    }
    faults.shuffle(using: &random)
    server.setRoute(resource.path, Route(body: .pattern(size: size, seed: resource.seed), contentType: "audio/mpeg",
                                         etag: "\"v1-\(index)\"", throttle: throttle, faults: faults))
    if resource.redirected {
        server.setRoute("/r/" + resource.name, Route(body: .bytes([]), faults: [.redirect(to: resource.path)]))
        faultCounts["redirect", default: 0] += 1
    }
    built.append(resource)
}
let resources = built

let work = FileManager.default.temporaryDirectory.appendingPathComponent("monsoon-soak-\(seed)-\(getpid())").path
try? FileManager.default.removeItem(atPath: work)   // a leftover of an earlier run with this seed and pid, if any
let home = work + "/home", out = work + "/out", urlList = work + "/urls.txt"
try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
try resources.map { server.url(($0.redirected ? "/r/" : "/f/") + $0.name).absoluteString }.joined(separator: "\n")
    .write(toFile: urlList, atomically: true, encoding: .utf8)

/// Resources changed once their download began (it may have finished just before: its row's
/// ETag says which version it holds).
let changed = Changed()
final class Changed: @unchecked Sendable {
    // Unchecked: every access holds the lock.
    private let lock = Locked()
    private var indexes: Set<Int> = []
    func record(_ index: Int) { lock.withLock { _ = indexes.insert(index) } }
    var all: Set<Int> { lock.withLock { indexes } }
}

/// Swaps a changing resource for new bytes once the server has answered it, while the run goes on.
NamedThread.detach(named: "soak.changer") {
    var pending = resources.filter(\.changes)
    while !pending.isEmpty && Date() < deadline {
        pending.removeAll { resource in
            guard !server.requests(for: resource.path).isEmpty else { return false }
            let finished = FileManager.default.fileExists(atPath: out + "/" + resource.name)
            guard !finished else { return true }   // done before it could change: counts as unchanged
            let size = resource.size / 2 + 1000
            server.setRoute(resource.path, Route(body: .pattern(size: size, seed: resource.seed &+ 1), contentType: "audio/mpeg",
                                                 etag: "\"v2-\(resource.index)\"", throttle: throttle))
            changed.record(resource.index)
            return true
        }
        usleep(50_000)
    }
}

// MARK: - Kill and restart

/// Starts `monsoon get` on the list; its output goes to a log per run.
func spawnGet(run: Int) -> pid_t {
    let arguments = [monsoon, "--home", home, "get", "--quiet", "-j", "8", "--retries", "20", "--min-free", "0", "-o", out, "-i", urlList]
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, work + "/run-\(run).log", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_addopen(&actions, 2, work + "/run-\(run).log", O_WRONLY | O_APPEND, 0o644)
    let argv = arguments.map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    let result = posix_spawn(&pid, monsoon, &actions, nil, argv, environ)
    guard result == 0 else { fail("cannot start monsoon: \(String(cString: strerror(result)))") }
    return pid
}

/// Waits up to `seconds` for `pid`; its exit status, or nil when it still runs.
func wait(_ pid: pid_t, seconds: Double) -> Int32? {
    let until = Date().addingTimeInterval(seconds)
    var status: Int32 = 0
    repeat {
        if waitpid(pid, &status, WNOHANG) == pid { return status }
        usleep(10_000)
    } while Date() < until
    return nil
}

let started = Date()
var kills = 0, runs = 0
var finalStatus: Int32?
/// Runs that ended by themselves with an error before the last one (listed, not failures: the
/// next run takes their downloads up again).
var earlyExits: [String] = []
while finalStatus == nil {
    guard Date() < deadline else { fail("the run did not finish within the time allowed (seed \(seed))") }
    runs += 1
    let pid = spawnGet(run: runs)
    var status: Int32?
    if kills < targetKills {
        status = wait(pid, seconds: Double.random(in: 0.2...2.5, using: &random))
        if status == nil {
            kill(pid, SIGKILL)
            status = wait(pid, seconds: 10)
            // Counted only when the kill is what ended it.
            if let killed = status, killed & 0x7f == SIGKILL {
                kills += 1
                continue
            }
        }
    } else {
        status = wait(pid, seconds: deadline.timeIntervalSinceNow)
    }
    guard let ended = status else { fail("run \(runs) did not end (seed \(seed))") }
    let code = (ended & 0x7f) == 0 ? (ended >> 8) & 0xff : 128 + (ended & 0x7f)
    if code == 0 || kills >= targetKills {
        finalStatus = code
    } else {
        earlyExits.append("run \(runs) exited with status \(code)")
    }
}
let wall = Date().timeIntervalSince(started)
let lastLog = (try? String(contentsOfFile: work + "/run-\(runs).log", encoding: .utf8)) ?? ""   // quoted in a failure only

// MARK: - What must hold

var problems: [String] = []
if kills < targetKills { problems.append("only \(kills) kills: the downloads finished first (rerun with a smaller --kills or more --downloads)") }
let status = finalStatus ?? -1
if status != 0 { problems.append("the last run exited with status \(status): \(lastLog.suffix(2000))") }
// Which version each download ended with, by the ETag its row keeps.
let databasePath = home + "/monsoon.sqlite"
var versions: [String: String] = [:]
if FileManager.default.fileExists(atPath: databasePath), let database = try? Database(path: databasePath) {
    for resource in resources {
        let url = server.url((resource.redirected ? "/r/" : "/f/") + resource.name).absoluteString
        versions[resource.name] = try? database.scalarText("SELECT etag FROM downloads WHERE url = ? AND status = 'completed'", url)   // read errors show as a missing version below
    }
}
let changedMidDownload = Set(changed.all.filter { versions[resources[$0].name] == "\"v2-\($0)\"" })
var wrong: [String] = []
for resource in resources {
    let path = out + "/" + resource.name
    let version = versions[resource.name] ?? nil
    guard version == "\"v1-\(resource.index)\"" || (changed.all.contains(resource.index) && version == "\"v2-\(resource.index)\"") else {
        wrong.append("\(resource.name): its row holds version \(version ?? "none")")
        continue
    }
    let expected: Body = changedMidDownload.contains(resource.index) ? .pattern(size: resource.size / 2 + 1000, seed: resource.seed &+ 1)
        : .pattern(size: resource.size, seed: resource.seed)
    guard FileManager.default.fileExists(atPath: path), let sum = try? SHA256.hex(fileAt: path) else {   // unreadable counts as missing
        wrong.append("\(resource.name): missing")
        continue
    }
    if sum != expected.sha256Hex() {
        // Where it differs says what went wrong (a seam at a resume, a stale part, an old version).
        let data = (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()   // it was just hashed; empty only if it vanished
        let want = expected.data()
        let first = zip(data, want).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(data.count, want.count)
        wrong.append("\(resource.name): SHA-256 differs (\(data.count) bytes, expected \(want.count)\(changedMidDownload.contains(resource.index) ? " after a change" : ""); "
                     + "first difference at byte \(first))")
    }
}
if !wrong.isEmpty { problems.append("\(wrong.count) files wrong: \(wrong.prefix(10).joined(separator: "; "))") }
let listing: [String]
do { listing = try FileManager.default.contentsOfDirectory(atPath: out) } catch { fail("cannot list \(out): \(error)") }
let leftovers = listing.filter { $0.hasSuffix(".part") }
if !leftovers.isEmpty { problems.append("\(leftovers.count) .part files left: \(leftovers.prefix(5))") }
var integrity = "no database"
if FileManager.default.fileExists(atPath: databasePath) {
    do {
        let database = try Database(path: databasePath)
        integrity = try database.scalarText("PRAGMA integrity_check") ?? "no answer"
    } catch {
        integrity = "cannot open: \(error)"
    }
}
if integrity != "ok" { problems.append("integrity_check: \(integrity)") }
let payload = resources.reduce(0) { total, resource in
    total + (changedMidDownload.contains(resource.index) ? resource.size + resource.size / 2 + 1000 : resource.size)
}
let sent = server.bodyBytesSent
let ratio = Double(sent) / Double(payload)
server.stop()
if ratio > 1.2 { problems.append(String(cFormat: "the server sent %.3f times the payload (at most 1.2)", ratio)) }

print(String(cFormat: "soak: %d downloads, %d kills over %d runs, %.0f s", count, kills, runs, wall))
print("soak: faults: " + faultCounts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
      + ", \(changedMidDownload.count) changed mid-download")
print(String(cFormat: "soak: payload %.1f MB, sent %.1f MB: %.3f times the payload", Double(payload) / 1e6, Double(sent) / 1e6, ratio))
if !earlyExits.isEmpty { print("soak: runs that ended by themselves before the last: " + earlyExits.joined(separator: ", ")) }
print("soak: files byte-exact: \(count - wrong.count) of \(count); .part left: \(leftovers.count); integrity_check: \(integrity)")
guard problems.isEmpty else { fail(problems.joined(separator: "\n  ") + "\n  (seed \(seed); the run's files are in \(work))") }
try? FileManager.default.removeItem(atPath: work)   // scratch files of a run that passed: nothing to keep
print("soak: passed")
