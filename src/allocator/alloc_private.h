/*
 * The allocator's internal structures, shared by the files of src/allocator
 * (alloc.c: the API and the cycle; sorter.c: the role tree and the DRF
 * orderings; filters.c: offer filters; quantities.c: interned scalar names and
 * quantity vectors). Nothing outside src/allocator and its tests includes it.
 *
 * Vocabulary:
 *  - a *client* is one (framework, role) pair: it has its own share, its own
 *    place in its role's order, its own filters, and a small integer id that
 *    indexes per-agent bitmaps;
 *  - an agent's *available* resources are its total minus everything
 *    offered or allocated on it (*held* by clients);
 *  - *eligible* clients may receive offers now: framework active, client not
 *    suppressed, role still one of the framework's roles.
 */
#ifndef OFFERD_ALLOCATOR_ALLOC_PRIVATE_H
#define OFFERD_ALLOCATOR_ALLOC_PRIVATE_H

#include <regex.h>
#include <stdbool.h>
#include <stdint.h>

#include "allocator/alloc.h"
#include "common/resources.h"
#include "common/siphash.h"

/* ---- Interned scalar names and quantity vectors (quantities.c) ------- */

/* Slots of the name table: a power of two, twice ALLOC_MAX_NAMES, so that
 * it is never more than half full. */
#define ALLOC_NAME_SLOTS (2 * ALLOC_MAX_NAMES)
_Static_assert((ALLOC_NAME_SLOTS & (ALLOC_NAME_SLOTS - 1)) == 0,
               "ALLOC_NAME_SLOTS is a power of two");
_Static_assert(ALLOC_MAX_NAMES < 256, "a slot holds id + 1 in a byte");

/* Scalar resource names interned to small integers, so that quantities are
 * dense arrays indexed by name id. At most ALLOC_MAX_NAMES, never
 * forgotten. */
struct alloc_names {
    char *v[ALLOC_MAX_NAMES];        /* id -> name */
    uint32_t n;                      /* ids in use */
    uint8_t slots[ALLOC_NAME_SLOTS]; /* open addressing: id + 1, 0: empty */
    /* The process's SipHash key (names come from agents and operators);
     * the role table (alloc.rtab) is hashed with it too. */
    struct siphash_key key;
};

/* The table hash of a name or role path under key. */
uint32_t alloc_str_hash(const struct siphash_key *key, const char *s);

/* One limit: at most milli of name id. */
struct qpair {
    uint32_t id;
    int64_t milli;
};

/* Quantities indexed by name id; ids >= n read as 0. */
struct qvec {
    int64_t *v; /* milli-units */
    uint32_t n;
};

void alloc_names_init(struct alloc_names *t);
void alloc_names_free(struct alloc_names *t);
/* The id of name, interning it if new; -1 when it is new and the table
 * holds ALLOC_MAX_NAMES names already. */
int32_t alloc_name_intern(struct alloc_names *t, const char *name);
/* The id of name, or -1 if it was never interned. */
int32_t alloc_name_find(const struct alloc_names *t, const char *name);
/* Intern every scalar name of l, or none: returns 0, or -1 (the table as it
 * was) when the new names would not all fit. The API entry points that take
 * resources or quantities admit their names first, so that everything
 * below them finds every name it meets: the internal code looks names up
 * with alloc_name_find and leaves out a name it does not find, which only a
 * bug can bring. */
int alloc_names_admit(struct alloc_names *t, const res_list *l);
/* The same for the names of nq lists of quantities. */
int alloc_names_admit_quantities(struct alloc_names *t,
                                 const struct alloc_quantities *q, uint32_t nq);

void qvec_free(struct qvec *q);
static inline int64_t qvec_get(const struct qvec *q, uint32_t id)
{
    return id < q->n ? q->v[id] : 0;
}
/* q[id] += delta, saturating at 0 from below (which only a bug reaches)
 * and at INT64_MAX from above: every agent may hold up to
 * RES_SCALAR_MAX_UNITS of a resource, and 9,224 such agents already pass
 * what an int64 of milli-units holds. A saturated total makes shares
 * smaller than they are, never undefined. */
void qvec_add_slow(struct qvec *q, uint32_t id, int64_t delta);
static inline int64_t qvec_sat_add(int64_t a, int64_t b)
{
    int64_t v;
    if (__builtin_add_overflow(a, b, &v))
        return b > 0 ? INT64_MAX : 0;
    return v < 0 ? 0 : v;
}
static inline void qvec_add(struct qvec *q, uint32_t id, int64_t delta)
{
    if (id < q->n) {
        q->v[id] = qvec_sat_add(q->v[id], delta);
        return;
    }
    qvec_add_slow(q, id, delta);
}
/* True when every entry is 0. */
bool qvec_is_zero(const struct qvec *q);
/* dst = src (dst's storage reused). */
void qvec_copy(struct qvec *dst, const struct qvec *src);
/* Add sign * (scalar quantities of l) to q (names admitted). Only entries
 * for which pred (may be NULL) holds are counted. */
void qvec_add_res(const struct alloc_names *t, struct qvec *q,
                  const res_list *l, int sign,
                  bool (*pred)(const struct resource *));
/* Fill a query list from q (names borrowed from t; list malloc'd into
 * out->v, caller frees). Zero entries are left out. */
void qvec_to_qlist(const struct alloc_names *t, const struct qvec *q,
                   struct alloc_qlist *out);
/* Set q from a list of quantities (names admitted); q is cleared first. */
void qvec_from_quantities(const struct alloc_names *t, struct qvec *q,
                          const struct alloc_quantities *in);

/* Predicates used with qvec_add_res. */
bool alloc_res_is_unreserved_nonrevocable(const struct resource *r);
bool alloc_res_is_reserved(const struct resource *r);

/* A set of pointers (linear probing, backward-shift deletion). */
/* A deletion of ag from client's agent set, queued (alloc.fdel). */
#define ALLOC_FDEL_LAG 8
struct fdel {
    uint32_t client;
    struct alloc_agent *ag;
};

struct pset {
    void **slots;
    uint32_t cap; /* power of two or 0 */
    uint32_t n;
};

/* Add p (no-op if present). */
void pset_add(struct pset *s, void *p);
/* Remove p (no-op if absent). */
void pset_del(struct pset *s, void *p);
void pset_free(struct pset *s);

/* ---- Role tree and DRF orderings (sorter.c) -------------------------- */

struct role;
struct client;

/* An entry of a sorted order: a child role, or a role's own clients (the
 * "self" leaf) among its children. */
struct sentry {
    double share;     /* weighted dominant share, cached */
    uint64_t count;   /* tie-break 1: allocations made to it, cached */
    const char *name; /* tie-break 2 (Mesos: the path or framework ID);
                         NULL sorts after every name */
    uint64_t seq;     /* tie-break 3: creation order (keys stay unique) */
    uint64_t visit;   /* walk stamp (alloc.c walk_roles): visited by it */
    bool in_order;    /* present in its order (found there by its key) */
    bool is_self; /* self leaf of role `owner` rather than the role itself */
    bool blocked; /* owner->limit_blocked (sorts last) */
    struct role *owner;    /* the role (for client entries: its role) */
    struct client *client; /* client entries only */
};

/* A random walk over an order (sorter.c): the entries with their keys in
 * a max-heap, drawn one at a time. Reused from walk to walk. */
struct rnd_walk {
    struct sentry **v;
    double *key;
    uint32_t n, cap;
};

struct role {
    char *path;           /* "eng/web"; "" for the root */
    char *self_name;      /* "eng/web/.": the self leaf's tie-break name */
    uint64_t nalloc;      /* allocations made in the subtree */
    uint64_t nalloc_self; /* allocations made to own clients */
    struct role *parent;  /* NULL for the root */
    struct role **children;
    uint32_t nchildren, capchildren;

    /* The order of this role's children and self leaf, lowest share first;
     * only entries with an eligible client below them are present. */
    struct sentry **order; /* the live entries, inside order_buf */
    uint32_t norder, caporder;
    struct sentry **order_buf; /* caporder slots, room kept on both sides of
                                  the live entries (sorter.c, struct ord) */
    struct sentry as_child;    /* this role in its parent's order */
    struct sentry self;        /* this role's own clients in its own order */

    /* This role's own clients: all of them, and the eligible ones in share
     * order (clients[] unordered; eligible[] sorted, entries c->e). */
    struct client **clients;
    uint32_t nclients, capclients;
    struct sentry **eligible; /* the live entries, inside eligible_buf */
    uint32_t neligible, capeligible;
    struct sentry **eligible_buf; /* capeligible slots, as order_buf */
    uint32_t eligible_below;      /* eligible clients in the subtree */

    double weight; /* > 0, default 1.0 */
    bool has_weight;
    struct qvec guarantee; /* quota guarantee (zero: none) */
    struct qpair *limits;  /* quota limits; names absent are unlimited */
    uint32_t nlimits;
    bool has_quota; /* a guarantee or a limit is set */
    /* Set when the limits of this role leave too little of some name in
     * every min_allocatable alternative: it can then receive only reserved
     * or revocable resources, so it sorts after its unblocked siblings and
     * agents without such resources stop at it. */
    bool limit_blocked;
    /* This role in alloc.unsatisfied (share = as_child's, pos = index). */
    struct sentry quota_e;
    uint32_t unsat_below; /* roles of the subtree in alloc.unsatisfied */

    struct qvec held_self;  /* offered + used by own clients */
    struct qvec held;       /* offered + used in the subtree */
    struct qvec reserved;   /* reserved to the subtree on all agents */
    struct qvec unres_held; /* unreserved non-revocable held, subtree */

    /* --role_sorter=random: this role's weight relative to the whole tree
     * (set while it has a client, see alloc_rnd_roles_begin). */
    double flat_weight;
    /* The random framework sorter's walk over `eligible` (a role is
     * walked at most once at a time, so one suffices). */
    struct rnd_walk rnd_clients;
};

/* Count one allocation to c (its entry, its role's self leaf and every
 * ancestor), for the DRF tie-break; the keys are refreshed by the
 * alloc_sorter_update that follows. */
void alloc_sorter_allocated(struct alloc *a, struct client *c);

/* Start a random walk over arr (n client entries, all weighing 1): each
 * entry is drawn with equal probability among those not drawn yet (Mesos's
 * weightedShuffle, drawn lazily), blocked entries after all others. */
void alloc_rnd_begin(struct alloc *a, struct rnd_walk *w, struct sentry **arr,
                     uint32_t n);
/* Start the random role sorter's walk for one agent: the self leaves
 * (struct role.self) of every role with eligible clients (stage1: and an
 * unmet guarantee), each drawn with probability proportional to its weight
 * relative to the whole role tree, as Mesos's RandomSorter computes it
 * over its flattened tree; leaves of a role at its limit, or below one,
 * after all others, or not at all with skip_blocked (stage 2 on an agent
 * with nothing but unreserved non-revocable resources, which such roles
 * cannot take). */
void alloc_rnd_roles_begin(struct alloc *a, bool stage1, bool skip_blocked);
/* Whether r or one of its ancestors is at its quota limit. */
bool alloc_role_path_blocked(const struct alloc *a, const struct role *r);
/* The next entry of the walk, or NULL when all were drawn. */
struct sentry *alloc_rnd_next(struct rnd_walk *w);
/* A 64-bit pseudo-random number from the allocator's generator. */
uint64_t alloc_rng_next(struct alloc *a);

/* Find a role by path; NULL when unknown. */
struct role *alloc_role_find(struct alloc *a, const char *path);
/* Find or create a role and its ancestors. */
struct role *alloc_role_get(struct alloc *a, const char *path);
/* Remove role and its empty ancestors if nothing refers to them. */
void alloc_role_try_remove(struct alloc *a, struct role *r);
/* Free r and every role below it, without unlinking r from its parent or
 * the role table (for teardown, or a node already unlinked). */
void alloc_role_tree_free(struct role *r);
/* Quota consumed by r: reserved + unreserved non-revocable held, per name. */
int64_t alloc_role_consumed(const struct role *r, uint32_t id);

/* Recompute every share and re-sort every order (after the cluster total
 * changed). */
void alloc_sorter_rebuild(struct alloc *a);
/* After c's held quantities changed by `delta`-worth (already applied to c
 * and its roles): refresh the shares of c, its role's self leaf and every
 * ancestor, and restore the orders. No-op while a rebuild is pending. */
void alloc_sorter_update(struct alloc *a, struct client *c);
/* Add c to / remove c from its role's eligible order and the entries above
 * it, following c->eligible. */
void alloc_sorter_set_eligible(struct alloc *a, struct client *c,
                               bool eligible);
/* Re-place role r's entries after its weight or r->limit_blocked changed. */
void alloc_sorter_role_changed(struct alloc *a, struct role *r);
/* Add r to / remove r from the list of roles with unmet guarantees. */
void alloc_sorter_set_unsatisfied(struct alloc *a, struct role *r, bool in);
/* The weighted dominant share of quantities q under weight w. */
double alloc_share(const struct alloc *a, const struct qvec *q, double w);

/* ---- Clients, frameworks, agents ---------------------------------------- */

/* One compiled attribute constraint. */
struct cconstraint {
    enum alloc_selector selector;
    char *attribute; /* ALLOC_SEL_ATTRIBUTE only */
    enum alloc_predicate predicate;
    char *value; /* TEXT_EQUALS / TEXT_NOT_EQUALS */
    bool has_re; /* TEXT_MATCHES / TEXT_NOT_MATCHES: re compiled */
    regex_t re;
};

struct cgroup {
    struct cconstraint *v;
    uint32_t n;
};

/* A framework's options for one role (alloc_framework_set_options). */
struct fw_role_opts {
    char *role;
    bool has_min;                 /* min replaces the allocator's */
    struct alloc_quantities *min; /* owned */
    uint32_t nmin;
    struct cgroup *groups; /* offer constraints; 0 groups: none */
    uint32_t ngroups;
};

/* What offer constraints test on an agent (alloc_agent_set_info). */
struct agent_info {
    char *hostname, *region, *zone; /* NULL: absent */
    struct {
        char *name;
        char *text; /* NULL: not a TEXT attribute */
    } * attrs;
    uint32_t nattrs;
};

struct alloc_framework {
    void *udata;
    char *id; /* tie-break name, or NULL */
    uint32_t caps;
    bool active;
    struct fw_role_opts *opts; /* per-role options, owned */
    uint32_t nopts;
    struct client **clients; /* one per role, current and former */
    uint32_t nclients, capclients;
};

struct client {
    uint32_t id; /* index into a->clients and the agents' bitmaps */
    struct alloc_framework *fw;
    struct role *role;
    bool subscribed; /* role is one of fw's current roles */
    bool suppressed;
    bool eligible; /* fw active && subscribed && !suppressed */
    const struct fw_role_opts *opts; /* fw's options for role, or NULL */
    uint64_t nalloc;     /* allocations made to it (DRF tie-break) */
    struct sentry e;     /* place in role->eligible (e.owner = role, unused) */
    struct qvec held;    /* offered + used in this role, all agents */
    uint64_t visit;      /* cycle-agent stamp: visited for that agent */
    struct pset fagents; /* agents this client has offer filters on */
    uint32_t nfilters;   /* offer filters alive */
};

/* What one client holds on one agent. */
struct holding {
    struct client *c;
    res_list res; /* offered + used, without allocation role (c's role) */
};

/* One offer filter, stored in its agent's array sorted by client id. */
struct ofilter {
    uint32_t client; /* client id */
    uint32_t rset;   /* index into the agent's refused sets */
    int64_t expires; /* monotonic ns */
};

/* Refused resources shared by the filters of one agent that refused the
 * same thing (DeclineOffers piles up one filter per framework per agent:
 * sharing keeps that linear and small). */
struct rset {
    res_list res;  /* unallocated */
    uint32_t refs; /* filters using it; 0: free slot */
};

/* Per-framework maintenance state of an agent. */
struct io_state {
    struct alloc_framework *fw;
    bool outstanding; /* inverse offer sent, no answer yet */
    bool answered;    /* status is meaningful */
    enum alloc_io_status status;
    int64_t filter_expires; /* no new inverse offer before this */
};

/* A summary of an agent's available resources, kept in step with them
 * (alloc.c avail_changed) so that the cycle's common path, an agent whose
 * leftover is plain unreserved resources offered whole, never walks the
 * resource entries or their name strings. */
#define ALLOC_SUM_MAX 8

/* Client bitmap words kept inside the agent struct: 16 words cover 1,024
 * clients without a separate allocation (and a separate cache miss). */
#define ALLOC_INLINE_WORDS 16
struct avail_sum {
    bool exact;       /* q lists every scalar entry (else: slow path) */
    bool special;     /* some entry is reserved, revocable or shared */
    bool allocatable; /* the whole leftover passes min_allocatable */
    uint8_t nq;
    struct {
        uint32_t id;    /* interned name */
        bool unres;     /* unreserved and not revocable */
        int64_t milli;  /* amount */
    } q[ALLOC_SUM_MAX]; /* the scalar entries */
};

/* The fields a cycle reads for every agent it visits come first, up to
 * and including bits_inline, so that alloc_run prefetches them as one
 * block (alloc.c PREFETCH_AGENTS); the others (the total, what filter
 * expiry and updates read) come after. */
struct alloc_agent {
    void *udata;
    struct avail_sum sum; /* of `available` */
    uint32_t index;       /* in a->agents */
    uint32_t caps;
    bool active;
    bool has_gpus;
    bool has_shared;
    bool has_unav;           /* unav is set */
    bool cover_valid;        /* see fbits, cbits below */
    struct agent_info *info; /* for offer constraints, or NULL */
    res_list available;

    struct holding *holds;
    uint32_t nholds, capholds;

    /* Offer filters on this agent. */
    struct ofilter *filters; /* sorted by client id */
    uint32_t nfilters, capfilters;
    struct rset *rsets;
    uint32_t nrsets;
    int64_t min_expires; /* earliest filter expiry; INT64_MAX: none (kept
                            in a->wake[index] too) */
    /* Bitmaps over client ids: fbits = has a filter here; cbits = has a
     * filter containing all of cover_snap. While cover_valid, available is
     * contained in cover_snap, so a client with its cbit set is refused
     * anything this agent could offer it, without computing the offer. */
    uint64_t *fbits, *cbits; /* bits_inline until more words are needed */
    uint32_t nwords;
    uint64_t bits_inline[2 * ALLOC_INLINE_WORDS];
    /* Not read by a cycle's common path from here on. */
    res_list total;
    res_list cover_snap;
    res_list shared_offered; /* shared resources offered this cycle */
    uint64_t shared_cycle;   /* cycle shared_offered belongs to */

    struct tindex *tix; /* index over total (totals.c), or NULL */
    struct alloc_unavailability unav;
    struct io_state *io;
    uint32_t nio, capio;
};

struct alloc {
    struct alloc_options opt;
    struct alloc_quantities *min_alloc; /* owned copy */
    uint32_t n_min_alloc;
    struct qvec *min_alloc_q; /* the same, as vectors */

    struct alloc_names names;
    struct qvec total; /* cluster total of every scalar */
    /* The revocable part of total (alloc_total_scalar: the snapshot's
     * regular and revocable totals without visiting agents). */
    struct qvec total_revocable;

    struct role *root;
    struct role **roles; /* every node but the root, for queries */
    uint32_t nroles, caproles;
    struct role **rtab;          /* roles by path (open addressing, hashed
                                    with names.key) */
    uint32_t nrtab;              /* power of two, > 2 * nroles */
    struct sentry **unsatisfied; /* roles with unmet guarantees and own
                                    eligible clients (quota_e), by share */
    uint32_t nunsatisfied, capunsatisfied;
    struct sentry **unsatisfied_buf; /* capunsatisfied slots, as order_buf */
    uint32_t n_quota_roles;
    bool shares_dirty; /* totals changed: rebuild before use */
    uint64_t seq;      /* tie-break counter */

    struct client **clients; /* by id; NULL: free id */
    uint32_t nclient_ids, capclient_ids;
    uint32_t *free_ids;
    uint32_t nfree_ids, capfree_ids;
    uint64_t *eligible_bits; /* by client id */
    uint32_t eligible_words;
    uint32_t n_eligible;
    uint32_t nframeworks;

    struct alloc_agent **agents;
    uint32_t nagents, capagents;
    /* Agent structs come from slabs so that the cycle's random walk over
     * agents stays within few pages (see agent_new in alloc.c). */
    void **slabs;
    uint32_t nslabs;
    uint32_t slab_used;              /* structs handed out of the last slab */
    struct alloc_agent *free_agents; /* released structs, linked by udata */
    /* Dense per-agent state by agent index, so that a cycle can pass over
     * agents without touching their memory: */
    uint8_t *candidate;  /* visit in the next event-driven cycle */
    uint32_t *quiet;     /* == elig_epoch: nothing to offer until touched */
    uint32_t elig_epoch; /* bumped whenever any client's eligibility
                            changes (never 0) */
    uint32_t n_unav;     /* agents with an unavailability */
    struct alloc_agent **cands; /* scratch: this cycle's agents */
    uint32_t capcands;
    bool all_candidates;
    uint32_t ncandidates; /* agents flagged candidate */

    /* By agent index, like candidate and quiet: the agent's earliest
     * filter expiry (INT64_MAX: no filter). A cycle finds the due agents
     * by scanning this array and expires their filters when its walk
     * reaches them, while their structs are in cache (filters.c). */
    int64_t *wake;
    uint32_t filters_alive; /* filters not yet collected */
    /* Deletions from clients' agent sets queued by expiry (a ring, the
     * oldest done as a new one comes); empty outside a cycle. */
    struct fdel fdel[ALLOC_FDEL_LAG];
    uint32_t nfdel; /* queued since the last flush */

    uint64_t rng;
    uint64_t visit_stamp;
    uint64_t cycle;
    uint64_t stat_offers, stat_inverse_offers;

    /* Shallow views into agents' resources (entries share the agent's
     * strings and arrays, scalars possibly cut down): the cycle builds
     * offers in them and hands them to the offer callback, so making an
     * offer allocates nothing but what a cut scalar needs in the holding
     * (make_offer in alloc.c). Never res_list_clear'ed: only n is reset. */
    res_list scratch_view;   /* what a client may be offered */
    res_list scratch_view2;  /* stage 1: the part that goes to guarantees */
    res_list scratch_view3;  /* stage 1: the offer */
    res_list scratch_view4;  /* stage 1: the part beyond guarantees */
    res_list scratch_unrole; /* a caller's list without allocation roles */
    /* Storage of a cycle's headroom vectors (struct cycle in alloc.c),
     * kept between cycles so that a cycle allocates nothing. */
    struct qvec head_req, head_avail;

    /* --role_sorter=random (sorter.c): every role with a client, with its
     * weight relative to the whole tree (Mesos's SortInfo), rebuilt when
     * a client, a role or a weight changes; and the walk drawn from it
     * for each agent. */
    struct flat_leaf {
        struct role *role;
        double rel_weight;
    } * flat;
    uint32_t nflat, capflat;
    bool flat_dirty;
    struct rnd_walk flat_walk;
};

/* Note that something about ag changed that may let it be offered again
 * (resources came back, a filter went away): it becomes a candidate of the
 * next cycle and is no longer quiet. */
void alloc_agent_touch(struct alloc *a, struct alloc_agent *ag);

/* Agent bitmap helpers. */
static inline bool alloc_bit_get(const uint64_t *bits, uint32_t nwords,
                                 uint32_t id)
{
    return id / 64 < nwords && (bits[id / 64] >> (id % 64)) & 1;
}

/* ---- Agents' totals (totals.c) ---------------------------------------- */

/* ag->total -= r / += r, as res_list_sub / res_list_add, found through
 * ag's index when the list is long (built on first use). */
void alloc_total_sub(struct alloc *a, struct alloc_agent *ag,
                     const struct resource *r);
void alloc_total_add(struct alloc *a, struct alloc_agent *ag,
                     const struct resource *r);
/* Forget ag's index: call after changing ag->total any other way. */
void alloc_total_index_drop(struct alloc_agent *ag);

/* ---- Offer filters (filters.c) ---------------------------------------- */

/* Install a filter refusing `refused` (unallocated) for client c on ag
 * until `expires`. */
void alloc_filter_add(struct alloc *a, struct alloc_agent *ag, struct client *c,
                      const res_list *refused, int64_t expires);
/* Remove every filter of client c (on all agents). */
void alloc_filter_remove_client(struct alloc *a, struct client *c);
/* Remove every filter on agent ag. */
void alloc_filter_remove_agent(struct alloc *a, struct alloc_agent *ag);
/* Remove ag's filters that expired at or before now (the cycle calls it
 * for each agent whose a->wake entry is due, when it visits the agent).
 * Does not make ag a candidate: the caller is visiting it. */
void alloc_filter_expire_agent(struct alloc *a, struct alloc_agent *ag,
                               int64_t now);
/* Do the deletions alloc_filter_expire_agent queued: call before the
 * cycle returns. */
void alloc_filter_expire_flush(struct alloc *a);
/* True when ag has a filter due at now. */
static inline bool alloc_filter_due(const struct alloc_agent *ag, int64_t now)
{
    return ag->min_expires <= now;
}
/* Make ag's covered bitmap match its current available resources. */
void alloc_filter_refresh_cover(struct alloc *a, struct alloc_agent *ag);
/* True when some filter of client c on ag contains `offer` (unallocated). */
bool alloc_filter_blocks(const struct alloc_agent *ag, const struct client *c,
                         const res_list *offer);
/* Call after resources came back to ag's available set: the covered bits
 * stay valid only while available is within the snapshot they were
 * computed for. */
void alloc_filter_available_grew(struct alloc_agent *ag);

#endif
