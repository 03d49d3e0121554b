import Foundation
import Testing
@testable import MonsoonPodcasts

/// Every named character reference of HTML is decoded, wherever a publisher writes one.
@Suite struct HTMLEntityTests {
    /// The table is the standards' list (from Python's copy of it, by `scripts/html_entities.py`):
    /// all of HTML 4's 252 names and HTML 5's that stand for one character.
    @Test func theTableIsTheStandardsList() throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/html_entities.py").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "python3 \(script) failed")
        let words = String(decoding: output, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" })
        var standard: [String: Unicode.Scalar] = [:]
        for index in stride(from: 0, to: words.count - 1, by: 2) {
            standard[String(words[index])] = UInt32(words[index + 1], radix: 16).flatMap(Unicode.Scalar.init)
        }
        #expect(standard.count == 2_032)
        #expect(HTMLEntities.table.count == standard.count, "regenerate the table with scripts/html_entities.py")
        for (name, scalar) in standard where HTMLEntities.table[name] != scalar {
            Issue.record("&\(name); is \(String(describing: HTMLEntities.table[name])), the standard says U+\(String(scalar.value, radix: 16, uppercase: true))")
        }
        // HTML 4's own names, all there.
        for name in ["upsih", "Yuml", "thetasym", "piv", "weierp", "alefsym", "trade", "euro", "rdquo", "lsaquo", "Dagger", "loz"] {
            #expect(HTMLEntities.character(named: name) != nil, "&\(name);")
        }
    }

    @Test func titlesDescriptionsAndAuthorsAreDecoded() throws {
        let feed = try parseXML(rss("""
            <item><title>It&rsquo;s &mdash; caf&eacute;&nbsp;x &hellip; &trade; &euro;</title><guid>1</guid>
            <description>Q&amp;A &ldquo;hi&rdquo; &Alpha;&beta;&Gamma; &upsih; &Yuml;</description></item>
            <item><title><![CDATA[Double &ldquo;escaped&rdquo; &amp;amp; &lang;x&rang;]]></title><guid>2</guid></item>
            """, channel: "<title>Q&amp;A &ldquo;hi&rdquo;</title><itunes:author>Fran&ccedil;ois &amp; Zo&euml;</itunes:author>"))
        #expect(feed.title == "Q&A “hi”")
        #expect(feed.author == "François & Zoë")
        #expect(feed.episodes.first?.title == "It’s — café\u{A0}x … ™ €", "a no-break space is the publisher's")
        #expect(feed.episodes.first?.summary == "Q&A “hi” ΑβΓ ϒ Ÿ")
        #expect(feed.episodes.last?.title == "Double “escaped” &amp; ⟨x⟩")
    }
}
