/*
 * collectives.c - cross-rank groups: which communication task of each rank
 * takes part in the same collective (or send/recv transfer).
 *
 * Keys, in order of trust:
 *   1. process group name + "Seq" (PyTorch 2026+ metadata): exact;
 *   2. otherwise the order of the tasks on each communicator, where a
 *      communicator is the process group name when known, else the NCCL
 *      stream id (ranks of one job create their communicator streams in the
 *      same order, and the shared traces agree on the ids: 24 for Megatron,
 *      84 for DLRM). When ranks do not share stream ids but have the same
 *      number of NCCL streams, the i-th stream of each rank (by id) is
 *      taken as the same communicator.
 * Members of a group are the ranks in the trace set that have the task; with
 * "Process Group Ranks" known, only the listed ranks (so a 2-rank send/recv
 * pair is its own group).
 *
 * Disagreement (rank 3 has 83 collectives on a communicator where the
 * others have 84, or the i-th collectives differ in type) is a warning on
 * the graph that names the ranks. Decision for replay: the builder never
 * makes a group that cannot complete. The first min(count) tasks are matched
 * by order; each leftover task forms a group with the leftovers at the same
 * position on the other ranks (possibly a group of one) and is flagged
 * SC__TF_UNMATCHED, so the simulation cannot deadlock and the report can say
 * how many tasks were not matched. A single-rank trace's collectives are
 * groups of one: their traced duration stands for the transfer.
 *
 * A group's message size (sc__group.bytes) is its members': a member that
 * knew only its piece (msg_size.c) is the piece times the group size (its
 * "Group size" arg, else the number of members: the ranks listed in
 * "Process Group Ranks", else those matched). Members should agree; where
 * they do not (an all-to-all with uneven splits, a mismatched trace) the
 * group keeps the largest, and one warning counts such groups by type.
 */
#include "build.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct comm_key {
    uint32_t rec;   /* index into the records */
    uint32_t comm;  /* communicator ordinal */
} comm_key;

/* What cmp_key looks its keys up in. */
typedef struct key_tables {
    const sc__comm_rec *recs;
    const sc__task *tasks;
} key_tables;

/* By communicator, then rank, then stream order (seq on the stream). */
static int cmp_key(const void *a, const void *b, void *ctx) {
    const key_tables *kt = ctx;
    const comm_key *x = a, *y = b;
    if (x->comm != y->comm) return x->comm < y->comm ? -1 : 1;
    const sc__comm_rec *rx = &kt->recs[x->rec], *ry = &kt->recs[y->rec];
    if (rx->rank != ry->rank) return rx->rank < ry->rank ? -1 : 1;
    if (rx->seq != ry->seq) return rx->seq < ry->seq ? -1 : 1;
    const sc__task *tx = &kt->tasks[rx->task], *ty = &kt->tasks[ry->task];
    if (tx->ts != ty->ts) return tx->ts < ty->ts ? -1 : 1;
    return rx->task < ry->task ? -1 : (rx->task > ry->task);
}

/* Records are queued rank by rank (build.c builds ranks in order), so one
 * rank's records are a contiguous slice [lo, hi). */
typedef struct slice {
    size_t lo, hi;
} slice;

static slice next_slice(const sc__comm_rec *r, size_t n, size_t lo) {
    size_t hi = lo;
    while (hi < n && r[hi].rank == r[lo].rank) hi++;
    return (slice){lo, hi};
}

enum { MAX_NCCL_STREAMS = 64 };

/* The distinct NCCL stream ids of a rank's records without a process
 * group, ascending; returns how many (at most MAX_NCCL_STREAMS). */
static size_t stream_ids(const sc__comm_rec *r, slice sl, int64_t *ids) {
    size_t k = 0;
    for (size_t i = sl.lo; i < sl.hi; i++) {
        if (r[i].pg != SC__NONE) continue;
        size_t j = 0;
        while (j < k && ids[j] < r[i].stream) j++;
        if ((j < k && ids[j] == r[i].stream) || k == MAX_NCCL_STREAMS) continue;
        memmove(ids + j + 1, ids + j, (k - j) * sizeof *ids);
        ids[j] = r[i].stream;
        k++;
    }
    return k;
}

/* Do all ranks with NCCL streams use the same stream ids? If not, are
 * their numbers of streams equal (then the i-th streams correspond)? */
static bool stream_ids_agree(const sc__comm_rec *r, size_t n, bool *same_count) {
    int64_t first[MAX_NCCL_STREAMS], ids[MAX_NCCL_STREAMS];
    size_t nfirst = 0;
    bool have_first = false, agree = true;
    *same_count = true;
    for (size_t lo = 0; lo < n;) {
        slice sl = next_slice(r, n, lo);
        lo = sl.hi;
        size_t k = stream_ids(r, sl, ids);
        if (!k) continue;
        if (!have_first) {
            memcpy(first, ids, k * sizeof *ids);
            nfirst = k;
            have_first = true;
            continue;
        }
        if (k != nfirst) *same_count = false;
        agree &= k == nfirst && memcmp(first, ids, k * sizeof *ids) == 0;
    }
    return agree;
}

/* Position of a stream id in a rank's ascending id list. */
static uint32_t ordinal_in(const int64_t *ids, size_t k, int64_t stream) {
    uint32_t o = 0;
    while (o < k && ids[o] != stream) o++;
    return o;
}

/* Gives every record a communicator ordinal and a readable label. */
static bool assign_comms(sc__graph *g, const sc__comm_rec *r, size_t n, comm_key *keys,
                         uint32_t *labels, uint32_t *ncomms) {
    bool same_count;
    bool by_id = stream_ids_agree(r, n, &same_count) || !same_count;
    uint32_t count = 0;
    int64_t ids[MAX_NCCL_STREAMS];
    size_t nids = 0;
    for (size_t i = 0; i < n; i++) {
        if (!by_id && (i == 0 || r[i].rank != r[i - 1].rank))
            nids = stream_ids(r, next_slice(r, n, i), ids);
        char label[96];
        if (r[i].pg != SC__NONE)
            snprintf(label, sizeof label, "process group %s", sc__graph_str(g, r[i].pg));
        else if (by_id)
            snprintf(label, sizeof label, "stream %lld", (long long)r[i].stream);
        else
            snprintf(label, sizeof label, "NCCL stream #%u", ordinal_in(ids, nids, r[i].stream));
        uint32_t id = sc__intern_put(&g->strings, label, strlen(label));
        if (id == SC__NONE) return false;
        uint32_t comm = SC__NONE;
        for (uint32_t k = 0; k < count && comm == SC__NONE; k++)
            if (labels[k] == id) comm = k;
        if (comm == SC__NONE) {
            comm = count;
            labels[count++] = id;
        }
        keys[i] = (comm_key){(uint32_t)i, comm};
    }
    *ncomms = count;
    return true;
}

/* Is graph rank `rank` listed in "Process Group Ranks" text like "[0, 1]"? */
static bool pg_lists(const sc__graph *g, uint32_t pg_ranks, int64_t rank) {
    if (pg_ranks == SC__NONE) return true;
    const char *p = sc__graph_str(g, pg_ranks);
    while (*p) {
        if (*p >= '0' && *p <= '9') {
            int64_t v = 0;
            while (*p >= '0' && *p <= '9') v = v * 10 + (*p++ - '0');
            if (v == rank) return true;
        } else {
            p++;
        }
    }
    return false;
}

enum { MAX_RANKS_TEXT = 8 };

/* "rank 3 has 83 collectives on stream 24 where the others have 84".
 * Ranks with none are not members of the communicator and not named. */
static bool warn_counts(sc__graph *g, const char *label, const uint32_t *count, uint32_t nranks,
                        uint32_t expect, bool *uneven) {
    char who[160];
    size_t len = 0, nodd = 0;
    uint32_t odd = 0;
    for (uint32_t k = 0; k < nranks; k++) {
        if (count[k] == expect || count[k] == 0) continue;
        nodd++;
        odd = count[k];
        if (nodd <= MAX_RANKS_TEXT) {
            int w = snprintf(who + len, sizeof who - len, "%s%lld", nodd > 1 ? ", " : "",
                             (long long)SC__VEC_AT(&g->ranks, sc__rank, k).rank);
            if (w > 0 && (size_t)w < sizeof who - len) len += (size_t)w;
        }
    }
    if (!nodd) return true;
    *uneven = true;
    return sc__graph_warn(g,
                          "rank%s %s%s %s %u collectives on %s where the others have %u: the "
                          "unmatched ones are replayed without their missing peers",
                          nodd > 1 ? "s" : "", who, nodd > MAX_RANKS_TEXT ? ", ..." : "",
                          nodd > 1 ? "have" : "has", odd, label, expect);
}

/* The count most member ranks agree on (ties: the larger). */
static uint32_t majority(const uint32_t *count, uint32_t nranks, uint32_t *have) {
    uint32_t expect = 0, best = 0;
    *have = 0;
    for (uint32_t k = 0; k < nranks; k++) {
        if (!count[k]) continue;
        (*have)++;
        uint32_t votes = 0;
        for (uint32_t m = 0; m < nranks; m++) votes += count[m] == count[k];
        if (votes > best || (votes == best && count[k] > expect)) {
            best = votes;
            expect = count[k];
        }
    }
    return expect;
}

/* What matching the communicators shares: the records and their keys,
 * scratch per rank, and what it found. */
typedef struct matcher {
    sc__graph *g;
    const sc__comm_rec *r;
    const comm_key *keys;
    uint32_t *start, *count;  /* per rank: first key and keys on the communicator */
    uint32_t *members, *mrec; /* the group being made: its tasks and their records */
    bool uneven;
    uint64_t size_differs[SC_C_COUNT]; /* groups whose members disagree on the size */
} matcher;

/* One member's message size; n: the members of its group. */
static int64_t member_bytes(const sc__comm_rec *rec, uint32_t n) {
    if (rec->bytes >= 0) return rec->bytes;
    if (rec->piece < 0) return -1;
    int64_t ranks = rec->group_size > 0 ? rec->group_size : (int64_t)n;
    return rec->piece <= INT64_MAX / ranks ? rec->piece * ranks : -1;
}

/* The group's message size: its members' largest; disagreement counted. */
static int64_t group_bytes(matcher *m, uint32_t n, uint8_t type) {
    int64_t bytes = -1;
    bool differ = false;
    for (uint32_t k = 0; k < n; k++) {
        int64_t b = member_bytes(&m->r[m->mrec[k]], n);
        if (b < 0) continue;
        differ |= bytes >= 0 && b != bytes;
        if (b > bytes) bytes = b;
    }
    m->size_differs[type < SC_C_COUNT ? type : SC_C_UNKNOWN] += differ;
    return bytes;
}

/* One warning for all the groups whose members disagreed on the size. */
static bool warn_sizes(matcher *m) {
    char text[256];
    size_t len = 0;
    uint64_t total = 0;
    for (uint8_t t = 0; t < SC_C_COUNT; t++) {
        if (!m->size_differs[t]) continue;
        total += m->size_differs[t];
        int w = snprintf(text + len, sizeof text - len, "%s%s %llu", len ? ", " : "",
                         sc__coll_type_name(t), (unsigned long long)m->size_differs[t]);
        if (w > 0 && (size_t)w < sizeof text - len) len += (size_t)w;
    }
    if (!total) return true;
    return sc__graph_warn(m->g,
                          "ranks disagree on the message size of %llu collective%s (%s): each keeps "
                          "the largest",
                          (unsigned long long)total, total > 1 ? "s" : "", text);
}

/* The group's communicator: its label, and its size: the largest "Group
 * size" a member's arg gives (a job traced in part still knows its
 * communicator), else the ranks that ran the communicator. */
static void set_comm(const matcher *m, sc__group *grp, uint32_t label, uint32_t n, uint32_t have) {
    int64_t size = have;
    for (uint32_t k = 0; k < n; k++)
        if (m->r[m->mrec[k]].group_size > size) size = m->r[m->mrec[k]].group_size;
    grp->comm = label;
    grp->comm_ranks = size > 0 && size <= UINT32_MAX ? (uint32_t)size : n;
}

/* Matches the records of one communicator: keys[lo, hi), sorted by rank
 * then stream order; the pos-th task of every member rank form a group. */
static bool match_comm(matcher *m, size_t lo, size_t hi, uint32_t label) {
    sc__graph *g = m->g;
    const sc__comm_rec *r = m->r;
    const comm_key *keys = m->keys;
    uint32_t *start = m->start, *count = m->count, *members = m->members;
    uint32_t nranks = (uint32_t)g->ranks.len;
    memset(count, 0, nranks * sizeof *count);
    for (size_t i = lo; i < hi; i++) {
        uint32_t rank = r[keys[i].rec].rank;
        if (!count[rank]) start[rank] = (uint32_t)i;
        count[rank]++;
    }
    uint32_t have, maxc = 0;
    uint32_t expect = majority(count, nranks, &have);
    for (uint32_t k = 0; k < nranks; k++) maxc = count[k] > maxc ? count[k] : maxc;
    const char *lab = sc__graph_str(g, label);
    if (!warn_counts(g, lab, count, nranks, expect, &m->uneven)) return false;
    bool warned_type = false;
    sc__task *tasks = sc__graph_tasks(g);
    for (uint32_t pos = 0; pos < maxc; pos++) {
        uint32_t n = 0, odd_rank = SC__NONE;
        uint8_t type = SC_C_UNKNOWN;
        int64_t seq0 = -1;
        for (uint32_t k = 0; k < nranks; k++) {
            if (pos >= count[k]) continue;
            const sc__comm_rec *rec = &r[keys[start[k] + pos].rec];
            if (!pg_lists(g, rec->pg_ranks, SC__VEC_AT(&g->ranks, sc__rank, k).rank)) continue;
            if (n == 0) {
                type = rec->type;
                seq0 = rec->seq;
            } else if (rec->type != type || rec->seq != seq0) {
                odd_rank = k;
            }
            m->mrec[n] = keys[start[k] + pos].rec;
            members[n++] = rec->task;
        }
        if (!n) continue;
        if (odd_rank != SC__NONE && !warned_type) {
            warned_type = true; /* one line per communicator is enough */
            if (!sc__graph_warn(g, "collective #%u on %s differs across ranks: rank %lld has %s", pos,
                                lab, (long long)SC__VEC_AT(&g->ranks, sc__rank, odd_rank).rank,
                                sc__coll_type_name(r[keys[start[odd_rank] + pos].rec].type)))
                return false;
        }
        uint32_t grp = sc__graph_add_group(g, (sc__coll_type)type, group_bytes(m, n, type), members, n);
        if (grp == SC__NONE) return false;
        set_comm(m, &SC__VEC_AT(&g->groups, sc__group, grp), label, n, have);
        if (pos >= expect || n < have)
            for (uint32_t i = 0; i < n; i++) tasks[members[i]].flags |= SC__TF_UNMATCHED;
    }
    return true;
}

sc_status sc__build_collectives(sc__graph *g, sc__vec *comms, bool *uneven, sc_error *err) {
    size_t n = comms->len;
    *uneven = false;
    if (!n) return SC_OK;
    const sc__comm_rec *r = comms->data;
    uint32_t nranks = (uint32_t)g->ranks.len;
    comm_key *keys = sc__alloc_array(n, sizeof *keys);
    uint32_t *labels = sc__alloc_array(n, sizeof *labels);
    uint32_t *start = sc__alloc_array((size_t)nranks * 2, sizeof *start);
    uint32_t *count = sc__alloc_array(nranks, sizeof *count);
    uint32_t *members = sc__alloc_array(nranks, sizeof *members);
    uint32_t *mrec = sc__alloc_array(nranks, sizeof *mrec);
    uint32_t ncomms = 0;
    bool ok = keys && labels && start && count && members && mrec &&
              assign_comms(g, r, n, keys, labels, &ncomms);
    matcher m = {.g = g, .r = r, .keys = keys, .start = start, .count = count, .members = members, .mrec = mrec};
    if (ok) {
        key_tables kt = {r, sc__graph_tasks(g)};
        sc__sort(keys, n, sizeof *keys, cmp_key, &kt);
        for (size_t lo = 0; lo < n && ok;) {
            size_t hi = lo;
            while (hi < n && keys[hi].comm == keys[lo].comm) hi++;
            ok = match_comm(&m, lo, hi, labels[keys[lo].comm]);
            lo = hi;
        }
        ok = ok && warn_sizes(&m);
    }
    *uneven = m.uneven;
    free(keys);
    free(labels);
    free(start);
    free(count);
    free(members);
    free(mrec);
    if (!ok) return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory matching collectives");
    return SC_OK;
}
