#!/bin/sh
# run.sh BUILD - runs every test program in BUILD/tests from the repository
# root and prints one closing summary line across all of them.
set -u
build=${1:-build}
cd "$(dirname "$0")/.." || exit 1
passed=0 failed=0 programs=0 bad=""
for t in "$build"/tests/test_*; do
    [ -x "$t" ] || continue
    programs=$((programs + 1))
    out=$("$t" 2>&1)
    rc=$?
    printf '%s\n' "$out"
    p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | awk '{s+=$1} END {print s+0}')
    f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | awk '{s+=$1} END {print s+0}')
    passed=$((passed + p))
    failed=$((failed + f))
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then failed=$((failed + 1)); bad="$bad $t(rc=$rc)"; fi
done
[ -n "$bad" ] && echo "programs that crashed or exited non-zero:$bad"
if [ "$programs" -eq 0 ]; then echo "no test programs found in $build/tests"; exit 1; fi
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
