/*
 * Tests for the offer pool and placement of libofferd
 * (include/offerd/offer_pool.h, include/offerd/placement.h): ordering,
 * iteration while the pool changes, use and decline, expiry, the minimum,
 * lost-agent grace, adjustments, the offer helpers, constraint parsing and
 * every operator, placement (find, take, packing), metrics, and a
 * concurrency test where 8 threads race over 10,000 offers. Time is a fake
 * clock the tests move.
 */
#include "offerd/offer_pool.h"
#include "offerd/placement.h"

#include "common/json_pb.h"
#include "common/resources.h"
#include "common/resources_pb.h"
#include "mesos/v1/mesos.pb-c.h"

#include "check_main.h"

#include <check.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEC INT64_C(1000000000)

/* ---- Fake clock ---- */

static _Atomic int64_t fake_now;

static int64_t fake_clock(void *arg)
{
    (void)arg;
    return atomic_load(&fake_now);
}

static void advance(int64_t ns)
{
    atomic_fetch_add(&fake_now, ns);
}

/* ---- Offers ---- */

/* Resources in Mesos's text form as a JSON array of Resource. */
static json_t *resources_json(const char *text)
{
    res_list l = RES_LIST_INIT;
    char err[256];
    ck_assert_msg(res_list_parse(text, NULL, &l, err, sizeof(err)) == 0, "%s",
                  err);
    size_t n;
    Mesos__V1__Resource **pb = res_list_to_pb(&l, false, &n);
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, jpb_to_json(&pb[i]->base));
    res_pb_array_free(pb, n);
    res_list_clear(&l);
    return arr;
}

/* Attributes "name=value;..." as TEXT attributes, or a JSON array as is. */
static json_t *attributes_json(const char *attrs)
{
    if (attrs == NULL)
        return json_array();
    if (attrs[0] == '[') {
        json_t *j = json_loads(attrs, 0, NULL);
        ck_assert_ptr_nonnull(j);
        return j;
    }
    json_t *arr = json_array();
    char *copy = strdup(attrs);
    char *save = NULL;
    for (char *kv = strtok_r(copy, ";", &save); kv != NULL;
         kv = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(kv, '=');
        ck_assert_ptr_nonnull(eq);
        *eq = '\0';
        json_array_append_new(arr, json_pack("{s:s, s:s, s:{s:s}}", "name", kv,
                                             "type", "TEXT", "text", "value",
                                             eq + 1));
    }
    free(copy);
    return arr;
}

/* A decoded Offer (free with jpb_free): id on agent with hostname, the
 * resources in text form, attributes as attributes_json takes them, and an
 * agent address of ip (may be NULL). */
static Mesos__V1__Offer *offer_ex(const char *id, const char *agent,
                                  const char *host, const char *res,
                                  const char *attrs, const char *ip)
{
    json_t *j = json_pack(
        "{s:{s:s}, s:{s:s}, s:{s:s}, s:o, s:o}", "id", "value", id,
        "framework_id", "value", "fw", "agent_id", "value", agent, "resources",
        resources_json(res), "attributes", attributes_json(attrs));
    if (host != NULL)
        json_object_set_new(j, "hostname", json_string(host));
    if (ip != NULL)
        json_object_set_new(j, "url",
                            json_pack("{s:s, s:{s:s, s:i}}", "scheme", "http",
                                      "address", "ip", ip, "port", 5051));
    char *text = json_dumps(j, 0);
    json_decref(j);
    char err[256];
    ProtobufCMessage *m =
        jpb_decode(&mesos__v1__offer__descriptor, JPB_JSON,
                   (const uint8_t *)text, strlen(text), err, sizeof(err));
    ck_assert_msg(m != NULL, "%s: %s", text, err);
    free(text);
    return (Mesos__V1__Offer *)m;
}

static Mesos__V1__Offer *offer(const char *id, const char *agent,
                               const char *res)
{
    char host[64];
    snprintf(host, sizeof(host), "host-%s", agent);
    return offer_ex(id, agent, host, res, NULL, NULL);
}

/* Add an offer built by offer() and check the result. */
static void add_ok(struct offerd_pool *p, const char *id, const char *agent,
                   const char *res)
{
    Mesos__V1__Offer *o = offer(id, agent, res);
    ck_assert_int_eq(offerd_pool_add(p, o), OFFERD_POOL_ADDED);
    jpb_free(&o->base);
}

/* ---- Pool set-up and declines ---- */

#define MAX_DECLINES 64

struct declines {
    char ids[MAX_DECLINES][32];
    double secs[MAX_DECLINES];
    int calls;
    int n;
};

static struct declines dl;

static void record_decline(const char *const *ids, size_t n, double secs,
                           void *arg)
{
    struct declines *d = arg;
    d->calls++;
    for (size_t i = 0; i < n && d->n < MAX_DECLINES; i++) {
        snprintf(d->ids[d->n], sizeof(d->ids[d->n]), "%s", ids[i]);
        d->secs[d->n] = secs;
        d->n++;
    }
}

/* The refusal filter id was declined with, or -2 when not declined. */
static double declined_secs(const char *id)
{
    for (int i = 0; i < dl.n; i++)
        if (strcmp(dl.ids[i], id) == 0)
            return dl.secs[i];
    return -2;
}

static struct offerd_pool *pool_with(struct offerd_pool_options o)
{
    o.clock = fake_clock;
    char err[128];
    struct offerd_pool *p = offerd_pool_new(&o, err, sizeof(err));
    ck_assert_msg(p != NULL, "%s", err);
    return p;
}

static struct offerd_pool *pool_default(void)
{
    struct offerd_pool_options o;
    memset(&o, 0, sizeof(o));
    return pool_with(o);
}

static void setup(void)
{
    atomic_store(&fake_now, 1000 * SEC);
    memset(&dl, 0, sizeof(dl));
}

/* The ids the iteration yields, joined with ','. */
static void iterate(struct offerd_pool *p, char *out, size_t len)
{
    out[0] = '\0';
    size_t used = 0;
    for (struct offerd_pool_offer *o = offerd_pool_first(p); o != NULL;
         o = offerd_pool_next(p, o)) {
        int k = snprintf(out + used, len - used, "%s%s", used ? "," : "",
                         offerd_pool_offer_id(o));
        ck_assert(k > 0 && (size_t)k < len - used);
        used += (size_t)k;
    }
}

#define ASSERT_ORDER(p, expected)                                              \
    do {                                                                       \
        char got_[512];                                                        \
        iterate((p), got_, sizeof(got_));                                      \
        ck_assert_str_eq(got_, (expected));                                    \
    } while (0)

/* The handle of offer id (by iteration), or NULL. */
static struct offerd_pool_offer *handle(struct offerd_pool *p, const char *id)
{
    for (struct offerd_pool_offer *o = offerd_pool_first(p); o != NULL;
         o = offerd_pool_next(p, o))
        if (strcmp(offerd_pool_offer_id(o), id) == 0)
            return o;
    return NULL;
}

static struct offerd_pool_metrics metrics(struct offerd_pool *p)
{
    struct offerd_pool_metrics m;
    offerd_pool_get_metrics(p, &m);
    ck_assert_uint_eq(m.added,
                      m.used + m.declined + m.expired + m.rescinded + m.size);
    return m;
}

/* ---- Ordering ---- */

START_TEST(test_arrival_order)
{
    struct offerd_pool *p = pool_default();
    add_ok(p, "o1", "a1", "cpus:4;mem:128");
    add_ok(p, "o2", "a2", "cpus:1;mem:128");
    add_ok(p, "o3", "a3", "cpus:2;mem:128");
    ASSERT_ORDER(p, "o1,o2,o3");
    ck_assert_uint_eq(metrics(p).size, 3);
    offerd_pool_free(p);
}
END_TEST

static double score_cpus(const Mesos__V1__Offer *o,
                         const struct offerd_usable *u, void *arg)
{
    (void)o;
    double sign = arg != NULL ? *(const double *)arg : 1;
    return sign * u->cpus;
}

START_TEST(test_score_order_ties_by_arrival)
{
    struct offerd_pool_options opt;
    memset(&opt, 0, sizeof(opt));
    opt.score = score_cpus; /* best fit: fewest cpus first */
    struct offerd_pool *p = pool_with(opt);
    add_ok(p, "o1", "a1", "cpus:4;mem:128");
    add_ok(p, "o2", "a2", "cpus:1;mem:128");
    add_ok(p, "o3", "a3", "cpus:2;mem:128");
    add_ok(p, "o4", "a4", "cpus:1;mem:128");
    ASSERT_ORDER(p, "o2,o4,o3,o1");
    struct offerd_pool_offer *h = offerd_pool_first(p);
    ck_assert(offerd_pool_offer_score(h) == 1.0);
    offerd_pool_release(p, h);
    offerd_pool_free(p);

    double minus = -1; /* spread: most cpus first */
    opt.score_arg = &minus;
    p = pool_with(opt);
    add_ok(p, "o1", "a1", "cpus:1;mem:128");
    add_ok(p, "o2", "a2", "cpus:3;mem:128");
    add_ok(p, "o3", "a3", "cpus:2;mem:128");
    ASSERT_ORDER(p, "o2,o3,o1");
    offerd_pool_free(p);
}
END_TEST

/* ---- Iteration while the pool changes ---- */

START_TEST(test_next_skips_what_left_and_sees_what_came)
{
    struct offerd_pool *p = pool_default();
    add_ok(p, "o1", "a1", "cpus:1");
    add_ok(p, "o2", "a2", "cpus:1");
    add_ok(p, "o3", "a3", "cpus:1");
    add_ok(p, "o4", "a4", "cpus:1");
    struct offerd_pool_offer *cur = offerd_pool_first(p);
    ck_assert_str_eq(offerd_pool_offer_id(cur), "o1");

    /* Meanwhile: o2 used by someone else, o3 rescinded, o5 arrives. */
    struct offerd_pool_offer *o2 = handle(p, "o2");
    ck_assert_int_eq(offerd_pool_use(p, o2), 0);
    offerd_pool_release(p, o2);
    ck_assert_int_eq(offerd_pool_rescind(p, "o3"), 0);
    add_ok(p, "o5", "a5", "cpus:1");

    cur = offerd_pool_next(p, cur);
    ck_assert_str_eq(offerd_pool_offer_id(cur), "o4");
    cur = offerd_pool_next(p, cur);
    ck_assert_str_eq(offerd_pool_offer_id(cur), "o5");
    cur = offerd_pool_next(p, cur);
    ck_assert_ptr_null(cur);
    offerd_pool_free(p);
}
END_TEST

START_TEST(test_next_from_an_offer_that_left)
{
    struct offerd_pool *p = pool_default();
    add_ok(p, "o1", "a1", "cpus:1");
    add_ok(p, "o2", "a2", "cpus:1");
    add_ok(p, "o3", "a3", "cpus:1");
    struct offerd_pool_offer *cur = handle(p, "o2");
    /* The held offer is rescinded and its neighbours used: the handle
     * still reads, and next continues from its place. */
    ck_assert_int_eq(offerd_pool_rescind(p, "o2"), 0);
    ck_assert_str_eq(offerd_pool_offer_id(cur), "o2");
    ck_assert_str_eq(offerd_pool_offer_get(cur)->agent_id->value, "a2");
    ck_assert_int_eq(offerd_pool_use(p, cur), -1);
    ck_assert_int_eq(offerd_pool_decline(p, cur, -1), -1);
    struct offerd_pool_offer *o1 = handle(p, "o1");
    ck_assert_int_eq(offerd_pool_use(p, o1), 0);
    offerd_pool_release(p, o1);
    cur = offerd_pool_next(p, cur);
    ck_assert_str_eq(offerd_pool_offer_id(cur), "o3");
    offerd_pool_release(p, cur);
    ASSERT_ORDER(p, "o3");
    offerd_pool_free(p);
}
END_TEST

START_TEST(test_offer_added_before_cursor_is_not_seen_by_next)
{
    struct offerd_pool_options opt;
    memset(&opt, 0, sizeof(opt));
    opt.score = score_cpus;
    struct offerd_pool *p = pool_with(opt);
    add_ok(p, "o2", "a2", "cpus:2");
    add_ok(p, "o3", "a3", "cpus:3");
    struct offerd_pool_offer *cur = offerd_pool_first(p);
    ck_assert_str_eq(offerd_pool_offer_id(cur), "o2");
    add_ok(p, "o1", "a1", "cpus:1"); /* sorts before the cursor */
    add_ok(p, "o4", "a4", "cpus:4"); /* after it */
    cur = offerd_pool_next(p, cur);
    ck_assert_str_eq(offerd_pool_offer_id(cur), "o3");
    cur = offerd_pool_next(p, cur);
    ck_assert_str_eq(offerd_pool_offer_id(cur), "o4");
    offerd_pool_release(p, cur);
    ASSERT_ORDER(p, "o1,o2,o3,o4");
    offerd_pool_free(p);
}
END_TEST

/* ---- Use and decline ---- */

START_TEST(test_use_is_won_once)
{
    struct offerd_pool *p = pool_default();
    add_ok(p, "o1", "a1", "cpus:1");
    struct offerd_pool_offer *a = offerd_pool_first(p);
    struct offerd_pool_offer *b = offerd_pool_first(p);
    ck_assert_ptr_eq(a, b);
    ck_assert_int_eq(offerd_pool_use(p, a), 0);
    ck_assert_int_eq(offerd_pool_use(p, b), -1);
    ck_assert_int_eq(offerd_pool_decline(p, b, -1), -1);
    ck_assert_int_eq(offerd_pool_rescind(p, "o1"), -1);
    ck_assert_ptr_null(offerd_pool_first(p));
    struct offerd_pool_metrics m = metrics(p);
    ck_assert_uint_eq(m.used, 1);
    ck_assert_uint_eq(m.size, 0);
    /* The used offer is still readable through both handles. */
    ck_assert_str_eq(offerd_pool_offer_agent_id(b), "a1");
    ck_assert_str_eq(offerd_pool_offer_hostname(b), "host-a1");
    offerd_pool_release(p, a);
    offerd_pool_release(p, b);
    offerd_pool_free(p);
}
END_TEST

START_TEST(test_declines_are_flushed_per_filter)
{
    struct offerd_pool *p = pool_default();
    add_ok(p, "o1", "a1", "cpus:1");
    add_ok(p, "o2", "a1", "cpus:1");
    add_ok(p, "o3", "a1", "cpus:1");
    struct offerd_pool_offer *h = handle(p, "o1");
    ck_assert_int_eq(offerd_pool_decline(p, h, -1), 0);
    offerd_pool_release(p, h);
    h = handle(p, "o2");
    ck_assert_int_eq(offerd_pool_decline(p, h, 3600), 0);
    offerd_pool_release(p, h);
    h = handle(p, "o3");
    ck_assert_int_eq(offerd_pool_decline(p, h, -1), 0);
    offerd_pool_release(p, h);
    ck_assert_uint_eq(metrics(p).pending_declines, 3);
    ck_assert_uint_eq(offerd_pool_flush(p, record_decline, &dl), 3);
    ck_assert_int_eq(dl.calls, 2); /* 5 s: o1, o3; 3600 s: o2 */
    ck_assert_str_eq(dl.ids[0], "o1");
    ck_assert_str_eq(dl.ids[1], "o3");
    ck_assert(dl.secs[0] == OFFERD_POOL_DEFAULT_REFUSE_SECS);
    ck_assert(declined_secs("o2") == 3600);
    struct offerd_pool_metrics m = metrics(p);
    ck_assert_uint_eq(m.declined, 3);
    ck_assert_uint_eq(m.pending_declines, 0);
    ck_assert_uint_eq(offerd_pool_flush(p, record_decline, &dl), 0);
    ck_assert_int_eq(dl.calls, 2);
    offerd_pool_free(p);
}
END_TEST

START_TEST(test_refuse_option)
{
    struct offerd_pool_options opt;
    memset(&opt, 0, sizeof(opt));
    opt.refuse_secs = 30;
    struct offerd_pool *p = pool_with(opt);
    add_ok(p, "o1", "a1", "cpus:1");
    struct offerd_pool_offer *h = offerd_pool_first(p);
    ck_assert_int_eq(offerd_pool_decline(p, h, -1), 0);
    offerd_pool_release(p, h);
    offerd_pool_flush(p, record_decline, &dl);
    ck_assert(declined_secs("o1") == 30);
    offerd_pool_free(p);

    opt.refuse_secs = -1; /* no filter: the master's default */
    p = pool_with(opt);
    add_ok(p, "o2", "a1", "cpus:1");
    h = offerd_pool_first(p);
    ck_assert_int_eq(offerd_pool_decline(p, h, -1), 0);
    offerd_pool_release(p, h);
    offerd_pool_flush(p, record_decline, &dl);
    ck_assert(declined_secs("o2") < 0 && declined_secs("o2") != -2);
    offerd_pool_free(p);
}
END_TEST

START_TEST(test_rescind_and_clear)
{
    struct offerd_pool *p = pool_default();
    add_ok(p, "o1", "a1", "cpus:1");
    add_ok(p, "o2", "a1", "cpus:1");
    add_ok(p, "o3", "a1", "cpus:1");
    ck_assert_int_eq(offerd_pool_rescind(p, "o2"), 0);
    ck_assert_int_eq(offerd_pool_rescind(p, "o2"), -1);
    ck_assert_int_eq(offerd_pool_rescind(p, "nope"), -1);
    struct offerd_pool_offer *h = handle(p, "o1");
    ck_assert_int_eq(offerd_pool_decline(p, h, -1), 0);
    offerd_pool_release(p, h);
    offerd_pool_clear(p); /* o3 rescinded, o1's decline dropped */
    struct offerd_pool_metrics m = metrics(p);
    ck_assert_uint_eq(m.rescinded, 2);
    ck_assert_uint_eq(m.declined, 1);
    ck_assert_uint_eq(m.size, 0);
    ck_assert_uint_eq(m.pending_declines, 0);
    ck_assert_uint_eq(offerd_pool_flush(p, record_decline, &dl), 0);
    offerd_pool_free(p);
}
END_TEST

START_TEST(test_add_rejects_and_declines_bad_offers)
{
    struct offerd_pool *p = pool_default();
    add_ok(p, "o1", "a1", "cpus:1");
    Mesos__V1__Offer *dup = offer("o1", "a1", "cpus:1");
    ck_assert_int_eq(offerd_pool_add(p, dup), OFFERD_POOL_REJECTED);
    jpb_free(&dup->base);
    ck_assert_int_eq(offerd_pool_add(p, NULL), OFFERD_POOL_REJECTED);
    Mesos__V1__Offer bare = MESOS__V1__OFFER__INIT;
    ck_assert_int_eq(offerd_pool_add(p, &bare), OFFERD_POOL_REJECTED);

    /* A resource whose value does not match its type: declined. */
    Mesos__V1__Offer *bad = offer("o2", "a1", "cpus:1");
    bad->resources[0]->type = MESOS__V1__VALUE__TYPE__RANGES;
    ck_assert_int_eq(offerd_pool_add(p, bad), OFFERD_POOL_DECLINED);
    jpb_free(&bad->base);
    struct offerd_pool_metrics m = metrics(p);
    ck_assert_uint_eq(m.added, 2);
    ck_assert_uint_eq(m.declined, 1);
    offerd_pool_flush(p, record_decline, &dl);
    ck_assert(declined_secs("o2") == OFFERD_POOL_DEFAULT_REFUSE_SECS);
    offerd_pool_free(p);
}
END_TEST

START_TEST(test_the_copy_is_private)
{
    struct offerd_pool *p = pool_default();
    Mesos__V1__Offer *o = offer("o1", "a1", "cpus:1");
    ck_assert_int_eq(offerd_pool_add(p, o), OFFERD_POOL_ADDED);
    jpb_free(&o->base); /* the pool kept its own copy */
    struct offerd_pool_offer *h = offerd_pool_first(p);
    ck_assert_str_eq(offerd_pool_offer_get(h)->id->value, "o1");
    ck_assert_int_eq(offerd_pool_offer_get(h)->n_resources, 1);
    ck_assert(offerd_pool_offer_received_ns(h) == 1000 * SEC);
    offerd_pool_release(p, h);
    offerd_pool_free(p);
}
END_TEST

/* ---- Expiry ---- */

START_TEST(test_offers_expire_after_the_life_period)
{
    struct offerd_pool *p = pool_default();
    add_ok(p, "o1", "a1", "cpus:1");
    advance(100 * SEC);
    add_ok(p, "o2", "a1", "cpus:1");
    struct offerd_pool_offer *held = handle(p, "o1");
    advance(139 * SEC); /* o1 is 239 s old */
    ck_assert_uint_eq(offerd_pool_expire(p), 0);
    ASSERT_ORDER(p, "o1,o2");
    advance(1 * SEC); /* 240 s */
    ck_assert_int_eq(offerd_pool_use(p, held), -1);
    ASSERT_ORDER(p, "o2"); /* first() expired it */
    offerd_pool_release(p, held);
    struct offerd_pool_metrics m = metrics(p);
    ck_assert_uint_eq(m.expired, 1);
    ck_assert_uint_eq(m.size, 1);
    advance(100 * SEC);
    ck_assert_uint_eq(offerd_pool_expire(p), 1);
    ck_assert_uint_eq(offerd_pool_flush(p, record_decline, &dl), 2);
    ck_assert(declined_secs("o1") == OFFERD_POOL_DEFAULT_REFUSE_SECS);
    ck_assert(declined_secs("o2") == OFFERD_POOL_DEFAULT_REFUSE_SECS);
    m = metrics(p);
    ck_assert_uint_eq(m.expired, 2);
    ck_assert_uint_eq(m.declined, 0);
    offerd_pool_free(p);
}
END_TEST

START_TEST(test_life_period_option)
{
    struct offerd_pool_options opt;
    memset(&opt, 0, sizeof(opt));
    opt.life_ns = 10 * SEC;
    struct offerd_pool *p = pool_with(opt);
    add_ok(p, "o1", "a1", "cpus:1");
    advance(10 * SEC);
    ck_assert_uint_eq(offerd_pool_expire(p), 1);
    offerd_pool_free(p);

    opt.life_ns = -1; /* never */
    p = pool_with(opt);
    add_ok(p, "o1", "a1", "cpus:1");
    advance(1000000 * SEC);
    ck_assert_uint_eq(offerd_pool_expire(p), 0);
    ASSERT_ORDER(p, "o1");
    offerd_pool_free(p);
}
END_TEST

/* ---- Minimum ---- */

START_TEST(test_small_offers_are_declined_at_once)
{
    struct offerd_pool *p = pool_default();
    Mesos__V1__Offer *small = offer("small", "a1", "cpus:0.04;mem:1024");
    Mesos__V1__Offer *none = offer("none", "a1", "mem:1024");
    Mesos__V1__Offer *edge = offer("edge", "a1", "cpus:0.05");
    ck_assert_int_eq(offerd_pool_add(p, small), OFFERD_POOL_DECLINED);
    ck_assert_int_eq(offerd_pool_add(p, none), OFFERD_POOL_DECLINED);
    ck_assert_int_eq(offerd_pool_add(p, edge), OFFERD_POOL_ADDED);
    ASSERT_ORDER(p, "edge");
    offerd_pool_flush(p, record_decline, &dl);
    ck_assert(declined_secs("small") == OFFERD_POOL_DEFAULT_REFUSE_SECS);
    ck_assert(declined_secs("none") == OFFERD_POOL_DEFAULT_REFUSE_SECS);
    ck_assert_uint_eq(metrics(p).declined, 2);
    offerd_pool_free(p);

    struct offerd_pool_options opt;
    memset(&opt, 0, sizeof(opt));
    opt.min_cpus = -1; /* no minimum */
    p = pool_with(opt);
    ck_assert_int_eq(offerd_pool_add(p, none), OFFERD_POOL_ADDED);
    offerd_pool_free(p);
    opt.min_cpus = 2;
    p = pool_with(opt);
    ck_assert_int_eq(offerd_pool_add(p, edge), OFFERD_POOL_DECLINED);
    offerd_pool_free(p);
    jpb_free(&small->base);
    jpb_free(&none->base);
    jpb_free(&edge->base);
}
END_TEST

START_TEST(test_minimum_applies_to_adjusted_cpus)
{
    struct offerd_pool *p = pool_default();
    ck_assert_int_eq(offerd_pool_set_adjustment(p, "a1", -0.5, 0, 0), 0);
    Mesos__V1__Offer *o = offer("o1", "a1", "cpus:0.5");
    ck_assert_int_eq(offerd_pool_add(p, o), OFFERD_POOL_DECLINED);
    jpb_free(&o->base);
    offerd_pool_free(p);
}
END_TEST

/* ---- Lost agents ---- */

START_TEST(test_lost_agent_offers_are_held_for_the_grace_period)
{
    struct offerd_pool *p = pool_default();
    add_ok(p, "o1", "a1", "cpus:1");
    add_ok(p, "o2", "a2", "cpus:1");
    add_ok(p, "o3", "a1", "cpus:1");
    ck_assert_uint_eq(offerd_pool_agent_lost(p, "a1"), 2);
    ASSERT_ORDER(p, "o2");
    ck_assert_uint_eq(metrics(p).rescinded, 2);

    advance(10 * SEC);
    add_ok(p, "o4", "a1", "cpus:1"); /* the agent came back */
    ASSERT_ORDER(p, "o2");
    struct offerd_pool_metrics m = metrics(p);
    ck_assert_uint_eq(m.size, 2);
    ck_assert_uint_eq(m.held, 1);
    struct offerd_request *r = offerd_request_new("cpus:1", NULL, NULL, 0);
    struct offerd_pool_offer *h = offerd_pool_take(p, r, NULL, NULL, NULL);
    ck_assert_str_eq(offerd_pool_offer_id(h), "o2");
    offerd_pool_release(p, h);
    ck_assert_ptr_null(offerd_pool_find(p, r, NULL, NULL, NULL));

    advance(169 * SEC); /* 179 s after the loss */
    ck_assert_ptr_null(offerd_pool_first(p));
    advance(1 * SEC); /* 180 s */
    ASSERT_ORDER(p, "o4");
    ck_assert_uint_eq(metrics(p).held, 0);
    offerd_request_free(r);
    offerd_pool_free(p);
}
END_TEST

START_TEST(test_held_offer_can_expire)
{
    struct offerd_pool_options opt;
    memset(&opt, 0, sizeof(opt));
    opt.life_ns = 60 * SEC;
    struct offerd_pool *p = pool_with(opt);
    offerd_pool_agent_lost(p, "a1");
    add_ok(p, "o1", "a1", "cpus:1");
    advance(60 * SEC);
    ck_assert_uint_eq(offerd_pool_expire(p), 1);
    ck_assert_uint_eq(metrics(p).expired, 1);
    offerd_pool_free(p);
}
END_TEST

START_TEST(test_grace_option)
{
    struct offerd_pool_options opt;
    memset(&opt, 0, sizeof(opt));
    opt.grace_ns = -1; /* none */
    struct offerd_pool *p = pool_with(opt);
    offerd_pool_agent_lost(p, "a1");
    add_ok(p, "o1", "a1", "cpus:1");
    ASSERT_ORDER(p, "o1");
    offerd_pool_free(p);

    opt.grace_ns = 5 * SEC;
    p = pool_with(opt);
    offerd_pool_agent_lost(p, "a1");
    add_ok(p, "o1", "a1", "cpus:1");
    ASSERT_ORDER(p, "");
    advance(5 * SEC);
    ASSERT_ORDER(p, "o1");
    /* A second loss restarts the period for new offers. */
    offerd_pool_agent_lost(p, "a1");
    add_ok(p, "o2", "a1", "cpus:1");
    advance(4 * SEC);
    ASSERT_ORDER(p, "");
    offerd_pool_free(p);
}
END_TEST

/* ---- Adjustments ---- */

START_TEST(test_adjustments_change_usable_amounts)
{
    struct offerd_pool *p = pool_default();
    add_ok(p, "o1", "a1", "cpus:4;mem:1024;disk:2048;gpus:1");
    struct offerd_pool_offer *h = offerd_pool_first(p);
    struct offerd_usable u;
    offerd_pool_usable(p, h, &u);
    ck_assert(u.cpus == 4 && u.mem == 1024 && u.disk == 2048 && u.gpus == 1);

    /* By hostname. */
    ck_assert_int_eq(offerd_pool_set_adjustment(p, "host-a1", -1, -256, 0), 0);
    offerd_pool_usable(p, h, &u);
    ck_assert(u.cpus == 3 && u.mem == 768 && u.disk == 2048);
    /* An agent id match wins over a hostname match. */
    ck_assert_int_eq(offerd_pool_set_adjustment(p, "a1", 0.5, 0, -4096), 0);
    offerd_pool_usable(p, h, &u);
    ck_assert(u.cpus == 4.5 && u.mem == 1024 && u.disk == 0);
    ck_assert_int_eq(offerd_pool_clear_adjustment(p, "a1"), 0);
    ck_assert_int_eq(offerd_pool_clear_adjustment(p, "a1"), -1);
    offerd_pool_usable(p, h, &u);
    ck_assert(u.cpus == 3);
    ck_assert_int_eq(offerd_pool_set_adjustment(p, "", 1, 1, 1), -1);
    ck_assert_int_eq(offerd_pool_set_adjustment(p, "a1", INFINITY, 1, 1), -1);
    offerd_pool_release(p, h);
    offerd_pool_free(p);
}
END_TEST

START_TEST(test_placement_honours_adjustments)
{
    struct offerd_pool *p = pool_default();
    add_ok(p, "o1", "a1", "cpus:4;mem:1024");
    struct offerd_request *big =
        offerd_request_new("cpus:3.5;mem:512", NULL, NULL, 0);
    struct offerd_request *small =
        offerd_request_new("cpus:1;mem:512", NULL, NULL, 0);
    ck_assert_int_eq(offerd_pool_set_adjustment(p, "a1", -1, 0, 0), 0);
    struct offerd_pool_find_report rep;
    ck_assert_ptr_null(offerd_pool_find(p, big, NULL, NULL, &rep));
    ck_assert_uint_eq(rep.no_room, 1);

    /* A positive delta is reported but never lets a task take more than
     * was offered. */
    ck_assert_int_eq(offerd_pool_set_adjustment(p, "a1", 2, 0, 0), 0);
    struct offerd_request *huge = offerd_request_new("cpus:5", NULL, NULL, 0);
    ck_assert_ptr_null(offerd_pool_find(p, huge, NULL, NULL, NULL));

    /* Packing: a budget of 3 usable cpus holds three 1-cpu tasks. */
    ck_assert_int_eq(offerd_pool_set_adjustment(p, "a1", -1, 0, 0), 0);
    struct offerd_pool_offer *h = offerd_pool_take(p, small, NULL, NULL, NULL);
    ck_assert_ptr_nonnull(h);
    struct offerd_fit *f = offerd_pool_fit_new(p, h);
    Mesos__V1__Resource **res;
    size_t n;
    int taken = 0;
    struct offerd_request *one = offerd_request_new("cpus:1", NULL, NULL, 0);
    while (offerd_fit_take(f, one, &res, &n) == 0) {
        offerd_resources_free(res, n);
        taken++;
    }
    ck_assert_int_eq(taken, 3);
    offerd_fit_free(f);
    offerd_pool_release(p, h);
    offerd_request_free(big);
    offerd_request_free(small);
    offerd_request_free(huge);
    offerd_request_free(one);
    offerd_pool_free(p);
}
END_TEST

/* ---- Helpers ---- */

static const char *const TYPED_ATTRS =
    "[{\"name\":\"rack\",\"type\":\"TEXT\",\"text\":{\"value\":\"r1\"}},"
    "{\"name\":\"cores\",\"type\":\"SCALAR\",\"scalar\":{\"value\":2.5}},"
    "{\"name\":\"whole\",\"type\":\"SCALAR\",\"scalar\":{\"value\":8}},"
    "{\"name\":\"ports\",\"type\":\"RANGES\",\"ranges\":{\"range\":"
    "[{\"begin\":31000,\"end\":32000},{\"begin\":40000,\"end\":40000}]}},"
    "{\"name\":\"disks\",\"type\":\"SET\",\"set\":{\"item\":[\"ssd\",\"7\"]}},"
    "{\"name\":\"public_ip\",\"type\":\"TEXT\",\"text\":{\"value\":"
    "\"10.1.2.3\"}},"
    "{\"name\":\"bad_ip\",\"type\":\"TEXT\",\"text\":{\"value\":\"nope\"}}]";

START_TEST(test_attribute_helpers)
{
    Mesos__V1__Offer *o =
        offer_ex("o1", "a1", "node1", "cpus:1", TYPED_ATTRS, "192.168.0.9");
    ck_assert_ptr_nonnull(offerd_offer_attribute(o, "rack"));
    ck_assert_ptr_null(offerd_offer_attribute(o, "nope"));
    ck_assert_ptr_null(offerd_offer_attribute(NULL, "rack"));
    ck_assert_str_eq(offerd_offer_attr_text(o, "rack"), "r1");
    ck_assert_ptr_null(offerd_offer_attr_text(o, "cores"));
    double d = -1;
    ck_assert_int_eq(offerd_offer_attr_scalar(o, "cores", &d), 0);
    ck_assert(d == 2.5);
    ck_assert_int_eq(offerd_offer_attr_scalar(o, "rack", &d), -1);
    ck_assert(d == 2.5);
    size_t n;
    Mesos__V1__Value__Range *const *r =
        offerd_offer_attr_ranges(o, "ports", &n);
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(r[0]->begin, 31000);
    ck_assert_uint_eq(r[1]->end, 40000);
    ck_assert_ptr_null(offerd_offer_attr_ranges(o, "disks", &n));
    ck_assert_uint_eq(n, 0);
    char *const *items = offerd_offer_attr_set(o, "disks", &n);
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(items[0], "ssd");
    ck_assert_ptr_null(offerd_offer_attr_set(o, "ports", &n));
    ck_assert(offerd_offer_attr_contains(o, "ports", 31500));
    ck_assert(offerd_offer_attr_contains(o, "ports", 40000));
    ck_assert(!offerd_offer_attr_contains(o, "ports", 32001));
    ck_assert(offerd_offer_attr_contains(o, "disks", 7));
    ck_assert(!offerd_offer_attr_contains(o, "disks", 8));
    ck_assert(!offerd_offer_attr_contains(o, "rack", 1));
    ck_assert_str_eq(offerd_offer_hostname(o), "node1");
    jpb_free(&o->base);
}
END_TEST

static const struct {
    const char *name;
    const char *text; /* NULL: -1 */
} formats[] = {
    {"rack", "r1"},       {"cores", "2.5"},
    {"whole", "8"},       {"ports", "[31000-32000,40000-40000]"},
    {"disks", "{ssd,7}"}, {"missing", NULL},
};

START_TEST(test_attribute_format)
{
    Mesos__V1__Offer *o =
        offer_ex("o1", "a1", "node1", "cpus:1", TYPED_ATTRS, NULL);
    char buf[64];
    int rc = offerd_offer_attr_format(o, formats[_i].name, buf, sizeof(buf));
    if (formats[_i].text == NULL) {
        ck_assert_int_eq(rc, -1);
        ck_assert_str_eq(buf, "");
    } else {
        ck_assert_int_eq(rc, 0);
        ck_assert_str_eq(buf, formats[_i].text);
    }
    /* Too small a buffer is -1, never a truncated value. */
    char tiny[4];
    if (formats[_i].text != NULL && strlen(formats[_i].text) >= sizeof(tiny)) {
        ck_assert_int_eq(
            offerd_offer_attr_format(o, formats[_i].name, tiny, sizeof(tiny)),
            -1);
        ck_assert_str_eq(tiny, "");
    }
    jpb_free(&o->base);
}
END_TEST

START_TEST(test_ip_helper)
{
    Mesos__V1__Offer *o =
        offer_ex("o1", "a1", "node1", "cpus:1", TYPED_ATTRS, "192.168.0.9");
    char ip[64];
    ck_assert_int_eq(offerd_offer_ip(o, NULL, ip, sizeof(ip)), 0);
    ck_assert_str_eq(ip, "192.168.0.9");
    ck_assert_int_eq(offerd_offer_ip(o, "public_ip", ip, sizeof(ip)), 0);
    ck_assert_str_eq(ip, "10.1.2.3");
    /* Not an address, or absent: the agent's address. */
    ck_assert_int_eq(offerd_offer_ip(o, "bad_ip", ip, sizeof(ip)), 0);
    ck_assert_str_eq(ip, "192.168.0.9");
    ck_assert_int_eq(offerd_offer_ip(o, "missing", ip, sizeof(ip)), 0);
    ck_assert_str_eq(ip, "192.168.0.9");
    char small[8];
    ck_assert_int_eq(offerd_offer_ip(o, NULL, small, sizeof(small)), -1);
    ck_assert_str_eq(small, "");
    jpb_free(&o->base);

    o = offer_ex("o2", "a1", "node1", "cpus:1", NULL, NULL);
    ck_assert_int_eq(offerd_offer_ip(o, NULL, ip, sizeof(ip)), -1);
    ck_assert_str_eq(ip, "");
    jpb_free(&o->base);
    o = offer_ex("o3", "a1", "node1", "cpus:1", NULL, "::1");
    ck_assert_int_eq(offerd_offer_ip(o, "public_ip", ip, sizeof(ip)), 0);
    ck_assert_str_eq(ip, "::1");
    jpb_free(&o->base);
}
END_TEST

/* ---- Constraint parsing ---- */

static const struct {
    const char *in;
    size_t count;
    const char *formatted;
} good_constraints[] = {
    {"hostname:UNIQUE", 1, "hostname:UNIQUE"},
    {" hostname : unique ; rack:CLUSTER:r1;;", 2,
     "hostname:UNIQUE;rack:CLUSTER:r1"},
    {"rack:CLUSTER", 1, "rack:CLUSTER"},
    {"rack:CLUSTER:", 1, "rack:CLUSTER"},
    {"zone:GROUP_BY", 1, "zone:GROUP_BY"},
    {"zone:GROUP_BY:3", 1, "zone:GROUP_BY:3"},
    {"hostname:LIKE:agent[0-9]+:x", 1, "hostname:LIKE:agent[0-9]+:x"},
    {"hostname:UNLIKE:db.*", 1, "hostname:UNLIKE:db.*"},
    {"rack:MAX_PER:2", 1, "rack:MAX_PER:2"},
    {"rack:IS:r1", 1, "rack:IS:r1"},
    {"", 0, ""},
    {"[]", 0, ""},
    {"[[\"hostname\",\"UNIQUE\"]]", 1, "hostname:UNIQUE"},
    {" [[\"hostname\",\"UNIQUE\"],[\"rack\",\"CLUSTER\",\"r1\"],"
     "[\"zone\",\"GROUP_BY\",3],[\"rack\",\"MAX_PER\",\"2\"],"
     "[\"h\",\"LIKE\",\"a;b\"]]",
     5,
     "hostname:UNIQUE;rack:CLUSTER:r1;zone:GROUP_BY:3;rack:MAX_PER:2;h:LIKE:"
     "a;b"},
};

START_TEST(test_constraints_parse)
{
    char err[256] = "";
    struct offerd_constraints *c =
        offerd_constraints_parse(good_constraints[_i].in, err, sizeof(err));
    ck_assert_msg(c != NULL, "%s: %s", good_constraints[_i].in, err);
    ck_assert_uint_eq(offerd_constraints_count(c), good_constraints[_i].count);
    char out[512];
    ck_assert_int_eq(offerd_constraints_format(c, out, sizeof(out)), 0);
    ck_assert_str_eq(out, good_constraints[_i].formatted);
    offerd_constraints_free(c);
}
END_TEST

static const struct {
    const char *in;
    const char *reason; /* a part of the error */
} bad_constraints[] = {
    {"hostname", "constraint 0: expected field:OPERATOR"},
    {"hostname:SPREAD", "constraint 0: unknown operator 'SPREAD'"},
    {"hostname:UNIQUE:x", "UNIQUE takes no value"},
    {"rack:IS", "IS needs a value"},
    {"rack:LIKE", "LIKE needs a value"},
    {"rack:UNLIKE", "UNLIKE needs a value"},
    {"a:UNIQUE;rack:MAX_PER", "constraint 1: MAX_PER needs a positive integer"},
    {"rack:MAX_PER:0", "MAX_PER needs a positive integer, not '0'"},
    {"rack:MAX_PER:2x", "MAX_PER needs a positive integer"},
    {"zone:GROUP_BY:-1", "GROUP_BY takes a positive integer"},
    {"rack:LIKE:(", "bad regex '('"},
    {":UNIQUE", "empty field"},
    {"[[\"hostname\"]]", "constraint 0: expected [field, operator]"},
    {"[[\"a\",\"IS\",\"b\",\"c\"]]", "expected [field, operator]"},
    {"[[\"a\",\"MAX_PER\",1.5]]", "string or an integer"},
    {"[[1,\"UNIQUE\"]]", "field and operator must be strings"},
    {"[\"hostname:UNIQUE\"]", "expected [field, operator]"},
    {"[[\"a\",\"UNIQUE\"]", "invalid JSON"},
    {"{\"a\":1}", "unknown operator"},
};

START_TEST(test_constraints_parse_errors)
{
    char err[256] = "";
    struct offerd_constraints *c =
        offerd_constraints_parse(bad_constraints[_i].in, err, sizeof(err));
    ck_assert_msg(c == NULL, "%s parsed", bad_constraints[_i].in);
    ck_assert_msg(strstr(err, bad_constraints[_i].reason) != NULL,
                  "%s: got '%s'", bad_constraints[_i].in, err);
}
END_TEST

START_TEST(test_constraints_limits)
{
    char err[256];
    size_t len = (OFFERD_CONSTRAINTS_MAX + 1) * 9 + 1;
    char *many = calloc(1, len);
    for (int i = 0; i <= OFFERD_CONSTRAINTS_MAX; i++)
        memcpy(many + i * 9, "h:UNIQUE;", 9);
    ck_assert_ptr_null(offerd_constraints_parse(many, err, sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "more than"));
    free(many);

    char *longv = calloc(1, OFFERD_CONSTRAINT_VALUE_MAX + 32);
    memcpy(longv, "rack:IS:", 8);
    memset(longv + 8, 'x', OFFERD_CONSTRAINT_VALUE_MAX + 1);
    ck_assert_ptr_null(offerd_constraints_parse(longv, err, sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "value longer than"));
    free(longv);
    ck_assert_ptr_null(offerd_constraints_parse(NULL, err, sizeof(err)));

    struct offerd_constraints *c =
        offerd_constraints_parse("hostname:UNIQUE;rack:IS:r1", err, 256);
    const char *field, *value;
    enum offerd_constraint_op op;
    ck_assert_int_eq(offerd_constraints_get(c, 1, &field, &op, &value), 0);
    ck_assert_str_eq(field, "rack");
    ck_assert_int_eq(op, OFFERD_CONSTRAINT_IS);
    ck_assert_str_eq(value, "r1");
    ck_assert_int_eq(offerd_constraints_get(c, 0, NULL, NULL, &value), 0);
    ck_assert_ptr_null(value);
    ck_assert_int_eq(offerd_constraints_get(c, 2, &field, &op, &value), -1);
    char small[8];
    ck_assert_int_eq(offerd_constraints_format(c, small, sizeof(small)), -1);
    offerd_constraints_free(c);
}
END_TEST

/* ---- Constraint operators ----
 *
 * Agents of the table: hostname, then rack and zone attributes (a "-"
 * leaves the attribute out). */

struct agent_spec {
    const char *host;
    const char *rack;
    const char *zone;
};

static const struct agent_spec agents[] = {
    {"agent1", "r1", "z1"}, {"agent2", "r1", "z2"}, {"agent3", "r2", "z3"},
    {"agent4", "r2", "z1"}, {"db1", "-", "-"},
};

static Mesos__V1__Offer *agent_offer(int i)
{
    char attrs[128] = "";
    size_t k = 0;
    if (strcmp(agents[i].rack, "-") != 0)
        k += (size_t)snprintf(attrs + k, sizeof(attrs) - k, "rack=%s;",
                              agents[i].rack);
    if (strcmp(agents[i].zone, "-") != 0)
        snprintf(attrs + k, sizeof(attrs) - k, "zone=%s", agents[i].zone);
    char id[16], agent[16];
    snprintf(id, sizeof(id), "o%d", i);
    snprintf(agent, sizeof(agent), "a%d", i);
    return offer_ex(id, agent, agents[i].host, "cpus:1", attrs, NULL);
}

static const struct {
    const char *constraints;
    const char *placed;  /* agent indexes of placed tasks, e.g. "001" */
    const char *allowed; /* per agent of the table: 1 allowed, 0 not */
} op_cases[] = {
    /* UNIQUE on hostname and on an attribute. */
    {"hostname:UNIQUE", "", "11111"},
    {"hostname:UNIQUE", "02", "01011"},
    {"rack:UNIQUE", "0", "00110"},
    /* CLUSTER with and without a value. */
    {"rack:CLUSTER:r1", "", "11000"},
    {"rack:CLUSTER:r1", "22", "11000"},
    {"rack:CLUSTER", "", "11110"},
    {"rack:CLUSTER", "3", "00110"},
    {"rack:CLUSTER", "03", "00000"},
    /* IS. */
    {"zone:IS:z1", "", "10010"},
    /* GROUP_BY: new values first, then the least used ones. */
    {"zone:GROUP_BY", "", "11110"},
    {"zone:GROUP_BY", "0", "11110"}, /* z1 is the least used group */
    {"zone:GROUP_BY", "001", "01100"},
    {"zone:GROUP_BY:3", "01", "00100"},
    {"zone:GROUP_BY:3", "0", "01100"},
    {"zone:GROUP_BY:3", "012", "11110"},
    {"zone:GROUP_BY:3", "0123", "01100"},
    {"zone:GROUP_BY:4", "012", "00000"},
    {"rack:GROUP_BY:2", "0", "00110"},
    {"rack:GROUP_BY", "02", "11110"},
    /* LIKE and UNLIKE match whole values; a missing field passes UNLIKE
     * only. */
    {"hostname:LIKE:agent[0-9]+", "", "11110"},
    {"hostname:LIKE:agent", "", "00000"},
    {"hostname:LIKE:agent1|db1", "", "10001"},
    {"hostname:UNLIKE:agent[12]", "", "00111"},
    {"rack:LIKE:r.*", "", "11110"},
    {"rack:UNLIKE:r1", "", "00111"},
    /* MAX_PER. */
    {"rack:MAX_PER:2", "0", "11110"},
    {"rack:MAX_PER:2", "01", "00110"},
    {"rack:MAX_PER:1", "2", "11000"},
    {"hostname:MAX_PER:2", "00", "01111"},
    /* Several constraints must all hold. */
    {"hostname:UNIQUE;rack:CLUSTER:r2", "2", "00010"},
    {"[[\"rack\",\"MAX_PER\",1],[\"zone\",\"UNLIKE\",\"z3\"]]", "0", "00010"},
    /* No constraints: anything goes. */
    {"", "0000", "11111"},
};

START_TEST(test_constraint_operators)
{
    char err[256];
    struct offerd_constraints *c =
        offerd_constraints_parse(op_cases[_i].constraints, err, sizeof(err));
    ck_assert_msg(c != NULL, "%s", err);
    struct offerd_placements *pl = offerd_placements_new();
    const char *placed = op_cases[_i].placed;
    for (size_t k = 0; placed[k] != '\0'; k++) {
        Mesos__V1__Offer *o = agent_offer(placed[k] - '0');
        char task[32];
        snprintf(task, sizeof(task), "t%zu", k);
        ck_assert_int_eq(offerd_placements_add(pl, task, o), 0);
        jpb_free(&o->base);
    }
    ck_assert_uint_eq(offerd_placements_count(pl), strlen(placed));
    int nagents = (int)(sizeof(agents) / sizeof(agents[0]));
    for (int i = 0; i < nagents; i++) {
        Mesos__V1__Offer *o = agent_offer(i);
        bool want = op_cases[_i].allowed[i] == '1';
        ck_assert_msg(offerd_constraints_match(c, o, pl) == want,
                      "%s with tasks on [%s]: agent %s should %sbe allowed",
                      op_cases[_i].constraints, placed, agents[i].host,
                      want ? "" : "not ");
        jpb_free(&o->base);
    }
    offerd_placements_free(pl);
    offerd_constraints_free(c);
}
END_TEST

START_TEST(test_placements_track_tasks)
{
    struct offerd_placements *pl = offerd_placements_new();
    Mesos__V1__Offer *o0 = agent_offer(0), *o2 = agent_offer(2);
    ck_assert_int_eq(offerd_placements_add(pl, "t1", o0), 0);
    ck_assert_int_eq(offerd_placements_add(pl, "t2", o0), 0);
    ck_assert_int_eq(offerd_placements_add(pl, "t3", o2), 0);
    ck_assert_uint_eq(offerd_placements_count_value(pl, "rack", "r1"), 2);
    ck_assert_uint_eq(offerd_placements_count_value(pl, "hostname", "agent3"),
                      1);
    ck_assert_str_eq(offerd_placements_agent(pl, "t3"), "a2");
    /* Moving a task. */
    ck_assert_int_eq(offerd_placements_add(pl, "t1", o2), 0);
    ck_assert_uint_eq(offerd_placements_count(pl), 3);
    ck_assert_uint_eq(offerd_placements_count_value(pl, "rack", "r1"), 1);
    ck_assert_int_eq(offerd_placements_remove(pl, "t2"), 0);
    ck_assert_int_eq(offerd_placements_remove(pl, "t2"), -1);
    ck_assert_uint_eq(offerd_placements_count_value(pl, "rack", "r1"), 0);
    ck_assert_ptr_null(offerd_placements_agent(pl, "t2"));
    ck_assert_int_eq(offerd_placements_add(pl, NULL, o0), -1);
    ck_assert_uint_eq(offerd_placements_count(pl), 2);
    jpb_free(&o0->base);
    jpb_free(&o2->base);
    offerd_placements_free(pl);
}
END_TEST

/* ---- Placement through the pool ---- */

START_TEST(test_find_first_fitting_offer)
{
    struct offerd_pool *p = pool_default();
    add_ok(p, "o1", "a1", "cpus:0.5;mem:64");
    add_ok(p, "o2", "a2", "cpus:2;mem:64");
    add_ok(p, "o3", "a3", "cpus:2;mem:512;ports:[31000-31005]");
    add_ok(p, "o4", "a4", "cpus:4;mem:1024;ports:[31000-31005]");
    char err[128];
    struct offerd_request *r = offerd_request_new(
        "cpus:1;mem:256;ports:[31002-31002]", NULL, err, sizeof(err));
    ck_assert_msg(r != NULL, "%s", err);
    struct offerd_pool_find_report rep;
    struct offerd_pool_offer *h = offerd_pool_find(p, r, NULL, NULL, &rep);
    ck_assert_str_eq(offerd_pool_offer_id(h), "o3");
    ck_assert_uint_eq(rep.considered, 3);
    ck_assert_uint_eq(rep.no_room, 2);
    ck_assert_uint_eq(rep.constrained, 0);
    /* find does not use: o3 is still there. */
    ck_assert_uint_eq(metrics(p).size, 4);
    ck_assert_int_eq(offerd_pool_use(p, h), 0);

    /* Pack: the task takes exactly what it asked for, once. */
    struct offerd_fit *f = offerd_pool_fit_new(p, h);
    Mesos__V1__Resource **res;
    size_t n;
    ck_assert_int_eq(offerd_fit_take(f, r, &res, &n), 0);
    res_list got = RES_LIST_INIT, want = RES_LIST_INIT;
    ck_assert_int_eq(res_list_from_pb(res, n, &got, err, sizeof(err)), 0);
    ck_assert_int_eq(res_list_parse("cpus:1;mem:256;ports:[31002-31002]", NULL,
                                    &want, err, sizeof(err)),
                     0);
    ck_assert(res_list_equal(&got, &want));
    res_list_clear(&got);
    res_list_clear(&want);
    offerd_resources_free(res, n);
    ck_assert_int_eq(offerd_fit_take(f, r, &res, &n), -1); /* port taken */
    offerd_fit_free(f);
    offerd_pool_release(p, h);

    h = offerd_pool_take(p, r, NULL, NULL, NULL);
    ck_assert_str_eq(offerd_pool_offer_id(h), "o4");
    offerd_pool_release(p, h);
    ck_assert_ptr_null(offerd_pool_take(p, r, NULL, NULL, &rep));
    ck_assert_uint_eq(rep.considered, 2);
    ck_assert_uint_eq(rep.no_room, 2);
    struct offerd_pool_metrics m = metrics(p);
    ck_assert_uint_eq(m.used, 2);
    ck_assert_uint_eq(m.size, 2);
    offerd_request_free(r);
    offerd_pool_free(p);
}
END_TEST

START_TEST(test_find_with_constraints)
{
    struct offerd_pool *p = pool_default();
    int nagents = (int)(sizeof(agents) / sizeof(agents[0]));
    for (int i = 0; i < nagents; i++) {
        Mesos__V1__Offer *o = agent_offer(i);
        ck_assert_int_eq(offerd_pool_add(p, o), OFFERD_POOL_ADDED);
        jpb_free(&o->base);
    }
    char err[128];
    struct offerd_constraints *c =
        offerd_constraints_parse("rack:UNIQUE", err, sizeof(err));
    struct offerd_request *r = offerd_request_new("cpus:1", NULL, err, 128);
    struct offerd_placements *pl = offerd_placements_new();
    const char *expect[] = {"o0", "o2", NULL};
    for (int k = 0; k < 3; k++) {
        struct offerd_pool_find_report rep;
        struct offerd_pool_offer *h = offerd_pool_take(p, r, c, pl, &rep);
        if (expect[k] == NULL) {
            ck_assert_ptr_null(h);
            /* o1 and o3 break rack:UNIQUE, db1 has no rack. */
            ck_assert_uint_eq(rep.considered, 3);
            ck_assert_uint_eq(rep.constrained, 3);
            break;
        }
        ck_assert_str_eq(offerd_pool_offer_id(h), expect[k]);
        char task[8];
        snprintf(task, sizeof(task), "t%d", k);
        offerd_placements_add(pl, task, offerd_pool_offer_get(h));
        offerd_pool_release(p, h);
    }
    offerd_placements_free(pl);
    offerd_constraints_free(c);
    offerd_request_free(r);
    offerd_pool_free(p);
}
END_TEST

START_TEST(test_request_roles_and_errors)
{
    char err[128];
    ck_assert_ptr_null(offerd_request_new("cpus:x", NULL, err, sizeof(err)));
    ck_assert_ptr_null(offerd_request_new("", NULL, err, sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "no resources"));
    ck_assert_ptr_null(offerd_request_new("cpus:1", "/bad", err, sizeof(err)));

    /* Reserved resources go to their role only. */
    struct offerd_pool *p = pool_default();
    Mesos__V1__Offer *o = offer("o1", "a1", "cpus(eng):2;mem:64");
    ck_assert_int_eq(offerd_pool_add(p, o), OFFERD_POOL_ADDED);
    jpb_free(&o->base);
    struct offerd_request *any = offerd_request_new("cpus:1", "*", err, 128);
    struct offerd_request *eng = offerd_request_new("cpus:1", "eng", err, 128);
    ck_assert_ptr_null(offerd_pool_find(p, any, NULL, NULL, NULL));
    struct offerd_pool_offer *h = offerd_pool_find(p, eng, NULL, NULL, NULL);
    ck_assert_ptr_nonnull(h);
    struct offerd_fit *f = offerd_pool_fit_new(p, h);
    Mesos__V1__Resource **res;
    size_t n;
    ck_assert_int_eq(offerd_fit_take(f, eng, &res, &n), 0);
    ck_assert_uint_eq(n, 1);
    ck_assert_str_eq(res[0]->role, "eng");
    offerd_resources_free(res, n);
    offerd_fit_free(f);
    offerd_pool_release(p, h);
    offerd_request_free(any);
    offerd_request_free(eng);
    offerd_pool_free(p);
}
END_TEST

START_TEST(test_bad_options)
{
    char err[128];
    struct offerd_pool_options o;
    memset(&o, 0, sizeof(o));
    o.min_cpus = NAN;
    ck_assert_ptr_null(offerd_pool_new(&o, err, sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "finite"));
    struct offerd_pool *p = offerd_pool_new(NULL, err, sizeof(err));
    ck_assert_ptr_nonnull(p);
    offerd_pool_free(p);
    offerd_pool_free(NULL);
}
END_TEST

/* ---- Concurrency ----
 *
 * The main thread adds 10,000 offers (a few of them too small, some
 * rescinded, time moving so that some expire) while 8 workers iterate and
 * race to use each offer they see, declining some. At the end every offer
 * was used at most once and none was lost. */

#define NOFFERS  10000
#define NTHREADS 8

static _Atomic int uses[NOFFERS];
static _Atomic uint64_t wins;
static _Atomic bool feeding_done;
static _Atomic uint64_t rng_seed;

static struct offerd_pool *race_pool;

static unsigned next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (unsigned)(*s >> 11);
}

static void *worker(void *arg)
{
    uint64_t s = atomic_load(&rng_seed) + (uint64_t)(uintptr_t)arg * 7919 + 1;
    for (;;) {
        bool done = atomic_load(&feeding_done);
        bool any = false;
        for (struct offerd_pool_offer *o = offerd_pool_first(race_pool);
             o != NULL; o = offerd_pool_next(race_pool, o)) {
            any = true;
            int idx = atoi(offerd_pool_offer_id(o) + 1);
            unsigned r = next_rand(&s) % 16;
            if (idx % 10 == 3) {
                /* Offers nobody wants: they leave by expiry or rescind. */
            } else if (r == 0) {
                offerd_pool_decline(race_pool, o, -1);
            } else if (r < 8 && offerd_pool_use(race_pool, o) == 0) {
                atomic_fetch_add(&uses[idx], 1);
                atomic_fetch_add(&wins, 1);
            }
        }
        if (done && !any)
            break;
    }
    return NULL;
}

START_TEST(test_threads_race_over_ten_thousand_offers)
{
    uint64_t seed = 0x5eed0f00d;
    atomic_store(&rng_seed, seed);
    fprintf(stderr, "offer pool race: seed %llu\n", (unsigned long long)seed);
    struct offerd_pool_options opt;
    memset(&opt, 0, sizeof(opt));
    opt.life_ns = 50 * SEC;
    race_pool = pool_with(opt);
    for (int i = 0; i < NOFFERS; i++)
        atomic_store(&uses[i], 0);
    atomic_store(&wins, 0);
    atomic_store(&feeding_done, false);

    pthread_t th[NTHREADS];
    for (int t = 0; t < NTHREADS; t++)
        ck_assert_int_eq(
            pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t), 0);

    uint64_t s = seed;
    uint64_t rescinded = 0, declined_small = 0, flushed = 0;
    Mesos__V1__Offer *big = offer("x", "a1", "cpus:1;mem:64");
    Mesos__V1__Offer *small = offer("x", "a1", "cpus:0.01;mem:64");
    char ids[NOFFERS][8];
    for (int i = 0; i < NOFFERS; i++) {
        snprintf(ids[i], sizeof(ids[i]), "o%d", i);
        Mesos__V1__Offer *o = i % 97 == 0 ? small : big;
        char *saved = o->id->value;
        o->id->value = ids[i];
        enum offerd_pool_add_result res = offerd_pool_add(race_pool, o);
        o->id->value = saved;
        ck_assert_int_eq(res, i % 97 == 0 ? OFFERD_POOL_DECLINED
                                          : OFFERD_POOL_ADDED);
        declined_small += i % 97 == 0;
        if (i % 13 == 0 && i > 0) {
            int k = (int)(next_rand(&s) % (unsigned)i);
            rescinded += offerd_pool_rescind(race_pool, ids[k]) == 0;
        }
        if (i % 500 == 0)
            advance(10 * SEC); /* offers older than 50 s expire */
        if (i % 1000 == 0)
            flushed += offerd_pool_flush(race_pool, NULL, NULL);
    }
    jpb_free(&big->base);
    jpb_free(&small->base);
    advance(100 * SEC); /* whatever is left expires */
    atomic_store(&feeding_done, true);
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    offerd_pool_expire(race_pool);
    flushed += offerd_pool_flush(race_pool, NULL, NULL);

    struct offerd_pool_metrics m = metrics(race_pool);
    fprintf(stderr,
            "offer pool race: used %llu declined %llu expired %llu "
            "rescinded %llu\n",
            (unsigned long long)m.used, (unsigned long long)m.declined,
            (unsigned long long)m.expired, (unsigned long long)m.rescinded);
    ck_assert_uint_eq(m.added, NOFFERS);
    ck_assert_uint_eq(m.size, 0);
    ck_assert_uint_eq(m.used + m.declined + m.expired + m.rescinded, NOFFERS);
    ck_assert_uint_eq(m.used, atomic_load(&wins));
    ck_assert_uint_eq(m.rescinded, rescinded);
    ck_assert_uint_ge(m.declined, declined_small);
    ck_assert_uint_eq(flushed, m.declined + m.expired);
    ck_assert_msg(m.used > 0 && m.expired > 0 && m.declined > declined_small,
                  "seed %llu: used %llu expired %llu declined %llu",
                  (unsigned long long)seed, (unsigned long long)m.used,
                  (unsigned long long)m.expired,
                  (unsigned long long)m.declined);
    for (int i = 0; i < NOFFERS; i++)
        ck_assert_msg(atomic_load(&uses[i]) <= 1,
                      "seed %llu: offer o%d used %d times",
                      (unsigned long long)seed, i, atomic_load(&uses[i]));
    offerd_pool_free(race_pool);
}
END_TEST

static Suite *offer_pool_suite(void)
{
    Suite *s = suite_create("offer_pool");
    TCase *tc = tcase_create("pool");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_arrival_order);
    tcase_add_test(tc, test_score_order_ties_by_arrival);
    tcase_add_test(tc, test_next_skips_what_left_and_sees_what_came);
    tcase_add_test(tc, test_next_from_an_offer_that_left);
    tcase_add_test(tc, test_offer_added_before_cursor_is_not_seen_by_next);
    tcase_add_test(tc, test_use_is_won_once);
    tcase_add_test(tc, test_declines_are_flushed_per_filter);
    tcase_add_test(tc, test_refuse_option);
    tcase_add_test(tc, test_rescind_and_clear);
    tcase_add_test(tc, test_add_rejects_and_declines_bad_offers);
    tcase_add_test(tc, test_the_copy_is_private);
    tcase_add_test(tc, test_offers_expire_after_the_life_period);
    tcase_add_test(tc, test_life_period_option);
    tcase_add_test(tc, test_small_offers_are_declined_at_once);
    tcase_add_test(tc, test_minimum_applies_to_adjusted_cpus);
    tcase_add_test(tc, test_lost_agent_offers_are_held_for_the_grace_period);
    tcase_add_test(tc, test_held_offer_can_expire);
    tcase_add_test(tc, test_grace_option);
    tcase_add_test(tc, test_adjustments_change_usable_amounts);
    tcase_add_test(tc, test_bad_options);
    suite_add_tcase(s, tc);

    tc = tcase_create("helpers");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_attribute_helpers);
    tcase_add_loop_test(tc, test_attribute_format, 0,
                        (int)(sizeof(formats) / sizeof(formats[0])));
    tcase_add_test(tc, test_ip_helper);
    suite_add_tcase(s, tc);

    tc = tcase_create("placement");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_loop_test(
        tc, test_constraints_parse, 0,
        (int)(sizeof(good_constraints) / sizeof(good_constraints[0])));
    tcase_add_loop_test(
        tc, test_constraints_parse_errors, 0,
        (int)(sizeof(bad_constraints) / sizeof(bad_constraints[0])));
    tcase_add_test(tc, test_constraints_limits);
    tcase_add_loop_test(tc, test_constraint_operators, 0,
                        (int)(sizeof(op_cases) / sizeof(op_cases[0])));
    tcase_add_test(tc, test_placements_track_tasks);
    tcase_add_test(tc, test_find_first_fitting_offer);
    tcase_add_test(tc, test_find_with_constraints);
    tcase_add_test(tc, test_placement_honours_adjustments);
    tcase_add_test(tc, test_request_roles_and_errors);
    suite_add_tcase(s, tc);

    tc = tcase_create("concurrency");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_threads_race_over_ten_thousand_offers);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(offer_pool_suite)
