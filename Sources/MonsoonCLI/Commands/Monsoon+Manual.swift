import FoundationEssentials

extension Monsoon {
    /// monsoon(1): the commands from their declarations, then what no declaration says.
    static func manual(date: Date) -> String {
        let program = configuration.commandName
        let exitStatus: [(tag: String, help: String)] = [
            ("Li \(ExitStatus.success)", "Everything asked for was done."),
            ("Li \(ExitStatus.failure)", "Something failed: a download, a feed, a file of an archive; or another error, such as an unreadable database."),
            ("Li \(ExitStatus.usage)", "Usage error: an unknown command or option, a bad value, an argument that is not an http or https URL."),
            ("Li \(ExitStatus.diskFull)", "Not enough disk space: a download was left queued waiting for room, its part kept; or the disk holding the database is full, so the download queue could not be saved."),
            ("Li \(ExitStatus.interrupted)", "Interrupted (Ctrl-C or SIGTERM); part files are kept and the next run resumes them."),
        ]
        let environment: [(tag: String, help: String)] = [
            ("Ev MONSOON_HOME", "The home: the folder of the database (monsoon.sqlite) and the lock, when --home is not given."),
            ("Ev XDG_DATA_HOME", "Without MONSOON_HOME, the home is $XDG_DATA_HOME/monsoon."),
            ("Ev HOME", "Without either, the home is ~/.local/share/monsoon."),
            ("Ev MONSOON_DB", "The PostgreSQL database of the cluster commands (a postgresql:// URL or key=value pairs), when --db is not given. Never read by archive, which queues in a shared library only with --db."),
            ("Ev PGPASSWORD , Ev PGPASSFILE , Ev PGHOST , Ev PGUSER", "Read by libpq for the cluster commands and archive --db, as by psql: the password, and what the connection string leaves out."),
            ("Ev NO_COLOR", "When set and not empty, the live view on a terminal has no colours."),
            ("Ev http_proxy , Ev https_proxy , Ev no_proxy", "The proxy for requests, unless --proxy is given."),
            ("Ev PATH", "Where play finds mpv, and where the completion scripts find monsoon."),
            ("Ev SOURCE_DATE_EPOCH", "The date 'completions man' gives this page, for reproducible builds."),
        ]
        let files: [(tag: String, help: String)] = [
            ("Pa ~/.local/share/monsoon/monsoon.sqlite", "The library, the download queue and the settings (private: the folder 0700, the file 0600)."),
            ("Pa ~/.local/share/monsoon/monsoon.lock", "Held by the process that downloads, so that another hands its downloads to it."),
            ("Pa *.part", "A download under way, resumed by the next run; its origin is kept in the extended attribute user.monsoon.resume."),
            ("Pa monsoon-manifest.json", "In each podcast folder of an archive: each file's size, SHA-256 and source, read by verify."),
            ("Pa feed.xml", "In each podcast folder of an archive: the feed as last fetched, which verify looks for."),
        ]
        let examples = """
            Archive a podcast's whole back catalogue, then check it:

              \(program) archive https://example.com/feed.xml -o ~/Podcasts
              \(program) verify ~/Podcasts

            Download files, 8 at a time, resuming what an earlier run left:

              \(program) get -j 8 -i urls.txt -o ~/Downloads

            Subscribe, list the episodes, and keep the library fresh every hour:

              \(program) add https://example.com/feed.xml
              \(program) episodes "Morning Show"
              \(program) systemd --every 1h | sh
            """
        return ManualGenerator.manual(root: Monsoon.self, date: date, sections: [
            ManualGenerator.Section(title: "Exit status", body: ManualGenerator.tagged(exitStatus)),
            ManualGenerator.Section(title: "Environment", body: ManualGenerator.tagged(environment)),
            ManualGenerator.Section(title: "Files", body: ManualGenerator.tagged(files)),
            ManualGenerator.Section(title: "Examples", body: Array(ManualGenerator.paragraphs(examples).drop { $0 == ".Pp" })),
        ])
    }
}
