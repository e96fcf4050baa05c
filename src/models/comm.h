/*
 * comm.h - how long a collective takes: an analytical model of NCCL's
 * algorithms over a node's links, set from a hardware profile (hardware.h)
 * and fitted to a trace's own collectives.
 *
 * Sizes follow nccl-tests' "size": all-reduce, broadcast and reduce the
 * buffer; all-gather the gathered output; reduce-scatter the whole input;
 * all-to-all what one rank sends in all; send/recv the bytes sent. A group
 * of N ranks is laid out contiguously on nodes of gpus_per_node GPUs, so it
 * spans ceil(N / gpus_per_node) nodes. comm.c says how each algorithm is
 * timed and which the model picks.
 */
#ifndef SC_COMM_H
#define SC_COMM_H

#include "../graph/graph.h"
#include "hardware.h"

/* The links a collective crosses: the intra-node link (NVLink, Infinity
 * Fabric) and the network (the NICs' share per GPU). */
typedef enum sc__comm_link { SC__LINK_INTRA = 0, SC__LINK_NET, SC__LINK_COUNT } sc__comm_link;

/* NCCL's protocols as the model sees them: the low-latency ones (LL,
 * LL128: small steps, lower bandwidth) and Simple (large chunks). */
typedef enum sc__comm_proto { SC__PROTO_LL = 0, SC__PROTO_SIMPLE, SC__PROTO_COUNT } sc__comm_proto;

typedef enum sc__comm_algo {
    SC__ALGO_RING = 0,  /* a ring through every rank (pipelined over both links) */
    SC__ALGO_TREE,      /* all-reduce over nodes: a chain in each node, a tree across them */
    SC__ALGO_NVLS,      /* all-reduce in one node, reduced in the NVSwitch (NVLink SHARP) */
    SC__ALGO_NVLS_TREE, /* all-reduce over nodes: NVLS in each node, a tree across them */
    SC__ALGO_P2P,       /* point to point: send/recv, all-to-all, gather, scatter */
    SC__ALGO_COUNT
} sc__comm_algo;

typedef struct sc__comm_link_params {
    double lat_ns[SC__PROTO_COUNT]; /* latency of one algorithm step over this link */
    double bw_gbps;                 /* achievable bus bandwidth per GPU, GB/s (Simple) */
} sc__comm_link_params;

typedef struct sc__comm_model {
    char gpu[64];        /* the profile's name */
    sc__comm_link_params link[SC__LINK_COUNT];
    double base_ns;      /* fixed cost of every collective */
    double ll_frac;      /* low-latency protocols' share of the bandwidth */
    bool nvls;           /* the node's switch reduces (NVLS algorithms apply) */
    double nvls_ns;      /* NVLS all-reduce's fixed cost over base_ns */
    double nvls_gbps;    /* NVLS all-reduce algorithm bandwidth, GB/s */
    uint32_t gpus_per_node;
    size_t fitted;       /* samples sc__comm_model_fit used; 0: the profile's values */
} sc__comm_model;

/* The model of profile p on nodes of gpus_per_node GPUs (0: the
 * profile's), with the network's Gb/s per GPU and the intra-node link's
 * GB/s per direction replaced where the overrides are not 0 (the profile's
 * efficiencies still apply). SC_E_USAGE for a bad override. */
sc_status sc__comm_model_from_profile(const sc__hw_profile *p, uint32_t gpus_per_node, double net_gbps_override,
                                      double nvlink_gbps_override, sc__comm_model *out, sc_error *err);

/* What the model chose for one collective, and why it takes what it takes. */
typedef struct sc__comm_choice {
    uint8_t algo, proto; /* sc__comm_algo, sc__comm_proto */
    uint8_t links;       /* bit (1 << sc__comm_link) per link class crossed */
    uint32_t nodes;      /* nodes the group spans */
    double latency_ns;   /* the fixed part of the time */
    double transfer_ns;  /* the part that grows with the bytes */
} sc__comm_choice;

/* The time (ns) of collective coll_type (sc__coll_type) of `bytes` over
 * `ranks` ranks: the fastest algorithm and protocol, as NCCL's tuner picks
 * them. 0 for a group of one rank; -1 when it cannot be modelled (unknown
 * type or bytes < 0). */
int64_t sc__comm_time_ns(const sc__comm_model *m, uint8_t coll_type, int64_t bytes, uint32_t ranks);
/* The same, and what was chosen (out may be NULL). */
int64_t sc__comm_explain(const sc__comm_model *m, uint8_t coll_type, int64_t bytes, uint32_t ranks,
                         sc__comm_choice *out);


/* A deduplicating all-to-all (DeepEP, HybridEP) over `ranks` ranks:
 * `near` bytes leave this GPU over the intra-node link and `far` over the
 * network, pipelined (a token crosses the network to a node's proxy GPU,
 * which forwards it over NVLink): the slower of the two, after the
 * network's latency when the group spans nodes. */
int64_t sc__comm_two_level_ns(const sc__comm_model *m, double near, double far, uint32_t ranks);
/* Nodes a group of `ranks` ranks spans. */
uint32_t sc__comm_nodes(const sc__comm_model *m, uint32_t ranks);

/* nccl-tests' bus bandwidth factor: busbw = algbw x factor (all-reduce
 * 2(n-1)/n; all-gather, reduce-scatter, all-to-all, gather, scatter
 * (n-1)/n; broadcast, reduce, send/recv 1); 0 for what is not modelled. */
double sc__comm_bus_factor(uint8_t coll_type, uint32_t ranks);

const char *sc__comm_algo_name(uint8_t algo);
const char *sc__comm_proto_name(uint8_t proto);
/* "nvlink", "net" or "nvlink+net" for a choice's links. */
const char *sc__comm_links_name(uint8_t links);

/* A measured collective: its type, nccl-tests size, group size and
 * transfer time. */
typedef struct sc__comm_sample {
    uint8_t type;
    int64_t bytes;
    uint32_t ranks;
    int64_t ns;
} sc__comm_sample;

/* Fits m's parameters to samples (those with a known type and size, two
 * ranks or more, and a positive time): the parameters the samples depend
 * on move to minimise the squared log error, the others keep the
 * profile's values (no inter-node sample says nothing of the network).
 * Sets m->fitted to the samples used. False on out-of-memory (m is then
 * unchanged). */
bool sc__comm_model_fit(sc__comm_model *m, const sc__comm_sample *s, size_t n);

#endif /* SC_COMM_H */
