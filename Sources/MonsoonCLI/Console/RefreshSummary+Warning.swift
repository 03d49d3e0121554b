import MonsoonPodcasts

extension RefreshSummary {
    /// The warning for standard error when a later page of the feed could not be read (nil when
    /// every page was): which page, why, and that the rest was kept. The command then exits 1.
    func pageWarning(for podcast: Podcast) -> String? {
        guard let pageError else { return nil }
        return "warning: \(podcast.name): \(Redaction.redactText(pageError.message)); "
            + "the episodes of the pages before it were kept, and the next refresh reads the whole feed again"
    }
}
