import Foundation
import Testing
@testable import MonsoonPodcasts

/// File names from templates: variables, sanitizing, collisions.
@Suite struct NamingTemplateTests {
    let date = Date(timeIntervalSince1970: 1_700_000_000)   // 2023-11-14 22:13:20 UTC

    func values(podcast: String = "Show", title: String, published: Date? = nil, guid: String? = "g") -> NamingValues {
        NamingValues(podcast: podcast, title: title, published: published, guid: guid, season: 2, episode: 7)
    }

    @Test func theDefaultTemplate() throws {
        let rendered = NamingTemplate.standard.render(values(title: "Hello, World", published: date))
        #expect(rendered.folders == ["Show"] && rendered.stem == "2023-11-14 - Hello, World")
        #expect(NamingTemplate.standard.render(values(title: "No date")).stem == "undated - No date")
    }

    @Test func everyVariable() throws {
        let template = try NamingTemplate("{podcast}/{year}/{month}-{day} S{season}E{episode} {title} [{guid}] {date}.{ext}")
        let rendered = template.render(values(title: "T", published: date, guid: "abc"))
        #expect(rendered.folders == ["Show", "2023"])
        #expect(rendered.stem == "11-14 S2E7 T [abc] 2023-11-14")
    }

    @Test func badTemplatesAreRefusedWithAReason() {
        func refusal(_ text: String) -> NamingError? {
            do { _ = try NamingTemplate(text); return nil } catch { return error }
        }
        let cases: [(template: String, code: NamingError.Code, says: String)] = [
            ("{podcast}/{nope}.{ext}", .unknownVariable, "unknown variable {nope}"),
            ("{title}.mp3", .missingExtension, "must end with '.{ext}'"),
            ("", .missingExtension, "must end with '.{ext}'"),
            ("/abs/{title}.{ext}", .absolutePath, "relative to the download root"),
            ("{podcast}/../{title}.{ext}", .dotFolder, "'..'"),
            ("{podcast}//{title}.{ext}", .emptyFolder, "empty folder name"),
            (".{ext}", .emptyFolder, "empty folder name"),
            ("{title.{ext}", .unbalancedBrace, "without its '}'"),
            ("{title}}.{ext}", .unbalancedBrace, "without its '{'"),
            ("{ext}/{title}.{ext}", .misplacedExtension, "{ext} may only end"),
        ]
        for (template, code, says) in cases {
            let error = refusal(template)
            #expect(error?.code == code, "\(template)")
            #expect(error?.message.contains(says) == true, "\(error?.message ?? "accepted")")
        }
    }

    @Test func hostileTitlesStayInsideTheRoot() throws {
        let hostile = ["../../etc/passwd", "..", "...", ".hidden", "a/../../b", "/etc/shadow", "C:\\Windows\\x",
                       "tab\there\nnew\u{0}line\u{7F}", String(repeating: "é", count: 1_000), "🎙️ Épisode 😀", "   ", "",
                       "a..\u{301}b", "..\u{FE0F}"]   // a dot whose character carries a mark: two dots in the bytes, not in the characters
        for title in hostile {
            for podcast in hostile {
                let rendered = NamingTemplate.standard.render(values(podcast: podcast, title: title))
                for component in rendered.folders + [rendered.stem] {
                    #expect(!component.isEmpty && component != "." && component != "..", "\(title) / \(podcast)")
                    #expect(!component.contains("/") && component.utf8.first != UInt8(ascii: "."), "\(component)")
                    #expect(!component.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F })
                    #expect(component.utf8.count <= 255)
                }
                #expect(rendered.stem.utf8.count <= NamingTemplate.stemLimit)
                let path = (["/root"] + rendered.folders + [rendered.stem + ".mp3.part"]).joined(separator: "/")
                #expect((path as NSString).standardizingPath.utf8.starts(with: "/root/".utf8), "\(path)")
            }
        }
        #expect(NamingTemplate.standard.render(values(podcast: "..", title: "x")).folders == ["untitled"])
        #expect(NamingTemplate.standard.render(values(title: "🎙️ Épisode 😀")).stem == "undated - 🎙️ Épisode 😀")
    }

    @Test func namesAreNFC() throws {
        let decomposed = "Cafe\u{301}"   // e + combining acute
        let stem = NamingTemplate.standard.render(values(title: decomposed)).stem
        #expect(Array(stem.utf8) == Array("undated - Caf\u{E9}".utf8))
    }

    @Test func collisionsAreNumberedByDateThenGuid() {
        let early = Date(timeIntervalSince1970: 1_000)
        let late = Date(timeIntervalSince1970: 2_000)
        let candidates = [
            NameCollisions.Candidate(id: 3, folders: ["S"], stem: "Trailer", published: late, guid: "a"),
            NameCollisions.Candidate(id: 1, folders: ["S"], stem: "Trailer", published: early, guid: "z"),
            NameCollisions.Candidate(id: 2, folders: ["S"], stem: "Trailer", published: late, guid: "b"),
            NameCollisions.Candidate(id: 4, folders: ["S"], stem: "Trailer (2)", published: nil, guid: nil),
            NameCollisions.Candidate(id: 5, folders: ["T"], stem: "Trailer", published: nil, guid: nil),
        ]
        let names = NameCollisions.resolve(candidates)
        #expect(names == [1: "Trailer", 3: "Trailer (3)", 2: "Trailer (4)", 4: "Trailer (2)", 5: "Trailer"])
        #expect(NameCollisions.resolve(candidates.reversed()) == names, "the same on every run, whatever the order read")
    }

    /// The byte-wise shortcut for names already clean gives what the whole cleaning gives, for every
    /// string of up to three of the pieces that cleaning changes or must leave alone (dots and spaces
    /// carrying combining marks, tabs, non-ASCII letters, a zero-width space), at every limit.
    @Test func aNameAlreadyCleanIsKeptAsTheWholeCleaningWouldKeepIt() {
        let pieces = ["a", " ", ".", "\t", "é", "e\u{301}", ".\u{301}", " \u{301}", "\u{200B}", "..", "  ", "b c"]
        var names = [""]
        for _ in 0..<3 { names += names.flatMap { name in pieces.map { name + $0 } }.filter { !names.contains($0) } }
        for name in names {
            for limit in [1, 3, 6, 255] {
                #expect(NamingTemplate.nonEmptyComponent(name, limit: limit) == NamingTemplate.cleanedComponent(name, limit: limit), "\(name.debugDescription) at \(limit)")
            }
        }
        for byte in UInt8(0x20)..<0x7F where byte != UInt8(ascii: "/") && byte != UInt8(ascii: "\\") {
            let name = "a" + String(UnicodeScalar(byte)) + "b"
            #expect(NamingTemplate.clean(name) == name)
        }
        #expect(NamingTemplate.clean("a/b\\c\u{7}d\u{A0}e\u{200B}f") == "a-b-c d ef")
    }
}

/// Each podcast's own folder, and names an archive keeps for itself.
@Suite struct PodcastFolderTests {
    @Test func theFirstSubscribedKeepsThePlainNameTheOthersAreNumbered() {
        let names = PodcastFolders.names([
            .init(id: 3, title: "Show/Tell", feedURL: "https://c.example/feed"),
            .init(id: 1, title: "Show-Tell", feedURL: "https://a.example/feed"),
            .init(id: 2, title: "show-tell", feedURL: "https://b.example/feed"),
            .init(id: 4, title: "Show-Tell (2)", feedURL: "https://d.example/feed"),
            .init(id: 5, title: ".", feedURL: "https://e.example/rss"),
            .init(id: 6, title: "..", feedURL: "https://user:secret@f.example/rss?token=x"),
            .init(id: 7, title: "Other \u{202E}kcatta", feedURL: "https://g.example/rss"),
        ])
        #expect(names == [1: "Show-Tell", 2: "show-tell (3)", 3: "Show-Tell (4)", 4: "Show-Tell (2)", 5: "e.example-rss", 6: "f.example-rss",
                          7: "Other kcatta"])
    }

    @Test func aGivenNameIsKeptAndNewOnesAreNumberedAroundIt() {
        // #1 renamed itself to #7's title: each keeps the folder it was given; a new one is numbered around both.
        let names = PodcastFolders.names([
            .init(id: 1, title: "Tech Talk", feedURL: "https://a.example/feed", folderName: "Old Name"),
            .init(id: 7, title: "Tech Talk", feedURL: "https://b.example/feed", folderName: "Tech Talk"),
            .init(id: 9, title: "tech talk", feedURL: "https://c.example/feed"),
        ])
        #expect(names == [1: "Old Name", 7: "Tech Talk", 9: "tech talk (2)"])
    }

    @Test func anEpisodeNamedLikeTheArchivesOwnFilesIsNumbered() {
        let candidates = ["feed", "Monsoon-Manifest", "cover", "Feed Back"].enumerated().map { index, stem in
            NameCollisions.Candidate(id: index, folders: ["Show"], stem: stem, published: nil, guid: nil)
        }
        #expect(NameCollisions.resolve(candidates) == [0: "feed (2)", 1: "Monsoon-Manifest (2)", 2: "cover (2)", 3: "Feed Back"])
    }
}
