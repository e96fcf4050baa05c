/*
 * sensitivity.c - the check that a replay is not an echo of its trace.
 *
 * A replay that placed tasks at their measured times would reproduce the
 * measured step whatever its model got wrong. So the prepared graph (its
 * durations calibrated and any --scale rules applied) is simulated three
 * more times, each with one class of tasks twice as long, exactly as
 * `--scale CLASS=2` would make it (src/transforms/scale.c):
 *   gpu   the class `compute`: every GPU task that is not communication;
 *   cpu   the class `cpu`: every CPU task, its duration and the gap before it;
 *   comm  the class `comm`: every collective and p2p task, and the transfer
 *         time of its cross-rank group.
 * The job's step (its slowest rank's, by step.c's definition, which the
 * replay reports) with each class doubled, over the replay's own step,
 * says what bounds the step: a class whose doubling moves the step by its
 * whole length bounds it alone.
 *
 * The three runs take the graph in place rather than a copy of it (a copy
 * of a large job's graph is its largest allocation): a class is doubled,
 * simulated, then halved back. Doubling and halving an integer below 2^52
 * in a double are exact, so the graph ends as it began, bit for bit, and the
 * replay's own simulation, which runs after them, is the one it would have
 * been; a graph with a longer duration (a corrupt trace) is not checked.
 * Each run's simulator state is freed before the next, so the check needs
 * the memory of the replay's own simulation, no more, and it runs before
 * that simulation has taken its own.
 */
#include "replay.h"

#include "../trace/trace.h"

#include <stdlib.h>

/* Scale classes, in the order of SC_SENS_*. */
static const uint8_t sens_class[SC_SENS_COUNT] = {SC_SCALE_COMPUTE, SC_SCALE_CPU, SC_SCALE_COMM};

/* Can every duration, gap and transfer of g be doubled and halved back
 * exactly (|v| < 2^52, where a double holds 2v exactly)? */
static bool exactly_doubled(const sc__graph *g) {
    const int64_t lim = (int64_t)1 << 52;
    const sc__task *tasks = sc__graph_tasks(g);
    for (size_t i = 0; i < g->tasks.len; i++)
        if (tasks[i].dur >= lim || tasks[i].dur <= -lim || tasks[i].gap >= lim || tasks[i].gap <= -lim)
            return false;
    for (size_t k = 0; k < g->groups.len; k++)
        if (SC__VEC_AT(&g->groups, sc__group, k).transfer_ns >= lim) return false;
    return true;
}

/* The job's simulated step in s: its slowest rank's, as the replay
 * reports it (step.c). from and to are scratch arrays of one entry per
 * rank. */
static int64_t job_step(const sc__graph *g, const sc__sim *s, int64_t *from, int64_t *to) {
    sc__replay_steps(g, s->start, s->end, from, to);
    int64_t step = 0;
    for (size_t k = 0; k < g->ranks.len; k++)
        if (to[k] - from[k] > step) step = to[k] - from[k];
    return step;
}

/* One run: class c doubled, simulated, halved back; *step gets the job's
 * step. */
static sc_status run_doubled(sc_replay *r, const sc__sim_params *p, int c, int64_t *lo, int64_t *hi,
                             int64_t *step, sc_error *err) {
    sc__graph *g = r->g;
    sc__scale_rule rule = {.cls = sens_class[c], .factor = 2.0};
    sc__scale_rule_apply(g, r->cls, &rule);
    sc__sim sim;
    sc_status st = sc__sim_run(g, p, &sim, err);
    if (st == SC_OK) *step = job_step(g, &sim, lo, hi);
    sc__sim_free(&sim);
    rule.factor = 0.5;
    sc__scale_rule_apply(g, r->cls, &rule);
    return st;
}

/* Is the check to be skipped? The reason, or NULL to run it. */
static const char *skip_reason(const sc_replay *r, const sc_replay_options *o) {
    uint64_t max = o->sensitivity_max_tasks ? o->sensitivity_max_tasks : SC_SENSITIVITY_AUTO_TASKS;
    if (o->sensitivity == SC_SENSITIVITY_OFF) return "not asked for";
    if (o->sensitivity == SC_SENSITIVITY_AUTO && r->g->tasks.len > max)
        return "the graph has more tasks than the check runs on by default (--sensitivity runs it)";
    if (!r->g->ranks.len || !r->g->tasks.len) return "the graph has no tasks";
    if (!exactly_doubled(r->g)) return "a duration is too long to double exactly (a corrupt trace?)";
    return NULL;
}

/* Room in the budget for a simulation of the graph with what the job
 * holds besides: what the replay's own simulation checks (replay.c), so a
 * budget that admits the one admits the other (the check's few bytes per
 * rank are in the estimate's noise). */
static sc_status check_budget(const sc_replay *r, const sc_traceset *set, sc_error *err) {
    uint64_t besides = sc__sim_memory(r->g) + sc__traceset_memory(set) + sc__replay_memory(r);
    return sc__graph_check_budget(r->g, set ? set->budget : 0, besides, "checking the replay's sensitivity",
                                  "its simulation's arrays and any traces held", err);
}

sc_status sc__replay_sensitivity(sc_replay *r, const sc_traceset *set, const sc_replay_options *o, sc_error *err) {
    r->sens = (sc__sensitivity){.why_not = skip_reason(r, o)};
    if (r->sens.why_not) return SC_OK;
    double t0 = sc__now();
    size_t nr = r->g->ranks.len;
    sc_status st = check_budget(r, set, err);
    if (st != SC_OK) {
        if (o->sensitivity == SC_SENSITIVITY_ON) return st;
        sc__error_clear(err);
        r->sens.why_not = "over the memory budget (--sensitivity makes that an error)";
        return SC_OK;
    }
    int64_t *lo = sc__alloc_array(nr, sizeof *lo), *hi = sc__alloc_array(nr, sizeof *hi);
    if (!lo || !hi) st = sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory checking sensitivity");
    sc__sim_params p = sc__replay_sim_params(r, set);
    for (int c = 0; st == SC_OK && c < SC_SENS_COUNT; c++) st = run_doubled(r, &p, c, lo, hi, &r->sens.x2_ns[c], err);
    free(lo);
    free(hi);
    r->sens.computed = st == SC_OK;
    r->sens.why_not = st == SC_OK ? "" : "failed";
    r->timings.sensitivity = sc__now() - t0;
    return st;
}

/* ------------------------------------------------------------ public API */

/* The class whose doubling moves the step most, "mixed" when the
 * runner-up moves it by at least SC_SENSITIVITY_MIXED of as much, "none"
 * when no class moves it (what the check does not double sets the step:
 * launch latencies, start offsets, queued work). */
static const char *bound_by(const int64_t *x2, int64_t step) {
    static const char *const names[SC_SENS_COUNT] = {"gpu", "cpu", "communication"};
    int64_t d[SC_SENS_COUNT];
    int best = 0;
    for (int c = 0; c < SC_SENS_COUNT; c++) {
        d[c] = x2[c] - step;
        if (d[c] > d[best]) best = c;
    }
    if (d[best] <= 0) return "none";
    for (int c = 0; c < SC_SENS_COUNT; c++)
        if (c != best && (double)d[c] >= SC_SENSITIVITY_MIXED * (double)d[best]) return "mixed";
    return names[best];
}

sc_replay_sensitivity sc_replay_get_sensitivity(const sc_replay *r) {
    sc_replay_sensitivity s = {.why_not = "", .bound_by = ""};
    if (!r) return s;
    s.why_not = r->sens.why_not ? r->sens.why_not : "";
    s.step_ns = sc_replay_get_step(r).simulated_ns;
    if (!r->sens.computed) return s;
    s.computed = 1;
    s.gpu_x2_ns = r->sens.x2_ns[SC_SENS_GPU];
    s.cpu_x2_ns = r->sens.x2_ns[SC_SENS_CPU];
    s.comm_x2_ns = r->sens.x2_ns[SC_SENS_COMM];
    double base = s.step_ns > 0 ? (double)s.step_ns : 1.0;
    s.gpu_x2 = (double)s.gpu_x2_ns / base;
    s.cpu_x2 = (double)s.cpu_x2_ns / base;
    s.comm_x2 = (double)s.comm_x2_ns / base;
    s.bound_by = bound_by(r->sens.x2_ns, s.step_ns);
    return s;
}
