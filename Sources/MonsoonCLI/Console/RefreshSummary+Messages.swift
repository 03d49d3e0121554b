import MonsoonPodcasts

/// What `add` and `import` print about a subscription, and `refresh` and `sync` about each podcast.
extension RefreshSummary {
    /// "NAME: N new, M updated" (or "NAME: unchanged"), and where the feed moved: the line `refresh`
    /// and `sync` print per podcast on standard output.
    func refreshedLine(for podcast: Podcast) -> String {
        var line = unchanged ? "\(podcast.name): unchanged" : "\(podcast.name): \(added) new, \(updated) updated"
        if let movedTo { line += "; the feed moved to \(Redaction.redact(movedTo))" }
        return line
    }

    /// "NAME: REASON": a podcast whose feed could not be read, for standard error.
    static func failureLine(for podcast: Podcast, _ error: Error) -> String {
        "\(podcast.name): \(LibrarySession.message(error))"
    }

    /// "subscribed: ID NAME (N episodes from P pages, D duplicates left out)", then where the feed
    /// was found when a web page was given.
    func subscribedLine(for podcast: Podcast) -> String {
        var line = "subscribed: \(podcast.id) \(podcast.name) (\(added) episode\(added == 1 ? "" : "s")"
        if pages > 1 { line += " from \(pages) pages" }
        if duplicates > 0 { line += ", \(duplicates) duplicate\(duplicates == 1 ? "" : "s") left out" }
        line += ")"
        if let page = foundOnPage {
            line += "; found the feed \(Redaction.redact(podcast.feedURL)) on the page \(Redaction.redact(page))"
        }
        return line
    }

    /// The warning for standard error when a later page of the feed could not be read (nil when
    /// every page was): which page, why, and that the rest was kept. The command then exits 1.
    func pageWarning(for podcast: Podcast) -> String? {
        guard let pageError else { return nil }
        return "warning: \(podcast.name): \(Redaction.redactText(pageError.message)); "
            + "the episodes of the pages before it were kept, and the next refresh reads the whole feed again"
    }

    /// Says how a subscription went: its line on standard output (unless `quiet`), a later page
    /// that could not be read on standard error. False then: the command exits 1.
    static func say(_ result: PodcastLibrary.SubscribeResult, quiet: Bool, context: CommandContext) -> Bool {
        switch result {
        case .alreadySubscribed(let podcast):
            if !quiet { context.output.line("already subscribed: \(podcast.id) \(podcast.name)") }
            return true
        case .subscribed(let podcast, let summary):
            if !quiet { context.output.line(summary.subscribedLine(for: podcast)) }
            return summary.sayPageWarning(for: podcast, context: context)
        }
    }

    /// Says how a podcast's refresh went, as `say(_:quiet:context:)` does a subscription's; false
    /// when its feed, or a later page of it, could not be read.
    static func say(_ result: Result<RefreshSummary, Error>, for podcast: Podcast, quiet: Bool, context: CommandContext) -> Bool {
        switch result {
        case .success(let summary):
            if !quiet { context.output.line(summary.refreshedLine(for: podcast)) }
            return summary.sayPageWarning(for: podcast, context: context)
        case .failure(let error):
            context.error(failureLine(for: podcast, error))
            return false
        }
    }

    private func sayPageWarning(for podcast: Podcast, context: CommandContext) -> Bool {
        guard let warning = pageWarning(for: podcast) else { return true }
        context.error(warning)
        return false
    }
}
