#!/usr/bin/env bash
# `make soak`: RUNS short monsoon commands (2,000 by default) one after another against a home
# subscribed to a podcast on a loopback test server, under `stress-ng --cpu 2`; fails if any
# of them ends by a signal, or fails.
#
#   Tests/ExitStorm/exit_storm.sh [--bin DIR] [--runs N]
#
# Issue 44, point 4: 3 such commands in 2,200 died at exit, in OpenSSL's exit handler's race with a
# thread's end. Each command runs with exit_race.c preloaded, which makes that interleaving happen
# whenever the race is there (see the file); the load makes others more likely. DIR holds monsoon
# and monsoon-testserver (default .build/release).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=.build/release
runs=2000
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    *) echo "usage: $0 [--bin DIR] [--runs N]" >&2; exit 2 ;;
  esac
done
for tool in "$bin/monsoon" "$bin/monsoon-testserver"; do
  [ -x "$tool" ] || { echo "exit storm: no $tool: run 'make release' first" >&2; exit 2; }
done
command -v stress-ng > /dev/null || { echo "exit storm: stress-ng is missing (apt-get install stress-ng)" >&2; exit 2; }
compiler=$(command -v cc || command -v clang) || { echo "exit storm: no C compiler for exit_race.c" >&2; exit 2; }

work=$(mktemp -d /tmp/monsoon-exit-storm.XXXXXX)
server_pid=""
stress_pid=""
cleanup() {
  [ -n "$stress_pid" ] && kill "$stress_pid" 2> /dev/null && wait "$stress_pid" 2> /dev/null
  [ -n "$server_pid" ] && kill "$server_pid" 2> /dev/null
  rm -rf "$work"
}
trap cleanup EXIT
export MONSOON_HOME="$work/home"

"$compiler" -shared -fPIC -O2 -o "$work/exit_race.so" Tests/ExitStorm/exit_race.c -ldl
# Three episodes of 4 KiB: the server's faults start at the 7th.
"$bin/monsoon-testserver" --podcast 3 --size 4k > "$work/url" &
server_pid=$!
for _ in $(seq 100); do [ -s "$work/url" ] && break; sleep 0.05; done
url=$(cat "$work/url")
"$bin/monsoon" add "$url/feed.xml" > /dev/null
feed=Tests/Fixtures/feeds/partytime/real-world/no-agenda.xml

# Those of the report, and the other short ones: with an engine or without, with transfers (one
# hashing its body) or without.
commands=(
  "inspect $feed"
  "episodes 1"
  "podcasts"
  "downloads"
  "inspect $url/feed.xml"
  "get --discard --checksum sha256 $url/episodes/1.mp3"
)
stress-ng --cpu 2 --quiet &
stress_pid=$!
signals=0
failures=0
for ((run = 0; run < runs; run++)); do
  command=${commands[run % ${#commands[@]}]}
  status=0
  # $command unquoted: its words are the arguments. The braces keep the shell's own line about a
  # killed command out (the one below says it).
  { LD_PRELOAD="$work/exit_race.so" "$bin/monsoon" $command > /dev/null 2> "$work/stderr"; } 2> /dev/null || status=$?
  # monsoon's own statuses stop at 3, and 130 (Ctrl-C, which nothing sends here).
  if [ "$status" -gt 128 ]; then
    signals=$((signals + 1))
    echo "exit storm: run $run, monsoon $command: killed by SIG$(kill -l "$status")"
  elif [ "$status" -ne 0 ]; then
    failures=$((failures + 1))
    echo "exit storm: run $run, monsoon $command: exit status $status: $(head -c 300 "$work/stderr")"
  fi
done
echo "exit storm: $runs runs of ${#commands[@]} commands under stress-ng --cpu 2: $signals ended by a signal, $failures failed"
[ "$signals" = 0 ] && [ "$failures" = 0 ]
