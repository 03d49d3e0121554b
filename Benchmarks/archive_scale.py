#!/usr/bin/env python3
"""Archive at scale (issue 48): `monsoon archive` of 50 feeds x 200 episodes of 16-256 KiB
(1.3 GiB), every enclosure behind two 302 redirects, from a loopback nginx, 8 at a time,
against curl fetching the same enclosure URLs (`--parallel --parallel-max 8 -L`): what a whole
archive costs beside the transfers alone.

The world's files are made once, from seeded random bytes, in .build/bench/archive-scale (kept
between runs, made again when incomplete); the feeds, which name nginx's port, are written for
each invocation. Tools alternate within each repetition, after a warm-up run of curl that fills
the page cache; every run writes into a fresh folder (monsoon with a fresh MONSOON_HOME), kept
until the end (in $BENCH_DIR, /tmp by default: 1.4 GB a run; on a tmpfs, removed once
checked). --tmpfs writes the episodes to a tmpfs and keeps monsoon's home on disk: the tools'
own cost without the file system's (this machine's makes the creation of a file after many
deletions cost up to 0.5 ms of CPU, at random). Every run's episodes are checked (count and
SHA-256): a mismatch fails the benchmark.
Reported per tool: median wall time and its spread, CPU seconds (user + system, children
included), CPU milliseconds per episode, peak resident memory, and each monsoon's ratios
against curl.

  archive_scale.py [--runs N] [--binary [NAME=]PATH ...] [--feeds F] [--episodes E] [--json]
                   [--tmpfs [DIR]] [--perf PREFIX]

--binary may be given more than once (a before and an after in the same run); the default is
the release build, .build/release/monsoon (`make bench` builds it). --perf PREFIX records one
more run of each monsoon under `perf record -g` and writes PREFIX-NAME.txt: the top of
`perf report --no-children --sort dso,symbol`, the whole of `--sort dso`, and the top of the
program's own symbols.
"""
import argparse, email.utils, hashlib, json, os, random, re, shutil, socket, statistics, subprocess, sys, tempfile, time
from datetime import datetime, timedelta, timezone

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORLDS = os.path.join(ROOT, ".build", "bench", "archive-scale")
SMALLEST, LARGEST = 16 << 10, 256 << 10
JOBS = 8


def make_world(feeds, episodes):
    """The episodes' files, FEEDS x EPISODES of seeded random bytes, and their SHA-256 by path
    (files/pF/eE.mp3), made once. The seed is the episode's path: a smaller world is a part of the
    larger one, byte for byte."""
    folder = os.path.join(WORLDS, f"{feeds}x{episodes}")
    sums_path = os.path.join(folder, "sha256.json")   # written last: its presence means complete
    if os.path.exists(sums_path):
        with open(sums_path) as f:
            return folder, json.load(f)
    shutil.rmtree(folder, ignore_errors=True)
    print(f"Making the world: {feeds} feeds x {episodes} episodes in {folder}", file=sys.stderr)
    sums = {}
    for feed in range(1, feeds + 1):
        os.makedirs(os.path.join(folder, "files", f"p{feed}"))
        for episode in range(1, episodes + 1):
            path = f"p{feed}/e{episode}.mp3"
            generator = random.Random(path)
            body = generator.randbytes(generator.randint(SMALLEST, LARGEST))
            with open(os.path.join(folder, "files", path), "wb") as f:
                f.write(body)
            sums[path] = {"size": len(body), "sha256": hashlib.sha256(body).hexdigest()}
    with open(sums_path + ".new", "w") as f:
        json.dump(sums, f)
    os.rename(sums_path + ".new", sums_path)
    return folder, sums


def write_feeds(www, base, feeds, episodes, sums):
    """Static RSS feeds under www/feeds (they name the port, so they are written for each
    invocation) and curl's configuration: each enclosure's first URL, /r1/..., and a flat file name."""
    os.makedirs(os.path.join(www, "feeds"))
    first = datetime(2020, 1, 1, 6, tzinfo=timezone.utc)
    for feed in range(1, feeds + 1):
        items = []
        for episode in range(1, episodes + 1):
            path = f"p{feed}/e{episode}.mp3"
            published = email.utils.format_datetime(first + timedelta(days=episode))
            items.append(f"""<item><title>Episode {episode} of podcast {feed}</title><guid isPermaLink="false">{path}</guid>
<pubDate>{published}</pubDate><enclosure url="{base}/r1/{path}" length="{sums[path]['size']}" type="audio/mpeg"/></item>""")
        with open(os.path.join(www, "feeds", f"p{feed}.xml"), "w") as f:
            f.write(f"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>Podcast {feed} at scale</title><link>{base}/</link>
<description>Issue 48's archive at scale.</description>
{chr(10).join(items)}
</channel></rss>
""")
    config = os.path.join(www, "..", "curl.config")
    with open(config, "w") as f:
        for path in sums:
            f.write(f'url = "{base}/r1/{path}"\noutput = "{path.replace("/", "-")}"\n')
    return [f"{base}/feeds/p{feed}.xml" for feed in range(1, feeds + 1)], os.path.abspath(config)


def free_port():
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


def start_nginx(www, scratch, port):
    """nginx on loopback as Benchmarks/transfer_bench.py starts it (sendfile on, access log off),
    with the two tracking hops: /r1/X answers 302 to /r2/X, which answers 302 to /files/X."""
    prefix = os.path.join(scratch, "nginx")
    os.makedirs(os.path.join(prefix, "logs"), exist_ok=True)
    config = os.path.join(prefix, "nginx.conf")
    with open(config, "w") as f:
        f.write(f"""
worker_processes 1;
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/logs/error.log error;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 100000;
    server {{
        listen 127.0.0.1:{port};
        root {www};
        location / {{ }}
        location ~ ^/r1/(.*)$ {{ return 302 /r2/$1; }}
        location ~ ^/r2/(.*)$ {{ return 302 /files/$1; }}
    }}
}}
""")
    process = subprocess.Popen(["nginx", "-c", config, "-p", prefix], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return process
        except OSError:
            time.sleep(0.05)   # polling nginx's start, at most 5 s
    sys.exit("nginx did not start")


def run(command, scratch, env=None):
    """Runs COMMAND; returns wall seconds, CPU seconds (user + system, from wait4, its children
    included) and peak RSS in KiB.

    The peak comes from GNU time: a child forked from this Python process would inherit its
    resident size as a starting maximum (ru_maxrss survives exec)."""
    rss_file = os.path.join(scratch, "rss")
    start = time.monotonic()
    process = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", rss_file] + command, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    errors = process.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - start
    process.stderr.close()
    if status != 0:
        sys.exit(f"{command[0]} exited {os.waitstatus_to_exitcode(status)}: {errors[-600:]}")
    with open(rss_file) as f:
        rss = int(f.read().split()[-1])
    return wall, usage.ru_utime + usage.ru_stime, rss


def digest(path):
    sha = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            sha.update(block)
    return sha.hexdigest()


def verify(tool, folder, sums):
    """Every episode in FOLDER (any names, any depth; monsoon's manifests and feed copies aside)
    byte-exact, and no more nor fewer than the world's; exits otherwise."""
    found = []
    for directory, _, names in os.walk(folder):
        found += [digest(os.path.join(directory, name)) for name in names if name.endswith(".mp3")]
    expected = sorted(entry["sha256"] for entry in sums.values())
    if sorted(found) != expected:
        missing = len(set(expected) - set(found))
        sys.exit(f"{tool}: {len(found)} episodes in {folder}, expected {len(expected)}; {missing} missing or differing")


def monsoon_command(binary, feed_urls, out):
    return [binary, "archive", "--quiet", "-j", str(JOBS), "-o", out] + feed_urls


def curl_command(config, out):
    return ["curl", "--parallel", "--parallel-max", str(JOBS), "-L", "-s", "--fail", "--output-dir", out, "--config", config]


def summary(samples, episodes):
    walls, cpus = [s[0] for s in samples], [s[1] for s in samples]
    cpu = statistics.median(cpus)
    return {"wall_s": statistics.median(walls), "wall_min_s": min(walls), "wall_max_s": max(walls),
            "cpu_s": cpu, "cpu_min_s": min(cpus), "cpu_max_s": max(cpus), "cpu_ms_per_episode": cpu * 1000 / episodes,
            "peak_rss_mib": max(s[2] for s in samples) / 1024, "runs": [list(s) for s in samples]}


def report(result):
    tools, curl = result["tools"], result["tools"]["curl"]
    print(f"\narchive at scale: {result['feeds']} feeds x {result['episodes_per_feed']} episodes "
          f"({result['bytes'] / (1 << 30):.2f} GiB, 16-256 KiB), two 302 hops each, N = {JOBS}, "
          f"median of {result['runs']} after a warm-up; episodes on {result['episodes_on']}")
    print(f"  {'tool':18} {'wall s':>7} {'spread':>11} {'CPU s':>7} {'spread':>11} {'CPU ms/ep':>9} {'peak MiB':>8} "
          f"{'speed vs curl':>13} {'CPU/ep vs curl':>14}")
    for name, t in tools.items():
        speed = curl["wall_s"] / t["wall_s"]
        cpu = t["cpu_ms_per_episode"] / curl["cpu_ms_per_episode"]
        print(f"  {name:18} {t['wall_s']:7.2f} {t['wall_min_s']:5.2f}-{t['wall_max_s']:<5.2f} {t['cpu_s']:7.2f} "
              f"{t['cpu_min_s']:5.2f}-{t['cpu_max_s']:<5.2f} {t['cpu_ms_per_episode']:9.2f} {t['peak_rss_mib']:8.1f} "
              f"{speed:12.2f}x {cpu:13.2f}x")
    print("  targets (issue 48): speed >= x0.5 of curl, CPU per episode <= x2.5 of curl's, peak <= 64 MiB")


MALLOC = {"malloc", "_int_malloc", "free", "cfree", "_int_free", "realloc", "_int_realloc", "calloc", "malloc_consolidate",
          "unlink_chunk", "posix_memalign", "_int_memalign", "_mid_memalign", "aligned_alloc", "tcache_init", "malloc_usable_size"}


def origins(report, program):
    """Shares of a `perf report -n --sort dso,symbol --no-demangle` by where the code
    comes from: the kernel, each library, malloc, and within PROGRAM (the Swift runtime and
    Foundation are linked into it) the runtime, the standard library, Foundation and Monsoon's
    own modules."""
    samples = {}
    for line in report.splitlines():
        match = re.match(r"\s*[\d.]+%\s+(\d+)\s+(\S+)\s+\[.\]\s+(\S+)", line)
        if not match:
            continue
        count, dso, symbol = int(match[1]), match[2], match[3]
        if dso == "[kernel.kallsyms]":
            where = "kernel"
        elif dso.startswith("libc.so"):
            where = "libc: malloc and free" if symbol.split("@")[0] in MALLOC else "libc: the rest (memmove, ...)"
        elif dso == program:
            module = re.match(r"\$s(\d+)", symbol)
            name = symbol[len(module[0]):len(module[0]) + int(module[1])] if module else ""
            if symbol.startswith(("swift_", "_swift_", "__swift", "_Z", "$sSc")):   # _Z: C++, in this binary the runtime's
                where = f"{program}: Swift runtime (and concurrency)"
            elif symbol.startswith(("$ss", "$sS")):
                where = f"{program}: Swift standard library"
            elif name.startswith(("Foundation", "_Foundation")):
                where = f"{program}: Foundation"
            elif name.lower().startswith("monsoon"):
                where = f"{program}: Monsoon's own modules"
            elif symbol.startswith(("_dispatch", "dispatch_")):
                where = f"{program}: Dispatch"
            else:
                where = f"{program}: other"
        elif dso.startswith("libcrypto"):
            where = "libcrypto (SHA-256: over plain HTTP, curl needs no TLS)"
        else:
            where = dso.split(".so")[0]
        samples[where] = samples.get(where, 0) + count
    total = sum(samples.values()) or 1
    return sorted(((where, count * 100 / total) for where, count in samples.items()), key=lambda item: -item[1])


class Folders:
    """Where each run writes: its episodes in a new folder under FILES, monsoon's home in a new
    folder under SCRATCH (on disk unless $BENCH_DIR says otherwise).

    On a disk every run's episodes are kept until the end: on ext4 without a journal (this
    machine's), creating files within a minute of deleting thousands costs the kernel a scan of
    the recently deleted inodes for each one, which would be measured as the next tool's time.
    A tmpfs has no such cost and too little room: there they go once checked."""

    def __init__(self, scratch, files):
        self.scratch, self.files = scratch, files
        self.tmpfs = subprocess.run(["stat", "-f", "-c", "%T", files], capture_output=True, text=True).stdout.strip() == "tmpfs"

    def fresh(self, label):
        out, home = os.path.join(self.files, label), os.path.join(self.scratch, "homes", label)
        os.makedirs(out)
        return out, home

    def done(self, out):
        if self.tmpfs:
            shutil.rmtree(out)


def profile(name, binary, feed_urls, folders, prefix):
    """One more run of BINARY under `perf record -g`; its report as text in PREFIX-NAME.txt."""
    out, home = folders.fresh(f"perf-{name}")
    data = os.path.join(folders.scratch, "perf.data")
    env = dict(os.environ, MONSOON_HOME=home)
    subprocess.run(["perf", "record", "-q", "-g", "-o", data, "--"] + monsoon_command(binary, feed_urls, out),
                   env=env, check=True, stdout=subprocess.DEVNULL)

    def perf_report(sort, *more, demangle=True):
        text = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children", "-g", "none", "--sort", sort, *more],
                              capture_output=True, text=True, check=True).stdout
        if demangle and shutil.which("swift-demangle"):   # perf demangles C++ but not Swift
            text = subprocess.run(["swift-demangle", "--simplified"], input=text, capture_output=True, text=True, check=True).stdout
        return text

    def lines(text):
        # perf pads each row to its widest symbol and ends it with two empty call-graph columns.
        return [re.sub(r"(\s+-){0,2}\s*$", "", line)[:200] for line in text.splitlines() if line.strip() and not line.startswith("#")]

    symbols = lines(perf_report("dso,symbol", "--percent-limit", "0.2"))
    samples = next((line for line in perf_report("dso").splitlines() if line.startswith("# Samples")), "")
    path = f"{prefix}-{name}.txt"
    with open(path, "w") as f:
        f.write(f"{binary} archive, {len(feed_urls)} feeds, -j {JOBS}: perf record -g, one run ({samples.lstrip('# ')})\n\n")
        f.write("== perf report --no-children --sort dso,symbol (top 25)\n" + "\n".join(symbols[:25]) + "\n\n")
        f.write("== perf report --no-children --sort dso\n" + "\n".join(lines(perf_report("dso", "--percent-limit", "0.2"))) + "\n\n")
        f.write("== by origin (every sample; the program's split by its symbols' modules)\n")
        for where, share in origins(perf_report("dso,symbol", "-n", "--no-demangle", demangle=False), os.path.basename(binary)):
            f.write(f"  {share:6.2f}%  {where}\n")
        # Where the kernel's share goes, by the system call it was in (inclusive; page faults,
        # interrupts and the scheduler's switches come under none).
        calls = [line for line in lines(perf_report("symbol", "--children", "--dsos", "[kernel.kallsyms]"))
                 if re.search(r"\] (__x64_sys_|__do_sys_|do_syscall_64$)", line)]
        f.write("\n== the kernel by system call (perf report --children, percent of all)\n" + "\n".join(calls[:15]) + "\n")
        # The program's own share split by symbol: the Swift runtime's and the standard library's beside ours.
        f.write(f"\n== perf report --no-children --sort symbol --dsos {os.path.basename(binary)} (top 25, percent of all)\n"
                + "\n".join(lines(perf_report("symbol", "--dsos", os.path.basename(binary), "--percent-limit", "0.1"))[:25]) + "\n")
    os.remove(data)
    folders.done(out)
    subprocess.run(["sync"])
    print(f"written: {path}", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--feeds", type=int, default=50)
    parser.add_argument("--episodes", type=int, default=200, help="episodes per feed")
    parser.add_argument("--binary", action="append", metavar="[NAME=]PATH",
                        help="a monsoon to run (repeatable; default: .build/release/monsoon)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of the table")
    parser.add_argument("--perf", metavar="PREFIX", help="also profile one run of each monsoon into PREFIX-NAME.txt")
    parser.add_argument("--tmpfs", nargs="?", const=os.environ.get("BENCH_TMPFS", "/dev/shm"), metavar="DIR",
                        help="the episodes to a tmpfs (DIR, default $BENCH_TMPFS or /dev/shm), monsoon's home on disk")
    parser.add_argument("--out", default=os.path.join(ROOT, "Benchmarks", "results"))
    args = parser.parse_args()
    if min(args.runs, args.feeds, args.episodes) < 1:
        parser.error("--runs, --feeds and --episodes take 1 or more")
    binaries = {}
    for each in args.binary or [os.path.join(ROOT, ".build", "release", "monsoon")]:
        name, _, path = each.rpartition("=")
        name = name or ("monsoon" if not binaries else f"monsoon {len(binaries) + 1}")
        if not os.access(path, os.X_OK):
            sys.exit(f"{path}: no such program (make release builds .build/release/monsoon)")
        binaries[name] = os.path.abspath(path)
    world, sums = make_world(args.feeds, args.episodes)
    count = len(sums)
    scratch = tempfile.mkdtemp(prefix="archive-scale-", dir=os.environ.get("BENCH_DIR", "/tmp"))
    os.chmod(scratch, 0o755)   # nginx's workers (another user when started as root) read through it
    files = tempfile.mkdtemp(prefix="archive-scale-", dir=args.tmpfs) if args.tmpfs else os.path.join(scratch, "runs")
    folders = Folders(scratch, files)
    size = sum(entry["size"] for entry in sums.values())
    kept = 1 if folders.tmpfs else 1 + args.runs * (len(binaries) + 1) + (len(binaries) if args.perf else 0)
    needed = size * kept + (1 << 30)
    if shutil.disk_usage(os.path.dirname(folders.files)).free < needed:
        shutil.rmtree(scratch)
        shutil.rmtree(folders.files, ignore_errors=True)
        sys.exit(f"{os.path.dirname(folders.files)}: {needed / 1e9:.1f} GB free needed (on a disk every run's files are kept "
                 "to the end); set BENCH_DIR to another folder, or give fewer --runs")
    www = os.path.join(scratch, "www")
    os.makedirs(www)
    os.symlink(os.path.join(world, "files"), os.path.join(www, "files"))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    feed_urls, config = write_feeds(www, base, args.feeds, args.episodes, sums)
    nginx = start_nginx(www, scratch, port)
    tools = {name: (lambda out, binary=binary: monsoon_command(binary, feed_urls, out)) for name, binary in binaries.items()}
    tools["curl"] = lambda out: curl_command(config, out)
    measured = {name: [] for name in tools}
    try:
        for repetition in range(args.runs + 1):   # the first, curl alone, fills the page cache and warms nginx
            for name, command in tools.items():
                if repetition == 0 and name != "curl":
                    continue
                out, home = folders.fresh(f"{repetition}-{name}")
                wall, cpu, rss = run(command(out), scratch, env=dict(os.environ, MONSOON_HOME=home))
                verify(name, out, sums)
                folders.done(out)
                subprocess.run(["sync"])   # the next tool starts with no dirty pages of this one
                if repetition > 0:
                    measured[name].append((wall, cpu, rss))
                    print(f"  run {repetition} {name}: {wall:.2f} s, {cpu:.2f} s CPU, {rss / 1024:.1f} MiB", file=sys.stderr)
        if args.perf:
            for name, binary in binaries.items():
                profile(name.replace(" ", "-"), binary, feed_urls, folders, args.perf)
    finally:
        nginx.terminate()
        nginx.wait()
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.rmtree(folders.files, ignore_errors=True)
    result = {"date": time.strftime("%Y-%m-%d"), "feeds": args.feeds, "episodes_per_feed": args.episodes, "episodes": count,
              "bytes": size, "jobs": JOBS, "runs": args.runs, "episodes_on": "tmpfs" if folders.tmpfs else "disk",
              "versions": {name: first_line([binary, "--version"]) for name, binary in binaries.items()}
              | {"curl": first_line(["curl", "--version"]),
                 "nginx": subprocess.run(["nginx", "-v"], capture_output=True, text=True).stderr.strip()},
              "tools": {name: summary(samples, count) for name, samples in measured.items()}}
    curl = result["tools"]["curl"]
    for name in binaries:
        t = result["tools"][name]
        t["speed_vs_curl"] = curl["wall_s"] / t["wall_s"]
        t["cpu_per_episode_vs_curl"] = t["cpu_ms_per_episode"] / curl["cpu_ms_per_episode"]
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "archive-scale-tmpfs.json" if args.tmpfs else "archive-scale.json")
    with open(path, "w") as f:
        json.dump(result, f, indent=2)
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        print()
    else:
        report(result)
        print(f"written: {path}")


def first_line(command):
    try:
        return subprocess.run(command, capture_output=True, text=True).stdout.splitlines()[0]
    except (OSError, IndexError):
        return "missing"


if __name__ == "__main__":
    main()
