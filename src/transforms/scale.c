/*
 * scale.c - the `--scale CLASS=FACTOR` transform: multiply the durations of a
 * class of tasks in a built graph before it is simulated.
 *
 * It runs after calibration (src/models/calibrate.c), so a group's modelled
 * transfer time is scaled together with its members when `comm` (or a
 * matching name) selects them. CPU scaling also stretches the gaps before
 * CPU tasks, since the uncovered time is CPU work too (Python, framework).
 * Classes are decided from the task kind and, for kernels, the name (see
 * sc__scale_class_of), so the rules stay readable and testable.
 */
#include "scale.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

static bool has_ci(const char *s, const char *key) { return sc__contains_ci(s, key); }

sc__scale_class sc__scale_class_of(const char *name, uint8_t kind) {
    if (!sc__task_on_gpu(kind)) return SC_SCALE_CPU;
    if (sc__task_is_comm(kind) || has_ci(name, "nccl") || has_ci(name, "rccl")) return SC_SCALE_COMM;
    if (kind != SC_T_KERNEL) return SC_SCALE_COMPUTE;
    static const char *const attention[] = {"flash", "fmha", "attention", "attn", "sdpa"};
    for (size_t i = 0; i < sizeof attention / sizeof attention[0]; i++)
        if (has_ci(name, attention[i])) return SC_SCALE_ATTENTION;
    /* nvjet_*: cuBLAS's GEMM kernels on Hopper and later (PyTorch 2.x's
     * default there), named for neither gemm nor cutlass. */
    static const char *const gemm[] = {"gemm", "xmma", "cublas", "cutlass", "matmul", "nvjet", "s884",
                                       "s1688", "h884", "h1688", "s16816", "h16816"};
    for (size_t i = 0; i < sizeof gemm / sizeof gemm[0]; i++)
        if (has_ci(name, gemm[i])) return SC_SCALE_GEMM;
    return SC_SCALE_COMPUTE;
}

static const struct {
    const char *name;
    sc__scale_class cls;
} class_names[] = {
    {"compute", SC_SCALE_COMPUTE}, {"comm", SC_SCALE_COMM}, {"cpu", SC_SCALE_CPU},
    {"gemm", SC_SCALE_GEMM},       {"attention", SC_SCALE_ATTENTION}, {"gpu", SC_SCALE_GPU},
};

sc_status sc__scale_parse(const char *spec, sc__scale_rule *out, sc_error *err) {
    memset(out, 0, sizeof *out);
    const char *eq = strrchr(spec, '=');
    if (!eq || eq == spec)
        return sc__fail(err, SC_E_USAGE, "--scale", SC_NO_OFFSET,
                        "wants CLASS=FACTOR (CLASS: compute, comm, cpu, gemm, attention, gpu, "
                        "or a kernel-name substring), got '%s'", spec);
    size_t n = (size_t)(eq - spec);
    if (n >= sizeof out->name)
        return sc__fail(err, SC_E_USAGE, "--scale", SC_NO_OFFSET, "name too long in '%s'", spec);
    errno = 0;
    char *end;
    double f = strtod(eq + 1, &end);
    /* 0 is "costs nothing" (a host that is never the bottleneck) */
    if (errno || end == eq + 1 || *end || !isfinite(f) || f < 0)
        return sc__fail(err, SC_E_USAGE, "--scale", SC_NO_OFFSET, "FACTOR must be a number >= 0, got '%s'",
                        eq + 1);
    out->factor = f;
    memcpy(out->name, spec, n);
    out->name[n] = '\0';
    out->cls = SC_SCALE_NAME;
    for (size_t i = 0; i < sizeof class_names / sizeof class_names[0]; i++)
        if (strcmp(out->name, class_names[i].name) == 0) out->cls = (uint8_t)class_names[i].cls;
    return SC_OK;
}

bool sc__scale_classify(const sc__graph *g, uint8_t *cls) {
    const sc__task *tasks = sc__graph_tasks(g);
    size_t nstr = g->strings.count;
    uint8_t *by_name = calloc(nstr ? nstr : 1, 1); /* 0 = not yet, else 1 + class as a kernel */
    if (!by_name) return false;
    for (size_t i = 0; i < g->tasks.len; i++) {
        const sc__task *t = &tasks[i];
        if (!sc__task_on_gpu(t->kind)) {
            cls[i] = SC_SCALE_CPU;
            continue;
        }
        if (sc__task_is_comm(t->kind)) {
            cls[i] = SC_SCALE_COMM;
            continue;
        }
        uint8_t c = t->name < nstr ? by_name[t->name] : 0;
        if (!c) {
            c = (uint8_t)(1 + sc__scale_class_of(sc__graph_str(g, t->name), SC_T_KERNEL));
            if (t->name < nstr) by_name[t->name] = c;
        }
        c = (uint8_t)(c - 1);
        /* Copies and fills are compute unless NCCL's (as sc__scale_class_of). */
        cls[i] = t->kind == SC_T_KERNEL || c == SC_SCALE_COMM ? c : SC_SCALE_COMPUTE;
    }
    free(by_name);
    return true;
}

bool sc__scale_matches(const sc__scale_rule *r, const char *name, uint8_t kind, uint8_t cls) {
    switch (r->cls) {
    case SC_SCALE_COMPUTE: return sc__task_on_gpu(kind) && cls != SC_SCALE_COMM;
    case SC_SCALE_COMM: return cls == SC_SCALE_COMM;
    case SC_SCALE_CPU: return !sc__task_on_gpu(kind);
    case SC_SCALE_GPU: return sc__task_on_gpu(kind);
    case SC_SCALE_GEMM:
    case SC_SCALE_ATTENTION: return cls == r->cls;
    default: return strstr(name, r->name) != NULL;
    }
}

static int64_t times(int64_t v, double f) {
    double x = (double)v * f;
    if (x >= 9.2e18) return INT64_MAX / 4;
    return (int64_t)llround(x);
}

uint64_t sc__scale_rule_apply(sc__graph *g, const uint8_t *cls, const sc__scale_rule *r) {
    sc__task *tasks = sc__graph_tasks(g);
    uint64_t matched = 0;
    for (size_t i = 0; i < g->tasks.len; i++) {
        sc__task *t = &tasks[i];
        if (!sc__scale_matches(r, sc__graph_str(g, t->name), t->kind, cls[i])) continue;
        matched++;
        t->dur = times(t->dur, r->factor);
        if (!sc__task_on_gpu(t->kind)) t->gap = times(t->gap, r->factor);
    }
    for (size_t gi = 0; gi < g->groups.len; gi++) {
        sc__group *grp = &SC__VEC_AT(&g->groups, sc__group, gi);
        if (!grp->count || grp->transfer_ns <= 0) continue;
        uint32_t m = SC__VEC_AT(&g->group_members, uint32_t, grp->first);
        if (sc__scale_matches(r, sc__graph_str(g, tasks[m].name), tasks[m].kind, cls[m]))
            grp->transfer_ns = times(grp->transfer_ns, r->factor);
    }
    return matched;
}

bool sc__scale_apply(sc__graph *g, const sc__scale_rule *rules, size_t n) {
    if (!n) return true;
    uint8_t *cls = sc__alloc_array(g->tasks.len ? g->tasks.len : 1, 1);
    if (!cls || !sc__scale_classify(g, cls)) {
        free(cls);
        return false;
    }
    for (size_t k = 0; k < n; k++) {
        const sc__scale_rule *r = &rules[k];
        /* A typo in a class or kernel name must not pass for a what-if. */
        if (!sc__scale_rule_apply(g, cls, r))
            sc__graph_warn(g, "--scale rule %zu (%s) selects no task: nothing was re-timed", k + 1,
                           r->cls == SC_SCALE_NAME ? r->name : "class");
    }
    free(cls);
    return true;
}
