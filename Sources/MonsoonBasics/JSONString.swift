/// A JSON string as `JSONEncoder` writes it with `.withoutEscapingSlashes`: quotes, backslashes and control characters
/// escaped (`\b`, `\t`, `\n`, `\f`, `\r`, else `\u00xx` in lowercase), `/` and everything else as it is. Text written by
/// hand with it reads back, and compares byte for byte, as the encoder's would (a queue row's pairs, a manifest).
package enum JSONString {
    package static func append(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        defer { bytes.append(UInt8(ascii: "\"")) }
        // Most text has nothing to escape: copied whole.
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
            return bytes.append(contentsOf: text.utf8)
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): bytes.append(contentsOf: #"\\"#.utf8)
            case 0x08: bytes.append(contentsOf: #"\b"#.utf8)
            case 0x09: bytes.append(contentsOf: #"\t"#.utf8)
            case 0x0A: bytes.append(contentsOf: #"\n"#.utf8)
            case 0x0C: bytes.append(contentsOf: #"\f"#.utf8)
            case 0x0D: bytes.append(contentsOf: #"\r"#.utf8)
            case 0..<0x20:
                bytes.append(contentsOf: #"\u00"#.utf8)
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0x0F)])
            default: bytes.append(byte)
            }
        }
    }

    private static let hex = Array("0123456789abcdef".utf8)
}
