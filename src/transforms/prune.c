/*
 * prune.c - before a replay, remove dependencies the measured trace proves
 * false.
 *
 * Some edge families are inferred, not recorded: cross-stream edges from the
 * order of cudaEventRecord / cudaStreamWaitEvent calls (default traces carry
 * no event handle), cross-thread edges, statically resolved syncs. When an
 * inference is wrong, the trace shows it: the destination started while the
 * source was still running, which a real dependency forbids. Such an edge
 * would delay the destination in the simulation by up to the source's whole
 * duration (on DLRM-style traces: tens of ms behind a waiting NCCL kernel),
 * so it is dropped and counted; the report prints the counts so a builder
 * problem stays visible. Recorded families (program and stream order,
 * launches) are never touched: launch edges legitimately "overlap" (a kernel
 * may start before its launch call returns).
 */
#include "prune.h"

#include <stdlib.h>

static bool inferred(uint8_t family) {
    return family == SC_E_CROSS_THREAD || family == SC_E_CROSS_STREAM || family == SC_E_GPU_TO_CPU;
}

void sc__prune_contradicted(sc__graph *g, uint64_t *dropped) {
    for (int f = 0; f < SC_E_FAMILY_COUNT; f++) dropped[f] = 0;
    if (!g->succ_off) return;
    const sc__task *tasks = sc__graph_tasks(g);
    size_t nt = g->tasks.len;
    uint32_t w = 0;
    for (size_t u = 0; u < nt; u++) {
        uint32_t from = g->succ_off[u], to = g->succ_off[u + 1];
        g->succ_off[u] = w;
        int64_t end = tasks[u].ts + tasks[u].dur;
        for (uint32_t k = from; k < to; k++) {
            uint32_t v = g->succ[k];
            uint8_t fam = g->succ_family[k];
            bool measured = tasks[u].event != SC__NONE && tasks[v].event != SC__NONE;
            if (measured && inferred(fam) && tasks[v].ts + SC__PRUNE_TOLERANCE_NS < end) {
                dropped[fam]++;
                g->indeg[v]--;
                continue;
            }
            g->succ[w] = v;
            g->succ_family[w] = fam;
            w++;
        }
    }
    g->succ_off[nt] = w;
    g->nedges = w;
}
