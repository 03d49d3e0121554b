#!/usr/bin/env bash
# Runs `make fuzz`'s libFuzzer build of monsoon-fuzz on each target in turn, FUZZ_SECONDS
# (default 60) each, then merges what adds coverage into Tests/Fuzz/<target>/.
#
#   scripts/fuzz.sh BINARY [TARGET...]      (targets: feed date duration opml manifest; all by default)
#
# Fails on the first crash, hang (an input running over 10 s), leak or memory blow-up (2 GB
# resident, or a single allocation that large); the input is saved in .build/fuzz/artifacts/
# and the end of libFuzzer's log printed. Full logs: .build/fuzz/<target>.log.
set -euo pipefail
cd "$(dirname "$0")/.."
binary=$1
shift
if [ $# -gt 0 ]; then targets=("$@"); else targets=(feed date duration opml manifest); fi
seconds=${FUZZ_SECONDS:-60}
scratch=.build/fuzz
mkdir -p "$scratch/artifacts"

for target in "${targets[@]}"; do
    # Feeds and OPML lists: up to 32 KiB (libFuzzer grows lengths from small ones first), with XML and
    # feed or OPML tokens. Manifests: up to 8 KiB of JSON. Dates and durations: short strings.
    case $target in
        feed | opml) options=(-max_len=32768 "-dict=Tests/Fuzz/$target.dict") ;;
        manifest) options=(-max_len=8192 -dict=Tests/Fuzz/manifest.dict) ;;
        date | duration) options=(-max_len=256) ;;
        *) echo "fuzz.sh: unknown target $target" >&2; exit 2 ;;
    esac
    options+=(-timeout=10 -rss_limit_mb=2048)
    corpus=$scratch/corpus/$target
    log=$scratch/$target.log
    mkdir -p "$corpus"
    echo "== $target: fuzzing for $seconds s (log: $log)"
    # New inputs go to the first folder (the working corpus, kept between runs); Tests/Fuzz/<target>
    # is read as seeds.
    if ! MONSOON_FUZZ_TARGET=$target "$binary" "${options[@]}" -max_total_time="$seconds" -print_final_stats=1 \
            -artifact_prefix="$scratch/artifacts/$target-" "$corpus" "Tests/Fuzz/$target" 2> "$log"; then
        tail -n 60 "$log"
        echo "== $target: FAILED; the input is in $scratch/artifacts/ (replay: docs/ARCHITECTURE.md, Fuzzing)" >&2
        exit 1
    fi
    grep -E '^#[0-9]+' "$log" | tail -n 1
    grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$log"
    # Keep in Tests/Fuzz/<target> only what reaches code its inputs do not: edges only
    # (-use_counters=0), since counting hit counts too keeps three to four times as many inputs.
    before=$(ls "Tests/Fuzz/$target" | wc -l)
    MONSOON_FUZZ_TARGET=$target "$binary" "${options[@]}" -use_counters=0 -merge=1 "Tests/Fuzz/$target" "$corpus" 2>> "$log"
    echo "== $target: Tests/Fuzz/$target: $before → $(ls "Tests/Fuzz/$target" | wc -l) inputs, $(cat "Tests/Fuzz/$target"/* | wc -c) bytes"
done
