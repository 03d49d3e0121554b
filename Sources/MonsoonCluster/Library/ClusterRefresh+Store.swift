import FoundationEssentials
import MonsoonEngine
import MonsoonPodcasts

extension ClusterRefresh {
    /// The key of the advisory lock under which a feed's folder is chosen ("monfold" in ASCII):
    /// two feeds whose titles come out the same, refreshed at once, get two folders.
    static let folderLockKey: Int64 = 0x6d_6f6e_666f_6c64

    /// Reads a loaded feed's episodes, chooses and names the new ones, and writes it all in one
    /// transaction, fenced by the job's lease.
    static func store(_ loaded: FeedFetcher.Loaded, job: ClaimedJob, feedID: Int64, url: URL, rules: ArchiveRules, rulesText: String,
                      fetcher: FeedFetcher, queue: JobQueue, turns: PageTurns) async throws -> Outcome {
        let connection = queue.connection
        let naming: NamingTemplate
        do { naming = try rules.naming() } catch { return .failedPermanently(reason: error.message) }
        // Read before the transaction, and safely so: only a refresh of this feed writes its
        // episodes, and only the one holding the job's lease gets to commit.
        let stored = try storedEpisodes(of: feedID, on: connection)
        var loaded = loaded
        var episodes = FeedEpisodes(stored: stored)
        var streamed: FeedFetcher.Streamed
        while true {
            do {
                streamed = try fetcher.stream(loaded) { batch, page in
                    try Task.checkCancellation()
                    episodes.add(batch, page: page)
                }
                break
            } catch is NeedsWalk {
                // The first page named a next page after all: fetch them all, then read again.
                episodes = FeedEpisodes(stored: stored)
                do throws(FeedError) { try await fetcher.walk(&loaded, from: url, waitingForTurn: turns.wait(for:)) } catch { return outcome(of: error) }
            } catch let error as FeedError {
                return outcome(of: error)
            }
        }
        episodes.keepPages(streamed.pages)
        episodes.settle()
        let choice: (chosen: [Int], refused: Int)
        do { choice = try episodes.chosen(by: rules) } catch { return .failedPermanently(reason: error.message) }
        // Every host the transaction counts jobs on, locked first and in order: two refreshes
        // never wait for each other's hosts in a cycle.
        var hosts: Set<String> = [job.host]
        if let answered = job.answeredHost { hosts.insert(answered) }
        for index in choice.chosen { if let enclosure = episodes.items[index].details?.enclosureURL { hosts.insert(NewJob.host(of: enclosure)) } }
        return try connection.transaction { () throws -> Outcome in
            let feed = try lockFeed(of: job, feedID: feedID, on: connection)
            let folder = try feed.string("folder")
            if folder == nil { try connection.execute("SELECT pg_advisory_xact_lock($1)", [folderLockKey]) }
            try lock(hosts, on: connection)
            try finish(job.lease, queue: queue)
            let chosenFolder = try folder ?? chooseFolder(for: feedID, title: streamed.feed.title, url: url, naming: naming, on: connection)
            let names = episodes.fileNames(folder: chosenFolder, naming: naming)
            // Rules another `archive --db` set meanwhile: read the feed again with them. The
            // downloads chosen now take the size cap they set, as the feed's waiting ones did.
            let currentRules = try feed.string("rules") ?? rulesText
            let requeued = currentRules != rulesText
            let maxBytes = try (requeued ? ArchiveRules(json: currentRules) : rules).maxSize
            var jobs = try insert(choice.chosen, of: episodes, names: names, feed: (feedID, url, chosenFolder), maxBytes: maxBytes,
                                  newestFirst: rules.newestFirst, on: connection)
            if requeued { jobs.append(.refresh(feedID: feedID, url: url)) }
            let queued = try JobQueue.queue(jobs, on: connection, rearmingFinished: requeued)
            // Validators only for a feed read whole by the rules it has: after a page that could
            // not be read, or new rules, a 304 would hide what the next refresh must see.
            let keepsValidators = streamed.pageError == nil && !requeued
            try connection.execute("""
                UPDATE monsoon_feeds SET title = coalesce($2, title), etag = $3, last_modified = $4, refreshed_at = now(), folder = $5 WHERE id = $1
                """, [feedID, streamed.feed.title, keepsValidators ? loaded.first.etag : nil, keepsValidators ? loaded.first.lastModified : nil, chosenFolder])
            return .refreshed(Summary(queued: queued.count - (requeued && queued.contains("refresh:\(feedID)") ? 1 : 0), refused: choice.refused,
                                      pages: streamed.pages, folder: chosenFolder, pageError: streamed.pageError?.message, requeued: requeued))
        }
    }

    /// The feed's episodes in the library, as placing its items needs them.
    static func storedEpisodes(of feedID: Int64, on connection: PostgresConnection) throws(PostgresError) -> [FeedEpisodes.Stored] {
        let rows = try connection.execute("SELECT identity, enclosure_url, metadata ->> 'guid' AS guid, file_name FROM monsoon_episodes WHERE feed_id = $1", [feedID])
        return try rows.rows.map { row throws(PostgresError) in
            FeedEpisodes.Stored(identity: try row.string("identity") ?? "", enclosureURL: try row.string("enclosure_url"), guid: try row.string("guid"),
                                fileName: try row.string("file_name"))
        }
    }

    /// Locks `hosts`' rows in the order of their names, making those that are missing.
    static func lock(_ hosts: Set<String>, on connection: PostgresConnection) throws(PostgresError) {
        let names = PostgresArray(hosts.sorted().map { Optional($0) })
        try connection.execute("INSERT INTO monsoon_hosts (host) SELECT h FROM unnest($1::text[]) AS h ORDER BY h ON CONFLICT DO NOTHING", [names])
        try connection.execute("SELECT host FROM monsoon_hosts WHERE host = ANY($1::text[]) ORDER BY host FOR UPDATE", [names])
    }

    /// The feed's folder, chosen once (under the advisory lock): its title made a folder name as
    /// `archive` makes a podcast's, numbered when another feed's folder has that name (compared
    /// without case, and as a portable name).
    static func chooseFolder(for feedID: Int64, title: String?, url: URL, naming: NamingTemplate, on connection: PostgresConnection) throws(PostgresError) -> String {
        let others = try connection.execute("SELECT id, folder FROM monsoon_feeds WHERE folder IS NOT NULL AND id <> $1", [feedID])
        var podcasts = try others.rows.map { row throws(PostgresError) in
            PodcastFolders.Podcast(id: Int(try row.int64("id") ?? 0), title: nil, feedURL: nil, folderName: try row.string("folder"))
        }
        podcasts.append(.init(id: Int(feedID), title: title, feedURL: url.absoluteString))
        let name = PodcastFolders.names(podcasts)[Int(feedID)] ?? FallbackName.podcast(feedURL: url)
        // `{podcast}/…`: the template's first folder is the name, made portable when the rules say.
        return naming.podcastFolder(name) ?? name
    }

    /// Inserts the chosen episodes (in their order, so their ids follow it), and returns the
    /// download job of each one inserted, prioritized to be claimed in that order, after the
    /// feed's earlier downloads (oldest first) or before them (newest first). Each job carries
    /// its file's path in the feed's `folder`, and the cap `maxBytes`.
    static func insert(_ chosen: [Int], of episodes: FeedEpisodes, names: [Int: String], feed: (id: Int64, url: URL, folder: String), maxBytes: Int64?,
                       newestFirst: Bool, on connection: PostgresConnection) throws -> [NewJob] {
        let feedID = feed.id
        let items = chosen.map { episodes.items[$0] }
        guard !items.isEmpty else { return [] }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let rows = try connection.execute("""
            INSERT INTO monsoon_episodes (feed_id, identity, title, published_at, enclosure_url, enclosure_length, file_name, metadata)
            SELECT $1, e.identity, e.title, e.published, e.url, e.length, e.file_name, e.metadata::jsonb
            FROM unnest($2::text[], $3::text[], $4::timestamptz[], $5::text[], $6::bigint[], $7::text[], $8::text[])
                 WITH ORDINALITY AS e(identity, title, published, url, length, file_name, metadata, place)
            ORDER BY e.place
            ON CONFLICT (feed_id, identity) DO NOTHING
            RETURNING id, enclosure_url, enclosure_length, file_name
            """, [feedID, PostgresArray(items.map { Optional($0.identity) }), PostgresArray(items.map(\.title)),
                  PostgresArray(items.map { $0.published.map(PostgresTimestamp.text(of:)) }),
                  PostgresArray(items.map { $0.details?.enclosureURL?.absoluteString }),
                  PostgresArray(items.map { $0.details?.declaredLength.map(String.init) }),
                  PostgresArray(chosen.map { names[$0] ?? "untitled" }),
                  PostgresArray(try items.map { String(decoding: try encoder.encode(EpisodeMetadata($0)), as: UTF8.self) })])
        let earlier = try JobQueue.downloadPriorities(ofFeed: feedID, on: connection)
        let first = newestFirst ? earlier.map { $0.lowest - rows.count } ?? 0 : earlier.map { $0.highest + 1 } ?? 0
        var jobs: [NewJob] = []
        for (offset, row) in rows.rows.enumerated() {
            guard let id = try row.int64("id"), let url = try row.string("enclosure_url").flatMap(URL.init(string:)),
                  let name = try row.string("file_name") else { continue }
            jobs.append(.download(episodeID: id, feedID: feedID, url: url, feedURL: feed.url, path: feed.folder + "/" + name,
                                  expectedLength: try row.int64("enclosure_length"), maxBytes: maxBytes, priority: first + offset))
        }
        return jobs
    }
}
