#!/bin/sh
# run.sh BUILD - `make bench`: generates the benchmark inputs once, runs every
# bench program and the end-to-end commands, and prints ONE table.
#
# Inputs (written by `stepcast synth` into bench/data/, git-ignored, reused
# while the synth options recorded in each folder's .stamp are unchanged):
#   EXAMPLE_DIR  examples/megatron-tp8         the bundled 8 real ranks (.json.gz)
#   SYNTH_DIR    bench/data/ranks1024          1,024 synthetic ranks, ~15k events each (.json.gz)
#   BIG_JSON     bench/data/big/rank-00000.json           one rank, >= 500 MB plain JSON
#   BIG_GZ       bench/data/big-gz/rank-00000.json.gz     the same content, gzip
#   SMALL_JSON   bench/data/small/rank-00000.json         ~50 MB plain JSON (Python ratio)
#
# Bench programs: every executable BUILD/bench/bench_* (built from
# bench/bench_*.c by `make bench`) is run from the repository root as
#     BUILD/bench/bench_NAME EXAMPLE_DIR SYNTH_DIR BIG_JSON BIG_GZ SMALL_JSON
# and prints any number of lines
#     figure<TAB>name<TAB>value<TAB>unit
# e.g. "reader<TAB>plain JSON, 1 thread<TAB>812<TAB>MB/s". `figure` groups rows
# (reader, ingest, graph, sim, chakra, e2e, ...); lines not in this form are
# passed through to stderr. A program that exits non-zero adds a FAILED row.
# bench/measure.c (BUILD/bench/measure) runs a command and prints its wall
# time and peak RSS as two such lines.
#
# End to end: `stepcast info` on EXAMPLE_DIR and SYNTH_DIR, `stepcast
# replay` on both, and `stepcast predict --dp 4096` on the shared DLRM
# ranks (STEPCAST_SHARED, else ../shared), and a 16-stage, 64 micro-batch
# `predict --pp` on the H100 GPT trace. The Python row times
# json.load on SMALL_JSON (the big file would take minutes and ~10 GB) and
# the ratio compares it with our reader on the same file.
set -u
build=${1:-build}
cd "$(dirname "$0")/.." || exit 1
S=$build/stepcast
M=$build/bench/measure
data=bench/data
EXAMPLE_DIR=examples/megatron-tp8
SYNTH_DIR=$data/ranks1024
BIG_JSON=$data/big/rank-00000.json
BIG_GZ=$data/big-gz/rank-00000.json.gz
SMALL_JSON=$data/small/rank-00000.json
rows=$(mktemp)
trap 'rm -f "$rows" "$rows.err"' EXIT

[ -x "$S" ] || { echo "bench: $S not built" >&2; exit 1; }
[ -d "$EXAMPLE_DIR" ] || EXAMPLE_DIR=${STEPCAST_SHARED:-../shared}/traces/megatron-tp8-a100

# gen DIR SYNTH-OPTIONS...: (re)generates DIR unless its stamp matches.
gen() {
    dir=$1
    shift
    stamp="synth $*"
    if [ -f "$dir/.stamp" ] && [ "$(cat "$dir/.stamp")" = "$stamp" ]; then return 0; fi
    rm -rf "$dir"
    mkdir -p "$dir"
    echo "bench: generating $dir (stepcast $stamp)" >&2
    $M synth "generate $(basename "$dir")" -- "$S" synth "$@" --force -o "$dir" >>"$rows" || exit 1
    echo "$stamp" >"$dir/.stamp"
}
mkdir -p "$data"
gen "$data/big" --ranks 1 --iterations 210 --seed 1
gen "$data/big-gz" --ranks 1 --iterations 210 --seed 1 --gzip
gen "$data/small" --ranks 1 --iterations 21 --seed 1
gen "$SYNTH_DIR" --ranks 1024 --layers 54 --seed 1 --gzip
# Freshly written inputs are still being written back to disk; that
# competes with the first figures for the CPU and the page cache (a plain
# read at 835 MB/s right after generating against 1,234 standalone, once).
sync

for p in "$build"/bench/bench_*; do
    [ -x "$p" ] || continue
    echo "bench: $(basename "$p")" >&2
    if ! "$p" "$EXAMPLE_DIR" "$SYNTH_DIR" "$BIG_JSON" "$BIG_GZ" "$SMALL_JSON" >>"$rows"; then
        printf '%s\tFAILED (exit status)\t-\t-\n' "$(basename "$p")" >>"$rows"
    fi
done

# Python's json.load on the small file, and the ratio to our reader.
if command -v python3 >/dev/null 2>&1; then
    $M python "json.load, $(du -m "$SMALL_JSON" | cut -f1) MB file" -- \
        python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$SMALL_JSON" >>"$rows"
    awk -F'\t' '$1=="python" && $2 ~ /wall$/ {py=$3}
                $1=="reader" && $2=="small file (python ratio input)" {us=$3}
                END { if (py > 0 && us > 0) printf "python\treader speed-up vs json.load (same file)\t%.0f\tx\n", py/us }' \
        "$rows" >>"$rows.tmp" && cat "$rows.tmp" >>"$rows" && rm -f "$rows.tmp"
fi

echo "bench: end to end" >&2
$M e2e "info, 8-rank example" -- "$S" info "$EXAMPLE_DIR" >>"$rows"
$M e2e "info, 1024 synthetic ranks" -- "$S" info "$SYNTH_DIR" >>"$rows"
$M e2e "info -j 1, 1024 synthetic ranks" -- "$S" info -j 1 "$SYNTH_DIR" >>"$rows"
if "$S" help replay >/dev/null 2>&1; then
    $M e2e "replay, 8-rank example" -- "$S" replay "$EXAMPLE_DIR" >>"$rows"
    # --timings: where that time goes, stage by stage, and the simulator's
    # rate on this large job (the sim rows above use a 64-rank graph).
    $M e2e "replay, 1024 synthetic ranks" -- "$S" replay --timings "$SYNTH_DIR" >>"$rows" 2>"$rows.err"
    grep -v '^stepcast: timings:' "$rows.err" >&2
    sed -n 's/^stepcast: timings: //p' "$rows.err" | tr ',;(' '\n\n\n' | awk '
        $1 == "load" || $1 == "build" || $1 == "calibrate" || $1 == "simulate" || $1 == "summarise" ||
        $1 == "write" { printf "e2e\treplay, 1024 synthetic ranks: %s\t%.2f\ts\n", $1, $2 }
        $1 == "set-up" { printf "e2e\treplay, 1024 synthetic ranks: of simulate, set-up\t%.2f\ts\n", $2 }
        $1 == "then" && $3 == "M" { printf "sim\tsimulation loop inside that replay (wall), 1 core\t%.2f\tM tasks/s\n", $2 }' >>"$rows"
else
    printf 'e2e\treplay (command not built yet)\t-\t-\n' >>"$rows"
fi
# Many ranks from few: 4,096 predicted ranks from the 8 traced DLRM ranks,
# on one core (the bar: 5 s and 1 GB).
DLRM_DIR=${STEPCAST_SHARED:-../shared}/traces/param-dlrm-8rank/kineto
if [ -d "$DLRM_DIR" ] && "$S" help predict >/dev/null 2>&1; then
    $M e2e "predict --dp 4096 --gpus-per-node 8 -j 1, 8 DLRM ranks" -- \
        "$S" predict -j 1 --dp 4096 --gpus-per-node 8 "$DLRM_DIR" >>"$rows"
fi
# stepcast model at scale: Llama 3 405B on 16,384 H100s as Meta ran its
# long-context stage (TP 8, CP 16, PP 16 with 7 layers on the first and last
# stages, DP 8, seq 131,072; the bar: 10 s and 2 GB), and a sweep of 100
# GPT-3 175B configurations on 1,024 GPUs (the bar: 60 s on 2 cores).
if "$S" help model >/dev/null 2>&1; then
    $M e2e "model llama3-405b, 16384 H100, tp8 cp16 pp16 dp8" -- \
        "$S" model --preset llama3-405b --pp-first-layers 7 --pp-last-layers 7 --tp 8 --sp true --cp 16 --pp 16 \
        --dp 8 --seq 131072 --mbs 1 --gbs 128 --gpu h100 --nodes 2048 >>"$rows"
    $M e2e "model --sweep, 100 gpt3-175b configs, 1024 H100" -- \
        "$S" model --sweep --preset gpt3-175b --gpu h100 --nodes 128 --gbs 1536 --sp true --recompute selective \
        --tp 1,2,4,8 --pp 1,2,4,8,16 --mbs 1,2,4,8,16 >>"$rows"
fi

# A pipeline of 64 micro-batches on 16 stages (1F1B) from the 8-layer H100
# GPT trace taken to 16 layers: 1.2 M simulated tasks (the bar: seconds).
H100_SMALL=tests/data/h100-gpt/small/rank0.trace.json.gz
if [ -f "$H100_SMALL" ] && "$S" help predict >/dev/null 2>&1; then
    $M e2e "predict --layers 16 --pp 16 --microbatches 64, H100 GPT" -- \
        "$S" predict --layers 16 --pp 16 --microbatches 64 "$H100_SMALL" >>"$rows"
fi

echo
echo "stepcast bench  ($(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ); shared machines vary ~2x: compare within one run)"
awk -F'\t' 'BEGIN { line = sprintf("%-8s  %-58s  %12s  %s", "figure", "name", "value", "unit"); print line;
                    gsub(/./, "-", line); print line }
            NF == 4 { printf "%-8s  %-58s  %12s  %s\n", $1, $2, $3, $4; next }
            { print "bench: " $0 > "/dev/stderr" }' "$rows"
