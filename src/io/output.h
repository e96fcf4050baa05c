/*
 * output.h - writing an output file safely (internal view).
 *
 * The public API is sc_output_* in stepcast.h (section 5); this header only
 * names the flags for library code that writes files itself. The contract,
 * for everyone who writes an output (Chrome timeline, Chakra export, JSON
 * reports):
 *
 *   sc_output *o;
 *   if (sc_output_open(path, force ? SC_OUTPUT_FORCE : 0, &o, err) != SC_OK)
 *       return err->status;              // exists and not forced, bad dir...
 *   FILE *f = sc_output_file(o);         // write freely to f
 *   if (failed) { sc_output_abort(o); return ...; }   // temp file removed
 *   return sc_output_commit(o, err);     // flush, fsync, rename into place
 *
 * Bytes go to a temporary file in the destination's directory (so the final
 * rename stays on one file system and is atomic); commit renames it over the
 * final name. A failure at any point - a write error, a full disk, a crash -
 * leaves no partial output under the final name. Without SC_OUTPUT_FORCE an
 * existing file is never replaced: open refuses early, and commit links the
 * temporary file into place (link(2) fails on an existing name) so a file
 * that appears in between is not clobbered either. The path "-" is standard
 * output: no temporary file, commit only flushes.
 */
#ifndef SC_OUTPUT_H
#define SC_OUTPUT_H

#include "../base/base.h"

#endif
