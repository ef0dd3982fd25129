/*
 * Tests of metrics_counters.c: the counts /metrics/snapshot reads instead
 * of visiting every agent, framework and offer (agents connected,
 * frameworks active and connected, offered scalars, and the allocator's
 * kept totals) equal a full recount after every step of a sequence that
 * changes each of them, and the snapshot shows them.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "common/hmap.h"
#include "common/http_fake.h"
#include "common/resources.h"
#include "master/agents.h"
#include "master/metrics_counters.h"
#include "master/scheduler_api.h"
#include "master_fixture.h"

#define FW_INFO                                                                \
    "{\"user\":\"u\",\"name\":\"fw\",\"roles\":[\"web\"],"                     \
    "\"failover_timeout\":60,\"capabilities\":[{\"type\":\"MULTI_ROLE\"}]}"
#define TINY                                                                   \
    "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":0.5}},{"    \
    "\"name\":\"mem\",\"type\":\"SCALAR\",\"scalar\":{\"value\":64}}]"

MFX_STANDARD_FIXTURE

/* The snapshot's value of key equals want. */
static void metric_is(const char *step, const char *key, double want)
{
    double got = mfx_metric(&X, key);
    ck_assert_msg(got > want - 1e-9 && got < want + 1e-9,
                  "%s: %s is %g, a recount says %g", step, key, got, want);
}

/* The kept view equals a recount, field by field, and the snapshot shows
 * it. */
static void assert_recount(const char *step)
{
    struct master_mc_view v, r;
    master_mc_view(X.m, &v);
    master_mc_recount(X.m, &r);
    const struct {
        const char *name;
        uint32_t kept, counted;
    } n[] = {
        {"agents", v.agents, r.agents},
        {"agents_connected", v.agents_connected, r.agents_connected},
        {"frameworks", v.frameworks, r.frameworks},
        {"frameworks_active", v.frameworks_active, r.frameworks_active},
        {"frameworks_connected", v.frameworks_connected,
         r.frameworks_connected},
        {"offers", v.offers, r.offers},
    };
    for (size_t i = 0; i < sizeof(n) / sizeof(n[0]); i++)
        ck_assert_msg(n[i].kept == n[i].counted, "%s: %s kept %u, counted %u",
                      step, n[i].name, n[i].kept, n[i].counted);
    for (int k = 0; k < MASTER_LIVE_NAMES; k++) {
        for (int rev = 0; rev < 2; rev++)
            ck_assert_msg(v.total[rev][k] == r.total[rev][k],
                          "%s: %s total[%d] kept %lld, counted %lld", step,
                          master_live_names[k], rev, (long long)v.total[rev][k],
                          (long long)r.total[rev][k]);
        ck_assert_msg(v.offered[k] == r.offered[k],
                      "%s: %s offered kept %lld, counted %lld", step,
                      master_live_names[k], (long long)v.offered[k],
                      (long long)r.offered[k]);
    }
    metric_is(step, "master/slaves_active", r.agents_connected);
    metric_is(step, "master/slaves_inactive", r.agents - r.agents_connected);
    metric_is(step, "master/frameworks_active", r.frameworks_active);
    metric_is(step, "master/frameworks_inactive",
              r.frameworks - r.frameworks_active);
    metric_is(step, "master/frameworks_connected", r.frameworks_connected);
    metric_is(step, "master/frameworks_disconnected",
              r.frameworks - r.frameworks_connected);
    metric_is(step, "master/outstanding_offers", r.offers);
    metric_is(step, "master/cpus_total", res_scalar_to_double(r.total[0][0]));
    metric_is(step, "master/cpus_revocable_total",
              res_scalar_to_double(r.total[1][0]));
    metric_is(step, "master/mem_total", res_scalar_to_double(r.total[0][1]));
    metric_is(step, "allocator/mesos/resources/cpus/total",
              res_scalar_to_double(r.total[0][0] + r.total[1][0]));
    metric_is(step, "allocator/mesos/resources/cpus/offered_or_allocated",
              res_scalar_to_double(X.m->live.used[0][0] + X.m->live.used[1][0] +
                                   r.offered[0]));
}

/* The first offer id of the next OFFERS event of FW into id (256 bytes),
 * after the loop settled; "" when none came. */
static void next_offer(char *id)
{
    id[0] = '\0';
    json_t *ev = mfx_next_event(&X, &FW, "OFFERS");
    if (ev == NULL)
        return;
    json_t *o = json_array_get(
        json_object_get(json_object_get(ev, "offers"), "offers"), 0);
    const char *v =
        json_string_value(json_object_get(json_object_get(o, "id"), "value"));
    snprintf(id, 256, "%s", v != NULL ? v : "");
    json_decref(ev);
}

/* An operator call: asserts a 2xx. */
static void operator_ok(const char *json)
{
    struct http_fake *f = mfx_operator(&X, json);
    ck_assert_msg(http_fake_status(f) / 100 == 2, "%s: %d %s", json,
                  http_fake_status(f), mfx_body(f));
    http_fake_free(f);
    mfx_settle(&X);
}

/* SUBSCRIBE again as agent p (its id, hostname host1, resources cpus:4 and
 * mem:4096): a reconnection. */
static void agent_resubscribe(struct mfx_peer *p)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"type\":\"SUBSCRIBE\",\"subscribe\":{\"agent_info\":{"
             "\"id\":{\"value\":\"%s\"},\"hostname\":\"host1\",\"port\":5051,"
             "\"resources\":[{\"name\":\"cpus\",\"type\":\"SCALAR\","
             "\"scalar\":{\"value\":4}},{\"name\":\"mem\",\"type\":"
             "\"SCALAR\",\"scalar\":{\"value\":4096}}]},\"version\":\"test\","
             "\"address\":{\"ip\":\"127.0.0.2\",\"port\":5051}}}",
             p->id);
    mfx_peer_free(p);
    p->stream = mfx_post(&X, master_agent_api, NULL, json);
    ck_assert_msg(http_fake_is_stream(p->stream), "re-SUBSCRIBE: %d %s",
                  http_fake_status(p->stream), mfx_body(p->stream));
    snprintf(p->stream_id, sizeof(p->stream_id), "%s",
             http_fake_reply_header(p->stream, "Mesos-Stream-Id"));
    p->next = 0;
    mfx_settle(&X);
}

/* SUBSCRIBE FW again with its id (a failover while connected, or a
 * return after a disconnection); the old stream is freed. */
static void framework_resubscribe(void)
{
    char info[512], id[256];
    snprintf(id, sizeof(id), "%s", FW.id);
    snprintf(info, sizeof(info),
             "{\"id\":{\"value\":\"%s\"},\"user\":\"u\",\"name\":\"fw\","
             "\"roles\":[\"web\"],\"failover_timeout\":60,"
             "\"capabilities\":[{\"type\":\"MULTI_ROLE\"}]}",
             id);
    struct http_fake *old = FW.stream;
    FW.stream = NULL;
    mfx_framework_subscribe(&X, &FW, info);
    http_fake_free(old);
    mfx_settle(&X);
}

START_TEST(test_counters_equal_recount)
{
    char offer[256], json[2048];
    assert_recount("empty");

    mfx_framework_subscribe(&X, &FW, FW_INFO);
    assert_recount("framework subscribed");
    metric_is("framework subscribed", "master/frameworks_active", 1);

    mfx_agent_subscribe(&X, &AG, "host1", "cpus:4;mem:4096");
    next_offer(offer);
    ck_assert_str_ne(offer, "");
    assert_recount("agent subscribed, offered");
    metric_is("offered", "master/outstanding_offers", 1);

    mfx_agent_subscribe(&X, &AG2, "host2", "cpus:2;mem:1024;gpus:1");
    mfx_settle(&X);
    assert_recount("second agent");

    /* Declined: its resources are no longer offered. */
    snprintf(json, sizeof(json), "{\"offer_ids\":[{\"value\":\"%s\"}]}", offer);
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "DECLINE", "decline", json),
                     202);
    assert_recount("declined");
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "REVIVE", NULL, NULL), 202);

    /* Launched on AG: the offer is taken, its unused part comes back. */
    mfx_settle(&X);
    offer[0] = '\0';
    for (int i = 0; i < 3 && offer[0] == '\0'; i++) {
        char id[256];
        next_offer(id);
        /* Only an offer of AG's resources will do for the launch. */
        size_t pos = 0;
        void *val;
        while (hmap_next(X.m->offers, &pos, NULL, &val)) {
            const struct offer *o = val;
            if (strcmp(o->agent->id, AG.id) == 0)
                snprintf(offer, sizeof(offer), "%s", o->id);
        }
        (void)id;
    }
    ck_assert_str_ne(offer, "");
    snprintf(json, sizeof(json),
             "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{"
             "\"type\":\"LAUNCH\",\"launch\":{\"task_infos\":["
             "{\"name\":\"n\",\"task_id\":{\"value\":\"t1\"},"
             "\"agent_id\":{\"value\":\"%s\"},\"resources\":" TINY
             ",\"command\":{\"value\":\"true\"}},"
             "{\"name\":\"n\",\"task_id\":{\"value\":\"t2\"},"
             "\"agent_id\":{\"value\":\"%s\"},\"resources\":" TINY
             ",\"command\":{\"value\":\"true\"}}]}}]}",
             offer, AG.id, AG.id);
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "ACCEPT", "accept", json),
                     202);
    mfx_settle(&X);
    assert_recount("launched");
    mfx_task_update(&X, &FW, &AG, "t1", "TASK_RUNNING", 1, true);
    mfx_task_update(&X, &FW, &AG, "t2", "TASK_RUNNING", 2, true);
    mfx_task_update(&X, &FW, &AG, "t1", "TASK_FINISHED", 3, true);
    mfx_settle(&X);
    assert_recount("task finished");
    mfx_task_update(&X, &FW, &AG, "t2", "TASK_LOST", 4, true);
    mfx_settle(&X);
    assert_recount("task lost");

    /* Revocable resources: the agent's estimate grows its total. */
    ck_assert_int_eq(
        mfx_agent_call(&X, &AG, "UPDATE_OVERSUBSCRIBED",
                       "update_oversubscribed",
                       "{\"oversubscribed_resources\":[{\"name\":\"cpus\","
                       "\"type\":\"SCALAR\",\"scalar\":{\"value\":3},"
                       "\"revocable\":{}}]}"),
        202);
    mfx_settle(&X);
    assert_recount("oversubscribed");
    metric_is("oversubscribed", "master/cpus_revocable_total", 3);
    ck_assert_int_eq(
        mfx_agent_call(&X, &AG, "UPDATE_OVERSUBSCRIBED",
                       "update_oversubscribed",
                       "{\"oversubscribed_resources\":[{\"name\":\"cpus\","
                       "\"type\":\"SCALAR\",\"scalar\":{\"value\":1},"
                       "\"revocable\":{}}]}"),
        202);
    mfx_settle(&X);
    assert_recount("estimate shrunk");

    /* An operator's reservation and its undoing (offers on the agent are
     * rescinded on the way). */
    snprintf(json, sizeof(json),
             "{\"type\":\"RESERVE_RESOURCES\",\"reserve_resources\":{"
             "\"agent_id\":{\"value\":\"%s\"},\"resources\":[{\"name\":"
             "\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1},"
             "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"web\"}]}]}}",
             AG2.id);
    operator_ok(json);
    assert_recount("reserved");
    snprintf(json, sizeof(json),
             "{\"type\":\"UNRESERVE_RESOURCES\",\"unreserve_resources\":{"
             "\"agent_id\":{\"value\":\"%s\"},\"resources\":[{\"name\":"
             "\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1},"
             "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"web\"}]}]}}",
             AG2.id);
    operator_ok(json);
    assert_recount("unreserved");

    /* Deactivated: its offers are rescinded, it stays connected. */
    snprintf(json, sizeof(json),
             "{\"type\":\"DEACTIVATE_AGENT\",\"deactivate_agent\":{"
             "\"agent_id\":{\"value\":\"%s\"}}}",
             AG2.id);
    operator_ok(json);
    assert_recount("deactivated");
    snprintf(json, sizeof(json),
             "{\"type\":\"REACTIVATE_AGENT\",\"reactivate_agent\":{"
             "\"agent_id\":{\"value\":\"%s\"}}}",
             AG2.id);
    operator_ok(json);
    assert_recount("reactivated");

    /* AG's connection drops, then it comes back. */
    http_fake_disconnect(AG.stream);
    mfx_settle(&X);
    ck_assert(!master_agent_find(X.m, AG.id)->connected);
    assert_recount("agent disconnected");
    metric_is("agent disconnected", "master/slaves_inactive", 1);
    agent_resubscribe(&AG);
    ck_assert(master_agent_find(X.m, AG.id)->connected);
    assert_recount("agent reconnected");

    /* The framework fails over (a new connection replaces the old), loses
     * its connection, and comes back. */
    framework_resubscribe();
    assert_recount("framework failed over");
    http_fake_disconnect(FW.stream);
    mfx_settle(&X);
    assert_recount("framework disconnected");
    metric_is("framework disconnected", "master/frameworks_inactive", 1);
    metric_is("framework disconnected", "master/frameworks_disconnected", 1);
    framework_resubscribe();
    assert_recount("framework back");

    /* Agents leave: one says goodbye, one is marked gone while
     * connected. */
    ck_assert_int_eq(mfx_agent_call(&X, &AG2, "UNREGISTER", NULL, NULL), 202);
    mfx_settle(&X);
    ck_assert_ptr_null(master_agent_find(X.m, AG2.id));
    assert_recount("agent unregistered");
    snprintf(json, sizeof(json),
             "{\"type\":\"MARK_AGENT_GONE\",\"mark_agent_gone\":{"
             "\"agent_id\":{\"value\":\"%s\"}}}",
             AG.id);
    operator_ok(json);
    ck_assert_ptr_null(master_agent_find(X.m, AG.id));
    assert_recount("agent gone");
    metric_is("agent gone", "master/slaves_active", 0);
    metric_is("agent gone", "master/cpus_total", 0);

    /* The framework goes while connected. */
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "TEARDOWN", NULL, NULL), 202);
    mfx_settle(&X);
    assert_recount("framework torn down");
    metric_is("framework torn down", "master/frameworks_active", 0);
    metric_is("framework torn down", "master/frameworks_connected", 0);
}
END_TEST

/* A flag set on an agent that is not in m->agents (gone, or a stray
 * copy) counts nothing, nor does setting a flag to what it is. */
START_TEST(test_unindexed_count_nothing)
{
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:1;mem:128");
    struct agent *ag = master_agent_find(X.m, AG.id);
    ck_assert_ptr_nonnull(ag);
    ck_assert_uint_eq(X.m->mc.agents_connected, 1);
    /* Not in m->agents under this pointer: a stray flag change. */
    struct agent stray = *ag;
    stray.id = "not-indexed";
    master_mc_agent_set_connected(X.m, &stray, false);
    ck_assert_uint_eq(X.m->mc.agents_connected, 1);
    ck_assert(!stray.connected);
    /* Setting a flag to what it is changes nothing. */
    master_mc_agent_set_connected(X.m, ag, true);
    ck_assert_uint_eq(X.m->mc.agents_connected, 1);
    assert_recount("stray");
}
END_TEST

static Suite *metrics_counters_suite(void)
{
    Suite *s = suite_create("master_metrics_counters");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_counters_equal_recount);
    tcase_add_test(tc, test_unindexed_count_nothing);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(metrics_counters_suite)
