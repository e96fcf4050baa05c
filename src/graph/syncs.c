/*
 * syncs.c - what each GPU->CPU sync task waits for (graph.h: sync / sync_arg).
 *
 * The simulator resolves a sync at simulated time ("the last task already
 * launched on that stream"), so no static edge is added, with one
 * documented exception below. The builder only names the target:
 *   - cudaStreamSynchronize -> SC_SYNC_STREAM, the stream from the
 *     "Stream Sync" cuda_sync event when present; otherwise inferred from
 *     measured time: among the streams whose work launched before the call
 *     had all finished by the call's end (+2 us for integer-us rounding; a
 *     stream still busy then was not the one waited for), the one that
 *     finished last: the call returned because that work finished.
 *   - cudaDeviceSynchronize / "Context Sync" -> SC_SYNC_DEVICE (sync_arg =
 *     device).
 *   - cudaEventSynchronize -> SC_SYNC_TASK: with an "Event Sync" event, the
 *     last task launched on wait_on_stream before the record call; otherwise
 *     the same measured-end inference, giving the task itself.
 *   - blocking cudaMemcpy: SC_SYNC_STREAM on its own copy's stream (the call
 *     waits for earlier work there), plus the exception: a static
 *     SC_E_GPU_TO_CPU edge from the copy to the next task on the thread, as
 *     the call returns only once its own copy is done (the copy starts after
 *     the call's launch edge, so the sync cannot wait for it at simulated
 *     time without deadlocking).
 * A sync with nothing to wait for (no GPU work launched before it) becomes
 * SC_SYNC_DEVICE, which the simulator finds already satisfied.
 */
#include "build.h"

#define SYNC_SLACK_NS 2000

/* GPU task launched before the sync whose end is the latest <= sync end. */
static uint32_t measured_target(const sc__bctx *c, const sc__task *s) {
    return sc__latest_end(c, s->ts, s->ts + s->dur + SYNC_SLACK_NS);
}

/* The cuda_sync event of a call (same correlation), or NULL. */
typedef struct sync_events {
    sc__idmap by_corr; /* correlation -> event index */
} sync_events;

static bool index_sync_events(const sc__bctx *c, sync_events *se) {
    const sc__event *ev = sc__trace_events(c->t);
    if (c->opts->hide_cuda_sync) return true;
    for (size_t i = 0; i < c->t->events.len; i++)
        if (ev[i].kind == SC_K_CUDA_SYNC && ev[i].correlation >= 0 &&
            !sc__idmap_put(&se->by_corr, ev[i].correlation, (uint32_t)i))
            return false;
    return true;
}

static void set_device(const sc__bctx *c, sc__task *s) {
    s->sync = SC_SYNC_DEVICE;
    s->sync_arg = (uint32_t)(c->device >= 0 ? c->device : 0);
}

static void resolve(sc__bctx *c, uint32_t i, const sync_events *se) {
    sc__task *tasks = sc__graph_tasks(c->g);
    sc__task *s = &tasks[i];
    uint8_t cls = SC__SCRATCH(c, call_class, uint8_t, i);
    const sc_trace *tr = c->t;
    const sc__event *call = &sc__trace_events(tr)[s->event];
    uint32_t ei = call->correlation >= 0 ? sc__idmap_get(&se->by_corr, call->correlation) : SC__NONE;
    const sc__event *se_ev = ei == SC__NONE ? NULL : &sc__trace_events(tr)[ei];
    int16_t dev = c->device >= 0 ? c->device : 0;
    if (cls == SC_CALL_SYNC_DEVICE) {
        set_device(c, s);
        if (se_ev && se_ev->device >= 0) s->sync_arg = (uint32_t)se_ev->device;
        return;
    }
    if (cls == SC_CALL_SYNC_MEMCPY) {
        uint32_t copy = SC__SCRATCH(c, gpu_first, uint32_t, i);
        if (copy != SC__NONE) {
            s->sync = SC_SYNC_STREAM;
            s->sync_arg = tasks[copy].proc;
            return;
        }
    }
    if (cls == SC_CALL_SYNC_STREAM && se_ev && se_ev->stream >= 0) {
        uint32_t proc = sc__bctx_stream_proc(c, se_ev->device >= 0 ? se_ev->device : dev, se_ev->stream);
        if (proc != SC__NONE) {
            s->sync = SC_SYNC_STREAM;
            s->sync_arg = proc;
        } else {
            set_device(c, s); /* nothing of that stream in the graph: satisfied */
        }
        return;
    }
    if (cls == SC_CALL_SYNC_EVENT && se_ev) {
        const sc__event_ext *x = sc__trace_ext(tr, se_ev);
        if (x && x->wait_stream >= 0) {
            uint32_t proc = sc__bctx_stream_proc(c, dev, x->wait_stream);
            uint32_t rec = x->wait_corr >= 0 ? sc__idmap_get(&c->corr, x->wait_corr) : SC__NONE;
            int64_t before = rec != SC__NONE ? tasks[rec].ts : s->ts;
            uint32_t target = proc != SC__NONE ? sc__stream_last_launched(c, proc, before) : SC__NONE;
            if (target != SC__NONE) {
                s->sync = SC_SYNC_TASK;
                s->sync_arg = target;
            } else {
                set_device(c, s);
            }
            return;
        }
    }
    uint32_t target = cls == SC_CALL_SYNC_EVENT ? measured_target(c, s)
                                                : sc__stream_drained(c, s->ts, s->ts + s->dur + SYNC_SLACK_NS);
    if (target == SC__NONE) {
        set_device(c, s);
    } else if (cls == SC_CALL_SYNC_EVENT) {
        s->sync = SC_SYNC_TASK;
        s->sync_arg = target;
    } else {
        s->sync = SC_SYNC_STREAM;
        s->sync_arg = tasks[target].proc;
    }
}

sc_status sc__build_syncs(sc__bctx *c, sc_error *err) {
    sync_events se = {{0}};
    bool ok = index_sync_events(c, &se);
    for (uint32_t i = c->first_task; ok && i < c->first_gpu_task; i++) {
        sc__task *tasks = sc__graph_tasks(c->g);
        if (tasks[i].kind != SC_T_SYNC) continue;
        resolve(c, i, &se);
        /* The blocking-copy exception (see the top comment). */
        if (SC__SCRATCH(c, call_class, uint8_t, i) == SC_CALL_SYNC_MEMCPY) {
            uint32_t copy = SC__SCRATCH(c, gpu_last, uint32_t, i);
            if (copy != SC__NONE && i + 1 < c->first_gpu_task && tasks[i + 1].proc == tasks[i].proc)
                ok = sc__graph_add_edge(c->g, copy, i + 1, SC_E_GPU_TO_CPU);
        }
    }
    sc__idmap_free(&se.by_corr);
    if (!ok) return sc__fail(err, SC_E_NOMEM, c->t->path, SC_NO_OFFSET, "out of memory (syncs)");
    return SC_OK;
}
