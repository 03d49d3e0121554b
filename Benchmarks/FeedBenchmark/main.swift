import FoundationEssentials
import Dispatch
import Glibc
import MonsoonBasics
import MonsoonPodcasts

// The feed parser against Python's podcastparser on the same generated file, measured two ways in
// the same run: parse only, inside one process each (FeedParser.parse(fileAt:) here, podcastparser.parse
// in Python), and as whole processes (`monsoon inspect FILE --json > /dev/null` against a Python script
// that parses the file with podcastparser and prints the same JSON). Medians of several runs.
//
//   monsoon-feed-bench [-n ITEMS] [--seed S] [--runs N] [--keep PATH]
//   monsoon-feed-bench --dump FILE...     one summary line per file (for checking fixtures by eye)
//   monsoon-feed-bench --fields FILE...   one JSON line per file with every field kept (feedparser_suite.py)
//   monsoon-feed-bench --inspect-json FILE   the feed as `monsoon inspect --json` prints it (the stand-in
//                                            for the whole-process comparison until that command exists)

func argument(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// CPU time (user + system) of this process, in seconds.
func cpuNow() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

func milliseconds(_ seconds: Double) -> String { String(cFormat: "%.1f ms", seconds * 1000) }

/// Wall time and CPU time (user + system) of one measurement, in seconds. Both are reported: this
/// machine has two cores and is often shared with builds, which stretch wall times far more than CPU times.
struct Timing {
    var wall: Double
    var cpu: Double
}

func medians(_ timings: [Timing]) -> Timing {
    Timing(wall: median(timings.map(\.wall)), cpu: median(timings.map(\.cpu)))
}

func describe(_ timing: Timing) -> String {
    "median \(milliseconds(timing.wall)) wall, \(milliseconds(timing.cpu)) CPU"
}

func ratio(_ slow: Timing, _ fast: Timing) -> String {
    String(cFormat: "%.1f× (wall), %.1f× (CPU)", slow.wall / fast.wall, slow.cpu / fast.cpu)
}

/// Runs a process with its output to /dev/null; its wall and CPU time, or nil when it failed.
/// (posix_spawn and wait4 rather than Process: wait4 reports the child's CPU time.)
func timeProcess(_ executable: String, _ arguments: [String]) -> Timing? {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let start = now()
    guard posix_spawn(&pid, executable, &actions, nil, argv, environ) == 0 else { return nil }
    var status: Int32 = 0
    var usage = rusage()
    guard wait4(pid, &status, 0, &usage) == pid else { return nil }
    let wall = Double(now() - start) / 1e9
    let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    // Exited normally with status 0.
    return status & 0x7F == 0 && (status >> 8) & 0xFF == 0 ? Timing(wall: wall, cpu: cpu) : nil
}

/// Runs a command through the shell (each argument quoted) and returns its standard output, or nil when it failed.
func output(_ executable: String, _ arguments: [String]) -> String? {
    let command = ([executable] + arguments).map { "'" + $0.replacing("'", with: "'\\''") + "'" }.joined(separator: " ")
    guard let pipe = popen(command, "r") else { return nil }
    var data: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while case let count = fread(&buffer, 1, buffer.count, pipe), count > 0 { data += buffer[..<count] }
    return pclose(pipe) == 0 ? String(decoding: data, as: UTF8.self) : nil
}

if CommandLine.arguments.dropFirst().first == "--dump" {
    for path in CommandLine.arguments.dropFirst(2) {
        do {
            let feed = try FeedParser.parse(fileAt: path)
            let first = feed.episodes.first
            print([path, "OK", "\(feed.episodes.count)", "dup=\(feed.duplicateCount)", "title=\(feed.title ?? "nil")",
                   "guid=\(first?.guid ?? "nil")", "url=\(first?.enclosureURL?.absoluteString ?? "nil")",
                   "date=\(first?.published.map(FeedDate.iso8601String) ?? "nil")", "dur=\(first?.duration.map(String.init) ?? "nil")"]
                .joined(separator: "\t"))
        } catch {
            print([path, "ERR", error.code.rawValue, error.line.map(String.init) ?? "", error.message].joined(separator: "\t"))
        }
    }
    exit(0)
}

if CommandLine.arguments.dropFirst().first == "--fields" {
    FieldsDump.run(CommandLine.arguments.dropFirst(2))
    exit(0)
}

if CommandLine.arguments.dropFirst().first == "--inspect-json", let path = CommandLine.arguments.dropFirst(2).first {
    do {
        let feed = try FeedParser.parse(fileAt: path)
        _ = feed.inspectJSON().withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        exit(0)
    } catch {
        StandardError.write("error: \(error.message)\n")
        exit(1)
    }
}

let count = argument("-n").flatMap(Int.init) ?? 5000
let seed = argument("--seed").flatMap(UInt64.init) ?? 1234
let runs = argument("--runs").flatMap(Int.init) ?? 7
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("monsoon-feed-bench-\(UUID().uuidString)").path
try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: folder) }
let path = argument("--keep") ?? folder.joiningPath("big.xml")

// 1. The feed.
var generator = BigFeed(seed: seed)
let text = generator.generate(count: count, seed: seed)
try Data(text.utf8).write(to: URL(fileURLWithPath: path))
let size = text.utf8.count
print("Feed: \(count) items, seed \(seed), \(String(cFormat: "%.1f", Double(size) / 1e6)) MB (\(size / count) bytes per item): \(path)")

// 2. Parse only, in this process.
let check = try FeedParser.parse(fileAt: path)
guard check.episodes.count == count else {
    print("error: parsed \(check.episodes.count) episodes, expected \(count)")
    exit(1)
}
// Alternating with the floor: libxml2 alone on the same bytes (read from the file each time, as the
// parser reads it), with callbacks that do nothing. The ratio is taken pair by pair, so both sides
// of each see the same machine.
var parseTimes: [Timing] = [], floorTimes: [Timing] = [], floorRatios: [Double] = []
for _ in 0..<runs {
    var start = now(), cpuStart = cpuNow()
    let feed = try FeedParser.parse(fileAt: path)
    parseTimes.append(Timing(wall: Double(now() - start) / 1e9, cpu: cpuNow() - cpuStart))
    precondition(feed.episodes.count == count)
    start = now()
    cpuStart = cpuNow()
    let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
    precondition(SAXFloor.parse(bytes), "libxml2 found the generated feed not well-formed")
    floorTimes.append(Timing(wall: Double(now() - start) / 1e9, cpu: cpuNow() - cpuStart))
    floorRatios.append(parseTimes[parseTimes.count - 1].cpu / floorTimes[floorTimes.count - 1].cpu)
}
let monsoonParse = medians(parseTimes)
print("Monsoon FeedParser.parse(fileAt:), parse only: \(describe(monsoonParse)) of \(runs) runs "
    + "(\(String(cFormat: "%.0f", Double(size) / monsoonParse.wall / 1e6)) MB/s)")
print("libxml2 SAX floor (push parser, callbacks that do nothing): \(describe(medians(floorTimes))); "
    + "Monsoon's parse is \(String(cFormat: "%.2f×", median(floorRatios))) the floor (CPU, median of the pairs)")

// 3. podcastparser, parse only, in its own process.
struct PythonFigures: Decodable {
    let median: Double
    let median_cpu: Double
    let executable: String?
    let podcastparser: String?
    let python: String?
    let episodes: Int?
}
let script = root.joiningPath("Benchmarks/feed_bench.py")
var pythonExecutable: String?
if let json = output("/usr/bin/env", ["python3", script, "--parse-only", path, "--runs", "\(max(3, runs / 2))"]),
   let object = try? JSONDecoder().decode(PythonFigures.self, from: Data(json.utf8)) {
    let python = Timing(wall: object.median, cpu: object.median_cpu)
    pythonExecutable = object.executable
    print("podcastparser \(object.podcastparser ?? "?") (Python \(object.python ?? "?")) podcastparser.parse, parse only: "
        + "\(describe(python)), \(object.episodes.map(String.init) ?? "?") episodes")
    print("  parse-only ratio: Monsoon is \(ratio(python, monsoonParse)) faster")
} else {
    print("podcastparser: not available (python3 or pip failed); no parse-only comparison")
}

// 4. Whole processes, interleaved so that both sides see the same load.
let monsoon = root.joiningPath(".build/release/monsoon")
let inspectWorks = FileManager.default.isExecutableFile(atPath: monsoon) && timeProcess(monsoon, ["inspect", path, "--json"]) != nil
// This benchmark's own `--inspect-json` (same parser, same JSON shape): a figure before `monsoon inspect` exists.
let bench = CommandLine.arguments[0].hasPrefix("/") ? CommandLine.arguments[0]
    : FileManager.default.currentDirectoryPath.joiningPath(CommandLine.arguments[0])
var inspectTimes: [Timing] = [], standInTimes: [Timing] = [], pythonTimes: [Timing] = []
for _ in 0..<runs {
    if inspectWorks, let time = timeProcess(monsoon, ["inspect", path, "--json"]) { inspectTimes.append(time) }
    if let time = timeProcess(bench, ["--inspect-json", path]) { standInTimes.append(time) }
    if let pythonExecutable, let time = timeProcess(pythonExecutable, [script, "--once", path]) { pythonTimes.append(time) }
}
let python = medians(pythonTimes)
if !pythonTimes.isEmpty {
    print("python3 feed_bench.py --once (whole process: podcastparser + the same JSON): \(describe(python))")
}
if inspectWorks {
    let inspect = medians(inspectTimes)
    print("monsoon inspect FILE --json (whole process): \(describe(inspect))")
    if !pythonTimes.isEmpty { print("  whole-process ratio: Monsoon is \(ratio(python, inspect)) faster") }
} else {
    print("monsoon inspect: not available yet (\(monsoon) is missing or has no working `inspect`)")
}
if !standInTimes.isEmpty {
    let standIn = medians(standInTimes)
    print("monsoon-feed-bench --inspect-json (whole process, stand-in for monsoon inspect): \(describe(standIn))")
    if !pythonTimes.isEmpty { print("  stand-in whole-process ratio: \(ratio(python, standIn)) faster") }
}
