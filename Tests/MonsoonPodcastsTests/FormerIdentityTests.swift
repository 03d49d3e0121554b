import Foundation
import MonsoonEngine
import MonsoonStore
import MonsoonTestServer
import Testing
@testable import MonsoonPodcasts

/// A library stored by the parser before issue 50 keeps its episodes when the parser's identities change: no episode
/// comes back as new (and is queued and downloaded again), and each keeps its id and the user's state.
@Suite struct FormerIdentityTests {
    private func rss1(about: Bool) -> String {
        var text = """
            <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/">
            <channel rdf:about="https://example.org/"><title>Show</title></channel>

            """
        for number in 1...2 {
            text += "<item\(about ? " rdf:about=\"https://example.org/\(number)\"" : "")><title>Episode \(number)</title>"
                + "<link>https://example.org/\(number).html</link>"
                + (number == 1 ? "<enclosure url=\"https://cdn.example.org/\(number).mp3\" type=\"audio/mpeg\"/>" : "")
                + "</item>\n"
        }
        return text + "</rdf:RDF>\n"
    }

    /// Marks every episode downloaded, played part-way and queued, as a user's library would be.
    private func use(_ fixture: LibraryFixture, _ podcast: Int) throws -> [Int: String] {
        var files: [Int: String] = [:]
        for episode in try fixture.library.episodes(of: podcast) {
            files[episode.id] = "\(episode.id).mp3"
            try fixture.database.run("""
                UPDATE episodes SET download_state = 'downloaded', file_name = ?2, position = 30, queue_position = ?1 WHERE id = ?1
                """, episode.id, "\(episode.id).mp3")
        }
        return files
    }

    private func expectKept(_ fixture: LibraryFixture, _ podcast: Int, _ files: [Int: String]) throws {
        let episodes = try fixture.library.episodes(of: podcast)
        #expect(Dictionary(uniqueKeysWithValues: episodes.map { ($0.id, $0.fileName ?? "") }) == files)
        #expect(episodes.allSatisfy { $0.downloadState == .downloaded && $0.position == 30 && $0.queuePosition == $0.id })
    }

    @Test func rss1ItemsStoredUnderTheirEnclosureOrLinkAreFoundUnderRdfAbout() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let fixture = try LibraryFixture()
        server.setRoute("/feed", feedRoute(rss1(about: false)))
        guard case .subscribed(let podcast, _) = try await fixture.library.subscribe(to: server.url("/feed")) else {
            Issue.record("expected a new subscription"); return
        }
        #expect(try fixture.library.episodes(of: podcast.id).map(\.guid) == [nil, nil])
        let files = try use(fixture, podcast.id)

        server.setRoute("/feed", feedRoute(rss1(about: true)))
        let summary = try await fixture.library.refresh(podcast.id)
        #expect(summary.added == 0)
        #expect(Set(try fixture.library.episodes(of: podcast.id).compactMap(\.guid)) == ["https://example.org/1", "https://example.org/2"])
        try expectKept(fixture, podcast.id, files)
        // Re-keyed: the next refresh finds them under their own identities.
        let next = try await fixture.library.refresh(podcast.id)
        #expect(next.added == 0 && next.updated == 0)
        try expectKept(fixture, podcast.id, files)
        await fixture.manager.shutdown()
    }

    /// The parser before issue 50 took the first audio `media:content` before a later `<enclosure>`; the row it stored is
    /// made here as it made it.
    @Test func anItemWithoutGuidWhoseChosenEnclosureChangedIsTheSameEpisode() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let fixture = try LibraryFixture()
        let item = "<item><title>One</title><media:content url=\"https://cdn.example.org/media.mp3\" type=\"audio/mpeg\"/>"
            + "<enclosure url=\"https://cdn.example.org/enclosure.mp3\" type=\"audio/mpeg\"/></item>"
        server.setRoute("/feed", feedRoute(rss(items: [], extraChannel: item.replacingOccurrences(of: "<item>", with: "<item xmlns:media=\"http://search.yahoo.com/mrss/\">"))))
        guard case .subscribed(let podcast, _) = try await fixture.library.subscribe(to: server.url("/feed")) else {
            Issue.record("expected a new subscription"); return
        }
        let media = "https://cdn.example.org/media.mp3"
        try fixture.database.run("UPDATE episodes SET identity = ?1, enclosure_url = ?1 WHERE podcast_id = ?2", media, podcast.id)
        let files = try use(fixture, podcast.id)

        let summary = try await fixture.library.refresh(podcast.id)
        #expect(summary.added == 0 && summary.updated == 1)
        let episodes = try fixture.library.episodes(of: podcast.id)
        #expect(episodes.map { $0.enclosureURL?.absoluteString } == ["https://cdn.example.org/enclosure.mp3"])
        try expectKept(fixture, podcast.id, files)
        let next = try await fixture.library.refresh(podcast.id)
        #expect(next.added == 0 && next.updated == 0)
        await fixture.manager.shutdown()
    }
}
