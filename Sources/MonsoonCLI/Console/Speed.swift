import FoundationEssentials
import MonsoonEngine

/// A rate limit on the command line: bytes a second, with a k, M, G or T suffix (binary units,
/// as curl's `--limit-rate` reads them), or `0` / `off` for none (over a `limit-rate` setting).
struct Speed: ExpressibleByArgument, Equatable {
    /// Nil: no limit.
    var bytesPerSecond: Int?

    init?(argument: String) {
        if ["0", "off"].contains(argument.trimmingBlanks().lowercased()) {
            bytesPerSecond = nil
            return
        }
        guard let bytes = ByteCount.parse(argument), bytes >= 1 else { return nil }
        bytesPerSecond = bytes
    }

    static var invalidValueReason: String { "not a speed (examples: 2M, 500K, 1048576; 0 or off for no limit)" }
}
