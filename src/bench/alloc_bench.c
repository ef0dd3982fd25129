/*
 * offerd-alloc-bench: times the allocator on the shapes of Mesos's own
 * allocator benchmarks (src/tests/hierarchical_allocator_tests.cpp and
 * hierarchical_allocator_benchmarks.cpp in apache/mesos), measured the way
 * Mesos measures them, so the figures compare with the ones Mesos published.
 *
 * What is inside the stopwatch: Mesos's stopwatch runs around
 * `Clock::advance(allocation_interval); Clock::settle()`, which covers the
 * whole allocation cycle *and* its offer callback, which copies every offer
 * (`offers.push_back(OfferedResources{frameworkId, slaveId, resources})`).
 * Here the callback does what the master's consumer does with each decision
 * (master/offers.c, offer_new): it copies the resources with their
 * allocation role set, into one block (res_list_copy_packed), and records
 * framework and agent. Every figure includes that callback; nothing is
 * subtracted. Declining (alloc_recover) happens outside the stopwatch, as in
 * Mesos.
 *
 * Benchmarks (JSON keys; sources in docs/performance.md):
 *  decline_offers            DeclineOffers, 10,000 agents x 1,000 frameworks
 *  decline_offers_100k       the same with 100,000 agents, fewer rounds
 *  resource_labels           ResourceLabels (DeclineOffers with labelled
 *                            reservations)
 *  suppress_offers           SuppressOffers
 *  extreme_suppress_offers   ExtremeSuppressOffers (99% suppressed)
 *  add_and_update_agent      AddAndUpdateSlave
 *  persistent_volumes        PersistentVolumes (regular, shared, mixed)
 *  allocator_backlog         AllocatorBacklog (one revive per framework)
 *  large_small_quota         LargeAndSmallQuota (2,500 + 500 roles)
 *  non_quota_vs_quota        NonQuotaVsQuota (1,000 roles, with and without)
 *  large_small_quota_random, non_quota_vs_quota_random
 *                            the same two with random role and framework
 *                            sorters (Mesos's "random" parameter)
 *  multi_framework           MultiFrameworkAllocations (80 agents; Marathon,
 *                            Jenkins and Spark-like framework profiles;
 *                            rounds until every task is launched)
 *  reservation_updates_mesos UpdateAllocation in the shape of Mesos's
 *                            MESOS-10015 figures (1,600 roles)
 *  reservation_updates       offerd's older one-role variant
 *  churn                     10,000 agents, 1,000 frameworks, 100 agents
 *                            leaving and 100 joining per cycle, 5 s filters
 *  scaling                   one full cycle and the heap at 1k..100k agents
 *
 * Usage: offerd-alloc-bench [--quick] [--json] [--runs=N] [--only=NAME]
 *                           [--clock=wall|cpu]
 */
#include <malloc.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "allocator/alloc.h"
#include "common/mem.h"
#include "common/resources.h"

#define SEC 1000000000LL

/* CLOCK_MONOTONIC (wall, as Mesos's Stopwatch) or the thread's CPU time
 * (--clock=cpu: steadier on a shared machine, blind to waiting). */
static clockid_t g_clock = CLOCK_MONOTONIC;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(g_clock, &ts);
    return (int64_t)ts.tv_sec * SEC + ts.tv_nsec;
}

static double ms(int64_t ns)
{
    return (double)ns / 1e6;
}

static res_list parse(const char *text)
{
    res_list l = RES_LIST_INIT;
    char err[256];
    if (res_parse_text(text, NULL, &l, err, sizeof(err)) != 0) {
        fprintf(stderr, "bench: bad resources %s: %s\n", text, err);
        exit(2);
    }
    return l;
}

static uint64_t g_rng = 0x2545f4914f6cdd1dULL;

static uint32_t rnd(void)
{
    g_rng ^= g_rng >> 12;
    g_rng ^= g_rng << 25;
    g_rng ^= g_rng >> 27;
    return (uint32_t)((g_rng * 0x2545f4914f6cdd1dULL) >> 32);
}

/* n random lowercase letters (Mesos's randString) into buf[n + 1]. */
static void rand_string(char *buf, size_t n)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = (char)('a' + rnd() % 26);
    buf[n] = '\0';
}

/* ---- The world: frameworks, agents and the offers they were made ------- */

struct offer {
    uint32_t fw;  /* index into world.fws */
    uint32_t ag;  /* index into world.ags */
    res_list res; /* packed (res_list_copy_packed) */
};

struct world {
    struct alloc *a;
    struct alloc_framework **fws;
    uint32_t nfws;
    struct alloc_agent **ags; /* by slot; NULL: free slot */
    uint32_t nags;
    struct offer *offers; /* made since the last decline_all */
    uint32_t noffers, capoffers;
    int64_t clock; /* the allocator's notion of now */
};

/* Role and framework sorters of the worlds made next (Mesos's benchmarks
 * take one "sorter" parameter for both). */
static enum alloc_sorter_kind g_sorter = ALLOC_SORTER_DRF;

/* The offer callback: what the master does with a decision (offer_new in
 * master/offers.c), minus the id, timer and maps. Timed with the cycle. */
static void on_offer(void *arg, void *fw, void *ag, const char *role,
                     const res_list *res,
                     const struct alloc_unavailability *unav)
{
    (void)unav;
    struct world *w = arg;
    if (w->noffers == w->capoffers) {
        w->capoffers = w->capoffers ? 2 * w->capoffers : 1024;
        w->offers = xreallocarray(w->offers, w->capoffers, sizeof(*w->offers));
    }
    struct offer *o = &w->offers[w->noffers++];
    o->fw = (uint32_t)(uintptr_t)fw;
    o->ag = (uint32_t)(uintptr_t)ag;
    res_list_copy_packed(&o->res, res, role);
}

static void world_init(struct world *w, uint32_t nfws, uint32_t nags)
{
    memset(w, 0, sizeof(*w));
    struct alloc_options o;
    alloc_options_default(&o);
    o.on_offer = on_offer;
    o.cb_arg = w;
    o.allocation_interval_ns = SEC;
    o.role_sorter = g_sorter;
    o.framework_sorter = g_sorter;
    w->a = alloc_new(&o);
    w->fws = xcalloc(nfws ? nfws : 1, sizeof(*w->fws));
    w->nfws = nfws;
    w->ags = xcalloc(nags ? nags : 1, sizeof(*w->ags));
    w->nags = nags;
    w->clock = SEC;
}

static void forget_offers(struct world *w)
{
    for (uint32_t i = 0; i < w->noffers; i++)
        res_list_free_packed(&w->offers[i].res);
    w->noffers = 0;
}

/* Give back every offer made since the last call; refuse_ns < 0: no
 * filter. Not timed (Mesos declines before starting its stopwatch). */
static void decline_all(struct world *w, int64_t refuse_ns)
{
    for (uint32_t i = 0; i < w->noffers; i++) {
        struct offer *o = &w->offers[i];
        if (alloc_recover(w->a, w->ags[o->ag], w->fws[o->fw], &o->res,
                          refuse_ns < 0 ? 0 : refuse_ns, w->clock) != 0) {
            fprintf(stderr, "bench: recover refused\n");
            exit(3);
        }
    }
    forget_offers(w);
}

static void world_free(struct world *w)
{
    forget_offers(w);
    free(w->offers);
    alloc_free(w->a);
    free(w->fws);
    free(w->ags);
}

static void add_frameworks(struct world *w, const char *role, uint32_t caps)
{
    for (uint32_t i = 0; i < w->nfws; i++)
        w->fws[i] = alloc_framework_add(w->a, (void *)(uintptr_t)i, &role, 1,
                                        caps, true);
}

/* Add agent `slot` with `total`, `used` (allocation role set; may be NULL)
 * in use by framework fw. */
static void add_agent(struct world *w, uint32_t slot, const res_list *total,
                      const res_list *used, uint32_t fw)
{
    struct alloc_used u = {w->fws[fw], used};
    if (alloc_agent_add(w->a, (void *)(uintptr_t)slot, total,
                        ALLOC_AGENT_ALL_CAPS, NULL, &u, used ? 1 : 0,
                        &w->ags[slot]) != 0) {
        fprintf(stderr, "bench: agent add failed\n");
        exit(3);
    }
}

/* One batch cycle (Mesos: Clock::advance(interval); Clock::settle()),
 * callback included. Returns milliseconds. */
static double timed_cycle(struct world *w)
{
    w->clock += SEC;
    alloc_candidates_all(w->a);
    int64_t t0 = now_ns();
    alloc_run(w->a, w->clock);
    return ms(now_ns() - t0);
}

/* ---- Figures ------------------------------------------------------------ */

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static double median(double *v, uint32_t n)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Rounds of a multi-round benchmark: round 0, the mean of the rounds that
 * made offers (round 0 included), the slowest round. */
struct rounds {
    double round0_ms, busy_mean_ms, slowest_ms;
    double fastest_busy_ms; /* the quickest round that made offers: on a
                               shared machine, the least disturbed one */
    uint32_t offers_round0, busy_rounds, rounds;
    uint64_t offers;
};

static void rounds_add(struct rounds *r, double t, uint32_t offers)
{
    if (r->rounds == 0) {
        r->round0_ms = t;
        r->offers_round0 = offers;
    }
    if (offers > 0) {
        if (r->busy_rounds == 0 || t < r->fastest_busy_ms)
            r->fastest_busy_ms = t;
        r->busy_mean_ms += t; /* a sum until rounds_end */
        r->busy_rounds++;
    }
    if (t > r->slowest_ms)
        r->slowest_ms = t;
    r->offers += offers;
    r->rounds++;
}

static void rounds_end(struct rounds *r)
{
    if (r->busy_rounds > 0)
        r->busy_mean_ms /= r->busy_rounds;
}

/* The median of each field over runs. */
static void rounds_median(struct rounds *v, uint32_t n, struct rounds *out)
{
    double a[n], b[n], c[n], d[n];
    for (uint32_t i = 0; i < n; i++) {
        a[i] = v[i].round0_ms;
        b[i] = v[i].busy_mean_ms;
        c[i] = v[i].slowest_ms;
        d[i] = v[i].fastest_busy_ms;
    }
    *out = v[0];
    out->round0_ms = median(a, n);
    out->busy_mean_ms = median(b, n);
    out->slowest_ms = median(c, n);
    out->fastest_busy_ms = median(d, n);
}

static bool g_verbose;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void say(const char *fmt, ...)
{
    if (!g_verbose)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

/* Mesos's DeclineOffers agent: cpus:24;mem:4096;disk:4096;ports, 16 tasks
 * of 1 cpu and a fragment of the port range in use (`mem` is 2014 in
 * DeclineOffers, 1024 in the suppression benchmarks). */
static res_list used_16_tasks(const char *scalars, const char *reserve_to)
{
    char text[1024];
    int n = snprintf(text, sizeof(text), "%s;ports%s%s%s:[", scalars,
                     reserve_to ? "(" : "", reserve_to ? reserve_to : "",
                     reserve_to ? ")" : "");
    for (int k = 0; k < 16; k++)
        n += snprintf(text + n, sizeof(text) - (size_t)n, "%s%d-%d",
                      k ? "," : "", 31000 + k * 62, 31000 + k * 62 + 1);
    snprintf(text + n, sizeof(text) - (size_t)n, "]");
    return parse(text);
}

/* ---- DeclineOffers -------------------------------------------------------
 * Frameworks in "*"; every round declines every offer with an infinite
 * filter (Mesos: refuse_seconds INT_MAX) and runs one cycle. */

static void decline_offers(uint32_t nagents, uint32_t nfw, uint32_t rounds,
                           struct rounds *out)
{
    struct world w;
    world_init(&w, nfw, nagents);
    add_frameworks(&w, "*", 0);
    res_list total = parse("cpus:24;mem:4096;disk:4096;ports:[31000-32000]");
    res_list used = used_16_tasks("cpus:16;mem:2014;disk:1024", NULL);
    res_list_allocate(&used, "*");
    for (uint32_t i = 0; i < nagents; i++)
        add_agent(&w, i, &total, &used, i % nfw);
    alloc_run(w.a, w.clock); /* the offers made while agents were added */

    memset(out, 0, sizeof(*out));
    for (uint32_t r = 0; r < rounds; r++) {
        decline_all(&w, INT64_MAX);
        double t = timed_cycle(&w);
        rounds_add(out, t, w.noffers);
        if (r < 3 || (rounds >= 10 && r % (rounds / 10) == 0))
            say("  round %u allocate() took %.2f ms to make %u offers\n", r, t,
                w.noffers);
    }
    rounds_end(out);
    res_list_clear(&total);
    res_list_clear(&used);
    world_free(&w);
}

/* ---- ResourceLabels ------------------------------------------------------
 * DeclineOffers with frameworks in "role1" and, in use on every agent, two
 * cpus:8 reservations to role1 with 12 labels each, unique per agent (as
 * Mesos writes it, the first set gets both unique labels). */

static void add_labels(struct res_label *v, uint32_t *n, const char *key,
                       const char *value, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++) {
        v[*n].key = xasprintf("%s%u", key, i);
        v[*n].value = xasprintf("%s%u", value, i);
        (*n)++;
    }
}

static void labelled_cpus(res_list *into, const struct res_label *labels,
                          uint32_t n)
{
    struct resource r;
    res_init_scalar(&r, "cpus", 8000);
    res_push_reservation(&r, RES_RESV_DYNAMIC, "role1", "principal1", labels,
                         n);
    r.alloc_role = xstrdup("role1");
    res_list_add(into, &r);
    res_clear(&r);
}

static void free_labels(struct res_label *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        free(v[i].key);
        free(v[i].value);
    }
}

static void resource_labels(uint32_t nagents, uint32_t nfw, uint32_t rounds,
                            struct rounds *out)
{
    struct world w;
    world_init(&w, nfw, nagents);
    add_frameworks(&w, "role1", 0);
    res_list total = parse("cpus:24;mem:4096;disk:4096;ports:[31000-32000]");
    res_list base = used_16_tasks("mem:2014;disk:1024", NULL);
    res_list_allocate(&base, "role1");
    for (uint32_t i = 0; i < nagents; i++) {
        struct res_label l1[13], l2[12];
        uint32_t n1 = 0, n2 = 0;
        char v[32];
        snprintf(v, sizeof(v), "value_%u", i);
        add_labels(l1, &n1, "key", "value", 11);
        l1[n1].key = xstrdup("unique_key_1");
        l1[n1++].value = xstrdup(v);
        add_labels(l2, &n2, "key", "value", 11);
        l1[n1].key = xstrdup("unique_key_2");
        l1[n1++].value = xstrdup(v);
        res_list used = RES_LIST_INIT, reserved = RES_LIST_INIT;
        labelled_cpus(&reserved, l1, n1);
        labelled_cpus(&reserved, l2, n2);
        res_list_copy(&used, &base);
        res_list_add_all(&used, &reserved);
        /* Mesos leaves the reservations out of the agent's total (its
         * allocator does not check); offerd's allocator wants what is in
         * use inside the total, so 16 of the 24 cpus are the reserved
         * ones. */
        res_list agent = RES_LIST_INIT;
        res_list_copy(&agent, &total);
        res_list_allocate(&reserved, NULL);
        struct resource c16;
        res_init_scalar(&c16, "cpus", 16000);
        res_list_sub(&agent, &c16);
        res_clear(&c16);
        res_list_add_all(&agent, &reserved);
        add_agent(&w, i, &agent, &used, i % nfw);
        res_list_clear(&agent);
        res_list_clear(&reserved);
        res_list_clear(&used);
        free_labels(l1, n1);
        free_labels(l2, n2);
    }
    alloc_run(w.a, w.clock);
    memset(out, 0, sizeof(*out));
    for (uint32_t r = 0; r < rounds; r++) {
        decline_all(&w, INT64_MAX);
        double t = timed_cycle(&w); /* before reading noffers */
        rounds_add(out, t, w.noffers);
    }
    rounds_end(out);
    res_list_clear(&total);
    res_list_clear(&base);
    world_free(&w);
}

/* ---- SuppressOffers and ExtremeSuppressOffers ----------------------------
 * 5 rounds; every round recovers the offers without a filter and runs a
 * cycle. SuppressOffers suppresses another fifth of the frameworks before
 * each round; ExtremeSuppressOffers suppresses 99% of them up front. */

struct suppress_result {
    double round_ms[5];
    uint32_t offers[5];
    double mean_ms;
};

static void suppress_offers(uint32_t nagents, uint32_t nfw, bool extreme,
                            struct suppress_result *out)
{
    struct world w;
    world_init(&w, nfw, nagents);
    add_frameworks(&w, "*", 0);
    res_list total = parse("cpus:24;mem:4096;disk:4096;ports:[31000-32000]");
    res_list used = used_16_tasks("cpus:16;mem:1024;disk:1024", NULL);
    res_list_allocate(&used, "*");
    for (uint32_t i = 0; i < nagents; i++)
        add_agent(&w, i, &total, &used, i % nfw);
    alloc_run(w.a, w.clock);
    uint32_t suppressed = 0;
    if (extreme)
        for (; suppressed < (uint32_t)(nfw * 0.99); suppressed++)
            alloc_framework_suppress(w.a, w.fws[suppressed], NULL, 0);
    memset(out, 0, sizeof(*out));
    for (uint32_t r = 0; r < 5; r++) {
        decline_all(&w, -1);
        if (!extreme)
            for (uint32_t j = 0; j < nfw / 5; j++, suppressed++)
                alloc_framework_suppress(w.a, w.fws[suppressed], NULL, 0);
        out->round_ms[r] = timed_cycle(&w);
        out->offers[r] = w.noffers;
        out->mean_ms += out->round_ms[r] / 5;
    }
    res_list_clear(&total);
    res_list_clear(&used);
    world_free(&w);
}

/* ---- AddAndUpdateSlave ---------------------------------------------------
 * REVOCABLE_RESOURCES frameworks in "*"; agents of
 * cpus:2;mem:1024;disk:4096;ports with cpus:1;mem:128;disk:1024 and some
 * ports in use. Timed: adding every agent and the allocation that follows;
 * then giving each agent cpus:10 revocable and the allocation that
 * follows. */

struct add_update_result {
    double add_ms, update_ms;
    uint32_t add_offers, update_offers;
};

static void add_and_update(uint32_t nagents, uint32_t nfw,
                           struct add_update_result *out)
{
    struct world w;
    world_init(&w, nfw, nagents);
    add_frameworks(&w, "*", ALLOC_FW_REVOCABLE);
    res_list total = parse("cpus:2;mem:1024;disk:4096;ports:[31000-32000]");
    res_list used = parse("cpus:1;mem:128;disk:1024;"
                          "ports:[31126-31510,31512-31623,31810-31852,"
                          "31854-31964]");
    res_list_allocate(&used, "*");
    int64_t t0 = now_ns();
    for (uint32_t i = 0; i < nagents; i++)
        add_agent(&w, i, &total, &used, i % nfw);
    w.clock += SEC;
    alloc_run(w.a, w.clock);
    out->add_ms = ms(now_ns() - t0);
    out->add_offers = w.noffers;
    forget_offers(&w); /* Mesos keeps them outstanding too */

    struct resource r;
    res_init_scalar(&r, "cpus", 10000);
    r.revocable = true;
    res_list over = RES_LIST_INIT;
    res_list_add(&over, &r);
    res_clear(&r);
    t0 = now_ns();
    for (uint32_t i = 0; i < nagents; i++)
        alloc_agent_update_oversubscribed(w.a, w.ags[i], &over);
    w.clock += SEC;
    alloc_run(w.a, w.clock);
    out->update_ms = ms(now_ns() - t0);
    out->update_offers = w.noffers;
    res_list_clear(&over);
    res_list_clear(&total);
    res_list_clear(&used);
    /* The offers were not recovered: world_free frees them as they are. */
    world_free(&w);
}

/* ---- PersistentVolumes ---------------------------------------------------
 * Frameworks in "test" (SHARED_RESOURCES unless regular); agents of
 * cpus(test):24;mem(test):4096;disk(test):3072;ports(test) plus a 1 GiB
 * persistent volume, shared on every agent (shared), every other agent
 * (mixed) or none (regular); part of each in use; 6 rounds recovering
 * without filters. Mesos allocates the part in use to "*"; the replay
 * allocates it to "test", the role the frameworks are in. */

enum sharedness { REGULAR, SHARED, MIXED };

static void persistent_volumes(uint32_t nagents, uint32_t nfw,
                               enum sharedness sh, struct rounds *out)
{
    struct world w;
    world_init(&w, nfw, nagents);
    add_frameworks(&w, "test", sh == REGULAR ? 0 : ALLOC_FW_SHARED);
    res_list base = parse("cpus(test):24;mem(test):4096;disk(test):3072;"
                          "ports(test):[31000-32000]");
    res_list used = used_16_tasks("cpus(test):16;mem(test):1024;"
                                  "disk(test):1024",
                                  "test");
    res_list_allocate(&used, "test");
    for (uint32_t i = 0; i < nagents; i++) {
        struct resource v;
        res_init_scalar(&v, "disk", 1024000);
        res_push_reservation(&v, RES_RESV_STATIC, "test", NULL, NULL, 0);
        v.disk = xcalloc(1, sizeof(*v.disk));
        v.disk->persistence_id = xasprintf("id%u", i);
        v.disk->has_volume = true;
        v.disk->volume_mode = RES_VOLUME_RW;
        v.disk->container_path = xasprintf("path%u", i);
        if (sh == SHARED || (sh == MIXED && i % 2 == 0)) {
            v.shared = true;
            v.shared_count = 1;
        }
        res_list total = RES_LIST_INIT;
        res_list_copy(&total, &base);
        res_list_add(&total, &v);
        res_clear(&v);
        add_agent(&w, i, &total, &used, i % nfw);
        res_list_clear(&total);
    }
    alloc_run(w.a, w.clock);
    memset(out, 0, sizeof(*out));
    for (uint32_t r = 0; r < 6; r++) {
        decline_all(&w, -1);
        double t = timed_cycle(&w); /* before reading noffers */
        rounds_add(out, t, w.noffers);
    }
    rounds_end(out);
    res_list_clear(&base);
    res_list_clear(&used);
    world_free(&w);
}

/* ---- AllocatorBacklog ----------------------------------------------------
 * Frameworks in "*", agents of cpus:24;mem:4096;disk:4096;ports all
 * offered; then one REVIVE per framework. Mesos batches the allocations
 * those trigger (MESOS-6904); the master runs one cycle for all of them
 * (master_allocate_soon). Timed: the revives and that cycle. */

struct backlog_result {
    double ms;
    uint32_t cycles, offers;
};

static void allocator_backlog(uint32_t nagents, uint32_t nfw,
                              struct backlog_result *out)
{
    struct world w;
    world_init(&w, nfw, nagents);
    add_frameworks(&w, "*", 0);
    res_list total = parse("cpus:24;mem:4096;disk:4096;ports:[31000-32000]");
    for (uint32_t i = 0; i < nagents; i++)
        add_agent(&w, i, &total, NULL, 0);
    alloc_run(w.a, w.clock);
    forget_offers(&w); /* outstanding: nothing left to allocate */
    w.clock += SEC;
    int64_t t0 = now_ns();
    for (uint32_t i = 0; i < nfw; i++)
        alloc_framework_revive(w.a, w.fws[i], NULL, 0);
    out->cycles = 0;
    if (alloc_has_candidates(w.a)) {
        alloc_run(w.a, w.clock);
        out->cycles++;
    }
    out->ms = ms(now_ns() - t0);
    out->offers = w.noffers;
    res_list_clear(&total);
    world_free(&w);
}

/* ---- LargeAndSmallQuota and NonQuotaVsQuota ------------------------------
 * One framework per role (Mesos's default frameworksPerRole is 1 here and
 * 2 in NonQuotaVsQuota), agents of cpus:2;mem:2048;disk:2048, quota set as
 * guarantee and limit; one cycle makes every allocation, a second none. */

struct quota_result {
    double ms, second_ms;
    uint32_t allocations;
};

static void quota_roles(uint32_t nroles, uint32_t fw_per_role, uint32_t nagents,
                        const struct alloc_quantities *(*quota)(uint32_t),
                        struct quota_result *out)
{
    struct world w;
    world_init(&w, nroles * fw_per_role, nagents);
    char role[32];
    for (uint32_t i = 0; i < nroles; i++) {
        snprintf(role, sizeof(role), "role%u", i);
        const char *rp = role;
        for (uint32_t k = 0; k < fw_per_role; k++) {
            uint32_t f = i * fw_per_role + k;
            w.fws[f] =
                alloc_framework_add(w.a, (void *)(uintptr_t)f, &rp, 1, 0, true);
        }
    }
    res_list total = parse("cpus:2;mem:2048;disk:2048");
    for (uint32_t i = 0; i < nagents; i++)
        add_agent(&w, i, &total, NULL, 0);
    /* Agents and frameworks are added with the allocator paused in Mesos:
     * nothing is offered before the quota is set. */
    for (uint32_t i = 0; i < nroles; i++) {
        const struct alloc_quantities *q = quota ? quota(i) : NULL;
        if (q == NULL)
            continue;
        snprintf(role, sizeof(role), "role%u", i);
        alloc_role_set_quota(w.a, role, q, q);
    }
    out->ms = timed_cycle(&w);
    out->allocations = w.noffers;
    out->second_ms = timed_cycle(&w);
    res_list_clear(&total);
    world_free(&w);
}

static const struct alloc_quantity quota_small[] = {
    {"cpus", 1000}, {"mem", 1024000}, {"disk", 1024000}};
static const struct alloc_quantity quota_large[] = {
    {"cpus", 4000}, {"mem", 4096000}, {"disk", 4096000}};
static const struct alloc_quantity q_two_agents[] = {
    {"cpus", 4000}, {"mem", 4096000}, {"disk", 4096000}};
static uint32_t g_nsmall;

static const struct alloc_quantities *large_small(uint32_t i)
{
    static const struct alloc_quantities s = {quota_small, 3},
                                         l = {quota_large, 3};
    return i < g_nsmall ? &s : &l;
}

static const struct alloc_quantities *two_agents(uint32_t i)
{
    (void)i;
    static const struct alloc_quantities q = {q_two_agents, 3};
    return &q;
}

/* ---- MultiFrameworkAllocations -------------------------------------------
 * Mesos's BENCHMARK_HierarchicalAllocations.MultiFrameworkAllocations: 80
 * agents of cpus:64;mem:488000; 4 Marathon-like frameworks (one role each,
 * 4,000 tasks of cpus:0.07;mem:400, at most 100 per offer), 500 Jenkins-like
 * ones sharing a role (5 tasks of cpus:0.1;mem:4000 each, one per offer), 50
 * Spark-like ones (a role each, 20 tasks of cpus:1;mem:1000, 5 per offer).
 * Each round: one cycle (timed); then, outside the stopwatch, every offer
 * launches what fits within its framework's caps and the rest goes back
 * without a filter (Mesos's recoverResources with filters None), launched
 * tasks stay allocated. Rounds go on until every task is launched (Mesos
 * also stops after 30 s). */

struct mf_profile {
    const char *name, *role; /* role NULL: "<name>-<i>" per instance */
    uint32_t instances, max_tasks, per_offer;
    const char *task;
};

static const struct mf_profile mf_profiles[] = {
    {"Marathon", NULL, 4, 4000, 100, "cpus:0.07;mem:400"},
    {"Jenkins", "roleB", 500, 5, 1, "cpus:0.1;mem:4000"},
    {"SparkDispatcher", NULL, 50, 20, 5, "cpus:1;mem:1000"},
};

struct mf_result {
    uint32_t rounds, tasks, target, offers;
    double total_ms, mean_ms, slowest_ms, round0_ms;
};

static void multi_framework(uint32_t nagents, uint32_t max_rounds,
                            struct mf_result *out)
{
    uint32_t nfw = 0, np = sizeof(mf_profiles) / sizeof(mf_profiles[0]);
    for (uint32_t p = 0; p < np; p++)
        nfw += mf_profiles[p].instances;
    struct world w;
    world_init(&w, nfw, nagents);
    uint32_t *prof = xcalloc(nfw, sizeof(*prof));
    uint32_t *launched = xcalloc(nfw, sizeof(*launched));
    res_list task[3];
    char **role = xcalloc(nfw, sizeof(*role));
    memset(out, 0, sizeof(*out));
    uint32_t f = 0;
    for (uint32_t p = 0; p < np; p++) {
        const struct mf_profile *pr = &mf_profiles[p];
        task[p] = parse(pr->task);
        for (uint32_t i = 0; i < pr->instances; i++, f++) {
            char buf[64];
            if (pr->role != NULL)
                snprintf(buf, sizeof(buf), "%s", pr->role);
            else
                snprintf(buf, sizeof(buf), "role%c-%u", 'A' + (char)p, i + 1);
            role[f] = xstrdup(buf);
            const char *rp = role[f];
            w.fws[f] =
                alloc_framework_add(w.a, (void *)(uintptr_t)f, &rp, 1, 0, true);
            prof[f] = p;
            out->target += pr->max_tasks;
        }
    }
    res_list total = parse("cpus:64;mem:488000");
    for (uint32_t i = 0; i < nagents; i++)
        add_agent(&w, i, &total, NULL, 0);
    forget_offers(&w); /* nothing is offered before the first round */
    res_list rest = RES_LIST_INIT, one = RES_LIST_INIT;
    while (out->tasks < out->target && out->rounds < max_rounds) {
        double t = timed_cycle(&w);
        if (out->rounds == 0)
            out->round0_ms = t;
        if (t > out->slowest_ms)
            out->slowest_ms = t;
        out->total_ms += t;
        out->rounds++;
        out->offers += w.noffers;
        for (uint32_t k = 0; k < w.noffers; k++) {
            struct offer *o = &w.offers[k];
            const struct mf_profile *pr = &mf_profiles[prof[o->fw]];
            res_list_copy(&rest, &o->res);
            res_list_copy(&one, &task[prof[o->fw]]);
            res_list_allocate(&one, role[o->fw]);
            uint32_t n = 0;
            while (n < pr->per_offer && launched[o->fw] < pr->max_tasks &&
                   res_list_contains(&rest, &one)) {
                res_list_sub_all(&rest, &one);
                launched[o->fw]++;
                out->tasks++;
                n++;
            }
            if (alloc_recover(w.a, w.ags[o->ag], w.fws[o->fw], &rest, 0,
                              w.clock) != 0) {
                fprintf(stderr, "bench: recover refused\n");
                exit(3);
            }
        }
        forget_offers(&w);
    }
    out->mean_ms = out->rounds ? out->total_ms / out->rounds : 0;
    res_list_clear(&rest);
    res_list_clear(&one);
    res_list_clear(&total);
    for (uint32_t p = 0; p < np; p++)
        res_list_clear(&task[p]);
    for (uint32_t i = 0; i < nfw; i++)
        free(role[i]);
    free(role);
    free(prof);
    free(launched);
    world_free(&w);
}

/* ---- Reservation updates, Mesos's shape ----------------------------------
 * MESOS-10015's UpdateAllocation shape: nroles roles "role-<36 letters>",
 * one framework each; for each role cpus:100, mem:100, disk:100 and
 * ports:[2-2], dynamically reserved to it with one label "Label" of 36
 * random letters, all in use by its framework on one agent. Framework 0
 * unreserves its whole allocation and reserves it again, 20 times (40
 * updateAllocation calls). Timed: the 40 calls, plus the next cycle, which
 * pays for the totals they changed. */

struct resv_result {
    double ms, ops_ms;
    uint32_t ops, resources;
};

static void reservation_updates_mesos(uint32_t nroles, uint32_t reps,
                                      struct resv_result *out)
{
    struct world w;
    world_init(&w, nroles, 1);
    res_list total = RES_LIST_INIT;
    res_list *per_fw = xcalloc(nroles, sizeof(*per_fw));
    static const char *const names[] = {"cpus", "mem", "disk", "ports"};
    char role[64], label[40];
    for (uint32_t i = 0; i < nroles; i++) {
        char rs[37];
        rand_string(rs, 36);
        snprintf(role, sizeof(role), "role-%s", rs);
        const char *rp = role;
        w.fws[i] =
            alloc_framework_add(w.a, (void *)(uintptr_t)i, &rp, 1, 0, true);
        for (uint32_t k = 0; k < 4; k++) {
            struct resource r;
            if (k < 3) {
                res_init_scalar(&r, names[k], 100000);
            } else {
                struct res_range pr = {2, 2};
                res_init_ranges(&r, names[k], &pr, 1);
            }
            rand_string(label, 36);
            struct res_label l = {"Label", label};
            res_push_reservation(&r, RES_RESV_DYNAMIC, role, NULL, &l, 1);
            res_list_add(&total, &r);
            r.alloc_role = xstrdup(role);
            res_list_add(&per_fw[i], &r);
            res_clear(&r);
        }
    }
    struct alloc_used *used = xcalloc(nroles, sizeof(*used));
    for (uint32_t i = 0; i < nroles; i++) {
        used[i].fw = w.fws[i];
        used[i].resources = &per_fw[i];
    }
    alloc_agent_add(w.a, (void *)(uintptr_t)0, &total, ALLOC_AGENT_ALL_CAPS,
                    NULL, used, nroles, &w.ags[0]);
    alloc_run(w.a, w.clock);

    /* Framework 0's allocation, reserved and unreserved. */
    const res_list *reserved = &per_fw[0];
    res_list unreserved = RES_LIST_INIT;
    for (uint32_t k = 0; k < reserved->n; k++) {
        struct resource r;
        res_copy(&r, &reserved->v[k]);
        res_pop_reservation(&r);
        res_list_add(&unreserved, &r);
        res_clear(&r);
    }
    out->ops = 0;
    int64_t t0 = now_ns();
    for (uint32_t k = 0; k < reps; k++) {
        out->ops += alloc_agent_update_allocation(w.a, w.ags[0], w.fws[0],
                                                  reserved, &unreserved) == 0;
        out->ops += alloc_agent_update_allocation(w.a, w.ags[0], w.fws[0],
                                                  &unreserved, reserved) == 0;
    }
    out->ops_ms = ms(now_ns() - t0);
    w.clock += SEC;
    alloc_candidates_all(w.a);
    alloc_run(w.a, w.clock);
    out->ms = ms(now_ns() - t0);
    out->resources = total.n;
    res_list_clear(&unreserved);
    res_list_clear(&total);
    for (uint32_t i = 0; i < nroles; i++)
        res_list_clear(&per_fw[i]);
    free(per_fw);
    free(used);
    world_free(&w);
}

/* ---- Reservation updates, offerd's earlier one-role shape ----------------
 * One agent with nres distinct 1-cpu reservations (distinct labels) of one
 * role, in use by nfw frameworks, and unreserved cpus; 20 reserve +
 * unreserve updates of one allocated cpu, and the next cycle. */

static void reservation_updates(uint32_t nres, uint32_t nfw, uint32_t updates,
                                struct resv_result *out)
{
    struct world w;
    world_init(&w, nfw, 1);
    add_frameworks(&w, "role", 0);
    const char *role = "role";
    res_list total = RES_LIST_INIT;
    res_list *per_fw = xcalloc(nfw, sizeof(*per_fw));
    char val[32];
    for (uint32_t i = 0; i < nres; i++) {
        struct resource r;
        res_init_scalar(&r, "cpus", 1000);
        snprintf(val, sizeof(val), "%u", i);
        struct res_label label = {"id", val};
        res_push_reservation(&r, RES_RESV_DYNAMIC, role, "principal", &label,
                             1);
        res_list_add(&total, &r);
        res_list_add(&per_fw[i % nfw], &r);
        res_clear(&r);
    }
    res_list extra = parse("cpus:64;mem:65536");
    res_list_add_all(&total, &extra);
    struct alloc_used *used = xcalloc(nfw, sizeof(*used));
    for (uint32_t i = 0; i < nfw; i++) {
        res_list_allocate(&per_fw[i], role);
        used[i].fw = w.fws[i];
        used[i].resources = &per_fw[i];
    }
    alloc_agent_add(w.a, (void *)(uintptr_t)0, &total, ALLOC_AGENT_ALL_CAPS,
                    NULL, used, nfw, &w.ags[0]);
    alloc_run(w.a, w.clock); /* offers the unreserved rest to someone */

    res_list from = parse("cpus:1");
    res_list_allocate(&from, role);
    res_list to = RES_LIST_INIT;
    struct resource r;
    res_init_scalar(&r, "cpus", 1000);
    res_push_reservation(&r, RES_RESV_DYNAMIC, role, "principal", NULL, 0);
    res_list_add(&to, &r);
    res_clear(&r);
    res_list_allocate(&to, role);
    /* The framework offered the unreserved cpus holds them. */
    struct alloc_framework *holder =
        w.noffers > 0 ? w.fws[w.offers[0].fw] : NULL;
    out->ops = 0;
    int64_t t0 = now_ns();
    for (uint32_t k = 0; k < updates && holder != NULL; k++) {
        out->ops += alloc_agent_update_allocation(w.a, w.ags[0], holder, &from,
                                                  &to) == 0;
        out->ops += alloc_agent_update_allocation(w.a, w.ags[0], holder, &to,
                                                  &from) == 0;
    }
    out->ops_ms = ms(now_ns() - t0);
    w.clock += SEC;
    alloc_candidates_all(w.a);
    alloc_run(w.a, w.clock);
    out->ms = ms(now_ns() - t0);
    out->resources = total.n;
    res_list_clear(&from);
    res_list_clear(&to);
    res_list_clear(&extra);
    res_list_clear(&total);
    for (uint32_t i = 0; i < nfw; i++)
        res_list_clear(&per_fw[i]);
    free(per_fw);
    free(used);
    world_free(&w);
}

/* ---- Churn ---------------------------------------------------------------
 * DeclineOffers' cluster (agents with 16 tasks in use), but frameworks
 * decline with Mesos's default 5 s filter, and before every cycle 100
 * agents leave (their slots are taken at random) and 100 new ones join.
 * Timed per cycle: the removals, the additions and the cycle. */

static void churn(uint32_t nagents, uint32_t nfw, uint32_t per_cycle,
                  uint32_t cycles, struct rounds *out)
{
    struct world w;
    world_init(&w, nfw, nagents);
    add_frameworks(&w, "*", 0);
    res_list total = parse("cpus:24;mem:4096;disk:4096;ports:[31000-32000]");
    res_list used = used_16_tasks("cpus:16;mem:2014;disk:1024", NULL);
    res_list_allocate(&used, "*");
    for (uint32_t i = 0; i < nagents; i++)
        add_agent(&w, i, &total, &used, i % nfw);
    alloc_run(w.a, w.clock);
    uint32_t *slots = xcalloc(per_cycle, sizeof(*slots));
    memset(out, 0, sizeof(*out));
    for (uint32_t c = 0; c < cycles; c++) {
        decline_all(&w, 5 * SEC);
        for (uint32_t k = 0; k < per_cycle; k++) {
            uint32_t s;
            bool dup;
            do { /* distinct slots */
                s = rnd() % nagents;
                dup = false;
                for (uint32_t j = 0; j < k; j++)
                    dup |= slots[j] == s;
            } while (dup);
            slots[k] = s;
        }
        w.clock += SEC;
        int64_t t0 = now_ns();
        for (uint32_t k = 0; k < per_cycle; k++) {
            alloc_agent_remove(w.a, w.ags[slots[k]]);
            w.ags[slots[k]] = NULL;
        }
        for (uint32_t k = 0; k < per_cycle; k++)
            add_agent(&w, slots[k], &total, &used, rnd() % nfw);
        alloc_candidates_all(w.a);
        alloc_run(w.a, w.clock);
        rounds_add(out, ms(now_ns() - t0), w.noffers);
    }
    rounds_end(out);
    free(slots);
    res_list_clear(&total);
    res_list_clear(&used);
    world_free(&w);
}

/* ---- Scaling -------------------------------------------------------------
 * One full cycle offering every agent to 1,000 frameworks, and the heap
 * the allocator holds after it (offers recorded by the callback left out).
 */

struct scale_result {
    uint32_t agents, frameworks;
    double cycle_ms;
    size_t bytes;
};

static void scaling(uint32_t nagents, uint32_t nfw, struct scale_result *out)
{
    struct mallinfo2 before = mallinfo2();
    struct world w;
    world_init(&w, nfw, nagents);
    add_frameworks(&w, "*", 0);
    res_list total = parse("cpus:24;mem:4096;disk:4096;ports:[31000-32000]");
    for (uint32_t i = 0; i < nagents; i++)
        add_agent(&w, i, &total, NULL, 0);
    out->cycle_ms = timed_cycle(&w);
    forget_offers(&w);
    free(w.offers);
    w.offers = NULL;
    w.capoffers = 0;
    struct mallinfo2 after = mallinfo2();
    out->agents = nagents;
    out->frameworks = nfw;
    out->bytes = after.uordblks - before.uordblks;
    res_list_clear(&total);
    world_free(&w);
}

/* ---- Main ------------------------------------------------------------------
 */

static const char *g_only;

static bool want(const char *name)
{
    return g_only == NULL || strcmp(g_only, name) == 0;
}

static void print_rounds(const char *key, const struct rounds *r, bool *first)
{
    printf("%s\"%s\": {\"round0_ms\": %.3f, \"busy_mean_ms\": %.3f, "
           "\"slowest_ms\": %.3f, \"fastest_busy_ms\": %.3f, "
           "\"offers_round0\": %u, \"busy_rounds\": %u, "
           "\"rounds\": %u, \"offers\": %llu}",
           *first ? "" : ", ", key, r->round0_ms, r->busy_mean_ms,
           r->slowest_ms, r->fastest_busy_ms, r->offers_round0, r->busy_rounds,
           r->rounds, (unsigned long long)r->offers);
    *first = false;
}

static void text_rounds(const char *title, const struct rounds *r)
{
    printf("%s, %u rounds (%u made offers):\n"
           "  round 0: %.2f ms (%u offers)   busy-round mean: %.2f ms   "
           "slowest: %.2f ms   fastest busy: %.2f ms\n",
           title, r->rounds, r->busy_rounds, r->round0_ms, r->offers_round0,
           r->busy_mean_ms, r->slowest_ms, r->fastest_busy_ms);
}

/* Run fn `runs` times and keep the per-field medians. */
#define RUN_ROUNDS(out, runs, call)                                            \
    do {                                                                       \
        struct rounds v_[runs];                                                \
        for (int k_ = 0; k_ < (runs); k_++) {                                  \
            struct rounds *out_ = &v_[k_];                                     \
            call;                                                              \
            g_verbose = false;                                                 \
        }                                                                      \
        rounds_median(v_, (uint32_t)(runs), (out));                            \
    } while (0)

int main(int argc, char **argv)
{
    bool quick = false, json = false;
    int runs = 5;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = true;
        else if (strcmp(argv[i], "--json") == 0)
            json = true;
        else if (strncmp(argv[i], "--runs=", 7) == 0)
            runs = atoi(argv[i] + 7);
        else if (strncmp(argv[i], "--only=", 7) == 0)
            g_only = argv[i] + 7;
        else if (strcmp(argv[i], "--clock=cpu") == 0)
            g_clock = CLOCK_THREAD_CPUTIME_ID;
        else if (strcmp(argv[i], "--clock=wall") == 0)
            g_clock = CLOCK_MONOTONIC;
        else if (strcmp(argv[i], "--help") == 0) {
            printf("usage: offerd-alloc-bench [--quick] [--json] [--runs=N] "
                   "[--only=NAME] [--clock=wall|cpu]\n"
                   "  --quick       smaller shapes (a smoke test)\n"
                   "  --json        print one JSON object and nothing else\n"
                   "  --runs=N      runs per figure, medians reported "
                   "(default 5)\n"
                   "  --only=NAME   one benchmark: decline, decline_100k, "
                   "resource_labels, suppress, extreme_suppress, "
                   "add_update, persistent_volumes, backlog, quota, "
                   "non_quota_vs_quota, quota_random, "
                   "non_quota_vs_quota_random, multi_framework, "
                   "reservation_mesos, reservation, churn, scaling\n"
                   "  --clock=cpu   time with the thread's CPU clock instead "
                   "of the wall clock\n");
            return 0;
        } else {
            fprintf(stderr, "offerd-alloc-bench: unknown argument %s\n",
                    argv[i]);
            return 2;
        }
    }
    if (runs < 1)
        runs = 1;
    if (runs > 100)
        runs = 100;
    g_verbose = !json;

    /* Shapes: Mesos's parameters (docs/performance.md lists the sources);
     * --quick divides them for the smoke test. */
    uint32_t d_agents = quick ? 1000 : 10000, d_fw = quick ? 50 : 1000;
    if (getenv("BENCH_DECLINE_AGENTS"))
        d_agents = (uint32_t)atoi(getenv("BENCH_DECLINE_AGENTS"));
    if (getenv("BENCH_DECLINE_FRAMEWORKS"))
        d_fw = (uint32_t)atoi(getenv("BENCH_DECLINE_FRAMEWORKS"));
    uint32_t d_rounds = 2 * d_fw;
    if (getenv("BENCH_DECLINE_ROUNDS"))
        d_rounds = (uint32_t)atoi(getenv("BENCH_DECLINE_ROUNDS"));
    uint32_t big_agents = quick ? 5000 : 100000, big_rounds = quick ? 5 : 20;
    uint32_t m_agents = quick ? 1000 : 10000, m_fw = quick ? 50 : 1000;
    uint32_t l_rounds = quick ? 20 : 2 * m_fw;
    uint32_t q_small = quick ? 250 : 2500, q_large = quick ? 50 : 500;
    uint32_t nq_roles = quick ? 100 : 1000;
    uint32_t rm_roles = quick ? 160 : 1600;
    uint32_t r_res = quick ? 640 : 6400, r_fw = quick ? 160 : 1600;
    uint32_t c_cycles = quick ? 5 : 50;
    uint32_t scale_agents[] = {1000, 10000, 50000, 100000};
    uint32_t nscale = quick ? 2 : 4;
    int R = runs;

    struct rounds dec = {0}, dec_big = {0}, labels = {0}, chr = {0};
    struct rounds pv[3] = {{0}};
    struct suppress_result sup[runs], esup[runs];
    struct add_update_result au[runs];
    struct backlog_result bl[runs];
    struct quota_result qr[runs], nq[2][runs], qrr[runs], nqr[2][runs];
    struct mf_result mfr[runs];
    struct resv_result rm[runs], ro[runs];
    struct scale_result sr[4];
    memset(sup, 0, sizeof(sup));
    memset(esup, 0, sizeof(esup));
    memset(au, 0, sizeof(au));
    memset(bl, 0, sizeof(bl));
    memset(qr, 0, sizeof(qr));
    memset(nq, 0, sizeof(nq));
    memset(qrr, 0, sizeof(qrr));
    memset(nqr, 0, sizeof(nqr));
    memset(mfr, 0, sizeof(mfr));
    memset(rm, 0, sizeof(rm));
    memset(ro, 0, sizeof(ro));
    memset(sr, 0, sizeof(sr));

    if (want("decline")) {
        say("DeclineOffers %u agents x %u frameworks\n", d_agents, d_fw);
        RUN_ROUNDS(&dec, R, decline_offers(d_agents, d_fw, d_rounds, out_));
    }
    if (want("decline_100k")) {
        say("DeclineOffers %u agents x %u frameworks\n", big_agents, d_fw);
        RUN_ROUNDS(&dec_big, R,
                   decline_offers(big_agents, d_fw, big_rounds, out_));
    }
    g_verbose = false;
    if (want("resource_labels"))
        RUN_ROUNDS(&labels, R, resource_labels(m_agents, m_fw, l_rounds, out_));
    for (int k = 0; k < R; k++) {
        if (want("suppress"))
            suppress_offers(m_agents, m_fw, false, &sup[k]);
        if (want("extreme_suppress"))
            suppress_offers(m_agents, m_fw, true, &esup[k]);
        if (want("add_update"))
            add_and_update(m_agents, m_fw, &au[k]);
        if (want("backlog"))
            allocator_backlog(m_agents, m_fw, &bl[k]);
        if (want("quota")) {
            g_nsmall = q_small;
            quota_roles(q_small + q_large, 1, q_small / 5 + q_large * 5,
                        large_small, &qr[k]);
        }
        if (want("non_quota_vs_quota")) {
            quota_roles(nq_roles, 2, nq_roles * 2, NULL, &nq[0][k]);
            quota_roles(nq_roles, 2, nq_roles * 2, two_agents, &nq[1][k]);
        }
        g_sorter = ALLOC_SORTER_RANDOM;
        if (want("quota_random")) {
            g_nsmall = q_small;
            quota_roles(q_small + q_large, 1, q_small / 5 + q_large * 5,
                        large_small, &qrr[k]);
        }
        if (want("non_quota_vs_quota_random")) {
            quota_roles(nq_roles, 2, nq_roles * 2, NULL, &nqr[0][k]);
            quota_roles(nq_roles, 2, nq_roles * 2, two_agents, &nqr[1][k]);
        }
        g_sorter = ALLOC_SORTER_DRF;
        if (want("multi_framework"))
            multi_framework(80, 1000, &mfr[k]);
        if (want("reservation_mesos"))
            reservation_updates_mesos(rm_roles, 20, &rm[k]);
        if (want("reservation"))
            reservation_updates(r_res, r_fw, 20, &ro[k]);
    }
    for (int s = 0; s < 3 && want("persistent_volumes"); s++)
        RUN_ROUNDS(
            &pv[s], R,
            persistent_volumes(m_agents, m_fw, (enum sharedness)s, out_));
    if (want("churn"))
        RUN_ROUNDS(&chr, R, churn(m_agents, m_fw, 100, c_cycles, out_));
    for (uint32_t s = 0; s < nscale && want("scaling"); s++) {
        double ct[R];
        for (int k = 0; k < R; k++) {
            scaling(scale_agents[s], 1000, &sr[s]);
            ct[k] = sr[s].cycle_ms;
        }
        sr[s].cycle_ms = median(ct, (uint32_t)R);
    }
    if (!want("scaling"))
        nscale = 0;

    /* Medians of the single-figure benchmarks. */
    double t[6][runs];
    struct suppress_result sup_m = sup[0], esup_m = esup[0];
    for (int r = 0; r < 5; r++) {
        for (int k = 0; k < R; k++) {
            t[0][k] = sup[k].round_ms[r];
            t[1][k] = esup[k].round_ms[r];
        }
        sup_m.round_ms[r] = median(t[0], (uint32_t)R);
        esup_m.round_ms[r] = median(t[1], (uint32_t)R);
    }
    for (int k = 0; k < R; k++) {
        t[0][k] = sup[k].mean_ms;
        t[1][k] = esup[k].mean_ms;
    }
    sup_m.mean_ms = median(t[0], (uint32_t)R);
    esup_m.mean_ms = median(t[1], (uint32_t)R);
#define MED(field, arr)                                                        \
    do {                                                                       \
        double m_[runs];                                                       \
        for (int k_ = 0; k_ < R; k_++)                                         \
            m_[k_] = (arr)[k_].field;                                          \
        (arr)[0].field = median(m_, (uint32_t)R);                              \
    } while (0)
    MED(add_ms, au);
    MED(update_ms, au);
    MED(ms, bl);
    MED(ms, qr);
    MED(second_ms, qr);
    MED(ms, nq[0]);
    MED(second_ms, nq[0]);
    MED(ms, nq[1]);
    MED(second_ms, nq[1]);
    MED(ms, qrr);
    MED(second_ms, qrr);
    MED(ms, nqr[0]);
    MED(ms, nqr[1]);
    MED(total_ms, mfr);
    MED(mean_ms, mfr);
    MED(slowest_ms, mfr);
    MED(round0_ms, mfr);
    MED(ms, rm);
    MED(ops_ms, rm);
    MED(ms, ro);
    MED(ops_ms, ro);

    if (json) {
        bool first = true;
        printf("{\"callback_included\": true, \"clock\": \"%s\", \"runs\": %d, "
               "\"quick\": %s, ",
               g_clock == CLOCK_MONOTONIC ? "wall" : "cpu", R,
               quick ? "true" : "false");
        printf("\"shapes\": {\"decline_agents\": %u, \"decline_frameworks\": "
               "%u, \"decline_100k_agents\": %u, \"mesos_agents\": %u, "
               "\"mesos_frameworks\": %u}, ",
               d_agents, d_fw, big_agents, m_agents, m_fw);
        print_rounds("decline_offers", &dec, &first);
        print_rounds("decline_offers_100k", &dec_big, &first);
        print_rounds("resource_labels", &labels, &first);
        print_rounds("churn", &chr, &first);
        print_rounds("persistent_volumes_regular", &pv[0], &first);
        print_rounds("persistent_volumes_shared", &pv[1], &first);
        print_rounds("persistent_volumes_mixed", &pv[2], &first);
        const struct suppress_result *ss[2] = {&sup_m, &esup_m};
        const char *sn[2] = {"suppress_offers", "extreme_suppress_offers"};
        for (int s = 0; s < 2; s++) {
            printf(", \"%s\": {\"mean_ms\": %.3f, \"rounds\": [", sn[s],
                   ss[s]->mean_ms);
            for (int r = 0; r < 5; r++)
                printf("%s{\"ms\": %.3f, \"offers\": %u}", r ? ", " : "",
                       ss[s]->round_ms[r], ss[s]->offers[r]);
            printf("]}");
        }
        printf(", \"add_and_update_agent\": {\"add_ms\": %.3f, "
               "\"add_offers\": %u, \"update_ms\": %.3f, "
               "\"update_offers\": %u}",
               au[0].add_ms, au[0].add_offers, au[0].update_ms,
               au[0].update_offers);
        printf(", \"allocator_backlog\": {\"ms\": %.3f, \"cycles\": %u, "
               "\"offers\": %u}",
               bl[0].ms, bl[0].cycles, bl[0].offers);
        printf(", \"large_small_quota\": {\"ms\": %.3f, \"allocations\": %u, "
               "\"second_cycle_ms\": %.3f}",
               qr[0].ms, qr[0].allocations, qr[0].second_ms);
        printf(", \"non_quota_vs_quota\": {\"non_quota_ms\": %.3f, "
               "\"non_quota_allocations\": %u, \"quota_ms\": %.3f, "
               "\"quota_allocations\": %u}",
               nq[0][0].ms, nq[0][0].allocations, nq[1][0].ms,
               nq[1][0].allocations);
        printf(", \"large_small_quota_random\": {\"ms\": %.3f, "
               "\"allocations\": %u, \"second_cycle_ms\": %.3f}",
               qrr[0].ms, qrr[0].allocations, qrr[0].second_ms);
        printf(", \"non_quota_vs_quota_random\": {\"non_quota_ms\": %.3f, "
               "\"non_quota_allocations\": %u, \"quota_ms\": %.3f, "
               "\"quota_allocations\": %u}",
               nqr[0][0].ms, nqr[0][0].allocations, nqr[1][0].ms,
               nqr[1][0].allocations);
        printf(", \"multi_framework\": {\"rounds\": %u, \"tasks\": %u, "
               "\"target_tasks\": %u, \"offers\": %u, \"total_ms\": %.3f, "
               "\"mean_ms\": %.3f, \"round0_ms\": %.3f, "
               "\"slowest_ms\": %.3f}",
               mfr[0].rounds, mfr[0].tasks, mfr[0].target, mfr[0].offers,
               mfr[0].total_ms, mfr[0].mean_ms, mfr[0].round0_ms,
               mfr[0].slowest_ms);
        printf(", \"reservation_updates_mesos\": {\"ms\": %.3f, "
               "\"operations_ms\": %.3f, \"operations\": %u, \"roles\": %u, "
               "\"agent_resources\": %u}",
               rm[0].ms, rm[0].ops_ms, rm[0].ops, rm_roles, rm[0].resources);
        printf(", \"reservation_updates\": {\"ms\": %.3f, \"operations_ms\": "
               "%.3f, \"operations\": %u}",
               ro[0].ms, ro[0].ops_ms, ro[0].ops);
        printf(", \"scaling\": [");
        for (uint32_t s = 0; s < nscale; s++)
            printf("%s{\"agents\": %u, \"frameworks\": %u, \"cycle_ms\": %.3f, "
                   "\"allocator_bytes\": %zu}",
                   s ? ", " : "", sr[s].agents, sr[s].frameworks,
                   sr[s].cycle_ms, sr[s].bytes);
        printf("]}\n");
        return 0;
    }
    printf("offerd allocator benchmark: offer callback included, %s clock, "
           "median of %d runs%s\n",
           g_clock == CLOCK_MONOTONIC ? "wall" : "CPU", R,
           quick ? ", quick shapes" : "");
    char title[128];
    snprintf(title, sizeof(title), "DeclineOffers %u agents x %u frameworks",
             d_agents, d_fw);
    text_rounds(title, &dec);
    snprintf(title, sizeof(title), "DeclineOffers %u agents x %u frameworks",
             big_agents, d_fw);
    text_rounds(title, &dec_big);
    snprintf(title, sizeof(title), "ResourceLabels %u agents x %u frameworks",
             m_agents, m_fw);
    text_rounds(title, &labels);
    snprintf(title, sizeof(title),
             "Churn %u agents x %u frameworks, 100 agents out and in per "
             "cycle (ms per cycle)",
             m_agents, m_fw);
    text_rounds(title, &chr);
    const char *pvn[3] = {"regular", "shared", "mixed"};
    for (int s = 0; s < 3; s++) {
        snprintf(title, sizeof(title), "PersistentVolumes (%s) %u x %u", pvn[s],
                 m_agents, m_fw);
        text_rounds(title, &pv[s]);
    }
    printf("SuppressOffers %u x %u: rounds %.2f %.2f %.2f %.2f %.2f ms "
           "(%u .. %u offers)\n",
           m_agents, m_fw, sup_m.round_ms[0], sup_m.round_ms[1],
           sup_m.round_ms[2], sup_m.round_ms[3], sup_m.round_ms[4],
           sup_m.offers[0], sup_m.offers[4]);
    printf("ExtremeSuppressOffers %u x %u: rounds %.2f %.2f %.2f %.2f %.2f "
           "ms (%u offers each)\n",
           m_agents, m_fw, esup_m.round_ms[0], esup_m.round_ms[1],
           esup_m.round_ms[2], esup_m.round_ms[3], esup_m.round_ms[4],
           esup_m.offers[0]);
    printf("AddAndUpdateSlave %u x %u: added in %.2f ms (%u allocations), "
           "updated in %.2f ms (%u allocations)\n",
           m_agents, m_fw, au[0].add_ms, au[0].add_offers, au[0].update_ms,
           au[0].update_offers);
    printf("AllocatorBacklog %u x %u: %u revives in %.2f ms with %u "
           "allocation runs\n",
           m_agents, m_fw, m_fw, bl[0].ms, bl[0].cycles);
    printf("LargeAndSmallQuota %u + %u roles, %u agents: %.2f ms for %u "
           "allocations, then %.2f ms for none\n",
           q_small, q_large, q_small / 5 + q_large * 5, qr[0].ms,
           qr[0].allocations, qr[0].second_ms);
    printf("NonQuotaVsQuota %u roles: without quota %.2f ms (%u "
           "allocations), with %.2f ms (%u allocations)\n",
           nq_roles, nq[0][0].ms, nq[0][0].allocations, nq[1][0].ms,
           nq[1][0].allocations);
    printf("LargeAndSmallQuota, random sorters: %.2f ms for %u "
           "allocations, then %.2f ms for none\n",
           qrr[0].ms, qrr[0].allocations, qrr[0].second_ms);
    printf("NonQuotaVsQuota %u roles, random sorters: without quota %.2f ms "
           "(%u allocations), with %.2f ms (%u allocations)\n",
           nq_roles, nqr[0][0].ms, nqr[0][0].allocations, nqr[1][0].ms,
           nqr[1][0].allocations);
    printf("MultiFrameworkAllocations (80 agents, %u tasks): %u launched in "
           "%u rounds (%u offers); cycles %.2f ms in all, mean %.3f ms, "
           "round 0 %.3f ms, slowest %.3f ms\n",
           mfr[0].target, mfr[0].tasks, mfr[0].rounds, mfr[0].offers,
           mfr[0].total_ms, mfr[0].mean_ms, mfr[0].round0_ms,
           mfr[0].slowest_ms);
    printf("Reservation updates, Mesos's shape (%u roles, %u agent "
           "resources): %.2f ms for %u operations and the next cycle "
           "(operations alone %.2f ms)\n",
           rm_roles, rm[0].resources, rm[0].ms, rm[0].ops, rm[0].ops_ms);
    printf("Reservation updates, one role (%u reserved resources, %u "
           "frameworks): %.2f ms for %u operations and the next cycle\n",
           r_res, r_fw, ro[0].ms, ro[0].ops);
    printf("Scaling (1000 frameworks):\n");
    for (uint32_t s = 0; s < nscale; s++)
        printf("  %6u agents: cycle %.2f ms, allocator heap %.1f MiB\n",
               sr[s].agents, sr[s].cycle_ms,
               (double)sr[s].bytes / (1024.0 * 1024.0));
    return 0;
}
