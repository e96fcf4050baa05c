#!/bin/sh
# run.sh BUILD SECONDS - runs every fuzz target in BUILD/fuzz for SECONDS
# each, with seeds from seeds.sh and a corpus kept in BUILD/corpus/<target>.
# SECONDS 0 runs each target over its seeds once and stops, without
# mutating: a check that CI can run, the same every time.
# Prints one line per target with its executions and findings; exits 1 when
# any target found a crash, leak, timeout or out-of-memory (the reproducer is
# in BUILD/artifacts/: turn it into a tests/corpus case and fix it).
set -u
build=${1:-build-fuzz}
secs=${2:-600}
cd "$(dirname "$0")/.." || exit 1
mkdir -p "$build/artifacts" "$build/logs"
build=$(cd "$build" && pwd) # absolute: fuzz_cli works in its own directory
sh fuzz/seeds.sh "$build/seeds" || exit 1
found=0
for bin in "$build"/fuzz/fuzz_*; do
    [ -x "$bin" ] || continue
    t=$(basename "$bin")
    mkdir -p "$build/corpus/$t" "$build/seeds/$t"
    extra=""
    [ "$t" = fuzz_cli ] && extra="-close_fd_mask=2"
    if [ "$secs" = 0 ]; then
        how="-runs=0"
        dirs="$build/seeds/$t"
    else
        how="-max_total_time=$secs"
        dirs="$build/corpus/$t $build/seeds/$t"
    fi
    "$bin" $how -timeout=10 -rss_limit_mb=2560 -max_len=65536 \
        -print_final_stats=1 -artifact_prefix="$build/artifacts/$t-" $extra \
        $dirs >"$build/logs/$t.log" 2>&1
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$build/logs/$t.log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$build/logs/$t.log" | tail -1)
    if [ "$rc" -ne 0 ]; then
        found=1
        echo "$t: FINDING after ${runs:-?} runs (exit $rc), see $build/logs/$t.log:"
        grep -E '^==[0-9]+==ERROR|SUMMARY|Test unit written' "$build/logs/$t.log" | head -5
    else
        echo "$t: ${secs}s, ${runs:-?} runs, ${cov:-cov ?}, no findings"
    fi
done
exit $found
