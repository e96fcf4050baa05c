#!/usr/bin/env python3
# benchgen_check.py OPS_JSON OUT NRANKS - checks a run of a program
# that `stepcast benchgen` generated (tests/test_benchgen.c): every rank
# wrote its summary (OUT: the --trace-dir folder, or the run's output) and
# executed each traced collective once per iteration with its traced size (each dimension shrunk by the op list's
# shrink factor, as the program's rule says), collective for collective.
# Prints one line, "benchgen_check: ok ..." or "benchgen_check: FAIL ...";
# exits non-zero on a failure.
import glob
import json
import os
import sys


def shrink(d, k):
    return d // k if k > 1 and d >= 64 and d % k == 0 else d


def elems(shape, k):
    if isinstance(shape, list) and shape and isinstance(shape[0], list):
        return sum(elems(s, k) for s in shape)
    p = 1
    for d in shape or []:
        p *= shrink(d, k)
    return p


def main():
    ops_path, out_path, nranks = sys.argv[1], sys.argv[2], int(sys.argv[3])
    data = json.load(open(ops_path))
    k = int(data.get("shrink", 1))
    traced = {}
    for r in data["ranks"]:
        want = {}
        for op in r["ops"]:
            if op["k"] != "collective":
                continue
            kind = op["coll"]
            if kind in ("all_to_allv", "all_to_all", "alltoall", "alltoall_base") and op.get("in_split"):
                n = sum(shrink(x, k) for x in op["in_split"])
            else:
                n = elems(op["shapes"][0], k)
            want[(kind, n)] = want.get((kind, n), 0) + 1
        traced[r["rank"]] = want
    seen = {}
    # OUT: the folder of the ranks' rank<R>.summary.json (bench.py's
    # --trace-dir), or a run's output with its BENCH_SUMMARY lines (which
    # ranks printing at once can interleave).
    if os.path.isdir(out_path):
        summaries = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(out_path, "rank*.summary.json")))]
    else:
        summaries = [json.loads(line[len("BENCH_SUMMARY "):]) for line in open(out_path, errors="replace")
                     if line.startswith("BENCH_SUMMARY ")]
    for s in summaries:
        seen[s["rank"]] = {(c["kind"], c["elements"]): c["count"] for c in s["collectives"]}
    bad = []
    if len(seen) != nranks:
        bad.append("%d of %d ranks printed a summary" % (len(seen), nranks))
    total = 0
    for rank, got in sorted(seen.items()):
        if got != traced.get(rank):
            bad.append("rank %d: ran %s, traced %s" % (rank, sorted(got.items()), sorted(traced.get(rank, {}).items())))
        total += sum(got.values())
    if bad:
        print("benchgen_check: FAIL " + "; ".join(bad))
        sys.exit(1)
    print("benchgen_check: ok %d ranks, %d collectives as traced" % (len(seen), total))


if __name__ == "__main__":
    main()
