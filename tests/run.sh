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
# The Python module's tests (tests/python: the module against the CLI, the
# man page, the completion, make install) where the build has the shared
# library, as `make test` builds it (the sanitizer builds do not: a
# sanitized library cannot be loaded into python3).
if [ -e "$build/libstepcast.so" ] && command -v python3 >/dev/null 2>&1; then
    programs=$((programs + 1))
    case $build in /*) lib=$build ;; *) lib=$PWD/$build ;; esac
    out=$(STEPCAST_BUILD=$build STEPCAST_LIB=$lib/libstepcast.so \
          python3 -m unittest discover -v -s tests/python -t tests/python 2>&1)
    rc=$?
    printf '%s\n' "$out"
    ran=$(printf '%s\n' "$out" | sed -n 's/^Ran \([0-9]*\) test.*/\1/p')
    summary=$(printf '%s\n' "$out" | grep -E '^(OK|FAILED)' | tail -n 1)
    count() { n=$(printf '%s\n' "$summary" | sed -n "s/.*$1=\([0-9]*\).*/\1/p"); echo "${n:-0}"; }
    f=$(($(count failures) + $(count errors)))
    s=$(count skipped)
    passed=$((passed + ${ran:-0} - f - s))
    failed=$((failed + f))
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then failed=$((failed + 1)); bad="$bad python3-unittest(rc=$rc)"; fi
fi
[ -n "$bad" ] && echo "programs that crashed or exited non-zero:$bad"
if [ "$programs" -eq 0 ]; then echo "no test programs found in $build/tests"; exit 1; fi
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
