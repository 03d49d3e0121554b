import Foundation
import MonsoonTestServer
import Testing
@testable import MonsoonEngine

@Suite struct ResumeDecisionTests {
    let state = ResumeState(url: "http://h/a.mp3", etag: "\"v1\"", lastModified: "Sun, 06 Nov 1994 08:49:37 GMT", total: 1000)

    func head(_ status: Int, range: String? = nil, etag: String? = "\"v1\"", lastModified: String? = "Sun, 06 Nov 1994 08:49:37 GMT",
              type: String = "audio/mpeg", length: Int? = nil) -> ResponseHead {
        var head = ResponseHead()
        head.status = status
        head.contentRange = range
        head.etag = etag
        head.lastModified = lastModified
        head.contentType = type
        head.contentLength = length
        return head
    }

    @Test func planResumesOnlyAKnownPartOfTheSameURL() {
        #expect(AttemptPlan.plan(partSize: 400, state: state, url: "http://h/a.mp3") == AttemptPlan(offset: 400, ifRange: "\"v1\""))
        #expect(AttemptPlan.plan(partSize: 400, state: state, url: "http://h/b.mp3").offset == 0)
        #expect(AttemptPlan.plan(partSize: 400, state: nil, url: "http://h/a.mp3").offset == 0)
        #expect(AttemptPlan.plan(partSize: 0, state: state, url: "http://h/a.mp3").offset == 0)
        #expect(AttemptPlan.plan(partSize: 2000, state: state, url: "http://h/a.mp3").offset == 0)
        var weak = state
        weak.etag = "W/\"v1\""
        #expect(AttemptPlan.plan(partSize: 400, state: weak, url: "http://h/a.mp3").ifRange == state.lastModified)
        weak.lastModified = nil
        #expect(AttemptPlan.plan(partSize: 400, state: weak, url: "http://h/a.mp3").offset == 0)
    }

    @Test func a206FromTheRightOffsetAppends() {
        let plan = AttemptPlan(offset: 400, ifRange: "\"v1\"")
        #expect(BodyDecision.decide(head: head(206, range: "bytes 400-999/1000"), plan: plan, state: state, expectedMediaType: nil) == .write(from: 400, total: 1000))
    }

    @Test func a206FromTheWrongOffsetOrAnotherVersionRestarts() {
        let plan = AttemptPlan(offset: 400, ifRange: "\"v1\"")
        guard case .restartFresh = BodyDecision.decide(head: head(206, range: "bytes 0-999/1000"), plan: plan, state: state, expectedMediaType: nil) else {
            Issue.record("wrong offset must restart"); return
        }
        guard case .restartFresh = BodyDecision.decide(head: head(206, range: "bytes 400-999/1000", etag: "\"v2\""), plan: plan, state: state, expectedMediaType: nil) else {
            Issue.record("another ETag must restart"); return
        }
        guard case .restartFresh = BodyDecision.decide(head: head(206, range: "bytes 400-1999/2000", etag: nil), plan: plan, state: state, expectedMediaType: nil) else {
            Issue.record("another length must restart"); return
        }
        guard case .restartFresh = BodyDecision.decide(head: head(206, range: nil), plan: plan, state: state, expectedMediaType: nil) else {
            Issue.record("no Content-Range must restart"); return
        }
    }

    /// A server that ignores If-Range and answers with another version's bytes can hide it by
    /// leaving out the validators: a 206 without a validator the first answer carried restarts.
    @Test func a206ThatDropsAValidatorRestarts() {
        let plan = AttemptPlan(offset: 400, ifRange: "\"v1\"")
        for (etag, date) in [(nil, "Sun, 06 Nov 1994 08:49:37 GMT"), ("\"v1\"", nil), (nil, nil)] as [(String?, String?)] {
            let decision = BodyDecision.decide(head: head(206, range: "bytes 400-999/1000", etag: etag, lastModified: date), plan: plan, state: state, expectedMediaType: nil)
            #expect(decision == .restartFresh("the resource changed on the server"), "ETag \(etag ?? "none"), Last-Modified \(date ?? "none")")
        }
        // What the first answer did not carry, the 206 need not.
        let undated = ResumeState(url: state.url, etag: "\"v1\"", lastModified: nil, total: 1000)
        #expect(BodyDecision.decide(head: head(206, range: "bytes 400-999/1000", lastModified: nil), plan: plan, state: undated, expectedMediaType: nil)
                == .write(from: 400, total: 1000))
    }

    @Test func a200ToARangeRequestStartsOverCleanly() {
        let plan = AttemptPlan(offset: 400, ifRange: "\"v1\"")
        #expect(BodyDecision.decide(head: head(200, length: 1000), plan: plan, state: state, expectedMediaType: nil) == .write(from: 0, total: 1000))
    }

    @Test func errorsAreDiscardedAndWebPagesRefused() {
        let plan = AttemptPlan(offset: 0, ifRange: nil)
        #expect(BodyDecision.decide(head: head(404, type: "text/html"), plan: plan, state: nil, expectedMediaType: "audio/mpeg") == .discard)
        guard case .fail(let error) = BodyDecision.decide(head: head(200, type: "text/html; charset=utf-8"), plan: plan, state: nil, expectedMediaType: "audio") else {
            Issue.record("a web page for audio must fail"); return
        }
        #expect(error.code == .webPageNotMedia)
        #expect(error.message.contains("the server returned a web page, not media"))
        #expect(BodyDecision.decide(head: head(200, type: "text/html"), plan: plan, state: nil, expectedMediaType: nil) == .write(from: 0, total: nil))
    }

    @Test func contentRange() {
        #expect(ContentRange("bytes 0-99/100") == ContentRange("bytes 0-99/100"))
        #expect(ContentRange("bytes 0-99/100")?.first == 0)
        #expect(ContentRange("bytes */100")?.total == 100)
        #expect(ContentRange("bytes */100")?.first == nil)
        #expect(ContentRange("bytes 5-4/100") == nil)
        #expect(ContentRange("bytes 0-100/100") == nil)
        #expect(ContentRange("items 0-1/2") == nil)
        #expect(ContentRange("bytes 10-19/*")?.total == nil)
    }

    @Test func headParsingResetsAtEachStatusLine() {
        var head = ResponseHead()
        func feed(_ line: String) {
            let bytes = Array((line + "\r\n").utf8)
            bytes.withUnsafeBufferPointer { head.consume(line: $0) }
        }
        feed("HTTP/1.1 302 Found")
        feed("Location: /b")
        feed("ETag: \"old\"")
        feed("HTTP/1.1 200 OK")
        feed("content-type: audio/mpeg")
        feed("Content-Length: 42")
        #expect(head.status == 200)
        #expect(head.etag == nil)
        #expect(head.contentLength == 42)
        #expect(head.mediaType == "audio/mpeg")
    }

    @Test func theStatusLineGivesItsCode() {
        func status(_ line: String) -> Int {
            var head = ResponseHead()
            Array((line + "\r\n").utf8).withUnsafeBufferPointer { head.consume(line: $0) }
            return head.status
        }
        #expect(status("HTTP/1.1 206 Partial Content") == 206)
        #expect(status("HTTP/2 404") == 404)
        #expect(status("HTTP/1.0  503  Busy") == 503)
        for line in ["HTTP/1.1", "HTTP/1.1 ", "HTTP/1.1 2x0 OK", "HTTP/1.1 OK", "HTTP/1.1 9999999999 Big"] { #expect(status(line) == 0, "\(line)") }
    }

    @Test func headValuesAreTrimmedAndNamesMatchInAnyCase() {
        var head = ResponseHead()
        head.keepsFields = true
        for line in ["HTTP/1.1 206 Partial Content", "CONTENT-LENGTH: \t 7 ", "eTaG:\"v1\"", "Content-Range: bytes 3-9/10",
                     "Last-Modified:   Wed, 21 Oct 2015 07:28:00 GMT", "Retry-After: 5", "Content-Disposition: attachment; filename=a.mp3",
                     "Content-Typo: x", "X-Empty:", "no colon here"] {
            Array((line + "\r\n").utf8).withUnsafeBufferPointer { head.consume(line: $0) }
        }
        #expect(head.status == 206)
        #expect(head.contentLength == 7)
        #expect(head.etag == "\"v1\"")
        #expect(head.contentRange == "bytes 3-9/10")
        #expect(head.lastModified == "Wed, 21 Oct 2015 07:28:00 GMT")
        #expect(head.retryAfter == "5")
        #expect(head.contentDisposition == "attachment; filename=a.mp3")
        #expect(head.contentType == nil)
        #expect(head.fields.map(\.name) == ["CONTENT-LENGTH", "eTaG", "Content-Range", "Last-Modified", "Retry-After", "Content-Disposition", "Content-Typo", "X-Empty"])
        #expect(head.fields.last?.value == "")
    }
}

@Suite struct FileNamingTests {
    @Test func dispositionThenURLThenDownload() {
        #expect(FileNaming.name(contentDisposition: "attachment; filename=\"show 12.mp3\"", finalURL: "http://h/x.mp3") == "show 12.mp3")
        #expect(FileNaming.name(contentDisposition: "attachment; filename=\"a.mp3\"; filename*=UTF-8''%C3%A9pisode%201.mp3", finalURL: nil) == "épisode 1.mp3")
        // Another charset: its bytes decoded, then read as Latin-1; a broken escape leaves the plain name.
        #expect(FileNaming.name(contentDisposition: "attachment; filename*=iso-8859-1''caf%E9%20n%B0%201.mp3", finalURL: nil) == "café n° 1.mp3")
        #expect(FileNaming.name(contentDisposition: "attachment; filename=\"a.mp3\"; filename*=iso-8859-1''caf%+9.mp3", finalURL: nil) == "a.mp3")
        #expect(FileNaming.name(contentDisposition: "inline", finalURL: "http://h/path/ep%2042.mp3?x=1") == "ep 42.mp3")
        #expect(FileNaming.name(contentDisposition: nil, finalURL: "http://h/") == "download")
        #expect(FileNaming.name(contentDisposition: nil, finalURL: "http://h/a/show.mp3/") == "show.mp3")
        #expect(FileNaming.name(contentDisposition: nil, finalURL: "https://h/a/%C3%A9p%201.mp3") == "ép 1.mp3")
    }

    @Test func theLastComponentOfAPath() {
        for (path, component) in [("/a/b.mp3", "b.mp3"), ("/a/b/", "b"), ("a//b//", "b"), ("x", "x"), ("/é/ü.mp3", "ü.mp3")] {
            #expect(FileNaming.lastComponent(of: path) == component)
        }
        for path in ["", "/", "///"] { #expect(FileNaming.lastComponent(of: path) == nil) }
        // Every "/" cuts, also one a combining mark follows (one character with it).
        #expect(FileNaming.lastComponent(of: "/a/\u{301}b") == "\u{301}b")
        #expect(FileNaming.fileExtension(of: "/feed/ep.MP3") == "mp3")
    }

    @Test func theQuickPathOfSanitizingAgreesWithTheGeneralOne() {
        var generator = SeededGenerator()
        let alphabet: [Character] = ["a", "Z", "0", ".", " ", "/", "\\", "-", "\t", "é", "~", "\u{7F}"]
        for _ in 0..<20_000 {
            let name = String((0..<Int.random(in: 0...10, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
            #expect(FileNaming.sanitize(name) == FileNaming.sanitizeGenerally(name), "\(name.debugDescription), seed \(generator.seed)")
        }
        for length in [249, 250, 251, 300] {
            let name = String(repeating: "x", count: length - 4) + ".mp3"
            #expect(FileNaming.sanitize(name) == FileNaming.sanitizeGenerally(name))
        }
        #expect(FileNaming.isSafeAsItIs("Episode 12 - The Talk.mp3"))
    }

    @Test func sanitizing() {
        #expect(FileNaming.sanitize("../../etc/passwd") == "_._etc_passwd")
        #expect(FileNaming.sanitize("..") == "download")
        #expect(FileNaming.sanitize(".hidden") == "hidden")
        #expect(FileNaming.sanitize("a\u{0}b\u{7}c\nd.mp3") == "abcd.mp3")
        #expect(FileNaming.sanitize("back\\slash") == "back_slash")
        #expect(!FileNaming.sanitize("a/../b").contains("/"))
        let long = String(repeating: "é", count: 300) + ".mp3"
        let cut = FileNaming.sanitize(long)
        #expect(cut.utf8.count <= 250)
        #expect(cut.hasSuffix(".mp3"))
    }
}

@Suite struct SchedulerTests {
    func queue(_ entries: [(String, Int, String)]) -> QueueIndex {
        var index = QueueIndex()
        for (sequence, (id, priority, host)) in entries.enumerated() {
            index.insert(DownloadID(id), key: .init(priority: priority, sequence: sequence), hosts: HostPair(first: host == "a" ? 0 : 1))
        }
        return index
    }

    @Test func priorityThenEnqueueOrder() {
        let index = queue([("a", 0, "h"), ("b", 5, "h"), ("c", 0, "h"), ("d", 5, "h")])
        let scheduler = Scheduler(maxConcurrent: 10, maxPerHost: nil)
        #expect(scheduler.select(from: index, running: 0, runningPerHost: [:], hostsOnHold: [:], now: Date()) == ["b", "d", "a", "c"])
    }

    @Test func globalAndPerHostLimits() {
        let index = queue([("a1", 0, "a"), ("a2", 0, "a"), ("a3", 0, "a"), ("b1", 0, "b")])
        #expect(Scheduler(maxConcurrent: 2, maxPerHost: nil).select(from: index, running: 0, runningPerHost: [:], hostsOnHold: [:], now: Date()) == ["a1", "a2"])
        #expect(Scheduler(maxConcurrent: 10, maxPerHost: 1).select(from: index, running: 1, runningPerHost: [0: 1], hostsOnHold: [:], now: Date()) == ["b1"])
        #expect(Scheduler(maxConcurrent: 3, maxPerHost: nil).select(from: index, running: 3, runningPerHost: [:], hostsOnHold: [:], now: Date()) == [])
    }

    @Test func hostsOnHoldWait() {
        let index = queue([("a1", 0, "a"), ("b1", 0, "b")])
        let now = Date()
        let scheduler = Scheduler(maxConcurrent: 10, maxPerHost: nil)
        #expect(scheduler.select(from: index, running: 0, runningPerHost: [:], hostsOnHold: [0: now.addingTimeInterval(5)], now: now) == ["b1"])
        #expect(scheduler.select(from: index, running: 0, runningPerHost: [:], hostsOnHold: [0: now.addingTimeInterval(-1)], now: now) == ["a1", "b1"])
    }

    /// A download is held, and counted against per-host limits, on its URL's host and on the host
    /// that last answered it (a CDN behind a tracking redirector).
    @Test func holdsAndLimitsApplyToTheHostThatAnsweredToo() {
        var index = QueueIndex()
        index.insert("viaTracker", key: .init(priority: 0, sequence: 0), hosts: HostPair(first: 0, last: 2))
        index.insert("direct", key: .init(priority: 0, sequence: 1), hosts: HostPair(first: 1))
        let now = Date()
        let scheduler = Scheduler(maxConcurrent: 10, maxPerHost: 1)
        #expect(scheduler.select(from: index, running: 0, runningPerHost: [:], hostsOnHold: [2: now.addingTimeInterval(5)], now: now) == ["direct"])
        #expect(scheduler.select(from: index, running: 1, runningPerHost: [2: 1], hostsOnHold: [:], now: now) == ["direct"])
        #expect(scheduler.select(from: index, running: 0, runningPerHost: [:], hostsOnHold: [:], now: now) == ["viaTracker", "direct"])
    }

    @Test func removeKeepsOrder() {
        var index = queue([("a", 0, "h"), ("b", 1, "h"), ("c", 0, "h")])
        index.remove(key: .init(priority: 1, sequence: 1))
        #expect(index.entries.map(\.id) == ["a", "c"])
        index.insert("b", key: .init(priority: -1, sequence: 1), hosts: HostPair(first: 1))
        #expect(index.entries.map(\.id) == ["a", "c", "b"])
    }

    @Test func manyEntriesStayInOrderAcrossChunks() {
        var index = QueueIndex()
        var expected: [QueueIndex.Key] = []
        var generator = SeededGenerator()
        for sequence in 0..<5_000 {
            let key = QueueIndex.Key(priority: Int.random(in: -3...3, using: &generator), sequence: sequence)
            index.insert(DownloadID("\(sequence)"), key: key, hosts: HostPair(first: 0))
            expected.append(key)
        }
        for key in expected.shuffled(using: &generator).prefix(2_000) {
            index.remove(key: key)
            expected.removeAll { $0 == key }
        }
        #expect(index.count == expected.count, "seed \(generator.seed)")
        #expect(index.entries.map(\.key) == expected.sorted(), "seed \(generator.seed)")
    }
}

@Suite struct EventSubscriberTests {
    @Test func progressIsCoalescedAndOrderKept() async {
        let subscriber = EventSubscriber(kinds: .all) { _ in }
        let download = Download(request: DownloadRequest(id: "a", url: URL(string: "http://h/a")!, destination: .file("/tmp/a")),
                                status: .completed, bytes: 10, total: 10, lastError: nil, filePath: "/tmp/a", attempts: 0, retryAt: nil)
        for bytes in 1...1000 { subscriber.send(.progress(id: "a", bytes: bytes, total: 10_000)) }
        subscriber.send(.statusChanged(download))
        subscriber.send(.progress(id: "a", bytes: 5, total: 10))
        subscriber.finish()
        var events: [DownloadEvent] = []
        while let event = await subscriber.next() { events.append(event) }
        #expect(events == [.progress(id: "a", bytes: 1000, total: 10_000), .statusChanged(download), .progress(id: "a", bytes: 5, total: 10)])
    }
}

/// Several iterators of one sequence: each event goes to exactly one, and no stream ends
/// before the events do.
@Suite struct SharedIteratorTests {
    @Test func twoIteratorsShareTheEventsAndEndOnlyAtTheEnd() async throws {
        let hub = EventHub()
        let events = hub.subscribe()
        let total = 20_000
        let seen = Locked<[Int: Int]>([:])   // event number → deliveries
        let endings = Locked(0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    var iterator = events.makeAsyncIterator()
                    while let event = await iterator.next() {
                        if case .removed(let id) = event, let number = Int(id.rawValue) { seen.withLock { $0[number, default: 0] += 1 } }
                    }
                    endings.withLock { $0 += 1 }
                    // A stream that ends must end because the hub finished, not early.
                    #expect(seen.withLock { $0.count } == total, "an iterator ended before the last event")
                }
            }
            group.addTask {
                for start in stride(from: 0, to: total, by: 100) {
                    hub.send((start..<start + 100).map { .removed(DownloadID(String($0))) })
                    await Task.yield()
                }
                // Let the iterators drain, then end.
                while seen.withLock({ $0.count }) < total { try? await Task.sleep(nanoseconds: 1_000_000) }
                hub.finishAll()
            }
        }
        #expect(endings.withLock { $0 } == 2)
        #expect(seen.withLock { $0.values.allSatisfy { $0 == 1 } } && seen.withLock { $0.count } == total, "each event to exactly one iterator")
    }

    @Test func aSubscriptionGetsOnlyTheKindsItAskedForAndNobodyAskingBuildsNone() async {
        let hub = EventHub()
        let download = Download(request: DownloadRequest(id: "a", url: URL(string: "http://h/a")!, destination: .file("/tmp/a")),
                                status: .queued, bytes: 0, total: nil, lastError: nil, filePath: nil, attempts: 0, retryAt: nil)
        var statuses: DownloadEvents? = hub.subscribe([.statusChanged, .removed])
        #expect(!hub.wants(.added) && hub.wants(.statusChanged) && !hub.wants(.progress))
        hub.send([.added(download), .statusChanged(download), .progress(id: "a", bytes: 1, total: nil), .removed("a")])
        hub.finishAll()
        var seen: [DownloadEvent] = []
        if let statuses { for await event in statuses { seen.append(event) } }
        #expect(seen == [.statusChanged(download), .removed("a")])
        statuses = nil

        let second = EventHub()
        do {
            let everything = second.subscribe()
            _ = everything
            #expect(second.wants(.added))
        }
        #expect(!second.wants(.added), "the only subscription that wanted it is gone")
    }

    @Test func cancellingOneIteratorLeavesTheOtherListening() async throws {
        let hub = EventHub()
        let events = hub.subscribe()
        let waiting = Locked(false)
        let cancelled = Task {
            var iterator = events.makeAsyncIterator()
            waiting.withLock { $0 = true }
            return await iterator.next()
        }
        while !waiting.withLock({ $0 }) { await Task.yield() }
        try await eventually("the iterator waiting for an event") { events.subscription.subscriber.waitingIterators == 1 }
        cancelled.cancel()
        #expect(await cancelled.value == nil, "a cancelled task's next() ends")
        hub.send([.removed("a"), .removed("b")])
        var other = events.makeAsyncIterator()
        #expect(await other.next() == .removed("a"), "the other iterator goes on")
        #expect(await other.next() == .removed("b"))
        #expect(hub.subscriberCount == 1, "the subscription stays while its sequence is held")
        hub.finishAll()
        #expect(await other.next() == nil)
    }
}
