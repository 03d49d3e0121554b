// monsoon-fuzz: libFuzzer targets for the feed parser, the date parser, the duration parser, the OPML
// reader and the archive manifest reader.
//
//   monsoon-fuzz [--target feed|date|duration|opml|manifest] FILE_OR_DIR...
//
// Built by `make fuzz` (with -sanitize=fuzzer -D FUZZING), it is libFuzzer: the other arguments are
// libFuzzer's (corpus folders, -max_total_time=60, -merge=1 …). Built normally, it replays inputs:
// each file, and each file directly in each folder, goes through the same entry point, so a crash
// `make fuzz` saved can be run under a debugger; it exits 0 when none crashes.
// The target is `--target`, else the environment variable MONSOON_FUZZ_TARGET, else `feed`.
//
// SwiftPM links its executables with `main` aliased to this file's code, which wins over libFuzzer's
// own `main`; so this code starts libFuzzer itself, through `LLVMFuzzerRunDriver`.

import FoundationEssentials
import Glibc
import MonsoonBasics
#if FUZZING
import CLibFuzzer
#endif

func fail(_ message: String) -> Never {
    StandardError.write("monsoon-fuzz: \(message)\n")
    StandardError.write("usage: monsoon-fuzz [--target feed|date|duration|opml|manifest] FILE_OR_DIR...\n")
    exit(2)
}

/// `--target NAME` (or `--target=NAME`) taken out; the rest is passed on.
var passedOn: [String] = []
var targetName = ProcessInfo.processInfo.environment["MONSOON_FUZZ_TARGET"] ?? FuzzTarget.feed.rawValue
var rest = CommandLine.arguments.dropFirst()[...]
while let argument = rest.popFirst() {
    if argument == "--target" {
        guard let name = rest.popFirst() else { fail("--target needs a name") }
        targetName = name
    } else if argument.hasPrefix("--target=") {
        targetName = String(argument.dropFirst("--target=".count))
    } else {
        passedOn.append(argument)
    }
}
guard let target = FuzzTarget(rawValue: targetName) else { fail("unknown target '\(targetName)'") }
selectedTarget = target
// For the processes libFuzzer starts itself (-merge=1, -fork): they get the environment, not `--target`.
setenv("MONSOON_FUZZ_TARGET", target.rawValue, 1)

#if FUZZING
// Swift's runtime installs its crash backtracer for these signals at start-up, and libFuzzer leaves
// a handler it finds in place: without this, a crash would print a backtrace but save no input.
for signalNumber in [SIGILL, SIGTRAP, SIGSEGV, SIGBUS, SIGABRT, SIGFPE] {
    signal(signalNumber, SIG_DFL)
}
// libFuzzer's argv: ours without `--target`, as C strings it may keep (never freed: it runs once).
var driverArguments: [UnsafeMutablePointer<CChar>?] = ([CommandLine.arguments[0]] + passedOn).map { strdup($0) } + [nil]
var argc = Int32(driverArguments.count - 1)
exit(driverArguments.withUnsafeMutableBufferPointer { buffer in
    var argv = buffer.baseAddress
    return LLVMFuzzerRunDriver(&argc, &argv, fuzzOneInput)
})
#else
guard !passedOn.isEmpty else { fail("no input given") }
var count = 0
for path in passedOn {
    var isFolder: Bool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { fail("no file or folder at \(path)") }
    let files: [String]
    if isFolder {
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: path) } catch { fail("cannot list \(path): \(SystemErrorText.reason(error))") }
        files = names.sorted().map { path.joiningPath($0) }
    } else {
        files = [path]
    }
    for file in files {
        // Folders inside a folder are skipped: each corpus folder belongs to one target.
        guard let data = FileManager.default.contents(atPath: file) else { continue }
        _ = data.withUnsafeBytes { fuzzOneInput($0.bindMemory(to: UInt8.self).baseAddress, $0.count) }
        count += 1
    }
}
print("monsoon-fuzz: \(count) input(s) through the \(target.rawValue) target, no crash")
#endif
