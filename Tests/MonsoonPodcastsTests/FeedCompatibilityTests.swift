import Foundation
import Testing
@testable import MonsoonPodcasts

/// What other parsers read, Monsoon reads too.
@Suite struct FeedCompatibilityTests {
    @Test func aCommentWithDoubleHyphensIsRepairedNotFatal() throws {
        let feed = try parseXML("""
            <?xml version="1.0"?>
            <!-- generated -- by a tool --->
            <rss version="2.0"><channel><title>Show</title><!-- a -- b -->
            <item><title>One<!-- x -- y --></title><guid>1</guid></item>
            <!---->
            </channel></rss>
            """)
        #expect(feed.title == "Show")
        #expect(feed.episodes.map(\.title) == ["One"])
    }
}
