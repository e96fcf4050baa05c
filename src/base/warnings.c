/*
 * warnings.c - a list of one-line warnings that a stage collects for the
 * user (a trace set's loader, the graph builder) and a report prints. The
 * library never prints itself: it hands the lines over, and groups them by
 * kind (the format string that made them) so that a report can say "eight
 * files skipped" in one line with an example instead of eight.
 */
#include "base.h"

#include <stdio.h>
#include <stdlib.h>

/* The group of kind, made when it is new; SC__NONE on OOM. */
static uint32_t group_of(sc__warnings *w, const char *kind) {
    for (size_t g = w->ngroups; g-- > 0;)
        if (w->groups[g].kind == kind || strcmp(w->groups[g].kind, kind) == 0) return (uint32_t)g;
    sc__warning_group *groups = sc__realloc_array(w->groups, w->ngroups + 1, sizeof *groups);
    if (!groups) return SC__NONE;
    w->groups = groups;
    w->groups[w->ngroups] = (sc__warning_group){.kind = kind, .first = w->count, .count = 0};
    return (uint32_t)w->ngroups++;
}

/* Appends line (malloc'ed; taken, or freed on failure) of kind. */
static bool append(sc__warnings *w, char *line, const char *kind) {
    char **items = line ? sc__realloc_array(w->items, w->count + 1, sizeof *items) : NULL;
    if (items) w->items = items;
    uint32_t *group = items ? sc__realloc_array(w->group, w->count + 1, sizeof *group) : NULL;
    if (group) w->group = group;
    size_t had = w->ngroups;
    uint32_t g = group ? group_of(w, kind) : SC__NONE;
    if (g == SC__NONE) {
        w->ngroups = had;
        free(line);
        return false;
    }
    w->groups[g].count++;
    w->group[w->count] = g;
    w->items[w->count++] = line;
    return true;
}

bool sc__warnings_vadd(sc__warnings *w, const char *fmt, va_list ap) {
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *line = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (line) vsnprintf(line, (size_t)n + 1, fmt, again);
    va_end(again);
    return append(w, line, fmt);
}

bool sc__warnings_add(sc__warnings *w, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    bool ok = sc__warnings_vadd(w, fmt, ap);
    va_end(ap);
    return ok;
}

bool sc__warnings_add_text(sc__warnings *w, const char *kind, const char *line) {
    return append(w, sc__strdup(line), kind);
}

bool sc__warnings_copy(sc__warnings *dst, const sc__warnings *src) {
    for (size_t i = 0; i < src->count; i++)
        if (!append(dst, sc__strdup(src->items[i]), src->groups[src->group[i]].kind)) return false;
    return true;
}

void sc__warnings_truncate(sc__warnings *w, size_t keep) {
    while (w->count > keep) {
        uint32_t g = w->group[--w->count];
        free(w->items[w->count]);
        w->groups[g].count--;
    }
    /* A kind whose first warning went goes too: groups are in the order
     * of their first warnings, so those are the last ones. */
    while (w->ngroups > 0 && w->groups[w->ngroups - 1].count == 0) w->ngroups--;
}

void sc__warnings_free(sc__warnings *w) {
    sc__warnings_truncate(w, 0);
    free(w->items);
    free(w->group);
    free(w->groups);
    memset(w, 0, sizeof *w);
}

sc_status sc__warnings_group_at(const sc__warnings *w, size_t i, sc_warning_group *out, sc_error *err) {
    if (!w || !out || i >= w->ngroups)
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "no warning kind %zu (there are %zu)", i,
                        w ? w->ngroups : 0);
    const sc__warning_group *g = &w->groups[i];
    *out = (sc_warning_group){.example = w->items[g->first], .first = g->first, .count = g->count};
    return SC_OK;
}
