/*
 * testutil.h - shared helpers for the cmocka test programs.
 *
 * Tests run from the repository root (tests/run.sh sees to it). Real traces
 * come from ../shared/traces (override with STEPCAST_SHARED=/path/to/shared);
 * CI has ../shared beside the checkout, so a missing folder is a failure, not
 * a skip.
 */
#ifndef SC_TESTUTIL_H
#define SC_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "stepcast.h"

/* Full path of a file under shared/traces; static buffer, one call at a time. */
static inline const char *sc_test_trace(const char *rel) {
    static char buf[4096];
    const char *root = getenv("STEPCAST_SHARED");
    snprintf(buf, sizeof buf, "%s/traces/%s", root && *root ? root : "../shared", rel);
    return buf;
}

/* Writes data to a fresh temporary file and returns its path (static buffer). */
static inline const char *sc_test_tmpfile(const void *data, size_t n, const char *suffix) {
    static char path[256];
    static unsigned counter;
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/stepcast-test-%ld-%u%s", dir && *dir ? dir : "/tmp",
             (long)getpid(), counter++, suffix ? suffix : "");
    FILE *f = fopen(path, "wb");
    if (!f) return NULL;
    if (n && fwrite(data, 1, n, f) != n) {
        fclose(f);
        return NULL;
    }
    fclose(f);
    return path;
}

#endif
