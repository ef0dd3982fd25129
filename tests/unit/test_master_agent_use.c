/*
 * What live_counters.c keeps of an agent's used resources per name and
 * allocation role (struct agent's live_use, /state's
 * used_resources_full): equal to a walk of the agent's tasks whenever it
 * says it is usable, through launches, reservations, status changes and
 * the agent's removal, and usable again once the tasks that made it
 * unusable are gone; and each task's borrowed ids.
 */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "common/hmap.h"
#include "master/live_counters.h"
#include "master_fixture.h"

#define FW_INFO                                                                \
    "{\"user\":\"u\",\"name\":\"fw\",\"roles\":[\"web\"],\"principal\":"       \
    "\"p1\",\"failover_timeout\":60,\"capabilities\":[{\"type\":"              \
    "\"MULTI_ROLE\"}]}"
#define SCALAR(name, value)                                                    \
    "{\"name\":\"" name "\",\"type\":\"SCALAR\",\"scalar\":{\"value\":" value  \
    "}}"
/* Reserved to web (dynamically), allocated to web. */
#define RESV(name, value)                                                      \
    "{\"name\":\"" name "\",\"type\":\"SCALAR\",\"scalar\":{\"value\":" value  \
    "},\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"web\","              \
    "\"principal\":\"p1\"}],\"allocation_info\":{\"role\":\"web\"}}"
#define TINY "[" SCALAR("cpus", "0.1") "," SCALAR("mem", "32") "]"
/* The same names the other way round: another order of pairs. */
#define REVERSED "[" SCALAR("mem", "16") "," SCALAR("cpus", "0.2") "]"
#define RESERVED "[" RESV("cpus", "1") "," SCALAR("mem", "8") "]"

#define RESERVE_OP                                                             \
    "{\"type\":\"RESERVE\",\"reserve\":{\"resources\":[" RESERVED_CPUS "]}}"
#define RESERVED_CPUS RESV("cpus", "1")

MFX_STANDARD_FIXTURE

/* A task of the LAUNCH: id and resources (a JSON array). */
static int task_info(char *out, size_t len, const char *id,
                     const char *resources)
{
    return snprintf(out, len,
                    "{\"name\":\"n\",\"task_id\":{\"value\":\"%s\"},"
                    "\"agent_id\":{\"value\":\"%s\"},\"resources\":%s,"
                    "\"command\":{\"value\":\"true\"}}",
                    id, AG.id, resources);
}

/* One ACCEPT: RESERVE of cpus 1, then LAUNCH of t1, t2 (TINY), t3
 * (REVERSED) and t4 (RESERVED). */
static void launch_mix(void)
{
    char offer_id[256];
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:8;mem:8192");
    json_decref(mfx_first_offer(&X, &FW, offer_id));
    char payload[8192], t[4][1024];
    task_info(t[0], sizeof(t[0]), "t1", TINY);
    task_info(t[1], sizeof(t[1]), "t2", TINY);
    task_info(t[2], sizeof(t[2]), "t3", REVERSED);
    task_info(t[3], sizeof(t[3]), "t4", RESERVED);
    snprintf(payload, sizeof(payload),
             "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[" RESERVE_OP
             ",{\"type\":\"LAUNCH\",\"launch\":{\"task_infos\":"
             "[%s,%s,%s,%s]}}]}",
             offer_id, t[0], t[1], t[2], t[3]);
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "ACCEPT", "accept", payload),
                     202);
    mfx_settle(&X);
}

/* Every agent's kept use, when usable, equals a walk of its tasks;
 * returns whether the test agent's was usable. */
static bool assert_use(void)
{
    bool usable = false;
    size_t pos = 0;
    void *val;
    while (hmap_next(X.m->agents, &pos, NULL, &val)) {
        const struct agent *ag = val;
        struct master_use kept, walked;
        bool k = master_live_agent_use(ag, &kept);
        bool w = master_live_agent_use_recount(ag, &walked);
        if (strcmp(ag->id, AG.id) == 0)
            usable = k;
        /* Each task borrows its agent's id and its own for /state. */
        size_t tp = 0;
        void *tv;
        while (hmap_next(ag->tasks, &tp, NULL, &tv)) {
            const struct task *t = tv;
            ck_assert_ptr_eq(t->agent_id, ag->id);
            ck_assert_ptr_eq(t->id, t->info->task_id->value);
        }
        if (!k)
            continue;
        ck_assert(w);
        ck_assert_uint_eq(kept.n, walked.n);
        for (uint32_t i = 0; i < kept.n; i++) {
            ck_assert_str_eq(kept.name[i], walked.name[i]);
            ck_assert_pstr_eq(kept.role[i], walked.role[i]);
            ck_assert_int_eq(kept.v[i], walked.v[i]);
        }
    }
    return usable;
}

static const struct agent *test_agent(void)
{
    const struct agent *ag = hmap_get(X.m->agents, AG.id);
    ck_assert_ptr_nonnull(ag);
    return ag;
}

START_TEST(test_kept_use_equals_walk)
{
    launch_mix();
    const struct agent *ag = test_agent();
    ck_assert_uint_eq(hmap_count(ag->tasks), 4);
    /* t3 lists the pairs in another order, t4 holds a reservation: a walk
     * must decide. */
    ck_assert(!assert_use());
    ck_assert_uint_eq(ag->live_use_same, 2);
    ck_assert_uint_eq(ag->live_use_odd, 1);
    ck_assert_uint_eq(ag->live_use_slow, 1);
    mfx_task_update(&X, &FW, &AG, "t4", "TASK_FINISHED", 1, true);
    ck_assert(!assert_use());
    ck_assert_uint_eq(ag->live_use_slow, 0);
    mfx_task_update(&X, &FW, &AG, "t3", "TASK_RUNNING", 2, true);
    ck_assert(!assert_use());
    mfx_task_update(&X, &FW, &AG, "t3", "TASK_KILLED", 3, true);
    /* Only t1 and t2 are left: usable, cpus 0.2 and mem 64 for web. */
    ck_assert(assert_use());
    ck_assert_uint_eq(ag->live_nuse, 2);
    ck_assert_str_eq(ag->live_use[0].name, "cpus");
    ck_assert_pstr_eq(ag->live_use[0].role, "web");
    ck_assert_int_eq(ag->live_use[0].v, 200);
    ck_assert_int_eq(ag->live_use[1].v, 64000);
    mfx_task_update(&X, &FW, &AG, "t1", "TASK_STARTING", 4, true);
    mfx_task_update(&X, &FW, &AG, "t1", "TASK_RUNNING", 5, false);
    ck_assert(assert_use());
    ck_assert_int_eq(ag->live_use[0].v, 200);
    /* Terminal, not acknowledged: held, using nothing. */
    mfx_task_update(&X, &FW, &AG, "t2", "TASK_FAILED", 6, false);
    ck_assert(assert_use());
    ck_assert_int_eq(ag->live_use[0].v, 100);
    mfx_task_update(&X, &FW, &AG, "t1", "TASK_FINISHED", 7, true);
    /* Nothing live: nothing kept. */
    ck_assert(assert_use());
    ck_assert_uint_eq(ag->live_nuse, 0);
    ck_assert_ptr_null(ag->live_use);
    ck_assert_uint_eq(ag->live_use_same + ag->live_use_odd, 0);
}
END_TEST

/* The first task to come sets the order; once every task is gone the next
 * one sets it again. */
START_TEST(test_kept_use_order_follows_first_task)
{
    launch_mix();
    const struct agent *ag = test_agent();
    mfx_task_update(&X, &FW, &AG, "t1", "TASK_FINISHED", 1, true);
    mfx_task_update(&X, &FW, &AG, "t2", "TASK_FINISHED", 2, true);
    mfx_task_update(&X, &FW, &AG, "t4", "TASK_FINISHED", 3, true);
    /* t3 (mem, cpus) was judged against t1's order and stays odd: a walk
     * decides until it goes. */
    ck_assert(!assert_use());
    ck_assert_uint_eq(ag->live_use_odd, 1);
    ck_assert_uint_eq(ag->live_use_same, 0);
    mfx_task_update(&X, &FW, &AG, "t3", "TASK_FINISHED", 4, true);
    ck_assert(assert_use());
    ck_assert_ptr_null(ag->live_use);
}
END_TEST

/* Removing the agent takes its tasks, and what was kept for it, away;
 * the agent left has what a walk says. */
START_TEST(test_kept_use_agent_removed)
{
    launch_mix();
    mfx_agent_subscribe(&X, &AG2, "host2", "cpus:2;mem:1024");
    ck_assert(!assert_use());
    char call[512];
    snprintf(call, sizeof(call),
             "{\"type\":\"MARK_AGENT_GONE\",\"mark_agent_gone\":{\"agent_id\":"
             "{\"value\":\"%s\"}}}",
             AG.id);
    struct http_fake *f = mfx_operator(&X, call);
    ck_assert_int_eq(http_fake_status(f), 200);
    http_fake_free(f);
    mfx_settle(&X);
    ck_assert_ptr_null(hmap_get(X.m->agents, AG.id));
    assert_use();
    const struct agent *ag2 = hmap_get(X.m->agents, AG2.id);
    ck_assert_ptr_nonnull(ag2);
    ck_assert_uint_eq(ag2->live_nuse, 0);
    ck_assert_uint_eq(ag2->live_use_same + ag2->live_use_odd, 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("master_agent_use");
    TCase *tc = tcase_create("kept");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_kept_use_equals_walk);
    tcase_add_test(tc, test_kept_use_order_follows_first_task);
    tcase_add_test(tc, test_kept_use_agent_removed);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(suite)
