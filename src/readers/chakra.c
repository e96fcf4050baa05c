/*
 * chakra.c - Chakra execution traces (.et, .et.gz) in: loading a rank's
 * file into the trace set.
 *
 * Loading (sc__chakra_load) keeps the decompressed bytes and checks every
 * frame and message, so `stepcast info` and the graph builder never meet a
 * malformed file; the file and the graph it will need must fit the load's
 * memory budget. The rank comes from the file name <prefix>.<rank>.et,
 * else the GlobalMetadata's "rank" attr. The bytes are decoded again, node
 * by node, by the graph builder (src/graph/build_chakra.c) and by `info`
 * (src/pipeline/info.c); chakra_wire.h is the codec.
 */
#include "../io/source.h"
#include "chakra_wire.h"
#include "readers.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

/* <prefix>.<rank>.et or <prefix>.<rank>.et.gz -> rank, else -1. */
static int64_t rank_from_et_name(const char *path) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    if (n > 3 && strcmp(base + n - 3, ".gz") == 0) n -= 3;
    if (n < 4 || memcmp(base + n - 3, ".et", 3) != 0) return -1;
    n -= 3;
    size_t end = n;
    while (n > 0 && isdigit((unsigned char)base[n - 1])) n--;
    if (n == end || n == 0 || base[n - 1] != '.' || end - n > 9) return -1;
    int64_t r = 0;
    for (size_t i = n; i < end; i++) r = r * 10 + (base[i] - '0');
    return r;
}

/* Walks every message; returns the node count or fails with an offset. */
static sc_status check_file(const char *path, const uint8_t *data, size_t size,
                            sc__chakra_meta *meta, uint64_t *nodes, sc_error *err) {
    sc__chakra_cursor c = {data, size, 0};
    const uint8_t *msg;
    size_t len;
    bool bad;
    uint64_t count = 0;
    sc__vec ctrl, dd;
    sc__vec_init(&ctrl, sizeof(uint64_t));
    sc__vec_init(&dd, sizeof(uint64_t));
    sc_status st = SC_OK;
    for (;;) {
        size_t at = c.pos;
        if (!sc__chakra_next(&c, &msg, &len, &bad)) {
            if (bad) st = sc__fail(err, SC_E_PARSE, path, at, "truncated or malformed Chakra frame");
            else if (!count) st = sc__fail(err, SC_E_FORMAT, path, 0, "empty Chakra file (no GlobalMetadata)");
            break;
        }
        if (count++ == 0) {
            if (!sc__chakra_decode_meta(msg, len, meta)) {
                st = sc__fail(err, SC_E_PARSE, path, at, "malformed Chakra GlobalMetadata");
                break;
            }
            continue;
        }
        sc__chakra_node n;
        bool oom;
        ctrl.len = dd.len = 0;
        if (!sc__chakra_decode_node(msg, len, &n, &ctrl, &dd, &oom)) {
            st = oom ? sc__fail(err, SC_E_NOMEM, path, at, "out of memory")
                     : sc__fail(err, SC_E_PARSE, path, at, "malformed Chakra node (message %llu)",
                                (unsigned long long)(count - 1));
            break;
        }
    }
    sc__vec_free(&ctrl);
    sc__vec_free(&dd);
    *nodes = count ? count - 1 : 0;
    return st;
}

/* Bytes a node costs from loading to a finished graph: its ck_node while
 * building, the task, edges and CSR, ids and order (measured ~77 B per task
 * in the finished graph; bench_chakra prints it). A planning figure for the
 * memory guard, not an exact count. */
#define CK_BYTES_PER_NODE 256

/* Reads the rest of s, decompressed, failing with SC_E_LIMIT past budget
 * (a gzip bomb stops at the budget, not at the machine's memory). */
static sc_status slurp_bounded(sc__source *s, const char *path, uint64_t budget, unsigned char **data,
                               size_t *size, sc_error *err) {
    sc_status st = SC_OK;
    *data = NULL;
    *size = 0;
    size_t cap = 1u << 16, len = 0;
    unsigned char *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            st = sc__fail(err, SC_E_NOMEM, path, len, "out of memory reading input");
            break;
        }
        if (len == cap) {
            if ((uint64_t)cap * 2 > budget) {
                char text[32];
                st = sc__fail(err, SC_E_LIMIT, path, len,
                              "the Chakra file needs more than its memory budget of %s "
                              "(raise it with --max-memory or STEPCAST_MAX_MEMORY)",
                              sc__budget_text(budget, text));
                break;
            }
            unsigned char *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
            if (!nb) {
                st = sc__fail(err, SC_E_NOMEM, path, len, "out of memory reading input");
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got;
        st = sc__source_read(s, buf + len, cap - len, &got, err);
        if (st != SC_OK || got == 0) break;
        len += got;
    }
    if (st != SC_OK) {
        free(buf);
        return st;
    }
    *data = buf;
    *size = len;
    return SC_OK;
}

sc_status sc__chakra_load(const char *path, const sc_load_options *opts, sc_trace **out,
                          sc_error *err) {
    *out = NULL;
    sc__source src;
    sc_status st = sc__source_open_file(&src, path, err);
    if (st != SC_OK) return st;
    st = sc__chakra_load_source(&src, path, opts, out, err);
    sc__source_close(&src);
    return st;
}

sc_status sc__chakra_load_source(sc__source *src, const char *path, const sc_load_options *opts,
                                 sc_trace **out, sc_error *err) {
    *out = NULL;
    unsigned char *data = NULL;
    size_t size = 0;
    uint64_t budget = sc__load_budget(opts);
    sc_status st = slurp_bounded(src, path, budget, &data, &size, err);
    if (st != SC_OK) return st;
    sc__chakra_meta meta;
    uint64_t nodes = 0;
    st = check_file(path, data, size, &meta, &nodes, err);
    if (st == SC_OK && (uint64_t)size + nodes * CK_BYTES_PER_NODE > budget)
        st = sc__fail(err, SC_E_LIMIT, path, SC_NO_OFFSET,
                      "%llu Chakra nodes need about %llu MiB to build a graph, over the memory "
                      "budget of %llu MiB (raise it with --max-memory or STEPCAST_MAX_MEMORY)",
                      (unsigned long long)nodes,
                      (unsigned long long)(((uint64_t)size + nodes * CK_BYTES_PER_NODE) >> 20),
                      (unsigned long long)(budget >> 20));
    if (st != SC_OK) {
        free(data);
        return st;
    }
    sc_trace *t = sc__trace_new(path);
    if (!t) {
        free(data);
        return sc__fail(err, SC_E_NOMEM, path, SC_NO_OFFSET, "out of memory");
    }
    t->format = SC__FMT_CHAKRA;
    t->chakra_data = data;
    t->chakra_size = size;
    t->chakra_nodes = nodes;
    t->input_bytes = size;
    t->rank = rank_from_et_name(path);
    if (t->rank < 0) t->rank = meta.rank;
    t->rank_source = 1;
    *out = t;
    return SC_OK;
}
