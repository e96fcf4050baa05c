#!/bin/sh
# seeds.sh OUT - writes seed inputs for every fuzz target under OUT/<target>/
# from ../shared/traces (small files whole, slices of big ones) plus a few
# hand-written cases. Seeds are generated, never committed: the traces are
# not ours to copy into the repository.
set -eu
out=${1:?usage: seeds.sh OUTDIR}
root=$(cd "$(dirname "$0")/.." && pwd)
shared=${STEPCAST_SHARED:-$root/../shared}
traces=$shared/traces
mkdir -p "$out/fuzz_kineto" "$out/fuzz_json" "$out/fuzz_gzip" "$out/fuzz_cli" "$out/fuzz_chakra" \
    "$out/fuzz_et" "$out/fuzz_split" "$out/fuzz_template" "$out/fuzz_profile"

python3 - "$traces" "$out" <<'PY'
import gzip, os, sys, glob
traces, out = sys.argv[1], sys.argv[2]
def put(target, name, data):
    with open(os.path.join(out, target, name), "wb") as f:
        f.write(data)
def read(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rb") as f:
        return f.read(4 << 20)  # enough for slices; never the whole big file
kineto = sorted(glob.glob(traces + "/hta-testdata/**/*.json.gz", recursive=True) +
                glob.glob(traces + "/megatron-tp8-a100/megatron_kineto_0.json.gz") +
                glob.glob(traces + "/param-dlrm-8rank/kineto/worker0*.json"))
for i, path in enumerate(kineto):
    data = read(path)
    # The head up to a complete event, closed so it parses: header, a few
    # events of each vintage, and the real args layout.
    for n, size in enumerate((2048, 8192, 32768)):
        cut = data.rfind(b"},", 0, size)
        if cut < 0:
            continue
        head = data[:cut + 1] + b"]}"
        put("fuzz_kineto", "t%02d_head%d.json" % (i, n), head)
        put("fuzz_json", "t%02d_head%d" % (i, n), bytes([i * 7 % 256, n * 37 % 256]) + head[:4096])
        put("fuzz_gzip", "t%02d_head%d" % (i, n), b"\x01" + bytes([n * 17]) + head)
    # A raw (unclosed) slice from the middle: the reader must fail cleanly.
    mid = len(data) // 2
    put("fuzz_kineto", "t%02d_mid.json" % i, data[mid:mid + 4096])
    # The tail, where metadata after traceEvents lives.
    put("fuzz_kineto", "t%02d_tail.json" % i, b'{"traceEvents": [' + data[-2048:])
    put("fuzz_gzip", "t%02d_raw" % i, b"\x00\x05" + gzip.compress(data[:4096]))
hand = {
    "empty_object": b"{}",
    "bare_array": b'[{"ph":"X","name":"k","cat":"kernel","ts":1,"dur":2,"pid":0,"tid":7}]',
    "escapes": b'{"traceEvents":[{"ph":"X","name":"a\\u00e9\\ud83d\\ude00\\n","ts":1.5,"dur":0.001,"pid":"Spans","tid":-3}]}',
    "numbers": b'{"traceEvents":[{"ph":"X","ts":1e3,"dur":2.5e-1,"pid":0,"tid":0,"args":{"correlation":"0x1f","stream":7}}]}',
    "meta_after": b'{"traceEvents":[],"distributedInfo":{"rank":"3","world_size":8},"baseTimeNanoseconds":1000}',
}
for k, v in hand.items():
    put("fuzz_kineto", k + ".json", v)
    put("fuzz_json", k, b"\x03\x00" + v)
cli = [b"info\nt.json", b"info\n--json\nd", b"info\n--bogus", b"help\ninfo", b"help\nnope",
       b"version", b"info\n--\n-x", b"info\n--json\n--\nt.json\nt.json",
       b"graph\nt.json", b"replay\n--json\nt.json", b"export\n-o\nout.json\nt.json",
       b"info\n--max-memory\n1K\nt.json", b"info\n--max-memory\n99999999999G\nt.json",
       b"comm\n--gpu\nh100", b"comm\n--json\n--gpu\nmi300x\n--op\nall_to_all\n--ranks\n64",
       b"comm\n--gpu\na100\n--sizes\n1K,1G\n--net-gbps\n100", b"comm\nt.json"]
for i, v in enumerate(cli):
    put("fuzz_cli", "c%02d" % i, v)
for i, path in enumerate(sorted(glob.glob(traces + "/chakra-et/**/*.et*", recursive=True))[:24]):
    data = read(path)
    put("fuzz_chakra", "e%02d.et" % i, data[:65536])
# Execution Traces: the heads of the real ones, closed after a complete node.
ets = sorted(glob.glob(traces + "/megatron-tp8-a100/megatron_et_0.json.gz") +
             glob.glob(traces + "/param-dlrm-8rank/et/*0*.json*"))
for i, path in enumerate(ets):
    data = read(path)
    for n, size in enumerate((4096, 16384, 65536)):
        cut = data.rfind(b"},", 0, size)
        if cut > 0:
            put("fuzz_et", "et%02d_%d.json" % (i, n), data[:cut + 1] + b"]}")
    put("fuzz_et", "et%02d_raw.json" % i, data[:8192])
PY
# The splitter and template seeds are the reader's (plain Kineto JSON).
cp "$out"/fuzz_kineto/* "$out/fuzz_split/"
cp "$out"/fuzz_kineto/* "$out/fuzz_template/"
# Hardware profiles: the corpus's (ours: made by tests/corpus/gen.py).
cp "$root"/tests/corpus/profile_*.json "$out/fuzz_profile/"
