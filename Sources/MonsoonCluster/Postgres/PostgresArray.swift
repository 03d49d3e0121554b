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
        var text = "{"
        for (index, value) in values.enumerated() {
            if index > 0 { text += "," }
            guard let value else { text += "NULL"; continue }
            text += "\""
            for character in value.unicodeScalars {
                if character == "\"" || character == "\\" { text += "\\" }
                text.unicodeScalars.append(character)
            }
            text += "\""
        }
        postgresText = text + "}"
    }
}
