/*
 * offerd-alloc-bench: times the allocator on the shapes of Mesos's own
 * allocator benchmarks (src/tests/hierarchical_allocator_benchmarks.cpp and
 * hierarchical_allocator_tests.cpp in apache/mesos), so the figures compare
 * with the ones Mesos reports:
 *
 *  1. DeclineOffers: frameworks in role "*", agents of
 *     cpus:24;mem:4096;disk:4096;ports:[31000-32000], each with
 *     cpus:16;mem:2014;disk:1024 and 16 ports in use by framework i % F;
 *     every round declines every offer with an infinite filter and runs
 *     one cycle, for 2 * F rounds.
 *  2. LargeAndSmallQuota: 2,500 roles guaranteed (and limited to)
 *     cpus:1;mem:1024;disk:1024 and 500 roles cpus:4;mem:4096;disk:4096,
 *     one framework each, 3,000 agents of cpus:2;mem:2048;disk:2048; one
 *     cycle.
 *  3. Reservation updates: one agent holding 6,400 distinct reserved
 *     resources in use by 1,600 frameworks; 20 reserve + unreserve updates
 *     of allocated resources.
 *  4. Scaling: one full cycle and the allocator's heap at 1k..100k agents
 *     with 1,000 frameworks.
 *
 * Cycle times exclude the time spent inside the offer callback (the
 * benchmark copies each offer there, which is the master's work, not the
 * allocator's); the callback time is measured and subtracted.
 *
 * Usage: offerd-alloc-bench [--quick] [--json] [--runs=N] [--only=NAME]
 */
#include <malloc.h>
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

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
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

/* ---- Offer recording ----------------------------------------------------- */

struct offer {
    struct alloc_framework *fw;
    struct alloc_agent *ag;
    res_list res;
};

struct recorder {
    struct offer *v;
    uint32_t n, cap;
    bool keep;           /* copy offers (to decline them later) */
    int64_t callback_ns; /* time spent in the callback */
    struct alloc_framework **fw_by_udata;
    struct alloc_agent **ag_by_udata;
};

static void on_offer(void *arg, void *fw, void *ag, const char *role,
                     const res_list *res,
                     const struct alloc_unavailability *unav)
{
    (void)unav;
    struct recorder *r = arg;
    int64_t t0 = now_ns();
    if (r->keep) {
        if (r->n == r->cap) {
            r->cap = r->cap ? 2 * r->cap : 1024;
            r->v = xreallocarray(r->v, r->cap, sizeof(*r->v));
        }
        struct offer *o = &r->v[r->n];
        o->fw = r->fw_by_udata[(uintptr_t)fw];
        o->ag = r->ag_by_udata[(uintptr_t)ag];
        res_list_init(&o->res);
        res_list_copy(&o->res, res);
        res_list_allocate(&o->res, role);
    }
    r->n++;
    r->callback_ns += now_ns() - t0;
}

static void recorder_reset(struct recorder *r)
{
    if (r->keep)
        for (uint32_t i = 0; i < r->n; i++)
            res_list_clear(&r->v[i].res);
    r->n = 0;
    r->callback_ns = 0;
}

static struct alloc *new_alloc(struct recorder *rec)
{
    struct alloc_options o;
    alloc_options_default(&o);
    o.on_offer = on_offer;
    o.cb_arg = rec;
    o.allocation_interval_ns = 3600 * SEC; /* cycles are driven by hand */
    return alloc_new(&o);
}

/* One timed cycle, callback time excluded. */
static double timed_cycle(struct alloc *a, struct recorder *rec, int64_t now)
{
    rec->callback_ns = 0;
    alloc_candidates_all(a);
    int64_t t0 = now_ns();
    alloc_run(a, now);
    return ms(now_ns() - t0 - rec->callback_ns);
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static double median(double *v, uint32_t n)
{
    qsort(v, n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- 1. DeclineOffers -----------------------------------------------------
 */

struct decline_result {
    double round0_ms, median_ms, max_ms;
    uint32_t offers_round0;
    uint32_t rounds;
};

static void decline_offers(uint32_t nagents, uint32_t nfw, bool verbose,
                           struct decline_result *out)
{
    struct recorder rec = {.keep = true};
    struct alloc *a = new_alloc(&rec);
    rec.fw_by_udata = xcalloc(nfw, sizeof(*rec.fw_by_udata));
    rec.ag_by_udata = xcalloc(nagents, sizeof(*rec.ag_by_udata));
    const char *star = "*";
    for (uint32_t i = 0; i < nfw; i++)
        rec.fw_by_udata[i] =
            alloc_framework_add(a, (void *)(uintptr_t)i, &star, 1, 0, true);

    /* 16 tasks: 1 cpu each and a 2-port range from the port range. */
    char used_text[1024];
    int n = snprintf(used_text, sizeof(used_text),
                     "cpus:16;mem:2014;disk:1024;ports:[");
    for (int k = 0; k < 16; k++)
        n += snprintf(used_text + n, sizeof(used_text) - (size_t)n, "%s%d-%d",
                      k ? "," : "", 31000 + k * 62, 31000 + k * 62 + 1);
    snprintf(used_text + n, sizeof(used_text) - (size_t)n, "]");
    res_list total = parse("cpus:24;mem:4096;disk:4096;ports:[31000-32000]");
    res_list used = parse(used_text);
    res_list_allocate(&used, "*");
    for (uint32_t i = 0; i < nagents; i++) {
        struct alloc_used u = {rec.fw_by_udata[i % nfw], &used};
        alloc_agent_add(a, (void *)(uintptr_t)i, &total, ALLOC_AGENT_ALL_CAPS,
                        NULL, &u, 1, &rec.ag_by_udata[i]);
    }
    /* The offers Mesos makes while the agents are added. */
    int64_t clock = SEC;
    alloc_run(a, clock);

    uint32_t rounds = 2 * nfw;
    if (getenv("BENCH_DECLINE_ROUNDS"))
        rounds = (uint32_t)atoi(getenv("BENCH_DECLINE_ROUNDS"));
    double *t = xcalloc(rounds, sizeof(*t));
    for (uint32_t r = 0; r < rounds; r++) {
        for (uint32_t i = 0; i < rec.n; i++)
            alloc_recover(a, rec.v[i].ag, rec.v[i].fw, &rec.v[i].res, INT64_MAX,
                          clock);
        recorder_reset(&rec);
        clock += SEC;
        t[r] = timed_cycle(a, &rec, clock);
        if (r == 0) {
            out->round0_ms = t[0];
            out->offers_round0 = rec.n;
        }
        if (verbose && (r < 3 || r % (rounds / 10) == 0))
            fprintf(stderr,
                    "  round %u allocate took %.2f ms to make %u offers\n", r,
                    t[r], rec.n);
    }
    double mx = 0;
    for (uint32_t r = 0; r < rounds; r++)
        mx = t[r] > mx ? t[r] : mx;
    out->max_ms = mx;
    out->median_ms = median(t, rounds);
    out->rounds = rounds;
    recorder_reset(&rec);
    free(rec.v);
    free(t);
    free(rec.fw_by_udata);
    free(rec.ag_by_udata);
    res_list_clear(&total);
    res_list_clear(&used);
    alloc_free(a);
}

/* ---- 2. LargeAndSmallQuota ------------------------------------------------
 */

static double large_small_quota(uint32_t nsmall, uint32_t nlarge,
                                uint32_t nagents, uint32_t *allocations)
{
    struct recorder rec = {.keep = false};
    struct alloc *a = new_alloc(&rec);
    struct alloc_quantity small[] = {
        {"cpus", 1000}, {"mem", 1024000}, {"disk", 1024000}};
    struct alloc_quantity large[] = {
        {"cpus", 4000}, {"mem", 4096000}, {"disk", 4096000}};
    struct alloc_quantities sq = {small, 3}, lq = {large, 3};
    char role[32];
    for (uint32_t i = 0; i < nsmall + nlarge; i++) {
        snprintf(role, sizeof(role), "role%u", i);
        const struct alloc_quantities *q = i < nsmall ? &sq : &lq;
        alloc_role_set_quota(a, role, q, q);
        const char *rp = role;
        alloc_framework_add(a, (void *)(uintptr_t)i, &rp, 1, 0, true);
    }
    res_list total = parse("cpus:2;mem:2048;disk:2048");
    for (uint32_t i = 0; i < nagents; i++) {
        struct alloc_agent *ag;
        alloc_agent_add(a, (void *)(uintptr_t)i, &total, ALLOC_AGENT_ALL_CAPS,
                        NULL, NULL, 0, &ag);
    }
    double t = timed_cycle(a, &rec, SEC);
    *allocations = rec.n;
    res_list_clear(&total);
    alloc_free(a);
    return t;
}

/* ---- 3. Reservation updates ---------------------------------------------- */

static double reservation_updates(uint32_t nres, uint32_t nfw, uint32_t updates,
                                  uint32_t *ops)
{
    struct recorder rec = {.keep = false};
    struct alloc *a = new_alloc(&rec);
    const char *role = "role";
    struct alloc_framework **fws = xcalloc(nfw, sizeof(*fws));
    for (uint32_t i = 0; i < nfw; i++)
        fws[i] =
            alloc_framework_add(a, (void *)(uintptr_t)i, &role, 1, 0, true);

    /* nres distinct reservations (distinct labels), 1 cpu each, plus
     * unreserved cpus to reserve from. */
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
        used[i].fw = fws[i];
        used[i].resources = &per_fw[i];
    }
    struct alloc_agent *ag;
    alloc_agent_add(a, NULL, &total, ALLOC_AGENT_ALL_CAPS, NULL, used, nfw,
                    &ag);
    alloc_run(a, SEC); /* offers the unreserved rest to someone */

    /* Each update: the framework holding the unreserved cpus reserves one
     * of them, then unreserves it (Mesos's updateAllocation twice). */
    res_list from = parse("cpus:1");
    res_list_allocate(&from, role);
    res_list to = RES_LIST_INIT;
    struct resource r;
    res_init_scalar(&r, "cpus", 1000);
    res_push_reservation(&r, RES_RESV_DYNAMIC, role, "principal", NULL, 0);
    res_list_add(&to, &r);
    res_clear(&r);
    res_list_allocate(&to, role);
    /* Find who holds the unreserved cpus: the framework offered them. */
    struct alloc_framework *holder = NULL;
    for (uint32_t i = 0; i < nfw && holder == NULL; i++)
        if (alloc_agent_update_allocation(a, ag, fws[i], &from, &from) == 0)
            holder = fws[i];
    *ops = 0;
    int64_t t0 = now_ns();
    for (uint32_t k = 0; k < updates && holder != NULL; k++) {
        if (alloc_agent_update_allocation(a, ag, holder, &from, &to) == 0)
            (*ops)++;
        if (alloc_agent_update_allocation(a, ag, holder, &to, &from) == 0)
            (*ops)++;
    }
    /* The next cycle pays for the changed totals: include it. */
    alloc_candidates_all(a);
    alloc_run(a, 2 * SEC);
    double t = ms(now_ns() - t0);
    res_list_clear(&from);
    res_list_clear(&to);
    res_list_clear(&extra);
    res_list_clear(&total);
    for (uint32_t i = 0; i < nfw; i++)
        res_list_clear(&per_fw[i]);
    free(per_fw);
    free(used);
    free(fws);
    alloc_free(a);
    return t;
}

/* ---- 4. Scaling ------------------------------------------------------------
 */

struct scale_result {
    uint32_t agents, frameworks;
    double cycle_ms;
    size_t bytes;
};

static void scaling(uint32_t nagents, uint32_t nfw, struct scale_result *out)
{
    struct mallinfo2 before = mallinfo2();
    struct recorder rec = {.keep = false};
    struct alloc *a = new_alloc(&rec);
    const char *star = "*";
    for (uint32_t i = 0; i < nfw; i++)
        alloc_framework_add(a, (void *)(uintptr_t)i, &star, 1, 0, true);
    res_list total = parse("cpus:24;mem:4096;disk:4096;ports:[31000-32000]");
    res_list used = parse("cpus:16;mem:2014;disk:1024");
    res_list_allocate(&used, "*");
    for (uint32_t i = 0; i < nagents; i++) {
        struct alloc_agent *ag;
        struct alloc_used u = {NULL, &used};
        (void)u;
        alloc_agent_add(a, (void *)(uintptr_t)i, &total, ALLOC_AGENT_ALL_CAPS,
                        NULL, NULL, 0, &ag);
    }
    out->cycle_ms = timed_cycle(a, &rec, SEC);
    struct mallinfo2 after = mallinfo2();
    out->agents = nagents;
    out->frameworks = nfw;
    out->bytes = after.uordblks - before.uordblks;
    res_list_clear(&total);
    res_list_clear(&used);
    alloc_free(a);
}

/* ---- Main ------------------------------------------------------------------
 */

int main(int argc, char **argv)
{
    bool quick = false, json = false;
    int runs = 5;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = true;
        else if (strcmp(argv[i], "--json") == 0)
            json = true;
        else if (strncmp(argv[i], "--runs=", 7) == 0)
            runs = atoi(argv[i] + 7);
        else if (strncmp(argv[i], "--only=", 7) == 0)
            only = argv[i] + 7;
        else if (strcmp(argv[i], "--help") == 0) {
            printf("usage: offerd-alloc-bench [--quick] [--json] [--runs=N]\n"
                   "  --quick   smaller shapes (a smoke test)\n"
                   "  --json    print one JSON object and nothing else\n"
                   "  --runs=N  runs per figure, median reported (default "
                   "5)\n"
                   "  --only=decline|quota|reservation|scaling  run one "
                   "benchmark (for profiling)\n");
            return 0;
        } else {
            fprintf(stderr, "offerd-alloc-bench: unknown argument %s\n",
                    argv[i]);
            return 2;
        }
    }
    if (runs < 1)
        runs = 1;
    bool verbose = !json;

    uint32_t d_agents = quick ? 1000 : 10000, d_fw = quick ? 50 : 1000;
    /* Shape overrides, for exploring (not part of the reported figures). */
    if (getenv("BENCH_DECLINE_AGENTS"))
        d_agents = (uint32_t)atoi(getenv("BENCH_DECLINE_AGENTS"));
    if (getenv("BENCH_DECLINE_FRAMEWORKS"))
        d_fw = (uint32_t)atoi(getenv("BENCH_DECLINE_FRAMEWORKS"));
    uint32_t q_small = quick ? 250 : 2500, q_large = quick ? 50 : 500;
    uint32_t q_agents = quick ? 300 : 3000;
    uint32_t r_res = quick ? 640 : 6400, r_fw = quick ? 160 : 1600;
    uint32_t scale_agents[] = {1000, 10000, 50000, 100000};
    uint32_t nscale = quick ? 2 : 4;
    if (only != NULL && strcmp(only, "scaling") != 0)
        nscale = 0;

#define WANT(name) (only == NULL || strcmp(only, name) == 0)
    /* 1 */
    double r0[runs], med[runs], mx[runs];
    struct decline_result dr = {0};
    for (int k = 0; k < runs && WANT("decline"); k++) {
        if (verbose)
            fprintf(stderr, "DeclineOffers %u agents x %u frameworks, run %d\n",
                    d_agents, d_fw, k + 1);
        decline_offers(d_agents, d_fw, verbose && k == 0, &dr);
        r0[k] = dr.round0_ms;
        med[k] = dr.median_ms;
        mx[k] = dr.max_ms;
    }
    double d_r0 = median(r0, (uint32_t)runs),
           d_med = median(med, (uint32_t)runs),
           d_max = median(mx, (uint32_t)runs);

    /* 2 */
    double qt[runs];
    uint32_t qalloc = 0;
    for (int k = 0; k < runs; k++)
        qt[k] = WANT("quota")
                    ? large_small_quota(q_small, q_large, q_agents, &qalloc)
                    : 0;
    double q_ms = median(qt, (uint32_t)runs);

    /* 3 */
    double rt[runs];
    uint32_t rops = 0;
    for (int k = 0; k < runs; k++)
        rt[k] = WANT("reservation")
                    ? reservation_updates(r_res, r_fw, 20, &rops)
                    : 0;
    double r_ms = median(rt, (uint32_t)runs);

    /* 4 */
    struct scale_result sr[4];
    for (uint32_t s = 0; s < nscale; s++) {
        double ct[runs];
        size_t bytes = 0;
        for (int k = 0; k < runs; k++) {
            scaling(scale_agents[s], 1000, &sr[s]);
            ct[k] = sr[s].cycle_ms;
            bytes = sr[s].bytes;
        }
        sr[s].cycle_ms = median(ct, (uint32_t)runs);
        sr[s].bytes = bytes;
    }

    if (json) {
        printf(
            "{\"decline_offers\": {\"round0_ms\": %.3f, \"median_ms\": %.3f, "
            "\"max_ms\": %.3f, \"offers_round0\": %u}, "
            "\"large_small_quota\": {\"ms\": %.3f, \"allocations\": %u}, "
            "\"reservation_updates\": {\"ms\": %.3f, \"operations\": %u}, "
            "\"scaling\": [",
            d_r0, d_med, d_max, dr.offers_round0, q_ms, qalloc, r_ms, rops);
        for (uint32_t s = 0; s < nscale; s++)
            printf("%s{\"agents\": %u, \"frameworks\": %u, \"cycle_ms\": %.3f, "
                   "\"allocator_bytes\": %zu}",
                   s ? ", " : "", sr[s].agents, sr[s].frameworks,
                   sr[s].cycle_ms, sr[s].bytes);
        printf("]}\n");
        return 0;
    }
    printf("offerd allocator benchmark (median of %d runs%s)\n", runs,
           quick ? ", quick shapes" : "");
    printf("DeclineOffers %u agents x %u frameworks, %u rounds:\n", d_agents,
           d_fw, dr.rounds);
    printf("  round 0: %.2f ms (%u offers)   median: %.2f ms   slowest: %.2f "
           "ms\n",
           d_r0, dr.offers_round0, d_med, d_max);
    printf("LargeAndSmallQuota %u + %u roles, %u agents: %.2f ms, %u "
           "allocations\n",
           q_small, q_large, q_agents, q_ms, qalloc);
    printf("Reservation updates (%u reserved resources, %u frameworks): "
           "%.2f ms for %u operations\n",
           r_res, r_fw, r_ms, rops);
    printf("Scaling (1000 frameworks):\n");
    for (uint32_t s = 0; s < nscale; s++)
        printf("  %6u agents: cycle %.2f ms, allocator heap %.1f MiB\n",
               sr[s].agents, sr[s].cycle_ms,
               (double)sr[s].bytes / (1024.0 * 1024.0));
    return 0;
}
