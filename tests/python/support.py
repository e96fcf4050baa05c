"""support.py - what the Python tests share: where the checkout, the build
folder, the CLI and the shared traces are, and running the CLI.

tests/run.sh runs these tests from the top of the checkout with
STEPCAST_BUILD (the build folder) and STEPCAST_LIB (its libstepcast.so) set;
without them the build folder is build/. Real traces come from
../shared/traces, or $STEPCAST_SHARED/traces, as for the C tests.
"""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, os.environ.get("STEPCAST_BUILD", "build"))
CLI = os.path.join(BUILD, "stepcast")
SHARED = os.environ.get("STEPCAST_SHARED") or os.path.join(os.path.dirname(ROOT), "shared")
TRACES = os.path.join(SHARED, "traces")
MEGATRON = os.path.join(TRACES, "megatron-tp8-a100")

os.environ.setdefault("STEPCAST_LIB", os.path.join(BUILD, "libstepcast.so"))
sys.path.insert(0, os.path.join(ROOT, "python"))


def cli(*args):
    """Runs the CLI: (exit code, stdout, stderr) as text."""
    p = subprocess.run([CLI] + [str(a) for a in args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def cli_warnings(stderr):
    """The warning lines the CLI printed, without their prefix."""
    prefix = "stepcast: warning: "
    return [line[len(prefix):] for line in stderr.splitlines() if line.startswith(prefix)]
