import FoundationEssentials
import MonsoonPodcasts
import MonsoonStore

extension CompletionKind {
    /// The titles of the podcasts in the home the command line being completed names (its
    /// `--home`, else the one every command chooses). A home without a library, or no home at
    /// all, gives none: a Tab never creates a home or a database, and prints nothing.
    static let podcasts = CompletionKind { words, context in
        let home = Home(unchecked: Home.path(option: homeOption(in: words), context: context))
        guard FileManager.default.fileExists(atPath: home.databasePath) else { return [] }
        // A database that cannot be read (damaged, locked for long, from a newer Monsoon) is said by
        // the command that reads it; a Tab only offers nothing.
        guard let podcasts = try? PodcastLibrary.podcasts(readingOnly: Database(path: home.databasePath, busyTimeout: 1)) else { return [] }
        var seen = Set<String>()
        // A title with a control or invisible character (a feed's text) is never put on a command
        // line, nor one a tab or newline would break into another candidate, nor one the command
        // would take for an option ("-ism"): that podcast is named by its id or a part of its title.
        return podcasts.map(\.name).filter { name in
            !name.hasPrefix("-") && !name.unicodeScalars.contains { [.control, .format].contains($0.properties.generalCategory) }
                && seen.insert(name).inserted
        }
    }

    /// The value of `--home DIR` or `--home=DIR` among the words before the one being typed.
    private static func homeOption(in words: [String]) -> String? {
        var home: String?
        var words = words.dropFirst().dropLast().makeIterator()
        while let word = words.next(), word != "--" {
            if word == "--home" {
                home = words.next()
                // bash splits `--home=DIR` at the `=` (COMP_WORDBREAKS): `--home`, `=`, `DIR`.
                if home == "=" { home = words.next() }
            } else if word.hasPrefix("--home=") {
                home = String(word.dropFirst("--home=".count))
            }
        }
        return home
    }
}
