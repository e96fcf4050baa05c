/*
 * textbuf.c - a growable text buffer for building reports.
 *
 * Reports (JSON, CSV, text) are assembled in memory and written in one call,
 * so a failed report never leaves half a file. An allocation failure sets
 * `oom` and turns later appends into no-ops; the caller checks once.
 */
#include "base.h"

#include <stdio.h>
#include <stdlib.h>

void sc__buf_init(sc__buf *b) { memset(b, 0, sizeof *b); }

void sc__buf_free(sc__buf *b) {
    free(b->data);
    memset(b, 0, sizeof *b);
}

static bool buf_reserve(sc__buf *b, size_t extra) {
    if (b->oom) return false;
    if (extra > SIZE_MAX - b->len - 1) {
        b->oom = true;
        return false;
    }
    size_t need = b->len + extra + 1;
    if (need <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *p = realloc(b->data, cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->data = p;
    b->cap = cap;
    return true;
}

void sc__buf_put(sc__buf *b, const char *s, size_t n) {
    if (!buf_reserve(b, n)) return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void sc__buf_puts(sc__buf *b, const char *s) { sc__buf_put(b, s, strlen(s)); }

void sc__buf_printf(sc__buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char tmp[512];
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof tmp) {
        sc__buf_put(b, tmp, (size_t)n);
        return;
    }
    if (!buf_reserve(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void sc__buf_json_str(sc__buf *b, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    sc__buf_put(b, "\"", 1);
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        sc__buf_put(b, s + run, i - run);
        run = i + 1;
        char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
        if (c == '"' || c == '\\') {
            esc[1] = (char)c;
            sc__buf_put(b, esc, 2);
        } else if (c == '\n') {
            sc__buf_put(b, "\\n", 2);
        } else if (c == '\t') {
            sc__buf_put(b, "\\t", 2);
        } else {
            sc__buf_put(b, esc, 6);
        }
    }
    sc__buf_put(b, s + run, n - run);
    sc__buf_put(b, "\"", 1);
}

void sc__buf_json_cstr(sc__buf *b, const char *s) { sc__buf_json_str(b, s, strlen(s)); }

sc_status sc__buf_write(sc__buf *b, FILE *out, sc_error *err) {
    if (b->oom) {
        sc__buf_free(b);
        return sc__fail(err, SC_E_NOMEM, NULL, SC_NO_OFFSET, "out of memory building the report");
    }
    bool ok = !b->len || fwrite(b->data, 1, b->len, out) == b->len;
    sc__buf_free(b);
    if (!ok) return sc__fail(err, SC_E_IO, NULL, SC_NO_OFFSET, "cannot write the report");
    return SC_OK;
}
