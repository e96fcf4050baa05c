/*
 * scale.h - `--scale CLASS=FACTOR`: what-if re-timing of a class of tasks
 * before the simulation (the first lever of the what-if engine).
 */
#ifndef SC_SCALE_H
#define SC_SCALE_H

#include "../graph/graph.h"

typedef enum sc__scale_class {
    SC_SCALE_COMPUTE = 0, /* GPU tasks that are not communication */
    SC_SCALE_COMM,        /* collectives and p2p transfers (and their group transfer time) */
    SC_SCALE_CPU,         /* CPU-side tasks: durations and the gaps before them */
    SC_SCALE_GEMM,        /* GEMM kernels (cuBLAS, CUTLASS, xmma, ...) */
    SC_SCALE_ATTENTION,   /* attention kernels (flash, fmha, ...) */
    SC_SCALE_GPU,         /* every GPU task */
    SC_SCALE_NAME,        /* tasks whose name contains `name` */
} sc__scale_class;

typedef struct sc__scale_rule {
    uint8_t cls;
    double factor;
    char name[128]; /* SC_SCALE_NAME only */
} sc__scale_rule;

/* Parses "CLASS=FACTOR"; a CLASS that is not a class name is a name substring.
 * FACTOR must be a finite number >= 0 (0: the tasks cost nothing). Fails
 * with SC_E_USAGE. */
sc_status sc__scale_parse(const char *spec, sc__scale_rule *out, sc_error *err);

/* The narrowest class of a task: GEMM, ATTENTION, COMPUTE (other GPU work),
 * COMM or CPU. Shared with the reports' critical-path summary. */
sc__scale_class sc__scale_class_of(const char *name, uint8_t kind);

/* sc__scale_class_of for every task of g into cls (ntasks entries), deciding
 * once per distinct name: a trace has a few hundred kernel names for 100k+
 * tasks. False on out-of-memory. */
bool sc__scale_classify(const sc__graph *g, uint8_t *cls);

/* Whether rule r selects a task of this name, kind and class (from
 * sc__scale_classify). */
bool sc__scale_matches(const sc__scale_rule *r, const char *name, uint8_t kind, uint8_t cls);

/* Multiplies the durations (and CPU gaps, and group transfer times) that one
 * rule selects, given every task's class (sc__scale_classify); returns the
 * tasks it selected. Warns about nothing: for callers that re-time a graph
 * on their own account (the replay's sensitivity check). */
uint64_t sc__scale_rule_apply(sc__graph *g, const uint8_t *cls, const sc__scale_rule *r);

/* Multiplies the durations (and CPU gaps, and group transfer times) the rules
 * select; rules compose multiplicatively in order, and a rule that selects
 * no task leaves a warning on g. False on out-of-memory. */
bool sc__scale_apply(sc__graph *g, const sc__scale_rule *rules, size_t n);

#endif /* SC_SCALE_H */
