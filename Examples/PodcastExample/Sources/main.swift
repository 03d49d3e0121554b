// podcast-example FEED_URL FOLDER: subscribes to the podcast at FEED_URL and downloads its latest
// episode into FOLDER, named after the episode's title, with Monsoon's podcast library. The
// library and the download queue share one SQLite database, FOLDER/podcasts.sqlite, as `monsoon`
// keeps them: a second run finds the subscription there. Exits 0 once the file is in place.
import Foundation
import MonsoonEngine
import MonsoonPodcasts
import MonsoonStore

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("podcast-example: \(message)\n".utf8))
    exit(1)
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 2, let feedURL = URL(string: arguments[0]) else {
    print("usage: podcast-example FEED_URL FOLDER")
    exit(2)
}
let folder = arguments[1]

do {
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let databasePath = (folder as NSString).appendingPathComponent("podcasts.sqlite")
    // Database-backed: the queue survives the process, and a download cut short resumes from its part file.
    // `open` does the database work off Swift's shared threads (the initializer would block one).
    let manager = try await DownloadManager.open(databasePath: databasePath)
    let library = try PodcastLibrary(database: try Database(path: databasePath), manager: manager)

    let podcast: Podcast
    switch try await library.subscribe(to: feedURL) {
    case .subscribed(let new, let summary):
        podcast = new
        print("subscribed to \(new.name): \(summary.added) episodes")
    case .alreadySubscribed(let known):
        podcast = known
        print("already subscribed to \(known.name)")
    @unknown default:
        // The result is @nonexhaustive: a later Monsoon may answer in ways this program does not know.
        fail("subscribing answered in a way this example does not know")
    }

    // Newest first; an item without an enclosure has nothing to download.
    guard let episode = try library.episodes(of: podcast.id).first(where: { $0.enclosureURL != nil }),
          let url = episode.enclosureURL else { fail("\(podcast.name) has no episode with a media file") }
    // The id the podcast layer gives the episode's download, so `monsoon` would know it as the episode's.
    let request = DownloadRequest(id: EpisodeQueue.downloadID(ofEpisode: episode.id), url: url,
                                  destination: .named(folder: folder, stem: PortableName.make(episode.title ?? "episode \(episode.id)")))

    let id = try await manager.enqueue(request, replacingExisting: true)
    // Returns once nothing is queued, downloading or waiting to retry: this download has ended.
    await manager.waitUntilIdle()
    let download = try await manager.download(withID: id)
    let status: Int32
    if let download, download.status == .completed {
        print("saved \(download.filePath ?? "")")
        status = 0
    } else {
        print("failed: \(download?.lastError?.message ?? "the download is gone")")
        status = 1
    }
    // The last save happens here: a failure means the queue on disk is not what this run left.
    if let failure = await manager.shutdown() { fail("could not save the download queue: \(failure)") }
    exit(status)
} catch {
    fail("\(error)")
}
