/*
 * kineto_writer.h - writing a trace in the layout the PyTorch profiler
 * (Kineto's ChromeTraceLogger) writes, for `stepcast synth`.
 *
 * Tools that read profiler output sometimes read it as text rather than as
 * JSON (HTA finds a file's rank by its `"rank": N` spelling), and some
 * trip on what Kineto never writes (TraceLens on metadata events without
 * args). So a synthetic trace follows Kineto's layout byte for byte where
 * it is known: the header (schemaVersion, deviceProperties copied from the
 * template's own text, distributedInfo, record_shapes), one event per
 * indented block with Kineto's key order and line breaks, the args of each
 * kind of event in Kineto's order, process and thread metadata after the
 * events with the args Kineto gives them, then the profiler's span and its
 * two instants. Args the reader does not keep (a kernel's registers, an
 * op's Concrete Inputs) are left out; args Kineto derives from kept ones
 * (a kernel's blocks and warps per SM, a copy's bandwidth, an op's Ev Idx)
 * are derived the same way.
 *
 * Timestamps are whole microseconds when the template's are (Kineto before
 * its relative timestamps): every start and end is floored to a
 * microsecond, so nesting and stream order survive; else microseconds with
 * three decimals.
 */
#ifndef SC_KINETO_WRITER_H
#define SC_KINETO_WRITER_H

#include "../trace/trace.h"

#include <stdio.h>
#include <zlib.h>

typedef struct sc__kw {
    FILE *fp;
    z_stream zs;
    bool gzip, zinit, failed;
    char *buf;
    size_t len, cap;
    unsigned char *zout;
    bool int_us;      /* timestamps as whole microseconds */
    uint64_t nevents; /* written so far: the next one needs a separator */
    /* The shortest decimals of single-precision values written lately
     * (kernels' blocks and warps per SM repeat layer after layer), by their
     * bits; direct-mapped. */
    struct sc__kw_f32 {
        uint32_t bits;
        uint8_t len; /* 0: empty */
        char text[15];
    } f32_cache[256];
} sc__kw;

/* Starts a writer on fp: plain, or gzip at level 1-9 (gzip_level 0:
 * plain). False on out-of-memory (nothing to close then). */
bool sc__kw_open(sc__kw *k, FILE *fp, int gzip_level, bool int_us);
/* Flushes (and ends the gzip stream); frees the writer. False when a write
 * failed, now or before. */
bool sc__kw_close(sc__kw *k);

/* The file's head, up to and with `"traceEvents": [`. devices_raw: the
 * template's deviceProperties array as it is written there (NULL: written
 * from t's devices). */
typedef struct sc__kw_header {
    const sc_trace *t; /* the template: schema version, backend, devices */
    const char *devices_raw;
    size_t devices_len;
    int64_t rank, world_size;
    bool record_shapes;
} sc__kw_header;
void sc__kw_header_write(sc__kw *k, const sc__kw_header *h);

/* Event e of trace t as a complete event on track, re-timed to
 * [start, end) (ns), its correlation and external ids moved by the offsets.
 * num_sms: the SM count of the kernel's GPU (0: unknown). */
typedef struct sc__kw_ids {
    int64_t corr_off, ext_off;
} sc__kw_ids;
void sc__kw_x(sc__kw *k, const sc_trace *t, const sc__event *e, uint32_t track, int64_t start, int64_t end,
              const sc__kw_ids *ids, int32_t num_sms);
/* A ProfilerStep annotation (user_annotation) named "ProfilerStep#<step>". */
void sc__kw_step(sc__kw *k, const sc_trace *t, uint32_t track, int64_t step, int64_t start, int64_t end,
                 int64_t external_id);
/* A launch flow ('s' on the launching thread, 'f' on the GPU op). */
void sc__kw_flow(sc__kw *k, const sc_trace *t, char ph, int64_t id, uint32_t track, int64_t ts);
/* Metadata event e of t (process_name, process_labels, ..., thread_sort_index)
 * with the args Kineto gives it; gpu_pid: its pid is a GPU's. */
void sc__kw_metadata(sc__kw *k, const sc_trace *t, const sc__event *e, bool gpu_pid);
/* The profiler's span over [start, end) ("PyTorch Profiler (0)" on
 * Spans), its sort index, the instants that open and close the window,
 * and the file's tail with traceName. Metadata events of string pids
 * (Spans) go between the span and the instants, as Kineto writes them:
 * the caller passes them in meta (n of them). */
void sc__kw_finish(sc__kw *k, const sc_trace *t, const sc__event *const *meta, size_t n, int64_t start,
                   int64_t end, const char *trace_name);

/* The deviceProperties array of a Kineto file as written there (before
 * its traceEvents), malloc'ed into *out; false when the file has none
 * there (or on error), *out NULL. */
bool sc__kw_devices_raw(const char *path, char **out, size_t *n);

#endif /* SC_KINETO_WRITER_H */
