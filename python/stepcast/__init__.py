"""stepcast - replay and predict the step time of distributed training from
PyTorch profiler (Kineto) traces, from Python.

A thin ctypes binding over libstepcast.so (the library the `stepcast` CLI
is built on): each function runs the same stages as the command of the
same name and returns what `stepcast COMMAND --json` prints, parsed with
the json module into dicts and lists (a Result, a dict with to_pandas()).

    import stepcast
    r = stepcast.replay("traces/")            # stepcast replay --json traces/
    r["step"]["simulated_us"]                  # the job's simulated step, us
    r.to_pandas()                              # one row per rank (needs pandas)
    stepcast.predict("traces/", dp=64, gpu="h100")
    stepcast.info(["rank0.json.gz", "rank1.json.gz"])
    stepcast.graph("traces/", iteration=3)
    stepcast.structure("traces/"); stepcast.kernels("traces/", gpu="a100-80gb")
    stepcast.diff("before/", "after/")         # stepcast diff --json before/ after/
    stepcast.model(preset="llama3-8b", tp=[2, 4, 8])   # model --sweep, no traces

Keyword options are the CLI's, with dashes as underscores (--gpus-per-node
is gpus_per_node=); flags are booleans; --scale takes a list of
"CLASS=FACTOR" strings or a dict; --sensitivity / --no-sensitivity is
sensitivity=True / False. Errors raise stepcast.Error with the message the
CLI prints (UsageError, also a ValueError, for bad arguments). The warnings
of loading the traces, which the CLI prints on stderr, are in
Result.load_warnings. See _lib.py for how libstepcast.so is found.
"""

import ctypes
import json
import os

from . import _lib
from ._lib import byref, c_char_p, c_i64, c_size, c_u64, c_void_p, lib

__all__ = ["Error", "UsageError", "Result", "info", "graph", "replay", "predict", "structure", "kernels",
           "model", "diff", "version"]
__version__ = lib.sc_version().decode()


def version():
    """The library's version ("0.1.0"), as `stepcast version` prints it."""
    return __version__


class Error(Exception):
    """A stepcast error: str(e) is what the CLI prints after "stepcast: ";
    status ("parse error", ...), file, offset (None when unknown), line and
    column (0 when unknown) and message say the same in parts."""

    def __init__(self, text, status="usage error", file="", offset=None, line=0, column=0, message=None):
        super().__init__(text)
        self.status, self.file, self.offset, self.line, self.column = status, file, offset, line, column
        self.message = text if message is None else message


class UsageError(Error, ValueError):
    """A bad argument (the CLI's exit code 2)."""


def _raise(err):
    buf = ctypes.create_string_buffer(1024)
    text = lib.sc_error_format(byref(err), buf, len(buf)).decode(errors="replace")
    cls = UsageError if err.status == _lib.SC_E_USAGE else Error
    offset = None if err.offset == _lib.SC_NO_OFFSET else err.offset
    raise cls(text, lib.sc_status_name(err.status).decode(), err.file.decode(errors="replace"), offset,
              err.line, err.column, err.message.decode(errors="replace"))


def _check(status, err):
    if status != _lib.SC_OK:
        _raise(err)


class Result(dict):
    """What `stepcast COMMAND --json` prints, as a dict. load_warnings: the
    warnings of loading the traces (the CLI's stderr lines)."""

    load_warnings = ()

    def to_pandas(self, table=None):
        """One of the result's lists of records as a pandas DataFrame, nested
        records flattened into dotted columns ("breakdown.idle_us"): table
        names the list ("ranks", the default, or "iterations" for
        all_iterations=True). Raises ImportError without pandas."""
        try:
            import pandas
        except ImportError as e:
            raise ImportError("Result.to_pandas needs pandas (Debian: apt-get install python3-pandas)") from e
        if table is None:
            table = "ranks" if "ranks" in self else "iterations"
        if table not in self or not isinstance(self[table], list):
            raise KeyError("no list of records named %r in this result (it has %s)" % (table, ", ".join(self)))
        return pandas.json_normalize(self[table])


# ---- arguments -------------------------------------------------------------

def _encode(value, what):
    if isinstance(value, bytes):
        return value
    if isinstance(value, (str, os.PathLike)):
        return os.fsencode(value)
    raise UsageError("%s: want a path or a string, got %r" % (what, value))


def _paths(paths):
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    elif not hasattr(paths, "__iter__"):
        raise UsageError("paths: want a path or a list of paths, got %r" % (paths,))
    encoded = [_encode(p, "paths") for p in paths]
    if not encoded:
        raise UsageError("no trace files given")
    return (c_char_p * len(encoded))(*encoded), len(encoded)


def _uint(name, value, low=0, high=2**63 - 1):
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise UsageError("%s wants a whole number from %d to %d, got %r" % (name, low, high, value))
    return value


def _load_options(jobs, max_memory):
    o = _lib.LoadOptions()
    if max_memory is not None:
        if isinstance(max_memory, int) and not isinstance(max_memory, bool):
            o.max_memory_bytes = _uint("max_memory", max_memory, 1, 2**64 - 1)
        else:
            n = c_u64()
            if lib.sc_parse_bytes(_encode(max_memory, "max_memory"), byref(n)) != _lib.SC_OK:
                raise UsageError("max_memory wants a size such as 512M or 8G, got %r" % (max_memory,))
            o.max_memory_bytes = n.value
    if jobs is not None:
        # As the CLI's -j: 0 asks for every core, whatever $STEPCAST_THREADS says.
        jobs = _uint("jobs", jobs, 0, 4096)
        o.threads = jobs if jobs else (os.cpu_count() or 1)
    return o


def _choice(name, value, choices):
    if value not in choices:
        raise UsageError("%s wants %s, got %r" % (name, " or ".join(choices), value))
    return choices[value]


def _scales(scale):
    if scale is None:
        return []
    if isinstance(scale, (str, bytes)):
        scale = [scale]
    elif isinstance(scale, dict):
        scale = ["%s=%s" % (k, v) for k, v in scale.items()]
    return [_encode(s, "scale") for s in scale]


def _replay_options(o, iteration, comm, scale, sensitivity, breakdown):
    o.graph.iteration = -1 if iteration is None else _uint("iteration", iteration)
    o.graph.release_traces = 1  # the set is only freed after the run
    o.comm = _choice("comm", comm, _lib.SC_COMM)
    scales = _scales(scale)
    keep = (c_char_p * max(len(scales), 1))(*scales)
    o.scales, o.nscales = keep, len(scales)
    if sensitivity not in (None, True, False):
        raise UsageError("sensitivity wants None (auto), True or False, got %r" % (sensitivity,))
    o.sensitivity = {None: _lib.SC_SENSITIVITY_AUTO, True: _lib.SC_SENSITIVITY_ON,
                     False: _lib.SC_SENSITIVITY_OFF}[sensitivity]
    o.breakdown = _choice("breakdown", breakdown, _lib.SC_BREAKDOWN)
    return keep  # the caller keeps the strings alive while the library reads them


# ---- running ---------------------------------------------------------------

class _Handle:
    """A library handle freed with its _free function on leaving the block."""

    def __init__(self, free):
        self.ptr, self.free = c_void_p(), free

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.ptr.value:
            self.free(self.ptr)
            self.ptr = c_void_p()


def _capture(write):
    """The text write(FILE *) writes, through an sc_buffer."""
    err = _lib.ScError()
    buf = c_void_p()
    _check(lib.sc_buffer_open(byref(buf), byref(err)), err)
    status = write(lib.sc_buffer_file(buf), err)
    if status != _lib.SC_OK:
        lib.sc_buffer_abort(buf)
        _raise(err)
    data, size = c_void_p(), c_size()
    _check(lib.sc_buffer_take(buf, byref(data), byref(size), byref(err)), err)
    try:
        return ctypes.string_at(data, size.value).decode()
    finally:
        lib.sc_free(data)


def _result(write, warnings):
    r = Result(json.loads(_capture(write)))
    r.load_warnings = warnings
    return r


def _write_file(path, force, write):
    """Writes an output file as the CLI does: a temporary file renamed into
    place, an existing one replaced only with force=True."""
    err = _lib.ScError()
    out = c_void_p()
    _check(lib.sc_output_open(_encode(path, "output"), _lib.SC_OUTPUT_FORCE if force else 0, byref(out),
                              byref(err)), err)
    if write(lib.sc_output_file(out), err) != _lib.SC_OK:
        lib.sc_output_abort(out)
        _raise(err)
    _check(lib.sc_output_commit(out, byref(err)), err)


def _load_set(paths, jobs, max_memory):
    arr, n = _paths(paths)
    load = _load_options(jobs, max_memory)
    err = _lib.ScError()
    h = _Handle(lib.sc_traceset_free)
    _check(lib.sc_traceset_load(arr, n, byref(load), byref(h.ptr), byref(err)), err)
    warnings = [lib.sc_traceset_warning(h.ptr, i).decode(errors="replace")
                for i in range(lib.sc_traceset_warning_count(h.ptr))]
    return h, warnings


def info(paths, *, jobs=None, max_memory=None):
    """`stepcast info --json PATHS`: what each rank's trace holds."""
    arr, n = _paths(paths)
    load = _load_options(jobs, max_memory)
    err = _lib.ScError()
    with _Handle(lib.sc_info_free) as h:
        _check(lib.sc_info_load(arr, n, byref(load), byref(h.ptr), byref(err)), err)
        warnings = [lib.sc_info_warning(h.ptr, i).decode(errors="replace")
                    for i in range(lib.sc_info_warning_count(h.ptr))]
        return _result(lambda f, e: lib.sc_info_write(h.ptr, f, 1, byref(e)), warnings)


def graph(paths, *, iteration=None, hide_cuda_sync=False, dot=None, force=False, jobs=None, max_memory=None):
    """`stepcast graph --json PATHS`: the execution graph of one iteration;
    dot=FILE also writes it in Graphviz DOT (replacing FILE only with
    force=True)."""
    o = _lib.GraphOptions(iteration=-1 if iteration is None else _uint("iteration", iteration),
                          hide_cuda_sync=1 if hide_cuda_sync else 0)
    s, warnings = _load_set(paths, jobs, max_memory)
    err = _lib.ScError()
    with s, _Handle(lib.sc_graph_free) as g:
        _check(lib.sc_graph_build(s.ptr, byref(o), byref(g.ptr), byref(err)), err)
        s.__exit__()
        if dot is not None:
            _write_file(dot, force, lambda f, e: lib.sc_graph_write_dot(g.ptr, f, byref(e)))
        return _result(lambda f, e: lib.sc_graph_write(g.ptr, f, 1, byref(e)), warnings)


def _replay_each(s, o, warnings):
    """all_iterations=True: every ProfilerStep the ranks share, one row each."""
    err = _lib.ScError()
    numbers, count = _lib.POINTER(c_i64)(), c_size()
    _check(lib.sc_replay_iterations(s.ptr, byref(numbers), byref(count), byref(err)), err)
    its = [numbers[i] for i in range(count.value)] or [-1]
    lib.sc_free(numbers)
    o.graph.release_traces = 0  # the traces serve every iteration's build
    table = _lib.IterationsTable()

    def write(f, e):
        for it in its:
            o.graph.iteration = it
            with _Handle(lib.sc_replay_free) as r:
                st = lib.sc_replay_run(s.ptr, byref(o), byref(r.ptr), byref(e))
                if st == _lib.SC_OK:
                    st = lib.sc_replay_write_iteration(r.ptr, it, byref(table), f, 1, byref(e))
                if st != _lib.SC_OK:
                    return st
        return lib.sc_replay_write_iterations_end(byref(table), f, 1, byref(e))

    return _result(write, warnings)


def _run(paths, run, o, chrome, force, jobs, max_memory):
    s, warnings = _load_set(paths, jobs, max_memory)
    err = _lib.ScError()
    with s, _Handle(lib.sc_replay_free) as r:
        _check(run(s.ptr, byref(o), byref(r.ptr), byref(err)), err)
        s.__exit__()
        if chrome is not None:
            _write_file(chrome, force, lambda f, e: lib.sc_replay_write_chrome(r.ptr, f, byref(e)))
        return _result(lambda f, e: lib.sc_replay_write(r.ptr, f, 1, byref(e)), warnings)


def replay(paths, *, iteration=None, all_iterations=False, comm="coupled", scale=None, sensitivity=None,
           breakdown="stepcast", chrome=None, force=False, jobs=None, max_memory=None):
    """`stepcast replay --json PATHS`: the traced iteration simulated on every
    rank; result["step"]["simulated_us"] is the job's simulated step.
    all_iterations=True replays each ProfilerStep instead (the result is
    {"iterations": [...], "summary": {...}}); chrome=FILE also writes the
    simulated and measured timelines (replacing FILE only with force=True)."""
    o = _lib.ReplayOptions()
    keep = _replay_options(o, iteration, comm, scale, sensitivity, breakdown)
    if all_iterations:
        if iteration is not None or chrome is not None:
            raise UsageError("all_iterations replays every iteration: it takes no iteration or chrome "
                             "(give iteration=N for those)")
        s, warnings = _load_set(paths, jobs, max_memory)
        with s:
            result = _replay_each(s, o, warnings)
    else:
        result = _run(paths, lib.sc_replay_run, o, chrome, force, jobs, max_memory)
    del keep
    return result


def _rate(name, value):
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1e9:
        raise UsageError("%s wants a bandwidth > 0, got %r" % (name, value))
    return float(value)


# predict's whole-number edits: keyword -> the CLI's bounds (0 in the
# struct is "the trace's", so each is at least 1).
_PREDICT_COUNTS = {"dp": 1 << 24, "nodes": 1 << 20, "gpus_per_node": 1024, "layers": 1 << 16,
                   "hidden": 1 << 24, "ffn": 1 << 26, "heads": 1 << 16, "seq": 1 << 24, "micro_batch": 1 << 16,
                   "tp": 1024, "pp": 1024, "virtual_stages": 1024, "microbatches": 1 << 16}


def predict(paths, *, iteration=None, comm="coupled", scale=None, sensitivity=None, breakdown="stepcast",
            dp=None, nodes=None, gpus_per_node=None, net_gbps=None, nvlink_gbps=None, gpu=None, profile=None,
            layers=None, hidden=None, ffn=None, heads=None, seq=None, micro_batch=None, tp=None, pp=None,
            schedule=None, virtual_stages=None, microbatches=None, model_backward=False, recompute=None,
            chrome=None, force=False, jobs=None, max_memory=None):
    """`stepcast predict --json PATHS`: the traced iteration edited into
    another job (dp: data-parallel degree; nodes, gpus_per_node, net_gbps
    per GPU, nvlink_gbps per GPU and direction; gpu: a profile name, or
    profile: a profile file; layers; the model's shape: hidden, ffn, heads,
    seq, micro_batch; tp: tensor-parallel degree; pp: pipeline stages, with
    schedule "gpipe", "1f1b" or "interleaved", virtual_stages and
    microbatches; model_backward: a modelled backward; recompute: "none",
    "selective" or "full") and simulated; the replay's report plus
    result["prediction"]."""
    o = _lib.PredictOptions()
    keep = _replay_options(o.replay, iteration, comm, scale, sensitivity, breakdown)
    given = locals()
    for name, high in _PREDICT_COUNTS.items():
        value = given[name]
        setattr(o, name, 0 if value is None else _uint(name, value, 1, high))
    if not pp and (schedule is not None or virtual_stages or microbatches):
        raise UsageError("schedule, virtual_stages and microbatches go with pp")
    o.net_gbps, o.nvlink_gbps = _rate("net_gbps", net_gbps), _rate("nvlink_gbps", nvlink_gbps)
    o.model_backward = 1 if model_backward else 0
    strings = [None if v is None else _encode(v, k)
               for k, v in (("gpu", gpu), ("profile", profile), ("schedule", schedule), ("recompute", recompute))]
    o.gpu, o.profile_path, o.schedule, o.recompute = strings
    result = _run(paths, lib.sc_predict_run, o, chrome, force, jobs, max_memory)
    del keep, strings
    return result


def _analyse(paths, run, free, write, jobs, max_memory):
    """Loads a set, runs run(set, &handle, &err) and returns write's JSON."""
    s, warnings = _load_set(paths, jobs, max_memory)
    err = _lib.ScError()
    with s, _Handle(free) as h:
        _check(run(s.ptr, byref(h.ptr), byref(err)), err)
        s.__exit__()
        return _result(lambda f, e: write(h.ptr, f, 1, byref(e)), warnings)


def structure(paths, *, iteration=None, jobs=None, max_memory=None):
    """`stepcast structure --json PATHS`: the traced iteration's phases,
    repeated layers, collective roles and the model's dimensions."""
    o = _lib.StructureOptions(iteration=-1 if iteration is None else _uint("iteration", iteration))
    return _analyse(paths, lambda s, out, e: lib.sc_structure_run(s, byref(o), out, e), lib.sc_structure_free,
                    lib.sc_structure_write, jobs, max_memory)


def kernels(paths, *, gpu=None, profile=None, iteration=None, jobs=None, max_memory=None):
    """`stepcast kernels --json PATHS`: the kernel cost model against the
    trace's kernels, per class (gpu: a profile name, or profile: a file;
    default the traces' GPU)."""
    if gpu is not None and profile is not None:
        raise UsageError("gpu and profile both name the GPU: give one")
    o = _lib.KernelsOptions()
    o.graph.iteration = -1 if iteration is None else _uint("iteration", iteration)
    strings = [None if v is None else _encode(v, k) for k, v in (("gpu", gpu), ("profile", profile))]
    o.gpu, o.profile_path = strings
    return _analyse(paths, lambda s, out, e: lib.sc_kernels_run(s, byref(o), out, e), lib.sc_kernels_free,
                    lib.sc_kernels_write, jobs, max_memory)


def diff(a, b, *, jobs=None, max_memory=None):
    """`stepcast diff --json A B`: two traces or trace sets (a file or a
    folder each) compared per step, kernel class, collective kind, operator
    and kernel, every section sorted by impact. load_warnings holds A's
    warnings, then B's."""
    sa, wa = _load_set(a, jobs, max_memory)
    with sa:
        sb, wb = _load_set(b, jobs, max_memory)
        err = _lib.ScError()
        with sb, _Handle(lib.sc_diff_free) as d:
            _check(lib.sc_diff_run(sa.ptr, sb.ptr, byref(d.ptr), byref(err)), err)
            return _result(lambda f, e: lib.sc_diff_write(d.ptr, f, 1, 0, byref(e)), wa + wb)


def _field_text(key, value):
    if isinstance(value, bool):
        return b"true" if value else b"false"
    if isinstance(value, (int, float)):
        return str(value).encode()
    return _encode(value, key)


def model(*, preset=None, config=None, chrome=None, force=False, **fields):
    """`stepcast model --json`: a transformer training step from its
    configuration alone (no traces). preset: a preset name; config: a JSON
    file of fields; then each keyword is a field as the CLI names it, dashes
    as underscores (layers=32, kv_heads=8, dtype="bf16", sp=True,
    recompute="selective", gpu="h100", ...). A field given a list (tp=[2,
    4, 8]) makes it `model --sweep`: every combination is run and the rows
    come back sorted by step time (chrome does not go with a sweep)."""
    err = _lib.ScError()
    sets, sweeps = [], []
    for key, value in fields.items():
        name = key.replace("_", "-").encode()
        if isinstance(value, (list, tuple)):
            if not value:
                raise UsageError("%s: an empty list to sweep" % key)
            sweeps.append((name, b",".join(_field_text(key, v) for v in value)))
        else:
            sets.append((name, _field_text(key, value)))
    if sweeps and chrome is not None:
        raise UsageError("chrome writes one run's timeline: it does not go with a sweep (a list value)")
    with _Handle(lib.sc_model_config_free) as c:
        _check(lib.sc_model_config_new(byref(c.ptr), byref(err)), err)
        if preset is not None:
            _check(lib.sc_model_config_preset(c.ptr, _encode(preset, "preset"), byref(err)), err)
        if config is not None:
            _check(lib.sc_model_config_load(c.ptr, _encode(config, "config"), byref(err)), err)
        for name, text in sets:
            _check(lib.sc_model_config_set(c.ptr, name, text, byref(err)), err)
        if sweeps:
            keys = (c_char_p * len(sweeps))(*[k for k, _ in sweeps])
            lists = (c_char_p * len(sweeps))(*[v for _, v in sweeps])
            with _Handle(lib.sc_model_sweep_free) as sw:
                _check(lib.sc_model_sweep_run(c.ptr, keys, lists, len(sweeps), byref(sw.ptr), byref(err)), err)
                return _result(lambda f, e: lib.sc_model_sweep_write(sw.ptr, f, 1, byref(e)), [])
        with _Handle(lib.sc_model_free) as m:
            _check(lib.sc_model_run(c.ptr, byref(m.ptr), byref(err)), err)
            if chrome is not None:
                replay = c_void_p(lib.sc_model_replay(m.ptr))
                _write_file(chrome, force, lambda f, e: lib.sc_replay_write_chrome(replay, f, byref(e)))
            return _result(lambda f, e: lib.sc_model_write(m.ptr, f, 1, byref(e)), [])
