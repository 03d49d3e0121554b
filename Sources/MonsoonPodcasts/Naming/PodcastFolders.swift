import FoundationEssentials

/// The `{podcast}` of each podcast in file names: its name made safe for a path component, and one of its own. Two
/// podcasts whose titles come out the same ("Show/Tell" and "Show-Tell", "." and "..") would otherwise share one folder,
/// where each archive run rewrote the other's manifest and feed copy. The first subscribed keeps the plain name; the
/// others are numbered " (2)", " (3)", … as episodes are. Names are compared without case, as a USB disk's file system
/// does, and as their portable forms ("Show?" and "Show*" are one folder on exFAT), portable now or later.
///
/// A podcast keeps the name it was given (stored with it): a podcast that renames itself, or one unsubscribed, never
/// moves another into or out of a folder. A title with nothing left once cleaned names the podcast after its feed's
/// address instead (`feeds.example.com-show-rss`).
///
/// `package`: the shared library of a cluster names its podcasts' folders the same way.
package enum PodcastFolders {
    package struct Podcast {
        package var id: Int
        package var title: String?
        package var feedURL: String?
        /// Given before: kept.
        package var folderName: String? = nil

        package init(id: Int, title: String?, feedURL: String?, folderName: String? = nil) {
            self.id = id
            self.title = title
            self.feedURL = feedURL
            self.folderName = folderName
        }

        /// As rows hold it: `FallbackName.podcast(title:feedURL:)`.
        var name: String { FallbackName.podcast(title: title, feedURL: feedURL) }
    }

    /// By id: the one it was given, else a new one of its own.
    package static func names(_ podcasts: [Podcast]) -> [Int: String] {
        var result: [Int: String] = [:]
        var cleaned: [(id: Int, name: String)] = []
        for podcast in podcasts.sorted(by: { $0.id < $1.id }) {
            if let given = podcast.folderName {
                result[podcast.id] = given
                continue
            }
            let component = NamingTemplate.nonEmptyComponent(NamingTemplate.clean(podcast.name), limit: limit)
                ?? NamingTemplate.component(NamingTemplate.clean(FallbackName.podcast(title: nil, feedURL: podcast.feedURL)), limit: limit)
            cleaned.append((podcast.id, component))
        }
        var taken = Set(cleaned.map { key($0.name) }).union(result.values.map(key))
        var seen = Set(result.values.map(key))
        for (id, name) in cleaned {
            guard seen.insert(key(name)).inserted else {
                var number = 2
                var numbered: String
                repeat {
                    numbered = "\(name) (\(number))"
                    number += 1
                } while taken.contains(key(numbered))
                taken.insert(key(numbered))
                result[id] = numbered
                continue
            }
            result[id] = name
        }
        return result
    }

    private static func key(_ name: String) -> String { PortableName.make(name).lowercased() }

    /// Room for " (99)" in a 255-byte component.
    private static let limit = 255 - 5
}
