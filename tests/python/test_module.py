"""test_module.py - the Python module (python/stepcast/) against the CLI:
each function returns what the command of the same name prints with --json,
for the same options; errors carry the CLI's message; the library is found
where the module says; the ctypes mirrors of the option structs have the C
compiler's layout.
"""

import ctypes
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import types
import unittest

from support import BUILD, CLI, MEGATRON, ROOT, TRACES, cli, cli_warnings

import stepcast
from stepcast import _lib


def cli_json(*args):
    rc, out, err = cli(*args)
    if rc != 0:
        raise AssertionError("stepcast %s: exit %d: %s" % (" ".join(map(str, args)), rc, err))
    return json.loads(out), err


def header_fields(header, name):
    """The field names of `typedef struct NAME {...} NAME;` in the header,
    in order (several declarators on a line, pointers, arrays and nested
    struct types understood)."""
    m = re.search(r"typedef struct %s \{(.*?)\} %s;" % (name, name), header, re.S)
    if not m:
        raise AssertionError("no struct %s in stepcast.h" % name)
    body = re.sub(r"/\*.*?\*/", " ", m.group(1), flags=re.S)
    names = []
    for decl in body.split(";"):
        decl = decl.strip()
        if not decl:
            continue
        first, *more = decl.split(",")
        for d in [first] + more:
            d = re.sub(r"\[[^]]*\]", "", d).strip()
            names.append(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", d)[-1])
    return names


class SameAsTheCli(unittest.TestCase):
    def test_replay(self):
        want, err = cli_json("replay", "--json", "--verbose", MEGATRON)
        r = stepcast.replay(MEGATRON)
        self.assertIsInstance(r, stepcast.Result)
        self.assertEqual(r, want)
        self.assertEqual(r["step"]["simulated_us"], want["step"]["simulated_us"])
        self.assertGreater(r["step"]["simulated_us"], 0)
        # Every warning, as --verbose prints them (the CLI groups them by kind
        # otherwise: one line with a count).
        self.assertEqual(r.load_warnings, cli_warnings(err))
        self.assertEqual(len(r.load_warnings), 8)  # the Execution Traces of the folder, skipped
        _, grouped = cli_json("replay", "--json", MEGATRON)
        self.assertEqual(len(cli_warnings(grouped)), 1)

    def test_replay_options(self):
        files = sorted(os.path.join(MEGATRON, f) for f in os.listdir(MEGATRON) if "kineto" in f)
        want, _ = cli_json("replay", "--json", "--comm", "traced", "--scale", "gemm=0.5", "--scale", "cpu=2",
                           "--no-sensitivity", "--breakdown", "hta", "-j", "1", "--max-memory", "4G", *files)
        got = stepcast.replay(files, comm="traced", scale={"gemm": 0.5, "cpu": 2}, sensitivity=False,
                              breakdown="hta", jobs=1, max_memory="4G")
        self.assertEqual(got, want)
        self.assertEqual(got.load_warnings, [])
        self.assertFalse(got["sensitivity"]["computed"])
        self.assertIn("breakdown_hta", got)

    def test_predict(self):
        want, _ = cli_json("predict", "--json", "--dp", "16", "--gpu", "h100", "--gpus-per-node", "8",
                           "--net-gbps", "400", "--comm", "model", "--scale", "gemm=0.5", MEGATRON)
        got = stepcast.predict(MEGATRON, dp=16, gpu="h100", gpus_per_node=8, net_gbps=400, comm="model",
                               scale=["gemm=0.5"])
        self.assertEqual(got, want)
        self.assertEqual(got["prediction"]["new"]["ranks"], 16)

    def test_predict_edits(self):
        """predict's shape and parallel edits as keywords, against the CLI."""
        want, _ = cli_json("predict", "--json", "--layers", "30", "--hidden", "5120", "--seq", "1024", MEGATRON)
        got = stepcast.predict(MEGATRON, layers=30, hidden=5120, seq=1024)
        self.assertEqual(got, want)
        want, _ = cli_json("predict", "--json", "--tp", "4", "--micro-batch", "2", MEGATRON)
        self.assertEqual(stepcast.predict(MEGATRON, tp=4, micro_batch=2), want)
        self.assertNotEqual(got["prediction"], want["prediction"])

    def test_structure_kernels_diff(self):
        want, _ = cli_json("structure", "--json", MEGATRON)
        got = stepcast.structure(MEGATRON)
        self.assertEqual(got, want)
        self.assertEqual(len(got.load_warnings), 8)
        want, _ = cli_json("kernels", "--json", "--gpu", "h100", MEGATRON)
        self.assertEqual(stepcast.kernels(MEGATRON, gpu="h100"), want)
        a, b = (os.path.join(TRACES, "hta-testdata", "trace_diff", s) for s in ("control", "test"))
        want, _ = cli_json("diff", "--json", a, b)
        got = stepcast.diff(a, b)
        self.assertEqual(got, want)
        self.assertEqual(got.load_warnings, [])

    def test_model(self):
        """model needs no traces: a preset with fields, and a sweep when a
        field is given a list."""
        want, _ = cli_json("model", "--json", "--preset", "llama3-8b", "--tp", "4", "--kv-heads", "8",
                           "--sp", "true", "--recompute", "selective")
        got = stepcast.model(preset="llama3-8b", tp=4, kv_heads=8, sp=True, recompute="selective")
        self.assertEqual(got, want)
        want, _ = cli_json("model", "--json", "--sweep", "--preset", "llama3-8b", "--tp", "2,4", "--mbs", "1,2")
        got = stepcast.model(preset="llama3-8b", tp=[2, 4], mbs=(1, 2))
        self.assertEqual(got, want)
        self.assertEqual(got["tried"], 4)
        with tempfile.TemporaryDirectory() as tmp:
            mine, theirs = os.path.join(tmp, "py.json"), os.path.join(tmp, "cli.json")
            stepcast.model(preset="llama3-8b", chrome=mine)
            cli_json("model", "--json", "--preset", "llama3-8b", "--chrome", theirs)
            with open(mine, "rb") as x, open(theirs, "rb") as y:
                self.assertEqual(x.read(), y.read())

    def test_info_and_graph(self):
        want, _ = cli_json("info", "--json", "-j", "2", MEGATRON)
        self.assertEqual(stepcast.info(MEGATRON, jobs=2), want)
        want, _ = cli_json("graph", "--json", "--hide-cuda-sync", MEGATRON)
        self.assertEqual(stepcast.graph(MEGATRON, hide_cuda_sync=True), want)

    def test_iterations(self):
        trace = os.path.join(TRACES, "hta-testdata", "ns_resolution_trace")
        want, _ = cli_json("replay", "--json", "--all-iterations", "--no-sensitivity", trace)
        got = stepcast.replay(trace, all_iterations=True, sensitivity=False)
        self.assertEqual(got, want)
        self.assertEqual(len(got["iterations"]), 5)
        n = got["iterations"][1]["iteration"]
        want, _ = cli_json("replay", "--json", "--iteration", n, trace)
        self.assertEqual(stepcast.replay(trace, iteration=n), want)
        want, _ = cli_json("graph", "--json", "--iteration", n, trace)
        self.assertEqual(stepcast.graph(trace, iteration=n), want)

    def test_output_files(self):
        trace = os.path.join(TRACES, "hta-testdata", "critical_path", "simple_add")
        with tempfile.TemporaryDirectory() as tmp:
            mine, theirs = os.path.join(tmp, "py.json"), os.path.join(tmp, "cli.json")
            stepcast.replay(trace, chrome=mine)
            cli_json("replay", "--json", "--chrome", theirs, trace)
            with open(mine, "rb") as a, open(theirs, "rb") as b:
                self.assertEqual(a.read(), b.read())
            with self.assertRaisesRegex(stepcast.UsageError, "exists; use --force"):
                stepcast.replay(trace, chrome=mine)
            stepcast.predict(trace, chrome=mine, force=True)
            mine, theirs = os.path.join(tmp, "py.dot"), os.path.join(tmp, "cli.dot")
            stepcast.graph(trace, dot=mine)
            cli_json("graph", "--json", "--dot", theirs, trace)
            with open(mine, "rb") as a, open(theirs, "rb") as b:
                self.assertEqual(a.read(), b.read())
            self.assertEqual(sorted(os.listdir(tmp)), ["cli.dot", "cli.json", "py.dot", "py.json"])


class Errors(unittest.TestCase):
    def assertSameError(self, call, *args, cls=stepcast.Error):
        rc, _, err = cli(*args)
        self.assertNotEqual(rc, 0)
        with self.assertRaises(cls) as ctx:
            call()
        self.assertEqual("stepcast: %s" % ctx.exception, err.strip().splitlines()[-1])
        return ctx.exception

    def test_missing_file(self):
        e = self.assertSameError(lambda: stepcast.replay("/no/such/trace.json"), "replay", "/no/such/trace.json")
        self.assertEqual(e.file, "/no/such/trace.json")
        self.assertEqual(e.status, "I/O error")
        self.assertNotIsInstance(e, ValueError)

    def test_bad_json_names_the_place(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            f.write('{"traceEvents": [\n  {"ph": "X" "name": "a"}]}')
            f.flush()
            e = self.assertSameError(lambda: stepcast.info(f.name), "info", f.name)
            self.assertEqual((e.status, e.file, e.offset), ("parse error", f.name, 31))
            self.assertIn(e.message, str(e))

    def test_memory_budget(self):
        self.assertSameError(lambda: stepcast.replay(MEGATRON, max_memory="1K"), "replay", "--max-memory", "1K",
                             MEGATRON)

    def test_unknown_gpu(self):
        e = self.assertSameError(lambda: stepcast.predict(MEGATRON, gpu="nope"), "predict", "--gpu", "nope", MEGATRON,
                                 cls=stepcast.UsageError)
        self.assertIsInstance(e, ValueError)

    def test_pipeline_error(self):
        """The pipeline options reach the library: Megatron's 40 layers do
        not split evenly over 7 stages, with the CLI's message."""
        self.assertSameError(lambda: stepcast.predict(MEGATRON, pp=7, schedule="gpipe", microbatches=4), "predict",
                             "--pp", "7", "--schedule", "gpipe", "--microbatches", "4", MEGATRON,
                             cls=stepcast.UsageError)

    def test_model_errors(self):
        self.assertSameError(lambda: stepcast.model(preset="nope"), "model", "--preset", "nope",
                             cls=stepcast.UsageError)
        self.assertSameError(lambda: stepcast.model(preset="llama3-8b", heads=30, tp=4), "model", "--preset",
                             "llama3-8b", "--heads", "30", "--tp", "4", cls=stepcast.UsageError)
        with self.assertRaises(stepcast.UsageError):
            stepcast.model(warp_speed=9)

    def test_bad_arguments(self):
        for call in (lambda: stepcast.replay(MEGATRON, comm="fast"),
                     lambda: stepcast.replay(MEGATRON, iteration=-1),
                     lambda: stepcast.replay(MEGATRON, sensitivity="yes"),
                     lambda: stepcast.replay(MEGATRON, max_memory="lots"),
                     lambda: stepcast.replay(MEGATRON, jobs=-2),
                     lambda: stepcast.replay(MEGATRON, all_iterations=True, iteration=3),
                     lambda: stepcast.replay([]),
                     lambda: stepcast.replay(42),
                     lambda: stepcast.predict(MEGATRON, dp=0),
                     lambda: stepcast.predict(MEGATRON, tp=2000),
                     lambda: stepcast.predict(MEGATRON, microbatches=4),
                     lambda: stepcast.kernels(MEGATRON, gpu="h100", profile="p.json"),
                     lambda: stepcast.model(tp=[], preset="llama3-8b"),
                     lambda: stepcast.model(tp=[2, 4], chrome="x.json"),
                     lambda: stepcast.predict(MEGATRON, net_gbps=-1)):
            with self.assertRaises(stepcast.UsageError):
                call()


class Results(unittest.TestCase):
    def test_to_pandas(self):
        r = stepcast.Result({"ranks": [{"rank": 0, "breakdown": {"idle_us": 1.0}}], "step": {}})
        calls = []
        fake = types.ModuleType("pandas")
        fake.json_normalize = lambda rows: calls.append(rows) or "frame"
        saved = sys.modules.get("pandas")
        try:
            sys.modules["pandas"] = fake
            self.assertEqual(r.to_pandas(), "frame")
            self.assertIs(calls[0], r["ranks"])
            with self.assertRaises(KeyError):
                r.to_pandas("step")
            sys.modules["pandas"] = None  # what an import of a missing module finds
            with self.assertRaisesRegex(ImportError, "needs pandas"):
                r.to_pandas()
        finally:
            if saved is None:
                sys.modules.pop("pandas", None)
            else:
                sys.modules["pandas"] = saved

    def test_to_pandas_with_pandas(self):
        try:
            import pandas  # noqa: F401
        except ImportError:
            self.skipTest("pandas is not installed (Debian: python3-pandas)")
        df = stepcast.replay(MEGATRON).to_pandas()
        self.assertEqual(list(df["rank"]), list(range(8)))
        self.assertIn("breakdown.idle_us", df.columns)

    def test_version(self):
        rc, out, _ = cli("version")
        self.assertEqual(out.split(), ["stepcast", stepcast.version()])
        self.assertEqual(stepcast.__version__, stepcast.version())


class Library(unittest.TestCase):
    def run_python(self, code, env, cwd):
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=cwd)
        return p.returncode, p.stdout.strip(), p.stderr

    def env(self, **kw):
        env = {k: v for k, v in os.environ.items() if k not in ("STEPCAST_LIB", "LD_LIBRARY_PATH")}
        env.update(kw)
        return env

    def test_lookup_order(self):
        python = os.path.join(ROOT, "python")
        rc, _, err = self.run_python("import stepcast", self.env(PYTHONPATH=python, STEPCAST_LIB="/nope/lib.so"), "/")
        self.assertNotEqual(rc, 0)
        self.assertIn("$STEPCAST_LIB (/nope/lib.so: no such file)", err)
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copytree(os.path.join(python, "stepcast"), os.path.join(tmp, "stepcast"),
                            ignore=shutil.ignore_patterns("__pycache__"))
            beside = os.path.join(tmp, "stepcast", "libstepcast.so")
            os.symlink(os.path.join(BUILD, "libstepcast.so"), beside)
            rc, out, err = self.run_python("import stepcast; print(stepcast._lib.path)", self.env(PYTHONPATH=tmp), "/")
            self.assertEqual((rc, out), (0, beside), err)
            os.unlink(beside)
            rc, _, err = self.run_python("import stepcast", self.env(PYTHONPATH=tmp), "/")
            self.assertNotEqual(rc, 0)
            self.assertIn("the system's loader", err)
            rc, out, err = self.run_python("import stepcast; print(stepcast.version())",
                                           self.env(PYTHONPATH=tmp, LD_LIBRARY_PATH=BUILD), "/")
            self.assertEqual((rc, out), (0, stepcast.version()), err)
        if os.path.realpath(BUILD) == os.path.join(ROOT, "build"):
            rc, out, err = self.run_python("import stepcast; print(stepcast._lib.path)",
                                           self.env(PYTHONPATH=python), "/")
            self.assertEqual((rc, out), (0, os.path.join(ROOT, "build", "libstepcast.so")), err)

    def test_struct_fields(self):
        """Each ctypes mirror names the fields of its struct in stepcast.h,
        in order (read off the header: a field added there and not here is
        named in the failure)."""
        with open(os.path.join(ROOT, "include", "stepcast.h")) as f:
            header = f.read()
        for name, mirror in sorted(_lib.STRUCTS.items()):
            with self.subTest(struct=name):
                self.assertEqual([f for f, _ in mirror._fields_], header_fields(header, name))

    def test_struct_layout(self):
        """Each ctypes mirror has the size and field offsets that the C
        compiler gives the struct of stepcast.h, and each constant the
        header's value."""
        cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("cc")
        if not cc:
            self.skipTest("no C compiler")
        lines, want = [], []
        for name, mirror in sorted(_lib.STRUCTS.items()):
            lines.append('printf("%%zu\\n", sizeof(%s));' % name)
            want.append(ctypes.sizeof(mirror))
            for field, _ in mirror._fields_:
                lines.append('printf("%%zu\\n", offsetof(%s, %s));' % (name, field))
                want.append(getattr(mirror, field).offset)
        for name, value in sorted(_lib.CONSTANTS.items()):
            lines.append('printf("%%llu\\n", (unsigned long long)(%s));' % name)
            want.append(value)
        src = ("#include <stddef.h>\n#include <stdio.h>\n#include \"stepcast.h\"\n"
               "int main(void) {\n%s\nreturn 0;\n}\n" % "\n".join(lines))
        with tempfile.TemporaryDirectory() as tmp:
            c, exe = os.path.join(tmp, "layout.c"), os.path.join(tmp, "layout")
            with open(c, "w") as f:
                f.write(src)
            subprocess.run([cc, "-std=c17", "-I", os.path.join(ROOT, "include"), "-o", exe, c], check=True)
            got = [int(x) for x in subprocess.run([exe], capture_output=True, text=True, check=True).stdout.split()]
        self.assertEqual(got, want)


class Example(unittest.TestCase):
    def test_replay_from_python(self):
        """examples/replay_from_python.py runs on the bundled example and
        prints the replay's step."""
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
        p = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "replay_from_python.py")],
                           capture_output=True, text=True, env=env, cwd=ROOT)
        self.assertEqual(p.returncode, 0, p.stderr)
        want, _ = cli_json("replay", "--json", os.path.join(ROOT, "examples", "megatron-tp8"))
        self.assertIn("simulated %.3f ms" % (want["step"]["simulated_us"] / 1e3), p.stdout)
        self.assertIn("critical path:", p.stdout)

if __name__ == "__main__":
    unittest.main()
