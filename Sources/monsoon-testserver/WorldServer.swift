import FoundationEssentials
import MonsoonTestServer

/// An archivist's world for the archive race (Benchmarks/archive_race.py): several feeds whose
/// enclosures sit behind two tracking redirects on two host names and a CDN that takes 120 ms to
/// answer, with the faults real CDNs have when asked: a 503 here and there, a body cut short.
enum WorldServer {
    static func serve(on server: TestServer, feeds: Int, episodes: Int, faults: Bool) {
        let tracker = "http://localhost:\(server.port)"
        let cdn = "http://127.0.0.1:\(server.port)"
        var hashes = ""
        var number = 0
        for feed in 1...feeds {
            var items = ""
            for episode in 1...episodes {
                number += 1
                // 256 KiB to 2 MiB, the same on every run.
                let size = (256 << 10) + (number * 1_103_515_245 &+ 12_345) % (1_792 << 10)
                let body = Body.pattern(size: size, seed: UInt64(number))
                var faultList: [Fault] = []
                if faults && number % 12 == 0 { faultList.append(.status(503, times: 1)) }
                if faults && number % 17 == 0 { faultList.append(.dropAfter(bytes: size / 2, times: 1)) }
                let path = "/media/\(feed)/\(episode).mp3"
                server.setRoute(path, Route(body: body, contentType: "audio/mpeg", etag: "\"w\(number)\"", faults: faultList, firstByteDelay: 0.12))
                server.setRoute("/t2/\(feed)/\(episode).mp3", Route(body: .bytes([]), faults: [.redirect(to: cdn + path)]))
                server.setRoute("/t1/\(feed)/\(episode).mp3", Route(body: .bytes([]), faults: [.redirect(to: cdn + "/t2/\(feed)/\(episode).mp3")]))
                hashes += "\(feed)/\(episode) \(body.sha256Hex())\n"
                let day = Date(timeIntervalSince1970: 1_704_103_200 + Double(episode) * 86_400)
                items += "<item><title>Show \(feed), episode \(episode)</title><guid isPermaLink=\"false\">world-\(feed)-\(episode)</guid>"
                    + "<pubDate>\(HTTPDate.format(day))</pubDate><enclosure url=\"\(tracker)/t1/\(feed)/\(episode).mp3\" type=\"audio/mpeg\" length=\"\(size)\"/></item>\n"
            }
            let document = """
                <?xml version="1.0" encoding="UTF-8"?>
                <rss version="2.0"><channel><title>World Show \(feed)</title><link>\(cdn)/</link>
                \(items)</channel></rss>
                """
            server.setRoute("/world/feed\(feed).xml", Route(body: .bytes(Array(document.utf8)), contentType: "application/rss+xml", etag: "\"feed\(feed)\""))
        }
        server.setRoute("/world/sha256.txt", Route(body: .bytes(Array(hashes.utf8)), contentType: "text/plain"))
    }
}
