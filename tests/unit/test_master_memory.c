/*
 * The master's memory layout per agent and per task (docs/performance.md,
 * "Memory per agent and per task"): what was made smaller still behaves.
 * An idle agent's maps hold no slots and work when first used; a task's
 * state history grows as states come, up to its bound; a task keeps no
 * CommandInfo when the command named no user; a launched task's resources
 * are one packed block; /state shows all of it as before.
 */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "common/hmap.h"
#include "common/hmap_private.h"
#include "common/resources.h"
#include "master/master.h"
#include "master/master_types.h"
#include "master/tasks.h"
#include "master_fixture.h"

#define FW_INFO                                                                \
    "{\"user\":\"u\",\"name\":\"fw\",\"roles\":[\"web\"],"                     \
    "\"capabilities\":[{\"type\":\"MULTI_ROLE\"}]}"
#define TINY                                                                   \
    "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":0.1}},{"    \
    "\"name\":\"mem\",\"type\":\"SCALAR\",\"scalar\":{\"value\":32}}]"

MFX_STANDARD_FIXTURE

static struct agent *agent_state(void)
{
    struct agent *ag = hmap_get(X.m->agents, AG.id);
    ck_assert_ptr_nonnull(ag);
    return ag;
}

static struct task *task_state(const char *id)
{
    struct framework *fw = hmap_get(X.m->frameworks, FW.id);
    ck_assert_ptr_nonnull(fw);
    return hmap_get(fw->tasks, id);
}

/* ACCEPT of offer_id launching task id (TINY) with command JSON. */
static void launch(const char *offer_id, const char *id, const char *command)
{
    char payload[4096];
    snprintf(payload, sizeof(payload),
             "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{\"type\":"
             "\"LAUNCH\",\"launch\":{\"task_infos\":[{\"name\":\"n-%s\","
             "\"task_id\":{\"value\":\"%s\"},\"agent_id\":{\"value\":\"%s\"},"
             "\"resources\":" TINY ",\"command\":%s}]}}],"
             "\"filters\":{\"refuse_seconds\":0}}",
             offer_id, id, id, AG.id, command);
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "ACCEPT", "accept", payload),
                     202);
    json_decref(mfx_next_event(&X, &AG, "RUN_TASK"));
}

/* /state's task id of the framework (a new reference), NULL when absent. */
static bool replied(void *f)
{
    return http_fake_replied(f);
}

static json_t *state_task(const char *id)
{
    struct http_fake *f = http_fake_new(X.base, HTTP_GET, "/state");
    http_fake_dispatch_server(f, X.m->http);
    ck_assert(mfx_run_until(&X, replied, f));
    ck_assert_int_eq(http_fake_status(f), 200);
    size_t len;
    const uint8_t *body = http_fake_body(f, &len);
    json_t *state = json_loadb((const char *)body, len, 0, NULL);
    http_fake_free(f);
    ck_assert_ptr_nonnull(state);
    json_t *found = NULL, *fw, *t;
    size_t i, k;
    json_array_foreach(json_object_get(state, "frameworks"), i, fw)
    {
        json_array_foreach(json_object_get(fw, "tasks"), k, t)
        {
            const char *tid = json_string_value(json_object_get(t, "id"));
            if (tid != NULL && strcmp(tid, id) == 0)
                found = json_incref(t);
        }
    }
    json_decref(state);
    return found;
}

/* An agent with nothing on it holds no map slots; its maps work once used
 * and give their slots back when empty again. */
START_TEST(test_idle_agent_maps_hold_no_slots)
{
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    struct agent *ag = agent_state();
    ck_assert_uint_eq(hmap_slot_bytes(ag->tasks), 0);
    ck_assert_uint_eq(hmap_slot_bytes(ag->offers), 0);
    ck_assert_uint_eq(hmap_slot_bytes(ag->executors), 0);

    mfx_framework_subscribe(&X, &FW, FW_INFO);
    char offer_id[256];
    json_decref(mfx_first_offer(&X, &FW, offer_id));
    ck_assert_uint_eq(hmap_count(ag->offers), 1);
    ck_assert_ptr_nonnull(hmap_get(ag->offers, offer_id));
    launch(offer_id, "t1", "{\"value\":\"true\"}");
    ck_assert_uint_eq(hmap_count(ag->tasks), 1);
    ck_assert_uint_gt(hmap_slot_bytes(ag->tasks), 0);
    ck_assert_ptr_nonnull(task_state("t1"));

    mfx_task_update(&X, &FW, &AG, "t1", "TASK_FINISHED", 1, true);
    ck_assert_ptr_null(task_state("t1"));
    ck_assert_uint_eq(hmap_count(ag->tasks), 0);
    ck_assert_uint_eq(hmap_slot_bytes(ag->tasks), 0);
}
END_TEST

/* A task's history grows with its states up to MASTER_TASK_HISTORY, the
 * oldest going first, and /state shows it in order. */
START_TEST(test_task_history_grows_to_its_bound)
{
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    char offer_id[256];
    json_decref(mfx_first_offer(&X, &FW, offer_id));
    launch(offer_id, "t1", "{\"value\":\"true\"}");
    struct task *t = task_state("t1");
    ck_assert_ptr_nonnull(t);
    ck_assert_uint_eq(t->nhist, 1);
    ck_assert_int_eq(t->hist[0].state, MESOS__V1__TASK_STATE__TASK_STAGING);

    /* STARTING, RUNNING, STARTING ...: eleven new states. */
    for (int i = 0; i < 11; i++)
        mfx_task_update(&X, &FW, &AG, "t1",
                        i % 2 ? "TASK_RUNNING" : "TASK_STARTING", i + 1, true);
    /* A retried update of the latest state adds nothing. */
    mfx_task_update(&X, &FW, &AG, "t1", "TASK_STARTING", 12, true);
    t = task_state("t1");
    ck_assert_uint_eq(t->nhist, MASTER_TASK_HISTORY);
    ck_assert_uint_le(t->caphist, MASTER_TASK_HISTORY);
    for (uint32_t i = 0; i < t->nhist; i++) {
        ck_assert_int_eq(t->hist[i].state,
                         i % 2 ? MESOS__V1__TASK_STATE__TASK_STARTING
                               : MESOS__V1__TASK_STATE__TASK_RUNNING);
        if (i > 0)
            ck_assert(t->hist[i].timestamp >= t->hist[i - 1].timestamp);
    }

    json_t *st = state_task("t1");
    ck_assert_ptr_nonnull(st);
    json_t *statuses = json_object_get(st, "statuses");
    ck_assert_uint_eq(json_array_size(statuses), MASTER_TASK_HISTORY);
    ck_assert_str_eq(json_string_value(
                         json_object_get(json_array_get(statuses, 0), "state")),
                     "TASK_RUNNING");
    ck_assert_str_eq(
        json_string_value(json_object_get(
            json_array_get(statuses, MASTER_TASK_HISTORY - 1), "state")),
        "TASK_STARTING");
    json_decref(st);

    /* The completed task keeps the same history. */
    mfx_task_update(&X, &FW, &AG, "t1", "TASK_FINISHED", 13, true);
    struct framework *fw = hmap_get(X.m->frameworks, FW.id);
    const struct task_record *r = master_task_completed_at(fw, 0);
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(r->nhist, MASTER_TASK_HISTORY);
    ck_assert_int_eq(r->hist[MASTER_TASK_HISTORY - 1].state,
                     MESOS__V1__TASK_STATE__TASK_FINISHED);
    ck_assert_int_eq(r->hist[0].state, MESOS__V1__TASK_STATE__TASK_STARTING);
}
END_TEST

/* A command with no user leaves no CommandInfo behind; one with a user
 * keeps it for /state's "user". */
START_TEST(test_task_command_kept_only_for_its_user)
{
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    char offer_id[256];
    json_decref(mfx_first_offer(&X, &FW, offer_id));
    launch(offer_id, "plain", "{\"value\":\"sleep 10\"}");
    /* The rest of the offer comes back with the next cycle (the ACCEPT
     * refuses it for no time: by default the master would hold it back
     * for 5 s, as long as one wait of the fixture). */
    json_decref(mfx_first_offer(&X, &FW, offer_id));
    launch(offer_id, "as-alice", "{\"value\":\"sleep 10\",\"user\":\"alice\"}");

    struct task *plain = task_state("plain");
    ck_assert_ptr_nonnull(plain);
    ck_assert_ptr_null(plain->info->command);
    json_t *st = state_task("plain");
    ck_assert_ptr_nonnull(st);
    ck_assert_ptr_null(json_object_get(st, "user"));
    json_decref(st);

    struct task *alice = task_state("as-alice");
    ck_assert_ptr_nonnull(alice);
    ck_assert_ptr_nonnull(alice->info->command);
    ck_assert_str_eq(alice->info->command->user, "alice");
    ck_assert_ptr_null(alice->info->command->value);
    st = state_task("as-alice");
    ck_assert_ptr_nonnull(st);
    ck_assert_str_eq(json_string_value(json_object_get(st, "user")), "alice");
    json_decref(st);
}
END_TEST

/* A launched task's resources are one packed block, read as before: by
 * /state, by the completed task's copy, and given back to the allocator
 * when the task ends. */
START_TEST(test_task_resources_packed)
{
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    char offer_id[256];
    json_decref(mfx_first_offer(&X, &FW, offer_id));
    launch(offer_id, "t1", "{\"value\":\"true\"}");
    struct task *t = task_state("t1");
    ck_assert_ptr_nonnull(t);
    ck_assert(t->resources_packed);
    ck_assert_uint_eq(t->resources.n, 2);
    ck_assert_int_eq(res_list_scalar(&t->resources, "cpus"), 100);
    ck_assert_int_eq(res_list_scalar(&t->resources, "mem"), 32000);
    ck_assert_str_eq(t->resources.v[0].alloc_role, "web");
    ck_assert_str_eq(t->resources.v[1].alloc_role, "web");

    json_t *st = state_task("t1");
    ck_assert_ptr_nonnull(st);
    json_t *res = json_object_get(st, "resources");
    ck_assert(json_real_value(json_object_get(res, "cpus")) == 0.1);
    ck_assert(json_real_value(json_object_get(res, "mem")) == 32.0);
    json_decref(st);

    mfx_task_update(&X, &FW, &AG, "t1", "TASK_FINISHED", 1, true);
    struct framework *fw = hmap_get(X.m->frameworks, FW.id);
    const struct task_record *r = master_task_completed_at(fw, 0);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(res_list_scalar(&r->resources, "cpus"), 100);
    /* The whole agent is offered again. */
    json_t *of = mfx_next_event(&X, &FW, "OFFERS");
    ck_assert_ptr_nonnull(of);
    json_decref(of);
}
END_TEST

static Suite *master_memory_suite(void)
{
    Suite *s = suite_create("master_memory");
    TCase *tc = tcase_create("layout");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_idle_agent_maps_hold_no_slots);
    tcase_add_test(tc, test_task_history_grows_to_its_bound);
    tcase_add_test(tc, test_task_command_kept_only_for_its_user);
    tcase_add_test(tc, test_task_resources_packed);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(master_memory_suite)
