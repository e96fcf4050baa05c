/*
 * error.c - filling and formatting sc_error values.
 *
 * Every fallible function in stepcast reports through an sc_error the caller
 * owns: a status, the file, a byte offset (plus line:column when the reader
 * could count them) and a one-line message. Nothing is printed here.
 */
#include "base.h"

#include <stdio.h>

const char *sc_version(void) { return SC_VERSION_STRING; }

const char *sc_status_name(sc_status status) {
    switch (status) {
    case SC_OK: return "ok";
    case SC_E_IO: return "I/O error";
    case SC_E_PARSE: return "parse error";
    case SC_E_FORMAT: return "format error";
    case SC_E_LIMIT: return "limit exceeded";
    case SC_E_NOMEM: return "out of memory";
    case SC_E_USAGE: return "usage error";
    case SC_E_GRAPH: return "graph error";
    case SC_E_INTERNAL: return "internal error";
    }
    return "unknown error";
}

void sc__error_clear(sc_error *err) {
    if (!err) return;
    memset(err, 0, sizeof *err);
    err->offset = SC_NO_OFFSET;
}

sc_status sc__fail(sc_error *err, sc_status status, const char *file, uint64_t offset,
                   const char *fmt, ...) {
    if (!err) return status;
    sc__error_clear(err);
    err->status = status;
    err->offset = offset;
    if (file) snprintf(err->file, sizeof err->file, "%s", file);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return status;
}

const char *sc_error_format(const sc_error *err, char *buf, size_t size) {
    if (!buf || size == 0) return buf;
    if (!err) {
        snprintf(buf, size, "no error");
        return buf;
    }
    const char *file = err->file;
    if (!file[0]) /* an error about no file in particular (usage, memory) */
        snprintf(buf, size, "%s", err->message);
    else if (err->line)
        snprintf(buf, size, "%s:%u:%u: %s", file, err->line, err->column, err->message);
    else if (err->offset != SC_NO_OFFSET)
        snprintf(buf, size, "%s: byte %llu: %s", file, (unsigned long long)err->offset,
                 err->message);
    else
        snprintf(buf, size, "%s: %s", file, err->message);
    return buf;
}
