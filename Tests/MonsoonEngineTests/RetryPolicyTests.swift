import Foundation
import Testing
@testable import MonsoonEngine

@Suite struct RetryPolicyTests {
    let policy = RetryPolicy(maxRetries: 3, baseDelay: 1, maxDelay: 60, jitter: 0)
    let networkError = DownloadError(.network, "connection refused")

    func failure(transient: Bool = true, progress: Bool = false, retryAfter: Double? = nil) -> RetryPolicy.Failure {
        RetryPolicy.Failure(error: networkError, isTransient: transient, retryAfter: retryAfter, madeProgress: progress)
    }

    @Test func backoffDoublesFromTheBaseAndIsCapped() {
        #expect(policy.backoff(level: 1, random: 0.5) == 1)
        #expect(policy.backoff(level: 2, random: 0.5) == 2)
        #expect(policy.backoff(level: 3, random: 0.5) == 4)
        #expect(policy.backoff(level: 20, random: 0.5) == 60)
    }

    @Test func jitterStaysWithinItsBand() {
        let jittery = RetryPolicy(maxRetries: 3, baseDelay: 10, maxDelay: 600, jitter: 0.25)
        #expect(jittery.backoff(level: 1, random: 0) == 7.5)
        #expect(jittery.backoff(level: 1, random: 0.999_999) > 12.49)
    }

    @Test func retriesNMeansNRetriesAfterTheFirstAttempt() {
        var counters = RetryPolicy.Counters()
        var retries = 0
        while case .retry(_, let next) = policy.decide(failure(), counters: counters, random: 0.5) {
            counters = next
            retries += 1
        }
        #expect(retries == 3)
        guard case .fail(let error, _) = policy.decide(failure(), counters: counters, random: 0.5) else { Issue.record("expected a failure"); return }
        #expect(error.message.contains("gave up after 3 retries"))
    }

    @Test func progressDoesNotCountAndResetsTheBackoff() {
        var counters = RetryPolicy.Counters(attempts: 2, backoffLevel: 2)
        for _ in 0..<20 {
            guard case .retry(let delay, let next) = policy.decide(failure(progress: true), counters: counters, random: 0.5) else {
                Issue.record("an attempt that made progress must be retried")
                return
            }
            #expect(delay == 1)
            counters = next
        }
        #expect(counters.attempts == 2)
    }

    /// A refusal from a host that answered nothing in this run: two retries at the normal backoff, then the reason
    /// with the retries said; one that answered before (a server restarting) keeps the whole policy.
    @Test func aRefusalFromASilentHostIsRetriedTwice() {
        let policy = RetryPolicy(maxRetries: 5, baseDelay: 1, maxDelay: 60, jitter: 0)
        var refusal = RetryPolicy.Failure(error: networkError, isTransient: true, retryAfter: nil, madeProgress: false, isConnectionFailure: true, isRefusal: true)
        var counters = RetryPolicy.Counters()
        var delays: [Double] = []
        while case .retry(let delay, let next) = policy.decide(refusal, counters: counters, random: 0.5) {
            (counters, delays) = (next, delays + [delay])
        }
        #expect(delays == [1, 2])
        guard case .fail(let error, _) = policy.decide(refusal, counters: counters, random: 0.5) else { Issue.record("expected a failure"); return }
        #expect(error.message == "connection refused (retried twice: nothing answers there); check the address and that the server is running")
        refusal.hostAnswered = true
        #expect(policy.decide(refusal, counters: counters, random: 0.5) == .retry(after: 4, counters: .init(attempts: 3, backoffLevel: 3, refusals: 2)))
        let once = RetryPolicy(maxRetries: 1, baseDelay: 1, maxDelay: 60, jitter: 0)
        refusal.hostAnswered = false
        guard case .fail(let fewer, _) = once.decide(refusal, counters: .init(attempts: 1, backoffLevel: 1, refusals: 1), random: 0.5) else { Issue.record("expected a failure"); return }
        #expect(fewer.message.hasSuffix("(retried once: nothing answers there); check the address and that the server is running"))
        // Earlier failures of another kind (timeouts, or a run before this one) are not refusals.
        #expect(policy.decide(refusal, counters: .init(attempts: 3, backoffLevel: 3), random: 0.5)
                == .retry(after: 8, counters: .init(attempts: 4, backoffLevel: 4, refusals: 1)))
    }

    @Test func permanentFailuresFailAtOnce() {
        guard case .fail = policy.decide(failure(transient: false), counters: .init(), random: 0.5) else {
            Issue.record("expected a failure")
            return
        }
    }

    @Test func retryAfterIsTheWaitAndTooLongFails() {
        #expect(policy.decide(failure(retryAfter: 7), counters: .init(), random: 0.5) == .retry(after: 7, counters: .init(attempts: 1, backoffLevel: 1)))
        guard case .fail(let error, _) = policy.decide(failure(retryAfter: 3600), counters: .init(), random: 0.5) else {
            Issue.record("a Retry-After beyond the cap must fail")
            return
        }
        #expect(error.code == .retryAfterTooLong)
        #expect(error.message.contains("retry later"))
    }
}

@Suite struct FailureClassifierTests {
    @Test(arguments: [408, 429, 500, 502, 503, 504])
    func transientStatuses(_ status: Int) {
        #expect(FailureClassifier.httpFailure(status: status, retryAfter: nil, now: Date()).isTransient)
    }

    @Test(arguments: [400, 401, 403, 404, 410, 416, 451])
    func permanentStatuses(_ status: Int) {
        let failure = FailureClassifier.httpFailure(status: status, retryAfter: nil, now: Date())
        #expect(!failure.isTransient)
        #expect(failure.error.httpStatus == status)
        #expect(failure.error.message.contains("\(status)"))
    }

    @Test func retryAfterSecondsAndDates() {
        let now = Date(timeIntervalSince1970: 1_000_000)
        #expect(FailureClassifier.httpFailure(status: 503, retryAfter: "12", now: now).retryAfter == 12)
        let later = HTTPDate.format(now.addingTimeInterval(30))
        #expect(FailureClassifier.httpFailure(status: 429, retryAfter: later, now: now).retryAfter == 30)
        #expect(FailureClassifier.httpFailure(status: 404, retryAfter: "12", now: now).retryAfter == nil)
    }

    @Test func curlCodes() {
        #expect(FailureClassifier.curlFailure(code: 7, text: "refused", stall: Stall(bytesPerSecond: 1024, seconds: 30)).isTransient)
        #expect(FailureClassifier.curlFailure(code: 56, text: "reset", stall: Stall(bytesPerSecond: 1024, seconds: 30)).isTransient)
        #expect(FailureClassifier.curlFailure(code: 18, text: "partial", stall: Stall(bytesPerSecond: 1024, seconds: 30)).error.code == .truncated)
        let stall = FailureClassifier.curlFailure(code: 28, text: "Operation too slow. Less than 1024 bytes/sec transferred the last 30 seconds", stall: Stall(bytesPerSecond: 1024, seconds: 30))
        #expect(stall.isTransient && stall.error.code == .stalled)
        #expect(FailureClassifier.curlFailure(code: 1, text: "Protocol \"file\" not supported", stall: Stall(bytesPerSecond: 1024, seconds: 30)).error.code == .unsupportedScheme)
        #expect(!FailureClassifier.curlFailure(code: 47, text: "", stall: Stall(bytesPerSecond: 1024, seconds: 30)).isTransient)
        #expect(!FailureClassifier.curlFailure(code: 60, text: "certificate", stall: Stall(bytesPerSecond: 1024, seconds: 30)).isTransient)
    }
}

@Suite struct HTTPDateTests {
    @Test func threeForms() {
        let expected = Date(timeIntervalSince1970: 784_111_777)
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == expected)
        #expect(HTTPDate.parse("yesterday") == nil)
        #expect(HTTPDate.format(expected) == "Sun, 06 Nov 1994 08:49:37 GMT")
    }

    @Test func caseSpacingAndBadNumbers() {
        let expected = Date(timeIntervalSince1970: 784_111_777)
        #expect(HTTPDate.parse("sun, 06 NOV 1994 08:49:37 gmt") == expected)
        #expect(HTTPDate.parse("Sun,  06  Nov 1994  08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Thursday, 01-Jan-70 00:00:00 GMT") == Date(timeIntervalSince1970: 0))
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37") == expected, "no zone: read as GMT, as before")
        #expect(HTTPDate.parse("Sun, 06 Nov 19940 08:49:37 GMT") == nil)
        #expect(HTTPDate.parse("Sun, 06 Nox 1994 08:49:37 GMT") == nil)
        #expect(HTTPDate.parse("Sun, 32 Nov 1994 08:49:37 GMT") == nil)
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 24:49:37 GMT") == nil)
        #expect(HTTPDate.parse("Sun, +6 Nov 1994 08:49:37 GMT") == nil)
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49") == nil)
        #expect(HTTPDate.parse("") == nil)
        #expect(HTTPDate.parse("Sön, 06 Nov 1994 08:49:37 GMT") == expected, "the day's name is not checked")
    }
}

@Suite struct HostKeyTests {
    @Test func theAuthorityOfAURLAsText() {
        #expect(HostKey.of(text: "https://cdn.example.org/a/b.mp3?x=1") == "cdn.example.org")
        #expect(HostKey.of(text: "https://User:Pass@CDN.Example.ORG:8443/a") == "cdn.example.org:8443")
        #expect(HostKey.of(text: "http://a@b@host.example/") == "host.example", "the last @ ends the user part")
        #expect(HostKey.of(text: "http://host.example?q") == "host.example")
        #expect(HostKey.of(text: "http://host.example#f") == "host.example")
        #expect(HostKey.of(text: "http://[::1]:8080/x") == "[::1]:8080")
        #expect(HostKey.of(text: "http://ÉXAMPLE.test/") == "éxample.test")
        #expect(HostKey.of(text: "http://") == "")
        #expect(HostKey.of(text: "host.example/path") == nil)
        #expect(HostKey.of(text: "") == nil)
        // As a parsed URL's key, for the URLs a queue holds.
        for text in ["https://Example.COM:444/x", "http://example.com/", "https://u@media.example.net/ep.mp3"] {
            #expect(HostKey.of(text: text) == HostKey.of(URL(string: text)!))
        }
    }
}
