import Foundation
import MonsoonPodcasts

/// `monsoon inspect --json`'s output shape, written by hand into one buffer: the stand-in for the
/// whole-process comparison until `monsoon inspect` exists (and a sketch of how to keep the JSON
/// from being what makes it slow: no JSONEncoder, no Foundation date formatting).
enum InspectJSON {
    static func render(_ feed: ParsedFeed) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(feed.episodes.count * 256 + 256)
        out.append(contentsOf: "{\"title\": ".utf8)
        string(feed.title, &out)
        out.append(contentsOf: ", \"episodes\": [".utf8)
        for (index, episode) in feed.episodes.enumerated() {
            out.append(contentsOf: (index == 0 ? "\n  {\"guid\": " : ",\n  {\"guid\": ").utf8)
            string(episode.guid, &out)
            out.append(contentsOf: ", \"title\": ".utf8)
            string(episode.title, &out)
            out.append(contentsOf: ", \"url\": ".utf8)
            string(episode.enclosureURL?.absoluteString, &out)
            out.append(contentsOf: ", \"published\": ".utf8)
            string(episode.published.map(FeedDate.iso8601String), &out)
            out.append(contentsOf: ", \"duration\": ".utf8)
            out.append(contentsOf: (episode.duration.map(String.init) ?? "null").utf8)
            out.append(UInt8(ascii: "}"))
        }
        out.append(contentsOf: "\n]}\n".utf8)
        return out
    }

    static func string(_ value: String?, _ out: inout [UInt8]) {
        guard let value else {
            out.append(contentsOf: "null".utf8)
            return
        }
        out.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: "\\\"".utf8)
            case UInt8(ascii: "\\"): out.append(contentsOf: "\\\\".utf8)
            case 0x0A: out.append(contentsOf: "\\n".utf8)
            case 0x0D: out.append(contentsOf: "\\r".utf8)
            case 0x09: out.append(contentsOf: "\\t".utf8)
            case 0..<0x20: out.append(contentsOf: String(format: "\\u%04x", byte).utf8)
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
