/*
 * The fields and metrics the master shows as Mesos's do (issue 16): /state's
 * cluster, capabilities and build facts; a task's container, health check
 * and user in /state, /tasks and GET_TASKS; and the value of each metric
 * offerd added to Mesos's list (event queue, dropped messages, agent
 * removals by reason, unreachable transitions, registrar, system), read
 * through master_metrics_collect as /metrics/snapshot and GET_METRICS do.
 */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "check_main.h"
#include "master/agents.h"
#include "master/master.h"
#include "master/operator_api.h"
#include "master/send.h"
#include "master/state_endpoints.h"
#include "master_fixture.h"

#define FW_INFO "{\"user\":\"u\",\"name\":\"fw\",\"failover_timeout\":60}"

MFX_STANDARD_FIXTURE

static void metric_json(void *arg, const char *name, double v)
{
    json_object_set_new(arg, name, json_real(v));
}

/* Every metric as /metrics/snapshot has them (caller json_decrefs). */
static json_t *metrics(void)
{
    json_t *o = json_object();
    master_metrics_collect(X.m, metric_json, o);
    return o;
}

static double metric(const char *name)
{
    return mfx_metric(&X, name);
}

/* GET target through the master's routes: the JSON body of a 200. */
static json_t *get_ok(const char *target)
{
    struct http_fake *f = http_fake_new(X.base, HTTP_GET, target);
    http_fake_dispatch_server(f, X.m->http);
    ck_assert(http_fake_replied(f));
    ck_assert_int_eq(http_fake_status(f), 200);
    size_t len;
    const uint8_t *body = http_fake_body(f, &len);
    json_t *j = json_loadb((const char *)body, len, 0, NULL);
    http_fake_free(f);
    ck_assert_ptr_nonnull(j);
    return j;
}

/* An operator call's JSON answer (200 asserted). */
static json_t *operator_ok(const char *call)
{
    struct http_fake *f = mfx_operator(&X, call);
    ck_assert_int_eq(http_fake_status(f), 200);
    json_t *j = json_loads(mfx_body(f), 0, NULL);
    http_fake_free(f);
    ck_assert_ptr_nonnull(j);
    return j;
}

static bool no_agents(void *arg)
{
    (void)arg;
    return hmap_count(X.m->agents) == 0;
}

/* ---- /state -------------------------------------------------------------- */

START_TEST(test_state_master_fields)
{
    json_t *st = get_ok("/state");
    /* No --cluster: no "cluster", as Mesos. */
    ck_assert_ptr_null(json_object_get(st, "cluster"));
    ck_assert(json_is_string(json_object_get(st, "build_date")));
    ck_assert(json_is_number(json_object_get(st, "build_time")));
    ck_assert(json_is_string(json_object_get(st, "build_user")));
    ck_assert(json_is_integer(json_object_get(st, "unreachable_slaves")));
    /* The capabilities, as MasterInfo (and leader_info) lists them. */
    json_t *caps = json_object_get(st, "capabilities");
    ck_assert_uint_eq(json_array_size(caps), 3);
    const char *want[] = {"AGENT_UPDATE", "AGENT_DRAINING", "QUOTA_V2"};
    for (size_t i = 0; i < 3; i++)
        ck_assert_str_eq(
            json_string_value(json_object_get(json_array_get(caps, i), "type")),
            want[i]);
    ck_assert(
        json_equal(caps, json_object_get(json_object_get(st, "leader_info"),
                                         "capabilities")));
    /* The build facts are /version's. */
    json_t *ver = get_ok("/version");
    const char *key;
    json_t *v;
    json_object_foreach(ver, key, v)
    {
        ck_assert_msg(json_equal(v, json_object_get(st, key)),
                      "/state %s differs from /version's", key);
    }
    json_decref(ver);
    json_decref(st);

    /* GET_MASTER's MasterInfo carries them too. */
    json_t *gm = operator_ok("{\"type\":\"GET_MASTER\"}");
    json_t *mi =
        json_object_get(json_object_get(gm, "get_master"), "master_info");
    ck_assert_uint_eq(json_array_size(json_object_get(mi, "capabilities")), 3);
    json_decref(gm);
}
END_TEST

START_TEST(test_state_cluster_flag)
{
    mfx_stop(&X);
    const char *flags[] = {"--cluster=prod-east", NULL};
    mfx_start(&X, flags);
    json_t *st = get_ok("/state");
    ck_assert_str_eq(json_string_value(json_object_get(st, "cluster")),
                     "prod-east");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(st, "flags"), "cluster")),
                     "prod-east");
    json_decref(st);
}
END_TEST

/* A task's container, health check and user, as Mesos's model(Task) and
 * Task message show them. */
START_TEST(test_task_container_health_check_user)
{
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    mfx_agent_subscribe(&X, &AG, "h1", "cpus:2;mem:256");
    char offer_id[256];
    json_decref(mfx_first_offer(&X, &FW, offer_id));
    char payload[2048];
    snprintf(payload, sizeof(payload),
             "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{\"type\":"
             "\"LAUNCH\",\"launch\":{\"task_infos\":[{\"name\":\"t\","
             "\"task_id\":{\"value\":\"t1\"},\"agent_id\":{\"value\":\"%s\"},"
             "\"resources\":[{\"name\":\"cpus\",\"type\":\"SCALAR\","
             "\"scalar\":{\"value\":0.5}}],"
             "\"command\":{\"value\":\"sleep 60\",\"user\":\"nobody\"},"
             "\"container\":{\"type\":\"MESOS\"},"
             "\"health_check\":{\"type\":\"COMMAND\",\"command\":{"
             "\"value\":\"true\"}}}]}}]}",
             offer_id, AG.id);
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "ACCEPT", "accept", payload),
                     202);

    json_t *st = get_ok("/state");
    json_t *t = json_array_get(
        json_object_get(json_array_get(json_object_get(st, "frameworks"), 0),
                        "tasks"),
        0);
    ck_assert_ptr_nonnull(t);
    ck_assert_str_eq(json_string_value(json_object_get(t, "user")), "nobody");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(t, "container"), "type")),
                     "MESOS");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(t, "health_check"), "type")),
                     "COMMAND");
    json_decref(st);

    json_t *tasks = get_ok("/tasks");
    t = json_array_get(json_object_get(tasks, "tasks"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(t, "user")), "nobody");
    ck_assert_ptr_nonnull(json_object_get(t, "health_check"));
    ck_assert_ptr_nonnull(json_object_get(t, "container"));
    json_decref(tasks);

    json_t *gt = operator_ok("{\"type\":\"GET_TASKS\"}");
    t = json_array_get(
        json_object_get(json_object_get(gt, "get_tasks"), "tasks"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(t, "user")), "nobody");
    ck_assert_ptr_nonnull(json_object_get(t, "health_check"));
    ck_assert_ptr_nonnull(json_object_get(t, "container"));
    json_decref(gt);

    /* Once it ended and its end was acknowledged, the completed task the
     * master remembers keeps them, and its last update's uuid. */
    mfx_task_update(&X, &FW, &AG, "t1", "TASK_FINISHED", 5, true);
    mfx_settle(&X);
    st = get_ok("/state");
    json_t *fw = json_array_get(json_object_get(st, "frameworks"), 0);
    ck_assert_uint_eq(json_array_size(json_object_get(fw, "tasks")), 0);
    t = json_array_get(json_object_get(fw, "completed_tasks"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(t, "state")),
                     "TASK_FINISHED");
    ck_assert_str_eq(json_string_value(json_object_get(t, "user")), "nobody");
    ck_assert_ptr_nonnull(json_object_get(t, "health_check"));
    ck_assert_ptr_nonnull(json_object_get(t, "container"));
    json_decref(st);
    gt = operator_ok("{\"type\":\"GET_TASKS\"}");
    json_t *g = json_object_get(gt, "get_tasks");
    ck_assert_ptr_null(json_object_get(g, "tasks"));
    t = json_array_get(json_object_get(g, "completed_tasks"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(t, "state")),
                     "TASK_FINISHED");
    ck_assert_str_eq(json_string_value(json_object_get(t, "user")), "nobody");
    ck_assert_ptr_nonnull(json_object_get(t, "container"));
    ck_assert_str_eq(
        json_string_value(json_object_get(t, "status_update_uuid")),
        "AAAAAAAAAAAAAAAAAAAABQ==");
    json_t *sts = json_object_get(t, "statuses");
    json_t *last = json_array_get(sts, json_array_size(sts) - 1);
    ck_assert_str_eq(json_string_value(json_object_get(last, "source")),
                     "SOURCE_EXECUTOR");
    json_decref(gt);
}
END_TEST

/* ---- Metrics ------------------------------------------------------------- */

/* Mesos's removal reasons: an agent that says goodbye is "unregistered",
 * one that stops answering pings "unhealthy" (and an unreachable
 * transition scheduled and completed). */
START_TEST(test_metric_removal_reasons)
{
    mfx_agent_subscribe(&X, &AG, "h1", "cpus:1;mem:128");
    mfx_agent_subscribe(&X, &AG2, "h2", "cpus:1;mem:128");
    ck_assert_double_eq(metric("master/slave_removals/reason_unregistered"), 0);
    ck_assert_double_eq(metric("master/messages_unregister_slave"), 0);
    ck_assert_int_eq(mfx_agent_call(&X, &AG, "UNREGISTER", NULL, NULL), 202);
    mfx_settle(&X);
    ck_assert_double_eq(metric("master/slave_removals/reason_unregistered"), 1);
    ck_assert_double_eq(metric("master/messages_unregister_slave"), 1);
    ck_assert_double_eq(metric("master/slave_removals/reason_unhealthy"), 0);
    ck_assert_double_eq(metric("master/slave_unreachable_completed"), 0);

    /* AG2 never answers: after --max_agent_ping_timeouts misses it goes. */
    for (int64_t i = 0; i <= X.flags.max_agent_ping_timeouts; i++)
        master_agents_ping(X.m);
    ck_assert(mfx_run_until(&X, no_agents, NULL));
    ck_assert_double_eq(metric("master/slave_removals/reason_unhealthy"), 1);
    ck_assert_double_eq(metric("master/slave_unreachable_scheduled"), 1);
    ck_assert_double_eq(metric("master/slave_unreachable_completed"), 1);
    ck_assert_double_eq(metric("master/slave_unreachable_canceled"), 0);
    ck_assert_double_eq(metric("master/slave_removals/reason_registered"), 0);
    ck_assert_double_eq(metric("master/slave_removals"), 2);
    ck_assert_double_eq(metric("master/messages_unregister_slave"), 1);
}
END_TEST

static bool fw_disconnected(void *arg)
{
    const struct framework *fw = hmap_get(X.m->frameworks, arg);
    return fw != NULL && fw->stream == NULL;
}

/* An event for a framework whose stream is gone is dropped, and counted. */
START_TEST(test_metric_dropped_messages)
{
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    struct framework *fw = hmap_get(X.m->frameworks, FW.id);
    Mesos__V1__Scheduler__Event ev = MESOS__V1__SCHEDULER__EVENT__INIT;
    ev.has_type = true;
    ev.type = MESOS__V1__SCHEDULER__EVENT__TYPE__HEARTBEAT;
    ck_assert_int_eq(master_send_to_framework(fw, &ev), 0);
    ck_assert_double_eq(metric("master/dropped_messages"), 0);

    http_fake_disconnect(FW.stream);
    ck_assert(mfx_run_until(&X, fw_disconnected, FW.id));
    ck_assert_int_eq(master_send_to_framework(fw, &ev), -1);
    ck_assert_double_eq(metric("master/dropped_messages"), 1);
}
END_TEST

/* The loop's backlog: an allocation cycle asked for is a dispatch until it
 * runs; fake requests are never pending HTTP requests. */
START_TEST(test_metric_event_queue)
{
    mfx_settle(&X);
    ck_assert_double_eq(metric("master/event_queue_dispatches"), 0);
    ck_assert_double_eq(metric("master/event_queue_http_requests"), 0);
    ck_assert(metric("master/event_queue_messages") >= 0);
    master_allocate_soon(X.m);
    ck_assert_double_eq(metric("master/event_queue_dispatches"), 1);
    mfx_settle(&X);
    ck_assert_double_eq(metric("master/event_queue_dispatches"), 0);
}
END_TEST

/* The registrar: nothing stored at first; an admitted agent is stored (its
 * bytes counted, the transaction timed); a restarted master reads the same
 * size back. */
START_TEST(test_metric_registrar)
{
    ck_assert_double_eq(metric("registrar/registry_size_bytes"), 0);
    ck_assert_double_eq(metric("registrar/queued_operations"), 0);
    ck_assert(metric("registrar/state_fetch_ms") >= 0);
    json_t *o = metrics();
    ck_assert_ptr_null(json_object_get(o, "registrar/state_store_ms/count"));
    json_decref(o);

    mfx_agent_subscribe(&X, &AG, "h1", "cpus:1;mem:128");
    mfx_settle(&X);
    double size = metric("registrar/registry_size_bytes");
    ck_assert(size > 0);
    ck_assert(metric("registrar/state_store_ms/count") >= 1);
    double mn = metric("registrar/state_store_ms/min");
    double p50 = metric("registrar/state_store_ms/p50");
    double mx = metric("registrar/state_store_ms/max");
    ck_assert(mn >= 0 && mn <= p50 && p50 <= mx);
    ck_assert(metric("registrar/state_store_ms/p9999") <= mx);
    ck_assert_double_eq(metric("registrar/queued_operations"), 0);

    mfx_peer_free(&AG);
    mfx_restart(&X);
    ck_assert_double_eq(metric("registrar/registry_size_bytes"), size);
}
END_TEST

/* REQUEST calls are counted; the allocator's resources are the agents'
 * totals and what offers and tasks hold; revocable ones apart. */
START_TEST(test_metric_requests_and_resources)
{
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "REQUEST", "requests", "{}"),
                     202);
    ck_assert_double_eq(metric("master/messages_resource_request"), 1);
    mfx_agent_subscribe(&X, &AG, "h1", "cpus:2;mem:256");
    char offer_id[256];
    json_decref(mfx_first_offer(&X, &FW, offer_id));
    ck_assert_double_eq(metric("allocator/mesos/resources/cpus/total"), 2);
    ck_assert_double_eq(metric("allocator/mesos/resources/mem/total"), 256);
    ck_assert_double_eq(
        metric("allocator/mesos/resources/cpus/offered_or_allocated"), 2);
    ck_assert_double_eq(metric("master/cpus_total"), 2);
    ck_assert_double_eq(metric("master/cpus_revocable_total"), 0);
    ck_assert_double_eq(metric("master/cpus_revocable_percent"), 0);
    ck_assert_double_eq(metric("allocator/mesos/event_queue_dispatches"), 0);
}
END_TEST

START_TEST(test_metric_system)
{
    ck_assert_double_eq(metric("system/cpus_total"),
                        (double)sysconf(_SC_NPROCESSORS_ONLN));
    struct sysinfo si;
    ck_assert_int_eq(sysinfo(&si), 0);
    ck_assert_double_eq(metric("system/mem_total_bytes"),
                        (double)((uint64_t)si.totalram * si.mem_unit));
    ck_assert(metric("system/mem_free_bytes") > 0);
    ck_assert(metric("system/load_1min") >= 0);
    ck_assert(metric("system/load_5min") >= 0);
    ck_assert(metric("system/load_15min") >= 0);
}
END_TEST

/* GET_METRICS answers every metric /metrics/snapshot has. */
START_TEST(test_get_metrics_has_new_metrics)
{
    json_t *gm = operator_ok("{\"type\":\"GET_METRICS\",\"get_metrics\":{}}");
    json_t *arr =
        json_object_get(json_object_get(gm, "get_metrics"), "metrics");
    json_t *names = json_object();
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e)
    {
        json_object_set(names, json_string_value(json_object_get(e, "name")),
                        json_true());
    }
    const char *want[] = {
        "master/event_queue_messages",
        "master/event_queue_dispatches",
        "master/event_queue_http_requests",
        "master/dropped_messages",
        "master/slave_removals/reason_registered",
        "master/slave_removals/reason_unhealthy",
        "master/slave_removals/reason_unregistered",
        "master/slave_unreachable_scheduled",
        "master/slave_unreachable_completed",
        "master/slave_unreachable_canceled",
        "master/operator_event_stream_subscribers",
        "registrar/queued_operations",
        "registrar/registry_size_bytes",
        "registrar/state_fetch_ms",
        "registrar/state_store_ms",
        "system/cpus_total",
        "system/load_1min",
        "system/load_5min",
        "system/load_15min",
        "system/mem_total_bytes",
        "system/mem_free_bytes",
    };
    for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++)
        ck_assert_msg(json_object_get(names, want[k]) != NULL,
                      "GET_METRICS lacks %s", want[k]);
    json_decref(names);
    json_decref(gm);
}
END_TEST

static Suite *shapes_suite(void)
{
    Suite *s = suite_create("master_shapes");
    TCase *tc = tcase_create("state");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_state_master_fields);
    tcase_add_test(tc, test_state_cluster_flag);
    tcase_add_test(tc, test_task_container_health_check_user);
    suite_add_tcase(s, tc);
    tc = tcase_create("metrics");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_metric_removal_reasons);
    tcase_add_test(tc, test_metric_dropped_messages);
    tcase_add_test(tc, test_metric_event_queue);
    tcase_add_test(tc, test_metric_registrar);
    tcase_add_test(tc, test_metric_requests_and_resources);
    tcase_add_test(tc, test_metric_system);
    tcase_add_test(tc, test_get_metrics_has_new_metrics);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(shapes_suite)
