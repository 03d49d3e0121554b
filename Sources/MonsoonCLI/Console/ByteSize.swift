import FoundationEssentials
import MonsoonEngine

/// A size on the command line: bytes, or with a k, M, G or T suffix (binary units).
struct ByteSize: ExpressibleByArgument, Equatable {
    var bytes: Int

    init?(argument: String) {
        guard let bytes = ByteCount.parse(argument) else { return nil }
        self.bytes = bytes
    }

    static var invalidValueReason: String { "not a size (examples: 500M, 2G, 1048576)" }
}
