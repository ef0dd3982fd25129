/*
 * What keeps the master cheap at scale: the counters behind
 * /metrics/snapshot (equal to a recount after any mix of changes), /tasks
 * paging over the task list (order, offset, limit, stability), and PINGs
 * spread over the ping interval.
 */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "common/clock.h"
#include "common/hmap.h"
#include "common/resources.h"
#include "common/task_state.h"
#include "master/live_counters.h"
#include "master/ping_spread.h"
#include "master_fixture.h"

#define FW_INFO                                                                \
    "{\"user\":\"u\",\"name\":\"fw\",\"roles\":[\"web\"],"                     \
    "\"failover_timeout\":60,\"capabilities\":[{\"type\":\"MULTI_ROLE\"}]}"
#define TINY                                                                   \
    "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":0.1}},{"    \
    "\"name\":\"mem\",\"type\":\"SCALAR\",\"scalar\":{\"value\":32}}]"

MFX_STANDARD_FIXTURE

static json_t *get_ok(const char *target)
{
    struct http_fake *f = http_fake_new(X.base, HTTP_GET, target);
    http_fake_dispatch_server(f, X.m->http);
    ck_assert(http_fake_replied(f));
    ck_assert_int_eq(http_fake_status(f), 200);
    size_t len;
    const uint8_t *body = http_fake_body(f, &len);
    json_t *j = json_loadb((const char *)body, len, 0, NULL);
    ck_assert_ptr_nonnull(j);
    http_fake_free(f);
    return j;
}

/* ACCEPT of offer_id launching t1..tn (TINY each). */
static void launch(const char *offer_id, int n)
{
    char payload[16384];
    int len = snprintf(payload, sizeof(payload),
                       "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{"
                       "\"type\":\"LAUNCH\",\"launch\":{\"task_infos\":[",
                       offer_id);
    for (int i = 1; i <= n; i++)
        len += snprintf(payload + len, sizeof(payload) - (size_t)len,
                        "%s{\"name\":\"n\",\"task_id\":{\"value\":\"t%d\"},"
                        "\"agent_id\":{\"value\":\"%s\"},\"resources\":" TINY
                        ",\"command\":{\"value\":\"true\"}}",
                        i > 1 ? "," : "", i, AG.id);
    snprintf(payload + len, sizeof(payload) - (size_t)len, "]}}]}");
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "ACCEPT", "accept", payload),
                     202);
}

static void launched(int n)
{
    char offer_id[256];
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:4;mem:4096");
    json_decref(mfx_first_offer(&X, &FW, offer_id));
    launch(offer_id, n);
}

/* Each agent's and framework's live_tasks, and each agent's live_used,
 * equal a count of its own map of tasks (/state-summary reads them). */
static void assert_entity_counters(void)
{
    size_t pos = 0;
    void *val;
    while (hmap_next(X.m->agents, &pos, NULL, &val)) {
        const struct agent *ag = val;
        uint32_t n[16] = {0};
        int64_t used[MASTER_LIVE_NAMES] = {0};
        size_t tp = 0;
        void *tv;
        while (hmap_next(ag->tasks, &tp, NULL, &tv)) {
            const struct task *t = tv;
            n[t->state]++;
            for (uint32_t i = 0; i < t->resources.n; i++) {
                int k = master_live_name_index(t->resources.v[i].name);
                if (k >= 0 && !task_state_is_terminal(t->state))
                    used[k] += t->resources.v[i].scalar;
            }
        }
        for (int s = 0; s < 16; s++)
            ck_assert_uint_eq(ag->live_tasks[s], n[s]);
        for (int k = 0; k < MASTER_LIVE_NAMES; k++)
            ck_assert_int_eq(ag->live_used[k], used[k]);
    }
    pos = 0;
    while (hmap_next(X.m->frameworks, &pos, NULL, &val)) {
        const struct framework *fw = val;
        uint32_t n[16] = {0};
        size_t tp = 0;
        void *tv;
        while (hmap_next(fw->tasks, &tp, NULL, &tv))
            n[((const struct task *)tv)->state]++;
        for (int s = 0; s < 16; s++)
            ck_assert_uint_eq(fw->live_tasks[s], n[s]);
    }
}

/* m->live equals a recount from the tasks, and the snapshot shows it. */
static void assert_counters(void)
{
    assert_entity_counters();
    struct master_live r;
    master_live_recount(X.m, &r);
    for (int s = 0; s < 16; s++)
        ck_assert_msg(X.m->live.tasks[s] == r.tasks[s], "state %d: %llu/%llu",
                      s, (unsigned long long)X.m->live.tasks[s],
                      (unsigned long long)r.tasks[s]);
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < MASTER_LIVE_NAMES; i++)
            ck_assert_int_eq(X.m->live.used[k][i], r.used[k][i]);
    ck_assert_double_eq_tol(
        mfx_metric(&X, "master/tasks_running"),
        (double)r.tasks[MESOS__V1__TASK_STATE__TASK_RUNNING], 1e-9);
    ck_assert_double_eq_tol(
        mfx_metric(&X, "master/tasks_staging"),
        (double)r.tasks[MESOS__V1__TASK_STATE__TASK_STAGING], 1e-9);
    ck_assert_double_eq_tol(mfx_metric(&X, "master/cpus_used"),
                            res_scalar_to_double(r.used[0][0]), 1e-9);
    ck_assert_double_eq_tol(mfx_metric(&X, "master/mem_used"),
                            res_scalar_to_double(r.used[0][1]), 1e-9);
}

START_TEST(test_counters_equal_recount)
{
    launched(6);
    assert_counters();
    ck_assert_double_eq_tol(mfx_metric(&X, "master/tasks_staging"), 6, 1e-9);
    ck_assert_double_eq_tol(mfx_metric(&X, "master/cpus_used"), 0.6, 1e-9);
    mfx_task_update(&X, &FW, &AG, "t1", "TASK_STARTING", 1, true);
    mfx_task_update(&X, &FW, &AG, "t1", "TASK_RUNNING", 2, true);
    mfx_task_update(&X, &FW, &AG, "t2", "TASK_RUNNING", 3, false);
    assert_counters();
    /* Terminal, not acknowledged: still held, resources no longer used. */
    mfx_task_update(&X, &FW, &AG, "t3", "TASK_FAILED", 4, false);
    assert_counters();
    ck_assert_double_eq_tol(mfx_metric(&X, "master/cpus_used"), 0.5, 1e-9);
    /* Terminal and acknowledged: forgotten (a completed task). */
    mfx_task_update(&X, &FW, &AG, "t4", "TASK_FINISHED", 5, true);
    assert_counters();
    mfx_task_update(&X, &FW, &AG, "t5", "TASK_KILLING", 6, true);
    assert_counters();
    ck_assert_double_eq_tol(mfx_metric(&X, "master/tasks_running"), 2, 1e-9);
    ck_assert_double_eq_tol(mfx_metric(&X, "master/tasks_killing"), 1, 1e-9);
    /* The framework goes: every task with it. */
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "TEARDOWN", NULL, NULL), 202);
    mfx_settle(&X);
    assert_counters();
    for (int s = 0; s < 16; s++)
        ck_assert_uint_eq(X.m->live.tasks[s], 0);
    ck_assert_ptr_null(X.m->live.head);
    ck_assert_ptr_null(X.m->live.tail);
    ck_assert_double_eq_tol(mfx_metric(&X, "master/cpus_used"), 0, 1e-9);
}
END_TEST

/* The task ids of GET target's "tasks", comma-separated, into out. */
static void page(const char *target, char *out, size_t len)
{
    json_t *j = get_ok(target);
    json_t *arr = json_object_get(j, "tasks");
    ck_assert(json_is_array(arr));
    out[0] = '\0';
    size_t used = 0;
    for (size_t i = 0; i < json_array_size(arr); i++) {
        const char *id =
            json_string_value(json_object_get(json_array_get(arr, i), "id"));
        ck_assert_ptr_nonnull(id);
        used +=
            (size_t)snprintf(out + used, len - used, "%s%s", i ? "," : "", id);
    }
    json_decref(j);
}

START_TEST(test_tasks_paging)
{
    launched(8);
    /* The index /tasks pages over: every task once, in launch order. */
    int k = 0;
    for (const struct task *t = X.m->live.head; t != NULL; t = t->live_next) {
        char id[16];
        snprintf(id, sizeof(id), "t%d", ++k);
        ck_assert_str_eq(t->info->task_id->value, id);
        ck_assert(t->live_next != NULL || t == X.m->live.tail);
    }
    ck_assert_int_eq(k, 8);
    char got[512];
    /* Descending by default: the newest first. */
    page("/tasks?limit=3", got, sizeof(got));
    ck_assert_str_eq(got, "t8,t7,t6");
    page("/tasks?limit=3&offset=3", got, sizeof(got));
    ck_assert_str_eq(got, "t5,t4,t3");
    page("/tasks?order=asc&offset=2&limit=3", got, sizeof(got));
    ck_assert_str_eq(got, "t3,t4,t5");
    page("/tasks?order=asc&offset=7", got, sizeof(got));
    ck_assert_str_eq(got, "t8");
    page("/tasks?offset=8", got, sizeof(got));
    ck_assert_str_eq(got, "");
    page("/tasks?limit=0", got, sizeof(got));
    ck_assert_str_eq(got, "");
    /* Default limit (100): all of them. */
    page("/tasks", got, sizeof(got));
    ck_assert_str_eq(got, "t8,t7,t6,t5,t4,t3,t2,t1");
    /* A bad limit is taken as not given, as Mesos. */
    page("/tasks?limit=x", got, sizeof(got));
    ck_assert_str_eq(got, "t8,t7,t6,t5,t4,t3,t2,t1");

    /* t4 completes: it is still listed once, pages still cover every
     * task once. */
    mfx_task_update(&X, &FW, &AG, "t4", "TASK_FINISHED", 1, true);
    char all[512] = "";
    size_t used = 0;
    for (int off = 0; off < 8; off += 3) {
        char target[64];
        snprintf(target, sizeof(target), "/tasks?order=asc&limit=3&offset=%d",
                 off);
        page(target, got, sizeof(got));
        used += (size_t)snprintf(all + used, sizeof(all) - used, "%s%s",
                                 off ? "," : "", got);
    }
    for (int i = 1; i <= 8; i++) {
        char id[8];
        snprintf(id, sizeof(id), "t%d", i);
        int seen = 0;
        for (char *p = all; (p = strstr(p, id)) != NULL; p += strlen(id))
            seen++;
        ck_assert_msg(seen == 1, "%s seen %d times in %s", id, seen, all);
    }
    /* Filters still work (they take the scan). */
    page("/tasks?task_id=t4", got, sizeof(got));
    ck_assert_str_eq(got, "t4");
}
END_TEST

START_TEST(test_ping_slot)
{
    ck_assert_uint_eq(master_ping_slot("m1", "m1-S5", 64), 5);
    ck_assert_uint_eq(master_ping_slot("m1", "m1-S69", 64), 5);
    ck_assert_uint_lt(master_ping_slot("m1", "other-agent", 64), 64);
    ck_assert_uint_eq(master_ping_slot("m1", "other-agent", 64),
                      master_ping_slot("m1", "other-agent", 64));
    ck_assert_int_eq(master_ping_tick_ns(64 * CLOCK_NS_PER_SEC),
                     CLOCK_NS_PER_SEC);
    ck_assert_int_eq(master_ping_tick_ns(1), CLOCK_NS_PER_MS);
}
END_TEST

#define NAGENTS (2 * MASTER_PING_SLOTS)
static struct mfx_peer agents[NAGENTS];

static size_t pings(const struct mfx_peer *p)
{
    size_t n = 0;
    for (size_t i = 0; i < http_fake_record_count(p->stream); i++) {
        size_t len;
        const uint8_t *rec = http_fake_record(p->stream, i, &len);
        json_t *j = json_loadb((const char *)rec, len, 0, NULL);
        const char *type = json_string_value(json_object_get(j, "type"));
        n += type != NULL && strcmp(type, "PING") == 0;
        json_decref(j);
    }
    return n;
}

/* The ticks are the clock: each pings its share of the agents, and one
 * interval's ticks ping every agent exactly once. */
START_TEST(test_pings_spread)
{
    mfx_stop(&X);
    const char *flags[] = {"--agent_ping_timeout=3600secs", NULL};
    mfx_start(&X, flags);
    for (int i = 0; i < NAGENTS; i++) {
        char host[32];
        snprintf(host, sizeof(host), "host%d", i);
        mfx_agent_subscribe(&X, &agents[i], host, "cpus:1;mem:128");
    }
    size_t before[NAGENTS];
    for (int i = 0; i < NAGENTS; i++)
        before[i] = pings(&agents[i]);
    for (int tick = 0; tick < MASTER_PING_SLOTS; tick++) {
        size_t pinged = 0;
        master_agents_ping_tick(X.m);
        mfx_settle(&X);
        for (int i = 0; i < NAGENTS; i++) {
            size_t now = pings(&agents[i]);
            pinged += now - before[i];
            before[i] = now;
        }
        ck_assert_msg(pinged == NAGENTS / MASTER_PING_SLOTS,
                      "tick %d pinged %zu agents", tick, pinged);
    }
    for (int i = 0; i < NAGENTS; i++)
        ck_assert_uint_eq(pings(&agents[i]), 1);
    for (int i = 0; i < NAGENTS; i++)
        mfx_peer_free(&agents[i]);
}
END_TEST

/* The clock, not the timer's firings, drives the ticks: one late call
 * runs every tick due (each agent pinged once per interval), and a call
 * after a long stall pings each agent once, not once per interval missed. */
START_TEST(test_pings_follow_the_clock)
{
    mfx_stop(&X);
    const char *flags[] = {"--agent_ping_timeout=3600secs", NULL};
    mfx_start(&X, flags);
    for (int i = 0; i < NAGENTS; i++) {
        char host[32];
        snprintf(host, sizeof(host), "host%d", i);
        mfx_agent_subscribe(&X, &agents[i], host, "cpus:1;mem:128");
    }
    int64_t interval = 3600 * CLOCK_NS_PER_SEC;
    int64_t tick = master_ping_tick_ns(interval);
    int64_t t0 = 1000 * CLOCK_NS_PER_SEC;
    size_t base[NAGENTS];
    for (int i = 0; i < NAGENTS; i++)
        base[i] = pings(&agents[i]);
    /* The first tick, then the other 63 of the interval in one call. */
    master_agents_ping_due(X.m, t0);
    master_agents_ping_due(X.m, t0 + interval - tick);
    mfx_settle(&X);
    for (int i = 0; i < NAGENTS; i++)
        ck_assert_uint_eq(pings(&agents[i]) - base[i], 1);
    /* Ten intervals late: one PING each, and nothing more at once. */
    master_agents_ping_due(X.m, t0 + 11 * interval);
    master_agents_ping_due(X.m, t0 + 11 * interval);
    mfx_settle(&X);
    for (int i = 0; i < NAGENTS; i++)
        ck_assert_uint_eq(pings(&agents[i]) - base[i], 2);
    /* Then the ticks keep the interval again. */
    master_agents_ping_due(X.m, t0 + 12 * interval - tick);
    mfx_settle(&X);
    for (int i = 0; i < NAGENTS; i++)
        ck_assert_uint_le(pings(&agents[i]) - base[i], 3);
    master_agents_ping_due(X.m, t0 + 12 * interval);
    mfx_settle(&X);
    for (int i = 0; i < NAGENTS; i++)
        ck_assert_uint_eq(pings(&agents[i]) - base[i], 3);
    for (int i = 0; i < NAGENTS; i++)
        mfx_peer_free(&agents[i]);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("master_scaleload");
    TCase *tc = tcase_create("scaleload");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_counters_equal_recount);
    tcase_add_test(tc, test_tasks_paging);
    tcase_add_test(tc, test_ping_slot);
    tcase_add_test(tc, test_pings_follow_the_clock);
    tcase_add_test(tc, test_pings_spread);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(suite)
