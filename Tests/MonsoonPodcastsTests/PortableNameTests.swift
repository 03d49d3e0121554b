import Foundation
import Testing
@testable import MonsoonPodcasts

/// Names valid on exFAT and SMB (`--portable-names`).
@Suite struct PortableNameTests {
    @Test func refusedCharactersAndControlsBecomeUnderscores() {
        #expect(PortableName.make("What? A \"Show\": Part 1*") == "What_ A _Show__ Part 1_")
        #expect(PortableName.make("a<b>c|d\\e") == "a_b_c_d_e")
        #expect(PortableName.make("bell\u{07}tab\tdel\u{7F}") == "bell_tab_del_")
        #expect(PortableName.make("Ünïcödé — 東京") == "Ünïcödé — 東京", "only what the file systems refuse changes")
    }

    @Test func noTrailingDotsOrSpaces() {
        #expect(PortableName.make("Aux. ") == "Aux_", "trimmed, then a reserved name")
        #expect(PortableName.make("Show...") == "Show")
        #expect(PortableName.make("Show. . ") == "Show")
        #expect(PortableName.make("...") == "_" && PortableName.make("") == "_")
    }

    @Test func reservedNamesInAnyCaseAlsoWithAnExtension() {
        for name in ["CON", "con", "Prn", "AUX", "nul", "COM1", "com9", "LPT1", "lpt9"] {
            #expect(PortableName.make(name) == name + "_", "\(name)")
        }
        #expect(PortableName.make("con.mp3") == "con_.mp3" && PortableName.make("Com1.tar.gz") == "Com1_.tar.gz")
        for name in ["CONSOLE", "COM10", "LPT0", "AUXILIARY.mp3", "my con.mp3", "NULL"] {
            #expect(PortableName.make(name) == name, "\(name) is not reserved")
        }
    }

    @Test func withinTheLengthLimitInUTF16Units() {
        let long = String(repeating: "a", count: 300)
        #expect(PortableName.make(long).utf16.count == 255)
        // Characters outside the BMP take two units each, and are never cut in half.
        let emoji = String(repeating: "🎙", count: 200)
        let cut = PortableName.make(emoji)
        #expect(cut.utf16.count == 254 && cut.allSatisfy { $0 == "🎙" })
        #expect(PortableName.make("CON" + String(repeating: ".", count: 300), limit: 10) == "CON_")
        #expect(PortableName.make("Talk 1.mp3") == "Talk 1.mp3" && PortableName.make("Talk: 1") != "Talk: 1")
    }

    @Test func aPortableTemplateAppliesToFoldersAndFiles() throws {
        var template = try NamingTemplate("{podcast}/{title}.{ext}")
        template.portable = true
        let rendered = template.render(NamingValues(podcast: "Q&A: Live?", title: "CON", published: nil, guid: nil, season: nil, episode: nil))
        #expect(rendered.folders == ["Q&A_ Live_"] && rendered.stem == "CON_")
        #expect(template.podcastFolder("Q&A: Live?") == "Q&A_ Live_", "the manifest's folder is the episodes' folder")
        template.portable = false
        #expect(template.render(NamingValues(podcast: "Q&A: Live?", title: "CON", published: nil, guid: nil, season: nil, episode: nil)).stem == "CON")
    }

    @Test func podcastsWhosePortableNamesComeOutTheSameGetFoldersOfTheirOwn() {
        // One folder on exFAT: numbered, whether portable names are on now or turned on later.
        let names = PodcastFolders.names([
            .init(id: 1, title: "Show?", feedURL: "https://a.example/feed"),
            .init(id: 2, title: "Show*", feedURL: "https://b.example/feed"),
            .init(id: 3, title: "show_", feedURL: "https://c.example/feed"),
        ])
        #expect(names == [1: "Show?", 2: "Show* (2)", 3: "show_ (3)"])
    }
}
