/// A size on the command line: bytes, or with a k, M, G or T suffix (binary units).
import Foundation
import MonsoonEngine

struct ByteSize: ExpressibleByArgument, Equatable {
    var bytes: Int

    init(bytes: Int) { self.bytes = bytes }

    init?(argument: String) {
        guard let bytes = ByteCount.parse(argument) else { return nil }
        self.bytes = bytes
    }

    static var invalidValueReason: String { "not a size (examples: 500M, 2G, 1048576)" }
}
