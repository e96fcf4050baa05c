/*
 * kineto_writer.c - a trace in the PyTorch profiler's own layout (contract
 * in kineto_writer.h). The layouts below are those of Kineto's
 * ChromeTraceLogger as the Megatron template (PyTorch 2.2, February 2024)
 * has them:
 *
 *   \n{\n  "schemaVersion": 1,\n  "deviceProperties": [...],
 *   "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8},
 *   "record_shapes": 1,\n  "traceEvents": [
 *   then events, each "  {\n    <lines>\n  }", separated by ",\n",
 *   then "\n  ],\n  "traceName": "<name>"\n}" (no final newline).
 *
 * Output goes through a 1 MiB buffer, deflated when gzip is asked for.
 */
#include "kineto_writer.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#define KW_CAP (1u << 20)

/* ------------------------------------------------------------ the sink */

static void kw_flush(sc__kw *k, bool finish) {
    if (k->failed) return;
    if (!k->gzip) {
        if (k->len && fwrite(k->buf, 1, k->len, k->fp) != k->len) k->failed = true;
        k->len = 0;
        return;
    }
    k->zs.next_in = (unsigned char *)k->buf;
    k->zs.avail_in = (uInt)k->len;
    int zr;
    do {
        k->zs.next_out = k->zout;
        k->zs.avail_out = KW_CAP;
        zr = deflate(&k->zs, finish ? Z_FINISH : Z_NO_FLUSH);
        size_t have = KW_CAP - k->zs.avail_out;
        if (zr == Z_STREAM_ERROR || (have && fwrite(k->zout, 1, have, k->fp) != have)) {
            k->failed = true;
            return;
        }
    } while (k->zs.avail_out == 0 || (finish && zr != Z_STREAM_END));
    k->len = 0;
}

bool sc__kw_open(sc__kw *k, FILE *fp, int gzip_level, bool int_us) {
    *k = (sc__kw){.fp = fp, .gzip = gzip_level > 0, .cap = KW_CAP, .int_us = int_us};
    k->buf = malloc(KW_CAP);
    k->zout = k->gzip ? malloc(KW_CAP) : NULL;
    bool ok = k->buf && (!k->gzip || k->zout);
    if (ok && k->gzip)
        ok = k->zinit = deflateInit2(&k->zs, gzip_level > 9 ? 9 : gzip_level, Z_DEFLATED, 16 + MAX_WBITS, 8,
                                     Z_DEFAULT_STRATEGY) == Z_OK;
    if (!ok) {
        free(k->buf);
        free(k->zout);
        k->buf = NULL;
        k->zout = NULL;
    }
    return ok;
}

bool sc__kw_close(sc__kw *k) {
    kw_flush(k, true);
    if (k->zinit) deflateEnd(&k->zs);
    free(k->buf);
    free(k->zout);
    k->buf = NULL;
    k->zout = NULL;
    k->zinit = false;
    return !k->failed;
}

static inline void put(sc__kw *k, const char *s, size_t n) {
    if (k->len + n > k->cap) kw_flush(k, false);
    if (n > k->cap) return; /* never: tokens are small, strings go in slices */
    memcpy(k->buf + k->len, s, n);
    k->len += n;
}
#define PUT(k, lit) put((k), (lit), sizeof(lit) - 1)

static void put_u64(sc__kw *k, uint64_t v) {
    char tmp[24];
    size_t i = sizeof tmp;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    put(k, tmp + i, sizeof tmp - i);
}

static void put_i64(sc__kw *k, int64_t v) {
    if (v < 0) {
        PUT(k, "-");
        put_u64(k, (uint64_t)0 - (uint64_t)v);
    } else {
        put_u64(k, (uint64_t)v);
    }
}

/* The shortest decimal that reads back as v (as float when f32), as
 * Kineto's formatter prints floating-point args; its length. */
static int shortest(char *buf, size_t size, double v, bool f32) {
    int n = 0;
    for (int p = 1; p <= 17; p++) {
        n = snprintf(buf, size, "%.*g", p, v);
        if (f32 ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v) break;
    }
    return n > 0 ? n : 0;
}

static void put_shortest(sc__kw *k, double v) {
    char buf[40];
    put(k, buf, (size_t)shortest(buf, sizeof buf, v, false));
}

/* A single-precision value, its text found in the cache when it was
 * written lately. */
static void put_shortest_f32(sc__kw *k, float v) {
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    struct sc__kw_f32 *c = &k->f32_cache[(bits * 2654435761u) >> 24];
    if (!c->len || c->bits != bits) {
        char buf[40];
        int n = shortest(buf, sizeof buf, v, true);
        if (n <= 0 || (size_t)n > sizeof c->text) {
            put(k, buf, (size_t)n);
            return;
        }
        memcpy(c->text, buf, (size_t)n);
        c->len = (uint8_t)n;
        c->bits = bits;
    }
    put(k, c->text, c->len);
}

static void put_jstr(sc__kw *k, const char *s, size_t n) {
    PUT(k, "\"");
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        put(k, s + run, i - run);
        run = i + 1;
        if (c == '"') PUT(k, "\\\"");
        else if (c == '\\') PUT(k, "\\\\");
        else {
            char e[6] = {'\\', 'u', '0', '0', "0123456789abcdef"[c >> 4], "0123456789abcdef"[c & 15]};
            put(k, e, 6);
        }
        if (k->len + 64 > k->cap) kw_flush(k, false);
    }
    /* Long names go through in slices small enough for the buffer. */
    while (n - run > KW_CAP / 2) {
        put(k, s + run, KW_CAP / 2);
        run += KW_CAP / 2;
    }
    put(k, s + run, n - run);
    PUT(k, "\"");
}

static void put_str_id(sc__kw *k, const sc_trace *t, uint32_t id) {
    put_jstr(k, sc__trace_str(t, id), sc__intern_len(&t->strings, id));
}

/* Raw JSON text kept by the reader (shapes arrays). */
static void put_raw_id(sc__kw *k, const sc_trace *t, uint32_t id) {
    const char *s = sc__trace_str(t, id);
    size_t n = sc__intern_len(&t->strings, id), at = 0;
    while (n - at > KW_CAP / 2) {
        put(k, s + at, KW_CAP / 2);
        at += KW_CAP / 2;
    }
    put(k, s + at, n - at);
}

/* ------------------------------------------------------------ time */

static int64_t floor_us(int64_t ns) { return ns >= 0 ? ns / 1000 : -((999 - ns) / 1000); }

/* A timestamp: whole microseconds (floored), or with three decimals. */
static void put_ts(sc__kw *k, int64_t ns) {
    if (k->int_us) {
        put_i64(k, floor_us(ns));
        return;
    }
    if (ns < 0) {
        PUT(k, "-");
        ns = -ns;
    }
    put_u64(k, (uint64_t)ns / 1000);
    char f[4] = {'.', (char)('0' + ns / 100 % 10), (char)('0' + ns / 10 % 10), (char)('0' + ns % 10)};
    put(k, f, 4);
}

/* The duration of [a, b): the difference of the written ends, so that
 * what nests in ns nests as written. */
static void put_dur(sc__kw *k, int64_t a, int64_t b) {
    if (k->int_us) put_i64(k, floor_us(b) - floor_us(a));
    else put_ts(k, b - a);
}

/* ------------------------------------------------------------ events */

static void open_event(sc__kw *k) {
    if (k->nevents++) PUT(k, ",\n  {\n    ");
    else PUT(k, "\n  {\n    ");
}

static void close_event(sc__kw *k) { PUT(k, "\n  }"); }

static void put_pid_tid(sc__kw *k, const sc_trace *t, uint32_t track) {
    const sc__track *tr = sc__trace_track_at(t, track);
    PUT(k, "\"pid\": ");
    if (tr->pid_str != SC__NONE) put_str_id(k, t, tr->pid_str);
    else put_i64(k, tr->pid);
    PUT(k, ", \"tid\": ");
    if (tr->tid_str != SC__NONE) put_str_id(k, t, tr->tid_str);
    else put_i64(k, tr->tid);
}

/* Args, written one field at a time with Kineto's separator before each;
 * the first field present opens the args block and takes no separator,
 * so a missing field leaves no gap and an event without any has no block. */
typedef struct argw {
    sc__kw *k;
    int n;
} argw;

static void field(argw *a, const char *sep, const char *key) {
    if (a->n++) put(a->k, sep, strlen(sep));
    else PUT(a->k, ",\n    \"args\": {\n      ");
    PUT(a->k, "\"");
    put(a->k, key, strlen(key));
    PUT(a->k, "\": ");
}

static void field_i64(argw *a, const char *sep, const char *key, int64_t v) {
    field(a, sep, key);
    put_i64(a->k, v);
}

static void field_dim3(argw *a, const char *sep, const char *key, const int32_t d[3]) {
    field(a, sep, key);
    PUT(a->k, "[");
    for (int i = 0; i < 3; i++) {
        if (i) PUT(a->k, ", ");
        put_i64(a->k, d[i]);
    }
    PUT(a->k, "]");
}

#define NL ",\n      " /* a new line of args */

/* A CPU operator's or annotation's args: "External id": N, then the rest
 * after a bare comma, joined by ", "; Ev Idx is the op's index, which
 * Kineto's External id counts from 1. */
static void op_args(argw *a, const sc_trace *t, const sc__event *e, const sc__kw_ids *ids) {
    int64_t ext = e->external_id >= 0 ? e->external_id + ids->ext_off : -1;
    if (ext >= 0) field_i64(a, "", "External id", ext);
    const char *sep = ext >= 0 ? "," : ", ";
    const sc__event_ext *x = sc__trace_ext(t, e);
    if (x && x->rf_id >= 0) {
        field_i64(a, sep, "Record function id", x->rf_id);
        sep = ", ";
    }
    if (x && x->seq_number >= 0) {
        field_i64(a, sep, "Sequence number", x->seq_number);
        sep = ", ";
    }
    if (x && x->fwd_tid >= 0) {
        field_i64(a, sep, "Fwd thread id", x->fwd_tid);
        sep = ", ";
    }
    const sc__event_shapes *sh = sc__trace_shapes(t, e);
    if (sh && sh->types != SC__NONE) {
        field(a, sep, "Input type");
        put_raw_id(a->k, t, sh->types);
        sep = ", ";
    }
    if (sh && sh->dims != SC__NONE) {
        field(a, sep, "Input Dims");
        put_raw_id(a->k, t, sh->dims);
        sep = ", ";
    }
    if (ext >= 1 && (e->kind == SC_K_CPU_OP || e->kind == SC_K_USER_ANNOTATION))
        field_i64(a, sep, "Ev Idx", ext - 1);
}

static void runtime_args(argw *a, const sc__event *e, const sc__kw_ids *ids) {
    if (e->external_id >= 0) field_i64(a, "", "External id", e->external_id + ids->ext_off);
    if (e->cbid) field_i64(a, NL, "cbid", e->cbid);
    if (e->correlation >= 0) field_i64(a, e->cbid ? ", " : NL, "correlation", e->correlation + ids->corr_off);
}

/* device, context, stream, correlation: the lines kernels and copies share. */
static void gpu_ids(argw *a, const sc_trace *t, const sc__event *e, const sc__kw_ids *ids, bool queued) {
    if (e->external_id >= 0) field_i64(a, "", "External id", e->external_id + ids->ext_off);
    if (queued) field_i64(a, NL, "queued", 0);
    field_i64(a, queued ? ", " : NL, "device", sc__event_device(t, e));
    field_i64(a, ", ", "context", 1);
    field_i64(a, NL, "stream", sc__event_stream(t, e));
    if (e->correlation >= 0) field_i64(a, ", ", "correlation", e->correlation + ids->corr_off);
}

/* A kernel's: blocks and warps per SM derived from its launch geometry as
 * Kineto derives them (in single precision). */
static void kernel_args(argw *a, const sc_trace *t, const sc__event *e, const sc__kw_ids *ids, int32_t num_sms) {
    gpu_ids(a, t, e, ids, true);
    const sc__event_ext *x = sc__trace_ext(t, e);
    if (!x || !(x->grid[0] || x->grid[1] || x->grid[2])) return;
    if (num_sms > 0) {
        float blocks = (float)((double)x->grid[0] * x->grid[1] * x->grid[2]);
        int64_t threads = (int64_t)x->block[0] * x->block[1] * x->block[2];
        float per_sm = blocks / (float)num_sms;
        field(a, NL, "blocks per SM");
        put_shortest_f32(a->k, per_sm);
        field(a, NL, "warps per SM");
        put_shortest_f32(a->k, (float)(per_sm * (float)((threads + 31) / 32)));
    }
    field_dim3(a, NL, "grid", x->grid);
    field_dim3(a, NL, "block", x->block);
}

/* A copy's or fill's: bytes and the bandwidth they make over its duration. */
static void memory_args(argw *a, const sc_trace *t, const sc__event *e, const sc__kw_ids *ids, int64_t dur_ns) {
    gpu_ids(a, t, e, ids, false);
    const sc__event_ext *x = sc__trace_ext(t, e);
    if (!x || x->bytes < 0) return;
    field_i64(a, NL, "bytes", x->bytes);
    if (dur_ns <= 0) return;
    field(a, ", ", "memory bandwidth (GB/s)");
    put_shortest(a->k, (double)x->bytes / (double)dur_ns);
}

void sc__kw_x(sc__kw *k, const sc_trace *t, const sc__event *e, uint32_t track, int64_t start, int64_t end,
              const sc__kw_ids *ids, int32_t num_sms) {
    open_event(k);
    PUT(k, "\"ph\": \"X\", \"cat\": ");
    put_str_id(k, t, e->cat);
    PUT(k, ", \"name\": ");
    put_str_id(k, t, e->name);
    PUT(k, ", ");
    put_pid_tid(k, t, track);
    PUT(k, ",\n    \"ts\": ");
    put_ts(k, start);
    PUT(k, ", \"dur\": ");
    put_dur(k, start, end);
    argw a = {.k = k};
    switch (e->kind) {
    case SC_K_KERNEL: kernel_args(&a, t, e, ids, num_sms); break;
    case SC_K_MEMCPY:
    case SC_K_MEMSET: memory_args(&a, t, e, ids, end - start); break;
    case SC_K_RUNTIME:
    case SC_K_DRIVER: runtime_args(&a, e, ids); break;
    default: op_args(&a, t, e, ids); break;
    }
    if (a.n) PUT(k, "\n    }");
    close_event(k);
}

void sc__kw_step(sc__kw *k, const sc_trace *t, uint32_t track, int64_t step, int64_t start, int64_t end,
                 int64_t external_id) {
    open_event(k);
    PUT(k, "\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#");
    put_i64(k, step);
    PUT(k, "\", ");
    put_pid_tid(k, t, track);
    PUT(k, ",\n    \"ts\": ");
    put_ts(k, start);
    PUT(k, ", \"dur\": ");
    put_dur(k, start, end);
    PUT(k, ",\n    \"args\": {\n      \"External id\": ");
    put_i64(k, external_id);
    PUT(k, ",\"Ev Idx\": ");
    put_i64(k, external_id - 1);
    PUT(k, "\n    }");
    close_event(k);
}

void sc__kw_flow(sc__kw *k, const sc_trace *t, char ph, int64_t id, uint32_t track, int64_t ts) {
    open_event(k);
    PUT(k, "\"ph\": \"");
    put(k, &ph, 1);
    PUT(k, "\", \"id\": ");
    put_i64(k, id);
    PUT(k, ", ");
    put_pid_tid(k, t, track);
    PUT(k, ", \"ts\": ");
    put_ts(k, ts);
    PUT(k, ",\n    \"cat\": \"ac2g\", \"name\": \"ac2g\"");
    if (ph == 'f') PUT(k, ", \"bp\": \"e\"");
    close_event(k);
}

/* ------------------------------------------------------------ metadata */

/* Kineto's sort index of a process: its pid for the host's, 0x1000000 plus
 * the device for a GPU's, 0x20000000 for the profiler's spans. */
static int64_t process_sort_index(const sc__track *tr, bool gpu_pid) {
    if (tr->pid_str != SC__NONE) return 0x20000000;
    return gpu_pid ? 0x1000000 + tr->pid : tr->pid;
}

void sc__kw_metadata(sc__kw *k, const sc_trace *t, const sc__event *e, bool gpu_pid) {
    const sc__track *tr = sc__trace_track_at(t, e->track);
    const char *name = sc__trace_str(t, e->name);
    const sc__event_ext *x = sc__trace_ext(t, e);
    open_event(k);
    PUT(k, "\"name\": ");
    put_str_id(k, t, e->name);
    PUT(k, ", \"ph\": \"M\", \"ts\": ");
    put_ts(k, e->ts);
    if (tr->pid_str != SC__NONE) PUT(k, ",\n    "); /* Kineto breaks the line before a string pid */
    else PUT(k, ", ");
    put_pid_tid(k, t, e->track);
    PUT(k, ",\n    \"args\": {\n      ");
    if (strcmp(name, "process_labels") == 0) {
        if (gpu_pid) {
            PUT(k, "\"labels\": \"GPU ");
            put_i64(k, tr->pid);
            PUT(k, "\"");
        } else {
            PUT(k, "\"labels\": \"CPU\"");
        }
    } else if (strcmp(name, "process_sort_index") == 0) {
        PUT(k, "\"sort_index\": ");
        put_i64(k, process_sort_index(tr, gpu_pid));
    } else if (strcmp(name, "thread_sort_index") == 0) {
        PUT(k, "\"sort_index\": ");
        put_i64(k, tr->tid_str == SC__NONE ? tr->tid : 0);
    } else {
        PUT(k, "\"name\": ");
        if (x && x->label != SC__NONE) put_str_id(k, t, x->label);
        else PUT(k, "\"\"");
    }
    PUT(k, "\n    }");
    close_event(k);
}

/* ------------------------------------------------------------ the file */

/* deviceProperties from t's devices, in Kineto's layout (what the reader
 * keeps of each: id, name, numSms). */
static void devices_from_trace(sc__kw *k, const sc_trace *t) {
    const sc__device_prop *d = t->devices.data;
    PUT(k, "[");
    for (size_t i = 0; i < t->devices.len; i++) {
        if (i) PUT(k, ",");
        PUT(k, "\n    {\n      \"id\": ");
        put_i64(k, d[i].id);
        PUT(k, ", \"name\": ");
        put_str_id(k, t, d[i].name);
        PUT(k, ", \"numSms\": ");
        put_i64(k, d[i].num_sms);
        PUT(k, "\n    }");
    }
    PUT(k, "\n  ]");
}

void sc__kw_header_write(sc__kw *k, const sc__kw_header *h) {
    const sc_trace *t = h->t;
    PUT(k, "\n{\n  \"schemaVersion\": ");
    put_i64(k, t->schema_version >= 0 ? t->schema_version : 1);
    PUT(k, ",\n  \"deviceProperties\": ");
    if (h->devices_raw) put(k, h->devices_raw, h->devices_len);
    else devices_from_trace(k, t);
    PUT(k, ",\n  \"distributedInfo\": {\"backend\": ");
    const char *backend = sc__trace_str(t, t->backend);
    if (*backend) put_str_id(k, t, t->backend);
    else PUT(k, "\"nccl\"");
    PUT(k, ", \"rank\": ");
    put_i64(k, h->rank);
    PUT(k, ", \"world_size\": ");
    put_i64(k, h->world_size);
    PUT(k, "},\n");
    if (h->record_shapes) PUT(k, "  \"record_shapes\": 1,\n");
    PUT(k, "  \"traceEvents\": [");
}

void sc__kw_finish(sc__kw *k, const sc_trace *t, const sc__event *const *meta, size_t n, int64_t start,
                   int64_t end, const char *trace_name) {
    open_event(k);
    PUT(k, "\"ph\": \"X\", \"cat\": \"Trace\", \"ts\": ");
    put_ts(k, start);
    PUT(k, ", \"dur\": ");
    put_dur(k, start, end);
    PUT(k, ",\n    \"pid\": \"Spans\", \"tid\": \"PyTorch Profiler\",\n    \"name\": \"PyTorch Profiler (0)\","
           "\n    \"args\": {\n      \"Op count\": 0\n    }");
    close_event(k);
    for (size_t i = 0; i < n; i++) sc__kw_metadata(k, t, meta[i], false);
    open_event(k);
    PUT(k, "\"name\": \"Iteration Start: PyTorch Profiler\", \"ph\": \"i\", \"s\": \"g\",\n"
           "    \"pid\": \"Traces\", \"tid\": \"Trace PyTorch Profiler\", \"ts\": ");
    put_ts(k, start);
    close_event(k);
    open_event(k);
    PUT(k, "\"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\",\n    \"pid\": \"\", \"tid\": \"\", \"ts\": ");
    put_ts(k, end);
    close_event(k);
    PUT(k, "\n  ],\n  \"traceName\": ");
    put_jstr(k, trace_name, strlen(trace_name));
    PUT(k, "\n}");
}

/* ------------------------------------------------------------ the template's devices */

/* Where the JSON array that opens at s[0] ('[') closes, or 0 when it does
 * not within n bytes. */
static size_t array_end(const char *s, size_t n) {
    int depth = 0;
    bool in_str = false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (in_str) {
            if (c == '\\') i++;
            else if (c == '"') in_str = false;
        } else if (c == '"') {
            in_str = true;
        } else if (c == '[' || c == '{') {
            depth++;
        } else if ((c == ']' || c == '}') && --depth == 0) {
            return i + 1;
        }
    }
    return 0;
}

bool sc__kw_devices_raw(const char *path, char **out, size_t *n) {
    enum { HEAD = 1 << 20 }; /* Kineto writes the devices in the first KiBs */
    *out = NULL;
    *n = 0;
    gzFile g = gzopen(path, "rb"); /* plain files read through as they are */
    char *head = g ? malloc(HEAD + 1) : NULL;
    int got = head ? gzread(g, head, HEAD) : -1;
    if (g) gzclose(g);
    if (got <= 0) {
        free(head);
        return false;
    }
    head[got] = '\0';
    const char *key = strstr(head, "\"deviceProperties\"");
    const char *events = strstr(head, "\"traceEvents\"");
    const char *open = key ? strchr(key, '[') : NULL;
    size_t len = open && (!events || open < events) ? array_end(open, (size_t)(head + got - open)) : 0;
    if (len && (*out = malloc(len))) {
        memcpy(*out, open, len);
        *n = len;
    }
    free(head);
    return *out != NULL;
}
