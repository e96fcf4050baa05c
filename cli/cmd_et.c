/*
 * cmd_et.c - `stepcast et [--json] [--ops N] ET [KINETO]`: what a PyTorch Execution
 * Trace holds (operators, shapes, tensor data dependencies) and, given the
 * same rank's Kineto trace, how well the two link (src/readers/pytorch_et.c,
 * src/report/et_report.c).
 *
 * With --ops N it lists the first N linked operators instead (Kineto start
 * and duration, ET id, input shapes and types).
 *
 * ET may be a file or a directory of ET files (*.json, *.json.gz; the rank
 * is the last number in the file name, as in megatron_et_3.json.gz or
 * dlrm_eg_3.json); KINETO then names the Kineto traces of the job (files or
 * a directory, ranks from the traces), and each ET is linked with the trace
 * of its rank.
 */
#include "cli.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>


static int cmp_rank(const void *a, const void *b) {
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    long long rx = sc_cli_rank_of_name(x), ry = sc_cli_rank_of_name(y);
    if (rx != ry) return rx < ry ? -1 : 1;
    return strcmp(x, y);
}

static bool has_suffix(const char *s, const char *suf) {
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

/* The ET files of a directory, sorted by rank; caller frees. */
static size_t list_ets(const char *dir, char ***out) {
    DIR *d = opendir(dir);
    *out = NULL;
    if (!d) return 0;
    size_t n = 0, cap = 0;
    char **v = NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || !(has_suffix(e->d_name, ".json") || has_suffix(e->d_name, ".json.gz")))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            char **nv = realloc(v, cap * sizeof *nv);
            if (!nv) break;
            v = nv;
        }
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        if (!(v[n] = malloc(len))) break;
        snprintf(v[n++], len, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    if (n) qsort(v, n, sizeof *v, cmp_rank);
    *out = v;
    return n;
}

/* Loads and reports one ET: its summary, or with ops > 0 its first ops
 * linked operators. In a directory (skip_other) a file that is not an ET (a
 * Kineto trace beside it) is skipped with a note; *printed says whether a
 * report was written, before_print is written just before it. */
static int report_one(const char *et_path, const sc_trace *k, int json, size_t ops, bool skip_other,
                      const char *before_print, bool *printed) {
    sc_error err;
    sc_et *et;
    *printed = false;
    sc_status st = sc_et_load(et_path, &et, &err);
    if (st == SC_E_FORMAT && skip_other) {
        fprintf(stderr, "stepcast: note: %s: skipped (%s)\n", et_path, err.message);
        return SC_EXIT_OK;
    }
    if (st != SC_OK) return sc_cli_fail(&err);
    fputs(before_print, stdout);
    *printed = true;
    int rc = SC_EXIT_OK;
    sc_status rs = ops ? sc_et_write_ops(et, k, ops, stdout, json, &err) : sc_et_write(et, k, stdout, json, &err);
    if (rs != SC_OK) rc = sc_cli_fail(&err);
    sc_et_free(et);
    return rc;
}

static void free_list(char **v, size_t n) {
    for (size_t i = 0; i < n; i++) free(v[i]);
    free(v);
}

/* One ET file, linked with the Kineto trace at kineto_path (may be NULL). */
static int report_file(const char *et_path, const char *kineto_path, const sc_load_options *load, int json,
                       size_t ops) {
    sc_error err;
    sc_trace *k = NULL;
    if (kineto_path && sc_trace_load(kineto_path, load, &k, &err) != SC_OK) return sc_cli_fail(&err);
    bool printed;
    int rc = report_one(et_path, k, json, ops, false, "", &printed);
    sc_trace_free(k);
    return rc;
}

/* Every ET of a directory, each linked with the trace of its rank. */
static int report_dir(const char *dir, const char *kineto_path, const sc_load_options *load, int json,
                      size_t ops) {
    char **ets;
    size_t ne = list_ets(dir, &ets);
    if (ne == 0) {
        fprintf(stderr, "stepcast: %s: no execution trace files (*.json, *.json.gz)\n", dir);
        free(ets);
        return SC_EXIT_INPUT;
    }
    sc_error err;
    sc_traceset *set = NULL;
    if (kineto_path && sc_traceset_load(&kineto_path, 1, load, &set, &err) != SC_OK) {
        free_list(ets, ne);
        return sc_cli_fail(&err);
    }
    int rc = SC_EXIT_OK;
    size_t reported = 0;
    if (json) printf("[\n");
    for (size_t i = 0; i < ne && rc == SC_EXIT_OK; i++) {
        const sc_trace *k = NULL;
        long long r = sc_cli_rank_of_name(ets[i]);
        for (size_t j = 0; set && j < sc_traceset_count(set); j++)
            if (sc_trace_rank(sc_traceset_trace(set, j)) == r) k = sc_traceset_trace(set, j);
        bool printed;
        rc = report_one(ets[i], k, json, ops, true, json && reported ? ",\n" : "", &printed);
        if (printed && set && !k)
            fprintf(stderr, "stepcast: warning: %s: no Kineto trace of rank %lld\n", ets[i], r);
        reported += printed;
    }
    if (json) printf("]\n");
    if (rc == SC_EXIT_OK && reported == 0) {
        fprintf(stderr, "stepcast: %s: no execution traces\n", dir);
        rc = SC_EXIT_INPUT;
    }
    free_list(ets, ne);
    sc_traceset_free(set);
    return rc;
}

int sc_cmd_et(int argc, char **argv) {
    int json = 0;
    uint64_t ops = 0;
    const sc_cli_opt opts[] = {
        {.name = "--json", .kind = SC_CLI_FLAG, .dest = &json},
        {.name = "--ops", .kind = SC_CLI_UINT, .dest = &ops, .min = 1, .what = "a positive count"},
    };
    sc_cli_args a;
    int rc = sc_cli_parse("et", argc, argv, opts, SC_CLI_NOPTS(opts), &a);
    if (rc != SC_EXIT_OK) return rc;
    if (a.npaths == 0 || a.npaths > 2) {
        sc_cli_args_free(&a);
        return sc_cli_usage("et", a.npaths ? "give one ET file or directory and at most one Kineto path"
                                           : "no execution trace given");
    }
    const char *et_path = a.paths[0], *kineto = a.npaths == 2 ? a.paths[1] : NULL;
    struct stat sb;
    bool dir = stat(et_path, &sb) == 0 && S_ISDIR(sb.st_mode);
    rc = dir ? report_dir(et_path, kineto, &a.load, json, (size_t)ops)
             : report_file(et_path, kineto, &a.load, json, (size_t)ops);
    sc_cli_args_free(&a);
    return rc;
}
