import FoundationEssentials
import MonsoonEngine

extension FeedFetcher {
    /// A HEAD; when the server refuses it (some CDNs do, for signed URLs), a GET of the first byte.
    func probe(_ text: String) async throws(FeedError) -> VersionCheck.Answer {
        guard let url = URL(string: text) else { throw FeedError(.invalidURL, "\(Redaction.redactText(text)) is not a URL") }
        var request = FetchRequest(url: url, headers: ["User-Agent": userAgent], maxBytes: 1 << 16, timeout: timeout, acceptsCompression: false,
                                   retriesConnectionFailures: false)
        request.headOnly = true
        let head = try await ask(request)
        guard [403, 405, 501].contains(head.status) else { return Self.answer(head) }
        request.headOnly = false
        request.headers["Range"] = "bytes=0-0"
        return Self.answer(try await ask(request))
    }

    private func ask(_ request: FetchRequest) async throws(FeedError) -> FetchResponse {
        do {
            return try await manager.fetch(request)
        } catch {
            throw FeedError(.network, "cannot ask \(Redaction.redact(request.url)): \(error.message)")
        }
    }

    /// A ranged answer's total, else the `Content-Length`.
    static func answer(_ response: FetchResponse) -> VersionCheck.Answer {
        var length = response.header("Content-Length").flatMap { Int($0.trimmingBlanks()) }
        if response.status == 206 {
            length = response.header("Content-Range").flatMap { $0.split(separator: "/").last }.flatMap { Int($0.trimmingBlanks()) }
        }
        return VersionCheck.Answer(status: response.status, length: length, etag: response.header("ETag"), lastModified: response.header("Last-Modified"),
                                   contentType: response.header("Content-Type"))
    }
}
