/*
 * symmetry.c - ranks that run the same graph, found by a hash of each
 * rank's shape and confirmed by comparing the shapes themselves (so a hash
 * collision cannot merge two ranks). See symmetry.h for what a shape is.
 */
#include "symmetry.h"

#include <stdlib.h>

/* What a task contributes to its rank's shape. */
static uint64_t task_word(const sc__graph *g, const sc__task *t, const sc__proc *p) {
    uint64_t w = ((uint64_t)t->kind << 56) ^ ((uint64_t)p->kind << 48) ^ ((uint64_t)(uint16_t)p->device << 32) ^ t->name;
    if (t->group != SC__NONE) {
        const sc__group *gr = &SC__VEC_AT(&g->groups, sc__group, t->group);
        w ^= sc__hash_u64(((uint64_t)gr->type << 32) ^ (uint64_t)gr->bytes) + gr->count;
    }
    return w;
}

static uint64_t rank_hash(const sc__graph *g, const sc__rank *r) {
    const sc__task *tasks = sc__graph_tasks(g);
    const sc__proc *procs = sc__graph_procs(g);
    uint64_t h = sc__hash_u64(r->ntasks);
    for (uint32_t i = r->first_task; i < r->first_task + r->ntasks; i++)
        h = sc__hash_u64(h ^ task_word(g, &tasks[i], &procs[tasks[i].proc]));
    return h;
}

/* Same shape: tasks in the same order with the same words (a rank's tasks
 * are contiguous and in processor order, the order the builders add them). */
static bool same_shape(const sc__graph *g, const sc__rank *a, const sc__rank *b) {
    if (a->ntasks != b->ntasks) return false;
    const sc__task *tasks = sc__graph_tasks(g);
    const sc__proc *procs = sc__graph_procs(g);
    for (uint32_t i = 0; i < a->ntasks; i++) {
        const sc__task *x = &tasks[a->first_task + i], *y = &tasks[b->first_task + i];
        if (task_word(g, x, &procs[x->proc]) != task_word(g, y, &procs[y->proc]) || x->seq != y->seq) return false;
    }
    return true;
}

size_t sc__rank_classes(const sc__graph *g, uint32_t *class_of) {
    size_t nr = g->ranks.len, classes = 0;
    uint64_t *hash = sc__alloc_array(nr ? nr : 1, sizeof *hash);
    if (!hash) return 0;
    const sc__rank *ranks = g->ranks.data;
    for (size_t k = 0; k < nr; k++) {
        hash[k] = rank_hash(g, &ranks[k]);
        class_of[k] = (uint32_t)k;
        for (size_t j = 0; j < k; j++)
            if (class_of[j] == j && hash[j] == hash[k] && same_shape(g, &ranks[j], &ranks[k])) {
                class_of[k] = (uint32_t)j;
                break;
            }
        classes += class_of[k] == k;
    }
    free(hash);
    return classes ? classes : 1;
}
