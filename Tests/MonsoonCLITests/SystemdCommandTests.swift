import Foundation
import Testing

/// `monsoon systemd`: the units it prints are checked by systemd's own `systemd-analyze verify`
/// (Debian's `systemd` package; `make test` installs it), offline: no running systemd is needed.
@Suite struct SystemdCommandTests {
    /// The units of the install script, by file name: the text between `cat > "$units/NAME" <<'UNIT'`
    /// and the line `UNIT`.
    static func units(in script: String) -> [String: String] {
        var units: [String: String] = [:]
        var current: (name: String, lines: [String])?
        for line in script.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if let unit = current {
                if line == "UNIT" {
                    units[unit.name] = unit.lines.joined(separator: "\n") + "\n"
                    current = nil
                } else {
                    current?.lines.append(line)
                }
            } else if line.hasPrefix("cat > \"$units/"), line.hasSuffix("\" <<'UNIT'") {
                current = (String(line.dropFirst("cat > \"$units/".count).dropLast("\" <<'UNIT'".count)), [])
            }
        }
        return units
    }

    @Test func theUnitsPassSystemdAnalyzeVerify() async throws {
        let folder = Folder()
        defer { folder.remove() }
        // The built binary: the units name its real path, which systemd-analyze checks is executable.
        let printed = try await MonsoonProcess(["systemd", "--every", "30min"], in: folder.path).finish()
        #expect(printed.status == 0 && printed.errors == "", "\(printed.errors)")
        let units = Self.units(in: printed.output)
        #expect(units.keys.sorted() == ["monsoon-download.service", "monsoon-sync.service", "monsoon-sync.timer"])
        let binary = URL(fileURLWithPath: monsoonBinary).resolvingSymlinksInPath().path
        #expect(units["monsoon-sync.service"]?.contains("ExecStart=\"\(binary)\" sync --quiet\n") == true)
        #expect(units["monsoon-download.service"]?.contains("ExecStart=\"\(binary)\" download --quiet\n") == true)
        let timer = try #require(units["monsoon-sync.timer"])
        #expect(timer.contains("OnStartupSec=5min\nOnUnitActiveSec=30min\n"))
        // What verify does not catch: Persistent= means nothing without OnCalendar=, and a user
        // manager has no network-online.target.
        #expect(!timer.contains("Persistent="), "\(timer)")
        #expect(!units.values.contains { $0.contains("network-online.target") })

        let unitFolder = folder.file("units")
        try FileManager.default.createDirectory(atPath: unitFolder, withIntermediateDirectories: true)
        for (name, text) in units { try Data(text.utf8).write(to: URL(fileURLWithPath: unitFolder + "/" + name)) }
        // A user manager needs a runtime folder; root in a container without a session has none.
        let runtime = folder.file("runtime")
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let analyze = "/usr/bin/systemd-analyze"
        guard FileManager.default.isExecutableFile(atPath: analyze) else {
            Issue.record("systemd-analyze is missing: install Debian's systemd package (make deps does)")
            return
        }
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = runtime
        let report = folder.file("verify.txt")
        let verify = try SpawnedProcess(analyze, ["--user", "verify"] + units.keys.sorted().map { unitFolder + "/" + $0 },
                                        directory: unitFolder, environment: environment, output: report, errors: report)
        try await waitUntil(seconds: 120, "systemd-analyze verify to end") { !verify.isRunning }
        let complaints = String(decoding: FileManager.default.contents(atPath: report) ?? Data(), as: UTF8.self)
        #expect(verify.terminationStatus == 0 && complaints.isEmpty, "systemd-analyze verify: \(complaints)")
    }

    @Test func aBadSpanIsAUsageError() async {
        let folder = Folder()
        defer { folder.remove() }
        let result = await runMonsoon(["systemd", "--every", "soon"], in: folder.path)
        #expect(result.status == 2)
        #expect(result.errors.hasPrefix("monsoon: 'soon' is not a time span like 30min, 1h or 1d\nUsage: monsoon systemd"), "\(result.errors)")
    }
}
