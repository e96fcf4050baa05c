#!/usr/bin/env python3
"""gen.py - writes the small hand-made hostile inputs of tests/corpus/.

Run from anywhere: `python3 tests/corpus/gen.py`. The outputs are committed
(they are tiny); this script documents how each was made. Every input is a
variation of one well-formed 2-rank job (mini/), so a case changes exactly
one thing. Cases themselves (command, exit code, message) are the *.case
files beside the inputs; test_corpus.c runs them.
"""
import gzip, json, os

HERE = os.path.dirname(os.path.abspath(__file__))

def events(rank, shift_ns=0, nccl=True, launch=True, kernel=True, extra=()):
    us = lambda x: x + shift_ns / 1000.0
    ev = [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 100, "tid": 100,
         "ts": us(1000), "dur": 1000},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 100, "tid": 100, "ts": us(1010),
         "dur": 50, "args": {"External id": 1}},
    ]
    if launch:
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100,
                   "tid": 100, "ts": us(1020), "dur": 10,
                   "args": {"correlation": 11, "External id": 1, "cbid": 211}})
    if kernel:
        ev.append({"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64_nn", "pid": 0,
                   "tid": 7, "ts": us(1040), "dur": 200,
                   "args": {"correlation": 11, "stream": 7, "device": 0, "External id": 1}})
    ev.append({"ph": "X", "cat": "cpu_op", "name": "nccl:all_reduce", "pid": 100, "tid": 100,
               "ts": us(1100), "dur": 30, "args": {"External id": 2}})
    if nccl:
        ev += [
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": 100,
             "ts": us(1110), "dur": 10, "args": {"correlation": 12, "External id": 2, "cbid": 211}},
            {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
             "pid": 0, "tid": 24, "ts": us(1250), "dur": 100,
             "args": {"correlation": 12, "stream": 24, "device": 0}},
        ]
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "pid": 100,
               "tid": 100, "ts": us(1200), "dur": 200, "args": {"correlation": 13}})
    ev += list(extra)
    return ev

def trace(rank, world=2, **kw):
    return {"schemaVersion": 1,
            "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": world},
            "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-40GB", "numSms": 108}],
            "traceEvents": events(rank, **kw)}

def put(rel, data):
    path = os.path.join(HERE, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if isinstance(data, (dict, list)):
        data = json.dumps(data, indent=None).replace("}, {", "},\n{").encode() + b"\n"
    with open(path, "wb") as f:
        f.write(data)

def job(name, t0, t1):
    put(name + "/rank0.json", t0)
    put(name + "/rank1.json", t1)

# The well-formed reference job.
job("mini", trace(0), trace(1))
# Semantic cases, one change each.
job("collective_one_rank", trace(0), trace(1, nccl=False))
job("world_size_mismatch", trace(0, world=2), trace(1, world=4))
job("same_rank_twice", trace(0), trace(0))
job("clock_offset_hours", trace(0), trace(1, shift_ns=3 * 3600 * 10**9))
job("kernel_without_launch", trace(0, launch=False), trace(1, launch=False))
job("launch_without_kernel", trace(0, kernel=False), trace(1, kernel=False))
job("rank_out_of_range", trace(0), trace(5))
dup_corr = [{"ph": "X", "cat": "kernel", "name": "dup_kernel", "pid": 0, "tid": 7, "ts": 1300,
             "dur": 5, "args": {"correlation": 11, "stream": 7, "device": 0}}]
job("duplicate_correlation", trace(0, extra=dup_corr), trace(1, extra=dup_corr))

# Syntax and number cases: one event, one defect.
def one(ev_text):
    return (b'{"distributedInfo": {"rank": 0, "world_size": 1}, "traceEvents": [\n' +
            ev_text + b"\n]}\n")
base = b'{"ph": "X", "cat": "cpu_op", "name": "%s", "pid": 1, "tid": 1, "ts": %s, "dur": %s}'
def ev(name=b"op", ts=b"10", dur=b"5"):
    return base % (name, ts, dur)
put("invalid_utf8.json", one(ev(name=b"bad \xff byte")))
put("overlong_utf8.json", one(ev(name=b"slash \xc0\xaf")))
put("surrogate_utf8.json", one(ev(name=b"half \xed\xa0\x80 pair")))
put("truncated_utf8.json", one(ev(name=b"cut \xe2\x82")))
put("nul_in_string.json", one(ev(name=b"nul \x00 byte")))
put("nul_between_tokens.json", one(ev() + b"\x00"))
put("dup_key_ts.json", one(b'{"ph": "X", "name": "op", "pid": 1, "tid": 1, "ts": 10, "ts": 99, "dur": 5}'))
put("dup_key_ph.json", one(b'{"ph": "X", "ph": "i", "name": "op", "pid": 1, "tid": 1, "ts": 10, "dur": 5}'))
put("dup_trace_events.json", b'{"traceEvents": [' + ev() + b'], "traceEvents": [' + ev() + b']}\n')
put("dup_distributed_info.json", b'{"distributedInfo": {"rank": 0}, "distributedInfo": {"rank": 3}, "traceEvents": [' + ev() + b']}\n')
put("ts_dur_overflow.json", one(ev(ts=b"9223372036854775", dur=b"9223372036854775")))
put("ts_too_large.json", one(ev(ts=b"92233720368547758070")))
put("ts_exponent_huge.json", one(ev(ts=b"1e300")))
put("ts_exponent_overflow.json", one(ev(ts=b"1e400")))
put("negative_dur.json", one(ev(dur=b"-5")))
put("negative_ts.json", one(ev(ts=b"-10")))
put("nan_literal.json", one(ev(ts=b"NaN")))
put("infinity_literal.json", one(ev(dur=b"Infinity")))
put("neg_infinity_literal.json", one(ev(ts=b"-Infinity")))
put("leading_zero.json", one(ev(ts=b"0012")))
put("plus_sign.json", one(ev(ts=b"+12")))
put("hex_number.json", one(ev(ts=b"0x10")))
put("correlation_out_of_range.json", one(b'{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1, "args": {"correlation": 99999999999999999999}}'))
put("trailing_comma.json", one(ev() + b","))
put("single_quotes.json", one(b"{'ph': 'X'}"))
put("comment.json", one(b"// a comment\n" + ev()))
put("bom.json", b"\xef\xbb\xbf" + one(ev()))
put("garbage_after_end.json", one(ev()) + b"{}")
put("deep_args.json", one(b'{"ph": "X", "name": "op", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": {"x": ' + b"[" * 100000 + b"]" * 100000 + b"}}"))
put("not_json.txt.json", b"this is not a trace\n")
put("binary_noise.json", bytes(range(256)) * 4)
put("gzip_corrupt.json.gz", gzip.compress(one(ev()), mtime=0)[:20] + b"\xff" * 16 + gzip.compress(one(ev()), mtime=0)[36:])
put("gzip_truncated.json.gz", gzip.compress(one(ev()) * 1, mtime=0)[:-6])
put("gzip_then_garbage.json.gz", gzip.compress(one(ev()), mtime=0) + b"garbage!")
put("empty.json", b"")
put("whitespace.json", b"  \n\t \n")
put("ph_empty.json", one(b'{"ph": "", "name": "op", "pid": 1, "tid": 1, "ts": 1}'))
put("ph_not_string.json", one(b'{"ph": 88, "name": "op", "pid": 1, "tid": 1, "ts": 1}'))
put("event_not_object.json", one(b'[1, 2, 3]'))
put("trace_events_object.json", b'{"traceEvents": {"ph": "X"}}\n')
put("top_level_string.json", b'"traceEvents"\n')

# Chakra (protobuf, varint-framed) cases: a tiny encoder is enough.
def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)
def field(num, wire, payload):
    key = varint((num << 3) | wire)
    if wire == 0:
        return key + varint(payload)
    return key + varint(len(payload)) + payload
def attr_bool(name, v):
    return field(10, 2, field(1, 2, name.encode()) + field(27, 0, 1 if v else 0))
def node(nid, name, ntype=4, ctrl=(), data=(), dur=10):
    body = field(1, 0, nid) + field(2, 2, name.encode()) + field(3, 0, ntype)
    if ctrl:
        body += field(4, 2, b"".join(varint(d) for d in ctrl))
    if data:
        body += field(5, 2, b"".join(varint(d) for d in data))
    body += field(7, 0, dur) + attr_bool("is_cpu_op", False)
    return body
def frame(msg):
    return varint(len(msg)) + msg
def et_file(nodes):
    meta = field(1, 2, b"0.0.4")
    return frame(meta) + b"".join(frame(n) for n in nodes)
put("chakra_ok/job.0.et", et_file([node(1, "a"), node(2, "b", ctrl=[1]), node(3, "c", data=[2])]))
put("chakra_cycle/job.0.et", et_file([node(1, "a", ctrl=[3]), node(2, "b", ctrl=[1]), node(3, "c", ctrl=[2])]))
put("chakra_self_loop/job.0.et", et_file([node(1, "a", ctrl=[1])]))
put("chakra_dangling/job.0.et", et_file([node(1, "a"), node(2, "b", data=[99])]))
put("chakra_dup_ids/job.0.et", et_file([node(1, "a"), node(1, "b"), node(2, "c", ctrl=[1])]))
put("chakra_truncated/job.0.et", et_file([node(1, "a"), node(2, "b", ctrl=[1])])[:-3])
put("chakra_huge_frame/job.0.et", frame(field(1, 2, b"0.0.4")) + varint(1 << 31) + b"\x08\x01")
put("chakra_bad_type/job.0.et", et_file([node(1, "a", ntype=99)]))
# Two collectives (COMM_COLL_NODE) without comm_size: their size is unknown, which a warning says.
put("chakra_no_size/job.0.et", et_file([node(1, "all_reduce", ntype=7), node(2, "all_reduce", ntype=7, data=[1])]))
put("chakra_empty/job.0.et", b"")
# baseTimeNanoseconds near the int64 limit: adding it to ts must not overflow.
put("base_time_overflow.json", b'{"baseTimeNanoseconds": 9000000000000000000, "traceEvents": [' +
    ev(ts=b"4000000000000000") + b"]}\n")
put("base_time_negative_overflow.json", b'{"baseTimeNanoseconds": -9000000000000000000, "traceEvents": [' +
    ev(ts=b"-4000000000000000") + b"]}\n")
# Durations near the int64 limit: each event is legal, their sum is not
# (the simulator overflowed start + dur before it checked the total).
D = 4000000000000000  # us = 4e18 ns
huge = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": D}]
for i in range(4):
    huge.append({"ph": "X", "cat": "cpu_op", "name": "op%d" % i, "pid": 1, "tid": 1, "ts": i, "dur": D - 10})
    huge.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                 "ts": i + 0.5, "dur": 0.1, "args": {"correlation": 100 + i}})
    huge.append({"ph": "X", "cat": "kernel", "name": "k%d" % i, "pid": 0, "tid": 7, "ts": i + 1,
                 "dur": D - 100, "args": {"correlation": 100 + i, "stream": 7, "device": 0}})
put("huge_durations.json", {"distributedInfo": {"rank": 0, "world_size": 1}, "traceEvents": huge})
# One CPU op 17 years before the rest (a corrupt timestamp; fuzz_kineto found
# it): the step would span 150000 hours and its 1 ms SM-busy table 4 TB.
early = trace(0, world=1)
del early["traceEvents"][0]  # no ProfilerStep: the whole trace is the step
early["traceEvents"][0]["ts"] = 1010 - 540000000000000
put("cpu_op_years_early.json", early)
# Hardware profiles (`comm --profile`): one good profile, then one thing
# wrong with it at a time.
PROFILE = {"name": "mine", "fp64_tflops": 34, "fp32_tflops": 67, "tf32_tflops": 494.5,
           "fp16_tflops": 989.5, "bf16_tflops": 989.5, "fp8_tflops": 1979, "hbm_GBps": 3350,
           "memory_GB": 80, "sm_count": 132, "nvlink_GBps": 450, "nvls": True, "gpus_per_node": 8,
           "nics_per_node": 8, "nic_Gbps": 400, "comm_base_us": 23, "comm_ll_frac": 0.82,
           "nvlink_simple_us": 11.85, "nvlink_eff": 0.816, "nvls_us": 50.9, "nvls_eff": 0.599,
           "net_eff": 0.91}
def profile(**changes):
    p = dict(PROFILE)
    for k, v in changes.items():
        if v is None:
            del p[k]
        else:
            p[k] = v
    return json.dumps(p).encode() + b"\n"
put("profile_ok.json", profile())
put("profile_number_too_large.json", profile(hbm_GBps=1e999).replace(b"Infinity", b"1e999"))
put("profile_nested_value.json", profile(nvls=[[[[[[[[True]]]]]]]]))
put("profile_long_name.json", profile(name="x" * 100000))
put("profile_nul_in_name.json", profile(name="a\u0000b"))
put("profile_truncated.json", profile()[:200])
put("profile_binary_noise.json", bytes(range(256)))
