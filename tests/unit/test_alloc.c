/*
 * Tests of the hierarchical DRF allocator (src/allocator/alloc.h): hand-made
 * cases after Mesos's hierarchical allocator tests, then properties checked
 * on randomized clusters over many cycles.
 */
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocator/alloc.h"
#include "allocator/alloc_private.h"
#include "check_main.h"
#include "common/mem.h"
#include "common/resources.h"

#define SEC 1000000000LL

/* ---- A recording harness ------------------------------------------------ */

struct offer_rec {
    void *fw;
    void *ag;
    char *role;
    res_list res;
    bool has_unav;
    struct alloc_unavailability unav;
};

struct io_rec {
    void *fw;
    void *ag;
};

struct rec {
    struct offer_rec *offers;
    uint32_t noffers, cap;
    struct io_rec *ios;
    uint32_t nios, capios;
};

static void on_offer(void *arg, void *fw, void *ag, const char *role,
                     const res_list *res,
                     const struct alloc_unavailability *unav)
{
    struct rec *r = arg;
    if (r->noffers == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 64;
        r->offers = xreallocarray(r->offers, r->cap, sizeof(*r->offers));
    }
    struct offer_rec *o = &r->offers[r->noffers++];
    memset(o, 0, sizeof(*o));
    o->fw = fw;
    o->ag = ag;
    o->role = xstrdup(role);
    res_list_copy(&o->res, res);
    for (uint32_t i = 0; i < res->n; i++)
        ck_assert_ptr_null(res->v[i].alloc_role);
    res_list_allocate(&o->res, role);
    o->has_unav = unav != NULL;
    if (unav)
        o->unav = *unav;
}

static void on_inverse(void *arg, void *fw, void *ag,
                       const struct alloc_unavailability *unav)
{
    (void)unav;
    struct rec *r = arg;
    if (r->nios == r->capios) {
        r->capios = r->capios ? 2 * r->capios : 64;
        r->ios = xreallocarray(r->ios, r->capios, sizeof(*r->ios));
    }
    r->ios[r->nios].fw = fw;
    r->ios[r->nios].ag = ag;
    r->nios++;
}

static void rec_clear(struct rec *r)
{
    for (uint32_t i = 0; i < r->noffers; i++) {
        free(r->offers[i].role);
        res_list_clear(&r->offers[i].res);
    }
    r->noffers = 0;
    r->nios = 0;
}

static void rec_free(struct rec *r)
{
    rec_clear(r);
    free(r->offers);
    free(r->ios);
}

static struct alloc *new_alloc(struct rec *rec)
{
    struct alloc_options o;
    alloc_options_default(&o);
    o.on_offer = on_offer;
    o.on_inverse_offer = on_inverse;
    o.cb_arg = rec;
    return alloc_new(&o);
}

static res_list parse(const char *text)
{
    res_list l = RES_LIST_INIT;
    char err[256];
    ck_assert_msg(res_parse_text(text, NULL, &l, err, sizeof(err)) == 0,
                  "%s: %s", text, err);
    return l;
}

/* Parse and tag with an allocation role. */
static res_list parse_alloc(const char *text, const char *role)
{
    res_list l = parse(text);
    res_list_allocate(&l, role);
    return l;
}

static struct alloc_agent *add_agent(struct alloc *a, void *udata,
                                     const char *text)
{
    res_list l = parse(text);
    struct alloc_agent *ag;
    ck_assert_int_eq(
        alloc_agent_add(a, udata, &l, ALLOC_AGENT_ALL_CAPS, NULL, NULL, 0, &ag),
        0);
    res_list_clear(&l);
    return ag;
}

static struct alloc_framework *add_fw(struct alloc *a, void *udata,
                                      const char *role, uint32_t caps)
{
    const char *roles[] = {role};
    return alloc_framework_add(a, udata, roles, 1, caps, true);
}

/* The single offer recorded, checked to go to fw with resources `text`. */
static void expect_one_offer(struct rec *rec, void *fw, void *ag,
                             const char *text)
{
    ck_assert_uint_eq(rec->noffers, 1);
    ck_assert_ptr_eq(rec->offers[0].fw, fw);
    ck_assert_ptr_eq(rec->offers[0].ag, ag);
    res_list want = parse_alloc(text, rec->offers[0].role);
    char *got = res_list_render(&rec->offers[0].res);
    ck_assert_msg(res_list_equal(&rec->offers[0].res, &want),
                  "offered %s, want %s", got, text);
    free(got);
    res_list_clear(&want);
}

static int A1, A2, A3, A4, A5; /* agent udata tokens */
static int F1, F2, F3, F4;     /* framework udata tokens */

/* ---- Hand-made cases ---------------------------------------------------- */

/* Mesos's UnreservedDRF: each new agent goes whole to the lowest share. */
START_TEST(test_unreserved_drf)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    struct alloc_agent *a1 = add_agent(a, &A1, "cpus:2;mem:1024;disk:0");
    add_fw(a, &F1, "role1", 0);
    alloc_run(a, 0);
    expect_one_offer(&rec, &F1, &A1, "cpus:2;mem:1024");
    rec_clear(&rec);

    add_fw(a, &F2, "role2", 0);
    struct alloc_agent *a2 = add_agent(a, &A2, "cpus:1;mem:512;disk:0");
    alloc_run(a, 0);
    expect_one_offer(&rec, &F2, &A2, "cpus:1;mem:512");
    rec_clear(&rec);

    struct alloc_agent *a3 = add_agent(a, &A3, "cpus:3;mem:2048;disk:0");
    alloc_run(a, 0);
    expect_one_offer(&rec, &F2, &A3, "cpus:3;mem:2048");
    rec_clear(&rec);

    add_fw(a, &F3, "role1", 0);
    struct alloc_agent *a4 = add_agent(a, &A4, "cpus:4;mem:4096;disk:0");
    alloc_run(a, 0);
    expect_one_offer(&rec, &F3, &A4, "cpus:4;mem:4096");
    rec_clear(&rec);

    add_fw(a, &F4, "role1", 0);
    struct alloc_agent *a5 = add_agent(a, &A5, "cpus:1;mem:512;disk:0");
    alloc_run(a, 0);
    /* role2 (0.36) is below role1 (0.63) although F4 holds nothing. */
    expect_one_offer(&rec, &F2, &A5, "cpus:1;mem:512");
    (void)a2;
    (void)a3;
    (void)a4;
    (void)a1;
    (void)a5;
    rec_free(&rec);
    alloc_free(a);
}
END_TEST

/* Totals saturate instead of overflowing: 10,000 agents of the largest
 * registrable cpus pass INT64_MAX milli-units together (UBSan refused the
 * signed overflow in qvec_add), and offers still go out. */
START_TEST(test_totals_saturate)
{
    struct qvec q = {0};
    qvec_add(&q, 2, INT64_MAX - 5);
    qvec_add(&q, 2, 10);
    ck_assert_int_eq(qvec_get(&q, 2), INT64_MAX);
    qvec_add(&q, 2, INT64_MIN);
    ck_assert_int_eq(qvec_get(&q, 2), 0);
    qvec_add(&q, 7, INT64_MAX);
    qvec_add(&q, 7, INT64_MAX);
    ck_assert_int_eq(qvec_get(&q, 7), INT64_MAX);
    qvec_free(&q);

    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    enum { N = 10000 };
    static int tokens[N];
    for (int i = 0; i < N; i++)
        add_agent(a, &tokens[i], "cpus:1000000000000;mem:1000000000000");
    add_fw(a, &F1, "role1", 0);
    alloc_run(a, 0);
    ck_assert_uint_eq(rec.noffers, N);
    rec_free(&rec);
    alloc_free(a);
}
END_TEST

/* Reserved resources are offered only to their role (and below it). */
START_TEST(test_reserved_only_to_role)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    add_fw(a, &F1, "other", 0);
    struct alloc_agent *ag = add_agent(a, &A1, "cpus(eng):4;mem(eng):512");
    alloc_run(a, 0);
    ck_assert_uint_eq(rec.noffers, 0);
    add_fw(a, &F2, "eng/web", 0);
    alloc_run(a, 0);
    expect_one_offer(&rec, &F2, &A1, "cpus(eng):4;mem(eng):512");
    ck_assert_str_eq(rec.offers[0].role, "eng/web");
    (void)ag;
    rec_free(&rec);
    alloc_free(a);
}
END_TEST

/* A decline with a filter keeps the resources from the framework until the
 * filter expires; other frameworks get them meanwhile. */
START_TEST(test_filter_expiry)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    struct alloc_agent *ag = add_agent(a, &A1, "cpus:1;mem:512");
    struct alloc_framework *f1 = add_fw(a, &F1, "r", 0);
    alloc_run(a, 0);
    expect_one_offer(&rec, &F1, &A1, "cpus:1;mem:512");
    ck_assert_int_eq(alloc_recover(a, ag, f1, &rec.offers[0].res, 10 * SEC, 0),
                     0);
    rec_clear(&rec);
    alloc_candidates_all(a);
    alloc_run(a, 5 * SEC);
    ck_assert_uint_eq(rec.noffers, 0);
    alloc_candidates_all(a);
    alloc_run(a, 10 * SEC);
    expect_one_offer(&rec, &F1, &A1, "cpus:1;mem:512");
    rec_free(&rec);
    alloc_free(a);
}
END_TEST

/* alloc_total_scalar equals the sum of name over the agents given (their
 * alloc_agent_total), regular and revocable apart. */
static void assert_total(const struct alloc *a, const char *name,
                         struct alloc_agent *const *ags, size_t n)
{
    int64_t want[2] = {0, 0};
    for (size_t i = 0; i < n; i++) {
        const res_list *t = alloc_agent_total(ags[i]);
        for (uint32_t k = 0; k < t->n; k++)
            if (t->v[k].type == RES_SCALAR && strcmp(t->v[k].name, name) == 0)
                want[t->v[k].revocable ? 1 : 0] += t->v[k].scalar;
    }
    int64_t regular, revocable;
    alloc_total_scalar(a, name, &regular, &revocable);
    ck_assert_int_eq(regular, want[0]);
    ck_assert_int_eq(revocable, want[1]);
}

/* The kept cluster totals follow agents added, their revocable estimates,
 * reservations and removals; alloc_memory_bytes grows with an agent. */
START_TEST(test_total_scalar_kept)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    int64_t regular = -1, revocable = -1;
    alloc_total_scalar(a, "cpus", &regular, &revocable);
    ck_assert_int_eq(regular, 0);
    ck_assert_int_eq(revocable, 0);
    size_t empty = alloc_memory_bytes(a);
    struct alloc_agent *ags[2];
    ags[0] = add_agent(a, &A1, "cpus:4;mem:512");
    ck_assert_uint_gt(alloc_memory_bytes(a), empty);
    ags[1] = add_agent(a, &A2, "cpus:2;mem:256;gpus:1");
    assert_total(a, "cpus", ags, 2);
    assert_total(a, "gpus", ags, 2);
    res_list rev = parse("cpus:3");
    rev.v[0].revocable = true;
    ck_assert_int_eq(alloc_agent_update_oversubscribed(a, ags[0], &rev), 0);
    assert_total(a, "cpus", ags, 2);
    alloc_total_scalar(a, "cpus", &regular, &revocable);
    ck_assert_int_eq(regular, 6000);
    ck_assert_int_eq(revocable, 3000);
    rev.v[0].scalar = 1000;
    ck_assert_int_eq(alloc_agent_update_oversubscribed(a, ags[0], &rev), 0);
    assert_total(a, "cpus", ags, 2);
    res_list_clear(&rev);
    res_list from = parse("cpus:1"), to = parse("cpus(web):1");
    ck_assert_int_eq(alloc_agent_update_available(a, ags[1], &from, &to), 0);
    assert_total(a, "cpus", ags, 2);
    res_list_clear(&from);
    res_list_clear(&to);
    alloc_agent_remove(a, ags[0]);
    assert_total(a, "cpus", ags + 1, 1);
    assert_total(a, "mem", ags + 1, 1);
    alloc_total_scalar(a, "cpus", &regular, &revocable);
    ck_assert_int_eq(regular, 2000);
    ck_assert_int_eq(revocable, 0);
    rec_free(&rec);
    alloc_free(a);
}
END_TEST

/* An agent refused by every framework is quiet: event-driven cycles skip
 * it. Its filter's expiry alone brings it back, in a cycle nothing else
 * asked for (no candidates marked), and the filter is collected then. */
START_TEST(test_filter_expiry_wakes_quiet_agent)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    struct alloc_agent *ag = add_agent(a, &A1, "cpus:1;mem:512");
    struct alloc_framework *f1 = add_fw(a, &F1, "r", 0);
    alloc_run(a, 0);
    expect_one_offer(&rec, &F1, &A1, "cpus:1;mem:512");
    ck_assert_int_eq(alloc_recover(a, ag, f1, &rec.offers[0].res, 5 * SEC, 0),
                     0);
    rec_clear(&rec);
    alloc_run(a, SEC); /* the recover's candidate: covered, now quiet */
    ck_assert_uint_eq(rec.noffers, 0);
    ck_assert(!alloc_has_candidates(a));
    alloc_run(a, 4 * SEC);
    ck_assert_uint_eq(rec.noffers, 0);
    struct alloc_stats st;
    alloc_get_stats(a, &st);
    ck_assert_uint_eq(st.filters_active, 1);
    alloc_run(a, 5 * SEC);
    expect_one_offer(&rec, &F1, &A1, "cpus:1;mem:512");
    alloc_get_stats(a, &st);
    ck_assert_uint_eq(st.filters_active, 0);
    rec_free(&rec);
    alloc_free(a);
}
END_TEST

/* Expiry stays exact while agents come and go and earliest expiries move
 * (earliest expiries of agents removed, and moved by the removal to other
 * indexes, and agent structs reused): each agent comes back exactly when its
 * own filter expires. */
START_TEST(test_filter_expiry_with_agent_churn)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    struct alloc_framework *f1 = add_fw(a, &F1, "r", 0);
    enum { N = 40 };
    static int tok[2 * N];
    struct alloc_agent *ags[2 * N] = {0};
    for (int i = 0; i < N; i++)
        ags[i] = add_agent(a, &tok[i], "cpus:1;mem:64");
    alloc_run(a, 0);
    ck_assert_uint_eq(rec.noffers, N);
    /* Agent i refused for i + 1 seconds; then half the agents go, with
     * their filters, and new ones (reusing their structs) are refused for
     * 100 s. */
    for (uint32_t k = 0; k < rec.noffers; k++) {
        int i = (int)((int *)rec.offers[k].ag - tok);
        ck_assert_int_eq(alloc_recover(a, ags[i], f1, &rec.offers[k].res,
                                       (int64_t)(i + 1) * SEC, 0),
                         0);
    }
    rec_clear(&rec);
    for (int i = 0; i < N; i += 2) {
        alloc_agent_remove(a, ags[i]);
        ags[i] = NULL;
    }
    for (int i = N; i < N + N / 2; i++)
        ags[i] = add_agent(a, &tok[i], "cpus:1;mem:64");
    alloc_run(a, 0);
    ck_assert_uint_eq(rec.noffers, N / 2);
    for (uint32_t k = 0; k < rec.noffers; k++) {
        int i = (int)((int *)rec.offers[k].ag - tok);
        ck_assert_int_ge(i, N);
        ck_assert_int_eq(
            alloc_recover(a, ags[i], f1, &rec.offers[k].res, 100 * SEC, 0), 0);
    }
    rec_clear(&rec);
    for (int t = 1; t <= N + 1; t++) {
        alloc_candidates_all(a);
        alloc_run(a, (int64_t)t * SEC);
        /* Exactly agent t - 1 (if still there) comes back at t. */
        uint32_t want = (t - 1) % 2 == 1 && t - 1 < N ? 1 : 0;
        ck_assert_uint_eq(rec.noffers, want);
        if (want) {
            ck_assert_ptr_eq(rec.offers[0].ag, &tok[t - 1]);
            ck_assert_int_eq(alloc_recover(a, ags[t - 1], f1,
                                           &rec.offers[0].res, 1000 * SEC,
                                           (int64_t)t * SEC),
                             0);
        }
        rec_clear(&rec);
    }
    alloc_candidates_all(a);
    alloc_run(a, 101 * SEC);
    ck_assert_uint_eq(rec.noffers, N / 2);
    for (uint32_t k = 0; k < rec.noffers; k++)
        ck_assert_int_ge((int)((int *)rec.offers[k].ag - tok), N);
    rec_free(&rec);
    alloc_free(a);
}
END_TEST

/* A filter refuses only supersets: more resources than refused are offered
 * again at once. */
START_TEST(test_filter_subset_semantics)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    struct alloc_agent *ag = add_agent(a, &A1, "cpus:2;mem:1024");
    struct alloc_framework *f1 = add_fw(a, &F1, "r", 0);
    alloc_run(a, 0);
    /* Keep half, decline half with a long filter. */
    res_list half = parse_alloc("cpus:1;mem:512", "r");
    ck_assert_int_eq(alloc_recover(a, ag, f1, &half, 1000 * SEC, 0), 0);
    rec_clear(&rec);
    alloc_run(a, SEC);
    ck_assert_uint_eq(rec.noffers, 0);
    /* The other half comes back unfiltered: the leftover is now more than
     * what was refused, so it is offered. */
    ck_assert_int_eq(alloc_recover(a, ag, f1, &half, 0, SEC), 0);
    alloc_run(a, 2 * SEC);
    expect_one_offer(&rec, &F1, &A1, "cpus:2;mem:1024");
    res_list_clear(&half);
    rec_free(&rec);
    alloc_free(a);
}
END_TEST

START_TEST(test_suppress_and_revive)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    struct alloc_agent *ag = add_agent(a, &A1, "cpus:1;mem:512");
    struct alloc_framework *f1 = add_fw(a, &F1, "r", 0);
    alloc_framework_suppress(a, f1, NULL, 0);
    ck_assert(alloc_framework_is_suppressed(a, f1, "r"));
    alloc_run(a, 0);
    ck_assert_uint_eq(rec.noffers, 0);
    alloc_framework_revive(a, f1, NULL, 0);
    ck_assert(alloc_has_candidates(a));
    alloc_run(a, 0);
    expect_one_offer(&rec, &F1, &A1, "cpus:1;mem:512");
    /* Revive also clears filters. */
    ck_assert_int_eq(
        alloc_recover(a, ag, f1, &rec.offers[0].res, 1000 * SEC, 0), 0);
    rec_clear(&rec);
    alloc_run(a, SEC);
    ck_assert_uint_eq(rec.noffers, 0);
    alloc_framework_revive(a, f1, NULL, 0);
    alloc_run(a, SEC);
    ck_assert_uint_eq(rec.noffers, 1);
    rec_free(&rec);
    alloc_free(a);
}
END_TEST

/* Leftovers below min_allocatable (cpus:0.01 | mem:32) are not offered. */
START_TEST(test_min_allocatable)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    add_agent(a, &A1, "cpus:0.005;mem:16;disk:100");
    add_fw(a, &F1, "r", 0);
    alloc_run(a, 0);
    ck_assert_uint_eq(rec.noffers, 0);
    add_agent(a, &A2, "cpus:0.01;mem:16");
    alloc_run(a, 0);
    expect_one_offer(&rec, &F1, &A2, "cpus:0.01;mem:16");
    rec_free(&rec);
    alloc_free(a);
}
END_TEST

START_TEST(test_revocable_only_to_capable)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    struct alloc_agent *ag = add_agent(a, &A1, "mem:64");
    res_list rev = parse("cpus:4");
    rev.v[0].revocable = true;
    ck_assert_int_eq(alloc_agent_update_oversubscribed(a, ag, &rev), 0);
    add_fw(a, &F1, "r", 0);
    alloc_run(a, 0);
    expect_one_offer(&rec, &F1, &A1, "mem:64");
    rec_clear(&rec);
    add_fw(a, &F2, "r2", ALLOC_FW_REVOCABLE);
    alloc_run(a, 0);
    ck_assert_uint_eq(rec.noffers, 1);
    ck_assert_ptr_eq(rec.offers[0].fw, &F2);
    ck_assert(rec.offers[0].res.n == 1 && rec.offers[0].res.v[0].revocable);
    /* A non-revocable entry is refused as an estimate. */
    res_list bad = parse("cpus:1");
    ck_assert_int_eq(alloc_agent_update_oversubscribed(a, ag, &bad), -1);
    res_list_clear(&bad);
    res_list_clear(&rev);
    rec_free(&rec);
    alloc_free(a);
}
END_TEST

START_TEST(test_gpu_agents_only_to_gpu_frameworks)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    add_agent(a, &A1, "cpus:4;mem:1024;gpus:1");
    add_fw(a, &F1, "r", 0);
    alloc_run(a, 0);
    ck_assert_uint_eq(rec.noffers, 0);
    add_fw(a, &F2, "r", ALLOC_FW_GPU);
    alloc_run(a, 0);
    expect_one_offer(&rec, &F2, &A1, "cpus:4;mem:1024;gpus:1");
    rec_free(&rec);
    alloc_free(a);
}
END_TEST

/* Weights 1:2:3 give 1, 2 and 3 of six equal agents (Mesos's
 * UpdateWeight test). */
START_TEST(test_weights)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    ck_assert_int_eq(alloc_role_set_weight(a, "role2", 2.0), 0);
    ck_assert_int_eq(alloc_role_set_weight(a, "role3", 3.0), 0);
    ck_assert_int_eq(alloc_role_set_weight(a, "bad", 0.0), -1);
    add_fw(a, &F1, "role1", 0);
    add_fw(a, &F2, "role2", 0);
    add_fw(a, &F3, "role3", 0);
    for (int i = 0; i < 6; i++)
        add_agent(a, &A1, "cpus:2;mem:1024");
    alloc_run(a, 0);
    int got[3] = {0, 0, 0};
    for (uint32_t i = 0; i < rec.noffers; i++) {
        if (rec.offers[i].fw == &F1)
            got[0]++;
        else if (rec.offers[i].fw == &F2)
            got[1]++;
        else
            got[2]++;
    }
    ck_assert_int_eq(got[0], 1);
    ck_assert_int_eq(got[1], 2);
    ck_assert_int_eq(got[2], 3);
    rec_free(&rec);
    alloc_free(a);
}
END_TEST

static struct alloc_quantity q_cpus(int64_t milli)
{
    struct alloc_quantity q = {"cpus", milli};
    return q;
}

/* A role with a guarantee gets it before a lower-share role without one.
 * Without a limit it may burst past the guarantee in stage 1 (Mesos takes
 * all unguaranteed resources along); with limit == guarantee the offer is
 * chopped to the guarantee and the rest goes to fair share. */
START_TEST(test_quota_guarantee_first)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    add_fw(a, &F1, "plain", 0);
    add_fw(a, &F2, "quota", 0);
    struct alloc_quantity g[] = {q_cpus(3000)};
    struct alloc_quantities gq = {g, 1};
    alloc_role_set_quota(a, "quota", &gq, NULL);
    add_agent(a, &A1, "cpus:4;mem:1024");
    alloc_run(a, 0);
    expect_one_offer(&rec, &F2, &A1, "cpus:4;mem:1024");
    rec_free(&rec);
    alloc_free(a);

    memset(&rec, 0, sizeof(rec));
    a = new_alloc(&rec);
    add_fw(a, &F1, "plain", 0);
    add_fw(a, &F2, "quota", 0);
    alloc_role_set_quota(a, "quota", &gq, &gq);
    add_agent(a, &A1, "cpus:4;mem:1024");
    alloc_run(a, 0);
    ck_assert_uint_eq(rec.noffers, 2);
    ck_assert_ptr_eq(rec.offers[0].fw, &F2);
    ck_assert_int_eq(res_list_scalar(&rec.offers[0].res, "cpus"), 3000);
    ck_assert_int_eq(res_list_scalar(&rec.offers[0].res, "mem"), 1024000);
    ck_assert_ptr_eq(rec.offers[1].fw, &F1);
    ck_assert_int_eq(res_list_scalar(&rec.offers[1].res, "cpus"), 1000);
    rec_free(&rec);
    alloc_free(a);
}
END_TEST

/* Limits are never exceeded, counting the subtree; headroom for unmet
 * guarantees is held back from others. */
START_TEST(test_quota_limits_and_headroom)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    struct alloc_quantity l[] = {q_cpus(2000)};
    struct alloc_quantities lq = {l, 1};
    alloc_role_set_quota(a, "capped", NULL, &lq);
    add_fw(a, &F1, "capped/child", 0);
    add_agent(a, &A1, "cpus:8;mem:1024");
    alloc_run(a, 0);
    ck_assert_uint_eq(rec.noffers, 1);
    ck_assert_int_eq(res_list_scalar(&rec.offers[0].res, "cpus"), 2000);
    rec_clear(&rec);

    /* A guaranteed role without a framework yet: its 4 cpus are held back
     * from "plain". */
    struct alloc_quantity g[] = {q_cpus(4000)};
    struct alloc_quantities gq = {g, 1};
    alloc_role_set_quota(a, "later", &gq, NULL);
    add_fw(a, &F2, "plain", 0);
    alloc_run(a, 0);
    ck_assert_uint_eq(rec.noffers, 1);
    ck_assert_ptr_eq(rec.offers[0].fw, &F2);
    ck_assert_int_eq(res_list_scalar(&rec.offers[0].res, "cpus"), 2000);
    rec_free(&rec);
    alloc_free(a);
}
END_TEST

/* Offers of an agent with an unavailability carry it; frameworks holding
 * resources there get exactly one inverse offer until they answer. */
START_TEST(test_unavailability_and_inverse_offers)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    struct alloc_agent *ag = add_agent(a, &A1, "cpus:2;mem:1024");
    struct alloc_framework *f1 = add_fw(a, &F1, "r", 0);
    struct alloc_unavailability u = {1000 * SEC, 3600 * SEC};
    alloc_agent_set_unavailability(a, ag, &u);
    alloc_run(a, 0);
    ck_assert_uint_eq(rec.noffers, 1);
    ck_assert(rec.offers[0].has_unav);
    ck_assert_int_eq(rec.offers[0].unav.start_ns, 1000 * SEC);
    /* F1 holds the agent: one inverse offer, and not again while
     * outstanding. */
    ck_assert_uint_eq(rec.nios, 1);
    ck_assert_ptr_eq(rec.ios[0].fw, &F1);
    enum alloc_io_status st;
    ck_assert(alloc_inverse_offer_status(ag, f1, &st));
    ck_assert_int_eq(st, ALLOC_IO_UNKNOWN);
    rec.nios = 0;
    alloc_candidates_all(a);
    alloc_run(a, SEC);
    ck_assert_uint_eq(rec.nios, 0);
    /* Declined with a 10 s filter: sent again after it expires. */
    alloc_inverse_offer_respond(a, ag, f1, ALLOC_IO_DECLINE, 10 * SEC, SEC);
    ck_assert(alloc_inverse_offer_status(ag, f1, &st));
    ck_assert_int_eq(st, ALLOC_IO_DECLINE);
    alloc_candidates_all(a);
    alloc_run(a, 5 * SEC);
    ck_assert_uint_eq(rec.nios, 0);
    alloc_candidates_all(a);
    alloc_run(a, 11 * SEC);
    ck_assert_uint_eq(rec.nios, 1);
    /* A framework holding nothing there gets none. */
    struct alloc_framework *f2 = add_fw(a, &F2, "r2", 0);
    rec.nios = 0;
    alloc_candidates_all(a);
    alloc_run(a, 12 * SEC);
    ck_assert_uint_eq(rec.nios, 0);
    ck_assert(!alloc_inverse_offer_status(ag, f2, &st));
    /* Clearing the unavailability forgets the answers. */
    alloc_agent_set_unavailability(a, ag, NULL);
    ck_assert(!alloc_inverse_offer_status(ag, f1, &st));
    rec_free(&rec);
    alloc_free(a);
}
END_TEST

START_TEST(test_recover_rejects_what_is_not_held)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    struct alloc_agent *ag = add_agent(a, &A1, "cpus:2;mem:1024");
    struct alloc_framework *f1 = add_fw(a, &F1, "r", 0);
    struct alloc_framework *f2 = add_fw(a, &F2, "r", 0);
    alloc_run(a, 0);
    ck_assert_uint_eq(rec.noffers, 1);
    res_list too_much = parse_alloc("cpus:3", "r");
    struct alloc_framework *holder = rec.offers[0].fw == &F1 ? f1 : f2;
    struct alloc_framework *other = holder == f1 ? f2 : f1;
    ck_assert_int_eq(alloc_recover(a, ag, holder, &too_much, 0, 0), -1);
    ck_assert_int_eq(alloc_recover(a, ag, other, &rec.offers[0].res, 0, 0), -1);
    res_list unroled = parse("cpus:1");
    ck_assert_int_eq(alloc_recover(a, ag, holder, &unroled, 0, 0), -1);
    ck_assert_int_eq(alloc_recover(a, ag, holder, &rec.offers[0].res, 0, 0), 0);
    ck_assert(res_list_equal(alloc_agent_available(ag), alloc_agent_total(ag)));
    res_list_clear(&unroled);
    res_list_clear(&too_much);
    rec_free(&rec);
    alloc_free(a);
}
END_TEST

/* Removing a framework frees what it held; removing an agent frees the
 * framework's share of it. */
START_TEST(test_remove_framework_and_agent)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    struct alloc_agent *ag = add_agent(a, &A1, "cpus:2;mem:1024");
    struct alloc_framework *f1 = add_fw(a, &F1, "r", 0);
    alloc_run(a, 0);
    ck_assert_uint_eq(rec.noffers, 1);
    alloc_framework_remove(a, f1);
    ck_assert(res_list_equal(alloc_agent_available(ag), alloc_agent_total(ag)));
    add_fw(a, &F2, "r", 0);
    rec_clear(&rec);
    alloc_run(a, 0);
    expect_one_offer(&rec, &F2, &A1, "cpus:2;mem:1024");
    alloc_agent_remove(a, ag);
    struct alloc_stats st;
    alloc_get_stats(a, &st);
    ck_assert_uint_eq(st.agents, 0);
    ck_assert_uint_eq(st.frameworks, 1);
    rec_free(&rec);
    alloc_free(a);
}
END_TEST

/* An agent added with tasks of a framework counts them as held. */
START_TEST(test_agent_with_used_resources)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    const char *roles[] = {"r"};
    struct alloc_framework *f1 =
        alloc_framework_add(a, &F1, roles, 1, 0, false);
    res_list total = parse("cpus:4;mem:1024");
    res_list used = parse_alloc("cpus:3;mem:512", "r");
    struct alloc_used u = {f1, &used};
    struct alloc_agent *ag;
    ck_assert_int_eq(
        alloc_agent_add(a, &A1, &total, ALLOC_AGENT_ALL_CAPS, NULL, &u, 1, &ag),
        0);
    add_fw(a, &F2, "r", 0);
    alloc_run(a, 0);
    expect_one_offer(&rec, &F2, &A1, "cpus:1;mem:512");
    /* Used resources beyond the total are refused (the agent is kept). */
    res_list huge = parse_alloc("cpus:100", "r");
    struct alloc_used u2 = {f1, &huge};
    struct alloc_agent *ag2;
    ck_assert_int_eq(alloc_agent_add(a, &A2, &total, ALLOC_AGENT_ALL_CAPS, NULL,
                                     &u2, 1, &ag2),
                     -1);
    ck_assert(res_list_equal(alloc_agent_available(ag2), &total));
    res_list_clear(&huge);
    res_list_clear(&used);
    res_list_clear(&total);
    rec_free(&rec);
    alloc_free(a);
}
END_TEST

/* Conversions of available and of allocated resources keep the totals in
 * step. */
START_TEST(test_update_available_and_allocation)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    struct alloc_agent *ag = add_agent(a, &A1, "cpus:4;mem:1024");
    res_list from = parse("cpus:2");
    res_list to = parse("cpus(eng):2");
    ck_assert_int_eq(alloc_agent_update_available(a, ag, &from, &to), 0);
    res_list want = parse("cpus:2;cpus(eng):2;mem:1024");
    ck_assert(res_list_equal(alloc_agent_total(ag), &want));
    res_list huge = parse("cpus:20");
    ck_assert_int_eq(alloc_agent_update_available(a, ag, &huge, &to), -1);

    struct alloc_framework *f1 = add_fw(a, &F1, "eng", 0);
    alloc_run(a, 0);
    ck_assert_uint_eq(rec.noffers, 1);
    res_list afrom = parse_alloc("cpus:1", "eng");
    res_list ato = parse("cpus(eng):1");
    res_list_allocate(&ato, "eng");
    ck_assert_int_eq(alloc_agent_update_allocation(a, ag, f1, &afrom, &ato), 0);
    res_list want2 = parse("cpus:1;cpus(eng):3;mem:1024");
    ck_assert(res_list_equal(alloc_agent_total(ag), &want2));
    ck_assert_int_eq(alloc_agent_update_allocation(a, ag, f1, &huge, &ato), -1);
    res_list_clear(&want2);
    res_list_clear(&afrom);
    res_list_clear(&ato);
    res_list_clear(&huge);
    res_list_clear(&want);
    res_list_clear(&from);
    res_list_clear(&to);
    rec_free(&rec);
    alloc_free(a);
}
END_TEST

/* Reservation updates on an agent with a long total (found through the
 * total's index, totals.c) change it exactly as the list operations do,
 * order included, across index rebuilds. */
START_TEST(test_update_allocation_long_total)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    struct alloc_framework *f = add_fw(a, &F1, "r", 0);
    enum { N = 200 };
    res_list total = RES_LIST_INIT, resv[N], unresv = RES_LIST_INIT;
    char val[16];
    for (int i = 0; i < N; i++) {
        struct resource r;
        res_init_scalar(&r, "cpus", 1000);
        snprintf(val, sizeof(val), "%d", i);
        struct res_label l = {"id", val};
        res_push_reservation(&r, RES_RESV_DYNAMIC, "r", NULL, &l, 1);
        res_list_add(&total, &r);
        res_list_init(&resv[i]);
        res_list_add(&resv[i], &r);
        res_list_allocate(&resv[i], "r");
        res_clear(&r);
    }
    res_list mem = parse("mem:64");
    res_list_add_all(&total, &mem);
    res_list used = RES_LIST_INIT;
    res_list_copy(&used, &total);
    res_list_allocate(&used, "r");
    struct alloc_used u = {f, &used};
    struct alloc_agent *ag;
    ck_assert_int_eq(
        alloc_agent_add(a, &A1, &total, ALLOC_AGENT_ALL_CAPS, NULL, &u, 1, &ag),
        0);
    unresv = parse_alloc("cpus:1", "r");
    res_list ref = RES_LIST_INIT; /* the total by list operations */
    res_list_copy(&ref, &total);
    for (int round = 0; round < 3; round++) {
        for (int dir = 0; dir < 2; dir++) {
            for (int k = 0; k < N; k++) {
                int i = (k * 7 + round) % N;
                const res_list *from = dir == 0 ? &resv[i] : &unresv;
                const res_list *to = dir == 0 ? &unresv : &resv[i];
                ck_assert_int_eq(
                    alloc_agent_update_allocation(a, ag, f, from, to), 0);
                res_list uf = RES_LIST_INIT, ut = RES_LIST_INIT;
                res_list_copy(&uf, from);
                res_list_allocate(&uf, NULL);
                res_list_copy(&ut, to);
                res_list_allocate(&ut, NULL);
                res_list_sub_all(&ref, &uf);
                res_list_add_all(&ref, &ut);
                res_list_clear(&uf);
                res_list_clear(&ut);
                char *got = res_list_render(alloc_agent_total(ag));
                char *want = res_list_render(&ref);
                ck_assert_str_eq(got, want);
                free(got);
                free(want);
            }
        }
    }
    /* Something not held is refused and changes nothing. */
    res_list other = parse_alloc("cpus:1000", "r");
    ck_assert_int_eq(alloc_agent_update_allocation(a, ag, f, &other, &unresv),
                     -1);
    ck_assert(res_list_equal(alloc_agent_total(ag), &ref));
    res_list_clear(&other);
    res_list_clear(&ref);
    for (int i = 0; i < N; i++)
        res_list_clear(&resv[i]);
    res_list_clear(&unresv);
    res_list_clear(&used);
    res_list_clear(&mem);
    res_list_clear(&total);
    rec_free(&rec);
    alloc_free(a);
}
END_TEST

START_TEST(test_parse_min_allocatable)
{
    struct alloc_quantities *q;
    uint32_t n;
    char err[256];
    ck_assert_int_eq(alloc_parse_min_allocatable("cpus:0.01|mem:32;disk:10", &q,
                                                 &n, err, sizeof(err)),
                     0);
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(q[0].n, 1);
    ck_assert_int_eq(q[0].v[0].milli, 10);
    ck_assert_uint_eq(q[1].n, 2);
    alloc_quantities_free(q, n);
    ck_assert_int_eq(
        alloc_parse_min_allocatable("ports:[1-2]", &q, &n, err, sizeof(err)),
        -1);
    ck_assert_int_eq(
        alloc_parse_min_allocatable("cpus:x", &q, &n, err, sizeof(err)), -1);
}
END_TEST

/* ---- The cap on distinct scalar names ---------------------------------- */

/* "<prefix>0:1;<prefix>1:1;..." with n names after `head` (may be ""), in a
 * malloc'd string. */
static char *many_names(const char *head, const char *prefix, int n)
{
    char *text = xstrdup(head);
    for (int i = 0; i < n; i++) {
        char *next =
            xasprintf("%s%s%s%d:1", text, text[0] ? ";" : "", prefix, i);
        free(text);
        text = next;
    }
    return text;
}

/* Past ALLOC_MAX_NAMES names every entry point refuses, changing nothing,
 * and admits all of a list's new names or none of them. */
START_TEST(test_names_capped)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    ck_assert_uint_eq(a->names.n, 2); /* cpus and mem of min_allocatable */
    struct alloc_stats st;

    char *text = many_names("cpus:4;mem:1024", "x", ALLOC_MAX_NAMES - 1);
    res_list over = parse(text); /* 2 + 127 names */
    free(text);
    struct alloc_agent *untouched = (struct alloc_agent *)&A5, *ag = untouched;
    ck_assert_int_eq(alloc_agent_add(a, &A1, &over, ALLOC_AGENT_ALL_CAPS, NULL,
                                     NULL, 0, &ag),
                     -2);
    ck_assert_ptr_eq(ag, untouched);
    alloc_get_stats(a, &st);
    ck_assert_uint_eq(st.agents, 0);
    ck_assert_uint_eq(a->names.n, 2); /* none of them kept */
    res_list_clear(&over);

    text = many_names("cpus:4;mem:1024", "x", ALLOC_MAX_NAMES - 3);
    struct alloc_agent *ag1 = add_agent(a, &A1, text); /* 127 names */
    free(text);
    ck_assert_uint_eq(a->names.n, ALLOC_MAX_NAMES - 1);
    res_list two = parse("y0:1;y1:1"), one = parse("y0:1"), z = parse("z:1");
    ck_assert_int_eq(alloc_admit_names(a, &two), -1);
    ck_assert_uint_eq(a->names.n, ALLOC_MAX_NAMES - 1);
    ck_assert_int_eq(alloc_admit_names(a, &one), 0);
    ck_assert_uint_eq(a->names.n, ALLOC_MAX_NAMES);
    ck_assert_int_eq(alloc_admit_names(a, &one), 0); /* known: no-op */
    ck_assert_int_eq(alloc_admit_names(a, &z), -1);

    /* Known names only: fine. */
    struct alloc_agent *ag2 = add_agent(a, &A2, "cpus:1;mem:1;y0:1;x7:2");
    /* A new name, through every call that takes resources. */
    res_list zagent = parse("cpus:1;z:1");
    ck_assert_int_eq(alloc_agent_add(a, &A3, &zagent, ALLOC_AGENT_ALL_CAPS,
                                     NULL, NULL, 0, &ag),
                     -2);
    res_list_clear(&zagent);
    res_list before = RES_LIST_INIT;
    res_list_copy(&before, alloc_agent_total(ag2));
    res_list zrev = parse("z:1");
    zrev.v[0].revocable = true;
    ck_assert_int_eq(alloc_agent_update_oversubscribed(a, ag2, &zrev), -1);
    res_list from = parse("cpus:1");
    ck_assert_int_eq(alloc_agent_update_available(a, ag2, &from, &z), -1);
    ck_assert(res_list_equal(alloc_agent_total(ag2), &before));
    ck_assert(res_list_equal(alloc_agent_available(ag2), &before));
    struct alloc_quantity zq[] = {{"z", 1000}}, yq[] = {{"y0", 1000}};
    struct alloc_quantities zqs = {zq, 1}, yqs = {yq, 1};
    ck_assert_int_eq(alloc_role_set_quota(a, "q", &yqs, &zqs), -1);
    alloc_get_stats(a, &st);
    ck_assert_uint_eq(st.agents, 2);
    ck_assert_uint_eq(st.roles, 0); /* "q" was not made */
    ck_assert_uint_eq(a->names.n, ALLOC_MAX_NAMES);

    /* The allocator carries on: both agents are offered, whole. */
    struct alloc_framework *f1 = add_fw(a, &F1, "r", 0);
    alloc_run(a, 0);
    ck_assert_uint_eq(rec.noffers, 2);
    for (uint32_t i = 0; i < rec.noffers; i++) {
        struct alloc_agent *x = rec.offers[i].ag == &A1 ? ag1 : ag2;
        res_list want = RES_LIST_INIT;
        res_list_copy(&want, alloc_agent_total(x));
        res_list_allocate(&want, "r");
        ck_assert(res_list_equal(&rec.offers[i].res, &want));
        res_list_clear(&want);
    }
    /* And a conversion of what F1 holds into a new name. */
    res_list afrom = parse_alloc("cpus:1", "r"), ato = parse_alloc("z:1", "r");
    ck_assert_int_eq(alloc_agent_update_allocation(a, ag2, f1, &afrom, &ato),
                     -1);
    ck_assert(res_list_equal(alloc_agent_total(ag2), &before));
    ck_assert_uint_eq(a->names.n, ALLOC_MAX_NAMES);
    ck_assert_int_eq(alloc_role_set_quota(a, "q", &yqs, NULL), 0);

    res_list_clear(&afrom);
    res_list_clear(&ato);
    res_list_clear(&from);
    res_list_clear(&zrev);
    res_list_clear(&before);
    res_list_clear(&z);
    res_list_clear(&one);
    res_list_clear(&two);
    rec_free(&rec);
    alloc_free(a);
}
END_TEST

/* With every name slot taken, limits and guarantees on the last name id
 * work (the cycle's per-name buffers are ALLOC_MAX_NAMES long). */
START_TEST(test_names_full_table_quota)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    char last[16];
    snprintf(last, sizeof(last), "x%d", ALLOC_MAX_NAMES - 3);
    char *text = many_names("cpus:8;mem:1024", "x", ALLOC_MAX_NAMES - 2);
    add_agent(a, &A1, text);
    free(text);
    ck_assert_uint_eq(a->names.n, ALLOC_MAX_NAMES);
    ck_assert_int_eq(alloc_name_find(&a->names, last), ALLOC_MAX_NAMES - 1);
    struct alloc_quantity l[] = {q_cpus(2000), {last, 250}};
    struct alloc_quantities lq = {l, 2};
    ck_assert_int_eq(alloc_role_set_quota(a, "capped", NULL, &lq), 0);
    add_fw(a, &F1, "capped", 0);
    alloc_run(a, 0);
    ck_assert_uint_eq(rec.noffers, 1);
    ck_assert_int_eq(res_list_scalar(&rec.offers[0].res, "cpus"), 2000);
    ck_assert_int_eq(res_list_scalar(&rec.offers[0].res, last), 250);
    ck_assert_int_eq(res_list_scalar(&rec.offers[0].res, "x0"), 1000);
    rec_clear(&rec);

    /* A guarantee on the last name: its role is served first. */
    struct alloc_quantity g[] = {{last, 500}};
    struct alloc_quantities gq = {g, 1};
    ck_assert_int_eq(alloc_role_set_quota(a, "g", &gq, NULL), 0);
    add_fw(a, &F2, "g", 0);
    add_agent(a, &A2, "cpus:1;mem:64;x0:1");
    text = many_names("cpus:1;mem:64", "x", ALLOC_MAX_NAMES - 2);
    add_agent(a, &A3, text);
    free(text);
    alloc_run(a, 0);
    bool got_last = false;
    for (uint32_t i = 0; i < rec.noffers; i++) {
        if (rec.offers[i].fw == &F2 && rec.offers[i].ag == &A3)
            got_last = res_list_scalar(&rec.offers[i].res, last) >= 500;
        ck_assert(rec.offers[i].fw != &F1 ||
                  res_list_scalar(&rec.offers[i].res, last) == 0);
    }
    ck_assert(got_last);
    rec_free(&rec);
    alloc_free(a);
}
END_TEST

START_TEST(test_parse_min_allocatable_name_cap)
{
    struct alloc_quantities *q;
    uint32_t n;
    char err[256];
    char *text = many_names("", "n", ALLOC_MAX_NAMES);
    ck_assert_int_eq(
        alloc_parse_min_allocatable(text, &q, &n, err, sizeof(err)), 0);
    alloc_quantities_free(q, n);
    free(text);
    /* One more, in another alternative. */
    text = many_names("", "n", ALLOC_MAX_NAMES);
    char *more = xasprintf("%s|other:1", text);
    ck_assert_int_eq(
        alloc_parse_min_allocatable(more, &q, &n, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "distinct names"));
    free(more);
    free(text);
}
END_TEST

/* ---- Randomized clusters ------------------------------------------------ */

#define RF 12 /* frameworks */
#define RA 30 /* agents */

static const char *role_pool[] = {"a", "a/x", "a/y", "b", "c", "c/z"};
#define NROLES (sizeof(role_pool) / sizeof(role_pool[0]))

struct world {
    struct alloc *a;
    struct rec rec;
    uint64_t rng;
    int fw_tok[RF], ag_tok[RA];
    struct alloc_framework *fw[RF];
    const char *fw_role[RF];
    uint32_t fw_caps[RF];
    bool fw_suppressed[RF];
    struct alloc_agent *ag[RA];
    res_list total[RA];
    bool has_unav[RA];
    /* filters the world knows of: frameworks must not get these again */
    struct {
        int fw, ag;
        res_list res;
        int64_t until;
    } filters[4096];
    int nfilters;
    /* what each framework holds on each agent */
    res_list held[RF][RA];
    int64_t now;
    bool with_quota;
    int64_t limit_a;
    int limit_hits; /* cycles where "a" reached its limit */
};

static int64_t world_consumed_cpus(struct world *w, const char *role);

static uint64_t wrand(struct world *w)
{
    uint64_t x = w->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    w->rng = x;
    return x * 0x2545f4914f6cdd1dULL;
}

static int fw_index(struct world *w, void *tok)
{
    for (int i = 0; i < RF; i++)
        if (&w->fw_tok[i] == tok)
            return i;
    ck_abort_msg("unknown framework token");
    return -1;
}

static int ag_index(struct world *w, void *tok)
{
    for (int i = 0; i < RA; i++)
        if (&w->ag_tok[i] == tok)
            return i;
    ck_abort_msg("unknown agent token");
    return -1;
}

static void random_agent_text(struct world *w, char *buf, size_t len, int i)
{
    const char *resv = role_pool[wrand(w) % NROLES];
    int n =
        snprintf(buf, len, "cpus:%d;mem:%d;disk:%d;ports:[%d-%d];cpus(%s):%d",
                 1 + (int)(wrand(w) % 8), 256 * (1 + (int)(wrand(w) % 8)),
                 (int)(wrand(w) % 2000), 31000 + i, 31000 + i + 100,
                 strchr(resv, '/') ? "a" : resv, (int)(wrand(w) % 3));
    if (wrand(w) % 5 == 0)
        snprintf(buf + n, len - (size_t)n, ";gpus:1");
}

static void world_init(struct world *w, uint64_t seed, bool with_quota)
{
    memset(w, 0, sizeof(*w));
    w->rng = seed * 2654435761u + 1;
    struct alloc_options o;
    alloc_options_default(&o);
    o.on_offer = on_offer;
    o.on_inverse_offer = on_inverse;
    o.cb_arg = &w->rec;
    o.seed = seed;
    w->a = alloc_new(&o);
    for (int i = 0; i < RF; i++) {
        w->fw_role[i] = role_pool[wrand(w) % NROLES];
        uint32_t caps = 0;
        if (wrand(w) % 2)
            caps |= ALLOC_FW_REVOCABLE;
        if (wrand(w) % 3 == 0)
            caps |= ALLOC_FW_GPU;
        w->fw_caps[i] = caps;
        w->fw[i] = alloc_framework_add(w->a, &w->fw_tok[i], &w->fw_role[i], 1,
                                       caps, true);
    }
    for (int i = 0; i < RA; i++) {
        char text[256];
        random_agent_text(w, text, sizeof(text), i);
        w->total[i] = parse(text);
        ck_assert_int_eq(alloc_agent_add(w->a, &w->ag_tok[i], &w->total[i],
                                         ALLOC_AGENT_ALL_CAPS, NULL, NULL, 0,
                                         &w->ag[i]),
                         0);
        if (wrand(w) % 3 == 0) {
            res_list rev = parse("cpus:2");
            rev.v[0].revocable = true;
            ck_assert_int_eq(
                alloc_agent_update_oversubscribed(w->a, w->ag[i], &rev), 0);
            res_list_add_all(&w->total[i], &rev);
            res_list_clear(&rev);
        }
    }
    w->with_quota = with_quota;
    if (with_quota) {
        struct alloc_quantity g[] = {q_cpus(6000)};
        struct alloc_quantities gq = {g, 1};
        struct alloc_quantity l[] = {q_cpus(10000)};
        struct alloc_quantities lq = {l, 1};
        alloc_role_set_quota(w->a, "b", &gq, &lq);
        /* "a"'s limit binds: its reservations plus 8 cpus. */
        w->limit_a = world_consumed_cpus(w, "a") + 8000;
        struct alloc_quantity la[] = {q_cpus(w->limit_a)};
        struct alloc_quantities laq = {la, 1};
        alloc_role_set_quota(w->a, "a", NULL, &laq);
        alloc_role_set_weight(w->a, "c", 2.5);
    }
}

static void world_free(struct world *w)
{
    for (int i = 0; i < RF; i++)
        for (int j = 0; j < RA; j++)
            res_list_clear(&w->held[i][j]);
    for (int i = 0; i < RA; i++)
        res_list_clear(&w->total[i]);
    for (int i = 0; i < w->nfilters; i++)
        res_list_clear(&w->filters[i].res);
    rec_free(&w->rec);
    alloc_free(w->a);
}

/* Consumed quota of role (and subtree) as the world sees it. */
static int64_t world_consumed_cpus(struct world *w, const char *role)
{
    int64_t sum = 0;
    for (int i = 0; i < RA; i++) {
        for (uint32_t k = 0; k < w->total[i].n; k++) {
            const struct resource *r = &w->total[i].v[k];
            if (r->nresv > 0 && strcmp(r->name, "cpus") == 0 &&
                res_role_is_subrole(res_reservation_role(r), role))
                sum += r->scalar;
        }
        for (int f = 0; f < RF; f++) {
            for (uint32_t k = 0; k < w->held[f][i].n; k++) {
                const struct resource *r = &w->held[f][i].v[k];
                if (r->nresv == 0 && !r->revocable &&
                    strcmp(r->name, "cpus") == 0 &&
                    res_role_is_subrole(r->alloc_role, role))
                    sum += r->scalar;
            }
        }
    }
    return sum;
}

/* Check every offer of the last cycle, and the conservation invariant. */
static void world_check_cycle(struct world *w, int64_t consumed_b_before,
                              int64_t consumed_a_before)
{
    int64_t consumed_a_after = consumed_a_before;
    for (uint32_t i = 0; i < w->rec.noffers; i++) {
        struct offer_rec *o = &w->rec.offers[i];
        int f = fw_index(w, o->fw);
        int g = ag_index(w, o->ag);
        ck_assert_str_eq(o->role, w->fw_role[f]);
        ck_assert_msg(!w->fw_suppressed[f], "suppressed framework offered");
        for (uint32_t k = 0; k < o->res.n; k++) {
            const struct resource *r = &o->res.v[k];
            ck_assert_str_eq(r->alloc_role, o->role);
            /* Reserved resources stay within their role's subtree. */
            if (r->nresv > 0)
                ck_assert_msg(
                    res_role_is_subrole(o->role, res_reservation_role(r)),
                    "reserved to %s offered to %s", res_reservation_role(r),
                    o->role);
            if (r->revocable)
                ck_assert(w->fw_caps[f] & ALLOC_FW_REVOCABLE);
            if (strcmp(r->name, "cpus") == 0 && r->nresv == 0 &&
                !r->revocable && res_role_is_subrole(o->role, "a")) {
                consumed_a_after += r->scalar;
            }
        }
        if (res_list_scalar(&w->total[g], "gpus") > 0)
            ck_assert(w->fw_caps[f] & ALLOC_FW_GPU);
        /* No live filter of this framework on this agent covers it. */
        res_list un = RES_LIST_INIT;
        res_list_copy(&un, &o->res);
        res_list_allocate(&un, NULL);
        for (int k = 0; k < w->nfilters; k++)
            if (w->filters[k].fw == f && w->filters[k].ag == g &&
                w->filters[k].until > w->now)
                ck_assert_msg(!res_list_contains(&w->filters[k].res, &un),
                              "filtered resources offered");
        res_list_clear(&un);
        res_list_add_all(&w->held[f][g], &o->res);
    }
    /* Limits are never pushed past by new allocations. */
    if (w->with_quota && consumed_a_after > consumed_a_before) {
        ck_assert_int_le(consumed_a_after, w->limit_a);
        if (consumed_a_after == w->limit_a)
            w->limit_hits++;
    }
    (void)consumed_b_before;
    /* Conservation: available + everything held == total, per agent. */
    for (int g = 0; g < RA; g++) {
        res_list sum = RES_LIST_INIT;
        res_list_copy(&sum, alloc_agent_available(w->ag[g]));
        for (int f = 0; f < RF; f++) {
            res_list un = RES_LIST_INIT;
            res_list_copy(&un, &w->held[f][g]);
            res_list_allocate(&un, NULL);
            res_list_add_all(&sum, &un);
            res_list_clear(&un);
        }
        char *s1 = res_list_render(&sum), *s2 = res_list_render(&w->total[g]);
        ck_assert_msg(res_list_equal(&sum, &w->total[g]),
                      "agent %d: available+held %s != total %s", g, s1, s2);
        free(s1);
        free(s2);
        res_list_clear(&sum);
    }
}

/* Give back a random part of what framework f holds on agent g. */
static void world_recover(struct world *w, int f, int g, bool with_filter)
{
    if (w->held[f][g].n == 0)
        return;
    res_list give = RES_LIST_INIT;
    if (wrand(w) % 2) {
        res_list_copy(&give, &w->held[f][g]);
    } else {
        uint32_t k = (uint32_t)(wrand(w) % w->held[f][g].n);
        res_list_add(&give, &w->held[f][g].v[k]);
    }
    int64_t refuse = with_filter ? (int64_t)(1 + wrand(w) % 20) * SEC : 0;
    ck_assert_int_eq(
        alloc_recover(w->a, w->ag[g], w->fw[f], &give, refuse, w->now), 0);
    res_list_sub_all(&w->held[f][g], &give);
    if (refuse > 0 && w->nfilters < 4096) {
        int k = w->nfilters++;
        w->filters[k].fw = f;
        w->filters[k].ag = g;
        res_list_init(&w->filters[k].res);
        res_list_copy(&w->filters[k].res, &give);
        res_list_allocate(&w->filters[k].res, NULL);
        int64_t d = refuse < SEC ? SEC : refuse;
        w->filters[k].until = w->now + d;
    }
    res_list_clear(&give);
}

static void run_random_world(uint64_t seed, bool with_quota)
{
    struct world *w = xcalloc(1, sizeof(*w));
    world_init(w, seed, with_quota);
    for (int round = 0; round < 60; round++) {
        w->now += SEC / 2;
        /* Events. */
        int nev = (int)(wrand(w) % 12);
        for (int e = 0; e < nev; e++) {
            int f = (int)(wrand(w) % RF), g = (int)(wrand(w) % RA);
            switch (wrand(w) % 8) {
            case 0:
            case 1:
            case 2:
                world_recover(w, f, g, true);
                break;
            case 3:
                world_recover(w, f, g, false);
                break;
            case 4:
                alloc_framework_suppress(w->a, w->fw[f], NULL, 0);
                w->fw_suppressed[f] = true;
                break;
            case 5:
                alloc_framework_revive(w->a, w->fw[f], NULL, 0);
                w->fw_suppressed[f] = false;
                for (int k = 0; k < w->nfilters; k++)
                    if (w->filters[k].fw == f)
                        w->filters[k].until = 0;
                break;
            case 6: {
                struct alloc_unavailability u = {w->now, 3600 * SEC};
                bool on = wrand(w) % 2;
                alloc_agent_set_unavailability(w->a, w->ag[g], on ? &u : NULL);
                w->has_unav[g] = on;
                break;
            }
            default:
                break;
            }
        }
        if (round % 3 == 0)
            alloc_candidates_all(w->a);
        int64_t cb = world_consumed_cpus(w, "b");
        int64_t ca = world_consumed_cpus(w, "a");
        rec_clear(&w->rec);
        alloc_run(w->a, w->now);
        world_check_cycle(w, cb, ca);
        /* Inverse offers only for agents with an unavailability, to
         * frameworks holding something there. */
        for (uint32_t i = 0; i < w->rec.nios; i++) {
            int f = fw_index(w, w->rec.ios[i].fw);
            int g = ag_index(w, w->rec.ios[i].ag);
            ck_assert(w->has_unav[g]);
            ck_assert_msg(w->held[f][g].n > 0,
                          "inverse offer to a framework holding nothing");
        }
        /* ...and each such framework has one outstanding or answered. */
        if (round % 3 == 0) {
            for (int g = 0; g < RA; g++) {
                if (!w->has_unav[g])
                    continue;
                for (int f = 0; f < RF; f++) {
                    if (w->held[f][g].n == 0)
                        continue;
                    enum alloc_io_status st;
                    ck_assert_msg(
                        alloc_inverse_offer_status(w->ag[g], w->fw[f], &st),
                        "framework %d holds on draining agent %d but has no "
                        "inverse offer",
                        f, g);
                }
            }
        }
    }
    if (with_quota)
        ck_assert_msg(w->limit_hits > 0,
                      "seed %" PRIu64 ": the limit never bound", seed);
    world_free(w);
    free(w);
}

START_TEST(test_random_clusters)
{
    for (uint64_t seed = 1; seed <= 40; seed++)
        run_random_world(seed, false);
}
END_TEST

START_TEST(test_random_clusters_with_quota)
{
    for (uint64_t seed = 100; seed <= 140; seed++)
        run_random_world(seed, true);
}
END_TEST

/* DRF converges to weighted fair shares within one agent's granularity:
 * frameworks that keep everything, in roles of different weights, over
 * identical agents. */
START_TEST(test_drf_converges_to_weighted_shares)
{
    for (uint64_t seed = 1; seed <= 20; seed++) {
        struct rec rec = {0};
        struct alloc_options o;
        alloc_options_default(&o);
        o.on_offer = on_offer;
        o.cb_arg = &rec;
        o.seed = seed;
        struct alloc *a = alloc_new(&o);
        const char *roles[] = {"r0", "r1", "r2", "r3"};
        double weights[] = {1.0, 2.0, 0.5, 3.0};
        int tok[4];
        for (int i = 0; i < 4; i++) {
            alloc_role_set_weight(a, roles[i], weights[i]);
            alloc_framework_add(a, &tok[i], &roles[i], 1, 0, true);
        }
        int nagents = 40 + (int)(seed % 40);
        for (int i = 0; i < nagents; i++)
            add_agent(a, &A1, "cpus:4;mem:4096");
        alloc_run(a, 0);
        double share[4] = {0};
        for (uint32_t i = 0; i < rec.noffers; i++) {
            int k = (int *)rec.offers[i].fw - tok;
            share[k] += res_list_scalar(&rec.offers[i].res, "cpus") /
                        (4000.0 * nagents);
        }
        double lo = 1e9, hi = 0;
        for (int k = 0; k < 4; k++) {
            double s = share[k] / weights[k];
            lo = s < lo ? s : lo;
            hi = s > hi ? s : hi;
        }
        /* One agent's share, divided by the smallest weight. */
        double grain = 1.0 / nagents / 0.5;
        ck_assert_msg(hi - lo <= grain + 1e-9,
                      "seed %" PRIu64 ": weighted shares spread %f > %f", seed,
                      hi - lo, grain);
        rec_free(&rec);
        alloc_free(a);
    }
}
END_TEST

/* Quota guarantees are met in the first cycle when the cluster can meet
 * them, however much other roles want. */
START_TEST(test_guarantees_met_before_fair_share)
{
    for (uint64_t seed = 1; seed <= 20; seed++) {
        struct rec rec = {0};
        struct alloc_options o;
        alloc_options_default(&o);
        o.on_offer = on_offer;
        o.cb_arg = &rec;
        o.seed = seed;
        struct alloc *a = alloc_new(&o);
        int tok[8];
        char names[8][8];
        const char *rolep[8];
        for (int i = 0; i < 8; i++) {
            snprintf(names[i], sizeof(names[i]), "q%d", i);
            rolep[i] = names[i];
        }
        /* Four greedy roles without quota first, so they sort first. */
        for (int i = 4; i < 8; i++)
            alloc_framework_add(a, &tok[i], &rolep[i], 1, 0, true);
        int64_t want[4];
        for (int i = 0; i < 4; i++) {
            want[i] = (int64_t)(1 + (seed + (uint64_t)i) % 5) * 1000;
            struct alloc_quantity g[] = {q_cpus(want[i])};
            struct alloc_quantities gq = {g, 1};
            alloc_role_set_quota(a, rolep[i], &gq, NULL);
            alloc_framework_add(a, &tok[i], &rolep[i], 1, 0, true);
        }
        for (int i = 0; i < 16; i++)
            add_agent(a, &A1, "cpus:3;mem:3072");
        alloc_run(a, 0);
        int64_t got[4] = {0};
        for (uint32_t i = 0; i < rec.noffers; i++) {
            int k = (int *)rec.offers[i].fw - tok;
            if (k < 4)
                got[k] += res_list_scalar(&rec.offers[i].res, "cpus");
        }
        for (int k = 0; k < 4; k++)
            ck_assert_msg(got[k] >= want[k],
                          "seed %" PRIu64 ": role q%d got %" PRId64
                          " of its guarantee %" PRId64,
                          seed, k, got[k], want[k]);
        rec_free(&rec);
        alloc_free(a);
    }
}
END_TEST

/* Mesos's DeclineOffers shape, small: every offer declined forever; no
 * agent is offered twice to the same framework, and once every framework
 * refused every agent, nothing is offered. */
START_TEST(test_decline_forever_exhausts)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    enum { NF = 6, NA = 10 };
    int ftok[NF], atok[NA];
    struct alloc_framework *fws[NF];
    struct alloc_agent *ags[NA];
    for (int i = 0; i < NF; i++)
        fws[i] = add_fw(a, &ftok[i], "*", 0);
    for (int i = 0; i < NA; i++)
        ags[i] = add_agent(a, &atok[i], "cpus:2;mem:512;ports:[1-100]");
    bool seen[NF][NA] = {{false}};
    int64_t now = 0;
    for (int round = 0; round < 2 * NF; round++) {
        alloc_candidates_all(a);
        alloc_run(a, now);
        if (round >= NF)
            ck_assert_uint_eq(rec.noffers, 0);
        for (uint32_t i = 0; i < rec.noffers; i++) {
            int f = (int *)rec.offers[i].fw - ftok;
            int g = (int *)rec.offers[i].ag - atok;
            ck_assert(!seen[f][g]);
            seen[f][g] = true;
            ck_assert_int_eq(alloc_recover(a, ags[g], fws[f],
                                           &rec.offers[i].res, INT64_MAX, now),
                             0);
        }
        rec_clear(&rec);
        now += SEC;
    }
    struct alloc_stats st;
    alloc_get_stats(a, &st);
    ck_assert_uint_eq(st.filters_active, NF * NA);
    rec_free(&rec);
    alloc_free(a);
}
END_TEST

/* ---- Per-framework options, tie-breaks ---------------------------------- */

/* Mesos's FrameworkMinAllocatable: a framework's own min_allocatable for a
 * role replaces the global one, set by an update. */
START_TEST(test_framework_min_allocatable)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    struct alloc_framework *fw = add_fw(a, &F1, "role1", 0);
    add_agent(a, &A1, "cpus:0.005;mem:16;disk:128");
    alloc_run(a, 0);
    ck_assert_uint_eq(rec.noffers, 0); /* below cpus:0.01|mem:32 */

    struct alloc_quantity q[] = {{"cpus", 3}}; /* 0.003 */
    struct alloc_quantities alt = {q, 1};
    struct alloc_role_options o = {.role = "role1",
                                   .has_min_allocatable = true,
                                   .min_allocatable = &alt,
                                   .n_min_allocatable = 1};
    char err[256];
    ck_assert_int_eq(
        alloc_framework_set_options(a, fw, &o, 1, err, sizeof(err)), 0);
    alloc_run(a, SEC);
    expect_one_offer(&rec, &F1, &A1, "cpus:0.005;mem:16;disk:128");
    rec_clear(&rec);

    /* A second framework without the option still follows the global
     * rule: a small leftover is not offered to it. */
    alloc_free(a);
    rec_free(&rec);
}
END_TEST

/* Mesos's FrameworkEmptyMinAllocatable: set with no alternatives, any
 * non-empty resources are allocatable to that framework. Another
 * framework's option does not apply to the role's other frameworks. */
START_TEST(test_framework_empty_min_allocatable)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    struct alloc_framework *f2 = add_fw(a, &F2, "role1", 0);
    (void)f2;
    add_agent(a, &A1, "cpus:0.005;mem:16;disk:128");
    alloc_run(a, 0);
    ck_assert_uint_eq(rec.noffers, 0);

    struct alloc_framework *fw = add_fw(a, &F1, "role1", 0);
    struct alloc_role_options o = {.role = "role1",
                                   .has_min_allocatable = true};
    char err[256];
    ck_assert_int_eq(
        alloc_framework_set_options(a, fw, &o, 1, err, sizeof(err)), 0);
    alloc_run(a, SEC);
    expect_one_offer(&rec, &F1, &A1, "cpus:0.005;mem:16;disk:128");
    alloc_free(a);
    rec_free(&rec);
}
END_TEST

/* One framework in role "r" with the given constraint groups, one agent
 * with hostname "host1", the given domain and attributes: was it offered? */
static bool offered_under(const struct alloc_constraint_group *g, uint32_t ng,
                          const char *region,
                          const struct alloc_attribute *attrs, uint32_t nattrs)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    struct alloc_framework *fw = add_fw(a, &F1, "r", 0);
    struct alloc_role_options o = {.role = "r", .groups = g, .ngroups = ng};
    char err[256];
    ck_assert_msg(alloc_framework_set_options(a, fw, &o, 1, err, sizeof(err)) ==
                      0,
                  "%s", err);
    struct alloc_agent *ag = add_agent(a, &A1, "cpus:1;mem:64");
    alloc_agent_set_info(a, ag, "host1", region, NULL, attrs, nattrs);
    alloc_run(a, 0);
    bool offered = rec.noffers == 1;
    alloc_free(a);
    rec_free(&rec);
    return offered;
}

/* Mesos's OfferConstraintsFilter tests (NamedAttributeExists,
 * NamedAttributeNotExists, NamedAttributeTextEquals, ...TextNotEquals,
 * TwoAttributesWithTheSameName, ...TextMatches, ...TextNotMatches), as a
 * table: one constraint against one agent. */
START_TEST(test_offer_constraints_predicates)
{
    static const struct alloc_attribute text_foo[] = {{"foo", "bar"}};
    static const struct alloc_attribute scalar_foo[] = {{"foo", NULL}};
    static const struct alloc_attribute two_foo[] = {{"foo", "bar"},
                                                     {"foo", "baz"}};
    static const struct {
        enum alloc_selector sel;
        enum alloc_predicate pred;
        const char *value;
        const struct alloc_attribute *attrs;
        uint32_t nattrs;
        bool want;
    } cases[] = {
        {ALLOC_SEL_ATTRIBUTE, ALLOC_PRED_EXISTS, NULL, text_foo, 1, true},
        {ALLOC_SEL_ATTRIBUTE, ALLOC_PRED_EXISTS, NULL, NULL, 0, false},
        {ALLOC_SEL_ATTRIBUTE, ALLOC_PRED_EXISTS, NULL, scalar_foo, 1, true},
        {ALLOC_SEL_ATTRIBUTE, ALLOC_PRED_NOT_EXISTS, NULL, text_foo, 1, false},
        {ALLOC_SEL_ATTRIBUTE, ALLOC_PRED_NOT_EXISTS, NULL, NULL, 0, true},
        {ALLOC_SEL_ATTRIBUTE, ALLOC_PRED_TEXT_EQUALS, "bar", text_foo, 1, true},
        {ALLOC_SEL_ATTRIBUTE, ALLOC_PRED_TEXT_EQUALS, "baz", text_foo, 1,
         false},
        {ALLOC_SEL_ATTRIBUTE, ALLOC_PRED_TEXT_EQUALS, "bar", NULL, 0, false},
        /* a non-TEXT attribute passes every text test */
        {ALLOC_SEL_ATTRIBUTE, ALLOC_PRED_TEXT_EQUALS, "x", scalar_foo, 1, true},
        {ALLOC_SEL_ATTRIBUTE, ALLOC_PRED_TEXT_NOT_EQUALS, "bar", text_foo, 1,
         false},
        {ALLOC_SEL_ATTRIBUTE, ALLOC_PRED_TEXT_NOT_EQUALS, "baz", text_foo, 1,
         true},
        {ALLOC_SEL_ATTRIBUTE, ALLOC_PRED_TEXT_NOT_EQUALS, "bar", NULL, 0, true},
        /* TwoAttributesWithTheSameName: the first counts */
        {ALLOC_SEL_ATTRIBUTE, ALLOC_PRED_TEXT_EQUALS, "bar", two_foo, 2, true},
        {ALLOC_SEL_ATTRIBUTE, ALLOC_PRED_TEXT_EQUALS, "baz", two_foo, 2, false},
        /* whole-value matches */
        {ALLOC_SEL_ATTRIBUTE, ALLOC_PRED_TEXT_MATCHES, "b.r", text_foo, 1,
         true},
        {ALLOC_SEL_ATTRIBUTE, ALLOC_PRED_TEXT_MATCHES, "b", text_foo, 1, false},
        {ALLOC_SEL_ATTRIBUTE, ALLOC_PRED_TEXT_MATCHES, "ar", text_foo, 1,
         false},
        {ALLOC_SEL_ATTRIBUTE, ALLOC_PRED_TEXT_MATCHES, "x|bar", text_foo, 1,
         true},
        {ALLOC_SEL_ATTRIBUTE, ALLOC_PRED_TEXT_MATCHES, "bar", NULL, 0, false},
        {ALLOC_SEL_ATTRIBUTE, ALLOC_PRED_TEXT_NOT_MATCHES, "b.r", text_foo, 1,
         false},
        {ALLOC_SEL_ATTRIBUTE, ALLOC_PRED_TEXT_NOT_MATCHES, "ba", text_foo, 1,
         true},
        {ALLOC_SEL_ATTRIBUTE, ALLOC_PRED_TEXT_NOT_MATCHES, "bar", NULL, 0,
         true},
        /* pseudo-attributes */
        {ALLOC_SEL_HOSTNAME, ALLOC_PRED_TEXT_EQUALS, "host1", NULL, 0, true},
        {ALLOC_SEL_HOSTNAME, ALLOC_PRED_TEXT_EQUALS, "host2", NULL, 0, false},
        {ALLOC_SEL_REGION, ALLOC_PRED_TEXT_EQUALS, "eu", NULL, 0, true},
        {ALLOC_SEL_ZONE, ALLOC_PRED_EXISTS, NULL, NULL, 0, false},
        {ALLOC_SEL_ZONE, ALLOC_PRED_TEXT_NOT_EQUALS, "z", NULL, 0, true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct alloc_constraint k = {cases[i].sel, "foo", cases[i].pred,
                                     cases[i].value};
        struct alloc_constraint_group g = {&k, 1};
        ck_assert_msg(offered_under(&g, 1, "eu", cases[i].attrs,
                                    cases[i].nattrs) == cases[i].want,
                      "case %zu", i);
    }
}
END_TEST

/* Mesos's TwoConstraintsInGroup and TwoGroups: a group needs all its
 * constraints, the role any group. */
START_TEST(test_offer_constraints_groups)
{
    static const struct alloc_attribute attrs[] = {{"foo", "bar"},
                                                   {"baz", "qux"}};
    struct alloc_constraint both[] = {
        {ALLOC_SEL_ATTRIBUTE, "foo", ALLOC_PRED_TEXT_EQUALS, "bar"},
        {ALLOC_SEL_ATTRIBUTE, "baz", ALLOC_PRED_TEXT_EQUALS, "nope"},
    };
    struct alloc_constraint_group one = {both, 2};
    ck_assert(!offered_under(&one, 1, NULL, attrs, 2));
    struct alloc_constraint_group two[] = {{&both[0], 1}, {&both[1], 1}};
    ck_assert(offered_under(two, 2, NULL, attrs, 2));
    ck_assert(!offered_under(&two[1], 1, NULL, attrs, 2));
}
END_TEST

/* Mesos's TwoRoles and DefaultOfferConstraints: constraints apply to the
 * role they name; a role without any is offered every agent. */
START_TEST(test_offer_constraints_two_roles)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    const char *roles[] = {"r1", "r2"};
    struct alloc_framework *fw =
        alloc_framework_add(a, &F1, roles, 2, ALLOC_FW_MULTI_ROLE, true);
    struct alloc_constraint k = {ALLOC_SEL_ATTRIBUTE, "rack", ALLOC_PRED_EXISTS,
                                 NULL};
    struct alloc_constraint_group g = {&k, 1};
    struct alloc_role_options o = {.role = "r1", .groups = &g, .ngroups = 1};
    char err[256];
    ck_assert_int_eq(
        alloc_framework_set_options(a, fw, &o, 1, err, sizeof(err)), 0);
    /* r1 would come first (equal shares, lower name) but the agent has
     * no rack. */
    add_agent(a, &A1, "cpus:1;mem:64");
    alloc_run(a, 0);
    ck_assert_uint_eq(rec.noffers, 1);
    ck_assert_str_eq(rec.offers[0].role, "r2");
    rec_clear(&rec);

    /* Options replaced without constraints: r1 gets the next agent. */
    ck_assert_int_eq(
        alloc_framework_set_options(a, fw, NULL, 0, err, sizeof(err)), 0);
    add_agent(a, &A2, "cpus:1;mem:64");
    alloc_run(a, SEC);
    ck_assert_uint_eq(rec.noffers, 1);
    ck_assert_str_eq(rec.offers[0].role, "r1");
    alloc_free(a);
    rec_free(&rec);
}
END_TEST

/* Mesos's InvalidTextMatches, and the other refusals: nothing changes. */
START_TEST(test_offer_constraints_invalid)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    struct alloc_framework *fw = add_fw(a, &F1, "r", 0);
    char err[256];
    struct alloc_constraint bad_re = {ALLOC_SEL_ATTRIBUTE, "foo",
                                      ALLOC_PRED_TEXT_MATCHES, "(unclosed"};
    struct alloc_constraint_group g = {&bad_re, 1};
    struct alloc_role_options o = {.role = "r", .groups = &g, .ngroups = 1};
    ck_assert_int_eq(alloc_role_options_check(a, &o, 1, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "bad regex"));
    ck_assert_int_eq(
        alloc_framework_set_options(a, fw, &o, 1, err, sizeof(err)), -1);
    struct alloc_constraint_group empty = {NULL, 0};
    o.groups = &empty;
    ck_assert_int_eq(alloc_role_options_check(a, &o, 1, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "empty group"));
    struct alloc_constraint no_value = {ALLOC_SEL_ATTRIBUTE, "foo",
                                        ALLOC_PRED_TEXT_EQUALS, NULL};
    struct alloc_constraint_group g2 = {&no_value, 1};
    o.groups = &g2;
    ck_assert_int_eq(alloc_role_options_check(a, &o, 1, err, sizeof(err)), -1);
    struct alloc_constraint bad_pred = {ALLOC_SEL_ATTRIBUTE, "foo", 99, NULL};
    struct alloc_constraint_group g3 = {&bad_pred, 1};
    o.groups = &g3;
    ck_assert_int_eq(alloc_role_options_check(a, &o, 1, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "unknown predicate"));
    /* The framework still has no constraints: it is offered the agent. */
    add_agent(a, &A1, "cpus:1;mem:64");
    alloc_run(a, 0);
    ck_assert_uint_eq(rec.noffers, 1);
    alloc_free(a);
    rec_free(&rec);
}
END_TEST

/* The ids of role r's eligible clients, in order, joined by ','. */
static void eligible_order(const struct role *r, char *out, size_t len)
{
    out[0] = '\0';
    for (uint32_t i = 0; i < r->neligible; i++) {
        size_t at = strlen(out);
        snprintf(out + at, len - at, "%s%s", i ? "," : "",
                 r->eligible[i]->client->fw->id);
    }
}

/* Mesos's DRFSorterTest.AllocationCountTieBreak, through the allocator:
 * equal shares order by allocation count, then by framework ID; giving
 * back resources does not reset the count. */
START_TEST(test_allocation_count_tie_break)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    static const char *const names[] = {"e", "d", "c", "b", "a"};
    struct alloc_framework *fws[5];
    for (int i = 0; i < 5; i++) {
        fws[i] = add_fw(a, &F1, "r", 0);
        alloc_framework_set_id(a, fws[i], names[i]);
    }
    struct alloc_framework *fa = fws[4], *fb = fws[3], *fc = fws[2],
                           *fd = fws[1], *fe = fws[0];
    /* Allocations as used resources of agents: a, b, e one of 3; c three
     * of 1; d one of 2 and one of 1. */
    struct {
        struct alloc_framework *fw;
        const char *res;
    } uses[] = {{fa, "cpus:3;mem:3"}, {fb, "cpus:3;mem:3"},
                {fc, "cpus:1;mem:1"}, {fc, "cpus:1;mem:1"},
                {fc, "cpus:1;mem:1"}, {fd, "cpus:2;mem:2"},
                {fd, "cpus:1;mem:1"}, {fe, "cpus:3;mem:3"}};
    struct alloc_agent *c_agent = NULL;
    for (size_t i = 0; i < sizeof(uses) / sizeof(uses[0]); i++) {
        res_list total = parse(uses[i].res);
        res_list used = parse_alloc(uses[i].res, "r");
        struct alloc_used u = {uses[i].fw, &used};
        struct alloc_agent *ag;
        ck_assert_int_eq(alloc_agent_add(a, NULL, &total, ALLOC_AGENT_ALL_CAPS,
                                         NULL, &u, 1, &ag),
                         0);
        if (uses[i].fw == fc)
            c_agent = ag;
        res_list_clear(&total);
        res_list_clear(&used);
    }
    alloc_run(a, 0); /* nothing is free; rebuilds the orders */
    ck_assert_uint_eq(rec.noffers, 0);
    struct role *r = alloc_role_find(a, "r");
    char order[64];
    eligible_order(r, order, sizeof(order));
    ck_assert_str_eq(order, "a,b,e,d,c");

    /* c gives back 1 of its 3: lowest share, first. */
    res_list back = parse_alloc("cpus:1;mem:1", "r");
    ck_assert_int_eq(alloc_recover(a, c_agent, fc, &back, 0, 0), 0);
    res_list_clear(&back);
    eligible_order(r, order, sizeof(order));
    ck_assert_str_eq(order, "c,a,b,e,d");

    /* Deactivating and reactivating keeps the counts. */
    alloc_framework_set_active(a, fc, false);
    alloc_framework_set_active(a, fc, true);
    eligible_order(r, order, sizeof(order));
    ck_assert_str_eq(order, "c,a,b,e,d");
    alloc_free(a);
    rec_free(&rec);
}
END_TEST

/* Equal shares and counts: the lower framework ID is offered first, not
 * the framework added first. */
START_TEST(test_tie_break_by_name)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    struct alloc_framework *f2 = add_fw(a, &F2, "r", 0);
    alloc_framework_set_id(a, f2, "fw-2");
    struct alloc_framework *f1 = add_fw(a, &F1, "r", 0);
    alloc_framework_set_id(a, f1, "fw-1");
    add_agent(a, &A1, "cpus:1;mem:64");
    alloc_run(a, 0);
    expect_one_offer(&rec, &F1, &A1, "cpus:1;mem:64");
    alloc_free(a);
    rec_free(&rec);
}
END_TEST

/* An offer does not restart the walk over an agent (Mesos walks the order
 * it sorted for the agent to its end): after f1 of role a takes the
 * agent's plain resources, a's share is above b's, yet the revocable cpus
 * left go to a's next framework, f2, not to b's f3. */
START_TEST(test_walk_continues_after_offer)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    struct alloc_framework *f1 = add_fw(a, &F1, "a", 0);
    alloc_framework_set_id(a, f1, "f1");
    struct alloc_framework *f2 = add_fw(a, &F2, "a", ALLOC_FW_REVOCABLE);
    alloc_framework_set_id(a, f2, "f2");
    struct alloc_framework *f3 = add_fw(a, &F3, "b", ALLOC_FW_REVOCABLE);
    alloc_framework_set_id(a, f3, "f3");
    struct alloc_agent *ag = add_agent(a, &A1, "cpus:1;mem:64");
    res_list rev = parse("cpus:2");
    rev.v[0].revocable = true;
    ck_assert_int_eq(alloc_agent_update_oversubscribed(a, ag, &rev), 0);
    res_list_clear(&rev);
    alloc_run(a, 0);
    ck_assert_uint_eq(rec.noffers, 2);
    ck_assert_ptr_eq(rec.offers[0].fw, &F1);
    ck_assert_int_eq(res_list_scalar(&rec.offers[0].res, "mem"), 64000);
    ck_assert_ptr_eq(rec.offers[1].fw, &F2);
    ck_assert(rec.offers[1].res.n == 1 && rec.offers[1].res.v[0].revocable);
    alloc_free(a);
    rec_free(&rec);
}
END_TEST

/* Stage 1 (quota guarantees) walks the role tree in DRF order, as Mesos
 * walks its role sorter's order: b (a small share) comes before a/x,
 * whose own share is 0 but whose parent a holds most of the cluster. A
 * flat list of unsatisfied roles by their own share would pick a/x. */
START_TEST(test_quota_stage1_in_role_tree_order)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    struct alloc_framework *fx = add_fw(a, &F1, "a/x", 0);
    alloc_framework_set_id(a, fx, "fx");
    struct alloc_framework *fy = add_fw(a, &F2, "a/y", 0);
    alloc_framework_set_id(a, fy, "fy");
    struct alloc_framework *fb = add_fw(a, &F3, "b", 0);
    alloc_framework_set_id(a, fb, "fb");
    struct {
        struct alloc_framework *fw;
        const char *role, *res;
    } uses[] = {{fy, "a/y", "cpus:10;mem:1000"}, {fb, "b", "cpus:1;mem:10"}};
    for (size_t i = 0; i < 2; i++) {
        res_list total = parse(uses[i].res);
        res_list used = parse_alloc(uses[i].res, uses[i].role);
        struct alloc_used u = {uses[i].fw, &used};
        struct alloc_agent *ag;
        ck_assert_int_eq(alloc_agent_add(a, NULL, &total, ALLOC_AGENT_ALL_CAPS,
                                         NULL, &u, 1, &ag),
                         0);
        res_list_clear(&total);
        res_list_clear(&used);
    }
    struct alloc_quantity g[] = {q_cpus(100000)};
    struct alloc_quantities gq = {g, 1};
    ck_assert_int_eq(alloc_role_set_quota(a, "a/x", &gq, NULL), 0);
    ck_assert_int_eq(alloc_role_set_quota(a, "b", &gq, NULL), 0);
    alloc_run(a, 0);
    ck_assert_uint_eq(rec.noffers, 0);
    add_agent(a, &A1, "cpus:4;mem:64");
    alloc_run(a, 0);
    ck_assert_uint_ge(rec.noffers, 1);
    ck_assert_ptr_eq(rec.offers[0].fw, &F3);
    ck_assert_ptr_eq(rec.offers[0].ag, &A1);
    ck_assert_int_eq(res_list_scalar(&rec.offers[0].res, "cpus"), 4000);
    alloc_free(a);
    rec_free(&rec);
}
END_TEST

/* ---- Random sorter ------------------------------------------------------ */

static struct alloc *new_alloc_sorters(struct rec *rec,
                                       enum alloc_sorter_kind roles,
                                       enum alloc_sorter_kind frameworks)
{
    struct alloc_options o;
    alloc_options_default(&o);
    o.on_offer = on_offer;
    o.cb_arg = rec;
    o.seed = 12345;
    o.role_sorter = roles;
    o.framework_sorter = frameworks;
    return alloc_new(&o);
}

/* Offer one agent `trials` times (added, offered, removed) and count which
 * framework udata got it: counts[i] for fws[i]. */
static void first_offers(struct alloc *a, struct rec *rec, int trials,
                         void *const *fws, int n, int *counts)
{
    for (int t = 0; t < trials; t++) {
        struct alloc_agent *ag = add_agent(a, &A1, "cpus:1;mem:64");
        alloc_run(a, t);
        ck_assert_uint_eq(rec->noffers, 1);
        for (int i = 0; i < n; i++)
            if (rec->offers[0].fw == fws[i])
                counts[i]++;
        rec_clear(rec);
        alloc_agent_remove(a, ag);
    }
}

/* Mesos's RandomSorterTest.ProbabilityDistribution, through the
 * allocator: sibling roles weighing 1, 2 and 3 get an agent first with
 * probabilities 1/6, 2/6 and 3/6. */
START_TEST(test_random_sorter_probability_distribution)
{
    struct rec rec = {0};
    struct alloc *a =
        new_alloc_sorters(&rec, ALLOC_SORTER_RANDOM, ALLOC_SORTER_DRF);
    add_fw(a, &F1, "r1", 0);
    add_fw(a, &F2, "r2", 0);
    add_fw(a, &F3, "r3", 0);
    ck_assert_int_eq(alloc_role_set_weight(a, "r2", 2.0), 0);
    ck_assert_int_eq(alloc_role_set_weight(a, "r3", 3.0), 0);
    void *fws[] = {&F1, &F2, &F3};
    int counts[3] = {0};
    const int trials = 6000;
    first_offers(a, &rec, trials, fws, 3, counts);
    for (int i = 0; i < 3; i++) {
        double got = (double)counts[i] / trials, want = (i + 1) / 6.0;
        ck_assert_msg(fabs(got - want) < 0.03, "role %d: %.3f, want %.3f",
                      i + 1, got, want);
    }
    alloc_free(a);
    rec_free(&rec);
}
END_TEST

/* Mesos's RandomSorterTest.HierarchicalProbabilityDistribution: "a"
 * weighs 2 against "b"'s 1, and splits its part evenly between "a/x" and
 * "a/y": each of the three leaves comes first a third of the time. */
START_TEST(test_random_sorter_hierarchical_probability_distribution)
{
    struct rec rec = {0};
    struct alloc *a =
        new_alloc_sorters(&rec, ALLOC_SORTER_RANDOM, ALLOC_SORTER_DRF);
    add_fw(a, &F1, "a/x", 0);
    add_fw(a, &F2, "a/y", 0);
    add_fw(a, &F3, "b", 0);
    ck_assert_int_eq(alloc_role_set_weight(a, "a", 2.0), 0);
    void *fws[] = {&F1, &F2, &F3};
    int counts[3] = {0};
    const int trials = 6000;
    first_offers(a, &rec, trials, fws, 3, counts);
    for (int i = 0; i < 3; i++) {
        double got = (double)counts[i] / trials;
        ck_assert_msg(fabs(got - 1.0 / 3) < 0.03, "leaf %d: %.3f", i, got);
    }
    alloc_free(a);
    rec_free(&rec);
}
END_TEST

/* Mesos's RandomSorter shuffles the leaves of the whole role tree at once
 * by their relative weights (its SortInfo), not level by level: with
 * "a/x", "a/y" and "b" weighing 1 each, the leaves weigh 1/4, 1/4 and 1/2,
 * so "b" comes between a's two leaves a third of the time (x, b, y: 1/4 x
 * 2/3; y, b, x the same), which a level-by-level draw never does. Each
 * role is limited to a third of the agent, so one cycle makes three
 * offers, in the walk's order. */
START_TEST(test_random_sorter_flattened_order)
{
    struct rec rec = {0};
    struct alloc *a =
        new_alloc_sorters(&rec, ALLOC_SORTER_RANDOM, ALLOC_SORTER_DRF);
    add_fw(a, &F1, "a/x", 0);
    add_fw(a, &F2, "a/y", 0);
    add_fw(a, &F3, "b", 0);
    struct alloc_quantity lim[] = {{"cpus", 1000}, {"mem", 10000}};
    struct alloc_quantities limit = {lim, 2};
    struct alloc_quantities none = {NULL, 0};
    ck_assert_int_eq(alloc_role_set_quota(a, "a/x", &none, &limit), 0);
    ck_assert_int_eq(alloc_role_set_quota(a, "a/y", &none, &limit), 0);
    ck_assert_int_eq(alloc_role_set_quota(a, "b", &none, &limit), 0);
    const int trials = 6000;
    int interleaved = 0, b_first = 0;
    for (int t = 0; t < trials; t++) {
        struct alloc_agent *ag = add_agent(a, &A1, "cpus:3;mem:30");
        alloc_run(a, t);
        ck_assert_uint_eq(rec.noffers, 3);
        if (rec.offers[1].fw == &F3)
            interleaved++;
        if (rec.offers[0].fw == &F3)
            b_first++;
        rec_clear(&rec);
        alloc_agent_remove(a, ag);
    }
    double got = (double)interleaved / trials;
    ck_assert_msg(fabs(got - 1.0 / 3) < 0.03, "b second: %.3f", got);
    got = (double)b_first / trials;
    ck_assert_msg(fabs(got - 0.5) < 0.03, "b first: %.3f", got);

    /* A role with frameworks and child roles has a "." leaf weighing 1
     * beside its children: "a" (own framework F4) now splits its half
     * three ways. */
    add_fw(a, &F4, "a", 0);
    ck_assert_int_eq(alloc_role_set_quota(a, "a", &none, &limit), 0);
    int first[4] = {0};
    void *fws[] = {&F1, &F2, &F3, &F4};
    for (int t = 0; t < trials; t++) {
        struct alloc_agent *ag = add_agent(a, &A1, "cpus:3;mem:30");
        alloc_run(a, trials + t);
        ck_assert_uint_ge(rec.noffers, 1);
        for (int i = 0; i < 4; i++)
            if (rec.offers[0].fw == fws[i])
                first[i]++;
        rec_clear(&rec);
        alloc_agent_remove(a, ag);
    }
    double want[4] = {1.0 / 6, 1.0 / 6, 0.5, 1.0 / 6};
    for (int i = 0; i < 4; i++) {
        got = (double)first[i] / trials;
        ck_assert_msg(fabs(got - want[i]) < 0.03, "leaf %d first: %.3f", i,
                      got);
    }
    alloc_free(a);
    rec_free(&rec);
}
END_TEST

/* The random framework sorter ignores shares: a framework holding most of
 * the cluster, never first under DRF, is first about a third of the time
 * among three. */
START_TEST(test_random_framework_sorter_ignores_shares)
{
    for (int random = 0; random <= 1; random++) {
        struct rec rec = {0};
        struct alloc *a =
            new_alloc_sorters(&rec, ALLOC_SORTER_DRF,
                              random ? ALLOC_SORTER_RANDOM : ALLOC_SORTER_DRF);
        struct alloc_framework *big = add_fw(a, &F1, "r", 0);
        add_fw(a, &F2, "r", 0);
        add_fw(a, &F3, "r", 0);
        res_list total = parse("cpus:100;mem:1000");
        res_list used = parse_alloc("cpus:100;mem:1000", "r");
        struct alloc_used u = {big, &used};
        struct alloc_agent *ag;
        ck_assert_int_eq(alloc_agent_add(a, &A2, &total, ALLOC_AGENT_ALL_CAPS,
                                         NULL, &u, 1, &ag),
                         0);
        res_list_clear(&total);
        res_list_clear(&used);
        void *fws[] = {&F1, &F2, &F3};
        int counts[3] = {0};
        const int trials = 3000;
        first_offers(a, &rec, trials, fws, 3, counts);
        double got = (double)counts[0] / trials;
        if (random)
            ck_assert_msg(fabs(got - 1.0 / 3) < 0.04, "big: %.3f", got);
        else
            ck_assert_int_eq(counts[0], 0);
        alloc_free(a);
        rec_free(&rec);
    }
}
END_TEST

/* Random role sorter: a role at its quota limit still comes after every
 * role that is not (it can take only reserved or revocable resources). */
START_TEST(test_random_sorter_limit_blocked_last)
{
    struct rec rec = {0};
    struct alloc *a =
        new_alloc_sorters(&rec, ALLOC_SORTER_RANDOM, ALLOC_SORTER_RANDOM);
    add_fw(a, &F1, "limited", 0);
    add_fw(a, &F2, "free", 0);
    struct alloc_quantity lim[] = {{"cpus", 0}, {"mem", 0}};
    struct alloc_quantities limit = {lim, 2};
    struct alloc_quantities none = {NULL, 0};
    ck_assert_int_eq(alloc_role_set_quota(a, "limited", &none, &limit), 0);
    void *fws[] = {&F1, &F2};
    int counts[2] = {0};
    first_offers(a, &rec, 200, fws, 2, counts);
    ck_assert_int_eq(counts[0], 0);
    ck_assert_int_eq(counts[1], 200);
    alloc_free(a);
    rec_free(&rec);
}
END_TEST

/* Random role sorter, stage 1: a role with an unmet guarantee is offered
 * the agent before any other, whatever the draw (Mesos's first stage walks
 * only roles below their guarantees). */
START_TEST(test_random_sorter_guarantee_first)
{
    struct rec rec = {0};
    struct alloc *a =
        new_alloc_sorters(&rec, ALLOC_SORTER_RANDOM, ALLOC_SORTER_RANDOM);
    add_fw(a, &F1, "guaranteed", 0);
    add_fw(a, &F2, "other", 0);
    add_fw(a, &F3, "third", 0);
    struct alloc_quantity g[] = {{"cpus", 1000}, {"mem", 64000}};
    struct alloc_quantities guarantee = {g, 2};
    struct alloc_quantities none = {NULL, 0};
    ck_assert_int_eq(alloc_role_set_quota(a, "guaranteed", &guarantee, &none),
                     0);
    void *fws[] = {&F1, &F2, &F3};
    int counts[3] = {0};
    first_offers(a, &rec, 300, fws, 3, counts);
    ck_assert_int_eq(counts[0], 300);
    alloc_free(a);
    rec_free(&rec);
}
END_TEST

/* After Mesos's MasterTest.AgentDomainDifferentRegion, at the allocator:
 * an agent in another region than the master's is offered only to
 * REGION_AWARE frameworks; agents in the same region or without a domain
 * to everyone. */
START_TEST(test_remote_agents_only_to_region_aware)
{
    struct rec rec = {0};
    struct alloc_options o;
    alloc_options_default(&o);
    o.on_offer = on_offer;
    o.cb_arg = &rec;
    o.region = "eu";
    struct alloc *a = alloc_new(&o);
    add_fw(a, &F1, "r", 0);
    struct alloc_agent *remote = add_agent(a, &A1, "cpus:1;mem:64");
    alloc_agent_set_info(a, remote, "h1", "us", "us-1", NULL, 0);
    alloc_run(a, 0);
    ck_assert_uint_eq(rec.noffers, 0);

    struct alloc_agent *local = add_agent(a, &A2, "cpus:1;mem:64");
    alloc_agent_set_info(a, local, "h2", "eu", "eu-1", NULL, 0);
    add_agent(a, &A3, "cpus:1;mem:64"); /* no domain: local */
    alloc_run(a, SEC);
    ck_assert_uint_eq(rec.noffers, 2);
    for (uint32_t i = 0; i < rec.noffers; i++)
        ck_assert_ptr_ne(rec.offers[i].ag, &A1);
    rec_clear(&rec);

    add_fw(a, &F2, "r", ALLOC_FW_REGION_AWARE);
    alloc_run(a, 2 * SEC);
    expect_one_offer(&rec, &F2, &A1, "cpus:1;mem:64");
    alloc_free(a);
    rec_free(&rec);
}
END_TEST

static Suite *alloc_suite(void)
{
    Suite *s = suite_create("alloc");
    TCase *tc = tcase_create("cases");
    tcase_add_test(tc, test_unreserved_drf);
    tcase_add_test(tc, test_reserved_only_to_role);
    tcase_add_test(tc, test_filter_expiry);
    tcase_add_test(tc, test_filter_expiry_wakes_quiet_agent);
    tcase_add_test(tc, test_total_scalar_kept);
    tcase_add_test(tc, test_filter_expiry_with_agent_churn);
    tcase_add_test(tc, test_filter_subset_semantics);
    tcase_add_test(tc, test_suppress_and_revive);
    tcase_add_test(tc, test_min_allocatable);
    tcase_add_test(tc, test_revocable_only_to_capable);
    tcase_add_test(tc, test_gpu_agents_only_to_gpu_frameworks);
    tcase_add_test(tc, test_weights);
    tcase_add_test(tc, test_quota_guarantee_first);
    tcase_add_test(tc, test_quota_limits_and_headroom);
    tcase_add_test(tc, test_unavailability_and_inverse_offers);
    tcase_add_test(tc, test_recover_rejects_what_is_not_held);
    tcase_add_test(tc, test_remove_framework_and_agent);
    tcase_add_test(tc, test_agent_with_used_resources);
    tcase_add_test(tc, test_update_available_and_allocation);
    tcase_add_test(tc, test_update_allocation_long_total);
    tcase_add_test(tc, test_parse_min_allocatable);
    tcase_add_test(tc, test_names_capped);
    tcase_add_test(tc, test_names_full_table_quota);
    tcase_add_test(tc, test_parse_min_allocatable_name_cap);
    tcase_add_test(tc, test_decline_forever_exhausts);
    tcase_add_test(tc, test_framework_min_allocatable);
    tcase_add_test(tc, test_framework_empty_min_allocatable);
    tcase_add_test(tc, test_offer_constraints_predicates);
    tcase_add_test(tc, test_offer_constraints_groups);
    tcase_add_test(tc, test_offer_constraints_two_roles);
    tcase_add_test(tc, test_offer_constraints_invalid);
    tcase_add_test(tc, test_allocation_count_tie_break);
    tcase_add_test(tc, test_tie_break_by_name);
    tcase_add_test(tc, test_walk_continues_after_offer);
    tcase_add_test(tc, test_quota_stage1_in_role_tree_order);
    tcase_add_test(tc, test_random_sorter_probability_distribution);
    tcase_add_test(tc,
                   test_random_sorter_hierarchical_probability_distribution);
    tcase_add_test(tc, test_random_sorter_flattened_order);
    tcase_add_test(tc, test_random_sorter_guarantee_first);
    tcase_add_test(tc, test_random_framework_sorter_ignores_shares);
    tcase_add_test(tc, test_random_sorter_limit_blocked_last);
    tcase_add_test(tc, test_remote_agents_only_to_region_aware);
    tcase_add_test(tc, test_totals_saturate);
    suite_add_tcase(s, tc);
    TCase *props = tcase_create("properties");
    tcase_set_timeout(props, 120);
    tcase_add_test(props, test_random_clusters);
    tcase_add_test(props, test_random_clusters_with_quota);
    tcase_add_test(props, test_drf_converges_to_weighted_shares);
    tcase_add_test(props, test_guarantees_met_before_fair_share);
    suite_add_tcase(s, props);
    return s;
}

OFFERD_CHECK_MAIN(alloc_suite)
