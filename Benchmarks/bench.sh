#!/usr/bin/env bash
# `make bench`: the benchmarks described in Benchmarks/README.md, on a release build.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== monsoon get against the curl command line"
python3 Benchmarks/bench.py "$@"
echo
echo "== The download queue at 100,000"
.build/release/monsoon-queue-bench 100000
echo
echo "== Feed parsing against Python's podcastparser (5,000 items)"
.build/release/monsoon-feed-bench
echo
echo "== Refreshing 200 podcasts"
.build/release/monsoon-refresh-bench
