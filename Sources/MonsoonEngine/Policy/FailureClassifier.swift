import FoundationEssentials
import Glibc

/// The stall rule (`EngineConfiguration.Stall`), by the name the policies use.
typealias Stall = EngineConfiguration.Stall

/// Turns how an attempt ended into a failure the retry policy understands.
enum FailureClassifier {
    /// An HTTP error status: 408, 429 and 5xx are transient; other statuses are permanent.
    static func httpFailure(status: Int, retryAfter: String?, now: Date) -> RetryPolicy.Failure {
        let transient = status == 408 || status == 429 || (500...599).contains(status)
        let error = DownloadError(.httpStatus, HTTPStatusText.answered(status), httpStatus: status)
        let wait = transient ? retryAfter.flatMap { RetryAfter.seconds($0, now: now) } : nil
        return RetryPolicy.Failure(error: error, isTransient: transient, retryAfter: wait, madeProgress: false)
    }

    /// Whether a status also holds back the host's other queued transfers.
    static func holdsHost(status: Int) -> Bool { status == 429 || status == 503 }

    /// A curl result other than OK, by curl's numeric code (stable across versions).
    static func curlFailure(code: Int, text: String, stall: Stall) -> RetryPolicy.Failure {
        let transient: Bool
        let kind: DownloadError.Code
        // curl's text starts with a capital ("Could not resolve host: …"); Monsoon's messages do not.
        var message = text.prefix(1).lowercased() + text.dropFirst()
        switch code {
        case 6, 7, 35, 52, 55, 56, 16, 92, 95:
            // could not resolve / connect, TLS handshake, empty reply, send/recv errors (reset), HTTP/2 and HTTP/3 framing
            transient = true; kind = .network
        case 5: transient = true; kind = .network     // proxy resolve
        case 18:
            transient = true; kind = .truncated
            message = "the connection closed before the whole body arrived (\(text))"
        case 28:
            transient = true
            if text.lowercased().contains("too slow") || text.lowercased().contains("less than") {
                kind = .stalled
                message = "the transfer stalled: under \(ByteCount.format(stall.bytesPerSecond))/s for \(stall.seconds) s"
            } else {
                kind = .network
            }
        case 1 where text.lowercased().contains("protocol \"") || text.lowercased().contains("scheme"):
            transient = false; kind = .unsupportedScheme
            message = "refused a URL or redirect with a scheme other than http or https (\(text))"
        case 1:
            // curl's code for a status line it cannot read too ("HTTP/1.1 099", "-200", nine digits).
            transient = false; kind = .protocolViolation
            message = "the server's answer is not valid HTTP (\(message)); refused"
        case 60:
            // Retrying cannot help. A self-signed or privately issued certificate is an authority
            // the user may choose to trust; a wrong host name or an expired certificate is not.
            transient = false
            let lowered = text.lowercased()
            let untrusted = lowered.contains("self-signed") || lowered.contains("self signed") || lowered.contains("local issuer")
            kind = untrusted ? .untrustedCertificate : .network
            message = "the server's TLS certificate could not be verified (\(text))"
        case 47:
            transient = false; kind = .tooManyRedirects
            message = "too many redirects (more than 10)"
        case 63:
            transient = false; kind = .tooLarge
        case 27, 100:
            // curl's "Out of memory" (CURLE_TOO_LARGE from libcurl 8.6) is, in practice, a response
            // header past its 100 KB limit (CURL_MAX_HTTP_HEADER): a broken or hostile server, which
            // asking again will not mend.
            transient = false; kind = .protocolViolation
            message = "the server's response header is larger than 100 KB, more than Monsoon accepts; refused"
        default:
            transient = false; kind = .network
        }
        return RetryPolicy.Failure(error: DownloadError(kind, message), isTransient: transient, retryAfter: nil, madeProgress: false,
                                   isConnectionFailure: [5, 6, 7].contains(code), isRefusal: code == 7)
    }

    /// Plain words for a server that cannot be reached (curl codes 6 and 7), such as
    /// "cannot connect to 127.0.0.1:8080: connection refused"; nil for other codes. curl's own
    /// text ("Failed to connect to … after 0 ms: Couldn't connect to server") hides the reason,
    /// which is in `osErrno`. `url` is the URL being fetched when it failed (credentials are not shown).
    static func connectionFailureText(code: Int, osErrno: Int, url: URL?) -> String? {
        guard code == 6 || code == 7 else { return nil }
        var place = "the server"
        if let url, let host = url.host, !host.isEmpty {
            let port = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
            place = (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
        }
        if code == 6 { return "cannot connect to \(place): unknown host; check the address and the network" }
        let hint = "; check the address and that the server is running"
        guard osErrno != 0 else { return "cannot connect to \(place): no connection could be made" + hint }
        let reason = String(cString: strerror(Int32(osErrno)))
        return "cannot connect to \(place): \(reason.prefix(1).lowercased() + reason.dropFirst())" + hint
    }
}

/// Reason phrases for the statuses users meet.
public enum HTTPStatusText {
    /// "the server answered 404 Not Found; check the address": the one wording of an HTTP error
    /// status, whatever was asked for (a feed, an episode, a file given to `get`).
    public static func answered(_ status: Int) -> String {
        let reason = text(status)
        return "the server answered \(status)" + (reason.isEmpty ? "" : " " + reason) + (status == 404 ? "; check the address" : "")
    }

    static func text(_ status: Int) -> String {
        switch status {
        case 304: return "Not Modified"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 410: return "Gone"
        case 416: return "Range Not Satisfiable"
        case 429: return "Too Many Requests"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        default:
            switch status {
            case 300..<400: return "(a redirect that was not followed)"
            case 400..<500: return "(client error)"
            case 500..<600: return "(server error)"
            default: return ""
            }
        }
    }
}
