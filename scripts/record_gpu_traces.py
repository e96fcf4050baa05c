#!/usr/bin/env python3
"""Record fresh Kineto traces (and PyTorch Execution Traces) of small GPT
training steps on one GPU, plus a GEMM / HBM sweep of that GPU.

This is how the traces under tests/data/h100-gpt/ were made (see its README):
one process per model size, DDP over NCCL with one rank (so the trace holds
the gradient all-reduce a data-parallel job would), bf16 autocast, AdamW,
the profiler with record_shapes, with_modules and enable_cuda_sync_events.
Each model's step is also timed without the profiler, so the profiler's own
cost can be told apart.  Nothing in CI runs this; it needs a CUDA GPU.

usage: python3 record_gpu_traces.py [--light] OUTDIR [SIZE...]

--light records without the Execution Trace observer and module names (the
profiler still records shapes and sync events), into OUTDIR/SIZE-light: the
host then runs much closer to its unprofiled speed, which is what a model
calibrated from the trace should see.
"""
import json
import math
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

SIZES = {
    #          layers hidden heads seq  mbs  vocab
    "tiny":   (4,     512,   8,    512, 8,   8192),
    "small":  (8,     1024,  16,   1024, 4,  32768),
    "medium": (12,    2048,  16,   2048, 2,  32768),
}


class Block(nn.Module):
    """One pre-norm GPT layer: attention (fused QKV, SDPA) and a 4h MLP."""

    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(hidden)
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)
        self.ln2 = nn.LayerNorm(hidden)
        self.fc1 = nn.Linear(hidden, 4 * hidden)
        self.fc2 = nn.Linear(4 * hidden, hidden)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(h, dim=2)
        q, k, v = (t.view(b, s, self.heads, h // self.heads).transpose(1, 2)
                   for t in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, h))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, layers, hidden, heads, seq, vocab):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(seq, hidden)
        self.layers = nn.ModuleList(Block(hidden, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden)
        self.head = nn.Linear(hidden, vocab, bias=False)

    def forward(self, idx):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.embed(idx) + self.pos(pos)
        for layer in self.layers:
            x = layer(x)
        return self.head(self.ln_f(x))


def train_step(model, opt, idx, tgt):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits = model(idx)
        loss = F.cross_entropy(logits.float().view(-1, logits.shape[-1]),
                               tgt.view(-1))
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss


def record(outdir, name, light=False):
    layers, hidden, heads, seq, mbs, vocab = SIZES[name]
    torch.manual_seed(0)
    model = DDP(GPT(layers, hidden, heads, seq, vocab).cuda())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    idx = torch.randint(0, vocab, (mbs, seq), device="cuda")
    tgt = torch.randint(0, vocab, (mbs, seq), device="cuda")

    for _ in range(5):
        train_step(model, opt, idx, tgt)
    torch.cuda.synchronize()
    steps = 20
    t0 = time.perf_counter()
    for _ in range(steps):
        train_step(model, opt, idx, tgt)
    torch.cuda.synchronize()
    step_ms = (time.perf_counter() - t0) * 1e3 / steps

    folder = name + "-light" if light else name
    os.makedirs(os.path.join(outdir, folder), exist_ok=True)
    et = None
    if not light:
        et_path = os.path.join(outdir, folder, "rank0.et.json")
        et = torch.profiler.ExecutionTraceObserver().register_callback(et_path)
    cfg = torch._C._profiler._ExperimentalConfig(enable_cuda_sync_events=True)
    sched = torch.profiler.schedule(wait=1, warmup=2, active=3, repeat=1)

    def save(prof):
        prof.export_chrome_trace(os.path.join(outdir, folder, "rank0.trace.json"))

    with torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU,
                        torch.profiler.ProfilerActivity.CUDA],
            schedule=sched, on_trace_ready=save, record_shapes=True,
            with_modules=not light, experimental_config=cfg,
            execution_trace_observer=et) as prof:
        for _ in range(6):
            train_step(model, opt, idx, tgt)
            prof.step()
    torch.cuda.synchronize()
    params = sum(p.numel() for p in model.parameters())
    info = {"model": name, "layers": layers, "hidden": hidden, "heads": heads,
            "seq": seq, "micro_batch": mbs, "vocab": vocab, "ffn": 4 * hidden,
            "params": params, "dtype": "bf16 autocast", "optimizer": "AdamW",
            "profiler": "shapes, sync events" + ("" if light else ", modules, execution trace"),
            "ddp_world": 1, "step_ms_unprofiled_mean_of_20": round(step_ms, 3),
            "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__}
    with open(os.path.join(outdir, folder, "config.json"), "w") as f:
        json.dump(info, f, indent=1)
    print(json.dumps(info), flush=True)
    del model, opt
    torch.cuda.empty_cache()


def timed(fn, reps):
    for _ in range(3):
        fn()
    start, end = torch.cuda.Event(True), torch.cuda.Event(True)
    start.record()
    for _ in range(reps):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1e3 / reps  # us


def sweep(outdir):
    """GEMM time by shape and dtype, HBM copy time by size: the ceilings a
    kernel cost model is bounded by."""
    rows = ["kind,dtype,m,n,k,bytes,time_us,tflops,gbps"]
    dims = [256, 512, 1024, 2048, 4096, 8192]
    for dt, dn in ((torch.bfloat16, "bf16"), (torch.float32, "fp32")):
        for m in dims:
            for n in dims:
                for k in (512, 2048, 8192):
                    a = torch.randn(m, k, device="cuda", dtype=dt)
                    b = torch.randn(k, n, device="cuda", dtype=dt)
                    us = timed(lambda: a @ b, 10)
                    rows.append(f"gemm,{dn},{m},{n},{k},0,{us:.2f},"
                                f"{2 * m * n * k / us / 1e6:.1f},0")
    for mib in (1, 4, 16, 64, 256, 1024):
        x = torch.empty(mib << 20, dtype=torch.uint8, device="cuda")
        y = torch.empty_like(x)
        us = timed(lambda: y.copy_(x), 10)
        rows.append(f"copy,u8,0,0,0,{mib << 20},{us:.2f},0,"
                    f"{2 * (mib << 20) / us / 1e3:.1f}")
    with open(os.path.join(outdir, "gemm_hbm_sweep.csv"), "w") as f:
        f.write("\n".join(rows) + "\n")


def main():
    args = sys.argv[1:]
    light = bool(args) and args[0] == "--light"
    if light:
        args = args[1:]
    outdir = args[0]
    names = args[1:] or list(SIZES)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29511")
    dist.init_process_group("nccl", rank=0, world_size=1)
    torch.cuda.set_device(0)
    for name in names:
        record(outdir, name, light)
    if not light:
        sweep(outdir)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
