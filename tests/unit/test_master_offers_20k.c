/*
 * Issue 17's case: a framework offered 20,000 agents with 1 KB of
 * attributes each gets every one of them and launches on them. One cycle's
 * offers to the framework are about 36 MB of JSON: they must reach it as
 * bounded OFFERS events (MASTER_OFFERS_EVENT_MAX_BYTES of protobuf each), with
 * no offer lost or repeated and the stream kept open, and one ACCEPT per
 * offer must reach every agent as a RUN_TASK.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "common/hmap.h"
#include "master/offers.h"
#include "master_fixture.h"

#define NAGENTS 20000

#define INFO                                                                   \
    "{\"user\":\"u\",\"name\":\"fw\",\"roles\":[\"r\"],"                       \
    "\"capabilities\":[{\"type\":\"MULTI_ROLE\"}]}"

MFX_STANDARD_FIXTURE

static struct mfx_peer *agents;

/* The 1 KB of attributes every agent has: NATTRS TEXT attributes of 100
 * bytes each (1,100 bytes of values), as a real agent's rack, zone,
 * kernel and labels would be. */
#define NATTRS 11
static char *attributes(void)
{
    size_t cap = NATTRS * 160 + 8, n = 0;
    char *s = malloc(cap);
    n += (size_t)snprintf(s + n, cap - n, "[");
    for (int k = 0; k < NATTRS; k++) {
        char value[101];
        memset(value, 'a' + k % 26, 100);
        value[100] = '\0';
        n += (size_t)snprintf(
            s + n, cap - n,
            "%s{\"name\":\"attr%d\",\"type\":\"TEXT\",\"text\":{\"value\":"
            "\"%s\"}}",
            k ? "," : "", k, value);
    }
    snprintf(s + n, cap - n, "]");
    return s;
}

static void free_agents(void)
{
    for (size_t i = 0; agents != NULL && i < NAGENTS; i++)
        mfx_peer_free(&agents[i]);
    free(agents);
    agents = NULL;
}

START_TEST(test_20k_agents_1kb_attributes)
{
    agents = calloc(NAGENTS, sizeof(*agents));
    char *attrs = attributes();
    struct hmap *by_id = hmap_new(); /* agent id -> index + 1 */
    for (size_t i = 0; i < NAGENTS; i++) {
        char host[32];
        snprintf(host, sizeof(host), "host%zu.example.org", i);
        mfx_agent_subscribe_attrs(&X, &agents[i], host, "cpus:1;mem:64", attrs);
        hmap_put(by_id, agents[i].id, (void *)(uintptr_t)(i + 1));
    }
    free(attrs);
    mfx_framework_subscribe(&X, &FW, INFO);
    mfx_settle(&X);

    /* Every agent offered once, in events within the bound. */
    size_t events = 0, noffers = 0;
    char(*offer_ids)[64] = calloc(NAGENTS, sizeof(*offer_ids));
    char(*offer_agent)[64] = calloc(NAGENTS, sizeof(*offer_agent));
    unsigned char *offered = calloc(NAGENTS, 1);
    /* The framework's events, each parsed once (mfx_next_event would parse
     * every one twice). */
    size_t nrec = http_fake_record_count(FW.stream);
    for (size_t r = FW.next; r < nrec; r++) {
        size_t len;
        const uint8_t *rec = http_fake_record(FW.stream, r, &len);
        json_t *ev = json_loadb((const char *)rec, len, 0, NULL);
        ck_assert_ptr_nonnull(ev);
        const char *type = json_string_value(json_object_get(ev, "type"));
        if (type == NULL || strcmp(type, "OFFERS") != 0) {
            json_decref(ev);
            continue;
        }
        events++;
        /* The bound counts the offers' protobuf bytes; their JSON is
         * about half again as large, never twice. */
        ck_assert_uint_le(len, 2 * MASTER_OFFERS_EVENT_MAX_BYTES);
        json_t *list = json_object_get(json_object_get(ev, "offers"), "offers");
        size_t k;
        json_t *o;
        json_array_foreach(list, k, o)
        {
            const char *id = json_string_value(
                json_object_get(json_object_get(o, "id"), "value"));
            const char *agent = json_string_value(
                json_object_get(json_object_get(o, "agent_id"), "value"));
            ck_assert_ptr_nonnull(id);
            ck_assert_ptr_nonnull(agent);
            uintptr_t idx = (uintptr_t)hmap_get(by_id, agent);
            ck_assert_msg(idx > 0, "offer of an unknown agent %s", agent);
            ck_assert_msg(!offered[idx - 1], "agent %s offered twice", agent);
            offered[idx - 1] = 1;
            /* The attributes come with the offer, whole. */
            ck_assert_uint_eq(json_array_size(json_object_get(o, "attributes")),
                              NATTRS);
            ck_assert_uint_lt(noffers, NAGENTS);
            snprintf(offer_ids[noffers], sizeof(offer_ids[0]), "%s", id);
            snprintf(offer_agent[noffers], sizeof(offer_agent[0]), "%s", agent);
            noffers++;
        }
        json_decref(ev);
    }
    FW.next = nrec;
    ck_assert_uint_eq(noffers, NAGENTS);
    /* About 30 MB of offers in protobuf: 28 events or more. */
    ck_assert_uint_ge(events, 28);

    /* One task on each: every agent gets its RUN_TASK. */
    for (size_t i = 0; i < noffers; i++) {
        char payload[1024];
        snprintf(payload, sizeof(payload),
                 "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{"
                 "\"type\":\"LAUNCH\",\"launch\":{\"task_infos\":[{\"name\":"
                 "\"t\",\"task_id\":{\"value\":\"t%zu\"},\"agent_id\":{"
                 "\"value\":\"%s\"},\"resources\":[{\"name\":\"cpus\","
                 "\"type\":\"SCALAR\",\"scalar\":{\"value\":0.5}},{\"name\":"
                 "\"mem\",\"type\":\"SCALAR\",\"scalar\":{\"value\":32}}],"
                 "\"command\":{\"value\":\"true\"}}]}}]}",
                 offer_ids[i], i, offer_agent[i]);
        ck_assert_int_eq(
            mfx_framework_call(&X, &FW, "ACCEPT", "accept", payload), 202);
    }
    mfx_settle(&X);
    for (size_t i = 0; i < NAGENTS; i++)
        ck_assert_msg(mfx_has_event(&agents[i], "RUN_TASK"),
                      "agent %zu got no RUN_TASK", i);
    ck_assert_double_eq(mfx_metric(&X, "master/tasks_staging"), NAGENTS);

    free(offer_ids);
    free(offer_agent);
    free(offered);
    hmap_free(by_id, NULL);
    free_agents();
}
END_TEST

/* The agents are fakes that answer no PING: a run under the sanitizers
 * lasts minutes, past the default 15 s x 5 PINGs after which the master
 * would remove them. */
static void setup_slow_pings(void)
{
    const char *flags[] = {"--agent_ping_timeout=3600secs", NULL};
    mfx_start(&X, flags);
}

static void teardown_all(void)
{
    free_agents();
    teardown();
}

static Suite *offers_20k_suite(void)
{
    Suite *s = suite_create("master_offers_20k");
    TCase *tc = tcase_create("scale");
    tcase_add_checked_fixture(tc, setup_slow_pings, teardown_all);
    /* 20,000 agents through the handlers: seconds, many more under the
     * sanitizers. */
    tcase_set_timeout(tc, 280);
    tcase_add_test(tc, test_20k_agents_1kb_attributes);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(offers_20k_suite)
