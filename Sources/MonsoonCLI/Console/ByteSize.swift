/// A size on the command line: bytes, or with a k, M, G or T suffix (binary units).
import Foundation
import MonsoonEngine

struct ByteSize: ExpressibleByArgument, Equatable {
    var bytes: Int

    init(bytes: Int) { self.bytes = bytes }

    init?(argument: String) {
        var text = argument.trimmingCharacters(in: .whitespaces)
        if text.lowercased().hasSuffix("ib") { text.removeLast(2) } else if text.lowercased().hasSuffix("b") { text.removeLast() }
        var multiplier = 1
        if let last = text.last, let shift = ["k": 10, "m": 20, "g": 30, "t": 40][last.lowercased()] {
            multiplier = 1 << shift
            text.removeLast()
        }
        guard let value = Double(text), value >= 0, value * Double(multiplier) < Double(Int.max / 2) else { return nil }
        bytes = Int(value * Double(multiplier))
    }

    static var invalidValueReason: String { "not a size (examples: 500M, 2G, 1048576)" }

    var defaultValueDescription: String { ByteCount.format(bytes).replacingOccurrences(of: " ", with: "") }
}
