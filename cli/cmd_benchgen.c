/*
 * cmd_benchgen.c - `stepcast benchgen [-o DIR] [--device cuda|cpu]
 * [--shrink K] [--iterations N] [--iteration N] [--json] [--force] ET...
 * [KINETO...]`:
 * turns a traced iteration into a runnable PyTorch program (DIR/bench.py
 * and its op list DIR/bench_ops.json; src/pipeline/benchgen.c,
 * src/report/benchgen_report.c) and reports what it generated.
 *
 * The paths are files or directories; each file is tried as an Execution
 * Trace, and one that is a Kineto trace instead ("traceEvents") joins the
 * Kineto traces; in a directory, a file that is neither is skipped with a
 * note. An ET's rank is the last number in its file name
 * (megatron_et_3.json.gz, dlrm_eg_3.json, rank0.et.json); it is linked
 * with the Kineto trace of that rank, or with the only one when there is
 * one of each. --iteration N picks the ET's ProfilerStep#N (default: the
 * last one complete in the Kineto trace too; an ET without ProfilerStep
 * nodes is one iteration).
 */
#include "cli.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>


typedef struct inputs {
    char **files; /* every trace file named, in order */
    bool *listed; /* the file was found in a directory (not named) */
    size_t nfiles, cap;
    sc_et **ets;
    int64_t *ranks;
    size_t nets;
    const char **kineto; /* paths of Kineto traces */
    size_t nkineto;
} inputs;

static bool has_suffix(const char *s, const char *suf) {
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

static bool add_file(inputs *in, const char *path, bool listed) {
    if (in->nfiles == in->cap) {
        size_t cap = in->cap ? in->cap * 2 : 16;
        char **v = realloc(in->files, cap * sizeof *v);
        if (v) in->files = v;
        bool *l = v ? realloc(in->listed, cap * sizeof *l) : NULL;
        if (!l) return false;
        in->listed = l;
        in->cap = cap;
    }
    in->listed[in->nfiles] = listed;
    size_t n = strlen(path) + 1;
    if (!(in->files[in->nfiles] = malloc(n))) return false;
    memcpy(in->files[in->nfiles++], path, n);
    return true;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The trace files of a directory (*.json, *.json.gz), sorted by name. */
static bool add_dir(inputs *in, const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return false;
    size_t first = in->nfiles;
    struct dirent *e;
    bool ok = true;
    while (ok && (e = readdir(d))) {
        if (e->d_name[0] == '.' || !(has_suffix(e->d_name, ".json") || has_suffix(e->d_name, ".json.gz"))) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        ok = add_file(in, path, true);
    }
    closedir(d);
    if (in->nfiles > first) qsort(in->files + first, in->nfiles - first, sizeof *in->files, cmp_str);
    return ok;
}

static void inputs_free(inputs *in) {
    for (size_t i = 0; i < in->nets; i++) sc_et_free(in->ets[i]);
    for (size_t i = 0; i < in->nfiles; i++) free(in->files[i]);
    free(in->files);
    free(in->listed);
    free(in->ets);
    free(in->ranks);
    free(in->kineto);
}

/* Sorts the files into ETs (loaded) and Kineto traces (paths). */
static int classify(inputs *in) {
    in->ets = calloc(in->nfiles ? in->nfiles : 1, sizeof *in->ets);
    in->ranks = calloc(in->nfiles ? in->nfiles : 1, sizeof *in->ranks);
    in->kineto = calloc(in->nfiles ? in->nfiles : 1, sizeof *in->kineto);
    if (!in->ets || !in->ranks || !in->kineto) {
        fprintf(stderr, "stepcast: out of memory\n");
        return SC_EXIT_INTERNAL;
    }
    for (size_t i = 0; i < in->nfiles; i++) {
        sc_error err;
        sc_et *et;
        sc_status st = sc_et_load(in->files[i], &et, &err);
        if (st == SC_OK) {
            in->ranks[in->nets] = sc_cli_rank_of_name(in->files[i]);
            in->ets[in->nets++] = et;
        } else if (st == SC_E_FORMAT && strstr(err.message, "Kineto")) {
            in->kineto[in->nkineto++] = in->files[i];
        } else if (st == SC_E_FORMAT && in->listed[i]) { /* config.json beside the traces */
            fprintf(stderr, "stepcast: note: %s: skipped (%s)\n", in->files[i], err.message);
        } else {
            return sc_cli_fail(&err);
        }
    }
    return SC_EXIT_OK;
}

/* The Kineto trace of each ET: same rank, or the only one of each. */
static void pair(const inputs *in, const sc_traceset *set, const sc_trace **k) {
    size_t nk = set ? sc_traceset_count(set) : 0;
    for (size_t i = 0; i < in->nets; i++) {
        k[i] = NULL;
        if (in->nets == 1 && nk == 1) k[i] = sc_traceset_trace(set, 0);
        for (size_t j = 0; !k[i] && j < nk; j++)
            if (sc_trace_rank(sc_traceset_trace(set, j)) == in->ranks[i]) k[i] = sc_traceset_trace(set, j);
    }
}

static sc_status write_data(const void *ctx, FILE *f, sc_error *err) { return sc_benchgen_write_data(ctx, f, err); }

static sc_status write_program(const void *ctx, FILE *f, sc_error *err) {
    return sc_benchgen_write_program(ctx, f, err);
}

/* DIR/bench_ops.json and DIR/bench.py, then the report on stdout. */
static int generate(const inputs *in, const sc_trace **k, const sc_benchgen_options *o, const char *dir, int force,
                    int json) {
    sc_error err;
    sc_benchgen *bg;
    if (sc_benchgen_build((const sc_et *const *)in->ets, k, in->ranks, in->nets, o, &bg, &err) != SC_OK)
        return sc_cli_fail(&err);
    for (size_t i = 0; i < sc_benchgen_warning_count(bg); i++)
        fprintf(stderr, "stepcast: warning: %s\n", sc_benchgen_warning(bg, i));
    int rc = SC_EXIT_OK;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "stepcast: %s: %s\n", dir, strerror(errno));
        rc = SC_EXIT_INPUT;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/bench_ops.json", dir);
    if (rc == SC_EXIT_OK) rc = sc_cli_write_file(path, force, write_data, bg);
    snprintf(path, sizeof path, "%s/bench.py", dir);
    if (rc == SC_EXIT_OK) rc = sc_cli_write_file(path, force, write_program, bg);
    if (rc == SC_EXIT_OK) {
        if (!json) printf("wrote %s/bench.py and %s/bench_ops.json\n", dir, dir);
        if (sc_benchgen_write(bg, stdout, json, &err) != SC_OK) rc = sc_cli_fail(&err);
    }
    sc_benchgen_free(bg);
    return rc;
}

int sc_cmd_benchgen(int argc, char **argv) {
    static const char *const devices[] = {"cuda", "cpu", NULL};
    int json = 0, force = 0, device = 0;
    uint64_t shrink = 1, iterations = 5;
    uint64_t iteration = UINT64_MAX;
    const char *dir = "bench";
    const sc_cli_opt opts[] = {
        {.name = "--json", .kind = SC_CLI_FLAG, .dest = &json},
        {.name = "--force", .kind = SC_CLI_FLAG, .dest = &force},
        {.name = "--output", .alias = "-o", .kind = SC_CLI_STRING, .dest = &dir, .what = "a directory"},
        {.name = "--device", .kind = SC_CLI_CHOICE, .dest = &device, .choices = devices},
        {.name = "--shrink", .kind = SC_CLI_UINT, .dest = &shrink, .min = 1, .max = 1 << 20,
         .what = "a factor from 1 to 1048576"},
        {.name = "--iterations", .kind = SC_CLI_UINT, .dest = &iterations, .min = 1, .max = 1000000,
         .what = "a count from 1 to 1000000"},
        {.name = "--iteration", .kind = SC_CLI_UINT, .dest = &iteration, .max = INT64_MAX,
         .what = "a step number >= 0 (N of ProfilerStep#N)"},
    };
    sc_cli_args a;
    int rc = sc_cli_parse("benchgen", argc, argv, opts, SC_CLI_NOPTS(opts), &a);
    if (rc != SC_EXIT_OK) return rc;
    inputs in = {0};
    for (size_t i = 0; i < a.npaths && rc == SC_EXIT_OK; i++) {
        struct stat sb;
        if (stat(a.paths[i], &sb) != 0) {
            fprintf(stderr, "stepcast: %s: %s\n", a.paths[i], strerror(errno));
            rc = SC_EXIT_INPUT;
        } else if (!(S_ISDIR(sb.st_mode) ? add_dir(&in, a.paths[i]) : add_file(&in, a.paths[i], false))) {
            fprintf(stderr, "stepcast: %s: cannot list\n", a.paths[i]);
            rc = SC_EXIT_INPUT;
        }
    }
    if (rc == SC_EXIT_OK) rc = classify(&in);
    if (rc == SC_EXIT_OK && in.nets == 0) {
        inputs_free(&in);
        sc_cli_args_free(&a);
        return sc_cli_usage("benchgen", "no execution trace given");
    }
    sc_traceset *set = NULL;
    sc_error err;
    if (rc == SC_EXIT_OK && in.nkineto && sc_traceset_load(in.kineto, in.nkineto, &a.load, &set, &err) != SC_OK)
        rc = sc_cli_fail(&err);
    const sc_trace **k = calloc(in.nets ? in.nets : 1, sizeof *k);
    if (rc == SC_EXIT_OK && !k) rc = SC_EXIT_INTERNAL;
    if (rc == SC_EXIT_OK) {
        pair(&in, set, k);
        sc_benchgen_options o = {.device_cpu = device == 1, .shrink = (uint32_t)shrink,
                                 .iterations = (uint32_t)iterations, .iteration = iteration == UINT64_MAX ? -1 : (int64_t)iteration};
        rc = generate(&in, k, &o, dir, force, json);
    }
    free(k);
    sc_traceset_free(set);
    inputs_free(&in);
    sc_cli_args_free(&a);
    return rc;
}
