import Foundation
import MonsoonPodcasts

// The feed parser against Python's podcastparser on the same generated file, measured two ways in
// the same run: parse only, inside one process each (FeedParser.parse(fileAt:) here, podcastparser.parse
// in Python), and as whole processes (`monsoon inspect FILE --json > /dev/null` against a Python script
// that parses the file with podcastparser and prints the same JSON). Medians of several runs.
//
//   monsoon-feed-bench [-n ITEMS] [--seed S] [--runs N] [--keep PATH]
//   monsoon-feed-bench --dump FILE...     one summary line per file (for checking fixtures by eye)
//   monsoon-feed-bench --inspect-json FILE   the feed as `monsoon inspect --json` prints it (the stand-in
//                                            for the whole-process comparison until that command exists)

func argument(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

func milliseconds(_ seconds: Double) -> String { String(format: "%.1f ms", seconds * 1000) }

/// Runs a process with stdout to /dev/null; its wall time in seconds, or nil when it failed.
func timeProcess(_ executable: String, _ arguments: [String]) -> Double? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    let start = now()
    do { try process.run() } catch { return nil }
    process.waitUntilExit()
    let elapsed = Double(now() - start) / 1e9
    return process.terminationStatus == 0 ? elapsed : nil
}

/// Runs a process and returns its standard output, or nil when it failed.
func output(_ executable: String, _ arguments: [String]) -> String? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    do { try process.run() } catch { return nil }
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return process.terminationStatus == 0 ? String(decoding: data, as: UTF8.self) : nil
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

if CommandLine.arguments.dropFirst().first == "--inspect-json", let path = CommandLine.arguments.dropFirst(2).first {
    do {
        let feed = try FeedParser.parse(fileAt: path)
        FileHandle.standardOutput.write(Data(InspectJSON.render(feed)))
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("error: \(error.message)\n".utf8))
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
let path = argument("--keep") ?? (folder as NSString).appendingPathComponent("big.xml")

// 1. The feed.
var generator = BigFeed(seed: seed)
let text = generator.generate(count: count, seed: seed)
try Data(text.utf8).write(to: URL(fileURLWithPath: path))
let size = text.utf8.count
print("Feed: \(count) items, seed \(seed), \(String(format: "%.1f", Double(size) / 1e6)) MB (\(size / count) bytes per item): \(path)")

// 2. Parse only, in this process.
let check = try FeedParser.parse(fileAt: path)
guard check.episodes.count == count else {
    print("error: parsed \(check.episodes.count) episodes, expected \(count)")
    exit(1)
}
var parseTimes: [Double] = []
for _ in 0..<runs {
    let start = now()
    let feed = try FeedParser.parse(fileAt: path)
    parseTimes.append(Double(now() - start) / 1e9)
    precondition(feed.episodes.count == count)
}
let monsoonParse = median(parseTimes)
print("Monsoon parse only: median \(milliseconds(monsoonParse)) of \(runs) runs \(parseTimes.map { String(format: "%.0f", $0 * 1000) }) (\(String(format: "%.0f", Double(size) / monsoonParse / 1e6)) MB/s)")

// 3. podcastparser, parse only, in its own process.
let script = (root as NSString).appendingPathComponent("Benchmarks/feed_bench.py")
var pythonExecutable: String?
var pythonParse: Double?
if let json = output("/usr/bin/env", ["python3", script, "--parse-only", path, "--runs", "\(max(3, runs / 2))"]),
   let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
   let median = object["median"] as? Double {
    pythonParse = median
    pythonExecutable = object["executable"] as? String
    print("podcastparser \(object["podcastparser"] ?? "?") (Python \(object["python"] ?? "?")) parse only: median \(milliseconds(median)), \(object["episodes"] ?? "?") episodes")
    print(String(format: "  parse-only ratio: Monsoon is %.1f× faster", median / monsoonParse))
} else {
    print("podcastparser: not available (python3 or pip failed); no parse-only comparison")
}

// 4. Whole processes.
let monsoon = (root as NSString).appendingPathComponent(".build/release/monsoon")
let inspectWorks = FileManager.default.isExecutableFile(atPath: monsoon) && timeProcess(monsoon, ["inspect", path, "--json"]) != nil
var inspectTimes: [Double] = []
var pythonTimes: [Double] = []
if inspectWorks {
    for _ in 0..<runs {
        if let time = timeProcess(monsoon, ["inspect", path, "--json"]) { inspectTimes.append(time) }
    }
    print("monsoon inspect --json (whole process): median \(milliseconds(median(inspectTimes)))")
} else {
    print("monsoon inspect: not available yet (\(monsoon) is missing or has no working `inspect`)")
}
if let pythonExecutable {
    for _ in 0..<max(3, runs / 2) {
        if let time = timeProcess(pythonExecutable, [script, "--once", path]) { pythonTimes.append(time) }
    }
    print("python3 feed_bench.py --once (whole process, podcastparser + JSON): median \(milliseconds(median(pythonTimes)))")
}
if !inspectTimes.isEmpty, !pythonTimes.isEmpty {
    print(String(format: "  whole-process ratio: Monsoon is %.1f× faster", median(pythonTimes) / median(inspectTimes)))
}

// The same through this benchmark's own `--inspect-json` (same parser, same JSON shape, a smaller
// executable than `monsoon`): shown always, so a figure exists before `monsoon inspect` does.
let bench = CommandLine.arguments[0].hasPrefix("/") ? CommandLine.arguments[0]
    : (FileManager.default.currentDirectoryPath as NSString).appendingPathComponent(CommandLine.arguments[0])
var standInTimes: [Double] = []
for _ in 0..<runs {
    if let time = timeProcess(bench, ["--inspect-json", path]) { standInTimes.append(time) }
}
if !standInTimes.isEmpty {
    print("monsoon-feed-bench --inspect-json (whole process, stand-in for monsoon inspect): median \(milliseconds(median(standInTimes)))")
    if !pythonTimes.isEmpty {
        print(String(format: "  stand-in whole-process ratio: %.1f× faster", median(pythonTimes) / median(standInTimes)))
    }
}
