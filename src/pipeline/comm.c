/*
 * comm.c - the `comm` pipeline: a hardware profile (built in, or a user's
 * file) turned into the communication model (src/models/comm.c), and
 * either
 *   - a table: one collective on one group, over a list of sizes, each
 *     with its modelled time, bus bandwidth and the algorithm chosen; or
 *   - the collectives of traces: their graph built as `graph` builds it,
 *     each group's transfer time calibrated as `replay` does (the last
 *     arrival's kernel, src/models/calibrate.c), the model fitted to the
 *     groups of known size, and one row per kind, group size and size
 *     bucket (a power of two): how many, the median measured transfer,
 *     and the fitted model's time at the bucket's median size. Groups of
 *     unknown size get a row of their own and no model.
 *
 * A group's size is sc__group.bytes, already in nccl-tests' convention
 * (src/graph/graph.h). A group's ranks are its communicator's
 * (sc__group.comm_ranks: the kernels' "Group size", else the ranks that
 * ran it); when the traces hold fewer of them, the group's shortest kernel
 * need not be the last arrival's (that rank's trace is missing): its time
 * includes waiting, so it is shown but not fitted, and a warning says how
 * many there are.
 */
#include "comm.h"

#include "../models/calibrate.h"
#include "../trace/trace.h"

#include <stdlib.h>

/* What a table may ask for, in this order of preference for names. */
static const uint8_t table_ops[] = {SC_C_ALL_REDUCE, SC_C_ALL_GATHER, SC_C_REDUCE_SCATTER,
                                    SC_C_ALL_TO_ALL, SC_C_BROADCAST,  SC_C_REDUCE,
                                    SC_C_SEND_RECV,  SC_C_GATHER,     SC_C_SCATTER};
#define NTABLE_OPS (sizeof table_ops / sizeof *table_ops)

/* s without '_', '-' and case into buf. */
static void squash(const char *s, char *buf, size_t size) {
    size_t k = 0;
    for (; *s && k + 1 < size; s++)
        if (*s != '_' && *s != '-') buf[k++] = *s >= 'A' && *s <= 'Z' ? (char)(*s - 'A' + 'a') : *s;
    buf[k] = '\0';
}

static sc_status parse_op(const char *name, uint8_t *type, sc_error *err) {
    char want[64], have[64];
    squash(name, want, sizeof want);
    for (size_t i = 0; i < NTABLE_OPS; i++) {
        squash(sc__coll_type_name(table_ops[i]), have, sizeof have);
        if (strcmp(want, have) == 0) {
            *type = table_ops[i];
            return SC_OK;
        }
    }
    return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET,
                    "unknown collective '%s' (all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, "
                    "reduce, send_recv, gather, scatter)", name);
}

/* The GPU of the first trace that names one, or NULL. */
static const char *set_gpu(const sc_traceset *set) {
    for (size_t i = 0; set && i < set->count; i++) {
        const sc_trace *t = set->traces[i];
        if (t->format == SC__FMT_KINETO && !t->header_only) {
            const char *name = sc__trace_gpu_name(t);
            if (*name) return name;
        }
    }
    return NULL;
}

static sc_status unknown_gpu(const char *name, bool typed, sc_error *err) {
    char known[256];
    size_t k = 0;
    for (size_t i = 0; i < sc__hw_count() && k < sizeof known; i++)
        k += (size_t)snprintf(known + k, sizeof known - k, "%s%s", i ? ", " : "", sc__hw_alias(i));
    if (typed)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "unknown GPU '%s' (known: %s; or a profile file, --profile)", name,
                        known);
    return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET,
                    "the traces' GPU '%s' has no built-in profile: name one (--gpu: %s) or give a profile file (--profile)", name, known);
}

/* The profile the options (or the traces) name. */
static sc_status resolve_profile(const sc_traceset *set, const sc_comm_options *o, sc__hw_profile *p, sc_error *err) {
    if (o->profile_path) return sc__hw_load(o->profile_path, p, err);
    const char *name = o->gpu ? o->gpu : set_gpu(set);
    if (!name)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET,
                        set ? "the traces name no GPU: name one (--gpu) or give a profile file (--profile)"
                            : "no GPU to model: name one (--gpu) or give a profile file (--profile)");
    const sc__hw_profile *found = sc__hw_find(name);
    if (!found) return unknown_gpu(name, o->gpu != NULL, err);
    *p = *found;
    return SC_OK;
}

/* Row i of c modelled: op, ranks and bytes already set. */
static void model_row(const sc__comm_model *m, uint8_t type, sc_comm_row *r) {
    sc__comm_choice ch;
    int64_t ns = sc__comm_explain(m, type, r->bytes, r->ranks, &ch);
    r->us = r->busbw_gbps = -1;
    r->algorithm = r->protocol = r->links = "";
    if (ns < 0) return;
    r->us = (double)ns / 1e3;
    /* bytes per ns are GB/s */
    r->busbw_gbps = ns > 0 ? (double)r->bytes / (double)ns * sc__comm_bus_factor(type, r->ranks) : 0;
    if (r->ranks > 1) {
        r->algorithm = sc__comm_algo_name(ch.algo);
        r->protocol = sc__comm_proto_name(ch.proto);
        r->links = sc__comm_links_name(ch.links);
    }
}

static sc_status table_rows(sc_comm *c, const sc_comm_options *o, sc_error *err) {
    uint8_t type = SC_C_ALL_REDUCE;
    sc_status st = o->op ? parse_op(o->op, &type, err) : SC_OK;
    if (st != SC_OK) return st;
    size_t n = o->sizes ? o->nsizes : 24; /* 1 KiB .. 8 GiB */
    if (!n) return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "no sizes to model");
    if (!(c->rows = calloc(n, sizeof *c->rows))) return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    uint32_t ranks = o->ranks ? o->ranks : c->model.gpus_per_node;
    for (size_t i = 0; i < n; i++) {
        uint64_t b = o->sizes ? o->sizes[i] : (uint64_t)1024 << i;
        if (b > (uint64_t)INT64_MAX / 2)
            return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "size %llu is too large", (unsigned long long)b);
        sc_comm_row *r = &c->rows[c->nrows++];
        *r = (sc_comm_row){.op = sc__coll_type_name(type), .ranks = ranks, .bytes = (int64_t)b, .measured_us = -1};
        model_row(&c->model, type, r);
    }
    return SC_OK;
}

/* ------------------------------------------------------------- traces */

/* One group of the graph: its kind, ranks, nccl-tests size and transfer. */
typedef struct item {
    uint8_t type;
    uint32_t ranks;
    int64_t bytes; /* -1: unknown */
    int64_t ns;
    int bucket;    /* size bucket: bit length of bytes; 127 for unknown */
    bool complete; /* every rank of the group is in the traces */
} item;

static int bit_length(int64_t b) {
    int k = 0;
    while (k < 63 && ((int64_t)1 << k) <= b) k++;
    return k;
}

static item item_of(const sc__group *grp) {
    item it = {.type = grp->type < SC_C_COUNT ? grp->type : SC_C_UNKNOWN,
               .ranks = grp->comm_ranks > grp->count ? grp->comm_ranks : grp->count,
               .bytes = grp->bytes,
               .ns = grp->transfer_ns};
    it.complete = grp->count >= it.ranks;
    it.bucket = it.bytes < 0 ? 127 : bit_length(it.bytes);
    return it;
}

static int cmp_item(const void *a, const void *b) {
    const item *x = a, *y = b;
    if (x->type != y->type) return x->type < y->type ? -1 : 1;
    if (x->ranks != y->ranks) return x->ranks < y->ranks ? -1 : 1;
    if (x->bucket != y->bucket) return x->bucket < y->bucket ? -1 : 1;
    if (x->bytes != y->bytes) return x->bytes < y->bytes ? -1 : 1;
    return x->ns < y->ns ? -1 : x->ns > y->ns;
}

/* Fits the model to the items of known size with every rank traced. */
static bool fit(sc__comm_model *m, const item *it, size_t n) {
    sc__comm_sample *s = sc__alloc_array(n ? n : 1, sizeof *s);
    if (!s) return false;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (it[i].bytes >= 0 && it[i].complete) s[k++] = (sc__comm_sample){it[i].type, it[i].bytes, it[i].ranks, it[i].ns};
    bool ok = sc__comm_model_fit(m, s, k);
    free(s);
    return ok;
}

/* One row per run of items of one kind, ranks and bucket (items sorted);
 * ns is scratch of n entries. */
static bool bucket_rows(sc_comm *c, const item *it, size_t n, int64_t *ns) {
    if (!(c->rows = calloc(n ? n : 1, sizeof *c->rows))) return false;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && it[j].type == it[i].type && it[j].ranks == it[i].ranks && it[j].bucket == it[i].bucket) {
            ns[j - i] = it[j].ns;
            j++;
        }
        size_t cnt = j - i;
        qsort(ns, cnt, sizeof *ns, sc__cmp_i64);
        sc_comm_row *r = &c->rows[c->nrows++];
        /* lower medians: a measured transfer, a size that occurred */
        *r = (sc_comm_row){.op = sc__coll_type_name(it[i].type), .ranks = it[i].ranks,
                           .bytes = it[i + (cnt - 1) / 2].bytes, .count = cnt,
                           .measured_us = (double)ns[(cnt - 1) / 2] / 1e3};
        model_row(&c->model, it[i].type, r);
        i = j;
    }
    return true;
}

static sc_status trace_rows(sc_comm *c, const sc_traceset *set, const sc_comm_options *o, sc_error *err) {
    if (!sc__warnings_copy(&c->warnings, &set->warnings))
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    c->load_warnings = c->warnings.count;
    sc__build_options bo = {.iteration = o->graph.iteration, .hide_cuda_sync = o->graph.hide_cuda_sync != 0};
    sc__graph *g;
    sc_status st = sc__graph_build(set, &bo, &g, NULL, err);
    if (st != SC_OK) return st;
    size_t n = g->groups.len;
    item *it = sc__alloc_array(n ? n : 1, sizeof *it);
    int64_t *scratch = sc__alloc_array(n ? n : 1, sizeof *scratch);
    bool ok = it && scratch && sc__calibrate_transfers(g);
    ok = ok && sc__warnings_copy(&c->warnings, &g->warnings);
    size_t partial = 0;
    for (size_t i = 0; ok && i < n; i++) {
        it[i] = item_of(&SC__VEC_AT(&g->groups, sc__group, i));
        partial += !it[i].complete;
    }
    if (ok && partial)
        ok = sc__warnings_add(&c->warnings,
                              "%zu of %zu collectives have ranks missing from the traces: their measured times "
                              "include waiting for those ranks, and the model is not fitted to them",
                              partial, n);
    if (ok) qsort(it, n, sizeof *it, cmp_item);
    ok = ok && fit(&c->model, it, n) && bucket_rows(c, it, n, scratch);
    free(it);
    free(scratch);
    sc__graph_free(g);
    return ok ? SC_OK : sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory modelling collectives");
}

sc_status sc_comm_run(const sc_traceset *set, const sc_comm_options *opts, sc_comm **out, sc_error *err) {
    sc__error_clear(err);
    *out = NULL;
    sc_comm_options defaults = SC_COMM_OPTIONS_INIT;
    const sc_comm_options *o = opts ? opts : &defaults;
    if (set && (o->op || o->ranks || o->sizes))
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET,
                        "an operation, ranks or sizes make a table: they do not apply to traces");
    sc__hw_profile p;
    sc_status st = resolve_profile(set, o, &p, err);
    sc_comm *c = st == SC_OK ? calloc(1, sizeof *c) : NULL;
    if (st == SC_OK && !c) st = sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory");
    if (st == SC_OK)
        st = sc__comm_model_from_profile(&p, o->gpus_per_node, o->net_gbps, o->nvlink_gbps, &c->model, err);
    if (st == SC_OK) {
        c->traces = set != NULL;
        st = set ? trace_rows(c, set, o, err) : table_rows(c, o, err);
    }
    if (st != SC_OK) {
        sc_comm_free(c);
        return st;
    }
    *out = c;
    return SC_OK;
}

void sc_comm_free(sc_comm *c) {
    if (!c) return;
    free(c->rows);
    sc__warnings_free(&c->warnings);
    free(c);
}

/* ------------------------------------------------------------ accessors */

sc_comm_model sc_comm_get_model(const sc_comm *c) {
    sc_comm_model r;
    memset(&r, 0, sizeof r);
    if (!c) return r;
    const sc__comm_model *m = &c->model;
    const sc__comm_link_params *in = &m->link[SC__LINK_INTRA], *net = &m->link[SC__LINK_NET];
    r = (sc_comm_model){.gpu = m->gpu, .fitted = m->fitted > 0, .samples = m->fitted,
                        .gpus_per_node = m->gpus_per_node, .base_us = m->base_ns / 1e3,
                        .nvlink_busbw_gbps = in->bw_gbps, .net_busbw_gbps = net->bw_gbps, .ll_frac = m->ll_frac,
                        .nvlink_ll_step_us = in->lat_ns[SC__PROTO_LL] / 1e3,
                        .nvlink_simple_step_us = in->lat_ns[SC__PROTO_SIMPLE] / 1e3,
                        .net_ll_step_us = net->lat_ns[SC__PROTO_LL] / 1e3,
                        .net_simple_step_us = net->lat_ns[SC__PROTO_SIMPLE] / 1e3, .nvls = m->nvls,
                        .nvls_us = m->nvls ? m->nvls_ns / 1e3 : 0, .nvls_gbps = m->nvls ? m->nvls_gbps : 0};
    return r;
}

int sc_comm_from_traces(const sc_comm *c) { return c && c->traces; }
size_t sc_comm_row_count(const sc_comm *c) { return c ? c->nrows : 0; }

sc_status sc_comm_row_at(const sc_comm *c, size_t i, sc_comm_row *out, sc_error *err) {
    if (!c || !out || i >= c->nrows)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "comm row %zu out of range", i);
    *out = c->rows[i];
    return SC_OK;
}

size_t sc_comm_warning_count(const sc_comm *c) { return c ? c->warnings.count : 0; }

const char *sc_comm_warning(const sc_comm *c, size_t i) {
    return c && i < c->warnings.count ? c->warnings.items[i] : NULL;
}
