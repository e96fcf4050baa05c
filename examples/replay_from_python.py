#!/usr/bin/env python3
"""replay_from_python.py - stepcast from Python, notebook style: replay a
job's traces, look at where the step goes, then ask what-if questions.

Run from the top of the checkout after `make test` (or `make shared`), with
the module on the path:

    PYTHONPATH=python python3 examples/replay_from_python.py [TRACE|DIR...]

or, after `make install`, with PYTHONPATH and LD_LIBRARY_PATH as the
README's "Install" section sets them. Without arguments it reads the
bundled 8-rank Megatron example (examples/megatron-tp8).
"""

import os
import sys

import stepcast

paths = sys.argv[1:] or [os.path.join(os.path.dirname(os.path.abspath(__file__)), "megatron-tp8")]

# %% The replay: what `stepcast replay --json` prints, as dicts and lists.
r = stepcast.replay(paths)
step = r["step"]
print("stepcast %s, %d ranks" % (stepcast.version(), len(r["ranks"])))
print("step: measured %.3f ms, simulated %.3f ms (error %s%%), bound by %s"
      % (step["measured_us"] / 1e3, step["simulated_us"] / 1e3, step["error_pct"], r["bound_by"]))
for w in r.load_warnings[:3]:
    print("  (load warning: %s)" % w)

# %% Per rank: the breakdown of the simulated step.
print("\nrank  simulated ms  exposed compute  exposed comm  overlap  idle")
for k in r["ranks"]:
    b = k["breakdown"]
    print("%4d  %12.3f  %15.3f  %12.3f  %7.3f  %.3f" % (
        k["rank"], k["simulated_us"] / 1e3, b["exposed_compute_us"] / 1e3, b["exposed_comm_us"] / 1e3,
        b["overlapped_us"] / 1e3, b["idle_us"] / 1e3))

# %% The critical path, by class.
cp = r["critical_path"]
print("\ncritical path: %.3f ms over %d tasks, ending on rank %d" % (cp["length_us"] / 1e3, cp["tasks"], cp["last_rank"]))
for item in cp["by_class"][:5]:
    print("  %-14s %10.3f ms  %6d tasks" % (item["name"], item["us"] / 1e3, item["count"]))

# %% What if: GEMMs twice as fast; the same job on H100s; the table as pandas.
faster = stepcast.replay(paths, scale={"gemm": 0.5}, sensitivity=False)
print("\nGEMMs x0.5: simulated step %.3f ms" % (faster["step"]["simulated_us"] / 1e3))
try:
    h100 = stepcast.predict(paths, gpu="h100", sensitivity=False)
    print("on %s: simulated step %.3f ms" % (h100["prediction"]["new"]["gpu"], h100["step"]["simulated_us"] / 1e3))
except stepcast.Error as e:  # e.g. traces whose GPU has no profile
    print("predict: %s" % e)
try:
    print("\n%s" % r.to_pandas()[["rank", "measured_us", "simulated_us", "error_pct"]].to_string(index=False))
except ImportError as e:
    print("\n(%s)" % e)
