import Foundation
import Testing
@testable import MonsoonPodcasts

@Suite struct PlaybackRulesTests {
    @Test func playedOnlyWithinTheThresholdOfTheEnd() {
        #expect(PlaybackRules.isPlayed(position: 3570, duration: 3600, threshold: 30))
        #expect(PlaybackRules.isPlayed(position: 3600, duration: 3600, threshold: 30))
        #expect(!PlaybackRules.isPlayed(position: 3569.9, duration: 3600, threshold: 30))
        #expect(!PlaybackRules.isPlayed(position: 3, duration: 3600, threshold: 30), "stopped by --length or a quit")
        #expect(!PlaybackRules.isPlayed(position: 3600, duration: nil, threshold: 30), "no duration: never counted played")
        #expect(!PlaybackRules.isPlayed(position: 0, duration: 0, threshold: 30))
        #expect(PlaybackRules.isPlayed(position: 20, duration: 20, threshold: 0))
    }

    @Test func onlyHTTPAndHTTPSAreStreamed() throws {
        for text in ["https://media.example.org/a.mp3", "HTTP://media.example.org/a.mp3"] {
            #expect(PlaybackRules.streamRefusal(try #require(URL(string: text))) == nil, "\(text)")
        }
        for text in ["file:///etc/passwd", "ftp://h/x.mp3", "gopher://h/1", "data:audio/mpeg;base64,AA==", "http:///nohost"] {
            let refusal = PlaybackRules.streamRefusal(try #require(URL(string: text)))
            #expect(refusal?.hasPrefix("only http and https enclosures are streamed") == true, "\(text)")
        }
        #expect(PlaybackRules.streamRefusal(URL(string: "ftp://user:secret@h/x")!)?.contains("secret") == false, "credentials redacted")
    }

    @Test func clock() {
        #expect(PlaybackRules.clock(0) == "0:00")
        #expect(PlaybackRules.clock(184.9) == "3:04")
        #expect(PlaybackRules.clock(3600) == "1:00:00")
        #expect(PlaybackRules.clock(-5) == "0:00")
    }
}
