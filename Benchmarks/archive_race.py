#!/usr/bin/env python3
"""The archive race: `monsoon archive` against podcast-archiver and gPodder's `gpo`, each with its
defaults, on the same generated world (monsoon-testserver --world): 6 feeds x 30 episodes of
256 KiB to 2 MiB, every enclosure behind a two-hop tracking redirect (two host names) and a
120 ms first byte; with --faults one episode in 12 answers 503 once and one in 17 is cut short
once. A fresh server and fresh folders for every run; the tools alternate within each
repetition. Reported per tool: median wall time (and the spread), episodes byte-exact after the
first run (SHA-256 against the server's list), and the ratio against monsoon.

  archive_race.py [--runs N] [--faults|--no-faults|--both] [--tools monsoon,podcast-archiver,gpo]

podcast-archiver is installed from PyPI into .build/archive-race-venv; gpo comes from Debian's
gpodder (bench.sh installs it). A tool that is missing is left out and said so.
"""
import argparse, hashlib, os, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, ".build", "archive-race-venv")
MONSOON = os.path.join(ROOT, ".build", "release", "monsoon")
SERVER = os.path.join(ROOT, ".build", "release", "monsoon-testserver")
FEEDS, EPISODES = 6, 30


def podcast_archiver():
    path = os.path.join(VENV, "bin", "podcast-archiver")
    if not os.path.exists(path):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([os.path.join(VENV, "bin", "pip"), "install", "-q", "podcast-archiver==2.3.5"], check=True)
    return path


def start_world(faults):
    arguments = [SERVER, "--world", str(FEEDS), "--episodes", str(EPISODES)] + (["--faults"] if faults else [])
    process = subprocess.Popen(arguments, stdout=subprocess.PIPE, text=True)
    base = process.stdout.readline().strip()
    import urllib.request
    expected = set()
    with urllib.request.urlopen(base + "/world/sha256.txt") as answer:
        for line in answer.read().decode().splitlines():
            expected.add(line.split()[1])
    return process, base, expected


def exact(folder, expected):
    """How many of the world's episodes are in `folder` byte for byte (any names, any depth)."""
    found = set()
    for directory, _, names in os.walk(folder):
        for name in names:
            if not name.endswith(".mp3"):
                continue
            digest = hashlib.sha256()
            with open(os.path.join(directory, name), "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    digest.update(block)
            if digest.hexdigest() in expected:
                found.add(digest.hexdigest())
    return len(found)


def run(tool, base, scratch):
    feeds = [f"{base}/world/feed{index}.xml" for index in range(1, FEEDS + 1)]
    out = os.path.join(scratch, "out")
    os.makedirs(out)
    env = dict(os.environ)
    if tool == "monsoon":
        env["MONSOON_HOME"] = os.path.join(scratch, "home")
        command = [MONSOON, "archive", "--quiet", "-o", out] + feeds
    elif tool == "podcast-archiver":
        command = [podcast_archiver(), "--quiet", "--dir", out, "--database", os.path.join(scratch, "pa.db"),
                   "--config", os.path.join(scratch, "none.yaml")]
        for feed in feeds:
            command += ["--feed", feed]
        open(os.path.join(scratch, "none.yaml"), "w").close()
    else:
        env["GPODDER_HOME"] = os.path.join(scratch, "gpodder")
        env["GPODDER_DOWNLOAD_DIR"] = out
        for feed in feeds:
            subprocess.run(["gpo", "subscribe", feed], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        command = ["gpo", "download"]
    start = time.monotonic()
    result = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - start
    if tool == "gpo":
        # Subscribing is not downloading: only `gpo download` is timed, as only `archive` is.
        pass
    return wall, result.returncode, out, result.stderr[-400:]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--faults", dest="modes", action="store_const", const=[True])
    group.add_argument("--no-faults", dest="modes", action="store_const", const=[False])
    group.add_argument("--both", dest="modes", action="store_const", const=[False, True])
    parser.add_argument("--tools", default="monsoon,podcast-archiver,gpo")
    arguments = parser.parse_args()
    modes = arguments.modes or [False, True]
    tools = []
    for tool in arguments.tools.split(","):
        if tool == "gpo" and shutil.which("gpo") is None:
            print("gpo: not installed (apt-get install gpodder); left out")
            continue
        if tool == "podcast-archiver":
            try:
                podcast_archiver()
            except Exception as error:   # noqa: BLE001 (a bench that cannot install a peer says so and goes on)
                print(f"podcast-archiver: cannot be installed ({error}); left out")
                continue
        tools.append(tool)
    for faults in modes:
        print(f"\n{FEEDS} feeds x {EPISODES} episodes, two-hop redirects, 120 ms first byte, "
              + ("one in 12 answers 503 once, one in 17 is cut short once" if faults else "no faults")
              + f"; median of {arguments.runs}")
        walls = {tool: [] for tool in tools}
        exacts = {tool: [] for tool in tools}
        for _ in range(arguments.runs):
            for tool in tools:
                process, base, expected = start_world(faults)
                scratch = tempfile.mkdtemp(prefix="archive-race-")
                try:
                    wall, status, out, errors = run(tool, base, scratch)
                    walls[tool].append(wall)
                    exacts[tool].append(exact(out, expected))
                    if status != 0 and tool != "gpo":
                        print(f"  {tool} exited {status}: {errors.strip()[:200]}")
                finally:
                    process.terminate()
                    process.wait()
                    shutil.rmtree(scratch, ignore_errors=True)
        reference = statistics.median(walls["monsoon"]) if "monsoon" in walls else None
        print(f"  {'tool':<18} {'wall s':>7} {'spread':>13} {'exact':>9} {'vs monsoon':>11}")
        for tool in tools:
            median = statistics.median(walls[tool])
            spread = f"{min(walls[tool]):.1f}-{max(walls[tool]):.1f}"
            ratio = f"x{median / reference:.2f}" if reference else "-"
            print(f"  {tool:<18} {median:>7.1f} {spread:>13} {min(exacts[tool]):>4}/{FEEDS * EPISODES} {ratio:>11}")


if __name__ == "__main__":
    main()
