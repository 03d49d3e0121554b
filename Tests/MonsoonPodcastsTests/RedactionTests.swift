import Foundation
import Testing
@testable import MonsoonPodcasts

/// Which query parameters count as secrets, one by one.
@Suite struct RedactionTests {
    static func redacted(_ name: String) -> Bool {
        Redaction.redact("https://h.example/feed.xml?\(name)=v4lue&page=2") == "https://h.example/feed.xml?\(name)=***&page=2"
    }

    @Test(arguments: ["jwt", "id_jwt", "JWT", "tok", "x-tok", "tok_id", "accessTok", "sig", "signature", "X-Amz-Signature", "key",
                      "api_key", "apiKey", "token", "auth", "password", "session"])
    func aSecretParameterIsRedacted(_ name: String) {
        #expect(Self.redacted(name), "\(name)")
    }

    /// `tok` only as a word: a name that merely contains it is not a secret.
    @Test(arguments: ["stock", "tiktok", "tokyo", "toks", "page", "utm_source", "episode", "format"])
    func anOrdinaryParameterIsKept(_ name: String) {
        #expect(!Self.redacted(name), "\(name)")
        #expect(Redaction.redact("https://h.example/feed.xml?\(name)=v4lue") == "https://h.example/feed.xml?\(name)=v4lue")
    }

    @Test func wordsOfANameSplitAtPunctuationAndCapitals() {
        #expect(Redaction.words(of: "accessTok") == ["access", "tok"])
        #expect(Redaction.words(of: "x-tok_ID.2") == ["x", "tok", "id", "2"])
        #expect(Redaction.words(of: "TOK") == ["tok"])
        #expect(Redaction.words(of: "stock") == ["stock"])
    }
}
