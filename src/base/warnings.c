/*
 * warnings.c - a list of one-line warnings that a stage collects for the
 * user (a trace set's loader, the graph builder) and a report prints. The
 * library never prints itself: it hands the lines over.
 */
#include "base.h"

#include <stdio.h>
#include <stdlib.h>

bool sc__warnings_vadd(sc__warnings *w, const char *fmt, va_list ap) {
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *line = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (line) vsnprintf(line, (size_t)n + 1, fmt, again);
    va_end(again);
    char **items = line ? sc__realloc_array(w->items, w->count + 1, sizeof *items) : NULL;
    if (!items) {
        free(line);
        return false;
    }
    w->items = items;
    w->items[w->count++] = line;
    return true;
}

bool sc__warnings_add(sc__warnings *w, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    bool ok = sc__warnings_vadd(w, fmt, ap);
    va_end(ap);
    return ok;
}

void sc__warnings_truncate(sc__warnings *w, size_t keep) {
    while (w->count > keep) free(w->items[--w->count]);
}

void sc__warnings_free(sc__warnings *w) {
    sc__warnings_truncate(w, 0);
    free(w->items);
    w->items = NULL;
}
