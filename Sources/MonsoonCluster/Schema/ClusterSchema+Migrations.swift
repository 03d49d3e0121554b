extension ClusterSchema {
    /// Every step, in order. A released step is never changed: a change is a new step.
    static let migrations: [Migration] = [
        Migration(version: 1, sql: version1 + counting(spacing: false)),
        Migration(version: 2, sql: engineQueues),
        // Workers' engines keep their queues in memory: a job that a dead worker held goes back to
        // the shared queue, and its part is taken over through the shared work folder. A worker
        // is alive while its renewals come within its own lease.
        Migration(version: 3, sql: """
            DROP TABLE monsoon_engine_commands, monsoon_engine_meta, monsoon_engine_downloads, monsoon_engine_queues;
            ALTER TABLE monsoon_workers ADD COLUMN lease_seconds float8 NOT NULL DEFAULT 60;
            ALTER TABLE monsoon_hosts ADD COLUMN reserved_by bigint;
            """ + counting(spacing: true)),
        Migration(version: 4, sql: jobArguments),
        // One worker at a time maintains the queue: the one named in the leader row while its
        // lease lasts (see `JobQueue.lead(for:)`). Finished jobs are removed by their age, from
        // an index of their own, whose columns a lease renewal does not change: it stays a HOT
        // update.
        Migration(version: 5, sql: """
            CREATE TABLE monsoon_leader (id integer PRIMARY KEY DEFAULT 1 CHECK (id = 1), worker text NOT NULL,
              elected_at timestamptz NOT NULL DEFAULT now(), expires_at timestamptz NOT NULL);
            CREATE INDEX monsoon_jobs_finished ON monsoon_jobs (finished_at) WHERE state IN ('completed', 'failed', 'dead');
            """),
        // A claim takes the hosts whose turn it is (the one that started longest ago first) from
        // an index in that order, and stops once it has locked enough of them: without it, every
        // claim read and sorted every host with jobs waiting (a thousand hosts cost a claim
        // about as much as the jobs it took). A start moves its host in the index (a non-HOT
        // update of the host's row, which it rewrites anyway); a completion does not.
        //
        // Hosts with suspects waiting, indexed apart: a worker with nothing running asks for
        // them before each claim, and there are almost never any (a scan of every host, each
        // time, was a tenth of the claims' cost).
        Migration(version: 6, sql: """
            CREATE INDEX monsoon_hosts_turns ON monsoon_hosts (last_start NULLS FIRST, host) WHERE ready > 0;
            CREATE INDEX monsoon_hosts_suspects ON monsoon_hosts (host) WHERE suspects > 0;
            """),
    ]

    /// A job carries what its worker needs, written when it is queued: the claim reads only the
    /// jobs and their hosts, never the library's tables (River's `river_job` is the model).
    /// `url` is what the job fetches (the feed, or the episode's enclosure); `feed_url` the feed's
    /// (the addresses its requests may reach); `path` where the file goes under the workers'
    /// folder, without its extension; `max_bytes` the feed's `--max-size`; `expected_length` the
    /// length the feed declares. Existing jobs take them from their feeds and episodes.
    ///
    /// The ledger records files, which outlive the jobs that downloaded them (a cleaner deletes
    /// finished jobs): it no longer hangs off `monsoon_jobs`, and its key is the episode, one
    /// file each (a download of it again replaces its row; only the newest row of an episode is
    /// kept). A row without an episode, which no download of the library has, is under no key.
    static let jobArguments = """
        ALTER TABLE monsoon_jobs ADD COLUMN url text, ADD COLUMN feed_url text, ADD COLUMN path text,
          ADD COLUMN max_bytes bigint, ADD COLUMN expected_length bigint;
        UPDATE monsoon_jobs j SET url = f.url, feed_url = f.url FROM monsoon_feeds f WHERE j.kind = 'refresh' AND f.id = j.feed_id;
        UPDATE monsoon_jobs j SET url = e.enclosure_url, feed_url = f.url, expected_length = e.enclosure_length,
            path = CASE WHEN e.file_name IS NOT NULL THEN f.folder || '/' || e.file_name END,
            max_bytes = CASE WHEN jsonb_typeof(f.rules -> 'maxSize') = 'number' THEN floor((f.rules ->> 'maxSize')::numeric)::bigint END
          FROM monsoon_episodes e JOIN monsoon_feeds f ON f.id = e.feed_id
          WHERE j.kind = 'download' AND e.id = j.episode_id;
        ALTER TABLE monsoon_ledger DROP CONSTRAINT monsoon_ledger_job_id_fkey, DROP CONSTRAINT monsoon_ledger_pkey;
        DELETE FROM monsoon_ledger l USING monsoon_ledger newer
          WHERE newer.episode_id = l.episode_id AND (newer.completed_at, newer.job_id) > (l.completed_at, l.job_id);
        ALTER TABLE monsoon_ledger ADD CONSTRAINT monsoon_ledger_episode UNIQUE (episode_id);
        """

    /// The engine's queues, kept here by the workers of schema version 2: the rows of
    /// `DownloadStore`'s tables, one queue per name. Dates are seconds since 1970 as `float8`, as the shared row mapping
    /// (`QueueRows`) writes them. A queue's row numbers its downloads (`last_seq`, never reused,
    /// as SQLite's AUTOINCREMENT) and counts the transactions that changed it (`changes`); every
    /// writer takes that row first, so writers of one queue never deadlock on each other's rows.
    /// URLs and paths are indexed by their MD5: a B-tree entry holds at most about 2.7 kB, and a
    /// signed URL may be longer.
    static let engineQueues = """
        CREATE TABLE monsoon_engine_queues (queue text PRIMARY KEY, last_seq bigint NOT NULL DEFAULT 0,
          changes bigint NOT NULL DEFAULT 0, last_command bigint NOT NULL DEFAULT 0);
        CREATE TABLE monsoon_engine_downloads (queue text NOT NULL REFERENCES monsoon_engine_queues ON DELETE CASCADE,
          seq bigint NOT NULL, id text NOT NULL, url text NOT NULL,
          destination_kind text NOT NULL CHECK (destination_kind IN ('file', 'directory')), destination text NOT NULL,
          priority bigint NOT NULL DEFAULT 0, expected_size bigint, expected_type text,
          headers text NOT NULL DEFAULT '{}', user_info text NOT NULL DEFAULT '{}', status text NOT NULL,
          attempts bigint NOT NULL DEFAULT 0, backoff_level bigint NOT NULL DEFAULT 0, retry_at float8,
          error_code text, error_message text, error_status bigint, bytes bigint NOT NULL DEFAULT 0, total bigint,
          checkpoint bigint NOT NULL DEFAULT 0, file_path text, resume_url text, etag text, last_modified text,
          resume_total bigint, updated float8 NOT NULL, file_stem text, final_url text, size_limit bigint,
          size_limit_reason text, root text, PRIMARY KEY (queue, seq), UNIQUE (queue, id));
        CREATE INDEX monsoon_engine_downloads_url ON monsoon_engine_downloads (queue, md5(url));
        CREATE INDEX monsoon_engine_downloads_file ON monsoon_engine_downloads (queue, md5(file_path)) WHERE file_path IS NOT NULL;
        CREATE TABLE monsoon_engine_meta (queue text NOT NULL REFERENCES monsoon_engine_queues ON DELETE CASCADE,
          key text NOT NULL, value text, PRIMARY KEY (queue, key));
        CREATE TABLE monsoon_engine_commands (queue text NOT NULL REFERENCES monsoon_engine_queues ON DELETE CASCADE,
          seq bigint NOT NULL, download_id text, action text NOT NULL, argument text, created float8 NOT NULL,
          PRIMARY KEY (queue, seq))
        """

    /// Feeds, episodes, hosts, jobs, workers and the ledger of completed downloads.
    ///
    /// The lease columns of `monsoon_jobs` (`lease_token`, `leased_by`, `lease_expires_at`) are in
    /// no index nor index predicate, and the table leaves a fifth of each page free: renewing a
    /// lease is then a HOT update, which writes no index and leaves no dead index entries (a test
    /// checks it). `feed_id` and `episode_id` have indexes of their own because deleting a feed
    /// cascades to its episodes and jobs: without them, each episode deleted scans every job.
    ///
    /// Files never share a path: a feed's folder (under every worker's root) is no other feed's,
    /// and an episode's file name (its path in that folder, without the extension the server
    /// decides) is no other episode's of the feed. The shared library chooses them so; the
    /// unique indexes make a mistake an error rather than two downloads into one file.
    ///
    /// The ledger's paths are indexed for `verify --db`, which reads it in pages in their order
    /// and looks up the files it finds.
    static let version1 = """
        CREATE TABLE monsoon_feeds (id bigserial PRIMARY KEY, url text NOT NULL UNIQUE, title text, etag text, last_modified text,
          folder text, rules jsonb NOT NULL DEFAULT '{}'::jsonb, added_at timestamptz NOT NULL DEFAULT now(), refreshed_at timestamptz);
        CREATE UNIQUE INDEX monsoon_feeds_folder ON monsoon_feeds (folder) WHERE folder IS NOT NULL;
        CREATE TABLE monsoon_episodes (id bigserial PRIMARY KEY, feed_id bigint NOT NULL REFERENCES monsoon_feeds ON DELETE CASCADE,
          identity text NOT NULL, title text, published_at timestamptz, enclosure_url text NOT NULL, enclosure_length bigint,
          file_name text, metadata jsonb, UNIQUE (feed_id, identity), UNIQUE (feed_id, file_name));
        CREATE TABLE monsoon_hosts (host text PRIMARY KEY, max_connections integer NOT NULL DEFAULT 2 CHECK (max_connections > 0),
          min_interval_ms integer NOT NULL DEFAULT 0 CHECK (min_interval_ms >= 0), held_until timestamptz, last_start timestamptz,
          ready integer NOT NULL DEFAULT 0, running integer NOT NULL DEFAULT 0, suspects integer NOT NULL DEFAULT 0, redirects boolean);
        CREATE SEQUENCE monsoon_lease_tokens;
        CREATE TABLE monsoon_jobs (id bigserial PRIMARY KEY, kind text NOT NULL CHECK (kind IN ('refresh','download')),
          key text NOT NULL UNIQUE, feed_id bigint REFERENCES monsoon_feeds ON DELETE CASCADE,
          episode_id bigint REFERENCES monsoon_episodes ON DELETE CASCADE, host text NOT NULL, answered_host text,
          state text NOT NULL DEFAULT 'available' CHECK (state IN ('available','scheduled','running','completed','failed','dead','paused')),
          priority integer NOT NULL DEFAULT 0, run_at timestamptz NOT NULL DEFAULT now(), attempts integer NOT NULL DEFAULT 0,
          max_attempts integer NOT NULL DEFAULT 5, crashes integer NOT NULL DEFAULT 0, lease_token bigint, leased_by text, lease_expires_at timestamptz,
          bytes bigint NOT NULL DEFAULT 0, last_error text, created_at timestamptz NOT NULL DEFAULT now(), finished_at timestamptz)
          WITH (fillfactor = 80);
        CREATE INDEX monsoon_jobs_ready ON monsoon_jobs (host, priority, run_at, id) WHERE state = 'available';
        CREATE INDEX monsoon_jobs_scheduled ON monsoon_jobs (run_at) WHERE state = 'scheduled';
        CREATE INDEX monsoon_jobs_running_host ON monsoon_jobs (host) WHERE state = 'running';
        CREATE INDEX monsoon_jobs_feed ON monsoon_jobs (feed_id);
        CREATE INDEX monsoon_jobs_episode ON monsoon_jobs (episode_id);
        CREATE TABLE monsoon_workers (name text PRIMARY KEY, node text NOT NULL, pid integer NOT NULL, started_at timestamptz NOT NULL DEFAULT now(),
          heartbeat_at timestamptz NOT NULL DEFAULT now(), bytes bigint NOT NULL DEFAULT 0, speed bigint NOT NULL DEFAULT 0,
          stopped_at timestamptz);
        CREATE TABLE monsoon_ledger (job_id bigint PRIMARY KEY REFERENCES monsoon_jobs ON DELETE CASCADE, episode_id bigint,
          path text NOT NULL, size bigint NOT NULL, sha256 text NOT NULL, final_url text, etag text, last_modified text,
          worker text NOT NULL, node text NOT NULL, lease_token bigint NOT NULL, completed_at timestamptz NOT NULL DEFAULT now());
        CREATE INDEX monsoon_ledger_path ON monsoon_ledger (path);
        """

    /// How long a started request holds a spaced host (`h`): until it is answered, or a minute,
    /// or twice the interval, whichever is longer (a worker that died says nothing).
    static let reservation = "now() + greatest(60000, 2 * h.min_interval_ms) * interval '1 millisecond'"

    /// Each host's count of jobs ready (available; `suspects` of them have had their workers die
    /// twice) and running, kept by the database itself in
    /// the statement that changes the jobs, so they never drift (a counter that workers move by
    /// hand does, when one dies). A claim reads them under the host's row lock: the per-host
    /// limit is exact across workers. A running job counts on its host and on the host its
    /// redirects ended at; the host's `last_start` is when a job last started there.
    ///
    /// Statement-level triggers with transition tables: one update of each host touched per
    /// statement that changes a count, however many jobs it changed (a lease renewal changes
    /// none, and writes no host row). Hosts are written in the order of their names.
    ///
    /// With `spacing` (schema 3), a job that starts on a host with a least interval between
    /// requests reserves the host's next request (`last_start` in the future, for as long as a
    /// request may take to be answered, a minute or twice the interval): no other job starts
    /// there until the worker says its request was answered (`JobQueue.requestAnswered`), which
    /// puts `last_start` back to that moment. `reserved_by` says whose the reservation is (the
    /// job's lease token): only its holder ends it. The interval then counts from a moment after the
    /// request reached the server, whatever the workers' clocks and latencies.
    static func counting(spacing: Bool) -> String {
        ["insert", "update", "delete"].map { kind in
            // `starts`: a job that became running (not one renewed, nor one moved to another
            // answered host): only those set a host's `last_start`, so a renewal writes no host row.
            // With `spacing`, the lease token of a job that starts: its host's reservation is its.
            let token = spacing ? ", lease_token" : ""
            let changes = switch kind {
            case "insert": "SELECT host, answered_host, state, crashes, 1 AS sign, state = 'running' AS starts\(token) FROM new_jobs"
            case "delete": "SELECT host, answered_host, state, crashes, -1 AS sign, false AS starts\(token) FROM old_jobs"
            default: """
                SELECT n.host, n.answered_host, n.state, n.crashes, 1 AS sign, n.state = 'running' AND o.state <> 'running' AS starts\(spacing ? ", n.lease_token" : "")
                FROM new_jobs n JOIN old_jobs o USING (id)
                UNION ALL SELECT host, answered_host, state, crashes, -1, false\(token) FROM old_jobs
                """
            }
            let tokens = spacing ? ", max(lease_token) FILTER (WHERE starts) AS token" : ""
            let tables = switch kind {
            case "insert": "NEW TABLE AS new_jobs"
            case "delete": "OLD TABLE AS old_jobs"
            default: "NEW TABLE AS new_jobs OLD TABLE AS old_jobs"
            }
            let lastStart = spacing
                ? "CASE WHEN excluded.last_start IS NULL THEN h.last_start WHEN h.min_interval_ms > 0 THEN \(reservation) ELSE excluded.last_start END, "
                    + "reserved_by = CASE WHEN excluded.last_start IS NULL THEN h.reserved_by WHEN h.min_interval_ms > 0 THEN excluded.reserved_by END"
                : "coalesce(excluded.last_start, h.last_start)"
            return """
                CREATE \(spacing ? "OR REPLACE " : "")FUNCTION monsoon_count_\(kind)() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                  WITH changes AS (\(changes)),
                  per_host AS (
                      SELECT host, sum(sign) FILTER (WHERE state = 'available') AS ready, sum(sign) FILTER (WHERE state = 'running') AS running,
                             sum(sign) FILTER (WHERE state = 'available' AND crashes >= 2) AS suspects, bool_or(starts) AS started\(tokens)
                      FROM changes GROUP BY host
                      UNION ALL
                      SELECT answered_host, NULL, sum(sign) FILTER (WHERE state = 'running'), NULL, bool_or(starts)\(tokens)
                      FROM changes WHERE answered_host IS NOT NULL AND answered_host <> host GROUP BY answered_host
                  ), totals AS (
                      SELECT host, coalesce(sum(ready), 0) AS ready, coalesce(sum(running), 0) AS running, coalesce(sum(suspects), 0) AS suspects,
                             coalesce(bool_or(started), false) AS started\(spacing ? ", max(token) AS token" : "")
                      FROM per_host GROUP BY host
                  )
                  INSERT INTO monsoon_hosts AS h (host, ready, running, suspects, last_start\(spacing ? ", reserved_by" : ""))
                  SELECT host, ready, running, suspects, CASE WHEN started THEN now() END\(spacing ? ", CASE WHEN started THEN token END" : "") FROM totals
                  WHERE ready <> 0 OR running <> 0 OR suspects <> 0 OR started
                  ORDER BY host
                  ON CONFLICT (host) DO UPDATE SET ready = h.ready + excluded.ready, running = h.running + excluded.running,
                      suspects = h.suspects + excluded.suspects, last_start = \(lastStart);
                  RETURN NULL;
                END $$;
                \(spacing ? "" : """
                CREATE TRIGGER monsoon_jobs_count_\(kind) AFTER \(kind.uppercased()) ON monsoon_jobs
                  REFERENCING \(tables) FOR EACH STATEMENT EXECUTE FUNCTION monsoon_count_\(kind)();
                """)

                """
        }.joined()
    }
}
