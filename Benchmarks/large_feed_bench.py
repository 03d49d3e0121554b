#!/usr/bin/env python3
"""Peak memory on a large feed (issue 20): `monsoon add` and `monsoon refresh` of one feed of
300,000 items (15 MB), served on loopback without validators (so the refresh reads it whole
again). Each command runs once, alone, in a fresh home; its peak resident memory is the kernel's
`ru_maxrss` from `wait4`, its time the wall clock. The outputs are checked (the count subscribed,
"0 new, 0 updated"); a run that fails them, or goes over --bound, exits 1.

  large_feed_bench.py [--binary .build/release/monsoon] [--items 300000] [--runs 3] [--bound MiB]

Before episodes were streamed into the database, `add` of this feed peaked near 400 MiB in the
debug build (every item a `ParsedEpisode`, with strings, URLs and dictionaries around it) and grew
with every item; streamed, the document, the identities' digests and one batch are held.
"""
import argparse, http.server, os, shutil, statistics, subprocess, sys, tempfile, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write_feed(path, items):
    with open(path, "w") as feed:
        feed.write('<?xml version="1.0"?><rss version="2.0"><channel><title>Big</title>\n')
        for index in range(items):
            feed.write(f"<item><guid>{index}</guid><title>T</title></item>\n")
        feed.write("</channel></rss>\n")


def serve(path):
    """A loopback server answering the feed whole, with neither ETag nor Last-Modified."""
    body = open(path, "rb").read()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "application/rss+xml")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *arguments):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/big.xml"


def run(binary, arguments, home):
    """Runs one command; returns its exit status, output, seconds and peak resident memory in MiB."""
    environment = dict(os.environ, MONSOON_HOME=home)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        process = subprocess.Popen([binary] + arguments, stdout=out, stderr=err, env=environment)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.monotonic() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return process.returncode, out.read().decode() + err.read().decode(), seconds, usage.ru_maxrss / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build", "release", "monsoon"))
    parser.add_argument("--items", type=int, default=300_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--bound", type=float, help="fail when a command's peak resident memory passes this many MiB")
    arguments = parser.parse_args()
    work = tempfile.mkdtemp(prefix="monsoon-large-feed-")
    try:
        write_feed(os.path.join(work, "big.xml"), arguments.items)
        server, url = serve(os.path.join(work, "big.xml"))
        figures = {"add": [], "refresh": []}
        failed = False
        for repetition in range(arguments.runs):
            home = os.path.join(work, f"home{repetition}")
            expected = {"add": f"subscribed: 1 Big ({arguments.items} episodes)", "refresh": "Big: 0 new, 0 updated"}
            for command, command_arguments in (("add", ["add", url]), ("refresh", ["refresh"])):
                status, output, seconds, peak = run(arguments.binary, command_arguments, home)
                if status != 0 or expected[command] not in output:
                    print(f"{command}: exit {status}, expected '{expected[command]}':\n{output}", file=sys.stderr)
                    failed = True
                figures[command].append((seconds, peak))
        server.shutdown()
        print(f"{arguments.items:,} items ({os.path.getsize(os.path.join(work, 'big.xml')) / 1e6:.1f} MB), "
              f"{arguments.runs} runs each, {arguments.binary}")
        print("| command | wall s (median) | peak RSS MiB (median, highest) |")
        print("| --- | ---: | ---: |")
        for command, runs in figures.items():
            peaks = [peak for _, peak in runs]
            print(f"| {command} | {statistics.median(s for s, _ in runs):.2f} | {statistics.median(peaks):.1f}, {max(peaks):.1f} |")
            if arguments.bound is not None and max(peaks) > arguments.bound:
                print(f"{command} peaked at {max(peaks):.1f} MiB, over the bound of {arguments.bound} MiB", file=sys.stderr)
                failed = True
        sys.exit(1 if failed else 0)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
