/*
 * A framework's allocation options end to end, with the real master and
 * real agents: suppressed_roles set by UPDATE_FRAMEWORK from a libofferd
 * framework (harness_fw.h) stop its offers until it revives, and
 * offer_constraints at SUBSCRIBE keep a scripted framework's offers on the
 * agents whose attributes match.
 */
#include <check.h>
#include <event2/event.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "harness_api.h"
#include "harness_fw.h"

static struct e2e_proc master;
static struct e2e_proc agents[2];
static int nagents;
static struct event_base *base;

/* A master allocating every 50 ms and n agents, agent-ra on rack "ra" and
 * agent-rb on rack "rb" (TEXT attributes), all registered. */
/* The master and n agents (at most 2), agent i on rack ra or rb. */
static void cluster_start(int n)
{
    const char *margs[] = {"--allocation_interval=50ms", NULL};
    static const char *const racks[] = {"ra", "rb"};
    char hostname[2][32], attrs[2][32];
    const char *aargs[2][4];
    const char *const *lists[2];
    for (int i = 0; i < n; i++) {
        snprintf(hostname[i], sizeof(hostname[i]), "--hostname=agent-%s",
                 racks[i]);
        snprintf(attrs[i], sizeof(attrs[i]), "--attributes=rack:%s", racks[i]);
        aargs[i][0] = "--resources=cpus:2;mem:512;disk:1024";
        aargs[i][1] = hostname[i];
        aargs[i][2] = attrs[i];
        aargs[i][3] = NULL;
        lists[i] = aargs[i];
    }
    nagents = n;
    base = e2e_cluster_start(&master, margs, agents, n, lists);
}

static void cluster_stop(void)
{
    e2e_cluster_stop(&master, agents, nagents, &base);
}

static bool declined_some(void *arg)
{
    (void)arg;
    return e2e_metric(master.port, "master/messages_decline_offers") >= 1;
}

static bool task_finished(void *arg)
{
    return hfw_state(arg, "t1") == MESOS__V1__TASK_STATE__TASK_FINISHED;
}

static struct hfw fw;

/* UPDATE_FRAMEWORK with the framework's role in suppressed_roles: no more
 * offers (the framework declined each one it got, with a 1 s filter, so
 * without suppression they would keep coming); a REVIVE brings them back
 * and a task runs. */
START_TEST(test_update_framework_suppresses_offers)
{
    cluster_start(1);
    hfw_start(&fw, base, master.port, OFFERD_ENCODING_JSON);
    ck_assert_msg(e2e_loop_until(base, declined_some, NULL, 10000),
                  "no offer was declined");

    Mesos__V1__FrameworkInfo fi = MESOS__V1__FRAMEWORK_INFO__INIT;
    fi.user = "e2e";
    fi.name = "e2e-fw";
    fi.has_failover_timeout = 1;
    fi.failover_timeout = 600;
    const char *suppressed[] = {"*"};
    ck_assert_int_eq(offerd_sched_update_framework(fw.s, &fi, suppressed, 1),
                     0);
    /* Let the update apply and the offer out at that moment come back
     * declined (its 1 s filter included)... */
    e2e_loop_for(base, 1500);
    double before = e2e_metric(master.port, "master/messages_decline_offers");
    /* ...then this window proves the absence: without suppression the
     * agent would be offered again (and declined) after each 1 s filter,
     * 30 allocation intervals being 1.5 s. */
    e2e_loop_for(base, 1500);
    ck_assert_double_eq(
        e2e_metric(master.port, "master/messages_decline_offers"), before);
    ck_assert_double_eq(e2e_metric(master.port, "master/outstanding_offers"),
                        0);

    hfw_launch(&fw, "t1", "true"); /* sends REVIVE */
    ck_assert_msg(e2e_loop_until(base, task_finished, &fw, 15000),
                  "the task did not finish after REVIVE");
    hfw_free(&fw);
    cluster_stop();
}
END_TEST

#define FW_INFO "{\"user\":\"e2e\",\"name\":\"constrained\"}"

static const char *subscribe_with(const char *predicate)
{
    static char buf[1024];
    snprintf(buf, sizeof(buf),
             "{\"framework_info\":" FW_INFO ",\"offer_constraints\":{"
             "\"role_constraints\":{\"*\":{\"groups\":[{\"attribute_"
             "constraints\":[{\"selector\":{\"attribute_name\":\"rack\"},"
             "\"predicate\":%s}]}]}}}}",
             predicate);
    return buf;
}

/* Offers go only to agents whose attributes pass the constraints; an
 * invalid regex is refused with the reason. */
START_TEST(test_offer_constraints_keep_offers_on_matching_agents)
{
    cluster_start(2);
    char reason[512];
    char body[2048];
    snprintf(body, sizeof(body), "{\"type\":\"SUBSCRIBE\",\"subscribe\":%s}",
             subscribe_with("{\"text_matches\":{\"regex\":\"r(b\"}}"));
    ck_assert_int_eq(api_post(master.port, "/api/v1/scheduler", NULL, body,
                              reason, sizeof(reason)),
                     400);
    ck_assert_msg(strstr(reason, "subscribe.offer_constraints") != NULL &&
                      strstr(reason, "bad regex") != NULL,
                  "%s", reason);

    struct conn c;
    api_subscribe_framework_call(
        &c, master.port,
        subscribe_with("{\"text_equals\":{\"value\":\"rb\"}}"));
    char offer_id[256], agent_id[256];
    json_t *ev = api_wait_offer(&c, offer_id, agent_id, 10000);
    ck_assert_ptr_nonnull(ev);
    json_t *o = json_array_get(
        json_object_get(json_object_get(ev, "offers"), "offers"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(o, "hostname")),
                     "agent-rb");
    json_decref(ev);
    /* Refuse agent-rb for an hour: only agent-ra is left, which the
     * constraints exclude. */
    ck_assert_int_eq(api_decline(&c, master.port, offer_id, 3600), 202);
    /* The window proves the absence: 20 allocation intervals. */
    ev = api_wait_event(&c, "OFFERS", 1000);
    ck_assert_msg(ev == NULL, "offered an excluded agent");
    api_conn_close(&c);
    cluster_stop();
}
END_TEST

static Suite *offer_filters_suite(void)
{
    Suite *s = suite_create("e2e_offer_filters");
    TCase *tc = tcase_create("offer_filters");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_update_framework_suppresses_offers);
    tcase_add_test(tc, test_offer_constraints_keep_offers_on_matching_agents);
    suite_add_tcase(s, tc);
    return s;
}

E2E_CHECK_MAIN(offer_filters_suite)
