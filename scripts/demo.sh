#!/usr/bin/env bash
# The main job on data the demo makes itself: a loopback server with a generated podcast
# (30 episodes of a few MB; some drop their connection mid-body, some answer 503 once),
# `monsoon archive` with live progress, interrupted with Ctrl-C and run again (it resumes),
# a third run that downloads nothing, then `monsoon verify`; the first two runs record what they
# fetch in WARC files (`--warc`), which warcio (PyPI, in .build/warcio-venv) checks at the end.
# It ends with the path of the resumed run's page (`--report-html`), which it keeps (under
# .build) for a browser.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=.build/release
work=$(mktemp -d /tmp/monsoon-demo.XXXXXX)
server_pid=""
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
# Its own Monsoon home and archive, so the demo never touches yours.
export MONSOON_HOME="$work/home"
archive="$work/archive"
warc="$work/warc/podcasts.warc.gz"
# The page outlives the demo's temporary folder: it is there to be opened.
page="$PWD/.build/monsoon-demo-run.html"
mkdir -p .build

echo "== Serving a podcast of 30 episodes (about 3 MiB each) on loopback, 4 MiB/s per download"
"$bin/monsoon-testserver" --podcast 30 --size 3m --throttle 4m > "$work/url" &
server_pid=$!
for _ in $(seq 100); do [ -s "$work/url" ] && break; sleep 0.05; done
feed="$(cat "$work/url")/feed.xml"

echo "== monsoon archive --dry-run: the plan"
"$bin/monsoon" archive "$feed" -o "$archive" --with-artwork --dry-run | tail -4

echo "== monsoon archive -j 4 --warc (interrupted after 3 s, as Ctrl-C would)"
set +e
"$bin/monsoon" archive "$feed" -o "$archive" -j 4 --with-artwork --warc "$warc" &
run=$!
sleep 3
kill -INT "$run"
wait "$run"
echo "   exit status $? (130: interrupted, part files kept)"
set -e

echo "== The same command again: it resumes the part files and fetches the rest"
"$bin/monsoon" archive "$feed" -o "$archive" -j 4 --with-artwork --warc "$warc" --report "$work/report.json" --report-html "$page"
python3 - "$work/report.json" <<'PY'
import json, sys
overall = json.load(open(sys.argv[1]))["overall"]
print("   run report: %d bytes, %d connections opened, %d reused, failed attempts by status %s, %d bytes resumed"
      % (overall["bytes"], overall["connections"]["opened"], overall["connections"]["reused"],
         overall["failedAttemptsByStatus"], overall["resumedBytes"]))
PY
echo "== Once more: everything is in the ledger, nothing is downloaded twice"
"$bin/monsoon" archive "$feed" -o "$archive" -j 4 --with-artwork

echo "== monsoon verify: every file against its SHA-256 in the manifest"
"$bin/monsoon" verify "$archive"
ls "$archive/Monsoon Demo Show" | head -5
echo "   … $(ls "$archive/Monsoon Demo Show" | wc -l) files in all"
echo "== warcio (PyPI) on the WARC files of the first two runs"
warcio=.build/warcio-venv/bin/warcio
if [ ! -x "$warcio" ]; then
  python3 -m venv .build/warcio-venv && .build/warcio-venv/bin/pip install -q warcio==1.7.4
fi
verdict=0
for file in "$work"/warc/*.warc.gz; do
  if "$warcio" check "$file" > "$work/check.txt" 2>&1; then
    echo "   $(basename "$file"): warcio check passed (every digest)"
  else
    echo "   $(basename "$file"): warcio check FAILED:"; sed 's/^/     /' "$work/check.txt"; verdict=1
  fi
done
"$warcio" index -f warc-type,warc-monsoon-ranges "$work"/warc/*.warc.gz | python3 -c '
import collections, json, sys
records = [json.loads(line) for line in sys.stdin]
kinds = collections.Counter(record["warc-type"] for record in records)
resumed = [record for record in records if "warc-monsoon-ranges" in record]
print("   %s; %d responses hold a file resumed from its part (e.g. %s)" % (
    ", ".join("%d %s" % (count, kind) for kind, count in sorted(kinds.items())), len(resumed),
    resumed[0]["warc-monsoon-ranges"] if resumed else "none"))'
[ "$verdict" = 0 ] || { echo "warcio found a problem in the WARC files" >&2; exit 1; }
echo "== Done. The resumed run's page (timeline, throughput, first bytes, hosts):"
echo "$page"
