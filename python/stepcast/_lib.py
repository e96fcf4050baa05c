"""_lib.py - finds libstepcast.so and declares, with ctypes, the part of
stepcast.h that the module calls.

The structs below mirror the option structs of include/stepcast.h field by
field, in order; tests/python/test_module.py reads the structs' field names
out of the header and fails, naming them, when a field is missing here or
out of order, then compiles a small C program against the header and fails
when an offset, a size or a constant here differs from the C compiler's, so
a field added to the header cannot go unnoticed.

The library is looked for, in order: $STEPCAST_LIB (a path to the file);
libstepcast.so next to this module; the checkout's build folder
(python/stepcast/../../build); the system's loader (libstepcast.so on
LD_LIBRARY_PATH or in ld.so's cache, as `make install` leaves it).
"""

import ctypes
import ctypes.util
import os

c_int, c_uint, c_u32, c_u64, c_i64 = ctypes.c_int, ctypes.c_uint, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int64
c_size, c_double, c_char_p, c_void_p = ctypes.c_size_t, ctypes.c_double, ctypes.c_char_p, ctypes.c_void_p
POINTER, byref = ctypes.POINTER, ctypes.byref

# The values of stepcast.h's enums and macros that the module uses (the
# layout test checks them against the header too).
CONSTANTS = {"SC_OK": 0, "SC_E_USAGE": 6, "SC_OUTPUT_FORCE": 1, "SC_NO_OFFSET": 2**64 - 1,
             "SC_COMM_COUPLED": 0, "SC_COMM_TRACED": 1, "SC_COMM_MODEL": 2,
             "SC_SENSITIVITY_AUTO": 0, "SC_SENSITIVITY_ON": 1, "SC_SENSITIVITY_OFF": 2,
             "SC_BREAKDOWN_STEPCAST": 0, "SC_BREAKDOWN_HTA": 1}
globals().update(CONSTANTS)
SC_COMM = {"coupled": SC_COMM_COUPLED, "traced": SC_COMM_TRACED, "model": SC_COMM_MODEL}
SC_BREAKDOWN = {"stepcast": SC_BREAKDOWN_STEPCAST, "hta": SC_BREAKDOWN_HTA}


class ScError(ctypes.Structure):
    _fields_ = [("status", c_int), ("offset", c_u64), ("line", c_u32), ("column", c_u32),
                ("file", ctypes.c_char * 256), ("message", ctypes.c_char * 512)]


class LoadOptions(ctypes.Structure):
    _fields_ = [("max_string_bytes", c_u64), ("max_depth", c_u32), ("max_event_bytes", c_u64),
                ("window_bytes", c_u32), ("threads", c_u32), ("max_memory_bytes", c_u64),
                ("progress", c_void_p), ("progress_user", c_void_p)]  # the module reports no progress


class GraphOptions(ctypes.Structure):
    _fields_ = [("iteration", c_i64), ("hide_cuda_sync", c_int), ("release_traces", c_int)]


class ReplayOptions(ctypes.Structure):
    _fields_ = [("graph", GraphOptions), ("comm", c_int), ("scales", POINTER(c_char_p)), ("nscales", c_size),
                ("sensitivity", c_int), ("sensitivity_max_tasks", c_u64), ("breakdown", c_int)]


class PredictOptions(ctypes.Structure):
    _fields_ = [("replay", ReplayOptions), ("dp", c_u32), ("nodes", c_u32), ("gpus_per_node", c_u32),
                ("net_gbps", c_double), ("nvlink_gbps", c_double), ("gpu", c_char_p), ("profile_path", c_char_p),
                ("layers", c_u32), ("hidden", c_u32), ("ffn", c_u32), ("heads", c_u32), ("seq", c_u32),
                ("micro_batch", c_u32), ("tp", c_u32), ("pp", c_u32), ("schedule", c_char_p),
                ("virtual_stages", c_u32), ("microbatches", c_u32), ("model_backward", c_int),
                ("recompute", c_char_p)]


class StructureOptions(ctypes.Structure):
    _fields_ = [("iteration", c_i64)]


class KernelsOptions(ctypes.Structure):
    _fields_ = [("gpu", c_char_p), ("profile_path", c_char_p), ("graph", GraphOptions)]


class IterationsTable(ctypes.Structure):
    _fields_ = [("rows", c_size), ("with_error", c_size), ("sum_abs_error_pct", c_double),
                ("max_abs_error_pct", c_double)]


# C struct name -> the mirror above (what the layout test checks).
STRUCTS = {"sc_error": ScError, "sc_load_options": LoadOptions, "sc_graph_options": GraphOptions,
           "sc_replay_options": ReplayOptions, "sc_predict_options": PredictOptions,
           "sc_iterations_table": IterationsTable, "sc_structure_options": StructureOptions,
           "sc_kernels_options": KernelsOptions}

_ERR = POINTER(ScError)
_OUT = POINTER(c_void_p)
# name: (restype, argtypes)
_FUNCTIONS = {
    "sc_version": (c_char_p, []),
    "sc_status_name": (c_char_p, [c_int]),
    "sc_error_format": (c_char_p, [_ERR, c_char_p, c_size]),
    "sc_parse_bytes": (c_int, [c_char_p, POINTER(c_u64)]),
    "sc_free": (None, [c_void_p]),
    "sc_buffer_open": (c_int, [_OUT, _ERR]),
    "sc_buffer_file": (c_void_p, [c_void_p]),
    "sc_buffer_take": (c_int, [c_void_p, POINTER(c_void_p), POINTER(c_size), _ERR]),
    "sc_buffer_abort": (None, [c_void_p]),
    "sc_output_open": (c_int, [c_char_p, c_uint, _OUT, _ERR]),
    "sc_output_file": (c_void_p, [c_void_p]),
    "sc_output_commit": (c_int, [c_void_p, _ERR]),
    "sc_output_abort": (None, [c_void_p]),
    "sc_traceset_load": (c_int, [POINTER(c_char_p), c_size, POINTER(LoadOptions), _OUT, _ERR]),
    "sc_traceset_free": (None, [c_void_p]),
    "sc_traceset_warning_count": (c_size, [c_void_p]),
    "sc_traceset_warning": (c_char_p, [c_void_p, c_size]),
    "sc_info_load": (c_int, [POINTER(c_char_p), c_size, POINTER(LoadOptions), _OUT, _ERR]),
    "sc_info_free": (None, [c_void_p]),
    "sc_info_warning_count": (c_size, [c_void_p]),
    "sc_info_warning": (c_char_p, [c_void_p, c_size]),
    "sc_info_write": (c_int, [c_void_p, c_void_p, c_int, _ERR]),
    "sc_graph_build": (c_int, [c_void_p, POINTER(GraphOptions), _OUT, _ERR]),
    "sc_graph_free": (None, [c_void_p]),
    "sc_graph_write": (c_int, [c_void_p, c_void_p, c_int, _ERR]),
    "sc_graph_write_dot": (c_int, [c_void_p, c_void_p, _ERR]),
    "sc_replay_run": (c_int, [c_void_p, POINTER(ReplayOptions), _OUT, _ERR]),
    "sc_predict_run": (c_int, [c_void_p, POINTER(PredictOptions), _OUT, _ERR]),
    "sc_replay_free": (None, [c_void_p]),
    "sc_replay_write": (c_int, [c_void_p, c_void_p, c_int, _ERR]),
    "sc_replay_write_chrome": (c_int, [c_void_p, c_void_p, _ERR]),
    "sc_replay_iterations": (c_int, [c_void_p, POINTER(POINTER(c_i64)), POINTER(c_size), _ERR]),
    "sc_replay_write_iteration": (c_int, [c_void_p, c_i64, POINTER(IterationsTable), c_void_p, c_int, _ERR]),
    "sc_replay_write_iterations_end": (c_int, [POINTER(IterationsTable), c_void_p, c_int, _ERR]),
    "sc_structure_run": (c_int, [c_void_p, POINTER(StructureOptions), _OUT, _ERR]),
    "sc_structure_free": (None, [c_void_p]),
    "sc_structure_write": (c_int, [c_void_p, c_void_p, c_int, _ERR]),
    "sc_kernels_run": (c_int, [c_void_p, POINTER(KernelsOptions), _OUT, _ERR]),
    "sc_kernels_free": (None, [c_void_p]),
    "sc_kernels_write": (c_int, [c_void_p, c_void_p, c_int, _ERR]),
    "sc_diff_run": (c_int, [c_void_p, c_void_p, _OUT, _ERR]),
    "sc_diff_free": (None, [c_void_p]),
    "sc_diff_write": (c_int, [c_void_p, c_void_p, c_int, c_size, _ERR]),
    "sc_model_config_new": (c_int, [_OUT, _ERR]),
    "sc_model_config_free": (None, [c_void_p]),
    "sc_model_config_preset": (c_int, [c_void_p, c_char_p, _ERR]),
    "sc_model_config_set": (c_int, [c_void_p, c_char_p, c_char_p, _ERR]),
    "sc_model_config_load": (c_int, [c_void_p, c_char_p, _ERR]),
    "sc_model_run": (c_int, [c_void_p, _OUT, _ERR]),
    "sc_model_replay": (c_void_p, [c_void_p]),
    "sc_model_free": (None, [c_void_p]),
    "sc_model_write": (c_int, [c_void_p, c_void_p, c_int, _ERR]),
    "sc_model_sweep_run": (c_int, [c_void_p, POINTER(c_char_p), POINTER(c_char_p), c_size, _OUT, _ERR]),
    "sc_model_sweep_free": (None, [c_void_p]),
    "sc_model_sweep_write": (c_int, [c_void_p, c_void_p, c_int, _ERR]),
}


def _candidates():
    """Where the library is looked for, in order: (what, path or name)."""
    here = os.path.dirname(os.path.abspath(__file__))
    env = os.environ.get("STEPCAST_LIB")
    if env:
        yield "$STEPCAST_LIB", env
    yield "next to the module", os.path.join(here, "libstepcast.so")
    yield "the build folder", os.path.join(os.path.dirname(os.path.dirname(here)), "build", "libstepcast.so")
    yield "the system's loader", "libstepcast.so"
    found = ctypes.util.find_library("stepcast")
    if found:
        yield "the system's loader", found


def _load():
    tried = []
    for what, path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append("%s (%s: no such file)" % (what, path))
            if what == "$STEPCAST_LIB":  # named explicitly: no fallback
                break
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s)" % (what, e))
            if what == "$STEPCAST_LIB":
                break
            continue
        for name, (restype, argtypes) in _FUNCTIONS.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = restype, argtypes
        return lib, path
    raise ImportError("stepcast: cannot load libstepcast.so; tried " + "; ".join(tried) +
                      " (set STEPCAST_LIB to the library's path, or LD_LIBRARY_PATH to its folder)")


lib, path = _load()
