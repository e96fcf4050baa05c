#!/bin/sh
# valgrind.sh BUILD - runs the CLI over the shared traces under valgrind
# (memcheck). Any invalid read/write, use of uninitialised memory or leak
# (definite, indirect or possible) fails the run. Prints one line per run and
# a closing summary; exits 1 on any error.
# The test programs are not run here by default: `make check` runs them
# under ASan and UBSan, which find these errors in a fraction of the time
# (all of them took about 8 minutes under valgrind, test_template alone 3
# to 4). VALGRIND_TESTS=1 (`make valgrind-tests`) runs them too, with
# STEPCAST_CORPUS_BIG=0, which leaves out the large inputs.
set -u
build=${1:-build}
cd "$(dirname "$0")/.." || exit 1
shared=${STEPCAST_SHARED:-../shared}
traces=$shared/traces
vg="valgrind -q --error-exitcode=99 --leak-check=full --track-origins=no
    --errors-for-leak-kinds=definite,indirect,possible
    --show-leak-kinds=definite,indirect,possible"
logdir=$build/valgrind
mkdir -p "$logdir"
passed=0 failed=0
# vgrun NAME EXPECTED-EXIT CMD...: valgrind's own errors exit 99.
vgrun() {
    name=$1 want=$2
    shift 2
    start=$(date +%s)
    $vg "$@" >"$logdir/$name.log" 2>&1
    rc=$?
    secs=$(($(date +%s) - start))
    if [ "$rc" -eq 99 ] || [ "$rc" -ne "$want" ]; then
        failed=$((failed + 1))
        echo "valgrind: FAIL $name (exit $rc, want $want, ${secs}s), see $logdir/$name.log"
        grep -E '^==[0-9]+== (Invalid|Conditional|Use of|[0-9,]+ bytes in)' "$logdir/$name.log" | head -5
    else
        passed=$((passed + 1))
        echo "valgrind: ok $name (${secs}s)"
    fi
}
vgrun info-megatron 0 "$build/stepcast" info "$traces/megatron-tp8-a100"
vgrun info-dlrm 0 "$build/stepcast" info --json "$traces/param-dlrm-8rank/kineto"
vgrun info-hta-small 0 "$build/stepcast" info "$traces/hta-testdata/critical_path" \
    "$traces/hta-testdata/amd_trace"
vgrun info-bad-input 1 "$build/stepcast" info tests/corpus/no-such-file.json
vgrun graph-chakra 0 "$build/stepcast" graph "$traces/chakra-et/microbenchmarks/all_reduce"
vgrun et-megatron 0 "$build/stepcast" et "$traces/megatron-tp8-a100/megatron_et_0.json.gz" \
    "$traces/megatron-tp8-a100/megatron_kineto_0.json.gz"
# Commands that land later run on the Megatron traces when they exist.
for cmd in graph replay; do
    if "$build/stepcast" help "$cmd" >/dev/null 2>&1; then
        vgrun "$cmd-megatron" 0 "$build/stepcast" "$cmd" "$traces/megatron-tp8-a100"
    fi
done
vgrun comm-table 0 "$build/stepcast" comm --json --gpu h100 --ranks 16
vgrun comm-hta 0 "$build/stepcast" comm "$traces/hta-testdata/nccl_parser_config"
vgrun comm-chakra 0 "$build/stepcast" comm --gpu h100 "$traces/chakra-et/microbenchmarks/all_reduce"
vgrun comm-bad-profile 1 "$build/stepcast" comm --profile tests/corpus/profile_truncated.json
vgrun kernels-megatron 0 "$build/stepcast" kernels --json "$traces/megatron-tp8-a100/megatron_kineto_0.json.gz"
vgrun predict-shape-megatron 0 "$build/stepcast" predict --hidden 6144 --heads 64 --scale cpu=0 \
    "$traces/megatron-tp8-a100/megatron_kineto_0.json.gz"
vgrun predict-shape-bad 2 "$build/stepcast" predict --heads 3 "$traces/megatron-tp8-a100/megatron_kineto_0.json.gz"
tmp=${TMPDIR:-/tmp}/stepcast-valgrind-$$
mkdir -p "$tmp"
vgrun export-dlrm 0 "$build/stepcast" export --chakra "$tmp/dlrm" --no-cpu "$traces/param-dlrm-8rank/kineto"
vgrun replay-chrome-dlrm 0 "$build/stepcast" replay --json --chrome "$tmp/chrome.json" \
    --scale gemm=0.5 "$traces/param-dlrm-8rank/kineto"
rm -rf "$tmp"
if [ "${VALGRIND_TESTS:-0}" = 1 ]; then
    export STEPCAST_CORPUS_BIG=0
    for t in "$build"/tests/test_*; do
        [ -x "$t" ] || continue
        vgrun "$(basename "$t")" 0 "$t"
    done
fi
echo "valgrind: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
