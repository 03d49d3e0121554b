#!/usr/bin/env python3
"""`make bench-cluster`: the shared queue in PostgreSQL under load (Benchmarks/README.md).

A PostgreSQL 15 of its own (initdb into a temporary folder, default durability: fsync and
synchronous commits on), the loopback test server's small bodies, and N download jobs over
1,000 hosts (2 connections each, the default), run by 4 `monsoon worker --discard -j 16`
processes. Measures jobs completed per second, the claims' round-trip times (p50, p99),
the CPU time per job of PostgreSQL, the workers and the server, and WAL bytes per job; then
again with 20 hosts holding half the jobs; then a tenth of the jobs with the files kept (no
--discard): each file is fsynced, renamed and listed in the ledger, so this case prices a real
worker's use of the database.

`--old-build DIR` runs each case with that build too, in the same PostgreSQL, just before the
current build's run: the two builds' figures come from the same conditions. A build brings its
own schema (`cluster init`); the jobs are written as that schema keeps them.
"""
import argparse
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("MONSOON_BUILD", os.path.join(ROOT, ".build", "release"))
SERVER = os.path.join(BUILD, "monsoon-testserver")


def pg_bin():
    versions = sorted(int(v) for v in os.listdir("/usr/lib/postgresql") if v.isdigit())
    return f"/usr/lib/postgresql/{versions[-1]}/bin"


def cpu_seconds(pid, children=False):
    """A process's CPU time (user and system), with its reaped children's when asked."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return sum(int(fields[i]) for i in ((11, 12, 13, 14) if children else (11, 12))) / os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Postgres:
    """A server of its own in a temporary folder, as the `postgres` user when run as root."""

    def __init__(self):
        self.folder = tempfile.mkdtemp(prefix="monsoon-bench-pg-")
        self.port = free_port()
        self.as_user = []
        if os.geteuid() == 0:
            os.chown(self.folder, pwd.getpwnam("postgres").pw_uid, -1)
            self.as_user = ["runuser", "-u", "postgres", "--"]
        self.run("initdb", "-D", self.folder + "/data", "--auth=trust", "-U", "monsoon", "--encoding=UTF8", "--locale=C")
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c max_connections=200 -c shared_buffers=256MB"
        if os.environ.get("CLUSTER_STATEMENTS"):
            options += " -c shared_preload_libraries=pg_stat_statements"
        self.run("pg_ctl", "-D", self.folder + "/data", "-o", options, "-w", "-l", self.folder + "/server.log", "start")
        with open(self.folder + "/data/postmaster.pid") as pid_file:
            self.pid = int(pid_file.readline())

    def run(self, program, *arguments):
        subprocess.run(self.as_user + [os.path.join(pg_bin(), program), *arguments], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=self.folder)

    def url(self, database):
        return f"postgresql://monsoon@127.0.0.1:{self.port}/{database}"

    def sql(self, database, statement):
        result = subprocess.run(["psql", "-qAtX", "-v", "ON_ERROR_STOP=1", self.url(database), "-c", statement],
                                check=True, capture_output=True, text=True)
        return result.stdout.strip()

    def cpu_seconds(self):
        """The postmaster's CPU time and its reaped children's (every backend that ended)."""
        return cpu_seconds(self.pid, children=True)

    def stop(self):
        try:
            self.run("pg_ctl", "-D", self.folder + "/data", "-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


def run_case(pg, server, server_url, port, build, name, jobs, hosts, workers, slots, keep_files=False):
    monsoon = os.path.join(build["folder"], "monsoon")
    database = "bench_" + "".join(c if c.isalnum() else "_" for c in build["name"] + "_" + name)
    pg.sql("postgres", f"CREATE DATABASE {database}")
    url = pg.url(database)
    subprocess.run([monsoon, "cluster", "init", "--db", url, "--quiet"], check=True)
    # One feed, an episode and a download job each; the host column is what politeness counts.
    pg.sql(database, f"""
        INSERT INTO monsoon_feeds (url, folder) VALUES ('{server_url}/feed.xml', 'bench');
        CREATE FUNCTION pg_temp.host(n bigint) RETURNS text LANGUAGE sql AS
          $$ SELECT '127.0.' || (n / 250) || '.' || (n % 250 + 1) || ':{port}' $$;
        INSERT INTO monsoon_episodes (feed_id, identity, enclosure_url, file_name)
          SELECT 1, 'g' || g, 'http://' || pg_temp.host({hosts}) || '/file1.bin', 'e' || g
          FROM generate_series(1, {jobs}) g;
        -- From schema 4 a job carries its arguments (what its worker fetches, and where to); a build
        -- of an older schema reads them from the episodes.
        DO $$ BEGIN
          IF EXISTS (SELECT 1 FROM information_schema.columns WHERE table_name = 'monsoon_jobs' AND column_name = 'url') THEN
            INSERT INTO monsoon_jobs (kind, key, feed_id, episode_id, host, priority, url, feed_url, path)
              SELECT 'download', 'episode:' || id, 1, id, split_part(enclosure_url, '/', 3), id, enclosure_url, '{server_url}/feed.xml',
                     'bench/' || file_name
              FROM monsoon_episodes;
          ELSE
            INSERT INTO monsoon_jobs (kind, key, feed_id, episode_id, host, priority)
              SELECT 'download', 'episode:' || id, 1, id, split_part(enclosure_url, '/', 3), id FROM monsoon_episodes;
          END IF;
        END $$;
        """)
    if os.environ.get("CLUSTER_STATEMENTS"):
        pg.sql(database, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements; SELECT pg_stat_statements_reset()")
    pg.sql(database, "CHECKPOINT")
    wal_before = pg.sql(database, "SELECT pg_current_wal_lsn()")
    cpu_before, server_before = pg.cpu_seconds(), cpu_seconds(server.pid)
    folder = tempfile.mkdtemp(prefix="monsoon-bench-out-")
    started = time.monotonic()
    discard = [] if keep_files else ["--discard"]
    processes = [subprocess.Popen([monsoon, "worker", "--db", url, "-o", folder, *discard, "-j", str(slots), "--json",
                                   "--name", f"bench{i}", "--poll", "0.5"], stdout=subprocess.PIPE, text=True)
                 for i in range(workers)]
    # Polled from the hosts' counts and the partial index of scheduled jobs: counting the jobs
    # table itself each second would add a scan of it to the PostgreSQL CPU measured. One session
    # for all the polls: a new connection each time costs the server a process and cold caches
    # (a few milliseconds of CPU, counted with the workers').
    left = "SELECT coalesce(sum(ready + running), 0) + (SELECT count(*) FROM monsoon_jobs WHERE state = 'scheduled') FROM monsoon_hosts;\n"
    poller = subprocess.Popen(["psql", "-qAtX", "-v", "ON_ERROR_STOP=1", url], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    while True:
        poller.stdin.write(left)
        poller.stdin.flush()
        if int(poller.stdout.readline()) == 0:
            break
        time.sleep(0.25)
    elapsed = time.monotonic() - started
    poller.stdin.close()
    poller.wait()
    failed = int(pg.sql(database, "SELECT count(*) FROM monsoon_jobs WHERE state <> 'completed'"))
    if failed:
        raise SystemExit(f"{failed} jobs did not complete: {pg.sql(database, 'SELECT last_error FROM monsoon_jobs WHERE last_error IS NOT NULL LIMIT 1')}")
    worker_cpu = sum(cpu_seconds(process.pid) for process in processes)
    server_cpu = cpu_seconds(server.pid) - server_before
    summaries = []
    for process in processes:
        process.send_signal(signal.SIGTERM)
    for process in processes:
        out, _ = process.communicate(timeout=60)
        summaries.append(json.loads(out.strip().splitlines()[-1]))
    cpu = pg.cpu_seconds() - cpu_before
    wal = int(pg.sql(database, f"SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '{wal_before}')"))
    shutil.rmtree(folder, ignore_errors=True)
    if os.environ.get("CLUSTER_STATEMENTS"):
        print(pg.sql(database, "SELECT round(total_exec_time::numeric, 0) || ' ms ' || calls || ' calls: ' || left(regexp_replace(query, '\\s+', ' ', 'g'), 90) FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 12"), file=sys.stderr)
    p50 = sorted(s["claimP50"] for s in summaries if s["claimP50"] is not None)
    p99 = [s["claimP99"] for s in summaries if s["claimP99"] is not None]
    return {
        "build": build["name"], "case": name, "jobs": jobs, "seconds": elapsed, "jobsPerSecond": jobs / elapsed,
        "claims": sum(s["claims"] for s in summaries),
        "claimP50ms": 1000 * p50[len(p50) // 2] if p50 else None,
        "claimP99ms": 1000 * max(p99) if p99 else None,
        "postgresCPUmsPerJob": 1000 * cpu / jobs, "workerCPUmsPerJob": 1000 * worker_cpu / jobs,
        "serverCPUmsPerJob": 1000 * server_cpu / jobs, "walBytesPerJob": wal / jobs,
        "completedPerWorker": [s["completed"] for s in summaries],
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--slots", type=int, default=16)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--old-build", help="a folder with another build's monsoon, run before this one's in each case")
    arguments = parser.parse_args()
    builds = [{"name": "new", "folder": BUILD}]
    if arguments.old_build:
        builds.insert(0, {"name": "old", "folder": arguments.old_build})
    for binary in [SERVER] + [os.path.join(build["folder"], "monsoon") for build in builds]:
        if not os.access(binary, os.X_OK):
            raise SystemExit(f"{binary} is missing: run make release (make bench-cluster does)")
    # Every address of 127.0.0.0/8 reaches the server: 127.0.X.Y is a host of its own to the workers.
    server = subprocess.Popen([SERVER, "--generate", "1", "--size", "4k", "--any-address"], stdout=subprocess.PIPE, text=True)
    server_url = server.stdout.readline().strip()
    port = server_url.rsplit(":", 1)[1]
    pg = Postgres()
    results = []
    try:
        spread = "g % 1000"
        skewed = "CASE WHEN g % 2 = 0 THEN g % 20 ELSE 20 + g % 980 END"
        cases = [("1000 hosts", arguments.jobs, spread, False), ("20 hosts hold half", arguments.jobs, skewed, False),
                 ("1000 hosts, files", max(1, arguments.jobs // 10), spread, True)]
        for name, jobs, hosts, keep in cases:
            for build in builds:
                results.append(run_case(pg, server, server_url, port, build, name, jobs, hosts, arguments.workers, arguments.slots, keep))
    finally:
        pg.stop()
        server.terminate()
    if arguments.json:
        print(json.dumps(results, indent=2))
        return
    print(f"{arguments.jobs} download jobs, {arguments.workers} workers x {arguments.slots} slots, 2 connections per host, "
          f"4 KiB bodies, PostgreSQL {pg_bin().split('/')[-2]} with fsync and synchronous commits on")
    print(f"{'build':<5} {'case':<20} {'jobs':>7} {'jobs/s':>8} {'claims':>7} {'claim p50':>10} {'claim p99':>10} "
          f"{'PG CPU/job':>11} {'workers/job':>12} {'server/job':>11} {'WAL/job':>9}")
    for r in results:
        print(f"{r['build']:<5} {r['case']:<20} {r['jobs']:>7} {r['jobsPerSecond']:>8.0f} {r['claims']:>7} {r['claimP50ms']:>8.2f}ms "
              f"{r['claimP99ms']:>8.2f}ms {r['postgresCPUmsPerJob']:>9.3f}ms {r['workerCPUmsPerJob']:>10.3f}ms "
              f"{r['serverCPUmsPerJob']:>9.3f}ms {r['walBytesPerJob']:>7.0f} B")


if __name__ == "__main__":
    sys.exit(main())
