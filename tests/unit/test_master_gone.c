/*
 * MARK_AGENT_GONE (operator API), driven through fake requests
 * (master_fixture.h): the agent is recorded gone in the registry before the
 * reply, its tasks end TASK_GONE_BY_OPERATOR (TASK_LOST for frameworks that
 * are not partition-aware), its offers are rescinded, it is told to shut
 * down and removed, and it may never register with its id again, across a
 * master restart too. Unknown agents are 404, agents already gone 200, and
 * a failed registry write changes nothing.
 *
 * The registry's collection of unreachable and gone agents
 * (--registry_max_agent_age, --registry_max_agent_count) is tested here
 * too: it forgets what this file's cases mark.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "common/clock.h"
#include "common/http_fake.h"
#include "master/agents.h"
#include "master/flags_master.h"
#include "master/operator_api.h"
#include "master/registry_gc.h"
#include "master/registry_mem.h"
#include "master_fixture.h"

#define FW_INFO                                                                \
    "{\"user\":\"u\",\"name\":\"fw\",\"roles\":[\"web\"],"                     \
    "\"failover_timeout\":60,\"capabilities\":[{\"type\":\"MULTI_ROLE\"}]}"
#define FW_INFO_PA                                                             \
    "{\"user\":\"u\",\"name\":\"fw\",\"roles\":[\"web\"],"                     \
    "\"failover_timeout\":60,\"capabilities\":[{\"type\":\"MULTI_ROLE\"},{"    \
    "\"type\":\"PARTITION_AWARE\"}]}"
#define SMALL                                                                  \
    "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":0.5},"      \
    "\"allocation_info\":{\"role\":\"web\"}},{\"name\":\"mem\",\"type\":"      \
    "\"SCALAR\",\"scalar\":{\"value\":64},\"allocation_info\":{\"role\":"      \
    "\"web\"}}]"

MFX_STANDARD_FIXTURE

/* ---- Helpers ----------------------------------------------------------- */

/* MARK_AGENT_GONE of id: the exchange (caller frees). */
static struct http_fake *mark_gone(const char *id)
{
    char call[512];
    snprintf(call, sizeof(call),
             "{\"type\":\"MARK_AGENT_GONE\",\"mark_agent_gone\":{\"agent_id\":"
             "{\"value\":\"%s\"}}}",
             id);
    return mfx_operator(&X, call);
}

static int mark_gone_status(const char *id)
{
    struct http_fake *f = mark_gone(id);
    int status = http_fake_status(f);
    http_fake_free(f);
    return status;
}

/* An agent SUBSCRIBE naming id (NULL: none): the status. */
static int agent_subscribe_as(const char *id)
{
    char idpart[300] = "";
    if (id != NULL)
        snprintf(idpart, sizeof(idpart), "\"id\":{\"value\":\"%s\"},", id);
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"type\":\"SUBSCRIBE\",\"subscribe\":{\"agent_info\":{%s"
             "\"hostname\":\"host1\",\"port\":5051,\"resources\":[{\"name\":"
             "\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":2}}]},"
             "\"version\":\"test\",\"address\":{\"ip\":\"127.0.0.2\","
             "\"port\":5051}}}",
             idpart);
    struct http_fake *f = mfx_post(&X, master_agent_api, NULL, json);
    int status = http_fake_status(f);
    http_fake_free(f);
    return status;
}

/* Launch one small task t1 on AG from offer_id. */
static void launch(const char *offer_id)
{
    char payload[2048];
    snprintf(payload, sizeof(payload),
             "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{\"type\":"
             "\"LAUNCH\",\"launch\":{\"task_infos\":[{\"name\":\"t\","
             "\"task_id\":{\"value\":\"t1\"},\"agent_id\":{\"value\":\"%s\"},"
             "\"resources\":%s,\"command\":{\"value\":\"true\"}}]}}]}",
             offer_id, AG.id, SMALL);
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "ACCEPT", "accept", payload),
                     202);
    json_t *run = mfx_next_event(&X, &AG, "RUN_TASK");
    ck_assert_ptr_nonnull(run);
    json_decref(run);
}

static const char *status_field(json_t *ev, const char *field)
{
    return json_string_value(json_object_get(
        json_object_get(json_object_get(ev, "update"), "status"), field));
}

static bool is_gone(const char *id)
{
    return hmap_get(X.m->gone_agents, id) != NULL;
}

/* GET path through the master's routes: the JSON body (caller decrefs). */
static json_t *endpoint(const char *path)
{
    struct http_fake *f = http_fake_new(X.base, HTTP_GET, path);
    http_fake_dispatch_server(f, X.m->http);
    ck_assert_int_eq(http_fake_status(f), 200);
    json_t *j = json_loads(mfx_body(f), 0, NULL);
    ck_assert_ptr_nonnull(j);
    http_fake_free(f);
    return j;
}

/* ---- A registered agent --------------------------------------------------
 */

/* Partition-aware framework: its task ends TASK_GONE_BY_OPERATOR with
 * REASON_AGENT_REMOVED_BY_OPERATOR, the framework hears FAILURE, the agent
 * SHUTDOWN, operator subscribers AGENT_REMOVED; the registry holds it gone, not
 * admitted; /slaves no longer lists it; the registry endpoint does. */
START_TEST(test_registered_agent_pa)
{
    mfx_framework_subscribe(&X, &FW, FW_INFO_PA);
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    char offer_id[256];
    json_decref(mfx_first_offer(&X, &FW, offer_id));
    launch(offer_id);
    ck_assert_int_eq(registry_mem_count(X.store, "agent"), 1);
    OP.stream = mfx_operator(&X, "{\"type\":\"SUBSCRIBE\"}");
    ck_assert(http_fake_is_stream(OP.stream));

    struct http_fake *f = mark_gone(AG.id);
    ck_assert_int_eq(http_fake_status(f), 200);
    http_fake_free(f);

    json_t *ev = mfx_next_event(&X, &FW, "UPDATE");
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(status_field(ev, "state"), "TASK_GONE_BY_OPERATOR");
    ck_assert_str_eq(status_field(ev, "reason"),
                     "REASON_AGENT_REMOVED_BY_OPERATOR");
    ck_assert_str_eq(status_field(ev, "source"), "SOURCE_MASTER");
    ck_assert_str_eq(status_field(ev, "message"), "Agent has been marked gone");
    json_decref(ev);
    ev = mfx_next_event(&X, &FW, "FAILURE");
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
    ev = mfx_next_event(&X, &AG, "SHUTDOWN");
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(ev, "shutdown"), "message")),
                     "Agent has been marked gone");
    json_decref(ev);
    ck_assert(http_fake_stream_ended(AG.stream));
    ev = mfx_next_event(&X, &OP, "AGENT_REMOVED");
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(
        json_string_value(json_object_get(
            json_object_get(json_object_get(ev, "agent_removed"), "agent_id"),
            "value")),
        AG.id);
    json_decref(ev);

    ck_assert_ptr_null(master_agent_find(X.m, AG.id));
    ck_assert(is_gone(AG.id));
    ck_assert_ptr_null(X.m->marking_gone);
    ck_assert_int_eq(registry_mem_count(X.store, "agent"), 0);
    ck_assert_int_eq(registry_mem_count(X.store, "gone_agent"), 1);
    json_t *slaves = endpoint("/slaves");
    ck_assert_uint_eq(json_array_size(json_object_get(slaves, "slaves")), 0);
    json_decref(slaves);
    json_t *reg = endpoint("/registrar(1)/registry");
    json_t *gone = json_object_get(json_object_get(reg, "gone"), "slaves");
    ck_assert_uint_eq(json_array_size(gone), 1);
    ck_assert_str_eq(
        json_string_value(json_object_get(
            json_object_get(json_array_get(gone, 0), "id"), "value")),
        AG.id);
    json_decref(reg);
}
END_TEST

/* A framework that is not partition-aware hears TASK_LOST with
 * REASON_AGENT_REMOVED, as Mesos's __removeSlave. */
START_TEST(test_registered_agent_not_pa)
{
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    char offer_id[256];
    json_decref(mfx_first_offer(&X, &FW, offer_id));
    launch(offer_id);
    ck_assert_int_eq(mark_gone_status(AG.id), 200);
    json_t *ev = mfx_next_event(&X, &FW, "UPDATE");
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(status_field(ev, "state"), "TASK_LOST");
    ck_assert_str_eq(status_field(ev, "reason"), "REASON_AGENT_REMOVED");
    json_decref(ev);
    ck_assert_ptr_null(master_agent_find(X.m, AG.id));
}
END_TEST

/* The agent's outstanding offer is rescinded. */
START_TEST(test_offer_rescinded)
{
    char offer_id[256];
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    json_decref(mfx_first_offer(&X, &FW, offer_id));
    ck_assert_uint_eq(hmap_count(X.m->offers), 1);
    ck_assert_int_eq(mark_gone_status(AG.id), 200);
    json_t *ev = mfx_next_event(&X, &FW, "RESCIND");
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(
        json_string_value(json_object_get(
            json_object_get(json_object_get(ev, "rescind"), "offer_id"),
            "value")),
        offer_id);
    json_decref(ev);
    ck_assert_uint_eq(hmap_count(X.m->offers), 0);
}
END_TEST

/* ---- Never again --------------------------------------------------------
 */

/* A gone agent's SUBSCRIBE with its id is refused 403, across a master
 * restart; a fresh agent (no id) registers. Marking it gone again is 200
 * and changes nothing. */
START_TEST(test_never_again)
{
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    ck_assert_int_eq(mark_gone_status(AG.id), 200);
    ck_assert_int_eq(agent_subscribe_as(AG.id), 403);
    ck_assert_int_eq(mark_gone_status(AG.id), 200);
    ck_assert_int_eq(registry_mem_count(X.store, "gone_agent"), 1);

    mfx_restart(&X);
    ck_assert(is_gone(AG.id));
    ck_assert_int_eq(agent_subscribe_as(AG.id), 403);
    ck_assert_ptr_null(master_agent_find(X.m, AG.id));
    ck_assert_int_eq(mark_gone_status(AG.id), 200);
    ck_assert_int_eq(agent_subscribe_as(NULL), 200);
    ck_assert_uint_eq(hmap_count(X.m->agents), 1);
}
END_TEST

/* While the gone record is being written the agent may not register (503,
 * retryable); a registration recorded before it, once the agent is gone,
 * is answered 403. */
START_TEST(test_registration_while_marking)
{
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    X.m->marking_gone = AG.id;
    ck_assert_int_eq(agent_subscribe_as(AG.id), 503);
    X.m->marking_gone = NULL;
    master_agent_mark_put(X.m->gone_agents, "other", 1.0);
    ck_assert_int_eq(agent_subscribe_as("other"), 403);
}
END_TEST

/* ---- Agents not registered ----------------------------------------------
 */

/* An agent known from before a restart that has not re-registered yet is
 * forgotten; it cannot come back. */
START_TEST(test_recovered_agent)
{
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    char id[256];
    snprintf(id, sizeof(id), "%s", AG.id);
    mfx_restart(&X);
    ck_assert_ptr_nonnull(hmap_get(X.m->recovered_agents, id));
    ck_assert_int_eq(mark_gone_status(id), 200);
    ck_assert_ptr_null(hmap_get(X.m->recovered_agents, id));
    ck_assert(is_gone(id));
    ck_assert_int_eq(registry_mem_count(X.store, "agent"), 0);
    ck_assert_int_eq(agent_subscribe_as(id), 403);
}
END_TEST

/* An unreachable agent: the partition-aware framework's unreachable task
 * is reported TASK_GONE_BY_OPERATOR and forgotten; the agent is no longer
 * unreachable, in memory or in the registry. */
START_TEST(test_unreachable_agent)
{
    mfx_framework_subscribe(&X, &FW, FW_INFO_PA);
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    char offer_id[256];
    json_decref(mfx_first_offer(&X, &FW, offer_id));
    launch(offer_id);
    master_agent_remove(X.m, master_agent_find(X.m, AG.id),
                        AGENT_REMOVED_UNREACHABLE, "test: missed pings");
    json_t *ev = mfx_next_event(&X, &FW, "UPDATE");
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(status_field(ev, "state"), "TASK_UNREACHABLE");
    json_decref(ev);
    mfx_settle(&X);
    ck_assert_int_eq(registry_mem_count(X.store, "unreachable_agent"), 1);
    struct framework *fw = hmap_get(X.m->frameworks, FW.id);
    ck_assert_uint_eq(hmap_count(fw->unreachable_tasks), 1);

    ck_assert_int_eq(mark_gone_status(AG.id), 200);
    ev = mfx_next_event(&X, &FW, "UPDATE");
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(status_field(ev, "state"), "TASK_GONE_BY_OPERATOR");
    ck_assert_str_eq(status_field(ev, "reason"),
                     "REASON_AGENT_REMOVED_BY_OPERATOR");
    json_decref(ev);
    ck_assert_uint_eq(hmap_count(fw->unreachable_tasks), 0);
    ck_assert_ptr_null(hmap_get(X.m->unreachable_agents, AG.id));
    ck_assert_int_eq(registry_mem_count(X.store, "unreachable_agent"), 0);
    ck_assert_int_eq(registry_mem_count(X.store, "gone_agent"), 1);
}
END_TEST

/* ---- Refusals -----------------------------------------------------------
 */

/* Unknown agent: 404 with Mesos's reason; no agent id: 400; nothing
 * recorded. */
START_TEST(test_unknown_agent)
{
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    struct http_fake *f = mark_gone("no-such-agent");
    ck_assert_int_eq(http_fake_status(f), 404);
    ck_assert_ptr_nonnull(
        strstr(mfx_body(f), "Agent 'no-such-agent' not found"));
    http_fake_free(f);
    f = mfx_operator(&X,
                     "{\"type\":\"MARK_AGENT_GONE\",\"mark_agent_gone\":{}}");
    ck_assert_int_eq(http_fake_status(f), 400);
    http_fake_free(f);
    f = mfx_operator(&X, "{\"type\":\"MARK_AGENT_GONE\"}");
    ck_assert_int_eq(http_fake_status(f), 400);
    http_fake_free(f);
    ck_assert_int_eq(registry_mem_count(X.store, "gone_agent"), 0);
    ck_assert_uint_eq(hmap_count(X.m->gone_agents), 0);
    ck_assert_ptr_nonnull(master_agent_find(X.m, AG.id));
    ck_assert(!mfx_has_event(&AG, "SHUTDOWN"));
}
END_TEST

/* A failed registry write: 503, the agent stays registered and connected,
 * nothing is sent, and it can be marked gone once the registry works. */
START_TEST(test_registry_failure)
{
    mfx_framework_subscribe(&X, &FW, FW_INFO_PA);
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    char offer_id[256];
    json_decref(mfx_first_offer(&X, &FW, offer_id));
    size_t unread = mfx_unread(&FW);
    registry_mem_set_failing(X.store, true);
    ck_assert_int_eq(mark_gone_status(AG.id), 503);
    ck_assert_ptr_null(X.m->marking_gone);
    ck_assert(!is_gone(AG.id));
    struct agent *ag = master_agent_find(X.m, AG.id);
    ck_assert_ptr_nonnull(ag);
    ck_assert_ptr_nonnull(ag->stream);
    ck_assert_uint_eq(mfx_unread(&FW), unread);
    ck_assert(!mfx_has_event(&AG, "SHUTDOWN"));
    ck_assert_int_eq(registry_mem_count(X.store, "gone_agent"), 0);
    ck_assert_int_eq(registry_mem_count(X.store, "agent"), 1);
    registry_mem_set_failing(X.store, false);
    ck_assert_int_eq(mark_gone_status(AG.id), 200);
    ck_assert(is_gone(AG.id));
}
END_TEST

/* ---- The registry's collection (registry_gc.h) -----------------------------
 */

#define DAY (24.0 * 3600)

/* A partition-aware framework's task t1 on AG, AG then removed as
 * unreachable; AG2 registered and marked gone. */
static void unreachable_and_gone(void)
{
    mfx_framework_subscribe(&X, &FW, FW_INFO_PA);
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    char offer_id[256];
    json_decref(mfx_first_offer(&X, &FW, offer_id));
    launch(offer_id);
    master_agent_remove(X.m, master_agent_find(X.m, AG.id),
                        AGENT_REMOVED_UNREACHABLE, "test: missed pings");
    json_decref(mfx_next_event(&X, &FW, "UPDATE"));
    mfx_agent_subscribe(&X, &AG2, "host2", "cpus:2;mem:1024");
    ck_assert_int_eq(mark_gone_status(AG2.id), 200);
    mfx_settle(&X);
    ck_assert_int_eq(registry_mem_count(X.store, "unreachable_agent"), 1);
    ck_assert_int_eq(registry_mem_count(X.store, "gone_agent"), 1);
}

/* The state an explicit reconciliation of t1 on AG answers. */
static const char *reconcile_t1(char *buf, size_t len)
{
    char payload[512];
    snprintf(payload, sizeof(payload),
             "{\"tasks\":[{\"task_id\":{\"value\":\"t1\"},\"agent_id\":{"
             "\"value\":\"%s\"}}]}",
             AG.id);
    ck_assert_int_eq(
        mfx_framework_call(&X, &FW, "RECONCILE", "reconcile", payload), 202);
    json_t *ev = mfx_next_event(&X, &FW, "UPDATE");
    ck_assert_ptr_nonnull(ev);
    snprintf(buf, len, "%s", status_field(ev, "state"));
    json_decref(ev);
    return buf;
}

/* Younger than --registry_max_agent_age (2 weeks): kept. Older: forgotten
 * by the registry and then the master; t1 is TASK_UNKNOWN from then on and
 * the gone agent may register again with its id. */
START_TEST(test_gc_by_age)
{
    unreachable_and_gone();
    double now = clock_wall_secs();
    ck_assert_uint_eq(master_registry_gc(X.m, now + 13 * DAY), 0);
    char state[64];
    ck_assert_str_eq(reconcile_t1(state, sizeof(state)), "TASK_UNREACHABLE");

    ck_assert_uint_eq(master_registry_gc(X.m, now + 15 * DAY), 2);
    mfx_settle(&X);
    ck_assert_int_eq(registry_mem_count(X.store, "unreachable_agent"), 0);
    ck_assert_int_eq(registry_mem_count(X.store, "gone_agent"), 0);
    ck_assert_uint_eq(hmap_count(X.m->unreachable_agents), 0);
    ck_assert_uint_eq(hmap_count(X.m->gone_agents), 0);
    struct framework *fw = hmap_get(X.m->frameworks, FW.id);
    ck_assert_uint_eq(hmap_count(fw->unreachable_tasks), 0);
    ck_assert_str_eq(reconcile_t1(state, sizeof(state)), "TASK_UNKNOWN");
    ck_assert_int_eq(agent_subscribe_as(AG2.id), 200);
    ck_assert_uint_eq(master_registry_gc(X.m, now + 15 * DAY), 0);
}
END_TEST

/* --registry_max_agent_count: beyond it the oldest marks go first, age
 * aside; the marks' times survive a restart. */
START_TEST(test_gc_by_count)
{
    mfx_stop(&X);
    const char *flags[] = {"--registry_max_agent_count=1", NULL};
    mfx_start(&X, flags);
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    mfx_agent_subscribe(&X, &AG2, "host2", "cpus:2;mem:1024");
    master_agent_remove(X.m, master_agent_find(X.m, AG2.id),
                        AGENT_REMOVED_UNREACHABLE, "test: missed pings");
    mfx_settle(&X);
    master_agent_remove(X.m, master_agent_find(X.m, AG.id),
                        AGENT_REMOVED_UNREACHABLE, "test: missed pings");
    mfx_settle(&X);
    const struct agent_mark *older = hmap_get(X.m->unreachable_agents, AG2.id);
    const struct agent_mark *newer = hmap_get(X.m->unreachable_agents, AG.id);
    ck_assert(older->time <= newer->time);
    double t_older = older->time, t_newer = newer->time;

    mfx_restart(&X);
    older = hmap_get(X.m->unreachable_agents, AG2.id);
    newer = hmap_get(X.m->unreachable_agents, AG.id);
    ck_assert_ptr_nonnull(older);
    ck_assert_ptr_nonnull(newer);
    ck_assert_double_eq_tol(older->time, t_older, 1e-3);
    ck_assert_double_eq_tol(newer->time, t_newer, 1e-3);
    if (older->time == newer->time) /* same clock reading: ids decide */
        ck_assert_int_lt(strcmp(AG2.id, AG.id), 0);

    ck_assert_uint_eq(master_registry_gc(X.m, clock_wall_secs()), 1);
    mfx_settle(&X);
    ck_assert_ptr_nonnull(hmap_get(X.m->unreachable_agents, AG.id));
    ck_assert_ptr_null(hmap_get(X.m->unreachable_agents, AG2.id));
    ck_assert_int_eq(registry_mem_count(X.store, "unreachable_agent"), 1);
}
END_TEST

/* An agent marked again while the collection's write is in flight keeps
 * the later mark; a failed write forgets nothing and the next collection
 * tries again. */
START_TEST(test_gc_marked_meanwhile_and_failure)
{
    unreachable_and_gone();
    double now = clock_wall_secs();
    registry_mem_set_failing(X.store, true);
    ck_assert_uint_eq(master_registry_gc(X.m, now + 15 * DAY), 2);
    mfx_settle(&X);
    ck_assert_uint_eq(hmap_count(X.m->unreachable_agents), 1);
    ck_assert_uint_eq(hmap_count(X.m->gone_agents), 1);
    registry_mem_set_failing(X.store, false);

    ck_assert_uint_eq(master_registry_gc(X.m, now + 15 * DAY), 2);
    ck_assert_uint_eq(master_registry_gc(X.m, now + 15 * DAY), 0); /* busy */
    master_agent_mark_put(X.m->unreachable_agents, AG.id, now + 1);
    mfx_settle(&X);
    const struct agent_mark *mk = hmap_get(X.m->unreachable_agents, AG.id);
    ck_assert_ptr_nonnull(mk);
    ck_assert_double_eq(mk->time, now + 1);
    ck_assert_uint_eq(hmap_count(X.m->gone_agents), 0);
}
END_TEST

/* --registry_gc_interval must be positive and --registry_max_agent_count
 * not negative. */
START_TEST(test_gc_flags)
{
    static const char *const bad[][2] = {
        {"--registry_gc_interval=0secs", "--registry_gc_interval"},
        {"--registry_max_agent_count=-1", "--registry_max_agent_count"}};
    for (size_t i = 0; i < 2; i++) {
        struct master_flags mf;
        master_flags_init(&mf);
        char *argv[] = {"offerd", (char *)bad[i][0], NULL};
        char *env[] = {NULL};
        char err[256] = "";
        ck_assert_int_eq(
            master_flags_parse(&mf, 2, argv, env, err, sizeof(err)),
            FLAGS_ERROR);
        ck_assert_ptr_nonnull(strstr(err, bad[i][1]));
        master_flags_fini(&mf);
    }
}
END_TEST

static Suite *master_gone_suite(void)
{
    Suite *s = suite_create("master_gone");
    TCase *tc = tcase_create("mark_agent_gone");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_registered_agent_pa);
    tcase_add_test(tc, test_registered_agent_not_pa);
    tcase_add_test(tc, test_offer_rescinded);
    tcase_add_test(tc, test_never_again);
    tcase_add_test(tc, test_registration_while_marking);
    tcase_add_test(tc, test_recovered_agent);
    tcase_add_test(tc, test_unreachable_agent);
    tcase_add_test(tc, test_unknown_agent);
    tcase_add_test(tc, test_registry_failure);
    suite_add_tcase(s, tc);
    tc = tcase_create("registry_gc");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_gc_by_age);
    tcase_add_test(tc, test_gc_by_count);
    tcase_add_test(tc, test_gc_marked_meanwhile_and_failure);
    tcase_add_test(tc, test_gc_flags);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(master_gone_suite)
