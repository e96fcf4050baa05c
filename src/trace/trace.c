/*
 * trace.c - the sc_trace object: construction, tracks, categories, accessors.
 *
 * The reader appends events; this file owns the containers and the small
 * vocabulary (kinds, NCCL names) that the later stages share.
 */
#include "trace.h"

#include <stdio.h>
#include <stdlib.h>

sc_trace *sc__trace_new(const char *path) {
    sc_trace *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    size_t n = strlen(path);
    t->path = malloc(n + 1);
    if (!t->path || !sc__intern_init(&t->strings)) {
        free(t->path);
        free(t);
        return NULL;
    }
    memcpy(t->path, path, n + 1);
    sc__vec_init(&t->events, sizeof(sc__event));
    sc__vec_init(&t->exts, sizeof(sc__event_ext));
    sc__vec_init(&t->shapes, sizeof(sc__event_shapes));
    sc__vec_init(&t->tracks, sizeof(sc__track));
    sc__vec_init(&t->devices, sizeof(sc__device_prop));
    t->rank = t->world_size = -1;
    t->schema_version = -1;
    return t;
}

void sc_trace_free(sc_trace *t) {
    if (!t) return;
    sc__intern_free(&t->strings);
    sc__vec_free(&t->events);
    sc__vec_free(&t->exts);
    sc__vec_free(&t->shapes);
    sc__vec_free(&t->tracks);
    sc__vec_free(&t->devices);
    free(t->track_slots);
    free(t->chakra_data);
    free(t->path);
    free(t);
}

void sc__trace_release_events(sc_trace *t) {
    if (!t) return;
    sc__vec_free(&t->events);
    sc__vec_free(&t->exts);
    sc__vec_free(&t->shapes);
}

void sc__trace_keep_header(sc_trace *t) {
    if (!t) return;
    sc__trace_release_events(t);
    sc__intern_free(&t->strings);
    sc__vec_free(&t->tracks);
    sc__vec_free(&t->devices);
    free(t->track_slots);
    t->track_slots = NULL;
    t->track_nslots = 0;
    free(t->chakra_data);
    t->chakra_data = NULL; /* chakra_size stays: it is the file's size */
    t->header_only = true;
}

sc_status sc__trace_check_whole(const sc_trace *t, sc_error *err) {
    if (!t || !t->header_only) return SC_OK;
    return sc__fail(err, SC_E_USAGE, t->path, SC_NO_OFFSET,
                    "this trace was loaded for info only (sc_info_load): its events "
                    "are gone; load it with sc_traceset_load or sc_trace_load");
}

/* Maps the string ids of an extras record through map. */
static void remap_ext(sc__event_ext *x, const uint32_t *map) {
    uint32_t *ids[] = {&x->coll_name, &x->dtype, &x->pg_name, &x->pg_desc, &x->pg_ranks, &x->label};
    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++)
        if (*ids[i] != SC__NONE) *ids[i] = map[*ids[i]];
}

static bool same_vec(const sc__vec *a, const sc__vec *b) {
    return a->len == b->len && (!a->len || memcmp(a->data, b->data, a->len * a->elem) == 0);
}

bool sc__trace_same(const sc_trace *a, const sc_trace *b) {
    if (!same_vec(&a->events, &b->events) || !same_vec(&a->exts, &b->exts) ||
        !same_vec(&a->shapes, &b->shapes) || !same_vec(&a->tracks, &b->tracks) ||
        !same_vec(&a->devices, &b->devices) || a->strings.count != b->strings.count)
        return false;
    for (uint32_t i = 0; i < a->strings.count; i++)
        if (a->strings.lens[i] != b->strings.lens[i] ||
            memcmp(a->strings.strs[i], b->strings.strs[i], a->strings.lens[i]) != 0)
            return false;
    return a->rank == b->rank && a->world_size == b->world_size && a->backend == b->backend &&
           a->base_time_ns == b->base_time_ns && a->schema_version == b->schema_version &&
           a->input_bytes == b->input_bytes;
}

/* Copies src's elements after dst's (room reserved); returns the first
 * copy, NULL when src is empty (dst's array may then be NULL too). The
 * room is fresh memory: faulting it in whole first (sc__prefault) saves a
 * trap per page. On the 513 MB bench file read by 2 threads that is 88k of
 * 140k page faults (plain, split) and 47k of 60k (gzip, streamed), and
 * sc__trace_append's share of a streamed load fell from 15% to 11% (perf). */
static void *append_block(sc__vec *dst, const sc__vec *src) {
    if (!src->len) return NULL;
    void *at = sc__vec_end(dst);
    sc__prefault(at, src->len * src->elem);
    memcpy(at, src->data, src->len * src->elem);
    dst->len += src->len;
    return at;
}

bool sc__trace_append(sc_trace *dst, const sc_trace *src) {
    const sc__intern *ss = &src->strings;
    uint32_t *smap = sc__alloc_array(ss->count ? ss->count : 1, sizeof *smap);
    uint32_t *tmap = sc__alloc_array(src->tracks.len ? src->tracks.len : 1, sizeof *tmap);
    bool ok = smap && tmap && sc__vec_reserve(&dst->events, dst->events.len + src->events.len) &&
              sc__vec_reserve(&dst->exts, dst->exts.len + src->exts.len) &&
              sc__vec_reserve(&dst->shapes, dst->shapes.len + src->shapes.len);
    for (uint32_t i = 0; ok && i < ss->count; i++)
        ok = (smap[i] = sc__intern_put(&dst->strings, ss->strs[i], ss->lens[i])) != SC__NONE;
    for (size_t i = 0; ok && i < src->tracks.len; i++) {
        const sc__track *k = sc__trace_track_at(src, (uint32_t)i);
        uint32_t ps = k->pid_str == SC__NONE ? SC__NONE : smap[k->pid_str];
        uint32_t ts = k->tid_str == SC__NONE ? SC__NONE : smap[k->tid_str];
        ok = (tmap[i] = sc__trace_track(dst, k->pid, ps, k->tid, ts)) != SC__NONE;
    }
    if (ok && (dst->exts.len + src->exts.len >= SC__NONE || dst->events.len + src->events.len >= SC__NONE ||
               dst->shapes.len + src->shapes.len >= SC__NONE))
        ok = false;
    if (ok) { /* room is reserved: copy each array whole, then map its ids in place */
        uint32_t ext0 = (uint32_t)dst->exts.len, sh0 = (uint32_t)dst->shapes.len;
        sc__event_ext *x = append_block(&dst->exts, &src->exts);
        for (size_t i = 0; i < src->exts.len; i++) remap_ext(&x[i], smap);
        sc__event_shapes *sh = append_block(&dst->shapes, &src->shapes);
        for (size_t i = 0; i < src->shapes.len; i++) {
            if (sh[i].dims != SC__NONE) sh[i].dims = smap[sh[i].dims];
            if (sh[i].types != SC__NONE) sh[i].types = smap[sh[i].types];
        }
        sc__event *e = append_block(&dst->events, &src->events);
        for (size_t i = 0; i < src->events.len; i++) {
            e[i].name = smap[e[i].name];
            e[i].cat = smap[e[i].cat];
            e[i].track = tmap[e[i].track];
            if (e[i].ext != SC__NONE) e[i].ext += ext0;
            if (e[i].shapes != SC__NONE) e[i].shapes += sh0;
        }
    }
    free(smap);
    free(tmap);
    return ok;
}

static uint32_t track_hash(int64_t pid, uint32_t pid_str, int64_t tid, uint32_t tid_str) {
    uint64_t h = sc__hash_u64((uint64_t)pid ^ ((uint64_t)pid_str << 32));
    h = sc__hash_u64(h ^ (uint64_t)tid ^ ((uint64_t)tid_str << 17));
    return (uint32_t)h;
}

static bool track_rehash(sc_trace *t) {
    uint32_t n = t->track_nslots ? t->track_nslots * 2 : 64;
    uint32_t *slots = calloc(n, sizeof *slots);
    if (!slots) return false;
    for (size_t i = 0; i < t->tracks.len; i++) {
        const sc__track *k = sc__trace_track_at(t, (uint32_t)i);
        uint32_t s = track_hash(k->pid, k->pid_str, k->tid, k->tid_str) & (n - 1);
        while (slots[s]) s = (s + 1) & (n - 1);
        slots[s] = (uint32_t)i + 1;
    }
    free(t->track_slots);
    t->track_slots = slots;
    t->track_nslots = n;
    return true;
}

uint32_t sc__trace_track(sc_trace *t, int64_t pid, uint32_t pid_str, int64_t tid,
                         uint32_t tid_str) {
    if ((t->tracks.len + 1) * 2 > t->track_nslots && !track_rehash(t)) return SC__NONE;
    uint32_t mask = t->track_nslots - 1;
    uint32_t s = track_hash(pid, pid_str, tid, tid_str) & mask;
    for (;;) {
        uint32_t v = t->track_slots[s];
        if (!v) break;
        const sc__track *k = sc__trace_track_at(t, v - 1);
        if (k->pid == pid && k->tid == tid && k->pid_str == pid_str && k->tid_str == tid_str)
            return v - 1;
        s = (s + 1) & mask;
    }
    if (t->tracks.len >= SC__NONE - 1) return SC__NONE;
    sc__track *k = sc__vec_push(&t->tracks);
    if (!k) return SC__NONE;
    k->pid = pid;
    k->tid = tid;
    k->pid_str = pid_str;
    k->tid_str = tid_str;
    t->track_slots[s] = (uint32_t)t->tracks.len;
    return (uint32_t)t->tracks.len - 1;
}

static const struct {
    const char *cat;
    sc__kind kind;
} kind_table[] = {
    {"cpu_op", SC_K_CPU_OP},
    {"user_annotation", SC_K_USER_ANNOTATION},
    {"gpu_user_annotation", SC_K_GPU_ANNOTATION},
    {"cuda_runtime", SC_K_RUNTIME},
    {"hip_runtime", SC_K_RUNTIME},
    {"cuda_driver", SC_K_DRIVER},
    {"hip_driver", SC_K_DRIVER},
    {"kernel", SC_K_KERNEL},
    {"gpu_memcpy", SC_K_MEMCPY},
    {"gpu_memset", SC_K_MEMSET},
    {"python_function", SC_K_PYTHON},
    {"cpu_instant_event", SC_K_INSTANT},
    {"cuda_sync", SC_K_CUDA_SYNC},
    {"ac2g", SC_K_FLOW_LAUNCH},
    {"async_cpu_to_gpu", SC_K_FLOW_LAUNCH},
    {"fwdbwd", SC_K_FLOW_FWDBWD},
    {"Trace", SC_K_TRACE_SPAN},
};

sc__kind sc__kind_from_category(const char *cat, size_t n) {
    for (size_t i = 0; i < sizeof kind_table / sizeof kind_table[0]; i++)
        if (strlen(kind_table[i].cat) == n && memcmp(kind_table[i].cat, cat, n) == 0)
            return kind_table[i].kind;
    return SC_K_OTHER;
}

bool sc__is_nccl_kernel_name(const char *name) {
    return sc__starts_with(name, "ncclKernel") || sc__starts_with(name, "ncclDevKernel") ||
           sc__starts_with(name, "void ncclKernel") || sc__starts_with(name, "void ncclDevKernel") ||
           sc__starts_with(name, "rcclKernel") || sc__contains(name, "ncclDevKernel_");
}

const char *sc__trace_gpu_name(const sc_trace *t) {
    const sc__device_prop *d = t->devices.data;
    if (t->devices.len == 0) return "";
    /* Prefer the device the GPU events ran on. */
    const sc__event *ev = sc__trace_events(t);
    int64_t dev = -1;
    for (size_t i = 0; i < t->events.len && dev < 0; i++)
        if (ev[i].flags & SC_EF_GPU) dev = ev[i].device >= 0 ? ev[i].device
                                                              : sc__trace_track_at(t, ev[i].track)->pid;
    for (size_t i = 0; i < t->devices.len; i++)
        if (d[i].id == dev) return sc__trace_str(t, d[i].name);
    return sc__trace_str(t, d[0].name);
}

const char *sc_trace_path(const sc_trace *t) { return t->path; }
int64_t sc_trace_rank(const sc_trace *t) { return t->rank; }
int64_t sc_trace_world_size(const sc_trace *t) { return t->world_size; }
size_t sc_trace_event_count(const sc_trace *t) { return t->events.len; }

size_t sc_trace_memory(const sc_trace *t) {
    return sizeof *t + sc__vec_bytes(&t->events) + sc__vec_bytes(&t->exts) + sc__vec_bytes(&t->shapes) +
           sc__vec_bytes(&t->tracks) + sc__vec_bytes(&t->devices) + (size_t)t->track_nslots * 4 +
           sc__intern_memory(&t->strings) + (t->chakra_data ? t->chakra_size : 0);
}

size_t sc__nccl_kind(const char *name, char *buf, size_t size) {
    const char *p = strstr(name, "ncclDevKernel_");
    size_t skip = 14;
    if (!p) {
        p = strstr(name, "ncclKernel_");
        skip = 11;
    }
    if (!p || size == 0) {
        if (size) snprintf(buf, size, "%s", p ? "" : "Unknown");
        return size ? strlen(buf) : 0;
    }
    p += skip;
    size_t n = 0;
    while (p[n] && p[n] != '_' && p[n] != '(' && p[n] != '<' && n + 1 < size) {
        buf[n] = p[n];
        n++;
    }
    buf[n] = '\0';
    return n;
}
