#!/usr/bin/env python3
"""monsoon get against the curl command line, on the same files over loopback.

Serves COUNT pattern files of SIZE bytes with monsoon-testserver, then downloads them
with each tool RUNS times (after a warm-up), N at a time, into a fresh folder on disk.
Reports medians of wall time, CPU time (user + system) per GiB and peak resident memory,
and the ratios monsoon / curl.
"""
import argparse, json, os, resource, shutil, statistics, subprocess, sys, tempfile, time

def run_measured(command, cwd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    completed = subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if completed.returncode != 0:
        sys.exit(f"{command[0]} failed ({completed.returncode}): {completed.stderr.decode()[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu

def peak_rss_kib(command, cwd):
    # ru_maxrss of RUSAGE_CHILDREN is the largest child so far; measure in a wrapper process.
    out = subprocess.run(["/usr/bin/time", "-f", "%M"] + command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return int(out.stderr.decode().strip().splitlines()[-1])

def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bin", default=".build/release")
    parser.add_argument("--count", type=int, default=4)
    parser.add_argument("--size", type=int, default=512 << 20)
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", default="Benchmarks/results")
    args = parser.parse_args()
    args.bin = os.path.abspath(args.bin)

    server = subprocess.Popen([f"{args.bin}/monsoon-testserver", "--generate", str(args.count), "--size", str(args.size)],
                              stdout=subprocess.PIPE, text=True)
    base = server.stdout.readline().strip()
    urls = [f"{base}/file{i}.bin" for i in range(1, args.count + 1)]
    scratch = tempfile.mkdtemp(prefix="monsoon-bench-", dir=os.environ.get("BENCH_DIR", "/tmp"))
    def curl(folder):
        return ["curl", "--silent", "--fail", "--parallel", "--parallel-max", str(args.jobs), "--output-dir", folder] \
            + [part for url in urls for part in ("-o", url.rsplit("/", 1)[1], url)]
    tools = {
        "monsoon": lambda folder: [f"{args.bin}/monsoon", "get", "--quiet", "-j", str(args.jobs), "--min-free", "0", "-o", folder] + urls,
        "curl": lambda folder: curl(folder),
        # Monsoon flushes every finished file to disk (fsync, rename, folder fsync) before it
        # calls it done; curl does not. This row adds the same durability to curl's work.
        "curl+sync": lambda folder: ["sh", "-c", " ".join(curl(folder)) + f" && sync {folder}/*"],
    }
    total_gib = args.count * args.size / (1 << 30)
    results = {}
    try:
        for name, command in tools.items():
            walls, cpus = [], []
            for run in range(args.runs + 1):
                folder = os.path.join(scratch, f"{name}-{run}")
                os.makedirs(folder)
                wall, cpu = run_measured(command(folder), scratch)
                shutil.rmtree(folder)
                if run > 0:   # the first run warms the page cache and the server
                    walls.append(wall)
                    cpus.append(cpu)
            folder = os.path.join(scratch, f"{name}-rss")
            os.makedirs(folder)
            rss = peak_rss_kib(command(folder), scratch)
            shutil.rmtree(folder)
            wall = statistics.median(walls)
            results[name] = {"wall_s": wall, "throughput_mib_s": args.count * args.size / wall / (1 << 20),
                             "cpu_s_per_gib": statistics.median(cpus) / total_gib, "peak_rss_mib": rss / 1024}
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(scratch, ignore_errors=True)

    m, c, s = results["monsoon"], results["curl"], results["curl+sync"]
    ratios = {"throughput": m["throughput_mib_s"] / c["throughput_mib_s"], "cpu_per_gib": m["cpu_s_per_gib"] / c["cpu_s_per_gib"],
              "peak_rss": m["peak_rss_mib"] / c["peak_rss_mib"], "throughput_vs_durable_curl": m["throughput_mib_s"] / s["throughput_mib_s"]}
    print(f"{args.count} files x {args.size >> 20} MiB, {args.jobs} at a time, median of {args.runs} runs (after a warm-up)")
    print(f"{'tool':9} {'wall s':>8} {'MiB/s':>8} {'CPU s/GiB':>10} {'peak RSS MiB':>13}")
    for name, r in results.items():
        print(f"{name:9} {r['wall_s']:8.2f} {r['throughput_mib_s']:8.0f} {r['cpu_s_per_gib']:10.3f} {r['peak_rss_mib']:13.1f}")
    print(f"monsoon/curl: throughput x{ratios['throughput']:.2f}, CPU per GiB x{ratios['cpu_per_gib']:.2f}, peak RSS x{ratios['peak_rss']:.2f}")
    print(f"monsoon/(curl+sync): throughput x{ratios['throughput_vs_durable_curl']:.2f}")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "get-vs-curl.json"), "w") as f:
        json.dump({"parameters": vars(args), "results": results, "ratios": ratios}, f, indent=2)

if __name__ == "__main__":
    main()
