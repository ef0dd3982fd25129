/*
 * Tests of how the allocator produces its offers (src/allocator/alloc.c,
 * make_offer and its callers): what the offer callback is handed, that the
 * agent's resources and the client's holding stay exact when an offer is
 * cut from them, and that a cycle in steady state allocates nothing for
 * plain, reserved, revocable and quota offers (common/mem.h counts the
 * allocations). Also res_list_copy_allocated and res_list_copy_packed,
 * the copies the master makes of each offer.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocator/alloc.h"
#include "check_main.h"
#include "common/mem.h"
#include "common/resources.h"

#define SEC 1000000000LL

/* ---- A harness whose callback's own allocations are counted apart -------- */

struct offer_rec {
    void *fw;
    void *ag;
    res_list res; /* with allocation role */
};

struct rec {
    struct offer_rec v[64];
    uint32_t n;
    unsigned long long cb_allocs; /* allocations made inside the callback */
};

static void on_offer(void *arg, void *fw, void *ag, const char *role,
                     const res_list *res,
                     const struct alloc_unavailability *unav)
{
    (void)unav;
    unsigned long long before = mem_allocations();
    struct rec *r = arg;
    ck_assert_uint_lt(r->n, 64);
    for (uint32_t i = 0; i < res->n; i++)
        ck_assert_ptr_null(res->v[i].alloc_role);
    struct offer_rec *o = &r->v[r->n++];
    o->fw = fw;
    o->ag = ag;
    res_list_init(&o->res);
    res_list_copy_allocated(&o->res, res, role);
    r->cb_allocs += mem_allocations() - before;
}

static void rec_clear(struct rec *r)
{
    for (uint32_t i = 0; i < r->n; i++)
        res_list_clear(&r->v[i].res);
    r->n = 0;
    r->cb_allocs = 0;
}

static res_list parse(const char *text)
{
    res_list l = RES_LIST_INIT;
    char err[256];
    ck_assert_msg(res_parse_text(text, NULL, &l, err, sizeof(err)) == 0,
                  "%s: %s", text, err);
    return l;
}

struct fixture {
    struct alloc *a;
    struct rec rec;
    struct alloc_framework *fws[4];
    struct alloc_agent *ags[4];
    int64_t now;
};

static void fx_init(struct fixture *f)
{
    memset(f, 0, sizeof(*f));
    struct alloc_options o;
    alloc_options_default(&o);
    o.on_offer = on_offer;
    o.cb_arg = &f->rec;
    f->a = alloc_new(&o);
    f->now = SEC;
}

static void fx_framework(struct fixture *f, int i, const char *role,
                         uint32_t caps)
{
    f->fws[i] = alloc_framework_add(f->a, f->fws + i, &role, 1, caps, true);
}

static void fx_agent(struct fixture *f, int i, const char *text)
{
    res_list l = parse(text);
    ck_assert_int_eq(alloc_agent_add(f->a, f->ags + i, &l, ALLOC_AGENT_ALL_CAPS,
                                     NULL, NULL, 0, &f->ags[i]),
                     0);
    res_list_clear(&l);
}

/* An agent part of which (used_text, allocated to role) framework fw
 * already uses: offers to fw join what it holds there. */
static void fx_agent_used(struct fixture *f, int i, const char *text, int fw,
                          const char *used_text, const char *role)
{
    res_list l = parse(text), used = parse(used_text);
    res_list_allocate(&used, role);
    struct alloc_used u = {f->fws[fw], &used};
    ck_assert_int_eq(alloc_agent_add(f->a, f->ags + i, &l, ALLOC_AGENT_ALL_CAPS,
                                     NULL, &u, 1, &f->ags[i]),
                     0);
    res_list_clear(&used);
    res_list_clear(&l);
}

static struct alloc_framework *fw_of(const struct offer_rec *o)
{
    return *(struct alloc_framework **)o->fw;
}

static struct alloc_agent *ag_of(const struct offer_rec *o)
{
    return *(struct alloc_agent **)o->ag;
}

/* Give every recorded offer back, without a filter. */
static void fx_recover_all(struct fixture *f)
{
    for (uint32_t i = 0; i < f->rec.n; i++) {
        struct offer_rec *o = &f->rec.v[i];
        ck_assert_int_eq(
            alloc_recover(f->a, ag_of(o), fw_of(o), &o->res, 0, f->now), 0);
    }
    rec_clear(&f->rec);
}

/* Run a cycle over every agent; returns the allocations it made outside
 * the offer callback. */
static unsigned long long fx_cycle(struct fixture *f, uint32_t *offers)
{
    f->now += SEC;
    alloc_candidates_all(f->a);
    unsigned long long before = mem_allocations();
    *offers = alloc_run(f->a, f->now);
    return mem_allocations() - before - f->rec.cb_allocs;
}

static void fx_free(struct fixture *f)
{
    rec_clear(&f->rec);
    alloc_free(f->a);
}

/* Warm up (two cycles, so every list has grown to its size), then check
 * that `cycles` more cycles, each after every offer came back, make
 * `want_offers` offers and allocate nothing outside the callback. */
static void expect_steady_state_allocates_nothing(struct fixture *f,
                                                  uint32_t want_offers)
{
    uint32_t offers;
    for (int k = 0; k < 2; k++) {
        (void)fx_cycle(f, &offers);
        ck_assert_uint_eq(offers, want_offers);
        fx_recover_all(f);
    }
    for (int k = 0; k < 3; k++) {
        unsigned long long allocs = fx_cycle(f, &offers);
        ck_assert_uint_eq(offers, want_offers);
        ck_assert_msg(allocs == 0, "cycle %d allocated %llu times", k, allocs);
        fx_recover_all(f);
    }
}

/* ---- Allocation-free cycles -------------------------------------------- */

START_TEST(test_plain_offers_allocate_nothing)
{
    struct fixture f;
    fx_init(&f);
    fx_framework(&f, 0, "*", 0);
    fx_framework(&f, 1, "*", 0);
    for (int i = 0; i < 3; i++)
        fx_agent(&f, i, "cpus:4;mem:1024;disk:1024;ports:[31000-32000]");
    expect_steady_state_allocates_nothing(&f, 3);
    fx_free(&f);
}
END_TEST

START_TEST(test_reserved_offers_allocate_nothing)
{
    struct fixture f;
    fx_init(&f);
    fx_framework(&f, 0, "eng", 0);
    fx_agent(&f, 0, "cpus(eng):4;mem(eng):1024;cpus:2;mem:512");
    fx_agent_used(&f, 1, "cpus(eng):2;disk(eng):100;ports:[1-10]", 0,
                  "cpus(eng):1;ports:[1-2]", "eng");
    expect_steady_state_allocates_nothing(&f, 2);
    fx_free(&f);
}
END_TEST

START_TEST(test_revocable_offers_allocate_nothing)
{
    struct fixture f;
    fx_init(&f);
    fx_framework(&f, 0, "*", ALLOC_FW_REVOCABLE);
    fx_agent_used(&f, 0, "cpus:2;mem:512", 0, "mem:128", "*");
    struct resource r;
    res_init_scalar(&r, "cpus", 8000);
    r.revocable = true;
    res_list rev = RES_LIST_INIT;
    res_list_add(&rev, &r);
    res_clear(&r);
    ck_assert_int_eq(alloc_agent_update_oversubscribed(f.a, f.ags[0], &rev), 0);
    res_list_clear(&rev);
    expect_steady_state_allocates_nothing(&f, 1);
    fx_free(&f);
}
END_TEST

START_TEST(test_quota_offers_allocate_nothing)
{
    /* NonQuotaVsQuota's shape: guarantees of whole agents, so stage 1
     * offers whole agents and stage 2 the rest. */
    struct fixture f;
    fx_init(&f);
    struct alloc_quantity q[] = {
        {"cpus", 4000}, {"mem", 2048000}, {"disk", 2048000}};
    struct alloc_quantities g = {q, 3};
    ck_assert_int_eq(alloc_role_set_quota(f.a, "q", &g, &g), 0);
    fx_framework(&f, 0, "q", 0);
    fx_framework(&f, 1, "other", 0);
    for (int i = 0; i < 3; i++)
        fx_agent(&f, i, "cpus:2;mem:1024;disk:1024");
    expect_steady_state_allocates_nothing(&f, 3);
    fx_free(&f);
}
END_TEST

/* ---- Offers cut from an agent ---------------------------------------------
 */

START_TEST(test_quota_split_keeps_agent_and_holdings_exact)
{
    /* Two roles guaranteed half an agent each (LargeAndSmallQuota's small
     * roles): stage 1 cuts the agent in two. */
    struct fixture f;
    fx_init(&f);
    struct alloc_quantity q[] = {{"cpus", 1000}, {"mem", 512000}};
    struct alloc_quantities g = {q, 2};
    ck_assert_int_eq(alloc_role_set_quota(f.a, "a", &g, &g), 0);
    ck_assert_int_eq(alloc_role_set_quota(f.a, "b", &g, &g), 0);
    fx_framework(&f, 0, "a", 0);
    fx_framework(&f, 1, "b", 0);
    fx_agent(&f, 0, "cpus:2;mem:1024;ports:[1-4]");
    uint32_t offers;
    (void)fx_cycle(&f, &offers);
    ck_assert_uint_eq(offers, 2);
    fx_recover_all(&f);
    unsigned long long allocs = fx_cycle(&f, &offers);
    ck_assert_uint_eq(offers, 2);
    /* Cutting a scalar copies its entry into the new holding: a handful of
     * allocations, not a list per step. */
    ck_assert_uint_le(allocs, 6);
    res_list half_a = parse("cpus:1;mem:512;ports:[1-4]");
    res_list half_b = parse("cpus:1;mem:512");
    for (uint32_t i = 0; i < 2; i++) {
        struct offer_rec *o = &f.rec.v[i];
        res_list bare = RES_LIST_INIT;
        res_list_copy_allocated(&bare, &o->res, NULL);
        bool is_a = fw_of(o) == f.fws[0];
        /* Mesos's stage 1 offers the non-scalars with the first cut. */
        ck_assert_msg(res_list_equal(&bare, i == 0 ? &half_a : &half_b),
                      "offer %u to %s", i, is_a ? "a" : "b");
        res_list_clear(&bare);
    }
    ck_assert_uint_eq(alloc_agent_available(f.ags[0])->n, 0);
    fx_recover_all(&f);
    res_list whole = parse("cpus:2;mem:1024;ports:[1-4]");
    ck_assert(res_list_equal(alloc_agent_available(f.ags[0]), &whole));
    res_list_clear(&whole);
    res_list_clear(&half_a);
    res_list_clear(&half_b);
    fx_free(&f);
}
END_TEST

START_TEST(test_offer_cut_by_limit_leaves_the_rest)
{
    /* A limit of 1 cpu on an agent of 3: the offer is cut, the rest stays
     * available, and giving the offer back restores the agent. */
    struct fixture f;
    fx_init(&f);
    struct alloc_quantity lim[] = {{"cpus", 1000}};
    struct alloc_quantities l = {lim, 1};
    ck_assert_int_eq(alloc_role_set_quota(f.a, "capped", NULL, &l), 0);
    fx_framework(&f, 0, "capped", 0);
    fx_agent(&f, 0, "cpus:3;mem:256");
    uint32_t offers;
    (void)fx_cycle(&f, &offers);
    ck_assert_uint_eq(offers, 1);
    res_list want = parse("cpus:1;mem:256");
    res_list bare = RES_LIST_INIT;
    res_list_copy_allocated(&bare, &f.rec.v[0].res, NULL);
    ck_assert(res_list_equal(&bare, &want));
    res_list left = parse("cpus:2");
    ck_assert(res_list_equal(alloc_agent_available(f.ags[0]), &left));
    fx_recover_all(&f);
    res_list whole = parse("cpus:3;mem:256");
    ck_assert(res_list_equal(alloc_agent_available(f.ags[0]), &whole));
    res_list_clear(&whole);
    res_list_clear(&left);
    res_list_clear(&bare);
    res_list_clear(&want);
    fx_free(&f);
}
END_TEST

START_TEST(test_offer_joins_what_the_client_holds)
{
    /* A framework already using part of an agent is offered the rest: the
     * offer is the rest only, and the holding merges both. */
    struct fixture f;
    fx_init(&f);
    fx_framework(&f, 0, "*", 0);
    res_list total = parse("cpus:4;mem:1024;ports:[1-10]");
    res_list used = parse("cpus:1;mem:128;ports:[1-2]");
    res_list_allocate(&used, "*");
    struct alloc_used u = {f.fws[0], &used};
    ck_assert_int_eq(alloc_agent_add(f.a, f.ags, &total, ALLOC_AGENT_ALL_CAPS,
                                     NULL, &u, 1, &f.ags[0]),
                     0);
    uint32_t offers;
    (void)fx_cycle(&f, &offers);
    ck_assert_uint_eq(offers, 1);
    res_list rest = parse("cpus:3;mem:896;ports:[3-10]");
    res_list bare = RES_LIST_INIT;
    res_list_copy_allocated(&bare, &f.rec.v[0].res, NULL);
    ck_assert(res_list_equal(&bare, &rest));
    /* Giving back the offer and then the tasks' resources restores the
     * agent: the holding had both. */
    fx_recover_all(&f);
    ck_assert_int_eq(alloc_recover(f.a, f.ags[0], f.fws[0], &used, 0, f.now),
                     0);
    ck_assert(res_list_equal(alloc_agent_available(f.ags[0]), &total));
    res_list_clear(&bare);
    res_list_clear(&rest);
    res_list_clear(&used);
    res_list_clear(&total);
    fx_free(&f);
}
END_TEST

/* ---- res_list_copy_allocated ----------------------------------------------
 */

START_TEST(test_copy_allocated_matches_copy_then_allocate)
{
    const char *texts[] = {
        "",
        "cpus:1",
        "cpus:4;mem:1024;disk(eng):10;ports:[1-5,7-9];zones:{a,b}",
    };
    const char *roles[] = {"*", "eng/web", NULL};
    for (size_t t = 0; t < sizeof(texts) / sizeof(*texts); t++) {
        for (size_t r = 0; r < sizeof(roles) / sizeof(*roles); r++) {
            for (int pre = 0; pre < 2; pre++) {
                res_list src = parse(texts[t]);
                if (pre) /* already allocated elsewhere: the slow path */
                    res_list_allocate(&src, "old");
                res_list want = RES_LIST_INIT, got = parse("mem:1");
                res_list_copy(&want, &src);
                res_list_allocate(&want, roles[r]);
                res_list_copy_allocated(&got, &src, roles[r]);
                ck_assert_msg(res_list_equal(&got, &want), "%s as %s (%d)",
                              texts[t], roles[r] ? roles[r] : "NULL", pre);
                ck_assert_uint_eq(got.n, want.n);
                for (uint32_t i = 0; i < got.n; i++) {
                    if (roles[r] == NULL)
                        ck_assert_ptr_null(got.v[i].alloc_role);
                    else
                        ck_assert_str_eq(got.v[i].alloc_role, roles[r]);
                }
                res_list_clear(&src);
                res_list_clear(&want);
                res_list_clear(&got);
            }
        }
    }
}
END_TEST

START_TEST(test_copy_allocated_merges_entries_that_differed_by_role)
{
    /* cpus allocated to two roles become one entry under one role. */
    res_list src = RES_LIST_INIT, part = parse("cpus:1");
    res_list_allocate(&part, "a");
    res_list_add_all(&src, &part);
    res_list_allocate(&part, "b");
    res_list_add_all(&src, &part);
    ck_assert_uint_eq(src.n, 2);
    res_list got = RES_LIST_INIT;
    res_list_copy_allocated(&got, &src, "c");
    ck_assert_uint_eq(got.n, 1);
    ck_assert_int_eq(got.v[0].scalar, 2000);
    ck_assert_str_eq(got.v[0].alloc_role, "c");
    res_list_clear(&got);
    res_list_clear(&src);
    res_list_clear(&part);
}
END_TEST

/* A list with every kind of field a packed copy must carry. */
static res_list rich_list(void)
{
    res_list l = parse("cpus:4;mem:1024;ports:[1-5,7-9];zones:{a,b,c}");
    struct resource r;
    res_init_scalar(&r, "disk", 100000);
    struct res_label labels[] = {{"k1", "v1"}, {"k2", NULL}};
    res_push_reservation(&r, RES_RESV_DYNAMIC, "eng", "ops", labels, 2);
    res_push_reservation(&r, RES_RESV_DYNAMIC, "eng/web", NULL, NULL, 0);
    r.disk = xcalloc(1, sizeof(*r.disk));
    r.disk->persistence_id = xstrdup("vol1");
    r.disk->has_volume = true;
    r.disk->volume_mode = RES_VOLUME_RW;
    r.disk->container_path = xstrdup("data");
    r.disk->source = RES_DISK_SOURCE_MOUNT;
    r.disk->source_root = xstrdup("/mnt/a");
    r.provider_id = xstrdup("provider-1");
    res_list_add(&l, &r);
    res_clear(&r);
    return l;
}

START_TEST(test_copy_packed_matches_copy_allocated_in_one_allocation)
{
    res_list src = rich_list();
    const char *roles[] = {"eng/web", "*", NULL};
    for (size_t k = 0; k < sizeof(roles) / sizeof(*roles); k++) {
        res_list want = RES_LIST_INIT, got;
        res_list_copy_allocated(&want, &src, roles[k]);
        unsigned long long before = mem_allocations();
        res_list_copy_packed(&got, &src, roles[k]);
        ck_assert_uint_eq(mem_allocations() - before, 1);
        ck_assert(res_list_equal(&got, &want));
        ck_assert_uint_eq(got.n, want.n);
        /* The copy owns nothing of src's: src can go first. */
        char *text = res_list_render(&got);
        char *wtext = res_list_render(&want);
        ck_assert_str_eq(text, wtext);
        free(text);
        free(wtext);
        /* Reading and copying from it work as from any list. */
        res_list back = RES_LIST_INIT;
        res_list_add_all(&back, &got);
        ck_assert(res_list_equal(&back, &want));
        res_list_clear(&back);
        res_list_free_packed(&got);
        ck_assert_uint_eq(got.n, 0);
        ck_assert_ptr_null(got.v);
        res_list_clear(&want);
    }
    /* Entries already allocated to roles merge as res_list_allocate
     * merges them. */
    res_list two = RES_LIST_INIT, part = parse("cpus:1");
    res_list_allocate(&part, "a");
    res_list_add_all(&two, &part);
    res_list_allocate(&part, "b");
    res_list_add_all(&two, &part);
    res_list got;
    res_list_copy_packed(&got, &two, "c");
    ck_assert_uint_eq(got.n, 1);
    ck_assert_int_eq(got.v[0].scalar, 2000);
    ck_assert_str_eq(got.v[0].alloc_role, "c");
    res_list_free_packed(&got);
    /* An empty list packs to nothing. */
    res_list none = RES_LIST_INIT;
    res_list_copy_packed(&got, &none, "x");
    ck_assert_uint_eq(got.n, 0);
    res_list_free_packed(&got);
    res_list_clear(&part);
    res_list_clear(&two);
    res_list_clear(&src);
}
END_TEST

static Suite *alloc_offers_suite(void)
{
    Suite *s = suite_create("alloc_offers");
    TCase *tc = tcase_create("offers");
    tcase_add_test(tc, test_plain_offers_allocate_nothing);
    tcase_add_test(tc, test_reserved_offers_allocate_nothing);
    tcase_add_test(tc, test_revocable_offers_allocate_nothing);
    tcase_add_test(tc, test_quota_offers_allocate_nothing);
    tcase_add_test(tc, test_quota_split_keeps_agent_and_holdings_exact);
    tcase_add_test(tc, test_offer_cut_by_limit_leaves_the_rest);
    tcase_add_test(tc, test_offer_joins_what_the_client_holds);
    tcase_add_test(tc, test_copy_allocated_matches_copy_then_allocate);
    tcase_add_test(tc,
                   test_copy_allocated_merges_entries_that_differed_by_role);
    tcase_add_test(tc,
                   test_copy_packed_matches_copy_allocated_in_one_allocation);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(alloc_offers_suite)
