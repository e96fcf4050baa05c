/*
 * comm.c - the communication model: the time of a collective from its
 * type, size and group, as NCCL would run it, and the fit of the model's
 * few parameters to measured collectives.
 *
 * The shape is NCCL's own tuning model (src/graph/tuning.cc): every
 * algorithm and protocol costs a latency plus bytes over a bandwidth, and
 * the tuner takes the fastest. Here:
 *
 *   latency = base + steps over the intra-node link x its per-step latency
 *                  + steps over the network x the network's per-step latency
 *   time    = latency + bytes x bus factor / bus bandwidth
 *
 * per protocol: the low-latency one (NCCL's LL and LL128) with short steps
 * and ll_frac of the bandwidth, and Simple with the full bandwidth and
 * longer steps. Algorithms, for a group of n ranks on M nodes of G GPUs:
 *
 *   ring       every collective but all-to-all; 2(n-1) steps for
 *              all-reduce and n-1 for the others, of which the node
 *              crossings (2M for all-reduce, M-1 otherwise) go over the
 *              network; bandwidth the intra-node link's, or over nodes
 *              the lesser of it and the node's NICs (the rings of the
 *              channels leave each node through different NICs, so they
 *              add up: G times the share of one GPU).
 *   tree       all-reduce over nodes: a chain in each node, a binary tree
 *              across them (2((G-1) intra + log2 M network) steps), moving
 *              twice the buffer (NCCL's ratio of 1/2). This is the
 *              hierarchical algorithm: intra-node, then inter-node.
 *   nvls       all-reduce in one node with NVLink SHARP: the switch
 *              reduces, so the time is a fixed cost plus the buffer over
 *              the NVLS algorithm bandwidth, whatever n. Simple only.
 *   nvls_tree  all-reduce over nodes: NVLS in each node, a tree across
 *              them at half the node's NIC bandwidth.
 *   p2p        send/recv over the link between the pair; all-to-all (and
 *              gather, scatter) as every pair at once: the share of the
 *              bytes for the node's other GPUs over the intra-node link
 *              plus the share for other nodes over the GPU's NIC share.
 *              Both are added (they do not overlap perfectly), which also
 *              keeps the time growing with n.
 *
 * The per-step latencies of the low-latency protocols and of the network
 * are NCCL's (tuning.cc hwLat, ring: NVLink LL 0.6 us, network LL 2.7 and
 * Simple 14 us). The rest - the fixed cost, Simple's step over NVLink, the
 * LL bandwidth share, the efficiencies of the links and NVLS - comes from
 * the hardware profile, whose values were fitted to nccl-tests tables with
 * sc__comm_model_fit below (hardware.c says which).
 *
 * The fit minimises the squared log error of the modelled times over the
 * samples (aggregated to one median per type, size and group), in log
 * space of the parameters: a Nelder-Mead simplex first (it crosses the
 * kinks where the choice of algorithm changes), then Levenberg-Marquardt
 * to finish (it walks the long valleys of a latency traded against a
 * bandwidth). Only the parameters some sample's time depends on move, and
 * a very weak pull toward the starting values settles the directions the
 * samples cannot tell apart (the fixed cost against the per-step latency
 * when every sample has the same group size).
 */
#include "comm.h"

#include <math.h>
#include <stdlib.h>

/* NCCL tuning.cc hwLat, ring, us per step (see the file comment). */
#define NCCL_NVLINK_LL_US 0.6
#define NCCL_NET_LL_US 2.7
#define NCCL_NET_SIMPLE_US 14.0

sc_status sc__comm_model_from_profile(const sc__hw_profile *p, uint32_t gpus_per_node, double net_gbps_override,
                                      double nvlink_gbps_override, sc__comm_model *out, sc_error *err) {
    memset(out, 0, sizeof *out);
    if (!(net_gbps_override >= 0 && net_gbps_override < 1e9) || !(nvlink_gbps_override >= 0 && nvlink_gbps_override < 1e9))
        return sc__fail(err, SC_E_USAGE, NULL, SC_NO_OFFSET, "a link bandwidth must be a number >= 0 (0: the profile's)");
    sc_status st = sc__hw_check(p, p->name, err);
    if (st != SC_OK) return st;
    double nvlink = nvlink_gbps_override > 0 ? nvlink_gbps_override : p->nvlink_GBps;
    /* The network per GPU: the node's NICs shared by its GPUs, in GB/s. */
    double net = net_gbps_override > 0 ? net_gbps_override / 8
                                       : p->nics_per_node * p->nic_Gbps / 8 / p->gpus_per_node;
    snprintf(out->gpu, sizeof out->gpu, "%s", p->name);
    out->gpus_per_node = gpus_per_node ? gpus_per_node : p->gpus_per_node;
    out->base_ns = p->comm_base_us * 1e3;
    out->ll_frac = p->comm_ll_frac;
    out->link[SC__LINK_INTRA] = (sc__comm_link_params){
        .lat_ns = {NCCL_NVLINK_LL_US * 1e3, p->nvlink_simple_us * 1e3}, .bw_gbps = nvlink * p->nvlink_eff};
    out->link[SC__LINK_NET] = (sc__comm_link_params){
        .lat_ns = {NCCL_NET_LL_US * 1e3, NCCL_NET_SIMPLE_US * 1e3}, .bw_gbps = net * p->net_eff};
    out->nvls = p->nvls && p->nvls_eff > 0;
    out->nvls_ns = p->nvls_us * 1e3;
    out->nvls_gbps = nvlink * p->nvls_eff;
    return SC_OK;
}

/* ---------------------------------------------------------------- timing */

double sc__comm_bus_factor(uint8_t type, uint32_t n) {
    if (n < 1) return 0;
    switch (type) {
    case SC_C_ALL_REDUCE:
    case SC_C_BARRIER: return 2.0 * (n - 1) / n;
    case SC_C_ALL_GATHER:
    case SC_C_REDUCE_SCATTER:
    case SC_C_ALL_TO_ALL:
    case SC_C_GATHER:
    case SC_C_SCATTER: return (double)(n - 1) / n;
    case SC_C_BROADCAST:
    case SC_C_REDUCE:
    case SC_C_SEND_RECV: return 1;
    default: return 0;
    }
}

const char *sc__comm_algo_name(uint8_t algo) {
    static const char *names[SC__ALGO_COUNT] = {"ring", "tree", "nvls", "nvls_tree", "p2p"};
    return algo < SC__ALGO_COUNT ? names[algo] : "none";
}

const char *sc__comm_proto_name(uint8_t proto) { return proto == SC__PROTO_LL ? "LL" : "Simple"; }

const char *sc__comm_links_name(uint8_t links) {
    static const char *names[4] = {"none", "nvlink", "net", "nvlink+net"};
    return names[links & 3];
}

/* A group's shape: n ranks, G of them per node, on M nodes. */
typedef struct shape {
    uint32_t n, g, m;
    double intra, net_node, net_gpu; /* GB/s: the link, the node's NICs, one GPU's share */
} shape;

static shape shape_of(const sc__comm_model *m, uint32_t n) {
    uint32_t per = m->gpus_per_node ? m->gpus_per_node : 1;
    shape s = {.n = n, .g = n < per ? n : per, .m = (uint32_t)(((uint64_t)n + per - 1) / per)};
    s.intra = m->link[SC__LINK_INTRA].bw_gbps;
    /* A GPU cannot feed the network faster than its own link. */
    s.net_gpu = m->link[SC__LINK_NET].bw_gbps < s.intra ? m->link[SC__LINK_NET].bw_gbps : s.intra;
    s.net_node = s.net_gpu * s.g;
    return s;
}

static uint32_t ceil_log2(uint32_t x) {
    uint32_t k = 0;
    while ((1ull << k) < x) k++;
    return k;
}

/* Keeps the candidate (algo, proto) when it beats *best (ties keep the
 * earlier: the order of evaluation is the order of preference). */
static void consider(sc__comm_choice *best, double *best_ns, uint8_t algo, uint8_t proto, uint8_t links,
                     double latency, double transfer) {
    double t = latency + transfer;
    if (t < *best_ns) {
        *best_ns = t;
        best->algo = algo;
        best->proto = proto;
        best->links = links;
        best->latency_ns = latency;
        best->transfer_ns = transfer;
    }
}

/* Bandwidth of protocol p on a link class's bandwidth bw. */
static double proto_bw(const sc__comm_model *m, uint8_t p, double bw) {
    return p == SC__PROTO_LL ? bw * m->ll_frac : bw;
}

static double lat(const sc__comm_model *m, sc__comm_link l, uint8_t p) { return m->link[l].lat_ns[p]; }

static void ring(const sc__comm_model *m, const shape *s, uint8_t type, double bytes, sc__comm_choice *best,
                 double *best_ns) {
    bool ar = type == SC_C_ALL_REDUCE || type == SC_C_BARRIER;
    double steps = ar ? 2.0 * (s->n - 1) : s->n - 1;
    double inter = s->m > 1 ? (ar ? 2.0 * s->m : s->m - 1.0) : 0;
    if (inter > steps) inter = steps;
    double bw = s->m > 1 && s->net_node < s->intra ? s->net_node : s->intra;
    uint8_t links = (uint8_t)(1u << SC__LINK_INTRA | (s->m > 1 ? 1u << SC__LINK_NET : 0));
    if (s->g < 2) links &= (uint8_t)~(1u << SC__LINK_INTRA); /* one GPU per node: the network only */
    for (uint8_t p = 0; p < SC__PROTO_COUNT; p++) {
        double latency = m->base_ns + (steps - inter) * lat(m, SC__LINK_INTRA, p) + inter * lat(m, SC__LINK_NET, p);
        consider(best, best_ns, SC__ALGO_RING, p, links, latency,
                 bytes * sc__comm_bus_factor(type, s->n) / proto_bw(m, p, bw));
    }
}

/* All-reduce over nodes: the tree, and with NVLS the NVLS tree. */
static void trees(const sc__comm_model *m, const shape *s, double bytes, sc__comm_choice *best, double *best_ns) {
    double bw = s->net_node < s->intra ? s->net_node : s->intra;
    uint8_t both = (uint8_t)(1u << SC__LINK_INTRA | 1u << SC__LINK_NET);
    for (uint8_t p = 0; p < SC__PROTO_COUNT; p++) {
        double latency = m->base_ns + 2.0 * ((s->g - 1.0) * lat(m, SC__LINK_INTRA, p) +
                                             ceil_log2(s->m) * lat(m, SC__LINK_NET, p));
        consider(best, best_ns, SC__ALGO_TREE, p, s->g > 1 ? both : (uint8_t)(1u << SC__LINK_NET), latency,
                 2.0 * bytes / proto_bw(m, p, bw));
    }
    if (m->nvls && s->g > 1) {
        double nbw = s->net_node / 2 < m->nvls_gbps ? s->net_node / 2 : m->nvls_gbps;
        double latency = m->base_ns + m->nvls_ns + 2.0 * ceil_log2(s->m) * lat(m, SC__LINK_NET, SC__PROTO_SIMPLE);
        consider(best, best_ns, SC__ALGO_NVLS_TREE, SC__PROTO_SIMPLE, both, latency, bytes / nbw);
    }
}

/* Point to point: a pair, or every pair at once (all-to-all, gather,
 * scatter). */
static void p2p(const sc__comm_model *m, const shape *s, uint8_t type, double bytes, sc__comm_choice *best,
                double *best_ns) {
    double near, far; /* bytes over the intra-node link, over the network */
    if (type == SC_C_SEND_RECV) {
        near = s->m > 1 ? 0 : bytes;
        far = s->m > 1 ? bytes : 0;
    } else {
        near = bytes * (s->g - 1.0) / s->n;
        far = bytes * (double)(s->n - s->g) / s->n;
    }
    uint8_t links = (uint8_t)((near > 0 || s->m == 1 ? 1u << SC__LINK_INTRA : 0) | (s->m > 1 ? 1u << SC__LINK_NET : 0));
    sc__comm_link slow = s->m > 1 ? SC__LINK_NET : SC__LINK_INTRA;
    for (uint8_t p = 0; p < SC__PROTO_COUNT; p++)
        consider(best, best_ns, SC__ALGO_P2P, p, links, m->base_ns + lat(m, slow, p),
                 near / proto_bw(m, p, s->intra) + far / proto_bw(m, p, s->net_gpu));
}

/* The time in ns (not rounded), and the choice. */
static double comm_time(const sc__comm_model *m, uint8_t type, double bytes, uint32_t n, sc__comm_choice *c) {
    double best_ns = INFINITY;
    shape s = shape_of(m, n);
    memset(c, 0, sizeof *c);
    c->nodes = s.m;
    switch (type) {
    case SC_C_ALL_REDUCE:
    case SC_C_BARRIER:
        ring(m, &s, type, bytes, c, &best_ns);
        if (s.m > 1) trees(m, &s, bytes, c, &best_ns);
        else if (m->nvls && n > 1)
            consider(c, &best_ns, SC__ALGO_NVLS, SC__PROTO_SIMPLE, 1u << SC__LINK_INTRA, m->base_ns + m->nvls_ns,
                     bytes / m->nvls_gbps);
        break;
    case SC_C_ALL_GATHER:
    case SC_C_REDUCE_SCATTER:
    case SC_C_BROADCAST:
    case SC_C_REDUCE: ring(m, &s, type, bytes, c, &best_ns); break;
    case SC_C_ALL_TO_ALL:
    case SC_C_GATHER:
    case SC_C_SCATTER:
    case SC_C_SEND_RECV: p2p(m, &s, type, bytes, c, &best_ns); break;
    default: return -1;
    }
    return best_ns;
}

int64_t sc__comm_explain(const sc__comm_model *m, uint8_t type, int64_t bytes, uint32_t ranks, sc__comm_choice *out) {
    sc__comm_choice c;
    memset(&c, 0, sizeof c);
    c.nodes = 1;
    int64_t ns = -1;
    if (bytes < 0 || type >= SC_C_UNKNOWN) ns = -1; /* not modelled */
    else if (ranks <= 1) ns = 0;                   /* one rank: nothing moves */
    else {
        double t = comm_time(m, type, (double)bytes, ranks, &c);
        ns = t >= 0 && t < 9.2e18 ? (int64_t)llround(t) : -1;
    }
    if (out) *out = c;
    return ns;
}

int64_t sc__comm_two_level_ns(const sc__comm_model *m, double near, double far, uint32_t ranks) {
    if (ranks <= 1) return 0;
    shape s = shape_of(m, ranks);
    bool net = s.m > 1;
    double t_near = near / s.intra, t_far = net ? far / s.net_gpu : 0;
    double t = m->base_ns + lat(m, net ? SC__LINK_NET : SC__LINK_INTRA, SC__PROTO_SIMPLE) + (t_near > t_far ? t_near : t_far);
    return t >= 0 && t < 9.2e18 ? (int64_t)llround(t) : -1;
}

uint32_t sc__comm_nodes(const sc__comm_model *m, uint32_t ranks) { return shape_of(m, ranks).m; }

int64_t sc__comm_time_ns(const sc__comm_model *m, uint8_t type, int64_t bytes, uint32_t ranks) {
    return sc__comm_explain(m, type, bytes, ranks, NULL);
}

/* ------------------------------------------------------------------- fit */

/* How hard the fit holds a parameter to its starting value: a parameter
 * moved by a factor of 4 costs what one sample 5% off costs. A handful of
 * samples then cannot throw the parameters far from the profile's, and
 * many decide alone. */
#define PRIOR ((0.05 / 1.3862943611198906) * (0.05 / 1.3862943611198906))

/* The parameters the fit may move, in log space. */
enum {
    P_BASE, P_LL_FRAC, P_INTRA_LL, P_INTRA_SIMPLE, P_INTRA_BW, P_NVLS_NS, P_NVLS_BW,
    P_NET_LL, P_NET_SIMPLE, P_NET_BW, P_COUNT
};

static double *param(sc__comm_model *m, int i) {
    switch (i) {
    case P_BASE: return &m->base_ns;
    case P_LL_FRAC: return &m->ll_frac;
    case P_INTRA_LL: return &m->link[SC__LINK_INTRA].lat_ns[SC__PROTO_LL];
    case P_INTRA_SIMPLE: return &m->link[SC__LINK_INTRA].lat_ns[SC__PROTO_SIMPLE];
    case P_INTRA_BW: return &m->link[SC__LINK_INTRA].bw_gbps;
    case P_NVLS_NS: return &m->nvls_ns;
    case P_NVLS_BW: return &m->nvls_gbps;
    case P_NET_LL: return &m->link[SC__LINK_NET].lat_ns[SC__PROTO_LL];
    case P_NET_SIMPLE: return &m->link[SC__LINK_NET].lat_ns[SC__PROTO_SIMPLE];
    default: return &m->link[SC__LINK_NET].bw_gbps;
    }
}

/* One aggregated sample: a type, size and group, its median time, and how
 * many samples it stands for. */
typedef struct point {
    uint8_t type;
    uint32_t ranks;
    int64_t bytes;
    double log_ns, weight;
} point;

typedef struct problem {
    sc__comm_model m;      /* the model being fitted (the active parameters set from x) */
    const point *pts;
    size_t npts;
    int active[P_COUNT];   /* indices of the parameters that move */
    int nactive;
    double x0[P_COUNT];    /* their starting values, log space */
    double prior;          /* weight of the pull toward x0 (PRIOR) */
} problem;

/* Puts x (log space, one per active parameter) into the problem's model. */
static void apply(problem *pb, const double *x) {
    for (int k = 0; k < pb->nactive; k++) {
        double v = exp(x[k]);
        if (pb->active[k] == P_LL_FRAC && v > 1) v = 1;
        *param(&pb->m, pb->active[k]) = v;
    }
}

static double model_log_ns(const sc__comm_model *m, const point *p) {
    sc__comm_choice c;
    double t = comm_time(m, p->type, (double)p->bytes, p->ranks, &c);
    return log(t > 1 ? t : 1);
}

static double objective(problem *pb, const double *x) {
    apply(pb, x);
    double sum = 0;
    for (size_t i = 0; i < pb->npts; i++) {
        double e = model_log_ns(&pb->m, &pb->pts[i]) - pb->pts[i].log_ns;
        sum += pb->pts[i].weight * e * e;
    }
    for (int k = 0; k < pb->nactive; k++) sum += pb->prior * (x[k] - pb->x0[k]) * (x[k] - pb->x0[k]);
    return sum;
}

/* Does any point's time depend on parameter i (at the model's values)? */
static bool depends_on(const sc__comm_model *m, int i, const point *pts, size_t n) {
    sc__comm_model up = *m, down = *m;
    double v = *param(&up, i);
    if (!(v > 0)) v = 1e-3;
    *param(&up, i) = v * 1.05;
    *param(&down, i) = v / 1.05;
    for (size_t k = 0; k < n; k++) {
        double a = model_log_ns(m, &pts[k]);
        if (fabs(model_log_ns(&up, &pts[k]) - a) > 1e-9 || fabs(model_log_ns(&down, &pts[k]) - a) > 1e-9)
            return true;
    }
    return false;
}

/* Nelder-Mead from x (nactive values), initial steps `step`; x gets the
 * best vertex. Fixed iteration count: the same inputs, the same result. */
static double nelder_mead(problem *pb, double *x, double step, int iters) {
    int d = pb->nactive;
    double v[P_COUNT + 1][P_COUNT], f[P_COUNT + 1], c[P_COUNT], r[P_COUNT], e[P_COUNT];
    for (int i = 0; i <= d; i++) {
        memcpy(v[i], x, (size_t)d * sizeof *x);
        if (i) v[i][i - 1] += step;
        f[i] = objective(pb, v[i]);
    }
    for (int it = 0; it < iters; it++) {
        for (int i = 1; i <= d; i++) /* sort vertices by value (insertion: d is small) */
            for (int j = i; j > 0 && f[j] < f[j - 1]; j--) {
                double t = f[j];
                f[j] = f[j - 1];
                f[j - 1] = t;
                for (int k = 0; k < d; k++) {
                    t = v[j][k];
                    v[j][k] = v[j - 1][k];
                    v[j - 1][k] = t;
                }
            }
        for (int k = 0; k < d; k++) {
            c[k] = 0;
            for (int i = 0; i < d; i++) c[k] += v[i][k] / d;
        }
        for (int k = 0; k < d; k++) r[k] = c[k] + (c[k] - v[d][k]);
        double fr = objective(pb, r);
        if (fr < f[0]) {
            for (int k = 0; k < d; k++) e[k] = c[k] + 2 * (c[k] - v[d][k]);
            double fe = objective(pb, e);
            memcpy(v[d], fe < fr ? e : r, (size_t)d * sizeof *e);
            f[d] = fe < fr ? fe : fr;
        } else if (fr < f[d - 1]) {
            memcpy(v[d], r, (size_t)d * sizeof *r);
            f[d] = fr;
        } else {
            for (int k = 0; k < d; k++) e[k] = c[k] + 0.5 * (v[d][k] - c[k]);
            double fc = objective(pb, e);
            if (fc < f[d]) {
                memcpy(v[d], e, (size_t)d * sizeof *e);
                f[d] = fc;
            } else { /* shrink toward the best */
                for (int i = 1; i <= d; i++) {
                    for (int k = 0; k < d; k++) v[i][k] = v[0][k] + 0.5 * (v[i][k] - v[0][k]);
                    f[i] = objective(pb, v[i]);
                }
            }
        }
    }
    int best = 0;
    for (int i = 1; i <= d; i++)
        if (f[i] < f[best]) best = i;
    memcpy(x, v[best], (size_t)d * sizeof *x);
    return f[best];
}

/* The residuals of x: one per point (weighted log error), then one per
 * active parameter (the pull toward its start); r has npts + nactive
 * entries. Returns the objective, their sum of squares. */
static double residuals(problem *pb, const double *x, double *r) {
    apply(pb, x);
    double sum = 0;
    for (size_t i = 0; i < pb->npts; i++)
        r[i] = sqrt(pb->pts[i].weight) * (model_log_ns(&pb->m, &pb->pts[i]) - pb->pts[i].log_ns);
    for (int k = 0; k < pb->nactive; k++) r[pb->npts + (size_t)k] = sqrt(pb->prior) * (x[k] - pb->x0[k]);
    for (size_t i = 0; i < pb->npts + (size_t)pb->nactive; i++) sum += r[i] * r[i];
    return sum;
}

/* Solves a x = b for d unknowns (a is d x d, row-major, destroyed) by
 * Gaussian elimination with partial pivoting; false when singular. */
static bool solve(double *a, double *b, int d) {
    for (int c = 0; c < d; c++) {
        int p = c;
        for (int i = c + 1; i < d; i++)
            if (fabs(a[i * d + c]) > fabs(a[p * d + c])) p = i;
        if (!(fabs(a[p * d + c]) > 1e-300)) return false;
        for (int k = 0; k < d; k++) {
            double t = a[c * d + k];
            a[c * d + k] = a[p * d + k];
            a[p * d + k] = t;
        }
        double t = b[c];
        b[c] = b[p];
        b[p] = t;
        for (int i = c + 1; i < d; i++) {
            double f = a[i * d + c] / a[c * d + c];
            for (int k = c; k < d; k++) a[i * d + k] -= f * a[c * d + k];
            b[i] -= f * b[c];
        }
    }
    for (int c = d - 1; c >= 0; c--) {
        for (int k = c + 1; k < d; k++) b[c] -= a[c * d + k] * b[k];
        b[c] /= a[c * d + c];
    }
    return true;
}

/* Levenberg-Marquardt from x: where the choice of algorithm holds still,
 * the log times are smooth in the parameters, and it walks the long
 * valleys (a latency against a bandwidth) that stall a simplex. Forward
 * differences for the Jacobian. False on out-of-memory (x unchanged). */
static bool levenberg_marquardt(problem *pb, double *x, int iters) {
    int d = pb->nactive;
    size_t nr = pb->npts + (size_t)d;
    double *r = sc__alloc_array(nr * (size_t)(d + 2), sizeof *r);
    if (!r) return false;
    double *rt = r + nr, *jac = rt + nr; /* jac: d columns of nr */
    double a[P_COUNT * P_COUNT], g[P_COUNT], xt[P_COUNT], lambda = 1e-3;
    double f = residuals(pb, x, r);
    for (int it = 0; it < iters && f > 0; it++) {
        for (int k = 0; k < d; k++) {
            memcpy(xt, x, (size_t)d * sizeof *x);
            xt[k] += 1e-6;
            residuals(pb, xt, rt);
            for (size_t i = 0; i < nr; i++) jac[(size_t)k * nr + i] = (rt[i] - r[i]) / 1e-6;
        }
        bool stepped = false;
        while (!stepped && lambda < 1e12) {
            for (int j = 0; j < d; j++) {
                g[j] = 0;
                for (size_t i = 0; i < nr; i++) g[j] -= jac[(size_t)j * nr + i] * r[i];
                for (int k = 0; k < d; k++) {
                    double s = 0;
                    for (size_t i = 0; i < nr; i++) s += jac[(size_t)j * nr + i] * jac[(size_t)k * nr + i];
                    a[j * d + k] = s;
                }
                a[j * d + j] *= 1 + lambda;
            }
            if (solve(a, g, d)) {
                for (int k = 0; k < d; k++) xt[k] = x[k] + g[k];
                double ft = residuals(pb, xt, rt);
                if (ft < f) {
                    memcpy(x, xt, (size_t)d * sizeof *x);
                    memcpy(r, rt, nr * sizeof *r);
                    stepped = f - ft > 1e-15 * f;
                    f = ft;
                    lambda /= 3;
                    if (!stepped) lambda = 1e12; /* no progress left */
                    break;
                }
            }
            lambda *= 4;
        }
        if (!stepped) break;
    }
    free(r);
    return true;
}

static int cmp_sample(const void *a, const void *b) {
    const sc__comm_sample *x = a, *y = b;
    if (x->type != y->type) return x->type < y->type ? -1 : 1;
    if (x->ranks != y->ranks) return x->ranks < y->ranks ? -1 : 1;
    if (x->bytes != y->bytes) return x->bytes < y->bytes ? -1 : 1;
    return x->ns < y->ns ? -1 : x->ns > y->ns;
}

/* The usable samples, sorted, one point per (type, ranks, bytes) with the
 * median time; *npts points in a malloc'ed array, *used samples behind
 * them. NULL on out-of-memory (or when none is usable: *npts 0). */
static point *aggregate(const sc__comm_sample *s, size_t n, size_t *npts, size_t *used) {
    *npts = *used = 0;
    sc__comm_sample *v = sc__alloc_array(n ? n : 1, sizeof *v);
    point *pts = sc__alloc_array(n ? n : 1, sizeof *pts);
    if (!v || !pts) {
        free(v);
        free(pts);
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i].bytes >= 0 && s[i].ranks >= 2 && s[i].ns > 0 && sc__comm_bus_factor(s[i].type, s[i].ranks) > 0)
            v[k++] = s[i];
    qsort(v, k, sizeof *v, cmp_sample);
    for (size_t i = 0; i < k;) {
        size_t j = i;
        while (j < k && v[j].type == v[i].type && v[j].ranks == v[i].ranks && v[j].bytes == v[i].bytes) j++;
        size_t c = j - i;
        double med = c % 2 ? (double)v[i + c / 2].ns : ((double)v[i + c / 2 - 1].ns + (double)v[i + c / 2].ns) / 2;
        pts[(*npts)++] = (point){.type = v[i].type, .ranks = v[i].ranks, .bytes = v[i].bytes,
                                 .log_ns = log(med), .weight = (double)c};
        i = j;
    }
    *used = k;
    free(v);
    return pts;
}

bool sc__comm_model_fit(sc__comm_model *m, const sc__comm_sample *s, size_t n) {
    size_t npts, used;
    point *pts = aggregate(s, n, &npts, &used);
    if (!pts) return false;
    problem pb = {.m = *m, .pts = pts, .npts = npts, .prior = PRIOR};
    double x[P_COUNT];
    for (int i = 0; i < P_COUNT && npts; i++) {
        if (!depends_on(m, i, pts, npts)) continue;
        double v = *param(m, i);
        pb.x0[pb.nactive] = x[pb.nactive] = log(v > 1e-3 ? v : 1e-3);
        pb.active[pb.nactive++] = i;
    }
    if (pb.nactive) {
        /* Restarts with smaller steps: a simplex that collapsed early in a
         * narrow valley gets a fresh one around its best point. */
        static const double steps[] = {0.7, 0.2};
        for (size_t r = 0; r < sizeof steps / sizeof *steps; r++) nelder_mead(&pb, x, steps[r], 150 * pb.nactive);
        if (!levenberg_marquardt(&pb, x, 200)) {
            free(pts);
            return false;
        }
        apply(&pb, x);
        *m = pb.m;
    }
    m->fitted = npts ? used : 0;
    free(pts);
    return true;
}
