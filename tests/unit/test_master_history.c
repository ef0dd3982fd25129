/*
 * The master's memory of what ended: completed tasks of running and removed
 * frameworks, completed frameworks, their bounds
 * (--max_completed_tasks_per_framework, --max_completed_frameworks), and
 * how /state, /frameworks and /tasks show them. Endpoints are read through
 * the master's own routes (http_fake_dispatch_server), with no socket.
 */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "common/log.h"
#include "master/admin_endpoints.h"
#include "master/agents.h"
#include "master/frameworks.h"
#include "master/scheduler_api.h"
#include "master/tasks.h"
#include "master_fixture.h"

#define FW_INFO                                                                \
    "{\"user\":\"u\",\"name\":\"fw\",\"roles\":[\"web\"],"                     \
    "\"failover_timeout\":60,\"capabilities\":[{\"type\":\"MULTI_ROLE\"}]}"
#define TINY                                                                   \
    "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":0.1}},{"    \
    "\"name\":\"mem\",\"type\":\"SCALAR\",\"scalar\":{\"value\":32}}]"

MFX_STANDARD_FIXTURE

static void start_with(const char *const *flags)
{
    mfx_start(&X, flags);
}

/* GET target through the master's routes; returns the body as JSON (NULL
 * when not JSON) and the status in *status. */
static json_t *get(const char *target, int *status)
{
    struct http_fake *f = http_fake_new(X.base, HTTP_GET, target);
    http_fake_dispatch_server(f, X.m->http);
    ck_assert(http_fake_replied(f));
    *status = http_fake_status(f);
    size_t len;
    const uint8_t *body = http_fake_body(f, &len);
    json_t *j = json_loadb((const char *)body, len, 0, NULL);
    http_fake_free(f);
    return j;
}

static json_t *get_ok(const char *target)
{
    int status;
    json_t *j = get(target, &status);
    ck_assert_int_eq(status, 200);
    ck_assert_ptr_nonnull(j);
    return j;
}

/* ACCEPT of offer_id launching tasks ids[0..n-1] (TINY each). */
static void launch(const char *offer_id, const char *const *ids, size_t n)
{
    char payload[8192];
    int len = snprintf(payload, sizeof(payload),
                       "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{"
                       "\"type\":\"LAUNCH\",\"launch\":{\"task_infos\":[",
                       offer_id);
    for (size_t i = 0; i < n; i++)
        len += snprintf(payload + len, sizeof(payload) - (size_t)len,
                        "%s{\"name\":\"n-%s\",\"task_id\":{\"value\":\"%s\"},"
                        "\"agent_id\":{\"value\":\"%s\"},\"resources\":" TINY
                        ",\"command\":{\"value\":\"true\"}}",
                        i ? "," : "", ids[i], ids[i], AG.id);
    snprintf(payload + len, sizeof(payload) - (size_t)len, "]}}]}");
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "ACCEPT", "accept", payload),
                     202);
}

/* The agent reports state for task id with uuid byte u; the framework
 * acknowledges it when ack. */
static void update(const char *id, const char *state, int u, bool ack)
{
    mfx_task_update(&X, &FW, &AG, id, state, u, ack);
}

/* A framework and an agent, tasks ids[0..n-1] launched and running. */
static void running(const char *const *ids, size_t n)
{
    char offer_id[256];
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:4;mem:4096");
    json_decref(mfx_first_offer(&X, &FW, offer_id));
    launch(offer_id, ids, n);
    for (size_t i = 0; i < n; i++)
        update(ids[i], "TASK_RUNNING", (int)i * 2, false);
}

static struct framework *fw_state(void)
{
    return master_framework_find(X.m, FW.id);
}

/* The first framework object of /state's key (frameworks or
 * completed_frameworks), borrowed from state. */
static json_t *state_fw(json_t *state, const char *key)
{
    json_t *arr = json_object_get(state, key);
    ck_assert_int_eq(json_array_size(arr), 1);
    return json_array_get(arr, 0);
}

static const char *str(json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* ---- Completed tasks of a running framework ----------------------------- */

START_TEST(test_acknowledged_task_is_kept)
{
    const char *ids[] = {"t1", "t2"};
    running(ids, 2);
    /* Terminal but not acknowledged: still among the tasks, as in Mesos. */
    update("t1", "TASK_FINISHED", 1, false);
    json_t *st0 = get_ok("/state");
    json_t *f0 = state_fw(st0, "frameworks");
    ck_assert_int_eq(json_array_size(json_object_get(f0, "tasks")), 2);
    ck_assert_int_eq(json_array_size(json_object_get(f0, "completed_tasks")),
                     0);
    json_decref(st0);
    update("t1", "TASK_FINISHED", 1, true);
    ck_assert_ptr_null(hmap_get(fw_state()->tasks, "t1"));
    ck_assert_uint_eq(fw_state()->ncompleted_tasks, 1);

    json_t *st = get_ok("/state");
    json_t *f = state_fw(st, "frameworks");
    json_t *tasks = json_object_get(f, "tasks");
    json_t *done = json_object_get(f, "completed_tasks");
    ck_assert_int_eq(json_array_size(tasks), 1);
    ck_assert_str_eq(str(json_array_get(tasks, 0), "id"), "t2");
    ck_assert_int_eq(json_array_size(done), 1);
    json_t *t = json_array_get(done, 0);
    ck_assert_str_eq(str(t, "id"), "t1");
    ck_assert_str_eq(str(t, "name"), "n-t1");
    ck_assert_str_eq(str(t, "state"), "TASK_FINISHED");
    ck_assert_str_eq(str(t, "framework_id"), FW.id);
    ck_assert_str_eq(str(t, "slave_id"), AG.id);
    ck_assert_str_eq(str(t, "role"), "web");
    ck_assert_double_eq_tol(json_real_value(json_object_get(
                                json_object_get(t, "resources"), "cpus")),
                            0.1, 1e-9);
    json_t *sts = json_object_get(t, "statuses");
    ck_assert_int_eq(json_array_size(sts), 3); /* STAGING, RUNNING, FINISHED */
    ck_assert_str_eq(str(json_array_get(sts, 2), "state"), "TASK_FINISHED");
    json_decref(st);

    /* /frameworks shows it too, and /tasks lists both. */
    json_t *fws = get_ok("/frameworks");
    f = state_fw(fws, "frameworks");
    ck_assert_int_eq(json_array_size(json_object_get(f, "completed_tasks")), 1);
    json_decref(fws);
    /* /state-summary counts live and completed tasks, as Mesos. */
    json_t *sum = get_ok("/state-summary");
    json_t *sf = state_fw(sum, "frameworks");
    json_t *sa = json_array_get(json_object_get(sum, "slaves"), 0);
    for (int i = 0; i < 2; i++) {
        json_t *o = i == 0 ? sf : sa;
        ck_assert_int_eq(
            json_integer_value(json_object_get(o, "TASK_FINISHED")), 1);
        ck_assert_int_eq(json_integer_value(json_object_get(o, "TASK_RUNNING")),
                         1);
    }
    json_decref(sum);
    json_t *tl = get_ok("/tasks");
    ck_assert_int_eq(json_array_size(json_object_get(tl, "tasks")), 2);
    json_decref(tl);
}
END_TEST

START_TEST(test_completed_tasks_bounded)
{
    mfx_stop(&X);
    const char *flags[] = {"--max_completed_tasks_per_framework=2", NULL};
    start_with(flags);
    const char *ids[] = {"a", "b", "c", "d"};
    running(ids, 4);
    for (int i = 0; i < 4; i++)
        update(ids[i], "TASK_FAILED", 20 + i, true);
    struct framework *fw = fw_state();
    ck_assert_uint_eq(hmap_count(fw->tasks), 0);
    ck_assert_uint_eq(fw->ncompleted_tasks, 2);
    /* The oldest go first; the ring keeps the rest in order. */
    ck_assert_str_eq(master_task_completed_at(fw, 0)->id, "c");
    ck_assert_str_eq(master_task_completed_at(fw, 1)->id, "d");
    ck_assert_ptr_null(master_task_completed_at(fw, 2));
    json_t *st = get_ok("/state");
    json_t *done =
        json_object_get(state_fw(st, "frameworks"), "completed_tasks");
    ck_assert_int_eq(json_array_size(done), 2);
    ck_assert_str_eq(str(json_array_get(done, 0), "id"), "c");
    ck_assert_str_eq(str(json_array_get(done, 1), "state"), "TASK_FAILED");
    json_decref(st);
}
END_TEST

START_TEST(test_completed_tasks_none_kept)
{
    mfx_stop(&X);
    const char *flags[] = {"--max_completed_tasks_per_framework=0", NULL};
    start_with(flags);
    const char *ids[] = {"a"};
    running(ids, 1);
    update("a", "TASK_FINISHED", 5, true);
    ck_assert_uint_eq(fw_state()->ncompleted_tasks, 0);
    json_t *tl = get_ok("/tasks");
    ck_assert_int_eq(json_array_size(json_object_get(tl, "tasks")), 0);
    json_decref(tl);
}
END_TEST

/* ---- Completed frameworks ----------------------------------------------- */

START_TEST(test_teardown_keeps_framework_with_tasks)
{
    const char *ids[] = {"t1", "t2"};
    running(ids, 2);
    update("t1", "TASK_FINISHED", 1, true);
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "TEARDOWN", NULL, NULL), 202);
    ck_assert_ptr_null(fw_state());

    json_t *st = get_ok("/state");
    ck_assert_int_eq(json_array_size(json_object_get(st, "frameworks")), 0);
    json_t *f = state_fw(st, "completed_frameworks");
    ck_assert_str_eq(str(f, "id"), FW.id);
    ck_assert(json_is_false(json_object_get(f, "active")));
    ck_assert(json_real_value(json_object_get(f, "unregistered_time")) > 0);
    ck_assert_int_eq(json_array_size(json_object_get(f, "tasks")), 0);
    json_t *done = json_object_get(f, "completed_tasks");
    ck_assert_int_eq(json_array_size(done), 2);
    ck_assert_str_eq(str(json_array_get(done, 0), "id"), "t1");
    ck_assert_str_eq(str(json_array_get(done, 0), "state"), "TASK_FINISHED");
    /* The running task ended with its framework. */
    ck_assert_str_eq(str(json_array_get(done, 1), "id"), "t2");
    ck_assert_str_eq(str(json_array_get(done, 1), "state"), "TASK_KILLED");
    json_t *sts = json_object_get(json_array_get(done, 1), "statuses");
    ck_assert_str_eq(
        str(json_array_get(sts, json_array_size(sts) - 1), "state"),
        "TASK_KILLED");
    json_decref(st);

    /* /tasks lists a completed framework's tasks, and selects it. */
    char target[512];
    snprintf(target, sizeof(target), "/tasks?framework_id=%s", FW.id);
    json_t *tl = get_ok(target);
    ck_assert_int_eq(json_array_size(json_object_get(tl, "tasks")), 2);
    json_decref(tl);
    json_t *fws = get_ok("/master/frameworks");
    ck_assert_int_eq(
        json_array_size(json_object_get(fws, "completed_frameworks")), 1);
    json_decref(fws);
    /* framework_id selects among the completed frameworks too. */
    fws = get_ok("/frameworks?framework_id=other");
    ck_assert_int_eq(
        json_array_size(json_object_get(fws, "completed_frameworks")), 0);
    json_decref(fws);

    /* A removed framework may not come back. */
    char info[512];
    snprintf(info, sizeof(info),
             "{\"type\":\"SUBSCRIBE\",\"subscribe\":{\"framework_info\":{"
             "\"id\":{\"value\":\"%s\"},\"user\":\"u\",\"name\":\"fw\"}}}",
             FW.id);
    ck_assert_int_eq(mfx_post_status(&X, master_scheduler_api, NULL, info),
                     403);
}
END_TEST

/* Subscribe a new framework as FW and tear it down; returns nothing, FW's
 * id stays in FW.id. */
static void subscribe_and_teardown(void)
{
    mfx_peer_free(&FW);
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "TEARDOWN", NULL, NULL), 202);
}

START_TEST(test_completed_frameworks_bounded)
{
    mfx_stop(&X);
    const char *flags[] = {"--max_completed_frameworks=2", NULL};
    start_with(flags);
    char first[256];
    subscribe_and_teardown();
    snprintf(first, sizeof(first), "%s", FW.id);
    subscribe_and_teardown();
    subscribe_and_teardown();
    ck_assert_uint_eq(X.m->ncompleted, 2);
    json_t *st = get_ok("/state");
    json_t *arr = json_object_get(st, "completed_frameworks");
    ck_assert_int_eq(json_array_size(arr), 2);
    ck_assert_str_eq(str(json_array_get(arr, 1), "id"), FW.id);
    for (size_t i = 0; i < 2; i++)
        ck_assert_str_ne(str(json_array_get(arr, i), "id"), first);
    json_decref(st);
}
END_TEST

START_TEST(test_completed_frameworks_none_kept)
{
    mfx_stop(&X);
    const char *flags[] = {"--max_completed_frameworks=0", NULL};
    start_with(flags);
    subscribe_and_teardown();
    ck_assert_uint_eq(X.m->ncompleted, 0);
    json_t *st = get_ok("/state");
    ck_assert_int_eq(
        json_array_size(json_object_get(st, "completed_frameworks")), 0);
    json_decref(st);
}
END_TEST

START_TEST(test_flags_refused)
{
    const char *bad[] = {"--max_completed_frameworks=-1",
                         "--max_completed_tasks_per_framework=-5",
                         "--max_completed_tasks_per_framework=99999999",
                         "--max_completed_frameworks=x"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct master_flags mf;
        master_flags_init(&mf);
        char *argv[] = {"offerd", (char *)bad[i], NULL};
        char *env[] = {NULL};
        char err[256] = "";
        ck_assert_int_eq(
            master_flags_parse(&mf, 2, argv, env, err, sizeof(err)),
            FLAGS_ERROR);
        ck_assert_msg(strstr(err, "max_completed") != NULL, "%s", err);
        master_flags_fini(&mf);
    }
    ck_assert_int_eq(X.flags.max_completed_frameworks, 50);
    ck_assert_int_eq(X.flags.max_completed_tasks_per_framework, 1000);
}
END_TEST

/* ---- FAILURE on agent removal ------------------------------------------- */

/* The next FAILURE event of p names the agent AG, and nothing else. */
static void expect_failure(struct mfx_peer *p)
{
    json_t *ev = mfx_next_event(&X, p, "FAILURE");
    ck_assert_ptr_nonnull(ev);
    json_t *f = json_object_get(ev, "failure");
    ck_assert_str_eq(str(json_object_get(f, "agent_id"), "value"), AG.id);
    ck_assert_ptr_null(json_object_get(f, "executor_id"));
    ck_assert_ptr_null(json_object_get(f, "status"));
    json_decref(ev);
}

START_TEST(test_failure_on_agent_unregister)
{
    const char *ids[] = {"t1"};
    running(ids, 1);
    mfx_framework_subscribe(&X, &FW2, FW_INFO);
    ck_assert_int_eq(mfx_agent_call(&X, &AG, "UNREGISTER", NULL, NULL), 202);
    /* The task's update comes first, then the FAILURE. */
    json_t *up = mfx_next_event(&X, &FW, "UPDATE");
    ck_assert_ptr_nonnull(up);
    json_decref(up);
    ck_assert(mfx_has_event(&FW, "FAILURE"));
    expect_failure(&FW);
    /* Every subscribed framework hears of it, tasks there or not. */
    expect_failure(&FW2);
    ck_assert(!mfx_has_event(&FW, "FAILURE"));
    /* The lost task is kept among the completed ones. */
    ck_assert_uint_eq(fw_state()->ncompleted_tasks, 1);
    ck_assert_int_eq(master_task_completed_at(fw_state(), 0)->state,
                     MESOS__V1__TASK_STATE__TASK_LOST);
}
END_TEST

START_TEST(test_failure_on_agent_unreachable)
{
    mfx_stop(&X);
    const char *flags[] = {"--max_agent_ping_timeouts=1", NULL};
    start_with(flags);
    const char *ids[] = {"t1"};
    running(ids, 1);
    /* A PING the agent never answers, then the next round removes it. */
    master_agents_ping(X.m);
    ck_assert_ptr_nonnull(master_agent_find(X.m, AG.id));
    master_agents_ping(X.m);
    ck_assert_ptr_null(master_agent_find(X.m, AG.id));
    expect_failure(&FW);
}
END_TEST

/* ---- /slaves ------------------------------------------------------------ */

START_TEST(test_slaves_reserved_full_by_role)
{
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:3;mem:1024");
    char call[1024];
    snprintf(call, sizeof(call),
             "{\"type\":\"RESERVE_RESOURCES\",\"reserve_resources\":{"
             "\"agent_id\":{\"value\":\"%s\"},\"resources\":["
             "{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{"
             "\"value\":1},\"reservations\":[{\"type\":\"DYNAMIC\","
             "\"role\":\"eng\"}]},"
             "{\"name\":\"mem\",\"type\":\"SCALAR\",\"scalar\":{"
             "\"value\":128},\"reservations\":[{\"type\":\"DYNAMIC\","
             "\"role\":\"eng\"}]}]}}",
             AG.id);
    struct http_fake *r = mfx_operator(&X, call);
    ck_assert_msg(http_fake_status(r) == 202, "%d %s", http_fake_status(r),
                  mfx_body(r));
    http_fake_free(r);
    json_t *sl = get_ok("/slaves");
    json_t *a = json_array_get(json_object_get(sl, "slaves"), 0);
    json_t *full = json_object_get(a, "reserved_resources_full");
    ck_assert(json_is_object(full));
    ck_assert_int_eq(json_object_size(full), 1);
    json_t *eng = json_object_get(full, "eng");
    ck_assert_int_eq(json_array_size(eng), 2);
    for (size_t i = 0; i < 2; i++) {
        const char *name = str(json_array_get(eng, i), "name");
        ck_assert(strcmp(name, "cpus") == 0 || strcmp(name, "mem") == 0);
    }
    /* The summary has the same keys. */
    json_t *sum = json_object_get(a, "reserved_resources");
    ck_assert_int_eq(json_object_size(sum), 1);
    ck_assert_double_eq_tol(
        json_real_value(json_object_get(json_object_get(sum, "eng"), "mem")),
        128, 1e-9);
    ck_assert_int_eq(
        json_array_size(json_object_get(a, "unreserved_resources_full")), 2);
    json_decref(sl);
}
END_TEST

/* GET target: the status and the raw body (copied to out). */
static int get_raw(const char *target, char *out, size_t outlen, char *ctype,
                   size_t ctlen)
{
    struct http_fake *f = http_fake_new(X.base, HTTP_GET, target);
    http_fake_dispatch_server(f, X.m->http);
    ck_assert(http_fake_replied(f));
    int status = http_fake_status(f);
    size_t len;
    const uint8_t *body = http_fake_body(f, &len);
    snprintf(out, outlen, "%.*s", (int)len, (const char *)body);
    const char *ct = http_fake_content_type(f);
    snprintf(ctype, ctlen, "%s", ct != NULL ? ct : "");
    http_fake_free(f);
    return status;
}

START_TEST(test_jsonp)
{
    static char body[1 << 16];
    char ct[64];
    const char *targets[] = {"/state?jsonp=cb",
                             "/tasks?jsonp=cb",
                             "/master/slaves?jsonp=cb",
                             "/flags?jsonp=cb",
                             "/metrics/snapshot?jsonp=cb",
                             "/maintenance/schedule?jsonp=cb",
                             "/maintenance/status?jsonp=cb"};
    for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
        ck_assert_int_eq(
            get_raw(targets[i], body, sizeof(body), ct, sizeof(ct)), 200);
        ck_assert_str_eq(ct, "text/javascript");
        size_t len = strlen(body);
        ck_assert_msg(strncmp(body, "cb({", 4) == 0 && body[len - 1] == ')',
                      "%s: %.40s", targets[i], body);
        /* What is inside the parentheses is the JSON document. */
        json_t *j = json_loadb(body + 3, len - 4, 0, NULL);
        ck_assert_ptr_nonnull(j);
        json_decref(j);
    }
    ck_assert_int_eq(get_raw("/state?jsonp=jQuery_12.$cb3", body, sizeof(body),
                             ct, sizeof(ct)),
                     200);
    ck_assert(strncmp(body, "jQuery_12.$cb3({", 16) == 0);
    /* Not a JavaScript name: refused, nothing of the state in the body. */
    const char *bad[] = {"/state?jsonp=alert(1)", "/state?jsonp=1cb",
                         "/state?jsonp=a..b",     "/state?jsonp=cb.",
                         "/tasks?jsonp=",         "/state?jsonp=a%3Bb"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_int_eq(get_raw(bad[i], body, sizeof(body), ct, sizeof(ct)),
                         400);
        ck_assert_msg(strstr(body, "jsonp") != NULL, "%s: %s", bad[i], body);
    }
    /* Without it: plain JSON. */
    ck_assert_int_eq(get_raw("/state", body, sizeof(body), ct, sizeof(ct)),
                     200);
    ck_assert_str_eq(ct, "application/json");
}
END_TEST

/* The ids /tasks lists for target, joined by ",". */
static void task_ids(const char *target, char *out, size_t outlen)
{
    json_t *j = get_ok(target);
    size_t i, n = 0;
    json_t *t;
    out[0] = '\0';
    json_array_foreach(json_object_get(j, "tasks"), i, t)
    {
        n += (size_t)snprintf(out + n, outlen - n, "%s%s", i ? "," : "",
                              str(t, "id"));
    }
    json_decref(j);
}

START_TEST(test_tasks_query)
{
    const char *ids[] = {"a", "b", "c"};
    running(ids, 3);
    /* Distinct first-status times, a oldest. */
    struct framework *fw = fw_state();
    for (size_t i = 0; i < 3; i++)
        ((struct task *)hmap_get(fw->tasks, ids[i]))->hist[0].timestamp =
            1000.0 + (double)i;
    update("b", "TASK_FINISHED", 9, true); /* b is now a completed record */
    mfx_framework_subscribe(&X, &FW2, FW_INFO);
    char out[512], target[512];
    task_ids("/tasks", out, sizeof(out));
    ck_assert_str_eq(out, "c,b,a");
    task_ids("/tasks?order=desc", out, sizeof(out));
    ck_assert_str_eq(out, "c,b,a");
    task_ids("/tasks?order=des", out, sizeof(out));
    ck_assert_str_eq(out, "c,b,a");
    task_ids("/tasks?order=asc", out, sizeof(out));
    ck_assert_str_eq(out, "a,b,c");
    task_ids("/tasks?order=asc&limit=2", out, sizeof(out));
    ck_assert_str_eq(out, "a,b");
    task_ids("/tasks?order=asc&limit=2&offset=2", out, sizeof(out));
    ck_assert_str_eq(out, "c");
    task_ids("/tasks?offset=3", out, sizeof(out));
    ck_assert_str_eq(out, "");
    task_ids("/tasks?limit=0", out, sizeof(out));
    ck_assert_str_eq(out, "");
    /* As Mesos: what is not a count is taken as not given. */
    task_ids("/tasks?limit=x&offset=-1&order=sideways", out, sizeof(out));
    ck_assert_str_eq(out, "c,b,a");
    /* Selection by framework and task. */
    snprintf(target, sizeof(target), "/tasks?framework_id=%s&task_id=b", FW.id);
    task_ids(target, out, sizeof(out));
    ck_assert_str_eq(out, "b");
    task_ids("/tasks?task_id=a", out, sizeof(out));
    ck_assert_str_eq(out, "a");
    snprintf(target, sizeof(target), "/tasks?framework_id=%s", FW2.id);
    task_ids(target, out, sizeof(out));
    ck_assert_str_eq(out, "");
    task_ids("/tasks?framework_id=nobody", out, sizeof(out));
    ck_assert_str_eq(out, "");
    task_ids("/tasks?task_id=nothing", out, sizeof(out));
    ck_assert_str_eq(out, "");
}
END_TEST

/* ---- Administrative endpoints ------------------------------------------- */

static bool replied(void *f)
{
    return http_fake_replied(f);
}

/* A request of method to target with body (form-encoded; NULL: none)
 * through the master's routes. Returns the exchange (free it). */
static struct http_fake *request(enum http_method method, const char *target,
                                 const char *body)
{
    struct http_fake *f = http_fake_new(X.base, method, target);
    if (body != NULL) {
        http_fake_add_header(f, "Content-Type",
                             "application/x-www-form-urlencoded");
        http_fake_set_body(f, body, strlen(body));
    }
    http_fake_dispatch_server(f, X.m->http);
    ck_assert(mfx_run_until(&X, replied, f));
    return f;
}

static int request_status(enum http_method method, const char *target,
                          const char *body, const char *reason)
{
    struct http_fake *f = request(method, target, body);
    int status = http_fake_status(f);
    if (reason != NULL)
        ck_assert_msg(strstr(mfx_body(f), reason) != NULL, "%s: %s", target,
                      mfx_body(f));
    http_fake_free(f);
    return status;
}

START_TEST(test_teardown_endpoint)
{
    const char *ids[] = {"t1"};
    running(ids, 1);
    /* Refusals change nothing. */
    ck_assert_int_eq(
        request_status(HTTP_POST, "/teardown", "", "Missing 'frameworkId'"),
        400);
    ck_assert_int_eq(request_status(HTTP_POST, "/teardown",
                                    "frameworkId=", "Missing 'frameworkId'"),
                     400);
    ck_assert_int_eq(request_status(HTTP_POST, "/teardown",
                                    "frameworkId=nobody",
                                    "No framework found with specified ID"),
                     400);
    ck_assert_int_eq(request_status(HTTP_GET, "/teardown", NULL, NULL), 405);
    ck_assert_ptr_nonnull(fw_state());
    ck_assert(!mfx_has_event(&AG, "SHUTDOWN_FRAMEWORK"));

    char body[512];
    snprintf(body, sizeof(body), "frameworkId=%s", FW.id);
    ck_assert_int_eq(request_status(HTTP_POST, "/master/teardown", body, NULL),
                     200);
    ck_assert_ptr_null(fw_state());
    ck_assert_ptr_nonnull(hmap_get(X.m->completed, FW.id));
    json_t *ev = mfx_next_event(&X, &AG, "SHUTDOWN_FRAMEWORK");
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
    /* Once removed, it is not found again. */
    ck_assert_int_eq(
        request_status(HTTP_POST, "/teardown", body, "No framework found"),
        400);
}
END_TEST

START_TEST(test_teardown_call)
{
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    struct http_fake *r = mfx_operator(
        &X, "{\"type\":\"TEARDOWN\",\"teardown\":{\"framework_id\":{"
            "\"value\":\"nobody\"}}}");
    ck_assert_int_eq(http_fake_status(r), 400);
    ck_assert(strstr(mfx_body(r), "No framework found") != NULL);
    http_fake_free(r);
    r = mfx_operator(&X, "{\"type\":\"TEARDOWN\"}");
    ck_assert_int_eq(http_fake_status(r), 400);
    http_fake_free(r);
    ck_assert_ptr_nonnull(fw_state());
    char call[512];
    snprintf(call, sizeof(call),
             "{\"type\":\"TEARDOWN\",\"teardown\":{\"framework_id\":{"
             "\"value\":\"%s\"}}}",
             FW.id);
    r = mfx_operator(&X, call);
    ck_assert_int_eq(http_fake_status(r), 200);
    http_fake_free(r);
    ck_assert_ptr_null(fw_state());
    ck_assert_uint_eq(X.m->ncompleted, 1);
}
END_TEST

START_TEST(test_redirect)
{
    const char *paths[] = {"/redirect", "/master/redirect"};
    for (size_t i = 0; i < 2; i++) {
        struct http_fake *f = request(HTTP_GET, paths[i], NULL);
        ck_assert_int_eq(http_fake_status(f), 307);
        char want[512];
        snprintf(want, sizeof(want), "//%s:%u", X.flags.hostname,
                 (unsigned)X.m->port);
        ck_assert_str_eq(http_fake_reply_header(f, "Location"), want);
        http_fake_free(f);
    }
    ck_assert_int_eq(request_status(HTTP_GET, "/redirect/state", NULL, NULL),
                     404);
}
END_TEST

START_TEST(test_registry_endpoint)
{
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:1;mem:256");
    json_t *r = get_ok("/registrar(1)/registry");
    ck_assert_ptr_nonnull(
        json_object_get(json_object_get(r, "master"), "info"));
    json_t *sl = json_object_get(json_object_get(r, "slaves"), "slaves");
    ck_assert_int_eq(json_array_size(sl), 1);
    json_t *info = json_object_get(json_array_get(sl, 0), "info");
    ck_assert_str_eq(str(info, "hostname"), "host1");
    ck_assert_str_eq(str(json_object_get(info, "id"), "value"), AG.id);
    ck_assert_int_eq(json_array_size(json_object_get(
                         json_object_get(r, "unreachable"), "slaves")),
                     0);
    ck_assert(json_is_array(json_object_get(r, "schedules")));
    json_decref(r);
}
END_TEST

START_TEST(test_system_stats)
{
    json_t *s = get_ok("/system/stats.json");
    ck_assert(json_integer_value(json_object_get(s, "cpus_total")) > 0);
    ck_assert(json_integer_value(json_object_get(s, "mem_total_bytes")) > 0);
    ck_assert(json_is_integer(json_object_get(s, "mem_free_bytes")));
    ck_assert(json_is_number(json_object_get(s, "avg_load_1min")));
    ck_assert(json_is_number(json_object_get(s, "avg_load_15min")));
    json_decref(s);
}
END_TEST

static bool log_level_restored(void *arg)
{
    (void)arg;
    return log_get_level() == X.flags.log_level;
}

START_TEST(test_logging_toggle)
{
    struct http_fake *f = request(HTTP_GET, "/logging/toggle", NULL);
    ck_assert_int_eq(http_fake_status(f), 200);
    ck_assert_str_eq(mfx_body(f), "0\n");
    http_fake_free(f);
    const struct {
        const char *target, *reason;
    } bad[] = {
        {"/logging/toggle?level=1", "Expecting 'duration=value'"},
        {"/logging/toggle?duration=1secs", "Expecting 'level=value'"},
        {"/logging/toggle?level=x&duration=1secs", "convert"},
        {"/logging/toggle?level=-1&duration=1secs", "Invalid level"},
        {"/logging/toggle?level=1&duration=soon", "Invalid duration"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_int_eq(
            request_status(HTTP_GET, bad[i].target, NULL, bad[i].reason), 400);
    ck_assert_int_eq(log_get_level(), X.flags.log_level);

    ck_assert_int_eq(request_status(HTTP_GET,
                                    "/logging/toggle?level=2&duration=10mins",
                                    NULL, NULL),
                     200);
    ck_assert_int_eq(log_get_level(), LOG_LEVEL_DEBUG);
    f = request(HTTP_GET, "/logging/toggle", NULL);
    ck_assert_str_eq(mfx_body(f), "2\n");
    http_fake_free(f);
    /* A new toggle replaces the old one, and its timer puts the level
     * back. */
    ck_assert_int_eq(request_status(HTTP_POST,
                                    "/logging/toggle?level=1&duration=20ms",
                                    NULL, NULL),
                     200);
    ck_assert(mfx_run_until(&X, log_level_restored, NULL));
    f = request(HTTP_GET, "/logging/toggle", NULL);
    ck_assert_str_eq(mfx_body(f), "0\n");
    http_fake_free(f);
}
END_TEST

Suite *master_history_suite(void);
Suite *master_history_suite(void)
{
    Suite *s = suite_create("master_history");
    TCase *tc = tcase_create("tasks");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_acknowledged_task_is_kept);
    tcase_add_test(tc, test_completed_tasks_bounded);
    tcase_add_test(tc, test_completed_tasks_none_kept);
    suite_add_tcase(s, tc);
    tc = tcase_create("frameworks");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_teardown_keeps_framework_with_tasks);
    tcase_add_test(tc, test_completed_frameworks_bounded);
    tcase_add_test(tc, test_completed_frameworks_none_kept);
    tcase_add_test(tc, test_flags_refused);
    suite_add_tcase(s, tc);
    tc = tcase_create("failure");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_failure_on_agent_unregister);
    tcase_add_test(tc, test_failure_on_agent_unreachable);
    suite_add_tcase(s, tc);
    tc = tcase_create("endpoints");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_slaves_reserved_full_by_role);
    tcase_add_test(tc, test_jsonp);
    tcase_add_test(tc, test_tasks_query);
    suite_add_tcase(s, tc);
    tc = tcase_create("admin");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_teardown_endpoint);
    tcase_add_test(tc, test_teardown_call);
    tcase_add_test(tc, test_redirect);
    tcase_add_test(tc, test_registry_endpoint);
    tcase_add_test(tc, test_system_stats);
    tcase_add_test(tc, test_logging_toggle);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(master_history_suite)
