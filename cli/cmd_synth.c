/*
 * cmd_synth.c - `stepcast synth`: parses the options and calls sc_synth()
 * (src/transforms/synth.c does the work). The default template is the
 * bundled Megatron example.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The bundled example, from the top of the checkout or beside it. */
static const char *default_templates[] = {
    "examples/megatron-tp8/megatron_kineto_0.json.gz",
    "../shared/traces/megatron-tp8-a100/megatron_kineto_0.json.gz",
};

int sc_cmd_synth(int argc, char **argv) {
    uint64_t ranks = 0, iterations = 0, layers = 0, seed = 0, level = 0;
    int gzip = 0, force = 0;
    const char *dir = NULL, *template_path = NULL;
    const sc_cli_opt opts[] = {
        {.name = "--ranks", .kind = SC_CLI_UINT, .dest = &ranks, .min = 1, .max = 1000000,
         .what = "a rank count from 1 to 1000000"},
        {.name = "--iterations", .kind = SC_CLI_UINT, .dest = &iterations, .min = 1, .max = 100000,
         .what = "a step count from 1 to 100000"},
        {.name = "--layers", .kind = SC_CLI_UINT, .dest = &layers, .min = 1, .max = 10000000,
         .what = "a layer count from 1 to 10000000"},
        {.name = "--seed", .kind = SC_CLI_UINT, .dest = &seed, .what = "a number"},
        {.name = "--gzip", .kind = SC_CLI_FLAG, .dest = &gzip},
        {.name = "--gzip-level", .kind = SC_CLI_UINT, .dest = &level, .min = 1, .max = 9,
         .what = "a level from 1 to 9"},
        {.name = "--force", .kind = SC_CLI_FLAG, .dest = &force},
        {.name = "--template", .kind = SC_CLI_STRING, .dest = &template_path, .what = "a trace file"},
        {.name = "--output", .alias = "-o", .kind = SC_CLI_STRING, .dest = &dir, .what = "a directory"},
    };
    sc_cli_args a;
    int rc = sc_cli_parse("synth", argc, argv, opts, SC_CLI_NOPTS(opts), &a);
    if (rc != SC_EXIT_OK) return rc;
    size_t npaths = a.npaths;
    sc_load_options load = a.load;
    sc_cli_args_free(&a);
    if (npaths) return sc_cli_usage("synth", "unexpected argument: synth reads no traces but --template");
    if (ranks == 0) return sc_cli_usage("synth", "--ranks N is required");
    if (!dir) return sc_cli_usage("synth", "-o DIR is required");
    for (size_t i = 0; !template_path && i < sizeof default_templates / sizeof *default_templates; i++)
        if (access(default_templates[i], R_OK) == 0) template_path = default_templates[i];
    if (!template_path)
        return sc_cli_usage("synth", "no template trace found (bundled example missing); use --template FILE");
    sc_synth_options o = {.template_path = template_path,
                          .load = &load,
                          .ranks = (uint32_t)ranks,
                          .iterations = (uint32_t)iterations,
                          .layers = (uint32_t)layers,
                          .seed = seed,
                          .gzip = gzip,
                          .gzip_level = (int)level,
                          .force = force};
    sc_error err;
    if (sc_synth(&o, dir, &err) != SC_OK) return sc_cli_fail(&err);
    return SC_EXIT_OK;
}
