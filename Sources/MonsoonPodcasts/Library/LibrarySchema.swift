import FoundationEssentials
import MonsoonStore

/// The podcast tables, in the same database as the download queue; their statements are their records'.
enum LibrarySchema {
    static let migrator = Migrator(component: "library", [
        .init(version: 1, sql: """
            CREATE TABLE podcasts (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                feed_url TEXT NOT NULL UNIQUE,
                title TEXT, author TEXT, description TEXT, link TEXT, artwork_url TEXT, language TEXT, podcast_guid TEXT,
                etag TEXT, last_modified TEXT, last_refresh REAL, last_error TEXT,
                added REAL NOT NULL
            );
            CREATE TABLE episodes (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                podcast_id INTEGER NOT NULL REFERENCES podcasts (id) ON DELETE CASCADE,
                identity TEXT NOT NULL,
                guid TEXT, title TEXT, enclosure_url TEXT, media_type TEXT, declared_length INTEGER,
                published REAL, duration INTEGER, season INTEGER, episode INTEGER,
                summary TEXT, link TEXT, image_url TEXT, transcript_url TEXT, chapters_url TEXT,
                feed_order INTEGER NOT NULL DEFAULT 0,
                download_state TEXT NOT NULL DEFAULT 'none', download_error TEXT, file_name TEXT,
                bytes_on_disk INTEGER NOT NULL DEFAULT 0,
                position REAL NOT NULL DEFAULT 0, played INTEGER NOT NULL DEFAULT 0, queue_position INTEGER,
                UNIQUE (podcast_id, identity)
            );
            CREATE INDEX episodes_by_podcast ON episodes (podcast_id, feed_order);
            """),
        // The archive's ledger and manifest: when an episode was first downloaded (kept when its file is deleted).
        .init(version: 2, sql: """
            ALTER TABLE episodes ADD COLUMN archived_at REAL;
            ALTER TABLE episodes ADD COLUMN sha256 TEXT;
            ALTER TABLE episodes ADD COLUMN final_url TEXT;
            ALTER TABLE episodes ADD COLUMN etag TEXT;
            ALTER TABLE episodes ADD COLUMN last_modified TEXT;
            UPDATE episodes SET archived_at = strftime('%s', 'now') WHERE download_state = 'downloaded';
            """),
        // Each podcast's {podcast} in file names, fixed once given (`PodcastFolders`).
        .init(version: 3, sql: "ALTER TABLE podcasts ADD COLUMN folder_name TEXT"),
        // The episode's row is its newest version: `file_url` and `file_length` are the enclosure its file is known to
        // hold, which a later refresh's is compared with; `version` is NULL for the first. Earlier versions are rows of
        // `episode_versions`. A library from before knows one version: the one downloaded, from the enclosure it has.
        .init(version: 4, sql: """
            ALTER TABLE episodes ADD COLUMN file_url TEXT;
            ALTER TABLE episodes ADD COLUMN file_length INTEGER;
            ALTER TABLE episodes ADD COLUMN version TEXT;
            ALTER TABLE episodes ADD COLUMN version_seen REAL;
            UPDATE episodes SET file_url = enclosure_url, file_length = declared_length WHERE download_state = 'downloaded';
            CREATE TABLE episode_versions (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                episode_id INTEGER NOT NULL REFERENCES episodes (id) ON DELETE CASCADE,
                version TEXT, seen REAL,
                url TEXT, length INTEGER, final_url TEXT, etag TEXT, last_modified TEXT, sha256 TEXT,
                file_name TEXT, bytes INTEGER NOT NULL DEFAULT 0, downloaded REAL,
                status TEXT NOT NULL DEFAULT 'kept'
            );
            CREATE INDEX episode_versions_by_episode ON episode_versions (episode_id);
            """),
        // For `--write-info-json`; `transcript_url` stays the first one's, which `--with-transcripts` fetches.
        .init(version: 5, sql: "ALTER TABLE episodes ADD COLUMN transcripts TEXT"),
        // The last episode of the back catalogue a subscription read: those after it arrived with a refresh. A library
        // from before takes every episode it has for the back catalogue.
        .init(version: 6, sql: """
            ALTER TABLE podcasts ADD COLUMN catalogue_end INTEGER;
            UPDATE podcasts SET catalogue_end = (SELECT max(id) FROM episodes WHERE episodes.podcast_id = podcasts.id);
            """),
    ])
}
