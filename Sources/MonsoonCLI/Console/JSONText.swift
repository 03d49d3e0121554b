import FoundationEssentials
import MonsoonEngine

/// JSON values written by hand, for output that is streamed row by row.
enum JSONText {
    /// A JSON string literal, with the escapes RFC 8259 requires, and DEL, C1 controls and
    /// invisible characters (`InvisibleCharacters`) as `\u` escapes too: the same string to a
    /// parser, nothing that can move or recolour a terminal that shows it.
    static func string(_ text: String) -> String {
        // Most text needs no escape at all: one pass over the bytes, then one copy.
        if !text.utf8.contains(where: { $0 < 0x20 || $0 >= 0x7F || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            return "\"" + text + "\""
        }
        var result = "\""
        result.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where InvisibleCharacters.isUnprintable(scalar):
                result += String(cFormat: "\\u%04x", scalar.value)
            default:
                result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// A finite number; whole values without a fraction.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
        return String(value)
    }
}
