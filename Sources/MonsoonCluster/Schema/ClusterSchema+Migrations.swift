extension ClusterSchema {
    /// Every step, in order. A released step is never changed: a change is a new step.
    static let migrations: [Migration] = [
        Migration(version: 1, sql: version1),
    ]

    /// Feeds, episodes, hosts, jobs, workers and the ledger of completed downloads.
    ///
    /// The lease columns of `monsoon_jobs` (`lease_token`, `leased_by`, `lease_expires_at`) are in
    /// no index nor index predicate, and the table leaves a fifth of each page free: renewing a
    /// lease is then a HOT update, which writes no index and leaves no dead index entries (a test
    /// checks it). `feed_id` and `episode_id` have indexes of their own because deleting a feed
    /// cascades to its episodes and jobs: without them, each episode deleted scans every job.
    static let version1 = """
        CREATE TABLE monsoon_feeds (id bigserial PRIMARY KEY, url text NOT NULL UNIQUE, title text, etag text, last_modified text,
          rules jsonb NOT NULL DEFAULT '{}'::jsonb, added_at timestamptz NOT NULL DEFAULT now(), refreshed_at timestamptz);
        CREATE TABLE monsoon_episodes (id bigserial PRIMARY KEY, feed_id bigint NOT NULL REFERENCES monsoon_feeds ON DELETE CASCADE,
          identity text NOT NULL, title text, published_at timestamptz, enclosure_url text NOT NULL, enclosure_length bigint,
          file_name text, metadata jsonb, UNIQUE (feed_id, identity));
        CREATE TABLE monsoon_hosts (host text PRIMARY KEY, max_connections integer NOT NULL DEFAULT 2 CHECK (max_connections > 0),
          min_interval_ms integer NOT NULL DEFAULT 0 CHECK (min_interval_ms >= 0), held_until timestamptz, last_start timestamptz);
        CREATE SEQUENCE monsoon_lease_tokens;
        CREATE TABLE monsoon_jobs (id bigserial PRIMARY KEY, kind text NOT NULL CHECK (kind IN ('refresh','download')),
          key text NOT NULL UNIQUE, feed_id bigint REFERENCES monsoon_feeds ON DELETE CASCADE,
          episode_id bigint REFERENCES monsoon_episodes ON DELETE CASCADE, host text NOT NULL, answered_host text,
          state text NOT NULL DEFAULT 'available' CHECK (state IN ('available','running','completed','failed','dead','paused')),
          priority integer NOT NULL DEFAULT 0, run_at timestamptz NOT NULL DEFAULT now(), attempts integer NOT NULL DEFAULT 0,
          max_attempts integer NOT NULL DEFAULT 5, lease_token bigint, leased_by text, lease_expires_at timestamptz,
          bytes bigint NOT NULL DEFAULT 0, last_error text, created_at timestamptz NOT NULL DEFAULT now(), finished_at timestamptz)
          WITH (fillfactor = 80);
        CREATE INDEX monsoon_jobs_available ON monsoon_jobs (priority, run_at, id) WHERE state = 'available';
        CREATE INDEX monsoon_jobs_running_host ON monsoon_jobs (host) WHERE state = 'running';
        CREATE INDEX monsoon_jobs_feed ON monsoon_jobs (feed_id);
        CREATE INDEX monsoon_jobs_episode ON monsoon_jobs (episode_id);
        CREATE TABLE monsoon_workers (name text PRIMARY KEY, node text NOT NULL, pid integer NOT NULL, started_at timestamptz NOT NULL DEFAULT now(),
          heartbeat_at timestamptz NOT NULL DEFAULT now(), bytes bigint NOT NULL DEFAULT 0, stopped_at timestamptz);
        CREATE TABLE monsoon_ledger (job_id bigint PRIMARY KEY REFERENCES monsoon_jobs ON DELETE CASCADE, episode_id bigint,
          path text NOT NULL, size bigint NOT NULL, sha256 text NOT NULL, final_url text, etag text, last_modified text,
          worker text NOT NULL, node text NOT NULL, lease_token bigint NOT NULL, completed_at timestamptz NOT NULL DEFAULT now());
        """
}
