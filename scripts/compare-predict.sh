#!/bin/sh
# compare-predict.sh - runs `stepcast replay --json` and `stepcast predict
# --json` with a fixed list of edits on the shared real traces and the
# checked-in H100 traces, with two builds, and says whether every output
# (stdout, stderr and exit status) is the same byte for byte: the check for
# a change meant to leave every figure alone (a refactor, a cache).
#
#   scripts/compare-predict.sh OLD_STEPCAST NEW_STEPCAST [OUTDIR]
#
# OUTDIR (default a fresh temporary folder) gets old/ and new/, one file
# per case; the exit status is 0 when they match, 1 when not (the diff is
# printed). Cases whose traces are missing are skipped with a note.
set -eu
[ $# -ge 2 ] || { echo "usage: $0 OLD_STEPCAST NEW_STEPCAST [OUTDIR]" >&2; exit 2; }
old=$1 new=$2
out=${3:-$(mktemp -d)}
here=$(cd "$(dirname "$0")/.." && pwd)
shared=${SHARED:-$here/../shared}
mkdir -p "$out/old" "$out/new"

n=0
# run NAME TRACES... -- ARGS: one case with both builds
case_run() {
    name=$1
    shift
    n=$((n + 1))
    for side in old new; do
        bin=$old
        [ $side = new ] && bin=$new
        f="$out/$side/$(printf %02d $n)-$name.txt"
        set +e
        "$bin" "$@" >"$f" 2>"$f.err"
        echo "rc=$?" >>"$f.err"
        set -e
    done
}

meg="$shared/traces/megatron-tp8-a100"
if ls "$meg"/megatron_kineto_*.json.gz >/dev/null 2>&1; then
    M=$(ls "$meg"/megatron_kineto_*.json.gz)
    case_run meg-replay replay --json $M
    case_run meg-replay-model replay --json --comm model $M
    case_run meg-replay-scale replay --json --scale compute=1.5 $M
    for e in "" "--dp 4" "--tp 4" "--tp 2" "--pp 2" "--pp 2 --schedule gpipe --microbatches 4" "--layers 48" \
        "--layers 20" "--gpu h100" "--model-backward" "--recompute selective" "--recompute full" "--hidden 4096" \
        "--seq 4096" "--comm model" "--nodes 4" "--tp 4 --pp 2" "--dp 4 --gpu h100 --layers 48" \
        "--tp 4 --hidden 4096" "--tp 4 --hidden 6144" "--scale cpu=0.5 --tp 4" "--scale cpu=0.5 --pp 2"; do
        case_run "meg-predict$(echo "$e" | tr ' =' '_.')" predict --json $M $e
    done
else
    echo "skipped: no $meg" >&2
fi

dlrm="$shared/traces/param-dlrm-8rank/kineto"
if [ -d "$dlrm" ]; then
    case_run dlrm-replay replay --json "$dlrm"
    for e in "" "--dp 4" "--dp 16" "--gpu h100" "--nodes 2" "--comm model" "--layers 4" "--tp 2"; do
        case_run "dlrm-predict$(echo "$e" | tr ' =' '_.')" predict --json "$dlrm" $e
    done
else
    echo "skipped: no $dlrm" >&2
fi

for d in tiny small medium-light; do
    t="$here/tests/data/h100-gpt/$d/rank0.trace.json.gz"
    case_run "$d-replay" replay --json "$t"
    for e in "" "--layers 6" "--gpu a100" "--hidden 1024" "--model-backward" "--pp 2" "--tp 2" \
        "--seq 1024 --micro-batch 4" "--recompute full" "--layers 6 --pp 2"; do
        case_run "$d-predict$(echo "$e" | tr ' =' '_.')" predict --json "$t" $e
    done
done

if diff -r "$out/old" "$out/new"; then
    echo "compare-predict: $n cases, all the same ($out)"
else
    echo "compare-predict: outputs differ ($out)"
    exit 1
fi
