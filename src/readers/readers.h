/*
 * readers.h - what the readers offer the stages above them: loading a trace
 * file of each format, and loading a whole job (traceset_load.c).
 *
 * Each reader fills an sc_trace (src/trace/trace.h): the Kineto reader
 * (kineto*.c, the public sc_trace_load) its events, the Chakra reader
 * (chakra.c) the file's checked bytes, which the graph builder decodes
 * (src/graph/build_chakra.c). PyTorch Execution Traces have a reader of
 * their own (pytorch_et.h): they describe a rank's operators, not a rank.
 */
#ifndef SC_READERS_H
#define SC_READERS_H

#include "../trace/trace.h"

/* Reads a Chakra .et / .et.gz file into a trace of format SC__FMT_CHAKRA
 * (framing and every message checked now, so errors carry offsets). The rank
 * comes from the name <prefix>.<rank>.et, else a "rank" attr of the
 * GlobalMetadata, else stays -1. opts (may be NULL) gives the memory budget. */
sc_status sc__chakra_load(const char *path, const sc_load_options *opts, sc_trace **out,
                          sc_error *err);

/* The Chakra and Kineto readers on a source already open, named path: a
 * pipe, which can be read only once, after its first bytes were peeked to
 * tell its format (traceset_load.c). The source stays the caller's. */
struct sc__source;
sc_status sc__chakra_load_source(struct sc__source *src, const char *path,
                                 const sc_load_options *opts, sc_trace **out, sc_error *err);
sc_status sc__kineto_load_source(struct sc__source *src, const char *path,
                                 const sc_load_options *opts, sc_trace **out, sc_error *err);

/* Threads for file i of a set of `files` loaded with `threads`. */
unsigned sc__file_threads(unsigned threads, size_t files, size_t i);

/* sc_traceset_load, calling each(ctx, t) on the loading thread as soon as
 * file t is read, before the next file: a caller that needs only figures
 * of each trace works them out there and frees the events, so that a job
 * holds the files being read at once, not all of them. Each file then gets
 * the memory budget divided by the files read at once instead of by all
 * files. A failing each() fails the load as a reader's error would. each
 * runs on several threads at once when the load has them. */
typedef sc_status (*sc__trace_fn)(void *ctx, sc_trace *t, sc_error *err);
sc_status sc__traceset_load_each(const char *const *paths, size_t npaths,
                                 const sc_load_options *opts, sc__trace_fn each, void *ctx,
                                 sc_traceset **out, sc_error *err);

#endif /* SC_READERS_H */
