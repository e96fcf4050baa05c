/*
 * bench_sim.c - the simulator's figures for `make bench`: simulated tasks per
 * second on one core, on the real 8-rank Megatron graph and on a larger graph
 * made of copies of it, and the replay stages' wall time on the example.
 *
 *   bench_sim EXAMPLE_DIR SYNTH_DIR BIG_JSON BIG_GZ SMALL_JSON
 *
 * (the arguments every bench program gets from bench/run.sh; only
 * EXAMPLE_DIR is used: `stepcast replay` on SYNTH_DIR is timed end to end by
 * run.sh). Prints `figure<TAB>name<TAB>value<TAB>unit` lines. Throughput is
 * tasks per CPU-second of the calling thread in sc__sim_run alone
 * (allocation of its state included), best of several runs: on a shared
 * machine wall time mostly measures the neighbours. Other figures are wall
 * time.
 */
#include "stepcast.h"
#include "models/calibrate.h"
#include "pipeline/replay.h"
#include "sim/sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void figure(const char *name, double value, const char *unit) {
    printf("sim\t%s\t%.3f\t%s\n", name, value, unit);
}

/* copies x g: every rank, processor, task, edge and group, renumbered. */
static sc__graph *replicate(const sc__graph *g, unsigned copies) {
    sc__graph *o = sc__graph_new();
    if (!o) return NULL;
    const sc__task *tasks = sc__graph_tasks(g);
    const sc__proc *procs = sc__graph_procs(g);
    size_t nt = g->tasks.len, np = g->procs.len, nr = g->ranks.len;
    if (!sc__vec_reserve(&o->tasks, nt * copies) || !sc__vec_reserve(&o->edge_list, g->nedges * copies))
        goto fail;
    for (unsigned c = 0; c < copies; c++) {
        for (size_t r = 0; r < nr; r++) {
            const sc__rank *src = &SC__VEC_AT(&g->ranks, sc__rank, r);
            uint32_t k = sc__graph_add_rank(o, src->rank + (int64_t)(c * nr), src->trace);
            if (k == SC__NONE) goto fail;
            sc__rank *dst = &SC__VEC_AT(&o->ranks, sc__rank, k);
            dst->first_task = src->first_task + (uint32_t)(c * nt);
            dst->ntasks = src->ntasks;
            dst->step_start = src->step_start;
            dst->step_end = src->step_end;
            dst->step_first_task = src->step_first_task + (uint32_t)(c * nt);
        }
        for (size_t p = 0; p < np; p++)
            if (sc__graph_add_proc(o, procs[p].rank + (uint32_t)(c * nr), (sc__proc_kind)procs[p].kind,
                                   procs[p].device, procs[p].id) == SC__NONE)
                goto fail;
        for (size_t i = 0; i < nt; i++) {
            sc__task t = tasks[i];
            t.proc += (uint32_t)(c * np);
            t.group = SC__NONE;
            if (t.sync == SC_SYNC_STREAM) t.sync_arg += (uint32_t)(c * np);
            if (t.sync == SC_SYNC_TASK) t.sync_arg += (uint32_t)(c * nt);
            if (sc__graph_add_task(o, &t) == SC__NONE) goto fail;
        }
        for (size_t u = 0; u < nt; u++)
            for (uint32_t k = g->succ_off[u]; k < g->succ_off[u + 1]; k++)
                if (!sc__graph_add_edge(o, (uint32_t)(u + c * nt), (uint32_t)(g->succ[k] + c * nt),
                                        (sc__edge_family)g->succ_family[k]))
                    goto fail;
        for (size_t gi = 0; gi < g->groups.len; gi++) {
            const sc__group *grp = &SC__VEC_AT(&g->groups, sc__group, gi);
            uint32_t m[64];
            if (grp->count > 64) continue;
            for (uint32_t i = 0; i < grp->count; i++)
                m[i] = SC__VEC_AT(&g->group_members, uint32_t, grp->first + i) + (uint32_t)(c * nt);
            uint32_t id = sc__graph_add_group(o, (sc__coll_type)grp->type, grp->bytes, m, grp->count);
            if (id == SC__NONE) goto fail;
            SC__VEC_AT(&o->groups, sc__group, id).transfer_ns = grp->transfer_ns;
        }
    }
    sc_error err;
    if (sc__graph_finish(o, false, &err) != SC_OK) goto fail;
    return o;
fail:
    sc__graph_free(o);
    return NULL;
}

/* Best tasks/s of sc__sim_run over runs lasting about `seconds` in all. */
static double sim_rate(const sc__graph *g, double seconds) {
    size_t nr = g->ranks.len ? g->ranks.len : 1;
    int64_t *lat = calloc(nr, sizeof *lat), *base = calloc(nr, sizeof *base);
    if (!lat || !base || !sc__calibrate_launch(g, lat, NULL, NULL) || !sc__calibrate_sync_base(g, base, NULL)) {
        free(lat);
        free(base);
        return -1;
    }
    sc__sim_params p = {.coupled = true, .launch_latency = lat, .sync_base = base};
    double best = 0, start = now();
    int runs = 0;
    while (runs < 3 || (now() - start < seconds && runs < 200)) {
        sc__sim s;
        sc_error err;
        double t0 = cpu_now();
        if (sc__sim_run(g, &p, &s, &err) != SC_OK) {
            fprintf(stderr, "bench_sim: %s\n", err.message);
            best = -1;
            break;
        }
        double rate = (double)g->tasks.len / (cpu_now() - t0);
        if (rate > best) best = rate;
        sc__sim_free(&s);
        runs++;
    }
    free(lat);
    free(base);
    return best;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: bench_sim EXAMPLE_DIR [SYNTH_DIR BIG_JSON BIG_GZ SMALL_JSON]\n");
        return 2;
    }
    const char *dir = argv[1];
    sc_error err;
    sc_traceset *set;
    double t0 = now();
    if (sc_traceset_load(&dir, 1, NULL, &set, &err) != SC_OK) {
        fprintf(stderr, "bench_sim: %s\n", err.message);
        return 1;
    }
    double t1 = now();
    sc__build_options bo = {.iteration = -1};
    sc__graph *g;
    if (sc__graph_build_kineto(set, &bo, &g, &err) != SC_OK) {
        fprintf(stderr, "bench_sim: %s\n", err.message);
        return 1;
    }
    double t2 = now();
    sc__graph *big = replicate(g, 8);
    size_t ntasks = g->tasks.len;
    double rate = sim_rate(g, 1.0);
    double big_rate = big ? sim_rate(big, 2.0) : -1;
    size_t big_tasks = big ? big->tasks.len : 0;
    sc__graph_free(big);

    /* The replay stages after the build: calibration, simulation, summaries. */
    double t3 = now();
    sc_replay *r;
    if (sc__replay_graph(g, set, true, NULL, 0, &r, &err) != SC_OK) {
        fprintf(stderr, "bench_sim: %s\n", err.message);
        return 1;
    }
    FILE *null = fopen("/dev/null", "w");
    if (!null || sc_replay_write(r, null, 1, &err) != SC_OK) return 1;
    fclose(null);
    double t4 = now();
    sc_replay_free(r);

    char name[128];
    snprintf(name, sizeof name, "simulation, 8-rank Megatron graph (%zu tasks), 1 core", ntasks);
    figure(name, rate / 1e6, "M tasks/CPU-s");
    snprintf(name, sizeof name, "simulation, 8 copies of it (%zu tasks, 64 ranks), 1 core", big_tasks);
    figure(name, big_rate / 1e6, "M tasks/CPU-s");
    figure("replay of the 8-rank example: load traces", (t1 - t0) * 1e3, "ms");
    figure("replay of the 8-rank example: build graph", (t2 - t1) * 1e3, "ms");
    figure("replay of the 8-rank example: calibrate + simulate + report", (t4 - t3) * 1e3, "ms");
    figure("replay of the 8-rank example: total", (t2 - t0 + t4 - t3) * 1e3, "ms");
    sc_traceset_free(set);
    return rate > 0 && big_rate > 0 ? 0 : 1;
}
