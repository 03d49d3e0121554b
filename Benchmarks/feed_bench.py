#!/usr/bin/env python3
"""The Python side of monsoon-feed-bench: Python's podcastparser on the same feed file.

  feed_bench.py --parse-only FILE [--runs N]   time podcastparser.parse in this process (medians of N runs,
                                                wall and CPU), print one JSON object (seconds, episodes,
                                                versions, interpreter)
  feed_bench.py --once FILE                    parse FILE once and print it as JSON, shaped like
                                                `monsoon inspect FILE --json`: the whole-process comparison

podcastparser is installed with pip when missing: into a virtual environment at
.build/feed-bench-venv (or, if venv is unavailable, with pip --user), then this script re-runs itself
with that interpreter.
"""
import json, os, subprocess, statistics, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, '.build', 'feed-bench-venv')


def ensure_podcastparser():
    try:
        import podcastparser  # noqa: F401
        return
    except ImportError:
        pass
    venv_python = os.path.join(VENV, 'bin', 'python3')
    if os.path.abspath(sys.executable) != os.path.abspath(venv_python):
        if not os.path.exists(venv_python):
            created = subprocess.run([sys.executable, '-m', 'venv', VENV], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if created.returncode == 0:
                subprocess.run([venv_python, '-m', 'pip', 'install', '-q', 'podcastparser'], check=True, stdout=sys.stderr)
        if os.path.exists(venv_python):
            os.execv(venv_python, [venv_python] + sys.argv)
    subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', '--user', 'podcastparser'], check=True, stdout=sys.stderr)
    import site, importlib
    importlib.reload(site)


def iso(timestamp):
    if timestamp is None:
        return None
    return time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(timestamp))


def parse(path):
    import podcastparser
    with open(path, 'rb') as stream:
        return podcastparser.parse('file://' + os.path.abspath(path), stream)


def main():
    ensure_podcastparser()
    import podcastparser
    args = sys.argv[1:]
    if len(args) >= 2 and args[0] == '--once':
        feed = parse(args[1])
        episodes = [{'guid': e.get('guid'), 'title': e.get('title'),
                     'url': (e.get('enclosures') or [{}])[0].get('url'),
                     'published': iso(e.get('published')), 'duration': e.get('total_time')} for e in feed.get('episodes', [])]
        json.dump({'title': feed.get('title'), 'episodes': episodes}, sys.stdout, indent=2)
        sys.stdout.write('\n')
        return
    if len(args) >= 2 and args[0] == '--parse-only':
        path = args[1]
        runs = int(args[args.index('--runs') + 1]) if '--runs' in args else 5
        parse(path)  # warm-up: imports, caches
        times, cpu_times, count = [], [], 0
        for _ in range(runs):
            start, cpu_start = time.perf_counter(), time.process_time()
            count = len(parse(path)['episodes'])
            times.append(time.perf_counter() - start)
            cpu_times.append(time.process_time() - cpu_start)
        try:
            from importlib.metadata import version
            pp_version = version('podcastparser')
        except Exception:
            pp_version = getattr(podcastparser, '__version__', 'unknown')
        print(json.dumps({'median': statistics.median(times), 'median_cpu': statistics.median(cpu_times), 'runs': times, 'episodes': count,
                          'python': sys.version.split()[0], 'podcastparser': pp_version,
                          'executable': sys.executable}))
        return
    sys.exit(__doc__)


if __name__ == '__main__':
    main()
