/*
 * progress.c - the one updating line on stderr that says how a long run is
 * getting on: files read and MB/s, ranks built, tasks simulated. The
 * library reports through the sc_progress_fn of its load options (it never
 * prints); this file draws what it reports, at most ten times a second,
 * from a second into the run, and only when stderr is a terminal (or
 * --progress asks for it anyway, from the start: for a log or a test).
 * --quiet turns it off. The line is cleared before anything else is
 * written to stderr and when the command ends, so it never mixes with
 * warnings, errors or the report (which goes to stdout in any case).
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static struct {
    bool drawn;     /* a line is on the screen */
    bool tty;
    double last;    /* elapsed_s of the last draw */
    const char *stage;
    char read[96];  /* what the load said last, kept on the line */
    char build[64];
} line;

static void render(const sc_progress *p, char *buf, size_t size) {
    double mb = (double)p->bytes_read / 1e6;
    if (strcmp(p->stage, "read") == 0) {
        snprintf(line.read, sizeof line.read, "read %llu/%llu files, %.0f MB, %.0f MB/s",
                 (unsigned long long)p->files_done, (unsigned long long)p->files_total, mb,
                 p->elapsed_s > 0 ? mb / p->elapsed_s : 0.0);
        snprintf(buf, size, "%s", line.read);
    } else if (strcmp(p->stage, "build") == 0) {
        snprintf(line.build, sizeof line.build, "built %llu/%llu ranks", (unsigned long long)p->ranks_done,
                 (unsigned long long)p->ranks_total);
        snprintf(buf, size, "%s; %s", line.read, line.build);
    } else {
        snprintf(buf, size, "%s; %s; simulated %.2f/%.2f M tasks", line.read, line.build,
                 (double)p->tasks_done / 1e6, (double)p->tasks_total / 1e6);
    }
}

static void draw(void *user, const sc_progress *p) {
    (void)user;
    bool changed = line.stage != p->stage;
    line.stage = p->stage;
    char buf[320];
    render(p, buf, sizeof buf);
    if (!sc_cli_ui.progress && p->elapsed_s < 1.0) return; /* a short run shows nothing */
    if (!changed && line.drawn && p->elapsed_s - line.last < 0.1) return;
    line.last = p->elapsed_s;
    /* \033[K clears what a longer line left; a log gets plain lines. */
    fprintf(stderr, line.tty ? "\rstepcast: %s\033[K" : "stepcast: progress: %s\n", buf);
    fflush(stderr);
    line.drawn = line.tty;
}

void sc_cli_progress_setup(sc_load_options *load) {
    line.tty = isatty(STDERR_FILENO) == 1;
    if (sc_cli_ui.quiet || !(line.tty || sc_cli_ui.progress)) return;
    load->progress = draw;
    load->progress_user = NULL;
}

void sc_cli_progress_clear(void) {
    if (!line.drawn) return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
    line.drawn = false;
}
