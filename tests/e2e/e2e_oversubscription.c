/*
 * Oversubscription end to end with the real master and a real agent
 * (--resource_estimator=fixed from a file, --qos_controller=load) and
 * scripted frameworks: revocable cpus are offered to a capable framework
 * only; revocable and regular tasks run; the estimate shrinks; exactly the
 * newest revocable task is evicted (TASK_KILLED, SOURCE_AGENT,
 * REASON_CONTAINER_PREEMPTED), the older revocable task and the regular
 * task keep running.
 */
#include <check.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "harness_api.h"

#define FW(caps)                                                               \
    "{\"user\":\"u\",\"name\":\"o\",\"roles\":[\"*\"],\"capabilities\":[{"     \
    "\"type\":\"MULTI_ROLE\"}" caps "]}"
#define REVOCABLE_CAP ",{\"type\":\"REVOCABLE_RESOURCES\"}"

static struct e2e_proc master, agent;

/* Launch task_id with `cpus` cpus of `kind` (a JSON fragment added to the
 * cpus resource: revocable, reservations) allocated to role, on the offer;
 * its kill policy has a 1 s grace period. */
static void launch_as(struct conn *fw, const char *offer, const char *agent_id,
                      const char *task_id, const char *role, const char *kind,
                      const char *cpus)
{
    char payload[4096];
    snprintf(payload, sizeof(payload),
             "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{\"type\":"
             "\"LAUNCH\",\"launch\":{\"task_infos\":[{\"name\":\"t\","
             "\"task_id\":{\"value\":\"%s\"},\"agent_id\":{\"value\":\"%s\"},"
             "\"resources\":[{\"name\":\"cpus\",\"type\":\"SCALAR\","
             "\"scalar\":{\"value\":%s}%s,\"allocation_info\":{\"role\":"
             "\"%s\"}}],\"command\":{\"value\":\"sleep 60\"},\"kill_policy\":{"
             "\"grace_period\":{\"nanoseconds\":1000000000}}}]}}],"
             "\"filters\":{\"refuse_seconds\":0}}",
             offer, task_id, agent_id, cpus, kind, role);
    ck_assert_int_eq(api_fw_call(fw, master.port, "ACCEPT", "accept", payload),
                     202);
}

static void launch(struct conn *fw, const char *offer, const char *agent_id,
                   const char *task_id, bool revocable)
{
    launch_as(fw, offer, agent_id, task_id, "*",
              revocable ? ",\"revocable\":{}" : "", "0.5");
}

/* Wait for task_id to reach state on fw (acknowledging every update);
 * the last update's reason and source into the out strings. */
static void wait_state(struct conn *fw, const char *task_id, const char *state,
                       char *reason, char *source)
{
    for (;;) {
        json_t *up = api_next_event(fw, 15000);
        ck_assert_msg(up != NULL, "%s never reached %s", task_id, state);
        const char *type = json_string_value(json_object_get(up, "type"));
        if (strcmp(type, "OFFERS") == 0) {
            /* Not now: back they go, to come again. */
            size_t k;
            json_t *o;
            json_array_foreach(
                json_object_get(json_object_get(up, "offers"), "offers"), k, o)
            {
                api_decline(fw, master.port,
                            json_string_value(json_object_get(
                                json_object_get(o, "id"), "value")),
                            0);
            }
        }
        if (strcmp(type, "UPDATE") != 0) {
            json_decref(up);
            continue;
        }
        json_t *st = json_object_get(json_object_get(up, "update"), "status");
        const char *tid = json_string_value(
            json_object_get(json_object_get(st, "task_id"), "value"));
        const char *s = json_string_value(json_object_get(st, "state"));
        const char *uuid = json_string_value(json_object_get(st, "uuid"));
        if (uuid != NULL) {
            char ack[1024];
            snprintf(ack, sizeof(ack),
                     "{\"agent_id\":{\"value\":\"%s\"},\"task_id\":{\"value\":"
                     "\"%s\"},\"uuid\":\"%s\"}",
                     json_string_value(json_object_get(
                         json_object_get(st, "agent_id"), "value")),
                     tid, uuid);
            api_fw_call(fw, master.port, "ACKNOWLEDGE", "acknowledge", ack);
        }
        bool done = strcmp(tid, task_id) == 0 && strcmp(s, state) == 0;
        if (done) {
            const char *r = json_string_value(json_object_get(st, "reason"));
            const char *so = json_string_value(json_object_get(st, "source"));
            if (reason != NULL)
                snprintf(reason, 64, "%s", r ? r : "");
            if (source != NULL)
                snprintf(source, 64, "%s", so ? so : "");
        } else {
            const char *msg = json_string_value(json_object_get(st, "message"));
            ck_assert_msg(strcmp(tid, task_id) != 0 ||
                              (strcmp(s, "TASK_RUNNING") == 0 ||
                               strcmp(s, "TASK_STARTING") == 0 ||
                               strcmp(s, "TASK_STAGING") == 0 ||
                               strcmp(s, "TASK_KILLING") == 0),
                          "%s ended %s: %s", tid, s, msg ? msg : "");
        }
        json_decref(up);
        if (done)
            return;
    }
}

/* Read fw's events for ms: none may be a status update of another task
 * than ended (whose terminal update may come again, as a retry that
 * crossed the acknowledgement). */
static void expect_no_update_within(struct conn *fw, const char *ended, int ms)
{
    int64_t deadline = e2e_now_ms() + ms;
    int64_t left;
    while ((left = deadline - e2e_now_ms()) > 0) {
        json_t *ev = api_next_event(fw, (int)left);
        if (ev == NULL)
            break;
        const char *type = json_string_value(json_object_get(ev, "type"));
        const char *tid = json_string_value(json_object_get(
            json_object_get(
                json_object_get(json_object_get(ev, "update"), "status"),
                "task_id"),
            "value"));
        if (type != NULL && strcmp(type, "UPDATE") == 0 &&
            (tid == NULL || strcmp(tid, ended) != 0)) {
            char *dump = json_dumps(ev, 0);
            ck_abort_msg("unexpected update: %s", dump);
        }
        json_decref(ev);
    }
}

START_TEST(test_estimate_shrink_evicts_newest_revocable)
{
    const char *margs[] = {"--allocation_interval=50ms", NULL};
    ck_assert_int_eq(e2e_start_master(&master, margs), 0);
    char estimate[256], flag[300];
    snprintf(estimate, sizeof(estimate), "/tmp/offerd-oversub-XXXXXX");
    int fd = mkstemp(estimate);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "cpus:2", 6), 6);
    close(fd);
    snprintf(flag, sizeof(flag), "--oversubscribed_resources=file://%s",
             estimate);
    const char *aargs[] = {"--resources=cpus:2;mem:1024",
                           "--resource_estimator=fixed",
                           flag,
                           "--oversubscription_interval=200ms",
                           "--qos_controller=load",
                           "--qos_load_threshold=100000",
                           NULL};
    ck_assert_int_eq(e2e_start_agent(&agent, master.port, aargs), 0);
    ck_assert_int_eq(e2e_wait_agents(&master, 1, 20000), 0);

    /* A framework without REVOCABLE_RESOURCES never sees them. */
    struct conn plain, fw;
    api_subscribe_framework(&plain, master.port, FW(""));
    char offer[256], agent_id[256];
    for (int i = 0; i < 3; i++) {
        json_t *ev = api_wait_offer(&plain, offer, agent_id, T);
        ck_assert_ptr_nonnull(ev);
        ck_assert_double_eq(api_offered_revocable(ev, "cpus"), 0);
        json_decref(ev);
        api_decline(&plain, master.port, offer, i == 2 ? 3600 : 0);
    }
    api_conn_close(&plain);

    /* A capable one is offered the estimate. */
    api_subscribe_framework(&fw, master.port, FW(REVOCABLE_CAP));
    json_t *ev = NULL;
    for (int i = 0; i < 20; i++) {
        ev = api_wait_offer(&fw, offer, agent_id, T);
        ck_assert_ptr_nonnull(ev);
        if (api_offered_revocable(ev, "cpus") == 2)
            break;
        json_decref(ev);
        ev = NULL;
        api_decline(&fw, master.port, offer, 0);
    }
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
    /* Two revocable tasks (older, newer) and a regular one. */
    const char *tasks[] = {"rev-old", "rev-new", "regular"};
    for (int i = 0; i < 3; i++) {
        if (i > 0) {
            ev = api_wait_offer(&fw, offer, agent_id, T);
            ck_assert_ptr_nonnull(ev);
            json_decref(ev);
        }
        launch(&fw, offer, agent_id, tasks[i], i < 2);
        wait_state(&fw, tasks[i], "TASK_RUNNING", NULL, NULL);
    }

    /* The estimate shrinks to 0.6 cpus: one revocable task must go, the
     * newest. */
    FILE *f = fopen(estimate, "w");
    ck_assert_ptr_nonnull(f);
    fputs("cpus:0.6", f);
    fclose(f);
    char reason[64], source[64];
    wait_state(&fw, "rev-new", "TASK_KILLED", reason, source);
    ck_assert_str_eq(reason, "REASON_CONTAINER_PREEMPTED");
    ck_assert_str_eq(source, "SOURCE_AGENT");
    /* The others still run: no update ends them within five QoS rounds
     * (200 ms each). A window that proves an absence: there is nothing to
     * wait for instead. */
    expect_no_update_within(&fw, "rev-new", 1000);
    json_t *tasks_json = api_get_json(master.port, "/tasks");
    size_t i;
    json_t *t;
    int running = 0;
    json_array_foreach(json_object_get(tasks_json, "tasks"), i, t)
    {
        const char *id = json_string_value(json_object_get(t, "id"));
        const char *st = json_string_value(json_object_get(t, "state"));
        if (strcmp(id, "rev-old") == 0 || strcmp(id, "regular") == 0) {
            ck_assert_str_eq(st, "TASK_RUNNING");
            running++;
        }
    }
    ck_assert_int_eq(running, 2);
    json_decref(tasks_json);
    json_t *metrics = api_get_json(master.port, "/metrics/snapshot");
    ck_assert_double_eq(
        json_number_value(json_object_get(metrics, "master/tasks_preempted")),
        1);
    json_decref(metrics);
    unlink(estimate);
    api_conn_close(&fw);
    e2e_proc_cleanup(&agent);
    e2e_proc_cleanup(&master);
}
END_TEST

#define FW_ROLE(role, caps)                                                    \
    "{\"user\":\"u\",\"name\":\"" role "\",\"roles\":[\"" role "\"],"          \
    "\"capabilities\":[{\"type\":\"MULTI_ROLE\"},{\"type\":"                   \
    "\"RESERVATION_REFINEMENT\"}" caps "]}"

/* Allocation slack with a real agent: b runs on a's unused reservation as
 * revocable; a launches on its reservation; b's task is killed with its
 * grace period, reported preempted, and a's task runs. */
START_TEST(test_slack_revoked_for_the_owner)
{
    const char *margs[] = {"--allocation_interval=50ms",
                           "--offer_allocation_slack", NULL};
    ck_assert_int_eq(e2e_start_master(&master, margs), 0);
    const char *aargs[] = {"--resources=cpus:2;mem:1024", NULL};
    ck_assert_int_eq(e2e_start_agent(&agent, master.port, aargs), 0);
    ck_assert_int_eq(e2e_wait_agents(&master, 1, 20000), 0);
    json_t *slaves = api_get_json(master.port, "/slaves");
    char agent_id[256], offer[256], form[1024];
    snprintf(agent_id, sizeof(agent_id), "%s",
             json_string_value(json_object_get(
                 json_array_get(json_object_get(slaves, "slaves"), 0), "id")));
    json_decref(slaves);
    snprintf(form, sizeof(form),
             "{\"type\":\"RESERVE_RESOURCES\",\"reserve_resources\":{"
             "\"agent_id\":{\"value\":\"%s\"},\"resources\":[{\"name\":"
             "\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1},"
             "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"a\"}]}]}}",
             agent_id);
    ck_assert_int_eq(api_post(master.port, "/api/v1", NULL, form, NULL, 0),
                     202);

    struct conn a, b;
    api_subscribe_framework(&b, master.port, FW_ROLE("b", REVOCABLE_CAP));
    json_t *ev = NULL;
    for (int i = 0; i < 20; i++) {
        ev = api_wait_offer(&b, offer, agent_id, T);
        ck_assert_ptr_nonnull(ev);
        if (api_offered_revocable(ev, "cpus") == 1)
            break;
        json_decref(ev);
        ev = NULL;
        api_decline(&b, master.port, offer, 0);
    }
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
    launch_as(&b, offer, agent_id, "slacker", "b", ",\"revocable\":{}", "1");
    wait_state(&b, "slacker", "TASK_RUNNING", NULL, NULL);

    api_subscribe_framework(&a, master.port, FW_ROLE("a", ""));
    ev = api_wait_offer(&a, offer, agent_id, T);
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
    launch_as(&a, offer, agent_id, "owner", "a",
              ",\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"a\"}]", "1");
    wait_state(&a, "owner", "TASK_RUNNING", NULL, NULL);
    char reason[64], source[64];
    wait_state(&b, "slacker", "TASK_KILLED", reason, source);
    ck_assert_str_eq(reason, "REASON_CONTAINER_PREEMPTED");
    ck_assert_str_eq(source, "SOURCE_AGENT");
    api_conn_close(&a);
    api_conn_close(&b);
    e2e_proc_cleanup(&agent);
    e2e_proc_cleanup(&master);
}
END_TEST

static Suite *oversub_suite(void)
{
    Suite *s = suite_create("e2e_oversubscription");
    TCase *tc = tcase_create("oversubscription");
    tcase_set_timeout(tc, 90);
    tcase_add_test(tc, test_estimate_shrink_evicts_newest_revocable);
    tcase_add_test(tc, test_slack_revoked_for_the_owner);
    suite_add_tcase(s, tc);
    return s;
}

E2E_CHECK_MAIN(oversub_suite)
