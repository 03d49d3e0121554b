import FoundationEssentials
import MonsoonEngine

extension OPML {
    /// An OPML 2.0 document listing `outlines`: always well-formed XML, whatever the titles and URLs hold.
    ///
    /// An outline without a title is named after its feed's URL (`text` is required).
    public static func write(_ outlines: [Outline], title: String = "Monsoon subscriptions", date: Date = Date()) -> String {
        var text = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<opml version=\"2.0\">\n  <head>\n"
        text += "    <title>\(escape(title))</title>\n    <dateCreated>\(HTTPDate.format(date))</dateCreated>\n  </head>\n  <body>\n"
        for outline in outlines {
            let name = escape(outline.title ?? outline.feedURL.absoluteString)
            text += "    <outline type=\"rss\" text=\"\(name)\" title=\"\(name)\" xmlUrl=\"\(escape(outline.feedURL.absoluteString))\""
            if let site = outline.siteURL { text += " htmlUrl=\"\(escape(site.absoluteString))\"" }
            text += "/>\n"
        }
        return text + "  </body>\n</opml>\n"
    }

    /// As XML 1.0 character data or an attribute value. Tab, LF and CR become references: as they are, a parser would
    /// turn them into spaces in an attribute value and a CR into a LF anywhere. Characters XML forbids even as references
    /// (the other C0 controls, U+FFFE, U+FFFF) are left out. DEL, C1 controls and invisible characters become references,
    /// which a terminal showing the export does not act on.
    static func escape(_ text: String) -> String {
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x26: result += "&amp;"
            case 0x3C: result += "&lt;"
            case 0x3E: result += "&gt;"
            case 0x22: result += "&quot;"
            case 0x27: result += "&apos;"
            case 0x09: result += "&#9;"
            case 0x0A: result += "&#10;"
            case 0x0D: result += "&#13;"
            case 0x00 ..< 0x20, 0xFFFE, 0xFFFF: continue
            case _ where InvisibleCharacters.isUnprintable(scalar): result += "&#x\(String(scalar.value, radix: 16, uppercase: true));"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
