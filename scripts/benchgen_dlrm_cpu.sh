#!/bin/sh
# benchgen_dlrm_cpu.sh [OUT_DIR] - the full CPU check of `stepcast
# benchgen` (tests/test_benchgen.c runs a shorter one): the 8 DLRM ranks of
# ../shared/traces/param-dlrm-8rank as a program for the CPU, run with 8
# gloo processes (bench.py --nproc 8: Debian's torchrun of torch 1.13
# fails under Python 3.11), 2 warm-up and 5 timed iterations and a
# profiled one; then tests/benchgen_check.py: every traced collective
# executed with its traced size. Prints the wall time.
set -eu
out=${1:-/tmp/benchgen-dlrm}
cd "$(dirname "$0")/.."
[ -x build/stepcast ] || make -s all >/dev/null
py=python3
$py -c 'import torch.distributed' 2>/dev/null || py=/usr/bin/python3
t=../shared/traces/param-dlrm-8rank
build/stepcast benchgen --force --device cpu --shrink "${SHRINK:-2}" -o "$out" "$t/et" "$t/kineto" > "$out.txt"
start=$(date +%s)
( cd "$out" && $py bench.py --nproc 8 --warmup 2 --iterations 5 --trace-dir traces ) > "$out/run.txt" 2>&1
end=$(date +%s)
$py tests/benchgen_check.py "$out/bench_ops.json" "$out/traces" 8
echo "wall time: $((end - start)) s (8 processes, 2 + 5 + 1 iterations)"
grep '^rank 0 iteration' "$out/run.txt"
