import FoundationEssentials
import MonsoonStore

extension ArchiveRun {
    /// What a podcast's archive was made with, kept beside its folder (as JSON, in the settings table's internal
    /// `archive` row, which `config` does not show): `sync`, `download` and `archive` name its episodes and fetch its
    /// extras by it, so the folder stays as `archive -o` made it.
    package struct Remembered: Codable, Sendable, Equatable {
        /// `--template`; nil: the setting `template`.
        package var template: String?
        /// `--portable-names`.
        package var portable = false
        package var extras: Extras = []
        /// `--write-info-json`: every run writes its episodes' sidecars. `--exec` is not kept: a command runs only when typed.
        package var infoJSON = false

        package init(template: String? = nil, portable: Bool = false, extras: Extras = [], infoJSON: Bool = false) {
            (self.template, self.portable, self.extras, self.infoJSON) = (template, portable, extras, infoJSON)
        }

        /// A row saved before `infoJSON` was kept has none: false.
        package init(from decoder: any Decoder) throws {
            let row = try decoder.container(keyedBy: CodingKeys.self)
            self.init(template: try row.decodeIfPresent(String.self, forKey: .template), portable: try row.decode(Bool.self, forKey: .portable),
                      extras: try row.decode(Extras.self, forKey: .extras), infoJSON: try row.decodeIfPresent(Bool.self, forKey: .infoJSON) ?? false)
        }

        /// Its template, else `fallback`; portable when either is.
        package func naming(else fallback: NamingTemplate) throws -> NamingTemplate {
            var naming = fallback
            if let template { naming = try NamingTemplate(template) }
            naming.portable = portable || fallback.portable
            return naming
        }

        /// Each podcast's.
        static func all(in database: Database) throws -> [Int: Remembered] {
            try SettingRecord.podcastValues(named: key, in: database).mapValues { try JSONDecoder().decode(Remembered.self, from: Data($0.utf8)) }
        }

        func save(podcast: Int, in database: Database) throws {
            try SettingRecord.set(named: Self.key, String(decoding: try JSONEncoder().encode(self), as: UTF8.self), podcast: podcast, in: database)
        }

        private static let key = "archive"
    }

    /// The run's root becomes the archive folder of each podcast that has none, with what this run was made with
    /// (`remembers`); a run into its folder adds its extras, and its `--template` or `--portable-names` replace the
    /// earlier (said); one that has another folder keeps it, and is told.
    func remember(_ remembers: Remembered, of podcasts: [Podcast], in database: Database, report: (Event) -> Void) throws {
        let (folders, archives) = try PlanError.during(.readingQueue) {
            (try SettingRecord.podcastValues(.folder, in: database), try Remembered.all(in: database))
        }
        for podcast in podcasts {
            let earlier = archives[podcast.id] ?? Remembered()
            if let folder = folders[podcast.id], folder.standardizedPath != root.standardizedPath {
                report(.folderKept(podcast, folder))
                continue
            }
            let now = Remembered(template: remembers.template ?? earlier.template, portable: remembers.portable || earlier.portable,
                                 extras: earlier.extras.union(remembers.extras), infoJSON: remembers.infoJSON || earlier.infoJSON)
            if folders[podcast.id] != nil && now.template != earlier.template {
                report(.templateChanged(podcast, now.template))
            }
            try PlanError.during(.changingQueue) {
                if folders[podcast.id] == nil { try SettingRecord.set(.folder, root, podcast: podcast.id, in: database) }
                if now != archives[podcast.id] { try now.save(podcast: podcast.id, in: database) }
            }
        }
    }
}
