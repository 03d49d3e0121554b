/// A one-dimensional array parameter in PostgreSQL's text format (`{1,2,3}`, `{"a b",NULL}`), for
/// statements that take many rows at once through `unnest($1::bigint[], $2::text[])`: one round
/// trip for a batch, never one per row.
public struct PostgresArray: PostgresValue {
    public let postgresText: String

    /// Integers, written as they are.
    public init(_ values: [Int64]) {
        postgresText = "{" + values.map(String.init).joined(separator: ",") + "}"
    }

    /// Texts (nil is NULL), each quoted, with `"` and `\` escaped: any text round-trips.
    public init(_ values: [String?]) {
        // As UTF-8 bytes, not scalar by scalar: a worker's completions pass several texts a file.
        // `"` and `\` are never part of a longer UTF-8 sequence, so escaping bytes escapes characters.
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            guard let value else { bytes += "NULL".utf8; continue }
            bytes.append(UInt8(ascii: "\""))
            for byte in value.utf8 {
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { bytes.append(UInt8(ascii: "\\")) }
                bytes.append(byte)
            }
            bytes.append(UInt8(ascii: "\""))
        }
        bytes.append(UInt8(ascii: "}"))
        postgresText = String(decoding: bytes, as: UTF8.self)
    }
}
