#!/usr/bin/env bash
# `make bench` (and `make bench-quick` with --quick): the benchmarks described in
# Benchmarks/README.md, on a release build.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=""
[ "${1:-}" = "--quick" ] && quick="--quick"

# The peers and the server (Debian's packages; wget2 in Debian 12 is a 1.99 beta; gpodder gives gpo;
# podcast-archiver comes from PyPI, into a venv, in Benchmarks/archive_race.py; GNU time measures
# peak memory).
missing=""
for package in nginx-light curl aria2 wget2 gcc libc6-dev gpodder python3-venv openssl time; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing="$missing $package"
done
if [ -n "$missing" ]; then
  echo "Installing:$missing"
  sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd=sudo
  $sudo_cmd apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends $missing
fi

# The reference: a C program on libcurl's multi interface.
mkdir -p .build/bench
cc -O2 -Wall -o .build/bench/multi Benchmarks/reference/multi.c $(pkg-config --cflags --libs libcurl)

echo "== Downloads side by side (loopback nginx)"
python3 Benchmarks/transfer_bench.py $quick
[ -n "$quick" ] && exit 0
echo
echo "== The download queue at 100,000"
.build/release/monsoon-queue-bench 100000
echo
echo "== Feed parsing against Python's podcastparser (5,000 items)"
.build/release/monsoon-feed-bench
echo
echo "== feedparser 6.0.11's own test suite, on the fields Monsoon keeps (a few seconds)"
python3 Benchmarks/feedparser_suite.py --bench .build/release/monsoon-feed-bench
echo
echo "== Refreshing 200 podcasts"
.build/release/monsoon-refresh-bench
echo
echo "== Peak memory of add and refresh of a feed of 300,000 items"
python3 Benchmarks/large_feed_bench.py --bound 224
echo
echo "== The archive race: monsoon archive, podcast-archiver, gpo (each with its defaults)"
python3 Benchmarks/archive_race.py --both --runs 3
echo
echo "== Archive at scale: monsoon archive of 50 feeds x 200 episodes against curl (issue 48)"
python3 Benchmarks/archive_scale.py --runs 3
# The same with the episodes on a tmpfs (Monsoon's home on disk): the tools' own cost, steadier here.
python3 Benchmarks/archive_scale.py --runs 3 --tmpfs
