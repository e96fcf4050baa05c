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
# The commands of the estimation and user issues, on small inputs.
tiny=tests/data/h100-gpt/tiny
vgrun structure-tiny 0 "$build/stepcast" structure --json "$tiny/rank0.trace.json.gz"
vgrun predict-pp-tiny 0 "$build/stepcast" predict --pp 2 --microbatches 4 --tp 1 --layers 6 \
    --recompute selective "$tiny/rank0.trace.json.gz"
vgrun predict-backward-tiny 0 "$build/stepcast" predict --model-backward --hidden 1024 --heads 16 \
    "$tiny/rank0.trace.json.gz"
vgrun model-405b 0 "$build/stepcast" model --json --preset llama3-405b --gpu h100 --nodes 2048 --tp 8 --cp 16 \
    --pp 16 --dp 8 --seq 131072 --gbs 128 --pp-first-layers 7 --pp-last-layers 7
vgrun model-sweep 0 "$build/stepcast" model --sweep --preset gpt3-175b --gpu h100 --nodes 128 --gbs 1536 \
    --tp 4,8 --pp 8
vgrun model-calibrate 0 "$build/stepcast" model --config "$tiny-light/config.json" \
    --calibrate "$tiny-light/rank0.trace.json.gz"
vgrun model-bad 2 "$build/stepcast" model --preset llama3-8b --heads 30 --tp 4
vgrun diff-hta 0 "$build/stepcast" diff --html "$tmp/diff.html" "$traces/hta-testdata/trace_diff/control" \
    "$traces/hta-testdata/trace_diff/test"
vgrun report-dlrm 0 "$build/stepcast" report -o "$tmp/report.html" --dp 16 "$traces/param-dlrm-8rank/kineto"
vgrun benchgen-tiny 0 "$build/stepcast" benchgen --force -o "$tmp/bench" "$tiny/rank0.et.json.gz" \
    "$tiny/rank0.trace.json.gz"
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
