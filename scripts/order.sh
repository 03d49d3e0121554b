#!/usr/bin/env bash
# Writes scripts/monsoon.order: the functions the shipped binary runs in its main jobs, grouped
# by job (the most common first), for the linker to pack together (lld's --symbol-ordering-file; the
# release build compiles each function into its own section so it can).
#
# Why: the kernel maps a program's code in 64 KiB windows around each page a run first
# touches, so hot code scattered over the 16 MiB of text keeps 8 MiB resident; packed, about
# 4 MiB. Measured on `get` of 2,000 small files: peak RSS 35.0 -> 31.0 MiB.
#
# A stale list only packs less (the linker skips names it no longer finds): refresh it after
# large changes with `make order`. Runs the release binary under callgrind (valgrind, installed
# when missing) against the loopback test server.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=.build/release
sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd=sudo
command -v valgrind >/dev/null || { $sudo_cmd apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq valgrind; }
work=$(mktemp -d /tmp/monsoon-order.XXXXXX)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

serve() {   # serve NAME ARGS...: starts a test server (here, not in a subshell, so cleanup stops it)
    local name=$1; shift
    "$bin/monsoon-testserver" "$@" > "$work/$name.url" &
    pids+=($!)
    for _ in $(seq 100); do [ -s "$work/$name.url" ] && return; sleep 0.05; done
    echo "order.sh: the test server ($name) did not start" >&2
    exit 1
}
# Files on disk, served as nginx serves them (ETag and Last-Modified: their paths run too).
mkdir "$work/www"
for n in $(seq 300); do head -c 65536 /dev/urandom > "$work/www/small$n.bin"; done
for n in 1 2; do head -c 16777216 /dev/urandom > "$work/www/large$n.bin"; done
serve files --dir "$work/www"
serve podcast --podcast 8 --size 256k
files=$(cat "$work/files.url") podcast=$(cat "$work/podcast.url")
for n in $(seq 300); do echo "$files/small$n.bin"; done > "$work/small.txt"
printf '%s\n' "$files/large1.bin" "$files/large2.bin" > "$work/large.txt"

run=0
# Without its debug information, which this valgrind cannot read (the symbols, all it needs, stay).
strip --strip-debug "$bin/monsoon" -o "$work/monsoon"
profile() {   # profile ARGS...: one run of monsoon under callgrind, in its own home
    run=$((run + 1))
    valgrind --tool=callgrind --demangle=no --dump-instr=no --compress-strings=no \
        --callgrind-out-file="$work/cg.$run" "$work/monsoon" --home "$work/home$run" "$@" > /dev/null 2> "$work/err" \
        || { echo "order.sh: monsoon $* failed:" >&2; tail -5 "$work/err" >&2; exit 1; }
}
# The most common job first: its code, start-up included, is packed tightest.
profile get --quiet -j 8 -o "$work/small" -i "$work/small.txt"
profile get --quiet -j 8 --discard --checksum sha256 -i "$work/small.txt"
profile get -j 2 -o "$work/large" -i "$work/large.txt"
profile archive "$podcast/feed.xml" -o "$work/archive" -j 4
profile inspect "$podcast/feed.xml" --json
profile --version
profile --help

# Each function of the binary once, grouped by run (within a run, in callgrind's order).
python3 - "$work" scripts/monsoon.order <<'PY'
import glob, os, sys
work, out = sys.argv[1], sys.argv[2]
order, seen = [], set()
for path in sorted(glob.glob(os.path.join(work, "cg.*")), key=lambda p: int(p.rsplit(".", 1)[1])):
    ob = cob = None
    for line in open(path, errors="replace"):
        if line.startswith("ob="):
            ob = line[3:].strip()
        elif line.startswith("cob="):
            cob = line[4:].strip()
        elif line.startswith(("fn=", "cfn=")):
            callee = line.startswith("cfn=")
            name = line.split("=", 1)[1].strip().split("'")[0]   # callgrind marks recursion with 'N
            binary = (cob or ob) if callee else ob
            if callee:
                cob = None
            # Skipped: valgrind's own names ("(below main)") and addresses without a symbol.
            if binary and binary.endswith("/monsoon") and not name.startswith(("0x", "(")) and name not in seen:
                seen.add(name)
                order.append(name)
with open(out, "w") as f:
    f.write("\n".join(order) + "\n")
print(f"{out}: {len(order)} functions")
PY
