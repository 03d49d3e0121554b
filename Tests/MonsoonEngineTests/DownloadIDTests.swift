import Testing
@testable import MonsoonEngine

/// The hash tables' view of an id (`DownloadID._rawHashValue`): the engine looks ids up about a
/// hundred times a download, so they skip `Hasher`; the tables must work as well as with it.
@Suite struct DownloadIDTests {
    private let ids = (1...10_000).map { DownloadID("d\($0)") }

    @Test func equalIDsHashEqualUnderEverySeed() {
        for seed in [0, 1, -1, 0x5bd1_e995, Int.max] {
            // Built apart: two strings with the same text, not one string shared.
            let first = DownloadID(String("episode-" + "42"))
            let second = DownloadID(String("episode-4" + "2"))
            #expect(first == second)
            #expect(first._rawHashValue(seed: seed) == second._rawHashValue(seed: seed))
        }
    }

    @Test func setsAndDictionariesFindEveryID() {
        let set = Set(ids)
        let table = Dictionary(uniqueKeysWithValues: ids.enumerated().map { ($1, $0) })
        #expect(set.count == ids.count && table.count == ids.count)
        for (index, id) in ids.enumerated() {
            #expect(set.contains(DownloadID(id.rawValue)))
            #expect(table[DownloadID(id.rawValue)] == index)
        }
        #expect(!set.contains("d0") && table["d10001"] == nil)
    }

    /// Tables index buckets by the low bits: ids that differ in one character spread there as
    /// random values would (10,000 into 16,384 buckets: more than 10 in one about once in a
    /// million runs), under one seed and under another, which orders them differently.
    @Test func nearbyIDsSpreadOverTheLowBits() {
        for seed in [0, 0x2545_f491_4f6c_dd1d] {
            var buckets: [Int: Int] = [:]
            for id in ids { buckets[id._rawHashValue(seed: seed) & 0x3fff, default: 0] += 1 }
            #expect(buckets.values.max()! <= 10)
            #expect(buckets.count > 7_000)
        }
        let order = { (seed: Int) in ids.prefix(100).map { $0._rawHashValue(seed: seed) & 0x3fff } }
        #expect(order(1) != order(2))
    }
}
