/*
 * Tests of the status update manager (agent/update_manager.h) with a fake
 * clock and a recording send function: per-task order, one update in
 * flight per task, exponential resends, acknowledgements, going online and
 * offline.
 */
#include "agent/status.h"
#include "agent/update_manager.h"
#include "check_main.h"
#include "common/json_pb.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#define SEC INT64_C(1000000000)
#define MIN (10 * SEC)
#define MAX (600 * SEC)

struct sent {
    char fw[32];
    char task[32];
    Mesos__V1__TaskState state;
    Mesos__V1__TaskState latest;
    uint8_t uuid[16];
};

static struct sent log_[256];
static size_t nsent;

static void record(const char *fw, const Mesos__V1__TaskStatus *st,
                   Mesos__V1__TaskState latest, void *arg)
{
    (void)arg;
    ck_assert_uint_lt(nsent, 256);
    struct sent *s = &log_[nsent++];
    snprintf(s->fw, sizeof(s->fw), "%s", fw);
    snprintf(s->task, sizeof(s->task), "%s", st->task_id->value);
    s->state = st->state;
    s->latest = latest;
    memcpy(s->uuid, st->uuid.data, 16);
}

/* A status with a uuid whose first byte is tag (so tests can name it). */
static Mesos__V1__TaskStatus *status(const char *task, Mesos__V1__TaskState s,
                                     uint8_t tag)
{
    uint8_t uuid[16] = {0};
    uuid[0] = tag;
    struct agent_status_spec spec = {
        .task_id = task,
        .state = s,
        .source = MESOS__V1__TASK_STATUS__SOURCE__SOURCE_EXECUTOR,
        .timestamp = 1.0,
        .uuid = uuid,
    };
    return agent_status_new(&spec);
}

static enum agent_um_ack_result ack(struct agent_um *um, const char *fw,
                                    const char *task, uint8_t tag, int64_t now)
{
    uint8_t uuid[16] = {0};
    uuid[0] = tag;
    return agent_um_ack(um, fw, task, uuid, 16, now, NULL);
}

static struct agent_um *new_um(void)
{
    nsent = 0;
    return agent_um_new(MIN, MAX, record, NULL);
}

#define STARTING MESOS__V1__TASK_STATE__TASK_STARTING
#define RUNNING  MESOS__V1__TASK_STATE__TASK_RUNNING
#define FINISHED MESOS__V1__TASK_STATE__TASK_FINISHED

START_TEST(test_offline_sends_nothing)
{
    struct agent_um *um = new_um();
    agent_um_add(um, "f", status("t", STARTING, 1), 0);
    ck_assert_uint_eq(nsent, 0);
    ck_assert_int_eq(agent_um_next_deadline(um), -1);
    agent_um_tick(um, 100 * SEC);
    ck_assert_uint_eq(nsent, 0);
    ck_assert_uint_eq(agent_um_count(um, "f", "t"), 1);
    agent_um_free(um);
}
END_TEST

START_TEST(test_only_oldest_is_sent)
{
    struct agent_um *um = new_um();
    agent_um_set_online(um, true, 0);
    agent_um_add(um, "f", status("t", STARTING, 1), 0);
    agent_um_add(um, "f", status("t", RUNNING, 2), 0);
    agent_um_add(um, "f", status("t", FINISHED, 3), 0);
    ck_assert_uint_eq(nsent, 1);
    ck_assert_int_eq(log_[0].state, STARTING);
    /* The newest queued state rides along. */
    ck_assert_int_eq(log_[0].latest, STARTING);
    ck_assert_uint_eq(agent_um_count(um, "f", "t"), 3);
    agent_um_free(um);
}
END_TEST

START_TEST(test_ack_sends_next_in_order)
{
    struct agent_um *um = new_um();
    agent_um_set_online(um, true, 0);
    agent_um_add(um, "f", status("t", STARTING, 1), 0);
    agent_um_add(um, "f", status("t", RUNNING, 2), 0);
    agent_um_add(um, "f", status("t", FINISHED, 3), 0);
    Mesos__V1__TaskState acked = 0;
    uint8_t u1[16] = {1};
    ck_assert_int_eq(agent_um_ack(um, "f", "t", u1, 16, SEC, &acked),
                     AGENT_UM_ACKED);
    ck_assert_int_eq(acked, STARTING);
    ck_assert_uint_eq(nsent, 2);
    ck_assert_int_eq(log_[1].state, RUNNING);
    ck_assert_int_eq(log_[1].latest, FINISHED);
    ck_assert_int_eq(ack(um, "f", "t", 2, 2 * SEC), AGENT_UM_ACKED);
    ck_assert_int_eq(log_[2].state, FINISHED);
    ck_assert_int_eq(ack(um, "f", "t", 3, 3 * SEC), AGENT_UM_ACKED);
    ck_assert_uint_eq(nsent, 3);
    ck_assert_uint_eq(agent_um_count(um, "f", "t"), 0);
    ck_assert_uint_eq(agent_um_task_count(um), 0);
    ck_assert_int_eq(agent_um_next_deadline(um), -1);
    agent_um_free(um);
}
END_TEST

START_TEST(test_ack_mismatch_and_unknown)
{
    struct agent_um *um = new_um();
    agent_um_set_online(um, true, 0);
    agent_um_add(um, "f", status("t", STARTING, 1), 0);
    agent_um_add(um, "f", status("t", RUNNING, 2), 0);
    /* Acknowledging the second before the first is ignored. */
    ck_assert_int_eq(ack(um, "f", "t", 2, SEC), AGENT_UM_ACK_MISMATCH);
    ck_assert_uint_eq(agent_um_count(um, "f", "t"), 2);
    ck_assert_uint_eq(nsent, 1);
    ck_assert_int_eq(ack(um, "f", "other", 1, SEC), AGENT_UM_ACK_UNKNOWN);
    ck_assert_int_eq(ack(um, "g", "t", 1, SEC), AGENT_UM_ACK_UNKNOWN);
    /* A short uuid never matches. */
    uint8_t u1[16] = {1};
    ck_assert_int_eq(agent_um_ack(um, "f", "t", u1, 8, SEC, NULL),
                     AGENT_UM_ACK_MISMATCH);
    ck_assert_int_eq(agent_um_ack(um, "f", "t", NULL, 0, SEC, NULL),
                     AGENT_UM_ACK_MISMATCH);
    /* A repeated ack after the real one is unknown or a mismatch. */
    ck_assert_int_eq(ack(um, "f", "t", 1, SEC), AGENT_UM_ACKED);
    ck_assert_int_eq(ack(um, "f", "t", 1, SEC), AGENT_UM_ACK_MISMATCH);
    agent_um_free(um);
}
END_TEST

START_TEST(test_exponential_resend)
{
    struct agent_um *um = new_um();
    agent_um_set_online(um, true, 0);
    agent_um_add(um, "f", status("t", STARTING, 1), 0);
    ck_assert_uint_eq(nsent, 1);
    ck_assert_int_eq(agent_um_next_deadline(um), MIN);
    /* Not yet due. */
    agent_um_tick(um, MIN - 1);
    ck_assert_uint_eq(nsent, 1);
    /* 10 s, then 20, 40, 80, 160, 320, then capped at 600. */
    int64_t now = 0, interval = MIN;
    int64_t expect[] = {20, 40, 80, 160, 320, 600, 600, 600};
    for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
        now += interval;
        agent_um_tick(um, now);
        ck_assert_uint_eq(nsent, i + 2);
        ck_assert_int_eq(log_[i + 1].state, STARTING);
        ck_assert(memcmp(log_[i + 1].uuid, log_[0].uuid, 16) == 0);
        interval = expect[i] * SEC;
        ck_assert_int_eq(agent_um_next_deadline(um), now + interval);
    }
    /* An ack restarts the interval for the next update. */
    agent_um_add(um, "f", status("t", RUNNING, 2), now);
    ck_assert_int_eq(ack(um, "f", "t", 1, now), AGENT_UM_ACKED);
    ck_assert_int_eq(agent_um_next_deadline(um), now + MIN);
    agent_um_free(um);
}
END_TEST

START_TEST(test_tasks_independent)
{
    struct agent_um *um = new_um();
    agent_um_set_online(um, true, 0);
    agent_um_add(um, "f", status("a", STARTING, 1), 0);
    agent_um_add(um, "f", status("b", STARTING, 2), SEC);
    agent_um_add(um, "g", status("a", STARTING, 3), 2 * SEC);
    /* One in flight per task, each sent at once. */
    ck_assert_uint_eq(nsent, 3);
    ck_assert_str_eq(log_[2].fw, "g");
    /* Only a's is due at 10 s. */
    agent_um_tick(um, MIN);
    ck_assert_uint_eq(nsent, 4);
    ck_assert_str_eq(log_[3].task, "a");
    ck_assert_str_eq(log_[3].fw, "f");
    ck_assert_int_eq(agent_um_next_deadline(um), MIN + SEC);
    agent_um_free(um);
}
END_TEST

START_TEST(test_going_online_sends_every_oldest)
{
    struct agent_um *um = new_um();
    agent_um_add(um, "f", status("a", STARTING, 1), 0);
    agent_um_add(um, "f", status("a", RUNNING, 2), 0);
    agent_um_add(um, "f", status("b", STARTING, 3), 0);
    agent_um_set_online(um, true, 5 * SEC);
    ck_assert_uint_eq(nsent, 2);
    ck_assert_str_eq(log_[0].task, "a");
    ck_assert_int_eq(log_[0].state, STARTING);
    ck_assert_int_eq(log_[0].latest, RUNNING);
    ck_assert_str_eq(log_[1].task, "b");
    ck_assert_int_eq(agent_um_next_deadline(um), 5 * SEC + MIN);
    /* Offline: nothing due, acks still count. */
    agent_um_set_online(um, false, 6 * SEC);
    ck_assert_int_eq(agent_um_next_deadline(um), -1);
    ck_assert_int_eq(ack(um, "f", "a", 1, 6 * SEC), AGENT_UM_ACKED);
    ck_assert_uint_eq(nsent, 2);
    agent_um_tick(um, 100 * SEC);
    ck_assert_uint_eq(nsent, 2);
    /* Online again: at once, with fresh intervals. */
    agent_um_set_online(um, true, 200 * SEC);
    ck_assert_uint_eq(nsent, 4);
    ck_assert_int_eq(log_[2].state, RUNNING);
    ck_assert_int_eq(agent_um_next_deadline(um), 200 * SEC + MIN);
    agent_um_free(um);
}
END_TEST

START_TEST(test_resend_now)
{
    struct agent_um *um = new_um();
    agent_um_set_online(um, true, 0);
    agent_um_add(um, "f", status("a", STARTING, 1), 0);
    agent_um_tick(um, MIN); /* interval now 20 s */
    ck_assert(agent_um_resend(um, "f", "a", MIN + SEC));
    ck_assert_uint_eq(nsent, 3);
    ck_assert_int_eq(agent_um_next_deadline(um), MIN + SEC + MIN);
    ck_assert(!agent_um_resend(um, "f", "zzz", 0));
    agent_um_free(um);
}
END_TEST

struct visit {
    char tasks[16][8];
    Mesos__V1__TaskState states[16];
    size_t n;
};

static void visit(const char *fw, const Mesos__V1__TaskStatus *st, void *arg)
{
    (void)fw;
    struct visit *v = arg;
    snprintf(v->tasks[v->n], sizeof(v->tasks[0]), "%s", st->task_id->value);
    v->states[v->n++] = st->state;
}

START_TEST(test_foreach_in_arrival_order)
{
    struct agent_um *um = new_um();
    agent_um_add(um, "f", status("a", STARTING, 1), 0);
    agent_um_add(um, "f", status("b", STARTING, 2), 0);
    agent_um_add(um, "f", status("a", RUNNING, 3), 0);
    agent_um_add(um, "f", status("c", STARTING, 4), 0);
    struct visit v = {0};
    agent_um_foreach(um, visit, &v);
    ck_assert_uint_eq(v.n, 4);
    ck_assert_str_eq(v.tasks[0], "a");
    ck_assert_str_eq(v.tasks[1], "b");
    ck_assert_str_eq(v.tasks[2], "a");
    ck_assert_int_eq(v.states[2], RUNNING);
    ck_assert_str_eq(v.tasks[3], "c");
    struct visit w = {0};
    agent_um_foreach_task(um, "f", "a", visit, &w);
    ck_assert_uint_eq(w.n, 2);
    ck_assert_int_eq(w.states[1], RUNNING);
    agent_um_drop_task(um, "f", "a");
    ck_assert_uint_eq(agent_um_count(um, "f", "a"), 0);
    ck_assert_uint_eq(agent_um_task_count(um), 2);
    agent_um_free(um);
}
END_TEST

START_TEST(test_ids_do_not_collide)
{
    /* ("ab", "c") and ("a", "bc") are different tasks. */
    struct agent_um *um = new_um();
    agent_um_add(um, "ab", status("c", STARTING, 1), 0);
    agent_um_add(um, "a", status("bc", STARTING, 2), 0);
    ck_assert_uint_eq(agent_um_task_count(um), 2);
    ck_assert_uint_eq(agent_um_count(um, "ab", "c"), 1);
    ck_assert_uint_eq(agent_um_count(um, "a", "bc"), 1);
    agent_um_free(um);
}
END_TEST

static Suite *agent_update_manager_suite(void)
{
    Suite *s = suite_create("agent_update_manager");
    TCase *tc = tcase_create("updates");
    tcase_add_test(tc, test_offline_sends_nothing);
    tcase_add_test(tc, test_only_oldest_is_sent);
    tcase_add_test(tc, test_ack_sends_next_in_order);
    tcase_add_test(tc, test_ack_mismatch_and_unknown);
    tcase_add_test(tc, test_exponential_resend);
    tcase_add_test(tc, test_tasks_independent);
    tcase_add_test(tc, test_going_online_sends_every_oldest);
    tcase_add_test(tc, test_resend_now);
    tcase_add_test(tc, test_foreach_in_arrival_order);
    tcase_add_test(tc, test_ids_do_not_collide);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(agent_update_manager_suite)
