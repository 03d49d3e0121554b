import FoundationEssentials
import MonsoonBasics

extension Manifest {
    /// The manifest as `JSONEncoder` writes it with `.prettyPrinted`, `.sortedKeys` and `.withoutEscapingSlashes`, byte
    /// for byte (a test holds them equal), without its cost: the encoder took a quarter of a large archive's manifests.
    /// Keys in order, two spaces a level, `" : "` between a key and its value.
    func prettyJSON() -> Data {
        var json = PrettyJSON()
        json.bytes.reserveCapacity(512 + files.count * 640)
        json.append("{")
        json.member("feedURL", feedURL, first: true, level: 1)
        json.key("files", first: false, level: 1)
        json.append("[")
        if files.isEmpty { json.newline(level: 0) }   // as the encoder writes an empty array: a blank line in it
        for (index, entry) in files.enumerated() {
            if index > 0 { json.append(",") }
            json.newline(level: 2)
            entry.write(into: &json, level: 3)
        }
        json.close("]", level: 1)
        json.member("generated", generated, first: false, level: 1)
        json.member("podcast", podcast, first: false, level: 1)
        json.close("}", level: 0)
        return Data(json.bytes)
    }
}

extension Manifest.Entry {
    /// The entry as an object whose members are at `level`, its keys sorted (see `Manifest.prettyJSON`).
    fileprivate func write(into json: inout PrettyJSON, level: Int) {
        json.append("{")
        var first = true
        func member(_ key: StaticString, _ value: String?) {
            guard let value else { return }
            json.member(key, value, first: first, level: level)
            first = false
        }
        member("downloaded", downloaded)
        member("etag", etag)
        member("file", file)
        member("finalURL", finalURL)
        member("guid", guid)
        member("kind", kind)
        member("lastModified", lastModified)
        member("node", node)
        member("seen", seen)
        member("sha256", sha256)
        json.key("size", first: false, level: level)
        json.bytes.append(contentsOf: String(size).utf8)
        member("sourceURL", sourceURL)
        member("title", title)
        member("version", version)
        member("worker", worker)
        json.close("}", level: level - 1)
    }
}

/// A pretty-printed JSON document as it is written.
private struct PrettyJSON {
    var bytes: [UInt8] = []

    mutating func append(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    mutating func newline(level: Int) {
        bytes.append(UInt8(ascii: "\n"))
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * level))
    }

    mutating func close(_ bracket: StaticString, level: Int) {
        newline(level: level)
        append(bracket)
    }

    mutating func key(_ name: StaticString, first: Bool, level: Int) {
        if !first { append(",") }
        newline(level: level)
        append("\"")
        append(name)
        append("\" : ")
    }

    mutating func member(_ name: StaticString, _ value: String, first: Bool, level: Int) {
        key(name, first: first, level: level)
        JSONString.append(value, to: &bytes)
    }
}
