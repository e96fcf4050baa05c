/*
 * test_chakra.c - Chakra execution traces in and out.
 *
 * Reading: every file in shared/traces/chakra-et (converter output, the
 * ASTRA-sim microbenchmarks, the custom ring all-reduce) and hand-made
 * byte strings for the wire corners (id 0 omitted, unpacked deps, integer
 * attrs of every member type, 10-byte negative varints, dangling deps,
 * cycles). Writing: the export of the 8-rank Megatron graph decodes with
 * `protoc --decode_raw` (an independent decoder), and reading it back gives
 * the same graph (tasks per processor in order with the same durations,
 * gaps and kinds, the same edges by family, the same groups, the same
 * message sizes) and the same replayed step time.
 */
#include "testutil.h"
#include "testgraph.h"

#include "graph/graph.h"
#include "io/source.h"
#include "models/calibrate.h"
#include "report/chakra_export.h"
#include "readers/chakra_wire.h"
#include "sim/sim.h"
#include "trace/trace.h"

#include <sys/stat.h>

static const char *tmp_prefix(const char *tag);
static void unlink_export(const char *pfx, int nranks);

static sc__graph *build_paths(const char *const *paths, size_t n, sc_traceset **set_out) {
    sc_error err;
    sc_traceset *set = NULL;
    sc_status st = sc_traceset_load(paths, n, NULL, &set, &err);
    if (st != SC_OK) fail_msg("load: %s", err.message);
    sc__build_options bo = {.iteration = -1};
    sc__graph *g = NULL;
    st = sc__graph_build(set, &bo, &g, NULL, &err);
    if (st != SC_OK) fail_msg("build: %s", err.message);
    if (set_out) *set_out = set;
    else sc_traceset_free(set);
    return g;
}

static size_t count_kind(const sc__graph *g, uint8_t kind) {
    size_t n = 0;
    for (size_t i = 0; i < g->tasks.len; i++) n += sc__graph_tasks(g)[i].kind == kind;
    return n;
}

/* ------------------------------------------------------------ reading */

static void test_converter_file(void **state) {
    (void)state;
    const char *p = sc_test_trace("chakra-et/chakra.0.et.gz");
    sc_traceset *set;
    sc__graph *g = build_paths(&p, 1, &set);
    assert_int_equal(sc_traceset_count(set), 1);
    assert_int_equal(sc_traceset_trace(set, 0)->chakra_nodes, 3664);
    assert_int_equal(g->tasks.len, 3664);
    assert_int_equal(count_kind(g, SC_T_COLL), 7); /* the NCCL collectives */
    /* 14 host-side COMM_COLL records (is_cpu_op) are CPU tasks. */
    assert_int_equal(count_kind(g, SC_T_CPU), 2448);
    assert_int_equal(g->groups.len, 7);
    assert_true(g->nedges > 3000);
    /* Durations come from duration_micros: the first node lasts 318 us. */
    int64_t total = 0;
    for (size_t i = 0; i < g->tasks.len; i++) total += sc__graph_tasks(g)[i].dur;
    assert_int_equal(total, 381795 * 1000LL);
    /* The converter's looping ctrl_deps were dropped with a warning. */
    bool warned = false;
    for (size_t i = 0; i < g->warnings.count; i++) warned |= strstr(g->warnings.items[i], "ctrl_deps close cycles") != NULL;
    assert_true(warned);
    /* Export is deterministic: two runs write the same bytes. */
    char pa[600], pb[600], a[620], b[620];
    snprintf(pa, sizeof pa, "%s", tmp_prefix("det-a"));
    snprintf(pb, sizeof pb, "%s", tmp_prefix("det-b"));
    sc__chakra_export_stats st;
    sc_error err;
    assert_int_equal(sc__chakra_export(g, pa, SC_EXPORT_FORCE, &st, &err), SC_OK);
    assert_int_equal(sc__chakra_export(g, pb, SC_EXPORT_FORCE, &st, &err), SC_OK);
    snprintf(a, sizeof a, "%s.0.et", pa);
    snprintf(b, sizeof b, "%s.0.et", pb);
    unsigned char *da, *db;
    size_t na, nb;
    assert_int_equal(sc__source_slurp(a, &da, &na, &err), SC_OK);
    assert_int_equal(sc__source_slurp(b, &db, &nb, &err), SC_OK);
    assert_int_equal(na, nb);
    assert_memory_equal(da, db, na);
    free(da);
    free(db);
    unlink_export(pa, 1);
    unlink_export(pb, 1);
    sc__graph_free(g);
    sc_traceset_free(set);
}

static void test_microbenchmarks(void **state) {
    (void)state;
    static const struct {
        const char *dir;
        uint8_t type;
        int64_t bytes;  /* nccl-tests' size of a comm_size of 1 MiB */
        double factor;  /* share of that size each rank moves */
    } cases[] = {
        {"chakra-et/microbenchmarks/all_reduce", SC_C_ALL_REDUCE, 1048576, 2 * 7.0 / 8},
        /* ASTRA-sim's all-gather comm_size is each rank's input: 8 x 1 MiB
         * gathered (it simulates it 2.3x slower than the all-reduce). */
        {"chakra-et/microbenchmarks/all_gather", SC_C_ALL_GATHER, 8 * 1048576, 7.0 / 8},
        {"chakra-et/microbenchmarks/reduce_scatter", SC_C_REDUCE_SCATTER, 1048576, 7.0 / 8},
        {"chakra-et/microbenchmarks/all_to_all", SC_C_ALL_TO_ALL, 1048576, 7.0 / 8},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const char *p = sc_test_trace(cases[c].dir);
        sc__graph *g = build_paths(&p, 1, NULL);
        assert_int_equal(g->ranks.len, 8);
        assert_int_equal(g->tasks.len, 8);
        assert_int_equal(g->groups.len, 1);
        const sc__group *grp = g->groups.data;
        assert_int_equal(grp->count, 8);
        assert_int_equal(grp->type, cases[c].type);
        assert_int_equal(grp->bytes, cases[c].bytes);
        /* No duration recorded: 10 us + moved bytes / 100 GB/s. */
        int64_t want = 10000 + (int64_t)(cases[c].factor * (double)cases[c].bytes / 100.0 + 0.5);
        for (size_t i = 0; i < 8; i++) {
            const sc__task *t = &sc__graph_tasks(g)[i];
            assert_int_equal(t->kind, SC_T_COLL);
            assert_int_equal(t->dur, want);
            assert_int_equal(SC__VEC_AT(&g->ranks, sc__rank, i).rank, (int64_t)i);
        }
        sc__graph_free(g);
    }
}

static void test_custom_ring(void **state) {
    (void)state;
    const char *p = sc_test_trace("chakra-et/custom-ring-allreduce");
    sc__graph *g = build_paths(&p, 1, NULL);
    assert_int_equal(g->ranks.len, 8);
    assert_int_equal(g->tasks.len, 8 * 35);
    assert_int_equal(count_kind(g, SC_T_SEND), 8 * 14);
    assert_int_equal(count_kind(g, SC_T_RECV), 8 * 14);
    /* Every send pairs with a receive: 112 cross-rank edges send -> recv
     * (eager point-to-point, no rendezvous group), each to the right
     * neighbour, each send timed by the model for 128 KiB. */
    assert_int_equal(g->groups.len, 0);
    const sc__task *tasks = sc__graph_tasks(g);
    const sc__proc *procs = sc__graph_procs(g);
    size_t cross = 0;
    for (uint32_t u = 0; u < g->tasks.len; u++)
        for (uint32_t k = g->succ_off[u]; k < g->succ_off[u + 1]; k++) {
            uint32_t v = g->succ[k];
            uint32_t ru = procs[tasks[u].proc].rank, rv = procs[tasks[v].proc].rank;
            if (ru == rv) continue;
            cross++;
            assert_int_equal(tasks[u].kind, SC_T_SEND);
            assert_int_equal(tasks[v].kind, SC_T_RECV);
            assert_int_equal(g->succ_family[k], SC_E_DATA);
            assert_int_equal((ru + 1) % 8, rv);
            assert_int_equal(tasks[u].dur, 10000 + (int64_t)(131072 / 100.0 + 0.5));
            assert_int_equal(tasks[v].dur, 0);
        }
    assert_int_equal(cross, 8 * 14);
    for (size_t i = 0; i < g->warnings.count; i++) assert_null(strstr(g->warnings.items[i], "no partner"));
    sc__graph_free(g);
}

/* `stepcast info` on the whole shared folder: every file reads, and the
 * converter file's summary says what is in it. */
static void test_info(void **state) {
    (void)state;
    const char *p = sc_test_trace("chakra-et");
    sc_traceset *set;
    sc_error err;
    assert_int_equal(sc_traceset_load(&p, 1, NULL, &set, &err), SC_OK);
    assert_int_equal(sc_traceset_count(set), 1 + 4 * 8 + 8);
    static char buf[1 << 16];
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    assert_non_null(f);
    assert_int_equal(sc_test_info_report(set, f, 0, &err), SC_OK);
    fclose(f);
    assert_non_null(strstr(buf, "nodes by type       comp=3643, coll=21"));
    assert_non_null(strstr(buf, "collectives         all_reduce=5, broadcast=2"));
    assert_non_null(strstr(buf, "nodes by type       comp=7, send=14, recv=14"));
    f = fmemopen(buf, sizeof buf - 1, "w");
    assert_int_equal(sc_test_info_report(set, f, 1, &err), SC_OK);
    fclose(f);
    assert_non_null(strstr(buf, "\"format\": \"chakra\""));
    assert_non_null(strstr(buf, "\"collectives_by_kind\": {\"reduce_scatter\": 1}"));
    sc_traceset_free(set);
}

/* Hand-made files: a GlobalMetadata then nodes, framed. */
typedef struct msgbuf {
    sc__pbuf file, body;
} msgbuf;

static sc__graph *graph_from_bytes(const sc__pbuf *file, const char *name, sc_error *err,
                                   sc_status *st) {
    char path[512];
    snprintf(path, sizeof path, "%s/stepcast-test-%ld-%s", sc_test_tmpdir(), (long)getpid(), name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(file->data, 1, file->len, f), file->len);
    fclose(f);
    const char *p = path;
    sc_traceset *set;
    *st = sc_traceset_load(&p, 1, NULL, &set, err);
    sc__graph *g = NULL;
    if (*st == SC_OK) {
        sc__build_options bo = {.iteration = -1};
        *st = sc__graph_build(set, &bo, &g, NULL, err);
        sc_traceset_free(set);
    }
    unlink(path);
    return g;
}

static void put_meta(msgbuf *m) {
    m->body.len = 0;
    sc__pb_put_str(&m->body, 1, "0.0.4", 5);
    sc__pb_frame(&m->file, &m->body);
}

/* A raw varint field (for unpacked deps and odd attr members). */
static void raw_key(sc__pbuf *b, unsigned field, unsigned wt) { sc__pbuf_varint(b, (field << 3) | wt); }

static void test_wire_corners(void **state) {
    (void)state;
    msgbuf m;
    sc__pbuf_init(&m.file);
    sc__pbuf_init(&m.body);
    sc__pbuf attr;
    sc__pbuf_init(&attr);
    put_meta(&m);
    /* Node id 0 (omitted), COMP, 5 us. */
    m.body.len = 0;
    sc__pb_put_uint(&m.body, 1, 0);
    sc__pb_put_str(&m.body, 2, "zero", 4);
    sc__pb_put_uint(&m.body, 3, SC__CK_COMP);
    sc__pb_put_uint(&m.body, 7, 5);
    sc__pb_frame(&m.file, &m.body);
    /* Node 7: COLL with comm_size as sint64 (zigzag), comm_type as fixed64,
     * a negative int64 attr (10-byte varint), deps unpacked [0]. */
    m.body.len = 0;
    sc__pb_put_uint(&m.body, 1, 7);
    sc__pb_put_str(&m.body, 2, "coll", 4);
    sc__pb_put_uint(&m.body, 3, SC__CK_COLL);
    raw_key(&m.body, 5, 0); /* unpacked data dep */
    sc__pbuf_varint(&m.body, 0);
    attr.len = 0;
    sc__pb_put_str(&attr, 1, "comm_size", 9);
    raw_key(&attr, 17, 0);
    sc__pbuf_varint(&attr, 2 * 4096); /* zigzag(4096) */
    raw_key(&m.body, 10, 2);
    sc__pbuf_varint(&m.body, attr.len);
    sc__pbuf_bytes(&m.body, attr.data, attr.len);
    attr.len = 0;
    sc__pb_put_str(&attr, 1, "comm_type", 9);
    raw_key(&attr, 21, 1); /* fixed64 = 2 (all-gather) */
    uint8_t f64[8] = {2, 0, 0, 0, 0, 0, 0, 0};
    sc__pbuf_bytes(&attr, f64, 8);
    raw_key(&m.body, 10, 2);
    sc__pbuf_varint(&m.body, attr.len);
    sc__pbuf_bytes(&m.body, attr.data, attr.len);
    size_t before = m.body.len;
    sc__pb_attr_int64(&m.body, 10, "sc_gap_ns", -5); /* negative: ignored (clamped) */
    assert_true(m.body.len - before >= 10 + 2 + 9);    /* the 10-byte varint is there */
    sc__pb_frame(&m.file, &m.body);
    /* Node 9: COMP depending (packed) on 7 and on 12345 (dangling). */
    m.body.len = 0;
    sc__pb_put_uint(&m.body, 1, 9);
    sc__pb_put_uint(&m.body, 3, SC__CK_COMP);
    uint64_t deps[2] = {7, 12345};
    sc__pb_put_packed(&m.body, 5, deps, 2);
    sc__pb_put_uint(&m.body, 7, 3);
    sc__pb_frame(&m.file, &m.body);
    assert_false(m.file.oom);

    sc_error err;
    sc_status st;
    sc__graph *g = graph_from_bytes(&m.file, "corners.0.et", &err, &st);
    assert_int_equal(st, SC_OK);
    assert_int_equal(g->tasks.len, 3);
    const sc__task *t = sc__graph_tasks(g);
    assert_string_equal(sc__graph_str(g, t[0].name), "zero");
    assert_int_equal(t[0].dur, 5000);
    assert_int_equal(t[1].kind, SC_T_COLL);
    assert_int_equal(t[1].gap, 0);
    const sc__group *grp = g->groups.data;
    assert_int_equal(grp[0].bytes, 4096);
    assert_int_equal(grp[0].type, SC_C_ALL_GATHER);
    /* Edges: 0 -> 7 (data), 7 -> 9 (data); the dangling one is dropped with a warning. */
    bool warned = false;
    for (size_t i = 0; i < g->warnings.count; i++) warned |= strstr(g->warnings.items[i], "does not have") != NULL;
    assert_true(warned);
    assert_int_equal(g->succ[g->succ_off[0]], 1);
    assert_int_equal(g->succ_family[g->succ_off[0]], SC_E_DATA);
    sc__graph_free(g);

    /* A cycle of ctrl deps (as converters write: parent <-> child) is
     * broken with a warning; a cycle of data deps (1 -> 2 -> 1) fails in
     * finish with SC_E_GRAPH. */
    for (unsigned field = 4; field <= 5; field++) {
        m.file.len = 0;
        put_meta(&m);
        for (uint64_t id = 1; id <= 2; id++) {
            m.body.len = 0;
            sc__pb_put_uint(&m.body, 1, id);
            sc__pb_put_uint(&m.body, 3, SC__CK_COMP);
            uint64_t d = id == 1 ? 2 : 1;
            sc__pb_put_packed(&m.body, field, &d, 1);
            sc__pb_frame(&m.file, &m.body);
        }
        g = graph_from_bytes(&m.file, "cycle.0.et", &err, &st);
        if (field == 4) {
            assert_int_equal(st, SC_OK);
            assert_int_equal(g->nedges, 1);
            assert_true(g->warnings.count >= 1);
            assert_non_null(strstr(g->warnings.items[g->warnings.count - 1], "ctrl_deps close cycles"));
            sc__graph_free(g);
        } else {
            assert_int_equal(st, SC_E_GRAPH);
            assert_null(g);
            assert_non_null(strstr(err.message, "cycle"));
        }
    }

    /* A truncated frame is a parse error with an offset. */
    m.file.len -= 1;
    g = graph_from_bytes(&m.file, "trunc.0.et", &err, &st);
    assert_int_equal(st, SC_E_PARSE);
    assert_int_not_equal(err.offset, SC_NO_OFFSET);
    sc__pbuf_free(&m.file);
    sc__pbuf_free(&m.body);
    sc__pbuf_free(&attr);
}

/* The memory guard: a file whose bytes, or whose nodes' graph, would not
 * fit the budget fails with SC_E_LIMIT before anything is built. */
static void test_memory_budget(void **state) {
    (void)state;
    sc_load_options o = {0};
    sc_traceset *set;
    sc_error err;
    char path[4096];
    snprintf(path, sizeof path, "%s", sc_test_trace("chakra-et/chakra.0.et.gz"));
    const char *p = path;
    o.max_memory_bytes = 1u << 20; /* the file alone is 2.9 MB decompressed */
    assert_int_equal(sc_traceset_load(&p, 1, &o, &set, &err), SC_E_LIMIT);
    assert_non_null(strstr(err.message, "memory budget"));
    snprintf(path, sizeof path, "%s", sc_test_trace("chakra-et/microbenchmarks/all_reduce/all_reduce.1.et"));
    o.max_memory_bytes = 200; /* 83 bytes, but a node's graph needs more */
    assert_int_equal(sc_traceset_load(&p, 1, &o, &set, &err), SC_E_LIMIT);
    assert_non_null(strstr(err.message, "1 Chakra nodes"));
    o.max_memory_bytes = 1u << 20;
    assert_int_equal(sc_traceset_load(&p, 1, &o, &set, &err), SC_OK);
    sc_traceset_free(set);

    /* The job's budget holds while the graph is built, the files counted:
     * with room for the files alone, building says no; uncapped, it builds. */
    snprintf(path, sizeof path, "%s", sc_test_trace("chakra-et/microbenchmarks/all_reduce"));
    assert_int_equal(sc_traceset_load(&p, 1, NULL, &set, &err), SC_OK);
    uint64_t files = sc__traceset_memory(set);
    assert_true(files > 8 * 83); /* eight files of 83 bytes, and their headers */
    sc__graph *g;
    set->budget = files + 1;
    assert_int_equal(sc__graph_build(set, NULL, &g, NULL, &err), SC_E_LIMIT);
    assert_non_null(strstr(err.message, "the Chakra files"));
    set->budget = 0;
    assert_int_equal(sc__graph_build(set, NULL, &g, NULL, &err), SC_OK);
    sc__graph_free(g);
    sc_traceset_free(set);
}

/* ------------------------------------------------------------ writing */

static const char *tmp_prefix(const char *tag) {
    static char buf[512];
    snprintf(buf, sizeof buf, "%s/stepcast-test-%ld-%s", sc_test_tmpdir(), (long)getpid(), tag);
    return buf;
}

/* Wraps every framed message of an .et file as field 1 of one outer message
 * (the framing is [varint len][bytes]; the wrapper adds a tag byte), runs
 * `protoc --decode_raw` on it and counts what an independent decoder sees:
 * top-level messages, nodes of type 7 (COMM_COLL) and the sum of field 7
 * (duration_micros) of the nodes. */
typedef struct decoded {
    long messages, colls, cpu_nodes;
    long long dur_sum, cpu_dur_sum; /* duration_micros: of every node, of CPU nodes */
} decoded;

static decoded protoc_decode(const char *path) {
    decoded d = {0};
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char wrapped[512];
    snprintf(wrapped, sizeof wrapped, "%s.wrapped", path);
    FILE *w = fopen(wrapped, "wb");
    assert_non_null(w);
    int c;
    while ((c = fgetc(f)) != EOF) {
        /* Read the varint length independently of the codec. */
        unsigned long long len = 0;
        int shift = 0;
        unsigned char lenbytes[10];
        int nb = 0;
        for (;;) {
            lenbytes[nb++] = (unsigned char)c;
            len |= (unsigned long long)(c & 0x7f) << shift;
            if (!(c & 0x80)) break;
            shift += 7;
            c = fgetc(f);
            assert_true(c != EOF && nb < 10);
        }
        fputc(0x0a, w); /* field 1, length-delimited */
        fwrite(lenbytes, 1, (size_t)nb, w);
        for (unsigned long long i = 0; i < len; i++) {
            c = fgetc(f);
            assert_true(c != EOF);
            fputc(c, w);
        }
    }
    fclose(f);
    fclose(w);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "protoc --decode_raw < '%s'", wrapped);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char line[4096];
    bool in_node = false, first = true, cpu = false;
    long long dur = 0;
    while (fgets(line, sizeof line, p)) {
        if (strcmp(line, "1 {\n") == 0) {
            d.cpu_dur_sum += cpu ? dur : 0;
            cpu = false;
            dur = 0;
            d.messages++;
            in_node = !first;
            first = false;
            continue;
        }
        if (!in_node) continue;
        long long v;
        if (strncmp(line, "  3: ", 5) == 0 && sscanf(line + 5, "%lld", &v) == 1 && v == 7) d.colls++;
        if (strncmp(line, "  7: ", 5) == 0 && sscanf(line + 5, "%lld", &v) == 1) d.dur_sum += dur = v;
        /* is_cpu_op true: the attr block carries "27: 1" one level down. */
        if (strncmp(line, "    27: 1\n", 10) == 0) {
            d.cpu_nodes++;
            cpu = true;
        }
    }
    d.cpu_dur_sum += cpu ? dur : 0;
    int rc = pclose(p);
    assert_int_equal(rc, 0);
    unlink(wrapped);
    return d;
}

/* Per processor (rank, kind, device, id), the task sequence in seq order. */
typedef struct task_key {
    int64_t rank, id;
    int32_t device;
    uint8_t pkind;
    uint32_t seq;
    uint32_t index;
} task_key;

static int cmp_key(const void *a, const void *b) {
    const task_key *x = a, *y = b;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    if (x->pkind != y->pkind) return x->pkind < y->pkind ? -1 : 1;
    if (x->device != y->device) return x->device < y->device ? -1 : 1;
    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static task_key *sorted_keys(const sc__graph *g) {
    task_key *k = calloc(g->tasks.len, sizeof *k);
    const sc__task *t = sc__graph_tasks(g);
    const sc__proc *p = sc__graph_procs(g);
    for (size_t i = 0; i < g->tasks.len; i++) {
        const sc__proc *pr = &p[t[i].proc];
        k[i] = (task_key){SC__VEC_AT(&g->ranks, sc__rank, pr->rank).rank, pr->id, pr->device, pr->kind,
                          t[i].seq, (uint32_t)i};
    }
    qsort(k, g->tasks.len, sizeof *k, cmp_key);
    return k;
}

/* Every communication task of h has the message size its counterpart in g
 * had (tasks paired by processor and order; same task counts); returns how
 * many of them had one. */
static size_t assert_same_sizes(const sc__graph *g, const sc__graph *h) {
    assert_int_equal(h->tasks.len, g->tasks.len);
    task_key *ka = sorted_keys(g), *kb = sorted_keys(h);
    size_t known = 0;
    for (size_t i = 0; i < g->tasks.len; i++) {
        if (!sc__task_is_comm(sc__graph_tasks(g)[ka[i].index].kind)) continue;
        int64_t a = sc__graph_task_bytes(g, ka[i].index), b = sc__graph_task_bytes(h, kb[i].index);
        assert_int_equal(a, b);
        known += a >= 0;
    }
    free(ka);
    free(kb);
    return known;
}

static void family_counts(const sc__graph *g, uint64_t out[SC_E_FAMILY_COUNT]) {
    memset(out, 0, sizeof(uint64_t) * SC_E_FAMILY_COUNT);
    for (uint64_t e = 0; e < g->nedges; e++) out[g->succ_family[e]]++;
}

/* The replayed step: simulate with the trace's own calibration (as
 * `stepcast replay` does) and take the latest end over all ranks. */
static int64_t replay_makespan(sc__graph *g) {
    size_t nr = g->ranks.len;
    int64_t *lat = calloc(nr, sizeof *lat), *base = calloc(nr, sizeof *base);
    assert_true(sc__calibrate_launch(g, lat, NULL, NULL));
    assert_true(sc__calibrate_sync_base(g, base, NULL));
    assert_true(sc__calibrate_transfers(g));
    sc__sim_params p = {.coupled = true, .launch_latency = lat, .sync_base = base};
    sc__sim s;
    sc_error err;
    sc_status st = sc__sim_run(g, &p, &s, &err);
    if (st != SC_OK) fail_msg("sim: %s", err.message);
    int64_t m = s.makespan;
    sc__sim_free(&s);
    free(lat);
    free(base);
    return m;
}

static void test_megatron_round_trip(void **state) {
    (void)state;
    const char *p = sc_test_trace("megatron-tp8-a100");
    sc__graph *g = build_paths(&p, 1, NULL);
    const char *prefix = tmp_prefix("mega");
    char pfx[512];
    snprintf(pfx, sizeof pfx, "%s", prefix);
    sc__chakra_export_stats st;
    sc_error err;
    assert_int_equal(sc__chakra_export(g, pfx, SC_EXPORT_FORCE, &st, &err), SC_OK);
    assert_int_equal(st.files, 8);
    assert_int_equal(st.nodes, g->tasks.len);

    /* An independent decoder sees every node, the collectives and durations. */
    const char *paths[8];
    char names[8][600];
    long total_msgs = 0, total_colls = 0;
    long long dur_sum = 0, cpu_dur_sum = 0;
    for (int r = 0; r < 8; r++) {
        snprintf(names[r], sizeof names[r], "%s.%d.et", pfx, r);
        paths[r] = names[r];
        decoded d = protoc_decode(names[r]);
        total_msgs += d.messages;
        total_colls += d.colls;
        dur_sum += d.dur_sum;
        cpu_dur_sum += d.cpu_dur_sum;
    }
    assert_int_equal(total_msgs, (long)g->tasks.len + 8);
    assert_int_equal(total_colls, (long)count_kind(g, SC_T_COLL));
    long long want_dur = 0;
    for (size_t i = 0; i < g->tasks.len; i++) {
        int64_t d = sc__graph_tasks(g)[i].dur;
        want_dur += (d > 0 ? d : 0) / 1000 + ((d > 0 ? d : 0) % 1000 >= 500);
    }
    assert_int_equal(dur_sum, want_dur);

    /* Import gives the same graph. */
    sc__graph *h = build_paths(paths, 8, NULL);
    assert_int_equal(h->tasks.len, g->tasks.len);
    assert_int_equal(h->procs.len, g->procs.len);
    assert_int_equal(h->nedges, g->nedges);
    assert_int_equal(h->groups.len, g->groups.len);
    uint64_t fa[SC_E_FAMILY_COUNT], fb[SC_E_FAMILY_COUNT];
    family_counts(g, fa);
    family_counts(h, fb);
    assert_memory_equal(fa, fb, sizeof fa);
    task_key *ka = sorted_keys(g), *kb = sorted_keys(h);
    for (size_t i = 0; i < g->tasks.len; i++) {
        const sc__task *a = &sc__graph_tasks(g)[ka[i].index], *b = &sc__graph_tasks(h)[kb[i].index];
        assert_int_equal(ka[i].rank, kb[i].rank);
        assert_int_equal(ka[i].id, kb[i].id);
        assert_int_equal(a->dur, b->dur);
        assert_int_equal(a->gap, b->gap);
        assert_int_equal(a->ts, b->ts);
        assert_int_equal(a->kind, b->kind);
        assert_int_equal(a->sync, b->sync);
        assert_int_equal(a->group == SC__NONE, b->group == SC__NONE);
        assert_string_equal(sc__graph_str(g, a->name), sc__graph_str(h, b->name));
        assert_int_equal(a->op == SC__NONE, b->op == SC__NONE);
        if (a->op != SC__NONE)
            assert_string_equal(sc__graph_str(g, SC__VEC_AT(&g->ops, sc__op, a->op).name),
                                sc__graph_str(h, SC__VEC_AT(&h->ops, sc__op, b->op).name));
    }
    free(ka);
    free(kb);
    /* Every collective keeps its message size (comm_size): 84 x 8 known. */
    assert_int_equal(assert_same_sizes(g, h), 84 * 8);
    for (size_t r = 0; r < 8; r++) {
        const sc__rank *ra = &SC__VEC_AT(&g->ranks, sc__rank, r), *rb = &SC__VEC_AT(&h->ranks, sc__rank, r);
        assert_int_equal(ra->step_start, rb->step_start);
        assert_int_equal(ra->step_end, rb->step_end);
    }

    /* Replaying the imported graph gives the Kineto replay's step time. */
    int64_t ma = replay_makespan(g), mb = replay_makespan(h);
    print_message("replay makespan: kineto %lld ns, chakra round trip %lld ns\n", (long long)ma,
                  (long long)mb);
    assert_true(ma > 0);
    double diff = (double)(mb > ma ? mb - ma : ma - mb) / (double)ma;
    assert_true(diff <= 0.01);
    sc__graph_free(h);

    /* No CPU operators: runtime calls stay, the operators' time moves into
     * the next kept task's gap, so the replay keeps its step time (measured:
     * identical on this set). */
    assert_int_equal(sc__chakra_export(g, pfx, SC_EXPORT_FORCE | SC_EXPORT_NO_CPU, &st, &err), SC_OK);
    assert_int_equal(st.nodes, g->tasks.len - count_kind(g, SC_T_CPU));
    h = build_paths(paths, 8, NULL);
    assert_int_equal(count_kind(h, SC_T_CPU), 0);
    int64_t mc = replay_makespan(h);
    print_message("replay makespan without CPU operators: %lld ns\n", (long long)mc);
    assert_true((double)(mc > ma ? mc - ma : ma - mc) <= 0.01 * (double)ma);
    sc__graph_free(h);
    /* ASTRA-sim reads no sc_gap_ns: the dropped operators' time is in the
     * durations of the runtime calls after them, so the CPU nodes last as
     * long as with every operator kept (but for operators after a thread's
     * last runtime call, and rounding to whole us). */
    long long no_cpu_sum = 0;
    for (int r = 0; r < 8; r++) no_cpu_sum += protoc_decode(names[r]).cpu_dur_sum;
    print_message("CPU nodes' duration_micros: %lld with every operator, %lld without\n", cpu_dur_sum, no_cpu_sum);
    assert_true((double)llabs(no_cpu_sum - cpu_dur_sum) <= 0.01 * (double)cpu_dur_sum);

    /* GPU-only: no CPU nodes, still a valid DAG for other readers. */
    assert_int_equal(sc__chakra_export(g, pfx, SC_EXPORT_FORCE | SC_EXPORT_GPU_ONLY, &st, &err), SC_OK);
    size_t gpu = 0;
    for (size_t i = 0; i < g->tasks.len; i++) gpu += sc__task_on_gpu(sc__graph_tasks(g)[i].kind);
    assert_int_equal(st.nodes, gpu);
    decoded d0 = protoc_decode(names[0]);
    assert_int_equal(d0.cpu_nodes, 0);
    h = build_paths(paths, 8, NULL);
    assert_int_equal(h->tasks.len, gpu);
    assert_int_equal(count_kind(h, SC_T_CPU), 0);
    assert_int_equal(h->groups.len, g->groups.len);
    sc__graph_free(h);
    unlink_export(pfx, 8);
    sc__graph_free(g);
}

/* Export refuses to overwrite without SC_EXPORT_FORCE. */
static void test_no_clobber(void **state) {
    (void)state;
    const char *p = sc_test_trace("chakra-et/microbenchmarks/all_reduce");
    sc__graph *g = build_paths(&p, 1, NULL);
    char pfx[512];
    snprintf(pfx, sizeof pfx, "%s", tmp_prefix("clobber"));
    sc__chakra_export_stats st;
    sc_error err;
    assert_int_equal(sc__chakra_export(g, pfx, 0, &st, &err), SC_OK);
    assert_int_equal(st.files, 8);
    assert_int_equal(sc__chakra_export(g, pfx, 0, &st, &err), SC_E_USAGE);
    /* And the microbenchmark survives a round trip: one 1 MiB all-reduce. */
    char names[8][600];
    const char *paths[8];
    for (int r = 0; r < 8; r++) {
        snprintf(names[r], sizeof names[r], "%s.%d.et", pfx, r);
        paths[r] = names[r];
    }
    sc__graph *h = build_paths(paths, 8, NULL);
    assert_int_equal(h->groups.len, 1);
    assert_int_equal(((const sc__group *)h->groups.data)->bytes, 1048576);
    assert_int_equal(((const sc__group *)h->groups.data)->type, SC_C_ALL_REDUCE);
    assert_int_equal(sc__graph_tasks(h)[0].dur, sc__graph_tasks(g)[0].dur);
    sc__graph_free(h);
    unlink_export(pfx, 8);
    sc__graph_free(g);
}

static size_t cross_rank_edges(const sc__graph *g) {
    const sc__task *tasks = sc__graph_tasks(g);
    const sc__proc *procs = sc__graph_procs(g);
    size_t n = 0;
    for (uint32_t u = 0; u < g->tasks.len; u++)
        for (uint32_t k = g->succ_off[u]; k < g->succ_off[u + 1]; k++)
            n += procs[tasks[u].proc].rank != procs[tasks[g->succ[k]].proc].rank;
    return n;
}

/* DLRM: two CPU threads per rank (cross-thread edges), four streams,
 * memcpys, all-to-all as SendRecv kernels: the same graph and replay. */
static void test_dlrm_round_trip(void **state) {
    (void)state;
    const char *p = sc_test_trace("param-dlrm-8rank/kineto");
    sc__graph *g = build_paths(&p, 1, NULL);
    char pfx[512];
    snprintf(pfx, sizeof pfx, "%s", tmp_prefix("dlrm"));
    sc__chakra_export_stats st;
    sc_error err;
    assert_int_equal(sc__chakra_export(g, pfx, SC_EXPORT_FORCE, &st, &err), SC_OK);
    char names[8][600];
    const char *paths[8];
    for (int r = 0; r < 8; r++) {
        snprintf(names[r], sizeof names[r], "%s.%d.et", pfx, r);
        paths[r] = names[r];
    }
    sc__graph *h = build_paths(paths, 8, NULL);
    assert_int_equal(h->tasks.len, g->tasks.len);
    assert_int_equal(h->nedges, g->nedges);
    assert_int_equal(h->groups.len, g->groups.len);
    uint64_t fa[SC_E_FAMILY_COUNT], fb[SC_E_FAMILY_COUNT];
    family_counts(g, fa);
    family_counts(h, fb);
    assert_memory_equal(fa, fb, sizeof fa);
    assert_true(fa[SC_E_CROSS_THREAD] > 0);
    task_key *ka = sorted_keys(g), *kb = sorted_keys(h);
    for (size_t i = 0; i < g->tasks.len; i++) {
        const sc__task *a = &sc__graph_tasks(g)[ka[i].index], *b = &sc__graph_tasks(h)[kb[i].index];
        assert_int_equal(ka[i].id, kb[i].id);
        assert_int_equal(ka[i].device, kb[i].device);
        assert_int_equal(a->dur, b->dur);
        assert_int_equal(a->kind, b->kind);
    }
    free(ka);
    free(kb);
    assert_int_equal(assert_same_sizes(g, h), 8 * 8);
    int64_t ma = replay_makespan(g), mb = replay_makespan(h);
    print_message("dlrm replay makespan: kineto %lld ns, chakra round trip %lld ns\n", (long long)ma,
                  (long long)mb);
    assert_true(ma > 0);
    assert_true((double)(mb > ma ? mb - ma : ma - mb) <= 0.01 * (double)ma);
    sc__graph_free(h);
    sc__graph_free(g);
    unlink_export(pfx, 8);
}

/* Every vintage in hta-testdata (event syncs, several streams, AMD,
 * nanosecond timestamps, two ranks with collectives) goes out and back to
 * the same graph and the same replayed makespan. */
static void test_hta_round_trips(void **state) {
    (void)state;
    static const char *dirs[] = {
        "hta-testdata/critical_path/cuda_event_sync", "hta-testdata/critical_path/cuda_event_sync_multi_stream",
        "hta-testdata/critical_path/alexnet",         "hta-testdata/amd_trace",
        "hta-testdata/ns_resolution_trace",           "hta-testdata/trace_filter",
        "hta-testdata/nccl_parser_config",            "hta-testdata/negative_queue_length_values_check",
    };
    for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++) {
        char src[4096];
        snprintf(src, sizeof src, "%s", sc_test_trace(dirs[d]));
        const char *p = src;
        sc__graph *g = build_paths(&p, 1, NULL);
        char dir[512];
        snprintf(dir, sizeof dir, "%s", tmp_prefix("hta-XXXXXX"));
        assert_non_null(mkdtemp(dir));
        char pfx[600];
        snprintf(pfx, sizeof pfx, "%s/x", dir);
        sc__chakra_export_stats st;
        sc_error err;
        assert_int_equal(sc__chakra_export(g, pfx, 0, &st, &err), SC_OK);
        const char *q = dir;
        sc__graph *h = build_paths(&q, 1, NULL);
        assert_int_equal(h->tasks.len, g->tasks.len);
        assert_int_equal(h->nedges, g->nedges);
        assert_int_equal(h->groups.len, g->groups.len);
        size_t sa = 0, sb = 0;
        for (size_t i = 0; i < g->tasks.len; i++) {
            sa += sc__graph_tasks(g)[i].sync != SC_SYNC_NONE;
            sb += sc__graph_tasks(h)[i].sync != SC_SYNC_NONE;
        }
        assert_int_equal(sa, sb);
        size_t sized = assert_same_sizes(g, h);
        int64_t ma = replay_makespan(g), mb = replay_makespan(h);
        print_message("%s: %zu tasks, %zu syncs, %zu sized messages, makespan %lld / %lld ns\n", dirs[d],
                      g->tasks.len, sa, sized, (long long)ma, (long long)mb);
        assert_int_equal(ma, mb);
        char f[700];
        for (size_t r = 0; r < g->ranks.len; r++) {
            snprintf(f, sizeof f, "%s.%lld.et", pfx, (long long)SC__VEC_AT(&g->ranks, sc__rank, r).rank);
            unlink(f);
        }
        snprintf(f, sizeof f, "%s.comm_group.json", pfx);
        unlink(f);
        rmdir(dir);
        sc__graph_free(h);
        sc__graph_free(g);
    }
}

/* A foreign ring (eager send/recv edges) survives export -> import: the
 * pairs stay edges, not groups, and the replay ends at the same time. */
static void test_ring_round_trip(void **state) {
    (void)state;
    const char *p = sc_test_trace("chakra-et/custom-ring-allreduce");
    sc__graph *g = build_paths(&p, 1, NULL);
    char pfx[512];
    snprintf(pfx, sizeof pfx, "%s", tmp_prefix("ring"));
    sc__chakra_export_stats st;
    sc_error err;
    assert_int_equal(sc__chakra_export(g, pfx, SC_EXPORT_FORCE, &st, &err), SC_OK);
    char names[8][600];
    const char *paths[8];
    for (int r = 0; r < 8; r++) {
        snprintf(names[r], sizeof names[r], "%s.%d.et", pfx, r);
        paths[r] = names[r];
    }
    sc__graph *h = build_paths(paths, 8, NULL);
    assert_int_equal(h->tasks.len, g->tasks.len);
    assert_int_equal(h->groups.len, 0);
    assert_int_equal(cross_rank_edges(h), 8 * 14);
    assert_int_equal(h->nedges, g->nedges);
    /* The sends and receives are in no group: each keeps its comm_size
     * (131072 bytes) all the same. */
    assert_int_equal(assert_same_sizes(g, h), 8 * 28);
    for (uint32_t i = 0; i < h->tasks.len; i++)
        if (sc__task_is_comm(sc__graph_tasks(h)[i].kind)) assert_int_equal(sc__graph_task_bytes(h, i), 131072);
    int64_t ma = replay_makespan(g), mb = replay_makespan(h);
    print_message("ring replay: %lld ns, after a round trip %lld ns\n", (long long)ma, (long long)mb);
    assert_true(ma > 0);
    assert_int_equal(ma, mb);
    sc__graph_free(h);
    sc__graph_free(g);
    unlink_export(pfx, 8);
}

/* Removes what an export of nranks ranks (0..nranks-1) wrote. */
static void unlink_export(const char *pfx, int nranks) {
    char f[700];
    for (int r = 0; r < nranks; r++) {
        snprintf(f, sizeof f, "%s.%d.et", pfx, r);
        unlink(f);
    }
    snprintf(f, sizeof f, "%s.comm_group.json", pfx);
    unlink(f);
}

/* What the tests look at in an exported node. */
typedef struct xnode {
    char pg[32];
    uint32_t type;
    int64_t comm_size, sc_bytes; /* -1 when absent */
} xnode;

/* Every node of an .et file, in order. */
static size_t read_nodes(const char *path, xnode *nodes, size_t max) {
    unsigned char *data;
    size_t size, n = 0;
    sc_error err;
    assert_int_equal(sc__source_slurp(path, &data, &size, &err), SC_OK);
    sc__chakra_cursor c = {data, size, 0};
    const uint8_t *msg;
    size_t len;
    bool bad, first = true;
    sc__vec ctrl, dep;
    sc__vec_init(&ctrl, sizeof(uint64_t));
    sc__vec_init(&dep, sizeof(uint64_t));
    while (sc__chakra_next(&c, &msg, &len, &bad)) {
        if (first) {
            first = false;
            continue;
        }
        sc__chakra_node nd;
        bool oom;
        assert_true(sc__chakra_decode_node(msg, len, &nd, &ctrl, &dep, &oom));
        assert_true(n < max);
        xnode *x = &nodes[n++];
        snprintf(x->pg, sizeof x->pg, "%.*s", nd.pg_name ? (int)nd.pg_name_len : 0, nd.pg_name ? nd.pg_name : "");
        x->type = nd.type;
        x->comm_size = sc__ck_has(&nd, SC__CA_COMM_SIZE) ? nd.attr[SC__CA_COMM_SIZE] : -1;
        x->sc_bytes = sc__ck_has(&nd, SC__CA_SC_BYTES) ? nd.attr[SC__CA_SC_BYTES] : -1;
    }
    assert_false(bad);
    sc__vec_free(&ctrl);
    sc__vec_free(&dep);
    free(data);
    return n;
}

/* Collectives name their communicator as ASTRA-sim parses it: "0" for the
 * world, a number listed in PREFIX.comm_group.json for any other set of
 * ranks (the same set, the same number), and a collective nobody joins is
 * a COMP node. Four ranks: a world all-reduce, then two all-reduces in
 * pairs {0, 1} and {2, 3}; rank 0 ends with a collective in no group,
 * rank 1 with one in a group of one. */
static void test_comm_groups(void **state) {
    (void)state;
    sc__graph *g = sc__graph_new();
    assert_non_null(g);
    uint32_t coll[4][4];
    for (uint32_t r = 0; r < 4; r++) {
        uint32_t rank = sc__graph_add_rank(g, r, SC__NONE);
        uint32_t s = sc__graph_add_proc(g, rank, SC_P_STREAM, 0, 7);
        uint32_t n = r < 2 ? 4 : 3;
        for (uint32_t i = 0; i < n; i++)
            coll[r][i] = sc_test_task(g, s, i, SC_T_COLL, 1000 * (int64_t)i, 500, "ncclDevKernel_AllReduce");
        SC__VEC_AT(&g->ranks, sc__rank, rank).ntasks = n;
    }
    uint32_t world[4] = {coll[0][0], coll[1][0], coll[2][0], coll[3][0]};
    assert_int_not_equal(sc__graph_add_group(g, SC_C_ALL_REDUCE, 4096, world, 4), SC__NONE);
    for (uint32_t i = 1; i < 3; i++) {
        uint32_t lo[2] = {coll[0][i], coll[1][i]}, hi[2] = {coll[2][i], coll[3][i]};
        assert_int_not_equal(sc__graph_add_group(g, SC_C_ALL_REDUCE, 4096, lo, 2), SC__NONE);
        assert_int_not_equal(sc__graph_add_group(g, SC_C_ALL_REDUCE, 4096, hi, 2), SC__NONE);
    }
    assert_int_not_equal(sc__graph_add_group(g, SC_C_ALL_REDUCE, 4096, &coll[1][3], 1), SC__NONE);
    sc_error err;
    assert_int_equal(sc__graph_finish(g, true, &err), SC_OK);
    char pfx[512];
    snprintf(pfx, sizeof pfx, "%s", tmp_prefix("groups"));
    sc__chakra_export_stats st;
    assert_int_equal(sc__chakra_export(g, pfx, SC_EXPORT_FORCE, &st, &err), SC_OK);
    assert_int_equal(st.comm_groups, 3);

    char path[700];
    snprintf(path, sizeof path, "%s.comm_group.json", pfx);
    unsigned char *json;
    size_t njson;
    assert_int_equal(sc__source_slurp(path, &json, &njson, &err), SC_OK);
    const char want[] = "{\n  \"1\": [0, 1],\n  \"2\": [2, 3],\n  \"3\": [1]\n}\n";
    assert_int_equal(njson, strlen(want));
    assert_memory_equal(json, want, njson);
    free(json);

    const char *want_pg[4][4] = {{"0", "1", "1", "ungrouped.0"}, {"0", "1", "1", "3"}, {"0", "2", "2"}, {"0", "2", "2"}};
    xnode nodes[8];
    for (int r = 0; r < 4; r++) {
        snprintf(path, sizeof path, "%s.%d.et", pfx, r);
        size_t n = read_nodes(path, nodes, 8);
        assert_int_equal(n, r < 2 ? 4 : 3);
        for (size_t i = 0; i < n; i++) {
            assert_string_equal(nodes[i].pg, want_pg[r][i]);
            assert_int_equal(nodes[i].type, i == 3 ? SC__CK_COMP : SC__CK_COLL);
            assert_int_equal(nodes[i].comm_size, r == 0 && i == 3 ? -1 : 4096); /* no group, no size */
        }
    }
    /* stepcast reads the collectives back into the same groups (the one in
     * no group becomes a group of its own, as before). */
    const char *paths[4];
    char et[4][700];
    for (int r = 0; r < 4; r++) {
        snprintf(et[r], sizeof et[r], "%s.%d.et", pfx, r);
        paths[r] = et[r];
    }
    sc__graph *h = build_paths(paths, 4, NULL);
    assert_int_equal(count_kind(h, SC_T_COLL), 14);
    assert_int_equal(h->groups.len, g->groups.len + 1);
    size_t by_size[5] = {0};
    for (size_t i = 0; i < h->groups.len; i++) by_size[SC__VEC_AT(&h->groups, sc__group, i).count]++;
    assert_int_equal(by_size[4], 1);
    assert_int_equal(by_size[2], 4);
    assert_int_equal(by_size[1], 2);
    sc__graph_free(h);
    sc__graph_free(g);
    unlink_export(pfx, 4);
}

/* All-gather sizes go out in ASTRA-sim's convention (one rank's input)
 * and come back in nccl-tests' (the gathered output): three ranks gather
 * 3000 bytes (1000 each), then 3001 (not a multiple: sc_bytes says
 * it), then 4000 on a communicator of 4 ranks of which 3 were traced. */
static void test_all_gather_sizes(void **state) {
    (void)state;
    sc__graph *g = sc__graph_new();
    assert_non_null(g);
    uint32_t coll[3][3];
    for (uint32_t r = 0; r < 3; r++) {
        uint32_t rank = sc__graph_add_rank(g, r, SC__NONE);
        uint32_t s = sc__graph_add_proc(g, rank, SC_P_STREAM, 0, 7);
        for (uint32_t i = 0; i < 3; i++)
            coll[r][i] = sc_test_task(g, s, i, SC_T_COLL, 1000 * (int64_t)i, 500, "ncclDevKernel_AllGather");
        SC__VEC_AT(&g->ranks, sc__rank, rank).ntasks = 3;
    }
    static const int64_t bytes[3] = {3000, 3001, 4000};
    for (uint32_t i = 0; i < 3; i++) {
        uint32_t m[3] = {coll[0][i], coll[1][i], coll[2][i]};
        uint32_t gi = sc__graph_add_group(g, SC_C_ALL_GATHER, bytes[i], m, 3);
        assert_int_not_equal(gi, SC__NONE);
        if (i == 2) SC__VEC_AT(&g->groups, sc__group, gi).comm_ranks = 4;
    }
    sc_error err;
    assert_int_equal(sc__graph_finish(g, true, &err), SC_OK);
    char pfx[512];
    snprintf(pfx, sizeof pfx, "%s", tmp_prefix("gather"));
    sc__chakra_export_stats st;
    assert_int_equal(sc__chakra_export(g, pfx, SC_EXPORT_FORCE, &st, &err), SC_OK);
    static const int64_t want_size[3] = {1000, 1000, 1000}, want_sc[3] = {-1, 3001, 4000};
    const char *paths[3];
    char et[3][700];
    xnode nodes[3];
    for (int r = 0; r < 3; r++) {
        snprintf(et[r], sizeof et[r], "%s.%d.et", pfx, r);
        paths[r] = et[r];
        assert_int_equal(read_nodes(et[r], nodes, 3), 3);
        for (int i = 0; i < 3; i++) {
            assert_int_equal(nodes[i].comm_size, want_size[i]);
            assert_int_equal(nodes[i].sc_bytes, want_sc[i]);
        }
    }
    sc__graph *h = build_paths(paths, 3, NULL);
    assert_int_equal(h->groups.len, 3);
    for (size_t i = 0; i < 3; i++) assert_int_equal(SC__VEC_AT(&h->groups, sc__group, i).bytes, bytes[i]);
    sc__graph_free(h);
    sc__graph_free(g);
    unlink_export(pfx, 3);

    /* ASTRA-sim's own all-gather example (comm_size 1 MiB per rank) goes
     * out as it came in. */
    const char *p = sc_test_trace("chakra-et/microbenchmarks/all_gather");
    g = build_paths(&p, 1, NULL);
    assert_int_equal(sc__chakra_export(g, pfx, SC_EXPORT_FORCE, &st, &err), SC_OK);
    assert_int_equal(read_nodes(et[0], nodes, 3), 1);
    assert_int_equal(nodes[0].comm_size, 1048576);
    assert_int_equal(nodes[0].sc_bytes, -1);
    sc__graph_free(g);
    unlink_export(pfx, 8);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_converter_file),
        cmocka_unit_test(test_microbenchmarks),
        cmocka_unit_test(test_custom_ring),
        cmocka_unit_test(test_info),
        cmocka_unit_test(test_wire_corners),
        cmocka_unit_test(test_memory_budget),
        cmocka_unit_test(test_no_clobber),
        cmocka_unit_test(test_megatron_round_trip),
        cmocka_unit_test(test_dlrm_round_trip),
        cmocka_unit_test(test_hta_round_trips),
        cmocka_unit_test(test_ring_round_trip),
        cmocka_unit_test(test_comm_groups),
        cmocka_unit_test(test_all_gather_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
