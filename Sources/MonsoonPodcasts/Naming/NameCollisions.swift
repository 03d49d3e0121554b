import FoundationEssentials

/// Episodes whose template renders to the same file: the first keeps the name, the others get " (2)", " (3)", … in
/// order of publish date, then guid, then id, so the numbering is the same on every run. A name the archive keeps for
/// itself is never an episode's.
public enum NameCollisions {
    public struct Candidate: Sendable, Equatable {
        /// The key of `resolve`'s answer.
        public var id: Int
        public var folders: [String]
        /// Without the extension.
        public var stem: String
        /// The earliest keeps the plain name, undated ones come last.
        public var published: Date?
        /// The tie-break among equal dates.
        public var guid: String?

        public init(id: Int, folders: [String], stem: String, published: Date?, guid: String?) {
            self.id = id
            self.folders = folders
            self.stem = stem
            self.published = published
            self.guid = guid
        }

        package var path: String { (folders + [stem]).joined(separator: "/") }
    }

    /// An archive's own files in a podcast's folder (`feed.xml`, `monsoon-manifest.json`, `cover.jpg`): an episode that
    /// renders to one is numbered, so nothing overwrites it or is overwritten by it. Compared without case.
    static let reservedStems: Set<String> = ["feed", "monsoon-manifest", "cover"]

    public static func resolve(_ candidates: [Candidate]) -> [Int: String] {
        resolve(candidates, around: [])
    }

    /// Each candidate's stem, numbered where its path is shared, its stem is reserved or its path is one of `used` (that
    /// files named before have for good): a cluster names a feed's new episodes around its earlier ones.
    package static func resolve(_ candidates: [Candidate], around used: Set<String>) -> [Int: String] {
        var taken = Set(candidates.map(\.path)).union(used)
        var result: [Int: String] = [:]
        for group in Dictionary(grouping: candidates, by: \.path).values {
            let ordered = group.sorted(by: precedes)
            let plain = !reservedStems.contains(ordered[0].stem.lowercased()) && !used.contains(ordered[0].path)
            if plain { result[ordered[0].id] = ordered[0].stem }
            var number = 2
            for candidate in plain ? ordered.dropFirst() : ordered[...] {
                // Never onto a name another episode renders to by itself ("Title (2)").
                var numbered: Candidate
                repeat {
                    numbered = candidate
                    numbered.stem = "\(candidate.stem) (\(number))"
                    number += 1
                } while taken.contains(numbered.path)
                taken.insert(numbered.path)
                result[candidate.id] = numbered.stem
            }
        }
        return result
    }

    /// Earlier publish dates first (undated last), then guid, then id.
    static func precedes(_ a: Candidate, _ b: Candidate) -> Bool {
        if let first = Date?.publishedFirst(a.published, b.published) { return first }
        if a.guid != b.guid { return (a.guid ?? "\u{10FFFF}") < (b.guid ?? "\u{10FFFF}") }
        return a.id < b.id
    }
}
