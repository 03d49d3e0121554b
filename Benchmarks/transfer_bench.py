#!/usr/bin/env python3
"""Downloads side by side: monsoon get, curl, curl + sync, aria2c, wget2 and a C program on
libcurl's multi interface, from a loopback nginx (sendfile on, access log off).

Workloads: catalogue (200 x 8 MiB), small (2,000 x 64 KiB), large (1 x 2 GiB), with N
transfers at a time; and over HTTPS (a self-signed certificate the clients are given),
tls1 (HTTP/1.1) and tls2 (HTTP/2): 1,000 x 64 KiB, N = 8, written to a tmpfs
($BENCH_TMPFS, /dev/shm by default) with Monsoon's home on disk, so the cost of a small
file's storage shows beside the network's. Tools alternate within each repetition; every run's files are checked
(count, bytes, SHA-256) or the run does not count. Reported per tool: median wall time,
MB/s, CPU seconds per GiB (user + system of the client), CPU milliseconds per download,
peak resident memory, with the spread (min-max) of the wall time and the ratios against
curl and against the C program.
"""
import argparse, hashlib, json, os, shutil, statistics, subprocess, sys, tempfile, time

WORKLOADS = {
    "catalogue": (200, 8 << 20),
    "small": (2000, 64 << 10),
    "large": (1, 2 << 30),
    "tls1": (1000, 64 << 10),
    "tls2": (1000, 64 << 10),
}
QUICK = {"catalogue": (50, 8 << 20), "small": (500, 64 << 10), "large": (1, 512 << 20), "tls1": (1000, 64 << 10), "tls2": (1000, 64 << 10)}
# The HTTPS workloads: one corpus, the tools the comparison needs, N = 8, files on a tmpfs.
TLS = {"tls1", "tls2"}
TLS_TOOLS = ["monsoon", "curl", "monsoon discard", "curl /dev/null"]


def make_corpus(root, name, count, size):
    """COUNT files of SIZE random bytes (made once, kept between runs), with their SHA-256."""
    folder = os.path.join(root, f"{name}-{count}x{size}")
    sums_path = folder + ".sha256.json"
    if os.path.exists(sums_path):
        with open(sums_path) as f:
            return folder, json.load(f)
    os.makedirs(folder, exist_ok=True)
    sums = {}
    for index in range(1, count + 1):
        file_name = f"f{index}.bin"
        digest = hashlib.sha256()
        with open(os.path.join(folder, file_name), "wb") as f:
            left = size
            while left > 0:
                block = os.urandom(min(left, 8 << 20))
                digest.update(block)
                f.write(block)
                left -= len(block)
        sums[file_name] = digest.hexdigest()
    with open(sums_path, "w") as f:
        json.dump(sums, f)
    return folder, sums


def free_port():
    probe = __import__("socket").socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


def start_nginx(root, scratch):
    """Starts nginx on three loopback ports: HTTP, HTTPS with HTTP/1.1 only, and HTTPS with
    HTTP/2 (chosen by ALPN, as every client here asks for it). Returns the process, the bases
    {"http", "tls1", "tls2"} and the certificate the clients must trust."""
    prefix = os.path.join(scratch, "nginx")
    os.makedirs(os.path.join(prefix, "logs"), exist_ok=True)
    port, tls1, tls2 = free_port(), free_port(), free_port()
    certificate, key = os.path.join(prefix, "cert.pem"), os.path.join(prefix, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-days", "2",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    os.chmod(key, 0o644)   # nginx's master reads it as root; the scratch folder is the bench's own
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
        root {root};
        location / {{ }}
    }}
    ssl_certificate {certificate};
    ssl_certificate_key {key};
    server {{
        listen 127.0.0.1:{tls1} ssl;
        root {root};
    }}
    server {{
        listen 127.0.0.1:{tls2} ssl http2;
        root {root};
    }}
}}
""")
    process = subprocess.Popen(["nginx", "-c", config, "-p", prefix], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            for each in (port, tls1, tls2):
                __import__("socket").create_connection(("127.0.0.1", each), timeout=0.1).close()
            bases = {"http": f"http://127.0.0.1:{port}", "tls1": f"https://127.0.0.1:{tls1}", "tls2": f"https://127.0.0.1:{tls2}"}
            return process, bases, certificate
        except OSError:
            time.sleep(0.05)
    sys.exit("nginx did not start")


def run(command, scratch):
    """Runs COMMAND; returns wall seconds, CPU seconds (user + system) and peak RSS in KiB.

    The peak comes from GNU time: a child forked from this Python process would inherit its
    resident size as a starting maximum (ru_maxrss survives exec)."""
    rss_file = os.path.join(scratch, "rss")
    start = time.monotonic()
    process = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", rss_file] + command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - start
    error = process.stderr.read().decode(errors="replace")
    process.stderr.close()
    if status != 0:
        raise RuntimeError(f"{command[0]} exited {status >> 8}: {error[-400:]}")
    with open(rss_file) as f:
        rss = int(f.read().split()[-1])
    return wall, usage.ru_utime + usage.ru_stime, rss


def verify(folder, sums, discarded):
    if discarded:
        return
    names = sorted(os.listdir(folder))
    if names != sorted(sums):
        raise RuntimeError(f"{len(names)} files in {folder}, expected {len(sums)} ({names[:3]}...)")
    for name, expected in sums.items():
        digest = hashlib.sha256()
        with open(os.path.join(folder, name), "rb") as f:
            while block := f.read(8 << 20):
                digest.update(block)
        if digest.hexdigest() != expected:
            raise RuntimeError(f"{name}: SHA-256 differs")


def tools(binary, reference, base, names, jobs, scratch, certificate=None):
    urls = [f"{base}/{name}" for name in names]
    url_file = os.path.join(scratch, "urls.txt")
    with open(url_file, "w") as f:
        f.write("\n".join(urls) + "\n")

    trust = ["--cacert", certificate] if certificate else []

    def home(folder):
        # The home stays on disk (in the scratch folder) when the files go to a tmpfs.
        return os.path.join(scratch, "home")

    def monsoon(folder):
        return [f"{binary}/monsoon", "--home", home(folder), "get", "--quiet", "-j", str(jobs), "--retries", "0", "--min-free", "0",
                *trust, "-o", folder, "-i", url_file]

    def curl(folder):
        return ["curl", "--silent", "--fail", *trust, "--parallel", "--parallel-max", str(jobs), "--output-dir", folder,
                "--config", url_config(folder)]

    def url_config(folder, null=False):
        path = os.path.join(scratch, "curl-null.config" if null else "curl.config")
        if not os.path.exists(path):
            with open(path, "w") as f:
                for url in urls:
                    f.write(f'url = "{url}"\noutput = "{"/dev/null" if null else url.rsplit("/", 1)[1]}"\n')
        return path

    return {
        "monsoon": (monsoon, False),
        "curl": (curl, False),
        "curl+sync": (lambda folder: ["sh", "-c", " ".join(f"'{part}'" for part in curl(folder)) + f" && sync -f '{folder}'"], False),
        "aria2c": (lambda folder: ["aria2c", "-q", "-j", str(jobs), "-x", "1", "-s", "1", "--file-allocation=none", "--allow-overwrite=true",
                                   "--auto-file-renaming=false", "--max-connection-per-server=16", "-d", folder, "-i", url_file], False),
        "wget2": (lambda folder: ["wget2", "-q", "--max-threads", str(jobs), "--no-robots", "-P", folder, "-i", url_file], False),
        "C multi": (lambda folder: ["sh", "-c", f"'{reference}' {jobs} file '{folder}' < '{url_file}'"], False),
        "C fsync": (lambda folder: ["sh", "-c", f"'{reference}' {jobs} fsync '{folder}' < '{url_file}'"], False),
        "C group": (lambda folder: ["sh", "-c", f"'{reference}' {jobs} group '{folder}' < '{url_file}'"], False),
        "C /dev/null": (lambda folder: ["sh", "-c", f"'{reference}' {jobs} null '{folder}' < '{url_file}'"], True),
        "monsoon discard": (lambda folder: [f"{binary}/monsoon", "--home", home(folder), "get", "--quiet", "-j", str(jobs), "--retries", "0",
                             *trust, "--discard", "-i", url_file], True),
        "curl /dev/null": (lambda folder: ["curl", "--silent", "--fail", *trust, "--parallel", "--parallel-max", str(jobs),
                                           "--config", url_config(folder, null=True)], True),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bin", default=".build/release")
    parser.add_argument("--reference", default=".build/bench/multi")
    parser.add_argument("--runs", type=int)
    parser.add_argument("--jobs", default="2,8,32", help="N values for catalogue and small (large runs with 1)")
    parser.add_argument("--workloads", default="catalogue,small,large,tls1,tls2")
    parser.add_argument("--quick", action="store_true", help="smaller workloads, N = 8, one run: a check of a change")
    parser.add_argument("--corpus", default=os.environ.get("BENCH_CORPUS", "/tmp/monsoon-bench-corpus"))
    parser.add_argument("--out", default="Benchmarks/results")
    parser.add_argument("--tools", help="comma-separated tool names to run (default: all)")
    args = parser.parse_args()
    binary, reference = os.path.abspath(args.bin), os.path.abspath(args.reference)
    sizes = QUICK if args.quick else WORKLOADS
    runs = args.runs or (1 if args.quick else 3)
    job_values = [8] if args.quick else [int(n) for n in args.jobs.split(",")]
    scratch = tempfile.mkdtemp(prefix="monsoon-bench-", dir=os.environ.get("BENCH_DIR", "/tmp"))
    os.chmod(scratch, 0o755)   # nginx's workers (another user when started as root) read through it
    root = os.path.join(scratch, "www")
    os.makedirs(root)
    results = []
    nginx = None
    try:
        plans = []
        for workload in args.workloads.split(","):
            count, size = sizes[workload]
            corpus = "tls" if workload in TLS else workload
            folder, sums = make_corpus(args.corpus, corpus, count, size)
            if not os.path.exists(os.path.join(root, corpus)):
                os.symlink(folder, os.path.join(root, corpus))
            for jobs in ([1] if workload == "large" else [8] if workload in TLS else job_values):
                plans.append((workload, count, size, jobs, sums))
        nginx, bases, certificate = start_nginx(root, scratch)
        tmpfs = os.environ.get("BENCH_TMPFS", "/dev/shm")
        for workload, count, size, jobs, sums in plans:
            if workload in TLS:
                table = tools(binary, reference, f"{bases[workload]}/tls", sorted(sums), jobs, scratch, certificate)
                table = {name: table[name] for name in TLS_TOOLS}
                out = tempfile.mkdtemp(prefix="monsoon-bench-", dir=tmpfs)
            else:
                table = tools(binary, reference, f"{bases['http']}/{workload}", sorted(sums), jobs, scratch)
                out = scratch
            if args.tools:
                table = {name: table[name] for name in args.tools.split(",") if name in table}
            measured = {name: [] for name in table}
            for repetition in range(runs + 1):   # the first repetition warms the page cache and nginx
                for name, (command, discarded) in table.items():
                    folder = os.path.join(out, "out")
                    shutil.rmtree(folder, ignore_errors=True)
                    shutil.rmtree(os.path.join(scratch, "home"), ignore_errors=True)
                    os.makedirs(folder)
                    try:
                        wall, cpu, rss = run(command(folder), scratch)
                        verify(folder, sums, discarded)
                    except (RuntimeError, FileNotFoundError) as error:
                        print(f"  {workload} N={jobs} {name}: not counted: {error}", file=sys.stderr)
                        continue
                    if repetition > 0:
                        measured[name].append((wall, cpu, rss))
                    subprocess.run(["sync"])   # the next tool starts with no dirty pages of this one
            if out != scratch:
                shutil.rmtree(out, ignore_errors=True)
            for config in ("curl.config", "curl-null.config"):
                if os.path.exists(os.path.join(scratch, config)):
                    os.remove(os.path.join(scratch, config))
            total = count * size
            row = {"workload": workload, "files": count, "size": size, "jobs": jobs, "runs": runs, "tools": {}}
            for name, samples in measured.items():
                if not samples:
                    continue
                walls = [s[0] for s in samples]
                wall = statistics.median(walls)
                cpu = statistics.median(s[1] for s in samples)
                row["tools"][name] = {
                    "wall_s": wall, "wall_min_s": min(walls), "wall_max_s": max(walls),
                    "mb_s": total / wall / 1e6, "cpu_s_per_gib": cpu / (total / (1 << 30)),
                    "cpu_ms_per_download": cpu * 1000 / count, "peak_rss_mib": max(s[2] for s in samples) / 1024,
                }
            results.append(row)
            report(row)
    finally:
        if nginx:
            nginx.terminate()
            nginx.wait()
        shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "transfers-quick.json" if args.quick else "transfers.json")
    with open(path, "w") as f:
        json.dump({"date": time.strftime("%Y-%m-%d"), "versions": versions(binary), "results": results}, f, indent=2)
    print(f"written: {path}")


def report(row):
    tools = row["tools"]
    curl, reference = tools.get("curl"), tools.get("C multi")
    print(f"\n{row['workload']}: {row['files']} x {human(row['size'])}, N = {row['jobs']}, median of {row['runs']} after a warm-up")
    print(f"  {'tool':15} {'wall s':>7} {'spread':>13} {'MB/s':>7} {'CPU s/GiB':>9} {'CPU ms/dl':>9} {'RSS MiB':>7} {'MB/s vs curl':>12} {'vs C':>6} {'CPU vs curl':>11}")
    for name, t in tools.items():
        versus_curl = t["mb_s"] / curl["mb_s"] if curl else float("nan")
        versus_c = t["mb_s"] / reference["mb_s"] if reference else float("nan")
        cpu_ratio = t["cpu_s_per_gib"] / curl["cpu_s_per_gib"] if curl else float("nan")
        print(f"  {name:15} {t['wall_s']:7.2f} {t['wall_min_s']:6.2f}-{t['wall_max_s']:<6.2f} {t['mb_s']:7.0f} {t['cpu_s_per_gib']:9.2f} "
              f"{t['cpu_ms_per_download']:9.2f} {t['peak_rss_mib']:7.1f} {versus_curl:11.2f}x {versus_c:5.2f}x {cpu_ratio:10.2f}x")


def human(size):
    return f"{size >> 30} GiB" if size >= 1 << 30 else f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"


def versions(binary):
    def first_line(command):
        try:
            return subprocess.run(command, capture_output=True, text=True).stdout.splitlines()[0]
        except (OSError, IndexError):
            return "missing"
    return {"monsoon": first_line([f"{binary}/monsoon", "--version"]), "curl": first_line(["curl", "--version"]),
            "aria2c": first_line(["aria2c", "--version"]), "wget2": first_line(["wget2", "--version"]),
            "nginx": subprocess.run(["nginx", "-v"], capture_output=True, text=True).stderr.strip()}


if __name__ == "__main__":
    main()
