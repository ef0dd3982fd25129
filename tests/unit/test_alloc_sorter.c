/*
 * Tests of the allocator's sorted orders (src/allocator/sorter.c) and of
 * the cycle's shortcuts over them (src/allocator/alloc.c): the orders keep
 * their live entries inside a larger buffer and move an entry by the
 * shorter of two shifts, re-centring when a side runs out of room; a
 * covered agent is found by the first word with an uncovered eligible
 * client. Each test drives the allocator through its API and checks the
 * orders against keys recomputed from scratch.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocator/alloc.h"
#include "allocator/alloc_private.h"
#include "check_main.h"
#include "common/mem.h"
#include "common/resources.h"

#define SEC 1000000000LL

/* ---- Recording offers --------------------------------------------------- */

struct offer_rec {
    void *fw;
    void *ag;
    res_list res; /* with its allocation role, as alloc_recover wants it */
};

struct rec {
    struct offer_rec *v;
    uint32_t n, cap;
};

static void on_offer(void *arg, void *fw, void *ag, const char *role,
                     const res_list *res,
                     const struct alloc_unavailability *unav)
{
    (void)unav;
    struct rec *r = arg;
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 64;
        r->v = xreallocarray(r->v, r->cap, sizeof(*r->v));
    }
    struct offer_rec *o = &r->v[r->n++];
    o->fw = fw;
    o->ag = ag;
    res_list_init(&o->res);
    res_list_copy_allocated(&o->res, res, role);
}

/* Forget offer i (the last one takes its place). */
static void rec_drop(struct rec *r, uint32_t i)
{
    res_list_clear(&r->v[i].res);
    r->v[i] = r->v[--r->n];
}

static void rec_free(struct rec *r)
{
    while (r->n > 0)
        rec_drop(r, r->n - 1);
    free(r->v);
}

static struct alloc *new_alloc(struct rec *rec)
{
    struct alloc_options o;
    alloc_options_default(&o);
    o.on_offer = on_offer;
    o.cb_arg = rec;
    return alloc_new(&o);
}

static struct alloc_agent *add_agent(struct alloc *a, void *udata,
                                     const char *text)
{
    res_list l = RES_LIST_INIT;
    char err[256];
    ck_assert_msg(res_parse_text(text, NULL, &l, err, sizeof(err)) == 0, "%s",
                  err);
    struct alloc_agent *ag;
    ck_assert_int_eq(
        alloc_agent_add(a, udata, &l, ALLOC_AGENT_ALL_CAPS, NULL, NULL, 0, &ag),
        0);
    res_list_clear(&l);
    return ag;
}

/* ---- Checking an order ---------------------------------------------------
 * The order sorter.c keeps: (blocked, share, count, name, seq), NULL names
 * after every name; strictly increasing, since seq is unique. */

static int key_cmp(const struct sentry *x, const struct sentry *y)
{
    if (x->blocked != y->blocked)
        return x->blocked ? 1 : -1;
    if (x->share != y->share)
        return x->share < y->share ? -1 : 1;
    if (x->count != y->count)
        return x->count < y->count ? -1 : 1;
    if (x->name != y->name) {
        if (x->name == NULL || y->name == NULL)
            return x->name == NULL ? 1 : -1;
        int c = strcmp(x->name, y->name);
        if (c != 0)
            return c;
    }
    return x->seq < y->seq ? -1 : (x->seq > y->seq ? 1 : 0);
}

/* v[0..n) lies inside buf[0..cap), is strictly sorted, and every entry is
 * marked present. */
static void check_order(struct sentry *const *v, uint32_t n,
                        struct sentry *const *buf, uint32_t cap)
{
    if (n == 0)
        return;
    ck_assert_ptr_nonnull(buf);
    ck_assert(v >= buf && v + n <= buf + cap);
    for (uint32_t i = 0; i < n; i++) {
        ck_assert(v[i]->in_order);
        if (i > 0)
            ck_assert_msg(key_cmp(v[i - 1], v[i]) < 0,
                          "entries %u and %u out of order", i - 1, i);
    }
}

/* Every order of the allocator is sorted, holds exactly the eligible
 * clients (and the roles above them), and its client keys are the shares
 * recomputed from the clients' holdings. */
static void check_orders(struct alloc *a)
{
    if (a->shares_dirty)
        alloc_sorter_rebuild(a);
    uint32_t eligible = 0;
    for (uint32_t i = 0; i < a->nroles; i++) {
        const struct role *r = a->roles[i];
        check_order(r->eligible, r->neligible, r->eligible_buf, r->capeligible);
        check_order(r->order, r->norder, r->order_buf, r->caporder);
        uint32_t own = 0;
        for (uint32_t k = 0; k < r->nclients; k++)
            own += r->clients[k]->eligible;
        ck_assert_uint_eq(r->neligible, own);
        for (uint32_t k = 0; k < r->neligible; k++) {
            const struct client *c = r->eligible[k]->client;
            ck_assert(c->eligible);
            ck_assert(r->eligible[k] == &c->e);
            ck_assert(c->e.share == alloc_share(a, &c->held, 1.0));
            ck_assert_uint_eq(c->e.count, c->nalloc);
        }
        eligible += r->neligible;
    }
    ck_assert_uint_eq(eligible, a->n_eligible);
    check_order(a->root->order, a->root->norder, a->root->order_buf,
                a->root->caporder);
    check_order(a->unsatisfied, a->nunsatisfied, a->unsatisfied_buf,
                a->capunsatisfied);
}

/* ---- Tests ----------------------------------------------------------------
 */

static uint64_t g_rng;

static uint32_t rnd(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (uint32_t)(g_rng >> 16);
}

#define NFW 40
#define NAG 60

/* Offers, declines with and without filters, suppressions and revives in
 * random order, over roles with several frameworks: every order stays
 * sorted and exact after every step (entries move both ways, near and
 * far, and the live window drifts through its buffer). */
START_TEST(test_orders_sorted_under_random_moves)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    static const char *const roles[] = {"r", "r/x", "s", "s/y/z"};
    static char ids[NFW][8];
    static int fw_tok[NFW], ag_tok[NAG];
    struct alloc_framework *fws[NFW];
    struct alloc_agent *ags[NAG];
    g_rng = 0x9e3779b97f4a7c15ULL ^ (uint64_t)_i;
    for (int i = 0; i < NFW; i++) {
        const char *role = roles[i % 4];
        fws[i] = alloc_framework_add(a, &fw_tok[i], &role, 1, 0, true);
        /* Half the frameworks named, in an order unlike their creation
         * (ties break by name), half unnamed (by creation). */
        if (i % 2 == 0) {
            snprintf(ids[i], sizeof(ids[i]), "f%02d", (NFW - i) % NFW);
            alloc_framework_set_id(a, fws[i], ids[i]);
        }
    }
    for (int i = 0; i < NAG; i++) {
        char text[128];
        snprintf(text, sizeof(text), "cpus:%u;mem:%u", 1 + rnd() % 8,
                 64 * (1 + rnd() % 16));
        ags[i] = add_agent(a, &ag_tok[i], text);
    }
    int64_t now = SEC;
    for (int step = 0; step < 300; step++) {
        now += SEC / 4;
        uint32_t nev = rnd() % 8;
        for (uint32_t e = 0; e < nev && rec.n > 0; e++) {
            uint32_t k = rnd() % rec.n;
            struct offer_rec *o = &rec.v[k];
            int f = (int)((int *)o->fw - fw_tok);
            int g = (int)((int *)o->ag - ag_tok);
            int64_t refuse =
                rnd() % 3 == 0 ? (int64_t)(1 + rnd() % 4) * SEC : 0;
            ck_assert_int_eq(
                alloc_recover(a, ags[g], fws[f], &o->res, refuse, now), 0);
            rec_drop(&rec, k);
        }
        if (rnd() % 5 == 0) {
            int f = (int)(rnd() % NFW);
            if (rnd() % 2)
                alloc_framework_suppress(a, fws[f], NULL, 0);
            else
                alloc_framework_revive(a, fws[f], NULL, 0);
        }
        if (step % 7 == 0)
            alloc_candidates_all(a);
        alloc_run(a, now);
        check_orders(a);
    }
    /* Everything given back: the orders follow shares down again. */
    while (rec.n > 0) {
        struct offer_rec *o = &rec.v[rec.n - 1];
        int f = (int)((int *)o->fw - fw_tok);
        int g = (int)((int *)o->ag - ag_tok);
        ck_assert_int_eq(alloc_recover(a, ags[g], fws[f], &o->res, 0, now), 0);
        rec_drop(&rec, rec.n - 1);
        check_orders(a);
    }
    alloc_free(a);
    rec_free(&rec);
}
END_TEST

/* DRF's usual move, the first framework to the back after its offer, over
 * and over on one role: the window of live entries walks through its
 * buffer and is re-centred many times, and the frameworks still take the
 * agent in turn (equal shares, fewest allocations first, then name). */
START_TEST(test_rotation_recentres_and_keeps_turns)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    enum { N = 5 };
    static int fw_tok[N], ag_tok;
    static const char *const ids[N] = {"a", "b", "c", "d", "e"};
    struct alloc_framework *fws[N];
    const char *role = "r";
    for (int i = N - 1; i >= 0; i--) {
        fws[i] = alloc_framework_add(a, &fw_tok[i], &role, 1, 0, true);
        alloc_framework_set_id(a, fws[i], ids[i]);
    }
    struct alloc_agent *ag = add_agent(a, &ag_tok, "cpus:1;mem:64");
    const struct role *r = alloc_role_find(a, "r");
    ck_assert_ptr_nonnull(r);
    bool drifted = false;
    struct sentry *const *first = NULL;
    for (int k = 0; k < 1000; k++) {
        alloc_run(a, SEC * (k + 1));
        ck_assert_uint_eq(rec.n, 1);
        ck_assert_ptr_eq(rec.v[0].fw, &fw_tok[k % N]);
        check_orders(a);
        if (first == NULL)
            first = r->eligible;
        else if (r->eligible != first)
            drifted = true;
        ck_assert_int_eq(
            alloc_recover(a, ag, fws[k % N], &rec.v[0].res, 0, SEC * (k + 1)),
            0);
        rec_drop(&rec, 0);
    }
    ck_assert(drifted); /* the window moved: rotations shifted nothing */
    alloc_free(a);
    rec_free(&rec);
}
END_TEST

/* An agent whose filters come only from clients of the first 1,024 ids
 * (its bitmaps' inline words) is not covered while an eligible client has
 * a higher id: the covered check looks past the agent's words. */
START_TEST(test_covered_check_sees_clients_past_agent_words)
{
    struct rec rec = {0};
    struct alloc *a = new_alloc(&rec);
    enum { N = 64 * ALLOC_INLINE_WORDS + 1 };
    static int fw_tok[N], ag_tok;
    struct alloc_framework **fws = xcalloc(N, sizeof(*fws));
    const char *role = "*";
    for (int i = 0; i < N; i++)
        fws[i] = alloc_framework_add(a, &fw_tok[i], &role, 1, 0, true);
    /* The last framework (client id N - 1) waits, suppressed. */
    alloc_framework_suppress(a, fws[N - 1], NULL, 0);
    struct alloc_agent *ag = add_agent(a, &ag_tok, "cpus:1;mem:64");
    int64_t now = SEC;
    for (int k = 0; k < N - 1; k++) {
        now += SEC;
        alloc_run(a, now);
        ck_assert_uint_eq(rec.n, 1);
        int f = (int)((int *)rec.v[0].fw - fw_tok);
        ck_assert_int_lt(f, N - 1);
        ck_assert_int_eq(
            alloc_recover(a, ag, fws[f], &rec.v[0].res, 3600 * SEC, now), 0);
        rec_drop(&rec, 0);
    }
    /* Every eligible client refuses the agent: no offer. */
    now += SEC;
    alloc_candidates_all(a);
    alloc_run(a, now);
    ck_assert_uint_eq(rec.n, 0);
    ck_assert_uint_le(ag->nwords, ALLOC_INLINE_WORDS);
    /* The one past the agent's words becomes eligible: it is offered. */
    alloc_framework_revive(a, fws[N - 1], NULL, 0);
    ck_assert_uint_gt(a->eligible_words, ag->nwords);
    now += SEC;
    alloc_run(a, now);
    ck_assert_uint_eq(rec.n, 1);
    ck_assert_ptr_eq(rec.v[0].fw, &fw_tok[N - 1]);
    free(fws);
    alloc_free(a);
    rec_free(&rec);
}
END_TEST

static Suite *alloc_sorter_suite(void)
{
    Suite *s = suite_create("alloc_sorter");
    TCase *tc = tcase_create("orders");
    tcase_set_timeout(tc, 120); /* sanitizers on a loaded machine */
    tcase_add_loop_test(tc, test_orders_sorted_under_random_moves, 0, 4);
    tcase_add_test(tc, test_rotation_recentres_and_keeps_turns);
    tcase_add_test(tc, test_covered_check_sees_clients_past_agent_words);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(alloc_sorter_suite)
