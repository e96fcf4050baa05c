#!/bin/sh
# benchgen_gpu_check.sh - `stepcast benchgen` on a GPU, in one short call
# (well under 4 minutes). Three ways to call it:
#
#   benchgen_gpu_check.sh prepare DIR [ET_DIR]   (here: needs build/stepcast)
#   benchgen_gpu_check.sh run DIR OUT            (on the CUDA machine: needs
#                                                 only python3 with torch)
#   benchgen_gpu_check.sh all OUT [ET_DIR]       (both, where both work)
#
# prepare writes DIR/bench (bench.py, bench_ops.json) and DIR/benchgen.txt
# (what was generated, coverage) for rank 0 of ET_DIR: a folder with a
# single-GPU ET and its Kineto trace (rank0.et.json[.gz],
# rank0.trace.json[.gz], as scripts/record_gpu_traces.py records them), by
# default ../shared/traces/megatron-tp8-a100 (rank 0 of 8: its all-reduces
# then run on a group of one process, so compute is what compares). The
# device machine may lack the libraries stepcast builds with: prepare here,
# carry DIR (an ignored folder such as build/gpucheck), then run there.
#
# run replays DIR/bench on the GPU (2 warm-up, 5 timed iterations, one
# profiled) and writes OUT/run.txt (per-iteration times, BENCH_SUMMARY
# line) and OUT/rank0.trace.json (the run's own profiler trace). Back
# here, `stepcast replay OUT/rank0.trace.json` against `stepcast replay`
# of the original Kineto trace compares compute with compute.
set -eu
mode=${1:?usage: benchgen_gpu_check.sh prepare DIR [ET_DIR] | run DIR OUT | all OUT [ET_DIR]}
cd "$(dirname "$0")/.."

prepare() { # DIR [ET_DIR]
    if [ -n "${2:-}" ]; then
        et=$(ls "$2"/rank0.et.json* | head -1)
        kin=$(ls "$2"/rank0.trace.json* | head -1)
    else
        et=../shared/traces/megatron-tp8-a100/megatron_et_0.json.gz
        kin=../shared/traces/megatron-tp8-a100/megatron_kineto_0.json.gz
    fi
    [ -x build/stepcast ] || make -s all >/dev/null
    mkdir -p "$1"
    build/stepcast benchgen --force -o "$1/bench" --iterations 5 "$et" "$kin" > "$1/benchgen.txt" 2>&1
    echo "$kin" > "$1/original_kineto.txt"
    head -12 "$1/benchgen.txt"
}

run() { # DIR OUT
    mkdir -p "$2"
    out=$(cd "$2" && pwd)
    python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.get_device_name(0))'
    ( cd "$1/bench" && timeout 200 python3 bench.py --warmup 2 --iterations 5 --trace-dir "$out" ) \
        > "$out/run.txt" 2>&1 || echo "bench.py exit $?"
    grep -v BENCH_SUMMARY "$out/run.txt" | tail -12
    grep BENCH_SUMMARY "$out/run.txt" | cut -c1-3000 || true
}

case $mode in
prepare) prepare "${2:?DIR}" "${3:-}" ;;
run) run "${2:?DIR}" "${3:?OUT}" ;;
all)
    prepare "${2:?OUT}" "${3:-}"
    run "$2" "$2"
    build/stepcast replay "$(cat "$2/original_kineto.txt")" > "$2/replay_original.txt" 2>&1 || true
    [ -f "$2/rank0.trace.json" ] && build/stepcast replay "$2/rank0.trace.json" > "$2/replay_bench.txt" 2>&1 || true
    ;;
*) echo "benchgen_gpu_check.sh: unknown mode $mode" >&2; exit 2 ;;
esac
