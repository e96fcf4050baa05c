/*
 * budget.c - the memory budget that turns "this trace would not fit" into a
 * clear error instead of swapping.
 *
 * sc_load_options.max_memory_bytes caps what the readers hold for a job; 0
 * means the default: $STEPCAST_MAX_MEMORY if set (the CLI's --max-memory
 * sets it), else 80% of physical memory. A trace set splits the budget
 * evenly across its files (so the check is deterministic, whatever order the
 * threads finish in); a reader compares its arrays, strings and read window
 * against its share before each array doubles. The set keeps the whole
 * budget for the job built from it: the graph builders check it
 * after each rank and before finishing, a replay before simulating
 * (sc__graph_check_budget in graph.c), so no stage swaps either.
 *
 * The threads a load (and the graph build after it) may use live here too:
 * sc_load_options.threads; 0 means $STEPCAST_THREADS if set (the CLI's -j
 * sets it), else every online core; at most 64. So does the way a helper
 * thread steps back for the one its stage waits on (sc__thread_defer).
 */
#include "base.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#ifdef __linux__
#include <errno.h>
#include <sys/resource.h>
#endif

sc_status sc_parse_bytes(const char *text, uint64_t *out) {
    if (!text || !out) return SC_E_USAGE;
    const char *p = text;
    if (*p < '0' || *p > '9') return SC_E_USAGE;
    uint64_t v = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (UINT64_MAX - 9) / 10) return SC_E_USAGE;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    unsigned shift = 0;
    switch (*p) {
    case 'k': case 'K': shift = 10; p++; break;
    case 'm': case 'M': shift = 20; p++; break;
    case 'g': case 'G': shift = 30; p++; break;
    case 't': case 'T': shift = 40; p++; break;
    default: break;
    }
    if (shift && (*p == 'i' || *p == 'I')) p++; /* KiB, MiB, ... */
    if (shift && (*p == 'b' || *p == 'B')) p++;
    if (*p || v == 0 || v > (UINT64_MAX >> shift)) return SC_E_USAGE;
    *out = v << shift;
    return SC_OK;
}

uint64_t sc__default_memory_budget(void) {
    const char *env = getenv("STEPCAST_MAX_MEMORY");
    uint64_t v;
    if (env && *env && sc_parse_bytes(env, &v) == SC_OK) return v;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return UINT64_MAX; /* unknown: no cap */
    uint64_t phys = (uint64_t)pages * (uint64_t)page;
    return phys / 10 * 8;
}

uint64_t sc__load_budget(const sc_load_options *opts) {
    if (opts && opts->max_memory_bytes) return opts->max_memory_bytes;
    return sc__default_memory_budget();
}

sc__size sc__size_in_units(uint64_t bytes, unsigned max_power) {
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    unsigned u = 0;
    while (u < max_power && u + 1 < sizeof units / sizeof *units && bytes >> (10 * (u + 1)))
        u++;
    return (sc__size){.unit = units[u],
                      .power = u,
                      .whole = bytes >> (10 * u),
                      .value = (double)bytes / (double)((uint64_t)1 << (10 * u))};
}

const char *sc__budget_text(uint64_t bytes, char *buf) {
    sc__size s = sc__size_in_units(bytes, 2); /* MiB at most */
    if (s.power == 0)
        snprintf(buf, 32, "%llu bytes", (unsigned long long)bytes);
    /* A tenth of a MiB below 100 MiB, so that a need just over a budget
     * does not read as equal to it ("15.4 MiB, more than 15.3 MiB"). */
    else if (s.power == 2 && s.whole < 100 && s.value != (double)s.whole)
        snprintf(buf, 32, "%.1f %s", s.value, s.unit);
    else snprintf(buf, 32, "%llu %s", (unsigned long long)s.whole, s.unit);
    return buf;
}

unsigned sc__load_threads(const sc_load_options *opts) {
    long n = opts && opts->threads ? (long)opts->threads : 0;
    const char *env = getenv("STEPCAST_THREADS");
    if (!n && env && *env) {
        char *end;
        long v = strtol(env, &end, 10);
        if (!*end && v > 0) n = v;
    }
    if (!n) n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 64 ? 64 : (unsigned)n;
}

/* Linux keeps a nice value per thread, and PRIO_PROCESS with a thread id
 * sets that thread's alone (setpriority(2)); raising it needs no privilege.
 * Where that is not so the hint is dropped: it changes no result. */
void sc__thread_defer(int steps) {
#ifdef __linux__
    id_t self = (id_t)gettid();
    errno = 0;
    int now = getpriority(PRIO_PROCESS, self);
    if (now == -1 && errno) return;
    int want = now + steps > 19 ? 19 : now + steps;
    if (want > now) (void)setpriority(PRIO_PROCESS, self, want);
#else
    (void)steps;
#endif
}
