import Foundation
import Testing
@testable import MonsoonPodcasts

/// Which episodes an archive run takes: `--limit` counts downloads, `--latest` a window of the feed.
@Suite struct ArchiveSelectionTests {
    /// Episodes 1...count, one a day (1 the oldest); `archived` were downloaded once, `gone` of them have no file now.
    static func candidates(_ count: Int, archived: Set<Int> = [], gone: Set<Int> = []) -> [ArchiveSelection.Candidate] {
        (1...count).map { id in
            ArchiveSelection.Candidate(id: id, title: id % 2 == 0 ? "Interview \(id)" : "Talk \(id)", published: Date(timeIntervalSince1970: Double(id) * 86_400),
                                       feedOrder: count - id, hasEnclosure: true, archived: archived.contains(id), fileMissing: gone.contains(id))
        }
    }

    @Test func latestIsAWindowOfTheFeedWhateverIsArchived() throws {
        let first = try ArchiveSelection(Self.candidates(6), latest: 3, newestFirst: true)
        #expect(first.chosen == [6, 5, 4] && first.alreadyArchived.isEmpty && first.filteredOut == 3)
        // The same three archived: nothing more, however often it runs.
        let again = try ArchiveSelection(Self.candidates(6, archived: [4, 5, 6]), latest: 3, newestFirst: true)
        #expect(again.chosen.isEmpty && again.alreadyArchived == [6, 5, 4])
        // A new episode: only it, the oldest of the three leaves the window.
        let next = try ArchiveSelection(Self.candidates(7, archived: [4, 5, 6]), latest: 3)
        #expect(next.chosen == [7] && next.alreadyArchived == [5, 6])
        // After the other filters: the newest three interviews.
        let interviews = try ArchiveSelection(Self.candidates(8), match: "interview", latest: 3)
        #expect(interviews.chosen == [4, 6, 8])
    }

    @Test func limitCountsDownloadsNotEpisodes() throws {
        let first = try ArchiveSelection(Self.candidates(6), limit: 3, newestFirst: true)
        #expect(first.chosen == [6, 5, 4])
        // The next run takes the next three: --limit caps one run's downloads.
        let second = try ArchiveSelection(Self.candidates(6, archived: [4, 5, 6]), limit: 3, newestFirst: true)
        #expect(second.chosen == [3, 2, 1])
        // Both: the window, then the cap.
        let both = try ArchiveSelection(Self.candidates(6), limit: 1, latest: 3)
        #expect(both.chosen == [4] && both.filteredOut == 5)
        #expect(both.leftOut == [.latest: 3, .limit: 2])
    }

    @Test func whatIsLeftOutIsCountedByWhy() throws {
        var candidates = Self.candidates(8)
        candidates[0].hasEnclosure = false
        candidates[7].published = nil
        let selection = try ArchiveSelection(candidates, since: Date(timeIntervalSince1970: 2 * 86_400), exclude: "talk 3", limit: 2, latest: 4)
        // 1 has no media file, 8 no date; 3 is excluded; of 2, 4, 5, 6, 7 the window keeps the newest four, the limit two of them.
        #expect(selection.chosen == [4, 5])
        #expect(selection.leftOut == [.noMediaFile: 1, .dates: 1, .pattern: 1, .latest: 1, .limit: 2] && selection.filteredOut == 6)
    }

    @Test func archivedEpisodesWhoseFileIsGoneAreToldApart() throws {
        let selection = try ArchiveSelection(Self.candidates(4, archived: [1, 2, 3], gone: [2]))
        #expect(selection.chosen == [4] && selection.alreadyArchived == [1, 2, 3] && selection.missingFromDisk == [2])
        let refetch = try ArchiveSelection(Self.candidates(4, archived: [1, 2, 3], gone: [2]), refetchMissing: true)
        #expect(refetch.chosen == [2, 4] && refetch.missingFromDisk.isEmpty)
        // Deleted on purpose: not missing, though --refetch-missing would fetch it too.
        var candidates = Self.candidates(4, archived: [1, 2, 3], gone: [1, 2])
        candidates[0].deleted = true
        #expect(try ArchiveSelection(candidates).missingFromDisk == [2])
    }

    @Test func aPatternThatIsNoRegularExpressionIsRefusedByItsCode() {
        let match = #expect(throws: ArchiveSelectionError.self) { _ = try ArchiveSelection(Self.candidates(2), match: "(talk") }
        #expect(match?.code == .invalidPattern)
        #expect(match?.message == "'(talk' given to --match is not a regular expression it takes: it has a '(' without its ')'; see 'monsoon help archive' for the syntax")
        let exclude = #expect(throws: ArchiveSelectionError.self) { _ = try ArchiveSelection(Self.candidates(2), exclude: "[a") }
        #expect(exclude == ArchiveSelectionError(.invalidPattern, "'[a' given to --exclude is not a regular expression it takes: it has a '[' without its ']'; "
                                                 + "see 'monsoon help archive' for the syntax"))
    }
}
