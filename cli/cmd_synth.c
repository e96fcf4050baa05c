/*
 * cmd_synth.c - `stepcast synth`: parses the options and calls sc_synth()
 * (src/transforms/synth.c does the work). The default template is the
 * bundled Megatron example.
 */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *default_templates[] = {
    "examples/megatron-tp8/megatron_kineto_0.json.gz",
    "/work/shared/traces/megatron-tp8-a100/megatron_kineto_0.json.gz",
};

static bool parse_u64(const char *s, uint64_t max, uint64_t *out) {
    if (!s || !*s || *s == '-') return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v > max) return false;
    *out = v;
    return true;
}

int sc_cmd_synth(int argc, char **argv) {
    sc_synth_options o = {.ranks = 0};
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t n;
        if (strcmp(a, "--gzip") == 0) {
            o.gzip = 1;
            continue;
        }
        if (strcmp(a, "--force") == 0) {
            o.force = 1;
            continue;
        }
        if (!v) return sc_cli_usage("synth", "option '%s' needs a value", a);
        if (strcmp(a, "--ranks") == 0) {
            if (!parse_u64(v, 1000000, &n) || n == 0) return sc_cli_usage("synth", "bad --ranks '%s'", v);
            o.ranks = (uint32_t)n;
        } else if (strcmp(a, "--iterations") == 0) {
            if (!parse_u64(v, 100000, &n) || n == 0) return sc_cli_usage("synth", "bad --iterations '%s'", v);
            o.iterations = (uint32_t)n;
        } else if (strcmp(a, "--layers") == 0) {
            if (!parse_u64(v, 10000000, &n) || n == 0) return sc_cli_usage("synth", "bad --layers '%s'", v);
            o.layers = (uint32_t)n;
        } else if (strcmp(a, "--seed") == 0) {
            if (!parse_u64(v, UINT64_MAX, &n)) return sc_cli_usage("synth", "bad --seed '%s'", v);
            o.seed = n;
        } else if (strcmp(a, "--gzip-level") == 0) {
            if (!parse_u64(v, 9, &n) || n == 0) return sc_cli_usage("synth", "bad --gzip-level '%s'", v);
            o.gzip_level = (int)n;
        } else if (strcmp(a, "--template") == 0) {
            o.template_path = v;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
            dir = v;
        } else {
            return sc_cli_usage("synth", "unknown option '%s'", a);
        }
        i++;
    }
    if (o.ranks == 0) return sc_cli_usage("synth", "--ranks N is required");
    if (!dir) return sc_cli_usage("synth", "-o DIR is required");
    for (size_t i = 0; !o.template_path && i < sizeof default_templates / sizeof *default_templates; i++)
        if (access(default_templates[i], R_OK) == 0) o.template_path = default_templates[i];
    if (!o.template_path)
        return sc_cli_usage("synth", "no template trace found (bundled example missing); use --template FILE");
    sc_error err;
    if (sc_synth(&o, dir, &err) != SC_OK) return sc_cli_fail(&err);
    return SC_EXIT_OK;
}
