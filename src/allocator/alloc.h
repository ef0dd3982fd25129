/*
 * The hierarchical DRF allocator: decides which framework is offered which
 * agent's resources, with the semantics of Mesos's hierarchical allocator
 * (src/master/allocator/mesos/hierarchical.cpp in apache/mesos):
 *
 *  - Roles form a tree by '/'. Sibling roles are ordered by weighted dominant
 *    share, frameworks inside a role by dominant share; a role that has both
 *    frameworks and child roles competes for its own frameworks as a virtual
 *    leaf among its children (Mesos's "." node). A framework may hold several
 *    roles; each (framework, role) pair is a *client* with its own share.
 *  - Shares count offered and allocated resources alike, against the cluster
 *    total of each scalar resource name.
 *  - Quota: guarantees are satisfied first (stage 1), and unreserved
 *    resources needed to satisfy outstanding guarantees are held back from
 *    everyone else (headroom); limits are never exceeded, counting a role's
 *    whole subtree. Consumed quota = reservations + unreserved non-revocable
 *    allocations of the subtree.
 *  - Reserved resources go only to their role and its descendants; revocable
 *    resources only to REVOCABLE_RESOURCES clients; an agent with GPUs only to
 *    GPU_RESOURCES frameworks; shared resources only to SHARED_RESOURCES ones
 *    and to one client per cycle; refined reservations only to
 *    RESERVATION_REFINEMENT ones.
 *  - Filters from declines, suppression and revival, min_allocatable.
 *  - Maintenance: offers of an agent with an unavailability carry it, and
 *    every active framework holding resources there gets one inverse offer
 *    until it answers; answers are recorded with their own filters.
 *
 * The allocator is a pure library: no I/O, no clock, no randomness of its own.
 * The caller passes `now` (monotonic nanoseconds) and a seed, and receives
 * decisions through callbacks made synchronously inside alloc_run(). (Its
 * tables of names and roles hash under the process's SipHash key, from
 * common/siphash.h, since agents and frameworks choose those strings; no
 * decision depends on the key.) All
 * calls must come from one thread. Agents and frameworks are identified by
 * handles the allocator returns and by the caller's `udata`, which the
 * callbacks pass back.
 *
 * Ownership: the allocator copies every res_list and string it keeps. The
 * res_list handed to the offer callback is borrowed for the duration of the
 * call only.
 *
 * Memory: agent structs come from 2 MiB slabs (advised for transparent huge
 * pages), so even a small allocator holds one slab.
 */
#ifndef OFFERD_ALLOCATOR_ALLOC_H
#define OFFERD_ALLOCATOR_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/resources.h"

struct alloc;
struct alloc_agent;
struct alloc_framework;

/*
 * The most distinct scalar resource names ("cpus", "mem", "disk", "gpus",
 * custom ones) one allocator knows. Quantities are dense arrays indexed by
 * interned name, so every role and client carries a few arrays that long,
 * and a cycle keeps some on its stack. Agents (and operators, through
 * quota) choose names, so the count is bounded; real clusters use a
 * handful. Names are never forgotten: one seen once keeps its place until
 * alloc_free, so the bound counts every name seen since alloc_new. Calls
 * that would take the allocator past it fail and change nothing.
 */
#define ALLOC_MAX_NAMES 128

/* Framework capabilities the allocator looks at (bit flags). */
enum alloc_fw_cap {
    ALLOC_FW_REVOCABLE = 1u << 0,    /* REVOCABLE_RESOURCES */
    ALLOC_FW_GPU = 1u << 1,          /* GPU_RESOURCES */
    ALLOC_FW_SHARED = 1u << 2,       /* SHARED_RESOURCES */
    ALLOC_FW_MULTI_ROLE = 1u << 3,   /* MULTI_ROLE */
    ALLOC_FW_REFINEMENT = 1u << 4,   /* RESERVATION_REFINEMENT */
    ALLOC_FW_REGION_AWARE = 1u << 5, /* REGION_AWARE */
};

/* Agent capabilities the allocator looks at (bit flags). */
enum alloc_agent_cap {
    ALLOC_AGENT_MULTI_ROLE = 1u << 0,        /* may run MULTI_ROLE tasks */
    ALLOC_AGENT_HIERARCHICAL_ROLE = 1u << 1, /* understands "a/b" roles */
    ALLOC_AGENT_REFINEMENT = 1u << 2,        /* RESERVATION_REFINEMENT */
};

/* All agent capabilities: what offerd's own agent has. */
#define ALLOC_AGENT_ALL_CAPS                                                   \
    (ALLOC_AGENT_MULTI_ROLE | ALLOC_AGENT_HIERARCHICAL_ROLE |                  \
     ALLOC_AGENT_REFINEMENT)

/* A maintenance window: unavailable from start for duration. */
struct alloc_unavailability {
    int64_t start_ns;    /* wall-clock nanoseconds since the epoch */
    int64_t duration_ns; /* < 0: infinite */
};

/* One amount of one scalar resource. */
struct alloc_quantity {
    const char *name;
    int64_t milli; /* milli-units, as struct resource's scalar */
};

/* A set of scalar quantities (a quota, one min_allocatable alternative). */
struct alloc_quantities {
    const struct alloc_quantity *v;
    uint32_t n;
};

/* An inverse offer's answer, numbered as mesos.v1.allocator's
 * InverseOfferStatus.Status. */
enum alloc_io_status {
    ALLOC_IO_UNKNOWN = 1,
    ALLOC_IO_ACCEPT = 2,
    ALLOC_IO_DECLINE = 3,
};

/* Called once per (client, agent) an alloc_run() decides to offer.
 * `resources` are offered to allocation role `role`; they are handed over
 * without their allocation_info (the caller sets it from `role` when it
 * builds the Offer) and are borrowed for the call. `unav` is NULL unless the
 * agent has an unavailability. Give them back with alloc_recover, with the
 * allocation role set. */
typedef void (*alloc_offer_fn)(void *arg, void *framework_udata,
                               void *agent_udata, const char *role,
                               const res_list *resources,
                               const struct alloc_unavailability *unav);

/* Called once per (framework, agent) that gets an inverse offer. */
typedef void (*alloc_inverse_offer_fn)(void *arg, void *framework_udata,
                                       void *agent_udata,
                                       const struct alloc_unavailability *unav);

/* How an order is walked (Mesos's --role_sorter / --framework_sorter). */
enum alloc_sorter_kind {
    ALLOC_SORTER_DRF = 0, /* lowest (weighted) dominant share first */
    ALLOC_SORTER_RANDOM,  /* a weighted random order, drawn anew each walk */
};

struct alloc_options {
    /* Filters never expire sooner than this (Mesos's MESOS-4302 rule). */
    int64_t allocation_interval_ns;
    /* Alternatives of minimum quantities: an agent's leftover is offered
     * only if it holds at least one alternative in full. NULL/0: Mesos's
     * default "cpus:0.01|mem:32". Copied. */
    const struct alloc_quantities *min_allocatable;
    uint32_t n_min_allocatable;
    /* true (Mesos's default): agents with GPUs are offered only to
     * GPU_RESOURCES frameworks. */
    bool filter_gpu_resources;
    /* Seed of the agent shuffle of each cycle (and of random sorters). */
    uint64_t seed;
    /* The master's fault domain region (copied; NULL: none). Agents whose
     * region (alloc_agent_set_info) differs are remote: offered only to
     * REGION_AWARE frameworks, as Mesos's isRemoteSlave. */
    const char *region;
    /* Order of sibling roles (weighted by role weight) and of the
     * frameworks of a role (equal weights). Default: DRF for both. */
    enum alloc_sorter_kind role_sorter;
    enum alloc_sorter_kind framework_sorter;
    alloc_offer_fn on_offer;
    alloc_inverse_offer_fn on_inverse_offer;
    void *cb_arg;
};

/* Fill *o with Mesos's defaults (1 s interval, default min_allocatable,
 * GPU filtering on, seed 1, no callbacks). */
void alloc_options_default(struct alloc_options *o);

/* Create an allocator; options are copied (min_allocatable may name at most
 * ALLOC_MAX_NAMES distinct names, as alloc_parse_min_allocatable ensures).
 * Never fails. */
struct alloc *alloc_new(const struct alloc_options *o);
/* Free the allocator and everything it holds; NULL is ignored. Handles
 * become invalid. */
void alloc_free(struct alloc *a);

/* ---- Frameworks ------------------------------------------------------ */

/*
 * Add a framework subscribed to `roles` (n roles, each copied; validated by
 * the caller) with capabilities `caps` (enum alloc_fw_cap bits). An active
 * framework takes part in the next cycle; an inactive one only keeps its
 * allocations (a framework known from an agent's report before it
 * re-subscribes). Returns the handle.
 */
struct alloc_framework *alloc_framework_add(struct alloc *a, void *udata,
                                            const char *const *roles,
                                            uint32_t n, uint32_t caps,
                                            bool active);
/* Remove a framework: everything offered or allocated to it is freed on
 * every agent, its filters are dropped. The handle becomes invalid. */
void alloc_framework_remove(struct alloc *a, struct alloc_framework *fw);
/* Activate (offers resume) or deactivate (no offers; allocations kept). */
void alloc_framework_set_active(struct alloc *a, struct alloc_framework *fw,
                                bool active);
/* Replace a framework's roles and capabilities. Roles it leaves keep their
 * allocations (tracked until recovered) but get no new offers. */
void alloc_framework_update(struct alloc *a, struct alloc_framework *fw,
                            const char *const *roles, uint32_t n,
                            uint32_t caps);
/* Suppress offers for the given roles of fw (all its roles when n == 0). */
void alloc_framework_suppress(struct alloc *a, struct alloc_framework *fw,
                              const char *const *roles, uint32_t n);
/* Revive: unsuppress the roles (all when n == 0), drop their offer filters
 * and all the framework's inverse offer filters, and schedule a cycle. */
void alloc_framework_revive(struct alloc *a, struct alloc_framework *fw,
                            const char *const *roles, uint32_t n);
/* True when fw is suppressed for role. */
bool alloc_framework_is_suppressed(const struct alloc *a,
                                   const struct alloc_framework *fw,
                                   const char *role);

/*
 * Name fw for the DRF tie-break (Mesos orders frameworks of equal share by
 * how often each was allocated to, then by framework ID): `id` is copied.
 * A framework without one sorts after named ones of equal share and count,
 * in creation order.
 */
void alloc_framework_set_id(struct alloc *a, struct alloc_framework *fw,
                            const char *id);

/* ---- Per-role framework options: offer filters and constraints -------- */

/* Which agent value an attribute constraint tests (numbered as Mesos's
 * AttributeConstraint.Selector; ALLOC_SEL_ATTRIBUTE: a named attribute). */
enum alloc_selector {
    ALLOC_SEL_ATTRIBUTE = 0,
    ALLOC_SEL_HOSTNAME = 1,
    ALLOC_SEL_REGION = 2,
    ALLOC_SEL_ZONE = 3,
};

/* The test (Mesos's AttributeConstraint.Predicate). Text tests are true for
 * an existing attribute that is not TEXT; regexes are POSIX extended
 * regular expressions matched against the whole value. */
enum alloc_predicate {
    ALLOC_PRED_EXISTS = 1,
    ALLOC_PRED_NOT_EXISTS,
    ALLOC_PRED_TEXT_EQUALS,
    ALLOC_PRED_TEXT_NOT_EQUALS,
    ALLOC_PRED_TEXT_MATCHES,
    ALLOC_PRED_TEXT_NOT_MATCHES,
};

struct alloc_constraint {
    enum alloc_selector selector;
    const char *attribute; /* ALLOC_SEL_ATTRIBUTE: the attribute's name */
    enum alloc_predicate predicate;
    const char *value; /* the text or regex of the TEXT_* predicates */
};

/* All of a group's constraints must hold. */
struct alloc_constraint_group {
    const struct alloc_constraint *v;
    uint32_t n; /* > 0 */
};

/* A framework's options for one of its roles. */
struct alloc_role_options {
    const char *role;
    /* FrameworkInfo.offer_filters[role].min_allocatable_resources: when
     * set, replaces the allocator's min_allocatable for this (framework,
     * role); set with no alternatives, any non-empty offer passes. */
    bool has_min_allocatable;
    const struct alloc_quantities *min_allocatable;
    uint32_t n_min_allocatable;
    /* Offer constraints: the role is offered an agent only if one group
     * holds for it. 0 groups: no constraints. */
    const struct alloc_constraint_group *groups;
    uint32_t ngroups;
};

/*
 * Check n role options without applying them: every group non-empty,
 * every predicate known, every regex compiles, every quantity name fits
 * (alloc_admit_quantity_names: names admitted stay known). Returns 0, or -1
 * with a one-line reason in err.
 */
int alloc_role_options_check(struct alloc *a,
                             const struct alloc_role_options *o, uint32_t n,
                             char *err, size_t errlen);

/*
 * Replace all of fw's per-role options with o (n entries, copied; roles
 * not listed have none). Returns 0, or -1 with a reason (what
 * alloc_role_options_check refuses): nothing changed. Agents excluded
 * before may be offered in the next cycle.
 */
int alloc_framework_set_options(struct alloc *a, struct alloc_framework *fw,
                                const struct alloc_role_options *o, uint32_t n,
                                char *err, size_t errlen);

/* One agent attribute as constraints see it: `text` is the value of a TEXT
 * attribute, NULL for other types (scalar, ranges, set). */
struct alloc_attribute {
    const char *name;
    const char *text;
};

/* ---- Agents ---------------------------------------------------------- */

/*
 * Make the allocator know the scalar names of l, all of them or none.
 * Returns 0, or -1 when the names it does not know yet would take it past
 * ALLOC_MAX_NAMES (nothing changed). The calls below that take resources
 * check this themselves; a caller that must refuse a request before
 * committing to it (an agent's registration, before the registry write)
 * checks first with this. A name admitted stays known even if the request
 * fails later.
 */
int alloc_admit_names(struct alloc *a, const res_list *l);
/* The same for the names of n lists of quantities (a quota's guarantees
 * and limits, before alloc_role_set_quota). */
int alloc_admit_quantity_names(struct alloc *a,
                               const struct alloc_quantities *q, uint32_t n);

/* A framework's resources already in use on an agent when it is added. */
struct alloc_used {
    struct alloc_framework *fw;
    const res_list *resources; /* each with its allocation role set */
};

/*
 * Add an agent with `total` resources (copied), capabilities `caps` (enum
 * alloc_agent_cap bits), an optional unavailability, and resources already
 * in use by frameworks (a re-registering agent's tasks). Used resources
 * must be contained in total and carry allocation roles; entries that are
 * not are ignored with the return value -1 (the agent is still added).
 * The agent becomes a candidate of the next cycle. *out gets the handle.
 * Returns -2, adding nothing and leaving *out alone, when total's scalar
 * names do not fit (ALLOC_MAX_NAMES; see alloc_admit_names).
 */
int alloc_agent_add(struct alloc *a, void *udata, const res_list *total,
                    uint32_t caps, const struct alloc_unavailability *unav,
                    const struct alloc_used *used, uint32_t nused,
                    struct alloc_agent **out);
/* Set what offer constraints test on ag: its hostname, fault domain
 * (region, zone: NULL when it has none) and attributes (n, in the agent's
 * order: the first of a name counts). Everything is copied; the agent is
 * a candidate of the next cycle. An agent never given these has no
 * hostname, domain or attributes. */
void alloc_agent_set_info(struct alloc *a, struct alloc_agent *ag,
                          const char *hostname, const char *region,
                          const char *zone, const struct alloc_attribute *attrs,
                          uint32_t n);
/* Remove an agent and everything allocated on it. */
void alloc_agent_remove(struct alloc *a, struct alloc_agent *ag);
/* Activate or deactivate an agent (a deactivated agent is not offered). */
void alloc_agent_set_active(struct alloc *a, struct alloc_agent *ag,
                            bool active);
/* Set (unav non-NULL) or clear an agent's unavailability. Outstanding
 * inverse offers and recorded answers of the agent are forgotten. */
void alloc_agent_set_unavailability(struct alloc *a, struct alloc_agent *ag,
                                    const struct alloc_unavailability *unav);
/*
 * Replace the revocable part of the agent's total with `revocable` (an
 * oversubscription estimate; every entry must be revocable). Revocable
 * resources already allocated stay allocated even if the new estimate is
 * smaller. Returns 0, or -1 if an entry is not revocable or its names do
 * not fit (ALLOC_MAX_NAMES): nothing changed.
 */
int alloc_agent_update_oversubscribed(struct alloc *a, struct alloc_agent *ag,
                                      const res_list *revocable);
/*
 * Apply a conversion to the agent's unallocated resources (an operator's
 * RESERVE/UNRESERVE/CREATE/DESTROY): `from` must be contained in the
 * agent's available resources; it is replaced by `to` in both the total and
 * the available resources. Returns 0, or -1 when `from` is not available
 * (nothing changed: the caller rescinds offers and retries) or `to` brings
 * names that do not fit (ALLOC_MAX_NAMES; a conversion keeps its names).
 */
int alloc_agent_update_available(struct alloc *a, struct alloc_agent *ag,
                                 const res_list *from, const res_list *to);
/*
 * Apply a conversion to resources offered or allocated to fw on ag (a
 * framework's RESERVE/CREATE/... inside ACCEPT): `from` (with allocation
 * roles) must be contained in fw's allocation there; it is replaced by `to`
 * in both the allocation and the agent total. Returns 0 or -1 (unchanged;
 * also when `to` brings names that do not fit).
 */
int alloc_agent_update_allocation(struct alloc *a, struct alloc_agent *ag,
                                  struct alloc_framework *fw,
                                  const res_list *from, const res_list *to);

/* ---- Offers and recovery --------------------------------------------- */

/*
 * Give back resources offered or allocated to fw on ag (declined,
 * rescinded, expired offer; finished task). The allocator does not tell
 * offered from used resources: both count in shares and quota alike; the
 * caller, which holds the offers, reports the split. `resources` carry their
 * allocation role (one role per call). When refuse_ns >= 0 a filter is
 * installed: fw is not offered, for that role, any subset of these
 * resources on ag for max(refuse_ns, allocation_interval) from now
 * (refuse_ns is clamped to 365 days; callers map Mesos's negative or
 * missing refuse_seconds to the 5 s default themselves; 0 installs none).
 * Returns 0, or -1 if fw does not hold them there (nothing changed).
 */
int alloc_recover(struct alloc *a, struct alloc_agent *ag,
                  struct alloc_framework *fw, const res_list *resources,
                  int64_t refuse_ns, int64_t now);

/* Record a framework's answer to its inverse offer for ag, and when
 * refuse_ns > 0 do not send it another for that agent until it expires. */
void alloc_inverse_offer_respond(struct alloc *a, struct alloc_agent *ag,
                                 struct alloc_framework *fw,
                                 enum alloc_io_status status, int64_t refuse_ns,
                                 int64_t now);

/* ---- Roles ------------------------------------------------------------- */

/* Set a role's weight (> 0; default 1.0). Returns -1 for a bad weight. */
int alloc_role_set_weight(struct alloc *a, const char *role, double weight);
/* Set a role's quota: guarantee and limit quantities (copied; either may
 * be empty; a limit below the guarantee is the caller's error to reject).
 * An empty guarantee and limit remove the quota. Returns 0, or -1 when
 * their names do not fit (ALLOC_MAX_NAMES): nothing changed. */
int alloc_role_set_quota(struct alloc *a, const char *role,
                         const struct alloc_quantities *guarantee,
                         const struct alloc_quantities *limit);

/* ---- Running ------------------------------------------------------------ */

/* Make every active agent a candidate of the next cycle (the periodic
 * batch, every --allocation_interval). */
void alloc_candidates_all(struct alloc *a);
/* True when events (a new agent, a revive, an added framework...) have made
 * candidates: the caller should run a cycle soon. */
bool alloc_has_candidates(const struct alloc *a);
/*
 * Run one allocation cycle over the candidates at time `now`: expire
 * filters, allocate (stage 1 quota guarantees, stage 2 fair share), make
 * inverse offers, calling the callbacks synchronously. Returns the number
 * of offers made. Callbacks must not call back into the allocator.
 */
uint32_t alloc_run(struct alloc *a, int64_t now);

/* ---- Queries ------------------------------------------------------------ */

/* Scalar quantities by name, for the query side. */
struct alloc_qlist {
    struct alloc_quantity *v; /* names borrowed from the allocator */
    uint32_t n;
};

struct alloc_role_info {
    const char *role;
    double weight;
    uint32_t n_frameworks;        /* clients subscribed to this role */
    struct alloc_qlist allocated; /* offered + used, subtree */
    struct alloc_qlist reserved;  /* reserved to the subtree on agents */
    struct alloc_qlist consumed;  /* quota consumption */
    struct alloc_qlist guarantee;
    struct alloc_qlist limit;
};

/* Call fn for every role the allocator knows (roles with frameworks,
 * reservations, weights or quota, and their ancestors), parents first.
 * The info and its lists are valid during the call only. */
void alloc_foreach_role(const struct alloc *a,
                        void (*fn)(void *arg, const struct alloc_role_info *),
                        void *arg);

/* Counters for /metrics/snapshot. */
struct alloc_stats {
    uint64_t cycles;         /* alloc_run calls */
    uint64_t offers;         /* offers made in total */
    uint64_t inverse_offers; /* inverse offers made in total */
    uint32_t agents;         /* agents known */
    uint32_t frameworks;     /* frameworks known */
    uint32_t filters_active; /* offer filters not yet collected (a cycle
                                collects the expired ones) */
    uint32_t roles;          /* role tree nodes */
};
/* Fill out: O(1), every field is kept current. */
void alloc_get_stats(const struct alloc *a, struct alloc_stats *out);

/* Bytes the allocator holds (approximate). Visits every agent, client and
 * role: for tests and benchmarks, not for a metrics read. */
size_t alloc_memory_bytes(const struct alloc *a);

/* The sum over every agent's total (alloc_agent_total) of the scalar
 * resources named name, in milli-units: the regular ones in *regular, the
 * revocable ones in *revocable (both 0 for a name never seen). O(1): kept
 * as agents come and go and their totals change. */
void alloc_total_scalar(const struct alloc *a, const char *name,
                        int64_t *regular, int64_t *revocable);

/* The answer fw last gave to ag's inverse offer: true and *status set
 * (ALLOC_IO_UNKNOWN while one is outstanding and unanswered), or false when
 * fw never had an inverse offer for ag since its unavailability was set.
 * The caller keeps the times of answers if it reports them. */
bool alloc_inverse_offer_status(const struct alloc_agent *ag,
                                const struct alloc_framework *fw,
                                enum alloc_io_status *status);

/* Scalar quantities fw holds (offered + used) across all agents and roles. */
void alloc_framework_allocated(
    const struct alloc *a, const struct alloc_framework *fw,
    void (*fn)(void *arg, const char *name, int64_t milli), void *arg);

/* The agent's resources not offered or allocated (borrowed view). */
const res_list *alloc_agent_available(const struct alloc_agent *ag);
/* The agent's total resources (borrowed view). */
const res_list *alloc_agent_total(const struct alloc_agent *ag);

/* Parse Mesos's --min_allocatable_resources text ("cpus:0.01|mem:32",
 * alternatives separated by '|', each a ';'-list of scalars, at most
 * ALLOC_MAX_NAMES distinct names in all). On success returns a new array
 * (*out, *n; free with alloc_quantities_free). */
int alloc_parse_min_allocatable(const char *text, struct alloc_quantities **out,
                                uint32_t *n, char *err, size_t errlen);
void alloc_quantities_free(struct alloc_quantities *v, uint32_t n);

#endif
