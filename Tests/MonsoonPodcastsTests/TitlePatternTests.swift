import Foundation
import Testing
@testable import MonsoonPodcasts

/// `--match` and `--exclude`: a regular expression matched in time proportional to the title,
/// whatever the pattern; on the syntax it takes, the same answers as NSRegularExpression's.
@Suite struct TitlePatternTests {
    static let titles = [
        "Interview: Ada Lovelace", "Episode 12 – The Return", "episode 7", "BONUS: live Q&A", "Café Society (Part 2)", "",
        "Ümlaut Über alles", "Talk 1: a.b.c", "x-y_z 42!", "Tabs\tand spaces", "[Trailer] Coming soon", "ends with colon:",
    ]

    static let patterns = [
        "interview", "^episode \\d+$", "\\bq&a\\b", "part [0-9]+", "(bonus|trailer)", "^\\[trailer\\]", "[^a-z ]", "\\w+\\s\\w+",
        "a.b", "a\\.b", "colon:$", "^$", "e{2,}", "(ab)*c", "x-?y", "\\d{2}", "über", "café", "\\s", "(?:talk|episode) \\d",
        "[a-c]{3}", "^.{5}", "re(turn)?$", "\\Bnt", "s$|^B", "[\\d_]+", "\\W", "([a-z]+ )+society",
    ]

    @Test func answersAsNSRegularExpressionDoes() throws {
        for pattern in Self.patterns {
            let ours = try TitlePattern(pattern)
            let reference = try NSRegularExpression(pattern: pattern, options: [.caseInsensitive])
            for title in Self.titles {
                let expected = reference.firstMatch(in: title, range: NSRange(title.startIndex..., in: title)) != nil
                #expect(ours.matches(title) == expected, "\(pattern) on \(title.debugDescription)")
            }
        }
    }

    /// Titles keep a publisher's no-break and thin spaces: a pattern's space matches them.
    @Test func aSpaceMatchesANoBreakSpace() throws {
        #expect(try TitlePattern("episode 5").matches("Episode\u{A0}5"))
        #expect(try TitlePattern("part [0-9]").matches("Part\u{2009}2"))
        #expect(try !TitlePattern("episode 5").matches("Episode\u{A0}6"))
    }

    /// Patterns that take a backtracking engine minutes or hours on a title that almost matches.
    @Test func catastrophicPatternsAreLinear() throws {
        let words = "Interview: " + Array(repeating: "word", count: 2_000).joined(separator: " ") + " !"
        #expect(try !TitlePattern("(\\w+\\s?)+:$").matches(words))
        #expect(try !TitlePattern("(.*a){20}").matches(String(repeating: "a", count: 19) + String(repeating: "b", count: 16)))
        #expect(try TitlePattern("(.*a){20}").matches(String(repeating: "a", count: 35)))
        #expect(try !TitlePattern("(a|aa)+$").matches(String(repeating: "a", count: 4_000) + "!"))
        #expect(try !TitlePattern("(a*)*b").matches(String(repeating: "a", count: 4_000)))
    }

    @Test func whatItDoesNotTakeIsSaid() throws {
        for (pattern, reason) in [("(a", "it has a '(' without its ')'"), ("a)", "it has a ')' without its '('"), ("[a-", "it has a '[' without its ']'"),
                                  ("*a", "it has '*' with nothing before it to repeat"), ("(a)\\1", "it uses a backreference (\\1), which is not taken"),
                                  ("a(?=b)", "it uses '(?', and only '(?:' is taken: no lookaround, no flags"), ("\\q", "it uses \\q, an escape that is not known"),
                                  ("a{3,1}", "it has a count {3,1} whose maximum is below its minimum"), ("a{5000}", "it repeats something more than 1000 times"),
                                  ("(a{1000}){1000}", "it asks for too much repetition (more than 20000 steps once written out)"),
                                  ("[z-a]", "it has a range [z-a] that goes backwards"), ("x\\", "it ends with a '\\'")] {
            #expect(throws: TitlePattern.Refusal(reason: reason), "\(pattern)") { try TitlePattern(pattern) }
        }
        // A brace that starts no count is a brace.
        #expect(try TitlePattern("{a}").matches("x{a}y"))
        #expect(try TitlePattern("a{").matches("a{"))
    }
}
