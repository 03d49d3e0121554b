import FoundationEssentials
import MonsoonEngine
import MonsoonPodcasts

extension Archive {
    /// `--dry-run`: reads the feeds (nothing is stored) and prints what a run would
    /// download, the sizes per host, and whether it fits on the disk.
    func plan(_ urls: [URL], root: String, naming: NamingTemplate, episodes: EpisodeSession, context: CommandContext) async throws -> Int32 {
        struct Item {
            var title: String
            var published: Date?
            var bytes: Int?
            var url: URL
            /// Why a run would not download it (an enclosure that is not http or https); nil: it would.
            var refusal: String? {
                DownloadRequest.isDownloadable(url) ? nil : "refused: its enclosure \(Redaction.redact(url)) is not an http or https URL"
            }
        }
        struct Planned {
            var name: String
            var feedURL: URL
            var items: [Item]
            var alreadyArchived: Int
            var leftOut: Int
        }
        let session = try LibrarySession.open(global, context: context, transfer: transfer)
        var failed = 0
        let planned: [Planned] = try await session.run { library in
            var planned: [Planned] = []
            for url in urls {
                do {
                    let (feed, archived, _) = try await library.preview(url)
                    let candidates = feed.episodes.enumerated().map { index, episode in
                        ArchiveSelection.Candidate(id: index, title: episode.title ?? "", published: episode.published, feedOrder: index,
                                                   hasEnclosure: episode.enclosureURL != nil, archived: archived.contains(episode.identity), fileMissing: true)
                    }
                    let selection = try select(candidates)
                    let items = selection.chosen.map { index in
                        let episode = feed.episodes[index]
                        return Item(title: episode.title ?? "", published: episode.published, bytes: episode.declaredLength, url: episode.enclosureURL!)
                    }
                    planned.append(Planned(name: feed.title ?? FallbackName.podcast(feedURL: url), feedURL: url, items: items,
                                           alreadyArchived: selection.alreadyArchived.count, leftOut: selection.filteredOut))
                } catch let error as CLIError {
                    throw error
                } catch {
                    context.error(LibrarySession.feedFailure(url, error))
                    failed += 1
                }
            }
            return planned
        }
        var hosts: [String: (files: Int, bytes: Int)] = [:]
        var total = 0
        var unknown = 0
        var refused = 0
        for item in planned.flatMap(\.items) {
            // A run refuses it (archive downloads http and https only): no host, no bytes.
            if item.refusal != nil {
                refused += 1
                continue
            }
            let host = item.url.host.map { host in item.url.port.map { "\(host):\($0)" } ?? host } ?? "?"
            hosts[host, default: (0, 0)].files += 1
            hosts[host, default: (0, 0)].bytes += item.bytes ?? 0
            total += item.bytes ?? 0
            if item.bytes == nil { unknown += 1 }
        }
        let reserve = try transfer.configuration(scope: .claimedOnly, home: episodes.home, context: context).diskReserve
        let free = SpacePlan.freeBytes(for: root)
        let fits = free.map { total <= max(0, $0 - reserve) }
        if output.json {
            let podcasts = planned.map { podcast in
                let items = podcast.items.map {
                    "{\"title\": \(JSONText.string($0.title)), \"published\": \(LibraryJSON.date($0.published)), \"bytes\": \(LibraryJSON.int($0.bytes)), "
                        + "\"url\": \(JSONText.string(Redaction.redact($0.url))), \"refused\": \(LibraryJSON.string($0.refusal))}"
                }
                return "{\"title\": \(JSONText.string(podcast.name)), \"feedURL\": \(JSONText.string(Redaction.redact(podcast.feedURL))), "
                    + "\"alreadyArchived\": \(podcast.alreadyArchived), \"leftOut\": \(podcast.leftOut), \"episodes\": [\(items.joined(separator: ", "))]}"
            }
            let hostText = hosts.keys.sorted().map { "\(JSONText.string($0)): {\"files\": \(hosts[$0]!.files), \"bytes\": \(hosts[$0]!.bytes)}" }
            context.output.line(GetReporter.jsonLine("plan", [
                ("root", JSONText.string(root)), ("podcasts", "[\(podcasts.joined(separator: ", "))]"), ("hosts", "{\(hostText.joined(separator: ", "))}"),
                ("files", String(planned.reduce(0) { $0 + $1.items.count } - refused)), ("refused", String(refused)), ("bytes", String(total)), ("unknownSizes", String(unknown)),
                ("freeBytes", LibraryJSON.int(free)), ("reserveBytes", String(reserve)), ("fits", fits.map { $0 ? "true" : "false" } ?? "null"),
            ]))
            return failed > 0 ? ExitStatus.failure : ExitStatus.success
        }
        var text = ""
        for podcast in planned {
            let refusedHere = podcast.items.filter { $0.refusal != nil }.count
            text += "\(podcast.name) (\(Redaction.redact(podcast.feedURL))): \(podcast.items.count - refusedHere) to download, "
                + "\(podcast.alreadyArchived) already archived, \(podcast.leftOut) left out" + (refusedHere > 0 ? ", \(refusedHere) refused" : "") + "\n"
            for item in podcast.items {
                let day = item.published.map { String(LibraryJSON.date($0).dropFirst().prefix(10)) } ?? "undated   "
                if let refusal = item.refusal {
                    text += "  \(day)  \(item.title): \(refusal)\n"
                } else {
                    text += "  \(day)  \(item.bytes.map { ByteCount.format($0) } ?? "size unknown")  \(item.title)\n"
                }
            }
        }
        text += hosts.isEmpty ? "" : "per host:\n"
        for host in hosts.keys.sorted() {
            text += "  \(host)  \(hosts[host]!.files) file\(hosts[host]!.files == 1 ? "" : "s")  \(ByteCount.format(hosts[host]!.bytes))\n"
        }
        let count = planned.reduce(0) { $0 + $1.items.count } - refused
        text += (count == 0 ? "total: nothing to download" : "total: \(count) file\(count == 1 ? "" : "s"), \(ByteCount.format(total))") + (unknown > 0 ? " (\(unknown) of unknown size)" : "")
            + (refused > 0 ? "; \(refused) refused (not http or https)" : "")
        if let free, let fits {
            text += "; \(ByteCount.format(max(0, free - reserve))) free beyond the \(ByteCount.format(reserve)) reserve in \(root): "
                + (fits ? "it fits" : "it does not fit")
        }
        context.output.write(text + "\n")
        return failed > 0 ? ExitStatus.failure : ExitStatus.success
    }
}
