/*
 * End-to-end tests of a whole cluster on loopback: the real offerd master,
 * one or two real offerd-agent daemons running real processes, and
 * frameworks written with libofferd in this process (their event loop runs
 * while a test waits). Every test starts its own cluster and checks, over
 * JSON and over protobuf, what a framework author relies on: tasks run to
 * completion with acknowledgements, failures and kills are reported as Mesos
 * reports them, filters hold, agent loss and framework failover behave.
 */
#include <check.h>
#include <event2/event.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/resources.h"
#include "common/resources_pb.h"
#include "harness.h"
#include "harness_fw.h"
#include "mesos/v1/scheduler.pb-c.h"
#include "offerd/scheduler.h"

#define MAX_TASKS  64
#define MAX_AGENTS 4
#define TASK_RES   "cpus:0.1;mem:16"

/* ---- The cluster ------------------------------------------------------------
 */

static struct e2e_proc master;
static struct e2e_proc agents[MAX_AGENTS];
static int nagents;
static struct event_base *base;

static const char *const AGENT_RES = "--resources=cpus:2;mem:512;disk:1024";

/* Start a master with extra flags (fast allocation by default) and n
 * agents, and wait until all of them are registered. */
static void cluster_start(int n, const char *const *master_extra)
{
    const char *margs[16] = {"--allocation_interval=50ms"};
    int k = 1;
    for (; master_extra != NULL && *master_extra != NULL && k < 15;
         master_extra++)
        margs[k++] = *master_extra;
    margs[k] = NULL;
    char hostname[MAX_AGENTS][32];
    const char *aargs[MAX_AGENTS][3];
    const char *const *lists[MAX_AGENTS];
    for (int i = 0; i < n; i++) {
        snprintf(hostname[i], sizeof(hostname[i]), "--hostname=agent%d", i);
        aargs[i][0] = AGENT_RES;
        aargs[i][1] = hostname[i];
        aargs[i][2] = NULL;
        lists[i] = aargs[i];
    }
    nagents = n;
    base = e2e_cluster_start(&master, margs, agents, n, lists);
}

static void cluster_stop(void)
{
    e2e_cluster_stop(&master, agents, nagents, &base);
}

/* Tasks an agent runs (its /state, every framework); with
 * include_terminal also the ended ones it keeps until their last update is
 * acknowledged. */
static int agent_tasks(const struct e2e_proc *a, bool include_terminal)
{
    json_t *j = e2e_get_json(a->port, "/state");
    ck_assert_ptr_nonnull(j);
    int n = 0;
    json_t *fws = json_object_get(j, "frameworks");
    size_t i;
    json_t *fw;
    json_array_foreach(fws, i, fw)
    {
        json_t *execs = json_object_get(fw, "executors");
        size_t k;
        json_t *ex;
        json_array_foreach(execs, k, ex)
        {
            n += (int)json_array_size(json_object_get(ex, "tasks"));
            n += (int)json_array_size(json_object_get(ex, "queued_tasks"));
            if (include_terminal)
                n += (int)json_array_size(
                    json_object_get(ex, "completed_tasks"));
        }
    }
    json_decref(j);
    return n;
}

static int agent_task_count(const struct e2e_proc *a)
{
    return agent_tasks(a, false);
}

/* ---- A framework on libofferd -----------------------------------------------
 */

struct task_rec {
    char id[64];
    char agent_id[128];
    int state; /* latest Mesos__V1__TaskState, -1 before any update */
    int reason;
    int source;
    int nupdates;  /* distinct updates (a resent one counts once) */
    int states[8]; /* the first updates, in order */
    /* The uuids of the first updates: an agent that hears no
     * acknowledgement in time sends an update again (at-least-once, as
     * Mesos), which a loaded machine can provoke. */
    uint8_t uuids[8][16];
    int resent;
    char message[256];
    int64_t launched_ms, terminal_ms;
};

enum offer_mode {
    OFFERS_LAUNCH,  /* launch pending tasks, decline the rest (refuse 0) */
    OFFERS_HOLD,    /* keep every offer (the test decides) */
    OFFERS_DECLINE, /* decline with refuse_seconds */
};

struct held_offer {
    char id[128];
    char agent_id[128];
};

struct fw {
    struct offerd_sched *s;
    const char *name;
    char id[128];
    bool subscribed;
    int subscriptions;
    int refused; /* SUBSCRIBE answered 4xx */
    int errors;  /* ERROR events */

    enum offer_mode mode;
    double refuse_seconds;
    const char *command;
    int to_launch;      /* tasks still to launch */
    const char *prefix; /* task ids are <prefix>-<i> */
    int next_index;
    double grace_secs; /* kill policy grace period, 0: none */

    struct task_rec tasks[MAX_TASKS];
    int ntasks;

    struct held_offer held[64];
    int nheld;
    int offers_from[MAX_AGENTS]; /* offers seen per agent index */
};

static int agent_index(const char *agent_id)
{
    /* Agents are told apart by their hostnames agent<i>. */
    json_t *j = e2e_get_json(master.port, "/slaves");
    int idx = -1;
    size_t i;
    json_t *sl;
    json_array_foreach(json_object_get(j, "slaves"), i, sl)
    {
        const char *id = json_string_value(json_object_get(sl, "id"));
        const char *host = json_string_value(json_object_get(sl, "hostname"));
        if (id != NULL && host != NULL && strcmp(id, agent_id) == 0 &&
            strncmp(host, "agent", 5) == 0)
            idx = atoi(host + 5);
    }
    json_decref(j);
    return idx;
}

static struct task_rec *task_find(struct fw *f, const char *id)
{
    for (int i = 0; i < f->ntasks; i++)
        if (strcmp(f->tasks[i].id, id) == 0)
            return &f->tasks[i];
    return NULL;
}

static struct task_rec *task_add(struct fw *f, const char *id,
                                 const char *agent_id)
{
    ck_assert_int_lt(f->ntasks, MAX_TASKS);
    struct task_rec *t = &f->tasks[f->ntasks++];
    memset(t, 0, sizeof(*t));
    snprintf(t->id, sizeof(t->id), "%s", id);
    snprintf(t->agent_id, sizeof(t->agent_id), "%s", agent_id);
    t->state = -1;
    t->launched_ms = e2e_now_ms();
    return t;
}

static void decline(struct fw *f, const char *offer_id, double secs)
{
    Mesos__V1__Filters filters = MESOS__V1__FILTERS__INIT;
    filters.has_refuse_seconds = 1;
    filters.refuse_seconds = secs;
    const char *ids[1] = {offer_id};
    ck_assert_int_eq(offerd_sched_decline(f->s, ids, 1, &filters), 0);
}

/* LAUNCH task_id on agent_id with resources res and f's command and grace
 * period, using offer_id. */
static void launch_one(struct fw *f, const char *offer_id, const char *agent_id,
                       const char *task_id, const res_list *res)
{
    size_t nres;
    Mesos__V1__Resource **pres = res_list_to_pb(res, false, &nres);
    Mesos__V1__TaskID tid = MESOS__V1__TASK_ID__INIT;
    tid.value = (char *)task_id;
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = (char *)agent_id;
    Mesos__V1__CommandInfo cmd = MESOS__V1__COMMAND_INFO__INIT;
    cmd.has_shell = 1;
    cmd.shell = 1;
    cmd.value = (char *)f->command;
    Mesos__V1__DurationInfo grace = MESOS__V1__DURATION_INFO__INIT;
    Mesos__V1__KillPolicy kp = MESOS__V1__KILL_POLICY__INIT;
    Mesos__V1__TaskInfo ti = MESOS__V1__TASK_INFO__INIT;
    ti.name = (char *)f->name;
    ti.task_id = &tid;
    ti.agent_id = &aid;
    ti.n_resources = nres;
    ti.resources = pres;
    ti.command = &cmd;
    if (f->grace_secs > 0) {
        grace.nanoseconds = (int64_t)(f->grace_secs * 1e9);
        kp.grace_period = &grace;
        ti.kill_policy = &kp;
    }
    Mesos__V1__TaskInfo *tis[1] = {&ti};
    Mesos__V1__Offer__Operation__Launch launch =
        MESOS__V1__OFFER__OPERATION__LAUNCH__INIT;
    launch.n_task_infos = 1;
    launch.task_infos = tis;
    Mesos__V1__Offer__Operation op = MESOS__V1__OFFER__OPERATION__INIT;
    op.has_type = 1;
    op.type = MESOS__V1__OFFER__OPERATION__TYPE__LAUNCH;
    op.launch = &launch;
    Mesos__V1__Offer__Operation *ops[1] = {&op};
    Mesos__V1__Filters filters = MESOS__V1__FILTERS__INIT;
    filters.has_refuse_seconds = 1;
    filters.refuse_seconds = 0;
    const char *ids[1] = {offer_id};
    ck_assert_int_eq(offerd_sched_accept(f->s, ids, 1, ops, 1, &filters), 0);
    res_pb_array_free(pres, nres);
    if (task_find(f, task_id) == NULL)
        task_add(f, task_id, agent_id);
}

/* Launch as many pending tasks as fit in one offer, one ACCEPT per offer
 * (several LAUNCH operations in it). */
static void launch_on_offer(struct fw *f, const Mesos__V1__Offer *offer)
{
    char ids[HFW_MAX_PER_ACCEPT][64];
    const char *pids[HFW_MAX_PER_ACCEPT], *cmds[HFW_MAX_PER_ACCEPT];
    int want = 0;
    for (; want < f->to_launch && want < HFW_MAX_PER_ACCEPT; want++) {
        snprintf(ids[want], sizeof(ids[want]), "%s-%d", f->prefix,
                 f->next_index + want);
        pids[want] = ids[want];
        cmds[want] = f->command;
    }
    static struct hfw_launches l;
    int n =
        hfw_pack_launches(&l, offer, TASK_RES, pids, cmds, want, f->grace_secs);
    const char *oid = offer->id->value;
    if (n == 0) {
        decline(f, oid, 0);
        return;
    }
    Mesos__V1__Filters filters = MESOS__V1__FILTERS__INIT;
    filters.has_refuse_seconds = 1;
    filters.refuse_seconds = 0;
    ck_assert_int_eq(
        offerd_sched_accept(f->s, &oid, 1, l.ops, (size_t)n, &filters), 0);
    hfw_launches_clear(&l);
    for (int i = 0; i < n; i++)
        task_add(f, ids[i], offer->agent_id->value);
    f->next_index += n;
    f->to_launch -= n;
}

static void on_subscribed(struct offerd_sched *s, const char *framework_id,
                          double hb, const Mesos__V1__Scheduler__Event *ev,
                          void *user)
{
    (void)s;
    (void)hb;
    (void)ev;
    struct fw *f = user;
    snprintf(f->id, sizeof(f->id), "%s", framework_id);
    f->subscribed = true;
    f->subscriptions++;
}

static void on_disconnected(struct offerd_sched *s, const char *reason,
                            bool will_retry, void *user)
{
    (void)s;
    (void)reason;
    (void)will_retry;
    struct fw *f = user;
    f->subscribed = false;
}

static void on_offers(struct offerd_sched *s,
                      const Mesos__V1__Scheduler__Event *ev, void *user)
{
    (void)s;
    struct fw *f = user;
    for (size_t i = 0; i < ev->offers->n_offers; i++) {
        const Mesos__V1__Offer *o = ev->offers->offers[i];
        int idx = agent_index(o->agent_id->value);
        if (idx >= 0 && idx < MAX_AGENTS)
            f->offers_from[idx]++;
        switch (f->mode) {
        case OFFERS_LAUNCH:
            launch_on_offer(f, o);
            break;
        case OFFERS_DECLINE:
            decline(f, o->id->value, f->refuse_seconds);
            break;
        case OFFERS_HOLD:
            if (f->nheld < 64) {
                struct held_offer *h = &f->held[f->nheld++];
                snprintf(h->id, sizeof(h->id), "%s", o->id->value);
                snprintf(h->agent_id, sizeof(h->agent_id), "%s",
                         o->agent_id->value);
            }
            break;
        }
    }
}

static void on_rescind(struct offerd_sched *s,
                       const Mesos__V1__Scheduler__Event *ev, void *user)
{
    (void)s;
    struct fw *f = user;
    for (int i = 0; i < f->nheld; i++)
        if (strcmp(f->held[i].id, ev->rescind->offer_id->value) == 0)
            f->held[i] = f->held[--f->nheld];
}

static void on_update(struct offerd_sched *s,
                      const Mesos__V1__Scheduler__Event *ev, void *user)
{
    (void)s;
    struct fw *f = user;
    const Mesos__V1__TaskStatus *st = ev->update->status;
    struct task_rec *t = task_find(f, st->task_id->value);
    if (t == NULL)
        t = task_add(f, st->task_id->value,
                     st->agent_id != NULL ? st->agent_id->value : "");
    if (st->has_uuid && st->uuid.len == 16) {
        for (int i = 0; i < t->nupdates && i < 8; i++)
            if (memcmp(t->uuids[i], st->uuid.data, 16) == 0) {
                t->resent++;
                return;
            }
        if (t->nupdates < 8)
            memcpy(t->uuids[t->nupdates], st->uuid.data, 16);
    }
    if (t->nupdates < 8)
        t->states[t->nupdates] = (int)st->state;
    t->nupdates++;
    t->state = (int)st->state;
    t->reason = st->has_reason ? (int)st->reason : -1;
    t->source = st->has_source ? (int)st->source : -1;
    snprintf(t->message, sizeof(t->message), "%s",
             st->message != NULL ? st->message : "");
    if (task_state_is_terminal(t->state) && t->terminal_ms == 0)
        t->terminal_ms = e2e_now_ms();
}

static void on_error(struct offerd_sched *s,
                     const Mesos__V1__Scheduler__Event *ev, void *user)
{
    (void)s;
    (void)ev;
    struct fw *f = user;
    f->errors++;
}

static void on_call_failed(struct offerd_sched *s, int call_type, int status,
                           const char *reason, void *user)
{
    (void)s;
    (void)reason;
    struct fw *f = user;
    if (call_type == MESOS__V1__SCHEDULER__CALL__TYPE__SUBSCRIBE &&
        status >= 400 && status < 500)
        f->refused++;
}

/* Create and start f's client. framework_id NULL: a new framework. */
static void fw_start(struct fw *f, enum offerd_encoding enc,
                     const char *framework_id, double failover_timeout,
                     bool partition_aware)
{
    Mesos__V1__FrameworkInfo fi = MESOS__V1__FRAMEWORK_INFO__INIT;
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fi.user = "e2e";
    fi.name = (char *)(f->name != NULL ? f->name : "e2e-cluster");
    if (framework_id != NULL) {
        fid.value = (char *)framework_id;
        fi.id = &fid;
    }
    if (failover_timeout > 0) {
        fi.has_failover_timeout = 1;
        fi.failover_timeout = failover_timeout;
    }
    Mesos__V1__FrameworkInfo__Capability cap =
        MESOS__V1__FRAMEWORK_INFO__CAPABILITY__INIT;
    Mesos__V1__FrameworkInfo__Capability *caps[1] = {&cap};
    if (partition_aware) {
        cap.has_type = 1;
        cap.type = MESOS__V1__FRAMEWORK_INFO__CAPABILITY__TYPE__PARTITION_AWARE;
        fi.n_capabilities = 1;
        fi.capabilities = caps;
    }
    struct offerd_sched_options o;
    memset(&o, 0, sizeof(o));
    o.master_host = "127.0.0.1";
    o.master_port = master.port;
    o.encoding = enc;
    o.framework_info = &fi;
    o.user = f;
    o.auto_acknowledge = true;
    o.backoff_min_ms = 100;
    o.backoff_max_ms = 500;
    o.max_subscribe_refusals = 1;
    o.callbacks.subscribed = on_subscribed;
    o.callbacks.disconnected = on_disconnected;
    o.callbacks.offers = on_offers;
    o.callbacks.rescind = on_rescind;
    o.callbacks.update = on_update;
    o.callbacks.error = on_error;
    o.callbacks.call_failed = on_call_failed;
    char err[256];
    f->s = offerd_sched_new(base, &o, err, sizeof(err));
    ck_assert_msg(f->s != NULL, "offerd_sched_new: %s", err);
    f->subscribed = false;
    ck_assert_int_eq(offerd_sched_start(f->s), 0);
}

static void fw_free(struct fw *f)
{
    offerd_sched_free(f->s);
    f->s = NULL;
    f->subscribed = false;
}

static bool cond_subscribed(void *arg)
{
    return ((struct fw *)arg)->subscribed;
}

static bool cond_refused(void *arg)
{
    struct fw *f = arg;
    return f->refused > 0 || f->errors > 0;
}

static bool cond_all_terminal(void *arg)
{
    struct fw *f = arg;
    if (f->to_launch > 0)
        return false;
    for (int i = 0; i < f->ntasks; i++)
        if (!task_state_is_terminal(f->tasks[i].state))
            return false;
    return true;
}

static bool cond_all_running(void *arg)
{
    struct fw *f = arg;
    if (f->to_launch > 0)
        return false;
    for (int i = 0; i < f->ntasks; i++)
        if (f->tasks[i].state != MESOS__V1__TASK_STATE__TASK_RUNNING)
            return false;
    return true;
}

static bool cond_has_held(void *arg)
{
    return ((struct fw *)arg)->nheld > 0;
}

static void fw_subscribe(struct fw *f, enum offerd_encoding enc)
{
    fw_start(f, enc, NULL, 0, false);
    ck_assert_msg(e2e_loop_until(base, cond_subscribed, f, 10000),
                  "not subscribed");
}

/* Launch n tasks running command and wait until all are running (or
 * terminal, with until_terminal). */
static void fw_launch(struct fw *f, const char *prefix, const char *command,
                      int n, bool until_terminal, int timeout_ms)
{
    f->prefix = prefix;
    f->command = command;
    f->next_index = 0;
    f->to_launch = n;
    f->mode = OFFERS_LAUNCH;
    /* Offers held meanwhile go back; others may have been declined. */
    for (int i = 0; i < f->nheld; i++)
        decline(f, f->held[i].id, 0);
    f->nheld = 0;
    ck_assert_int_eq(offerd_sched_revive(f->s, NULL, 0), 0);
    bool ok = e2e_loop_until(
        base, until_terminal ? cond_all_terminal : cond_all_running, f,
        timeout_ms);
    if (!ok) {
        for (int i = 0; i < f->ntasks; i++)
            fprintf(stderr, "  task %s: state %d (%s)\n", f->tasks[i].id,
                    f->tasks[i].state, f->tasks[i].message);
    }
    ck_assert_msg(ok, "%s: %d tasks not %s in time (%d left to launch)", prefix,
                  n, until_terminal ? "terminal" : "running", f->to_launch);
    f->mode = OFFERS_HOLD;
}

static enum offerd_encoding encoding_of(int i)
{
    return i == 0 ? OFFERD_ENCODING_JSON : OFFERD_ENCODING_PROTOBUF;
}

/* ---- Tests ------------------------------------------------------------------
 */

static bool cond_agents_hold_no_task(void *arg)
{
    (void)arg;
    for (int i = 0; i < nagents; i++)
        if (agent_tasks(&agents[i], true) != 0)
            return false;
    return true;
}

/* 50 short tasks over two agents all finish; every acknowledgement reaches
 * the agents (which then forget the tasks); both agents ran tasks. */
START_TEST(test_fifty_tasks_finish)
{
    cluster_start(2, NULL);
    static struct fw f = {.name = "fifty"};
    fw_subscribe(&f, encoding_of(_i));
    fw_launch(&f, "t", "echo hello from $MESOS_TASK_ID", 50, true, 60000);

    ck_assert_int_eq(f.ntasks, 50);
    int per_agent[MAX_AGENTS] = {0};
    for (int i = 0; i < f.ntasks; i++) {
        struct task_rec *t = &f.tasks[i];
        ck_assert_msg(t->state == MESOS__V1__TASK_STATE__TASK_FINISHED,
                      "task %s ended in state %d: %s", t->id, t->state,
                      t->message);
        /* STARTING, RUNNING, FINISHED in this order. */
        ck_assert_int_eq(t->nupdates, 3);
        ck_assert_int_eq(t->states[0], MESOS__V1__TASK_STATE__TASK_STARTING);
        ck_assert_int_eq(t->states[1], MESOS__V1__TASK_STATE__TASK_RUNNING);
        int idx = agent_index(t->agent_id);
        ck_assert(idx >= 0 && idx < 2);
        per_agent[idx]++;
    }
    ck_assert_int_gt(per_agent[0], 0);
    ck_assert_int_gt(per_agent[1], 0);
    ck_assert_msg(e2e_loop_until(base, cond_agents_hold_no_task, NULL, 10000),
                  "the agents still hold tasks: acknowledgements lost");
    ck_assert_double_eq(e2e_metric(master.port, "master/tasks_finished"), 50);
    ck_assert_double_eq(e2e_metric(master.port, "master/tasks_running"), 0);
    fw_free(&f);
    cluster_stop();
}
END_TEST

/* A failing command gives TASK_FAILED with its exit status; the task's
 * output is in its sandbox, readable through the agent's /files/read. */
START_TEST(test_failing_command)
{
    cluster_start(1, NULL);
    static struct fw f = {.name = "failing"};
    fw_subscribe(&f, encoding_of(_i));
    fw_launch(&f, "bad", "echo about to fail; exit 3", 1, true, 20000);
    struct task_rec *t = &f.tasks[0];
    ck_assert_int_eq(t->state, MESOS__V1__TASK_STATE__TASK_FAILED);
    ck_assert_msg(strstr(t->message, "status 3") != NULL, "message: %s",
                  t->message);
    ck_assert_int_eq(t->source,
                     MESOS__V1__TASK_STATUS__SOURCE__SOURCE_EXECUTOR);
    ck_assert_double_eq(e2e_metric(master.port, "master/tasks_failed"), 1);
    fw_free(&f);
    cluster_stop();
}
END_TEST

/* The first task ended, or its agent was lost (UNREACHABLE is not
 * terminal: the task may come back). */
static bool cond_first_task_terminal(void *arg)
{
    struct fw *f = arg;
    return f->ntasks > 0 &&
           (task_state_is_terminal(f->tasks[0].state) ||
            f->tasks[0].state == MESOS__V1__TASK_STATE__TASK_UNREACHABLE);
}

static bool cond_trapped(void *arg)
{
    return e2e_file_exists(arg, "trapped");
}

/* KILL of a long task that stops on SIGTERM gives TASK_KILLED at once,
 * well inside its grace period; one that ignores SIGTERM is killed with
 * SIGKILL when its grace period ends, not before. */
START_TEST(test_kill_honours_grace_period)
{
    cluster_start(1, NULL);
    static struct fw f = {.name = "killer"};
    fw_subscribe(&f, encoding_of(_i));

    f.grace_secs = 20;
    fw_launch(&f, "polite", "sleep 60", 1, false, 20000);
    int64_t t0 = e2e_now_ms();
    ck_assert_int_eq(offerd_sched_kill(f.s, "polite-0", NULL, NULL), 0);
    ck_assert(e2e_loop_until(base, cond_first_task_terminal, &f, 15000));
    ck_assert_int_eq(f.tasks[0].state, MESOS__V1__TASK_STATE__TASK_KILLED);
    ck_assert_int_lt(f.tasks[0].terminal_ms - t0, 10000);

    /* A task that ignores SIGTERM, with a 1 s grace period. */
    f.ntasks = 0;
    f.grace_secs = 1;
    fw_launch(&f, "stubborn", "trap '' TERM; touch trapped; sleep 60", 1, false,
              20000);
    /* The shell has set its trap (and said so) before the kill. */
    char sandbox[4096];
    ck_assert(e2e_agent_sandbox(agents[0].port, "stubborn-0", sandbox,
                                sizeof(sandbox)));
    ck_assert(e2e_loop_until(base, cond_trapped, sandbox, 10000));
    t0 = e2e_now_ms();
    ck_assert_int_eq(offerd_sched_kill(f.s, "stubborn-0", NULL, NULL), 0);
    ck_assert(e2e_loop_until(base, cond_first_task_terminal, &f, 15000));
    ck_assert_int_eq(f.tasks[0].state, MESOS__V1__TASK_STATE__TASK_KILLED);
    int64_t took = f.tasks[0].terminal_ms - t0;
    ck_assert_msg(took >= 900 && took < 10000, "killed after %lld ms",
                  (long long)took);
    ck_assert(e2e_loop_until(base, cond_agents_hold_no_task, NULL, 10000));
    fw_free(&f);
    cluster_stop();
}
END_TEST

/* A counter of the framework has reached a value. */
struct count_wait {
    const int *counter;
    int want;
};

static bool cond_count_reached(void *arg)
{
    const struct count_wait *w = arg;
    return *w->counter >= w->want;
}

/* DECLINE with refuse_seconds keeps that agent's resources away from the
 * framework while other agents' offers keep coming; REVIVE lifts it. */
START_TEST(test_decline_filter_honoured)
{
    cluster_start(2, NULL);
    static struct fw f = {.name = "decliner"};
    f.mode = OFFERS_HOLD;
    fw_subscribe(&f, encoding_of(_i));
    /* Both agents' offers arrive (held). */
    struct count_wait held2 = {&f.nheld, 2};
    ck_assert(e2e_loop_until(base, cond_count_reached, &held2, 10000));
    ck_assert_int_eq(f.nheld, 2);
    int a0 = agent_index(f.held[0].agent_id) == 0 ? 0 : 1;
    int a1 = 1 - a0;
    /* Agent 0: refuse for 60 s. Agent 1: refuse for 0 s (offered again). */
    struct held_offer h0 = f.held[a0], h1 = f.held[a1];
    f.nheld = 0;
    memset(f.offers_from, 0, sizeof(f.offers_from));
    decline(&f, h0.id, 60);
    decline(&f, h1.id, 0);
    /* Keep declining agent 1 with refuse 0.2 s: it comes back again and
     * again, agent 0 meanwhile never. */
    f.mode = OFFERS_DECLINE;
    f.refuse_seconds = 0.2;
    struct count_wait back3 = {&f.offers_from[1], 3};
    ck_assert_msg(e2e_loop_until(base, cond_count_reached, &back3, 10000),
                  "agent 1 was offered %d times only", f.offers_from[1]);
    ck_assert_int_eq(f.offers_from[0], 0);
    /* REVIVE clears the filter. */
    f.mode = OFFERS_HOLD;
    memset(f.offers_from, 0, sizeof(f.offers_from));
    ck_assert_int_eq(offerd_sched_revive(f.s, NULL, 0), 0);
    struct count_wait back0 = {&f.offers_from[0], 1};
    ck_assert(e2e_loop_until(base, cond_count_reached, &back0, 5000));
    ck_assert_int_eq(f.offers_from[0], 1);
    fw_free(&f);
    cluster_stop();
}
END_TEST

/* An agent killed with SIGKILL stops answering pings; the master removes it
 * and reports its tasks TASK_UNREACHABLE to a partition-aware framework
 * and TASK_LOST to the other. The ping interval leaves room for a PONG
 * (a new connection, under TLS with its handshake) on a loaded machine:
 * at 200 ms a live agent missed two in a row under the suite's load. */
START_TEST(test_agent_killed)
{
    const char *mflags[] = {"--agent_ping_timeout=500ms",
                            "--max_agent_ping_timeouts=2", NULL};
    cluster_start(1, mflags);
    static struct fw aware = {.name = "aware"}, plain = {.name = "plain"};
    fw_start(&aware, encoding_of(_i), NULL, 0, true);
    ck_assert(e2e_loop_until(base, cond_subscribed, &aware, 10000));
    fw_start(&plain, encoding_of(_i), NULL, 0, false);
    ck_assert(e2e_loop_until(base, cond_subscribed, &plain, 10000));
    fw_launch(&aware, "pa", "sleep 60", 1, false, 20000);
    fw_launch(&plain, "np", "sleep 60", 1, false, 20000);

    ck_assert_int_eq(e2e_proc_stop(&agents[0], SIGKILL, 5000), -1);
    ck_assert(e2e_loop_until(base, cond_first_task_terminal, &aware, 10000));
    ck_assert(e2e_loop_until(base, cond_first_task_terminal, &plain, 10000));
    ck_assert_int_eq(aware.tasks[0].state,
                     MESOS__V1__TASK_STATE__TASK_UNREACHABLE);
    ck_assert_int_eq(plain.tasks[0].state, MESOS__V1__TASK_STATE__TASK_LOST);
    ck_assert_int_eq(plain.tasks[0].source,
                     MESOS__V1__TASK_STATUS__SOURCE__SOURCE_MASTER);
    ck_assert_double_eq(e2e_metric(master.port, "master/slaves_active"), 0);
    fw_free(&aware);
    fw_free(&plain);
    cluster_stop();
}
END_TEST

static bool cond_agent_idle(void *arg)
{
    return agent_task_count(arg) == 0;
}

static bool cond_framework_disconnected(void *arg)
{
    (void)arg;
    return e2e_metric(master.port, "master/frameworks_disconnected") == 1;
}

/* A framework that disconnects and re-subscribes within its failover
 * timeout keeps its task (still running, reconciled as TASK_RUNNING). */
START_TEST(test_failover_keeps_tasks)
{
    cluster_start(1, NULL);
    static struct fw f = {.name = "failover"};
    fw_start(&f, encoding_of(_i), NULL, 60, false);
    ck_assert(e2e_loop_until(base, cond_subscribed, &f, 10000));
    fw_launch(&f, "kept", "sleep 60", 1, false, 20000);
    char id[128];
    snprintf(id, sizeof(id), "%s", f.id);

    fw_free(&f); /* the connection drops; no TEARDOWN */
    ck_assert_msg(
        e2e_loop_until(base, cond_framework_disconnected, NULL, 10000),
        "the master did not see the framework go");
    ck_assert_int_eq(agent_task_count(&agents[0]), 1);

    f.tasks[0].state = -1;
    fw_start(&f, encoding_of(_i), id, 60, false);
    ck_assert(e2e_loop_until(base, cond_subscribed, &f, 10000));
    ck_assert_str_eq(f.id, id);
    ck_assert_int_eq(offerd_sched_reconcile(f.s, NULL, 0), 0);
    ck_assert(e2e_loop_until(base, cond_all_running, &f, 10000));
    ck_assert_int_eq(agent_task_count(&agents[0]), 1);

    /* TEARDOWN kills it. */
    ck_assert_int_eq(offerd_sched_teardown(f.s), 0);
    ck_assert_msg(e2e_loop_until(base, cond_agent_idle, &agents[0], 10000),
                  "teardown did not kill the task");
    fw_free(&f);
    cluster_stop();
}
END_TEST

/* One that stays away past its failover timeout is removed: its task is
 * killed and it may not subscribe again. */
START_TEST(test_failover_timeout_loses_tasks)
{
    cluster_start(1, NULL);
    static struct fw f = {.name = "gone"};
    fw_start(&f, encoding_of(_i), NULL, 1, false);
    ck_assert(e2e_loop_until(base, cond_subscribed, &f, 10000));
    fw_launch(&f, "lost", "sleep 60", 1, false, 20000);
    char id[128];
    snprintf(id, sizeof(id), "%s", f.id);
    fw_free(&f);

    ck_assert_msg(e2e_loop_until(base, cond_agent_idle, &agents[0], 15000),
                  "the task outlived its framework's failover timeout");
    ck_assert_double_eq(e2e_metric(master.port, "master/frameworks_active"), 0);
    ck_assert_double_eq(e2e_metric(master.port, "master/tasks_killed"), 1);

    fw_start(&f, encoding_of(_i), id, 1, false);
    ck_assert(e2e_loop_until(base, cond_refused, &f, 10000));
    ck_assert(!f.subscribed);
    fw_free(&f);
    cluster_stop();
}
END_TEST

static int post_raw(const char *body, const char *content_type,
                    const char *stream_id)
{
    char ct[128], accept[128], sid[192];
    snprintf(ct, sizeof(ct), "Content-Type: %s", content_type);
    snprintf(accept, sizeof(accept), "Accept: %s", content_type);
    snprintf(sid, sizeof(sid), "Mesos-Stream-Id: %s", stream_id);
    const char *headers[4] = {ct, accept, stream_id ? sid : NULL, NULL};
    struct e2e_response r;
    ck_assert_int_eq(e2e_http(master.port, "POST", "/api/v1/scheduler", headers,
                              body, strlen(body), 5000, &r),
                     0);
    int status = r.status;
    ck_assert_msg(status < 400 || strlen(r.body) > 0, "a %d without a reason",
                  status);
    e2e_response_free(&r);
    return status;
}

/* Bad calls: garbage, an unknown call type, a missing Mesos-Stream-Id get
 * 400; another framework's offer and a duplicate task id give the right
 * task updates; the master keeps serving and the framework keeps working. */
START_TEST(test_bad_calls_leave_master_serving)
{
    cluster_start(1, NULL);
    static struct fw a = {.name = "owner"}, b = {.name = "thief"};
    a.mode = OFFERS_HOLD;
    b.mode = OFFERS_DECLINE; /* b wants none of the offers */
    b.refuse_seconds = 3600;
    fw_start(&a, encoding_of(_i), NULL, 0, false);
    ck_assert(e2e_loop_until(base, cond_subscribed, &a, 10000));
    ck_assert(e2e_loop_until(base, cond_has_held, &a, 10000));
    fw_start(&b, encoding_of(_i), NULL, 0, true);
    ck_assert(e2e_loop_until(base, cond_subscribed, &b, 10000));

    ck_assert_int_eq(post_raw("{not json", "application/json", NULL), 400);
    ck_assert_int_eq(
        post_raw("\x08\xff\xff\xff", "application/x-protobuf", NULL), 400);
    char body[512];
    snprintf(body, sizeof(body),
             "{\"type\":\"NO_SUCH_CALL\",\"framework_id\":{\"value\":\"%s\"}}",
             a.id);
    ck_assert_int_eq(
        post_raw(body, "application/json", offerd_sched_stream_id(a.s)), 400);
    snprintf(body, sizeof(body),
             "{\"type\":\"REVIVE\",\"framework_id\":{\"value\":\"%s\"}}", a.id);
    ck_assert_int_eq(post_raw(body, "application/json", NULL), 400);

    /* b launches on a's offer: TASK_DROPPED (b is partition-aware),
     * reason INVALID_OFFERS; a's offer stays a's. */
    res_list res = RES_LIST_INIT;
    char err[128];
    ck_assert_int_eq(res_list_parse(TASK_RES, NULL, &res, err, sizeof(err)), 0);
    b.command = "true";
    launch_one(&b, a.held[0].id, a.held[0].agent_id, "stolen", &res);
    ck_assert(e2e_loop_until(base, cond_first_task_terminal, &b, 10000));
    ck_assert_int_eq(b.tasks[0].state, MESOS__V1__TASK_STATE__TASK_DROPPED);
    ck_assert_int_eq(b.tasks[0].reason,
                     MESOS__V1__TASK_STATUS__REASON__REASON_INVALID_OFFERS);

    /* a launches "dup" on its offer, then "dup" again: TASK_ERROR for the
     * second, the first keeps running. */
    a.command = "sleep 60";
    launch_one(&a, a.held[0].id, a.held[0].agent_id, "dup", &res);
    a.nheld = 0;
    ck_assert(e2e_loop_until(base, cond_all_running, &a, 10000));
    ck_assert_int_eq(offerd_sched_revive(a.s, NULL, 0), 0);
    ck_assert(e2e_loop_until(base, cond_has_held, &a, 10000));
    int before = a.tasks[0].nupdates;
    launch_one(&a, a.held[0].id, a.held[0].agent_id, "dup", &res);
    a.nheld = 0;
    struct count_wait next = {&a.tasks[0].nupdates, before + 1};
    ck_assert(e2e_loop_until(base, cond_count_reached, &next, 10000));
    ck_assert_int_eq(a.tasks[0].state, MESOS__V1__TASK_STATE__TASK_ERROR);
    ck_assert_int_eq(agent_task_count(&agents[0]), 1);
    res_list_clear(&res);

    /* Still serving, still subscribed. */
    struct e2e_response r;
    ck_assert_int_eq(
        e2e_http(master.port, "GET", "/health", NULL, NULL, 0, 5000, &r), 0);
    ck_assert_int_eq(r.status, 200);
    e2e_response_free(&r);
    ck_assert(a.subscribed && b.subscribed);
    ck_assert_int_eq(a.errors + b.errors, 0);
    fw_free(&a);
    fw_free(&b);
    cluster_stop();
}
END_TEST

/* LAUNCH_GROUP of n tasks with commands cmds on the held offer h, with
 * task ids <prefix>-<i>. */
static void launch_group(struct fw *f, const struct held_offer *h,
                         const char *prefix, const char *const *cmds, int n)
{
    res_list want = RES_LIST_INIT;
    char err[128];
    ck_assert_int_eq(res_list_parse(TASK_RES, NULL, &want, err, sizeof(err)),
                     0);
    size_t nres;
    Mesos__V1__Resource **pres = res_list_to_pb(&want, false, &nres);
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = (char *)h->agent_id;
    Mesos__V1__TaskID tids[4];
    Mesos__V1__CommandInfo cmd[4];
    Mesos__V1__TaskInfo infos[4], *pinfos[4];
    char ids[4][64];
    ck_assert_int_le(n, 4);
    for (int i = 0; i < n; i++) {
        snprintf(ids[i], sizeof(ids[i]), "%s-%d", prefix, i);
        mesos__v1__task_id__init(&tids[i]);
        tids[i].value = ids[i];
        mesos__v1__command_info__init(&cmd[i]);
        cmd[i].has_shell = 1;
        cmd[i].shell = 1;
        cmd[i].value = (char *)cmds[i];
        mesos__v1__task_info__init(&infos[i]);
        infos[i].name = ids[i];
        infos[i].task_id = &tids[i];
        infos[i].agent_id = &aid;
        infos[i].n_resources = nres;
        infos[i].resources = pres;
        infos[i].command = &cmd[i];
        pinfos[i] = &infos[i];
        task_add(f, ids[i], h->agent_id);
    }
    Mesos__V1__ExecutorID eid = MESOS__V1__EXECUTOR_ID__INIT;
    eid.value = (char *)prefix;
    Mesos__V1__ExecutorInfo ex = MESOS__V1__EXECUTOR_INFO__INIT;
    ex.has_type = 1;
    ex.type = MESOS__V1__EXECUTOR_INFO__TYPE__DEFAULT;
    ex.executor_id = &eid;
    Mesos__V1__TaskGroupInfo g = MESOS__V1__TASK_GROUP_INFO__INIT;
    g.n_tasks = (size_t)n;
    g.tasks = pinfos;
    Mesos__V1__Offer__Operation__LaunchGroup lg =
        MESOS__V1__OFFER__OPERATION__LAUNCH_GROUP__INIT;
    lg.executor = &ex;
    lg.task_group = &g;
    Mesos__V1__Offer__Operation op = MESOS__V1__OFFER__OPERATION__INIT;
    op.has_type = 1;
    op.type = MESOS__V1__OFFER__OPERATION__TYPE__LAUNCH_GROUP;
    op.launch_group = &lg;
    Mesos__V1__Offer__Operation *ops[1] = {&op};
    Mesos__V1__Filters filters = MESOS__V1__FILTERS__INIT;
    filters.has_refuse_seconds = 1;
    filters.refuse_seconds = 0;
    const char *oids[1] = {h->id};
    ck_assert_int_eq(offerd_sched_accept(f->s, oids, 1, ops, 1, &filters), 0);
    res_pb_array_free(pres, nres);
    res_list_clear(&want);
}

static bool cond_all_ended(void *arg)
{
    struct fw *f = arg;
    for (int i = 0; i < f->ntasks; i++)
        if (!task_state_is_terminal(f->tasks[i].state))
            return false;
    return true;
}

/* The first offer held, or the next one. */
static void take_offer(struct fw *f, struct held_offer *out)
{
    if (f->nheld == 0)
        ck_assert_int_eq(offerd_sched_revive(f->s, NULL, 0), 0);
    ck_assert(e2e_loop_until(base, cond_has_held, f, 10000));
    *out = f->held[0];
    for (int i = 1; i < f->nheld; i++)
        decline(f, f->held[i].id, 0);
    f->nheld = 0;
}

/* A task group runs every task's command; when all succeed all finish; when
 * one fails the others are killed, as Mesos's default executor does. */
START_TEST(test_task_group)
{
    cluster_start(1, NULL);
    static struct fw f = {.name = "grouper"};
    f.mode = OFFERS_HOLD;
    fw_subscribe(&f, encoding_of(_i));
    struct held_offer h;

    take_offer(&f, &h);
    const char *good[] = {"echo one", "echo two", "true"};
    launch_group(&f, &h, "good", good, 3);
    ck_assert(e2e_loop_until(base, cond_all_ended, &f, 20000));
    for (int i = 0; i < f.ntasks; i++)
        ck_assert_msg(f.tasks[i].state == MESOS__V1__TASK_STATE__TASK_FINISHED,
                      "%s: state %d (%s)", f.tasks[i].id, f.tasks[i].state,
                      f.tasks[i].message);

    f.ntasks = 0;
    take_offer(&f, &h);
    const char *bad[] = {"sleep 60", "sleep 0.3; exit 4"};
    launch_group(&f, &h, "bad", bad, 2);
    ck_assert(e2e_loop_until(base, cond_all_ended, &f, 20000));
    ck_assert_int_eq(task_find(&f, "bad-1")->state,
                     MESOS__V1__TASK_STATE__TASK_FAILED);
    ck_assert_int_eq(task_find(&f, "bad-0")->state,
                     MESOS__V1__TASK_STATE__TASK_KILLED);
    ck_assert(e2e_loop_until(base, cond_agents_hold_no_task, NULL, 10000));
    fw_free(&f);
    cluster_stop();
}
END_TEST

static Suite *cluster_suite(void)
{
    Suite *s = suite_create("e2e_cluster");
    struct {
        const char *name;
        const TTest *test;
    } tests[] = {
        {"fifty_tasks", test_fifty_tasks_finish},
        {"failing", test_failing_command},
        {"kill", test_kill_honours_grace_period},
        {"decline", test_decline_filter_honoured},
        {"agent_killed", test_agent_killed},
        {"failover_keeps", test_failover_keeps_tasks},
        {"failover_timeout", test_failover_timeout_loses_tasks},
        {"bad_calls", test_bad_calls_leave_master_serving},
        {"task_group", test_task_group},
    };
    for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
        TCase *tc = tcase_create(tests[i].name);
        tcase_set_timeout(tc, 120);
        /* _i: 0 JSON, 1 protobuf. */
        tcase_add_loop_test(tc, tests[i].test, 0, 2);
        suite_add_tcase(s, tc);
    }
    return s;
}

E2E_CHECK_MAIN(cluster_suite)
