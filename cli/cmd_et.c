/*
 * cmd_et.c - `stepcast et [--json] [--ops N] ET [KINETO]`: what a PyTorch Execution
 * Trace holds (operators, shapes, tensor data dependencies) and, given the
 * same rank's Kineto trace, how well the two link (src/readers/pytorch_et.c).
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

/* The last run of digits in the file name, -1 when none. */
static long long rank_of_name(const char *path) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    long long r = -1;
    for (const char *p = base; *p; p++) {
        if (!isdigit((unsigned char)*p)) continue;
        char *end;
        r = strtoll(p, &end, 10);
        p = end - 1;
    }
    return r;
}

static int cmp_rank(const void *a, const void *b) {
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    long long rx = rank_of_name(x), ry = rank_of_name(y);
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

/* Loads and reports one ET. In a directory (skip_other) a file that is
 * not an ET (a Kineto trace beside it) is skipped with a note; *printed says
 * whether a report was written, before_print is written just before it. */
static size_t g_ops; /* --ops N: list linked operators instead of the summary */

static int report_one(const char *et_path, const sc_trace *k, int json, bool skip_other,
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
    sc_status rs = g_ops ? sc_report_et_ops(et, k, g_ops, stdout, json, &err)
                         : sc_report_et(et, k, stdout, json, &err);
    if (rs != SC_OK) rc = sc_cli_fail(&err);
    sc_et_free(et);
    return rc;
}

int sc_cmd_et(int argc, char **argv) {
    int json = 0;
    const char *paths[2];
    size_t n = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) json = 1;
        else if (strcmp(argv[i], "--ops") == 0) {
            char *end;
            if (++i == argc || (g_ops = strtoull(argv[i], &end, 10)) == 0 || *end)
                return sc_cli_usage("et", "--ops needs a positive count");
        }
        else if (argv[i][0] == '-' && argv[i][1]) return sc_cli_usage("et", "unknown option '%s'", argv[i]);
        else if (n == 2) return sc_cli_usage("et", "give one ET file or directory and at most one Kineto path");
        else paths[n++] = argv[i];
    }
    if (n == 0) return sc_cli_usage("et", "no execution trace given");
    struct stat sb;
    bool dir = stat(paths[0], &sb) == 0 && S_ISDIR(sb.st_mode);
    sc_error err;
    if (!dir) {
        sc_trace *k = NULL;
        if (n == 2 && sc_trace_load(paths[1], NULL, &k, &err) != SC_OK) return sc_cli_fail(&err);
        bool printed;
        int rc = report_one(paths[0], k, json, false, "", &printed);
        sc_trace_free(k);
        return rc;
    }
    char **ets;
    size_t ne = list_ets(paths[0], &ets);
    if (ne == 0) {
        fprintf(stderr, "stepcast: %s: no execution trace files (*.json, *.json.gz)\n", paths[0]);
        free(ets);
        return SC_EXIT_INPUT;
    }
    sc_traceset *set = NULL;
    if (n == 2 && sc_traceset_load(&paths[1], 1, NULL, &set, &err) != SC_OK) {
        for (size_t i = 0; i < ne; i++) free(ets[i]);
        free(ets);
        return sc_cli_fail(&err);
    }
    int rc = SC_EXIT_OK;
    size_t reported = 0;
    if (json) printf("[\n");
    for (size_t i = 0; i < ne && rc == SC_EXIT_OK; i++) {
        const sc_trace *k = NULL;
        long long r = rank_of_name(ets[i]);
        for (size_t j = 0; set && j < sc_traceset_count(set); j++)
            if (sc_trace_rank(sc_traceset_trace(set, j)) == r) k = sc_traceset_trace(set, j);
        bool printed;
        rc = report_one(ets[i], k, json, true, json && reported ? ",\n" : "", &printed);
        if (printed && set && !k)
            fprintf(stderr, "stepcast: warning: %s: no Kineto trace of rank %lld\n", ets[i], r);
        reported += printed;
    }
    if (json) printf("]\n");
    if (rc == SC_EXIT_OK && reported == 0) {
        fprintf(stderr, "stepcast: %s: no execution traces\n", paths[0]);
        rc = SC_EXIT_INPUT;
    }
    for (size_t i = 0; i < ne; i++) free(ets[i]);
    free(ets);
    sc_traceset_free(set);
    return rc;
}
