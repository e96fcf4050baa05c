/*
 * info.h - what `stepcast info` says of each rank, as data (the public
 * sc_info): worked out from a trace as soon as it is read (info.c), so a
 * job of thousands of ranks need not hold them all; report/info_report.c prints it.
 */
#ifndef SC_PIPELINE_INFO_H
#define SC_PIPELINE_INFO_H

#include "../trace/trace.h"

/* A counted key (malloc'ed, the rank's). */
typedef struct sc__count {
    const char *key;
    uint64_t count;
} sc__count;

typedef struct sc__counts {
    sc__count *items;
    size_t count, cap;
} sc__counts;

typedef struct sc__iteration {
    const char *name; /* "ProfilerStep#N" (malloc'ed, the rank's) */
    int64_t dur_ns;
} sc__iteration;

/* Chakra node types (et_def.proto NodeType) and collective kinds
 * (CollectiveCommType) counted; the last slot of each counts unknown ones. */
#define SC__INFO_CK_TYPES 8
#define SC__INFO_CK_COMMS 10

typedef struct sc__rank_info {
    const char *file;     /* the strings of a rank are its own, malloc'ed */
    uint8_t format;       /* SC__FMT_* */
    int64_t rank, world_size;
    uint64_t input_bytes; /* decompressed bytes read */
    /* Kineto ranks */
    const char *gpu;      /* "" when unknown */
    uint64_t events;
    sc__counts cats;      /* events by category, sorted by key */
    sc__counts streams;   /* kernels by stream, in first-seen order */
    sc__counts colls;     /* NCCL kernels by collective kind, sorted by key */
    uint64_t kernels, nccl;
    int64_t busy_ns;      /* union of the GPU intervals */
    sc__iteration *iters; /* ProfilerStep#N annotations, in file order */
    size_t niters;
    /* Chakra ranks */
    char version[80];
    uint64_t nodes;
    uint64_t by_type[SC__INFO_CK_TYPES + 1], cpu, deps, dur_us;
    uint64_t gpu_coll[SC__INFO_CK_COMMS + 1];
} sc__rank_info;

struct sc_info {
    sc__rank_info *ranks; /* in the set's (rank) order */
    size_t nranks;
    sc__warnings warnings; /* the load's */
};

#endif /* SC_PIPELINE_INFO_H */
