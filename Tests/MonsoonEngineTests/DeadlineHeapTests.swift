import Foundation
import Testing
@testable import MonsoonEngine

/// The loop's timers: the earliest first, moved and cancelled by key, checked against a plain
/// sorted list over many pseudo-random operations (fixed seeds).
@Suite struct DeadlineHeapTests {
    private let start = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func theEarliestComesFirstAndEqualTimesInTheOrderTheyWereSet() {
        var heap = DeadlineHeap<String>()
        heap.schedule("c", at: start + 3)
        heap.schedule("a", at: start + 1)
        heap.schedule("b", at: start + 1)
        #expect(heap.next?.key == "a")
        #expect(heap.popDue(now: start + 0.5).isEmpty)
        #expect(heap.popDue(now: start + 1) == ["a", "b"])
        #expect(heap.popDue(now: start + 10) == ["c"])
        #expect(heap.isEmpty && heap.next == nil)
    }

    @Test func aDeadlineMovesAndCancelsByItsKey() {
        var heap = DeadlineHeap<Int>()
        heap.schedule(1, at: start + 5)
        heap.schedule(2, at: start + 6)
        heap.schedule(1, at: start + 7)   // later: 2 comes first now
        #expect(heap.count == 2)
        #expect(heap.next?.key == 2)
        #expect(heap.deadline(of: 1) == start + 7)
        heap.schedule(1, at: start + 1)   // earlier again
        #expect(heap.next?.key == 1)
        #expect(heap.cancel(1) == start + 1)
        #expect(heap.cancel(1) == nil)
        #expect(heap.deadline(of: 1) == nil)
        #expect(heap.popDue(now: start + 100) == [2])
    }

    @Test(arguments: [1, 42, 2_718_281_828] as [UInt64])
    func manyRandomOperationsAgreeWithASortedList(firstSeed: UInt64) {
        var seed = firstSeed
        func random(_ range: Range<Int>) -> Int {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return range.lowerBound + Int((seed >> 33) % UInt64(range.count))
        }
        var heap = DeadlineHeap<Int>()
        var model: [Int: (at: Date, order: Int)] = [:]
        var order = 0
        var now = start
        for _ in 0..<5_000 {
            let key = random(0..<200)
            switch random(0..<4) {
            case 0, 1:
                let at = start + Double(random(0..<1_000))
                order += 1
                heap.schedule(key, at: at)
                model[key] = (at, order)
            case 2:
                #expect(heap.cancel(key) == model.removeValue(forKey: key)?.at, "seed \(firstSeed)")
            default:
                now += Double(random(0..<20))
                let expected = model.filter { $0.value.at <= now }
                    .sorted { ($0.value.at, $0.value.order) < ($1.value.at, $1.value.order) }.map(\.key)
                #expect(heap.popDue(now: now) == expected, "seed \(firstSeed)")
                for key in expected { model[key] = nil }
            }
            #expect(heap.count == model.count, "seed \(firstSeed)")
            let earliest = model.min { ($0.value.at, $0.value.order) < ($1.value.at, $1.value.order) }
            #expect(heap.next?.key == earliest?.key, "seed \(firstSeed)")
        }
    }
}
