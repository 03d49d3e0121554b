import FoundationEssentials
import Glibc
import MonsoonCluster

/// Passwords written on the command line are overwritten in the process's own argument memory
/// once read, as curl does with `-u`: `ps` and `/proc/PID/cmdline` show `*` where they were for as
/// long as the process runs (a worker runs for days). The ways that keep them off the command line
/// altogether are `MONSOON_DB`, `PGPASSFILE` (`~/.pgpass`) and `PGPASSWORD`.
public enum ArgumentSecrets {
    /// The secrets in `arguments` as written: those of a `--db` connection string (`--db VALUE`
    /// or `--db=VALUE`), and the password of any URL with one (`--proxy`, a URL to download).
    static func secrets(in arguments: [String]) -> [String] {
        var secrets: [String] = []
        var afterDB = false
        for argument in arguments {
            if afterDB {
                secrets += PostgresConnectionString(argument).secrets
            } else if argument.hasPrefix("--db=") {
                secrets += PostgresConnectionString(String(argument.dropFirst(5))).secrets
            }
            afterDB = argument == "--db"
            if let password = URLComponents(string: argument)?.percentEncodedPassword, !password.isEmpty { secrets.append(password) }
        }
        return secrets.filter { !$0.isEmpty }
    }

    /// Overwrites, in each of the `count` strings of `argv` (the process's own), the bytes of
    /// every secret with `*`. Call it once the arguments have been copied (`CommandLine.arguments`).
    public static func hide(count: Int32, in argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) {
        let arguments = (0..<Int(count)).map { argv[$0].map { String(cString: $0) } ?? "" }
        let secrets = secrets(in: Array(arguments.dropFirst())).map { Array($0.utf8) }
        guard !secrets.isEmpty else { return }
        for index in 1..<Int(count) {
            guard let argument = argv[index] else { continue }
            let length = strlen(argument)
            let bytes = UnsafeMutableRawPointer(argument).bindMemory(to: UInt8.self, capacity: length)
            for secret in secrets where secret.count <= length {
                var start = 0
                while start + secret.count <= length {
                    if (0..<secret.count).allSatisfy({ bytes[start + $0] == secret[$0] }) {
                        for offset in 0..<secret.count { bytes[start + offset] = UInt8(ascii: "*") }
                        start += secret.count
                    } else {
                        start += 1
                    }
                }
            }
        }
    }
}
