#!/usr/bin/env bash
# `make bench`: monsoon get side by side with the curl command line (see README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 Benchmarks/bench.py "$@"
echo
.build/release/monsoon-queue-bench 100000
