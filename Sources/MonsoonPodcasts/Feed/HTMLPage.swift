import FoundationEssentials

/// An HTML page served where a feed was expected (a podcast's website, a login or error page, a bot
/// challenge): what it links as its feed, and its title for the error message.
enum HTMLPage {
    /// True when the document's first markup is an HTML doctype or an `<html>`, `<head>` or `<body>` tag.
    static func looksLikeHTML(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        while index < bytes.count {
            if ByteScanner.isSpace(bytes[index]) {
                index += 1
            } else if FeedRepair.matches(bytes, "<!--", at: index, ignoringCase: false) {
                index = FeedRepair.find(bytes, "-->", from: index + 4).map { $0 + 3 } ?? bytes.count
            } else if FeedRepair.matches(bytes, "<?", at: index, ignoringCase: false) {
                index = FeedRepair.find(bytes, "?>", from: index + 2).map { $0 + 2 } ?? bytes.count
            } else {
                return FeedRepair.matches(bytes, "<!doctype html", at: index, ignoringCase: true)
                    || FeedRepair.matches(bytes, "<html", at: index, ignoringCase: true)
                    || FeedRepair.matches(bytes, "<head", at: index, ignoringCase: true)
                    || FeedRepair.matches(bytes, "<body", at: index, ignoringCase: true)
            }
        }
        return false
    }

    /// Up to `</head>` (or the first 256 KB), as (lowercased name, attributes) pairs.
    private static func headTags(_ bytes: UnsafeBufferPointer<UInt8>) -> [(name: String, attributes: [String: String])] {
        let limit = min(bytes.count, 256 << 10)
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[..<limit]), as: UTF8.self)
        var tags: [(String, [String: String])] = []
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "<") {
            rest = rest[rest.index(after: open)...]
            let name = rest.prefix { $0.isLetter || $0.isNumber || $0 == "/" }.lowercased()
            if name == "/head" || name == "body" { break }
            guard name == "link" || name == "title" || name == "base" else { continue }
            var attributes: [String: String] = [:]
            rest = rest.dropFirst(name.count)
            // name="value", name='value' or name=value, up to the closing >.
            while let first = rest.first, first != ">" {
                if first.isWhitespace || first == "/" { rest = rest.dropFirst(); continue }
                let attributeName = rest.prefix { !$0.isWhitespace && $0 != "=" && $0 != ">" }
                rest = rest.dropFirst(attributeName.count)
                var value = ""
                if rest.first == "=" {
                    rest = rest.dropFirst()
                    if let quote = rest.first, quote == "\"" || quote == "'" {
                        rest = rest.dropFirst()
                        value = String(rest.prefix { $0 != quote })
                        rest = rest.dropFirst(value.count + 1)
                    } else {
                        value = String(rest.prefix { !$0.isWhitespace && $0 != ">" })
                        rest = rest.dropFirst(value.count)
                    }
                }
                if attributeName.isEmpty { rest = rest.dropFirst() } else { attributes[attributeName.lowercased()] = value }
            }
            if name == "title", let close = rest.firstRange(of: #/</title/#.ignoresCase()) {
                attributes["text"] = String(rest[rest.index(after: rest.startIndex)..<close.lowerBound])
            }
            tags.append((name, attributes))
        }
        return tags
    }

    /// `<link rel="alternate" type="application/rss+xml|atom+xml" href=…>`, resolved against `<base href>` and the URL.
    static func alternateFeedURL(_ bytes: UnsafeBufferPointer<UInt8>, pageURL: URL) -> URL? {
        var base = pageURL
        for (name, attributes) in headTags(bytes) {
            if name == "base", let href = attributes["href"], let url = FeedURL.resolve(FeedText.decodeEntities(href), against: pageURL) {
                base = url
            }
            guard name == "link", let href = attributes["href"],
                  let rel = attributes["rel"]?.lowercased().split(separator: " "), rel.contains("alternate"),
                  let type = attributes["type"]?.lowercased().trimmingBlanks(),
                  type == "application/rss+xml" || type == "application/atom+xml" else { continue }
            return FeedURL.resolve(FeedText.decodeEntities(href), against: base)
        }
        return nil
    }

    /// Cleaned, for messages.
    static func title(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        headTags(bytes).first { $0.name == "title" }?.attributes["text"].flatMap(FeedText.title)
    }
}
