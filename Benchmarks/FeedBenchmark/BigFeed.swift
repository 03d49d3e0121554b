import FoundationEssentials

/// A seeded, deterministic generator of a large RSS 2.0 + iTunes feed, of the same shape as
/// `shared/feeds/tools/bigfeed.py` (whose random numbers are Python's, so the bytes differ): items
/// newest first, one a day, each with a title, link, guid, RFC 822 date, the first paragraph of the
/// show notes as escaped HTML in `description`, the full notes in CDATA in `content:encoded`, an
/// MP3 enclosure and six iTunes tags; about 2.4 KB an item, 12 MB for 5,000 items.
struct BigFeed {
    /// SplitMix64: tiny, fast and good enough for test data.
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        /// Uniform in `range` (inclusive).
        mutating func int(_ range: ClosedRange<Int>) -> Int {
            range.lowerBound + Int(next() % UInt64(range.count))
        }
    }

    static let words = ("audio podcast episode guest interview history science music culture story season "
        + "city river mountain engine library garden network signal market coffee archive "
        + "memory future ocean planet language design code data tape radio studio listener "
        + "question answer theory practice journey winter summer morning evening travel").split(separator: " ").map(String.init)
    static let days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    var random: Random

    init(seed: UInt64) {
        random = Random(state: seed)
    }

    mutating func words(_ count: Int) -> String {
        (0..<count).map { _ in BigFeed.words[random.int(0...BigFeed.words.count - 1)] }.joined(separator: " ")
    }

    static func escape(_ text: String) -> String {
        text.replacing("&", with: "&amp;").replacing("<", with: "&lt;").replacing(">", with: "&gt;")
    }

    static func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

    static func rfc822(_ seconds: Int) -> String {
        let date = Date(timeIntervalSince1970: TimeInterval(seconds))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday], from: date)
        let weekday = days[((c.weekday ?? 1) + 5) % 7]
        return "\(weekday), \(two(c.day ?? 1)) \(months[(c.month ?? 1) - 1]) \(c.year ?? 1970) \(two(c.hour ?? 0)):\(two(c.minute ?? 0)):\(two(c.second ?? 0)) +0000"
    }

    mutating func showNotes(_ number: Int) -> String {
        var notes = ""
        for paragraph in 0..<random.int(2...4) {
            var sentence = words(random.int(15...30))
            sentence = sentence.prefix(1).uppercased() + sentence.dropFirst()
            notes += "<p>\(sentence). <a href=\"https://www.example.org/links/\(number)-\(paragraph)\">\(words(3))</a> &amp; \(words(8)).</p>"
        }
        var minutes = Set<Int>()
        while minutes.count < 4 { minutes.insert(random.int(0...58)) }
        notes += "<ul>"
        for minute in minutes.sorted() {
            notes += "<li>\(BigFeed.two(minute)):\(BigFeed.two(random.int(0...59))) \(words(4).capitalized)</li>"
        }
        return notes + "</ul>"
    }

    mutating func uuid() -> String {
        let high = random.next(), low = random.next()
        let hex = String(cFormat: "%016llx%016llx", high, low)
        let chars = Array(hex)
        return "\(String(chars[0..<8]))-\(String(chars[8..<12]))-4\(String(chars[13..<16]))-a\(String(chars[17..<20]))-\(String(chars[20..<32]))"
    }

    /// The whole feed with `count` items.
    mutating func generate(count: Int, seed: UInt64) -> String {
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<rss version=\"2.0\" xmlns:itunes=\"http://www.itunes.com/dtds/podcast-1.0.dtd\" "
            + "xmlns:content=\"http://purl.org/rss/1.0/modules/content/\" xmlns:atom=\"http://www.w3.org/2005/Atom\" "
            + "xmlns:podcast=\"https://podcastindex.org/namespace/1.0\">\n<channel>\n"
        out += "<title>Synthetic Big Feed (\(count) items, seed \(seed))</title>\n"
        out += "<link>https://www.example.org/bigfeed/</link>\n"
        out += "<atom:link href=\"https://feeds.example.org/bigfeed.xml\" rel=\"self\" type=\"application/rss+xml\"/>\n"
        out += "<description>Generated test feed. \(BigFeed.escape(words(30)))</description>\n"
        out += "<language>en-us</language>\n<itunes:author>Example Productions</itunes:author>\n"
        out += "<itunes:image href=\"https://www.example.org/bigfeed/cover.jpg\"/>\n"
        out += "<itunes:category text=\"Technology\"/>\n<itunes:explicit>false</itunes:explicit>\n<itunes:type>episodic</itunes:type>\n"
        out += "<podcast:guid>\(uuid())</podcast:guid>\n"
        let newest = 1_735_538_400  // 2024-12-30T06:00:00Z
        for number in stride(from: count, through: 1, by: -1) {
            let published = newest - (count - number) * 86_400 - random.int(0...599) * 60
            let seconds = random.int(300...3 * 3600)
            let guid = uuid()
            let title = "Ep. \(number): \(words(random.int(3...8)).capitalized)"
            let notes = showNotes(number)
            let summary = words(random.int(20...35))
            let firstParagraph = notes.components(separatedBy: "</p>").first.map { $0 + "</p>" } ?? notes
            let media = "https://media.example.org/bigfeed/episode-\(String(cFormat: "%05d", number)).mp3"
            let (hours, rest) = seconds.quotientAndRemainder(dividingBy: 3600)
            out += "<item>\n"
            out += "  <title>\(BigFeed.escape(title))</title>\n"
            out += "  <link>https://www.example.org/bigfeed/episodes/\(number)</link>\n"
            out += "  <guid isPermaLink=\"false\">\(guid)</guid>\n"
            out += "  <pubDate>\(BigFeed.rfc822(published))</pubDate>\n"
            out += "  <description>\(BigFeed.escape(firstParagraph))</description>\n"
            out += "  <content:encoded><![CDATA[\(notes)]]></content:encoded>\n"
            out += "  <enclosure url=\"\(media)\" length=\"\(seconds * 16000)\" type=\"audio/mpeg\"/>\n"
            out += "  <itunes:title>\(BigFeed.escape(title))</itunes:title>\n"
            out += "  <itunes:episode>\(number)</itunes:episode>\n"
            out += "  <itunes:episodeType>full</itunes:episodeType>\n"
            out += "  <itunes:duration>\(BigFeed.two(hours)):\(BigFeed.two(rest / 60)):\(BigFeed.two(rest % 60))</itunes:duration>\n"
            out += "  <itunes:summary>\(BigFeed.escape(summary))</itunes:summary>\n"
            out += "  <itunes:explicit>false</itunes:explicit>\n"
            out += "</item>\n"
        }
        return out + "</channel>\n</rss>\n"
    }
}
