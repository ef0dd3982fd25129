/*
 * How a cycle's offers reach a framework (master/offers.c), driven through
 * the master fixture: one OFFERS event while they are small, several
 * bounded events when together they would pass
 * MASTER_OFFERS_EVENT_MAX_BYTES, and never an offer lost or repeated.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "master/offers.h"
#include "master_fixture.h"

#define INFO                                                                   \
    "{\"user\":\"u\",\"name\":\"fw\",\"roles\":[\"r\"],"                       \
    "\"capabilities\":[{\"type\":\"MULTI_ROLE\"}]}"

#define NAGENTS 24

MFX_STANDARD_FIXTURE

static struct mfx_peer agents[NAGENTS];

static void teardown_agents(void)
{
    for (size_t i = 0; i < NAGENTS; i++)
        mfx_peer_free(&agents[i]);
    memset(agents, 0, sizeof(agents));
}

/* Subscribe NAGENTS agents, each with a TEXT attribute of attr_len bytes. */
static void subscribe_agents(size_t attr_len)
{
    char *value = malloc(attr_len + 1);
    memset(value, 'a', attr_len);
    value[attr_len] = '\0';
    size_t cap = attr_len + 128;
    char *attrs = malloc(cap);
    snprintf(
        attrs, cap,
        "[{\"name\":\"blob\",\"type\":\"TEXT\",\"text\":{\"value\":\"%s\"}}]",
        value);
    for (size_t i = 0; i < NAGENTS; i++) {
        char host[32];
        snprintf(host, sizeof(host), "host%zu", i);
        mfx_agent_subscribe_attrs(&X, &agents[i], host, "cpus:1;mem:64", attrs);
    }
    free(attrs);
    free(value);
}

/* Read every OFFERS event fw has: their count, and the offers in them in
 * *noffers, each offer id seen once (asserted). */
static size_t read_offers(size_t *noffers)
{
    size_t events = 0;
    *noffers = 0;
    char seen[NAGENTS][256];
    json_t *ev;
    while (mfx_has_event(&FW, "OFFERS") &&
           (ev = mfx_next_event(&X, &FW, "OFFERS")) != NULL) {
        events++;
        json_t *offers =
            json_object_get(json_object_get(ev, "offers"), "offers");
        size_t i;
        json_t *o;
        json_array_foreach(offers, i, o)
        {
            const char *id = json_string_value(
                json_object_get(json_object_get(o, "id"), "value"));
            ck_assert_ptr_nonnull(id);
            for (size_t k = 0; k < *noffers; k++)
                ck_assert_str_ne(seen[k], id);
            ck_assert_uint_lt(*noffers, NAGENTS);
            snprintf(seen[*noffers], sizeof(seen[0]), "%s", id);
            (*noffers)++;
        }
        json_decref(ev);
    }
    return events;
}

/* Small offers: one cycle, one event. */
START_TEST(test_small_offers_one_event)
{
    subscribe_agents(16);
    mfx_framework_subscribe(&X, &FW, INFO);
    mfx_settle(&X);
    size_t n;
    ck_assert_uint_eq(read_offers(&n), 1);
    ck_assert_uint_eq(n, NAGENTS);
    teardown_agents();
}
END_TEST

/* 24 offers of ~100 KB each (2.4 MB): split into events of at most the
 * bound (3 events at 1 MiB), every offer delivered once. */
START_TEST(test_large_offers_split)
{
    subscribe_agents(100 * 1000);
    mfx_framework_subscribe(&X, &FW, INFO);
    mfx_settle(&X);
    size_t n;
    size_t events = read_offers(&n);
    ck_assert_uint_eq(n, NAGENTS);
    size_t per_event = MASTER_OFFERS_EVENT_MAX_BYTES / (100 * 1000);
    ck_assert_uint_eq(events, (NAGENTS + per_event - 1) / per_event);
    teardown_agents();
}
END_TEST

static Suite *offers_suite(void)
{
    Suite *s = suite_create("master_offers");
    TCase *tc = tcase_create("flush");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_small_offers_one_event);
    tcase_add_test(tc, test_large_offers_split);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(offers_suite)
