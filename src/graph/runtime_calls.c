/*
 * runtime_calls.c - what a CUDA / HIP runtime or driver call does, from its
 * name: launch GPU work, block on the GPU (and on what), record an event or
 * make a stream wait for one. The graph builder turns the answer into the
 * task kind (LAUNCH / SYNC / RUNTIME) and into cross-stream edges.
 *
 * A call whose correlation id matches a GPU event is a launch whatever its
 * name (cpu_tasks.c promotes it); the name list below matters for calls whose
 * GPU work fell outside the window and for the sync and event calls.
 */
#include "build.h"

static bool has(const char *s, const char *needle) { return strstr(s, needle) != NULL; }

sc__call_class sc__call_classify(const char *n) {
    bool cuda = sc__starts_with(n, "cuda") || sc__starts_with(n, "cu") || sc__starts_with(n, "hip");
    if (!cuda) return SC_CALL_OTHER;
    if (has(n, "StreamSynchronize")) return SC_CALL_SYNC_STREAM;
    if (has(n, "DeviceSynchronize") || has(n, "CtxSynchronize")) return SC_CALL_SYNC_DEVICE;
    if (has(n, "EventSynchronize")) return SC_CALL_SYNC_EVENT;
    if (has(n, "EventRecord")) return SC_CALL_EVENT_RECORD;
    if (has(n, "StreamWaitEvent")) return SC_CALL_STREAM_WAIT;
    /* cudaLaunchKernel(ExC), cuLaunchKernel(Ex), cudaGraphLaunch,
     * hipLaunchKernel, hipExtModuleLaunchKernel, hipModuleLaunchKernel... */
    if (has(n, "Launch") && !has(n, "GetAttribute") && !has(n, "Occupancy")) return SC_CALL_LAUNCH;
    if (has(n, "Memcpy") || has(n, "Memset")) {
        /* Async variants return at once; plain cudaMemcpy / hipMemcpy (and
         * 2D/3D/ToSymbol...) block for the copy, and so does
         * hipMemcpyWithStream ("akin to hipMemcpyAsync +
         * hipStreamSynchronize", HIP's reference): PyTorch's blocking copies
         * on ROCm, e.g. a result read back to the host at the end of a step.
         * cudaMemset on device memory does not block the host. */
        if (has(n, "Async") || has(n, "Memset")) return SC_CALL_LAUNCH;
        if (has(n, "GetAttribute")) return SC_CALL_OTHER;
        return SC_CALL_SYNC_MEMCPY;
    }
    return SC_CALL_OTHER;
}
