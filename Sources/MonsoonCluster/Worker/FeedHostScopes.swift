import FoundationEssentials
import MonsoonEngine

/// The addresses a job's download may reach, by its feed's host: any when the feed is on a
/// private address itself; else public ones only (a feed's URL must not lead into the workers'
/// own network). Each feed host is looked up once.
struct FeedHostScopes {
    private var known: [String: AddressScope] = [:]

    mutating func scope(of job: ClaimedJob) -> AddressScope {
        let host = job.feedURL.flatMap(URL.init(string:))?.host ?? ""
        if let scope = known[host] { return scope }
        let scope: AddressScope = AddressScope.isPrivate(host: host) ? .any : .publicOnly
        known[host] = scope
        return scope
    }
}
