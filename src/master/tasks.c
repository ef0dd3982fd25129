/*
 * Tasks as the master keeps them (Mesos's lifecycle): a task is created in
 * TASK_STAGING when a LAUNCH is accepted, follows the agent's status
 * updates, gives its resources back to the allocator as soon as it is
 * terminal, and is forgotten once terminal and its terminal update
 * acknowledged by the framework: then only a small record of it stays among
 * its framework's completed tasks (a bounded ring, for /state and /tasks).
 * Also kills and reconciliation.
 */
#include "master/tasks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/json_pb.h"
#include "common/log.h"
#include "common/task_state.h"
#include "common/mem.h"
#include "common/resources_pb.h"
#include "master/agents.h"
#include "master/frameworks.h"
#include "master/live_counters.h"
#include "master/maintenance.h"
#include "master/master.h"
#include "master/operator_events.h"
#include "master/send.h"

void master_task_count(struct master *m, Mesos__V1__TaskState state)
{
    if ((unsigned)state < sizeof(m->metrics.tasks_by_state) /
                              sizeof(m->metrics.tasks_by_state[0]))
        m->metrics.tasks_by_state[state]++;
}

/* Append state at when to a history of at most MASTER_TASK_HISTORY
 * entries (the oldest goes); a repeat of the latest state is skipped.
 * Returns whether it was a new state. */
static bool hist_add(struct task_state_at *hist, uint32_t *nhist,
                     Mesos__V1__TaskState state, double when)
{
    if (*nhist > 0 && hist[*nhist - 1].state == state)
        return false; /* a retried update */
    if (*nhist == MASTER_TASK_HISTORY) {
        memmove(hist, hist + 1, (MASTER_TASK_HISTORY - 1) * sizeof(hist[0]));
        (*nhist)--;
    }
    hist[*nhist].state = state;
    hist[*nhist].timestamp = when;
    (*nhist)++;
    return true;
}

static void record_state(struct task *t, Mesos__V1__TaskState state,
                         double when)
{
    if (t->nhist == t->caphist && t->caphist < MASTER_TASK_HISTORY &&
        (t->nhist == 0 || t->hist[t->nhist - 1].state != state)) {
        t->caphist = t->caphist ? 2 * t->caphist : 2;
        t->hist = xreallocarray(t->hist, t->caphist, sizeof(*t->hist));
    }
    /* TASK_UPDATED for every new state, as Mesos. */
    if (hist_add(t->hist, &t->nhist, state, when) && t->status != NULL)
        master_opev_task_updated(t->fw->m, t, t->status);
}

void master_task_free(struct task *t)
{
    if (t == NULL)
        return;
    master_live_task_forget(t);
    if (t->info != NULL)
        protobuf_c_message_free_unpacked(&t->info->base, NULL);
    if (t->status != NULL)
        protobuf_c_message_free_unpacked(&t->status->base, NULL);
    if (t->resources_packed)
        res_list_free_packed(&t->resources);
    else
        res_list_clear(&t->resources);
    free(t->hist);
    free(t->role);
    free(t->key);
    free(t);
}

void master_task_recover(struct master *m, struct task *t)
{
    if (t->recovered)
        return;
    t->recovered = true;
    if (t->agent == NULL || t->agent->alloc == NULL || t->fw->alloc == NULL)
        return;
    if (alloc_recover(m->alloc, t->agent->alloc, t->fw->alloc, &t->resources, 0,
                      clock_monotonic_ns()) != 0)
        log_error("allocator did not hold task %s's resources",
                  t->info->task_id->value);
    master_allocate_soon(m);
}

/* ---- Completed tasks ---------------------------------------------------- */

static void record_clear(struct task_record *r)
{
    free(r->id);
    free(r->name);
    free(r->agent_id);
    free(r->role);
    res_list_clear(&r->resources);
    free(r->user);
    ProtobufCMessage *msgs[] = {
        r->labels ? &r->labels->base : NULL,
        r->discovery ? &r->discovery->base : NULL,
        r->container ? &r->container->base : NULL,
        r->health_check ? &r->health_check->base : NULL,
        r->status ? &r->status->base : NULL,
    };
    for (size_t i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++)
        if (msgs[i] != NULL)
            protobuf_c_message_free_unpacked(msgs[i], NULL);
    memset(r, 0, sizeof(*r));
}

/* Keep what /state and /tasks show of t, which ends now, among its
 * framework's completed tasks; the oldest record goes when the ring is at
 * --max_completed_tasks_per_framework. */
static void record_completed(struct master *m, struct task *t)
{
    struct framework *fw = t->fw;
    uint32_t max = (uint32_t)m->flags->max_completed_tasks_per_framework;
    if (max == 0)
        return;
    struct task_record *r;
    if (fw->ncompleted_tasks == max) {
        /* Full: overwrite the oldest, the next one becomes the oldest. */
        r = &fw->completed_tasks[fw->headcompleted_tasks];
        record_clear(r);
        fw->headcompleted_tasks = (fw->headcompleted_tasks + 1) % max;
    } else {
        /* Not full yet, so head is 0 and the ring is a plain array. */
        if (fw->ncompleted_tasks == fw->capcompleted_tasks) {
            uint32_t cap =
                fw->capcompleted_tasks ? fw->capcompleted_tasks * 2 : 16;
            if (cap > max)
                cap = max;
            fw->completed_tasks = xreallocarray(fw->completed_tasks, cap,
                                                sizeof(*fw->completed_tasks));
            fw->capcompleted_tasks = cap;
        }
        r = &fw->completed_tasks[fw->ncompleted_tasks++];
    }
    memset(r, 0, sizeof(*r));
    r->id = xstrdup(t->info->task_id->value);
    r->name = xstrdup(t->info->name != NULL ? t->info->name : "");
    r->agent_id = xstrdup(t->agent != NULL ? t->agent->id : "");
    r->role = xstrdup(t->role != NULL ? t->role : "*");
    res_list_copy(&r->resources, &t->resources);
    r->state = t->state;
    if (t->nhist > 0)
        memcpy(r->hist, t->hist, t->nhist * sizeof(r->hist[0]));
    r->nhist = t->nhist;
    const Mesos__V1__TaskInfo *ti = t->info;
    if (ti->command != NULL && ti->command->user != NULL)
        r->user = xstrdup(ti->command->user);
    if (ti->labels != NULL)
        r->labels = jpb_copy(&mesos__v1__labels__descriptor, &ti->labels->base);
    if (ti->discovery != NULL)
        r->discovery = jpb_copy(&mesos__v1__discovery_info__descriptor,
                                &ti->discovery->base);
    if (ti->container != NULL)
        r->container = jpb_copy(&mesos__v1__container_info__descriptor,
                                &ti->container->base);
    if (ti->health_check != NULL)
        r->health_check = jpb_copy(&mesos__v1__health_check__descriptor,
                                   &ti->health_check->base);
    if (t->status != NULL)
        r->status =
            jpb_copy(&mesos__v1__task_status__descriptor, &t->status->base);
    if (!task_state_is_terminal(r->state)) {
        /* Removed with its framework while live: Mesos shows it killed. */
        r->state = MESOS__V1__TASK_STATE__TASK_KILLED;
        hist_add(r->hist, &r->nhist, r->state, clock_wall_secs());
    }
}

const struct task_record *master_task_completed_at(const struct framework *fw,
                                                   uint32_t i)
{
    if (i >= fw->ncompleted_tasks)
        return NULL;
    /* head is 0 until the ring is full (then cap is its size). */
    return &fw->completed_tasks[(fw->headcompleted_tasks + i) %
                                fw->capcompleted_tasks];
}

void master_task_records_free(struct framework *fw)
{
    for (uint32_t i = 0; i < fw->ncompleted_tasks; i++)
        record_clear(&fw->completed_tasks[i]);
    free(fw->completed_tasks);
    fw->completed_tasks = NULL;
    fw->ncompleted_tasks = fw->capcompleted_tasks = 0;
    fw->headcompleted_tasks = 0;
}

void master_task_remove(struct master *m, struct task *t)
{
    /* A task of an unreachable agent is not completed: the framework's
     * unreachable_tasks keep it until the agent is back. */
    if (t->state != MESOS__V1__TASK_STATE__TASK_UNREACHABLE)
        record_completed(m, t);
    hmap_del(t->fw->tasks, t->info->task_id->value);
    if (t->agent != NULL) {
        hmap_del(t->agent->tasks, t->key);
        if (t->agent->drain != NULL)
            master_agent_drain_check_soon(m, t->agent);
    }
    master_task_free(t);
}

/* A new task of fw on ag in state, holding info (taken) and resources
 * (copied, with allocation role), indexed in fw's and ag's maps. tasks.c
 * owns struct task: master_task_remove forgets and frees it. */
static struct task *task_new(struct framework *fw, struct agent *ag,
                             Mesos__V1__TaskInfo *info,
                             const res_list *resources, const char *role,
                             Mesos__V1__TaskState state)
{
    struct task *t = xcalloc(1, sizeof(*t));
    t->fw = fw;
    t->agent = ag;
    t->agent_id = ag->id;
    t->id = info->task_id->value;
    t->info = info;
    t->key = xasprintf("%s/%s", fw->id, info->task_id->value);
    /* Packed (one block instead of an array and two strings per entry)
     * when every entry is allocated to role, as a launch's are. */
    bool same_role = role != NULL;
    for (uint32_t i = 0; i < resources->n && same_role; i++)
        same_role = resources->v[i].alloc_role != NULL &&
                    strcmp(resources->v[i].alloc_role, role) == 0;
    t->resources_packed = same_role;
    if (same_role)
        res_list_copy_packed(&t->resources, resources, role);
    else
        res_list_copy(&t->resources, resources);
    t->role = xstrdup(role);
    t->state = state;
    t->launched = clock_wall_secs();
    hmap_put(fw->tasks, info->task_id->value, t);
    hmap_put(ag->tasks, t->key, t);
    master_live_task_add(fw->m, t);
    return t;
}

/* Create the task in TASK_STAGING, without telling the agent. */
static struct task *task_add(struct master *m, struct framework *fw,
                             struct agent *ag, const Mesos__V1__TaskInfo *info,
                             const res_list *resources, const char *role)
{
    Mesos__V1__TaskInfo *copy =
        jpb_copy(&mesos__v1__task_info__descriptor, &info->base);
    /* The task's resources as the master accounted them: with their
     * allocation role, in the post-refinement format. */
    res_pb_array_free(copy->resources, copy->n_resources);
    copy->resources = res_list_to_pb(resources, true, &copy->n_resources);
    struct task *t = task_new(fw, ag, copy, resources, role,
                              MESOS__V1__TASK_STATE__TASK_STAGING);
    record_state(t, t->state, clock_wall_secs());
    master_task_count(m, MESOS__V1__TASK_STATE__TASK_STAGING);
    master_opev_task_added(m, t);
    return t;
}

struct task *master_task_adopt(struct master *m, struct framework *fw,
                               struct agent *ag, const Mesos__V1__Task *rt,
                               const res_list *resources, const char *role)
{
    Mesos__V1__TaskInfo *ti = xmalloc(sizeof(*ti));
    mesos__v1__task_info__init(ti);
    ti->name = xstrdup(rt->name);
    ti->task_id = jpb_copy(&mesos__v1__task_id__descriptor, &rt->task_id->base);
    ti->agent_id = xmalloc(sizeof(*ti->agent_id));
    mesos__v1__agent_id__init(ti->agent_id);
    ti->agent_id->value = xstrdup(ag->id);
    ti->resources = res_list_to_pb(resources, true, &ti->n_resources);
    struct task *t = task_new(fw, ag, ti, resources, role, rt->state);
    if (rt->has_status_update_state) {
        t->status_update_state = rt->status_update_state;
        t->has_status_update_state = true;
    }
    /* A terminal task's resources are free already. */
    t->recovered = task_state_is_terminal(rt->state);
    if (rt->n_statuses > 0)
        t->status = jpb_copy(&mesos__v1__task_status__descriptor,
                             &rt->statuses[rt->n_statuses - 1]->base);
    free(hmap_del(fw->unreachable_tasks, rt->task_id->value));
    m->metrics.tasks_adopted++;
    master_opev_task_added(m, t);
    return t;
}

/* A CommandInfo holding only c's user (moved), or NULL when c is NULL or
 * has no user; c goes. */
static Mesos__V1__CommandInfo *command_user_only(Mesos__V1__CommandInfo *c)
{
    if (c == NULL)
        return NULL;
    if (c->user == NULL) {
        /* Nothing to keep: readers take a NULL command as no user. */
        protobuf_c_message_free_unpacked(&c->base, NULL);
        return NULL;
    }
    Mesos__V1__CommandInfo *k = xmalloc(sizeof(*k));
    mesos__v1__command_info__init(k);
    k->user = c->user;
    c->user = NULL;
    protobuf_c_message_free_unpacked(&c->base, NULL);
    return k;
}

/* What the master keeps of a task's TaskInfo once its RUN_TASK is out:
 * what /state, /tasks, GET_TASKS, the operator events, the ACLs and kills
 * read of it (name, task id, the command's and the executor's user, the
 * executor's id, container, health check, kill policy, labels, discovery).
 * The resources are t->resources; the command line, the data, the check,
 * the limits, the completion time and the rest of the executor (tracked
 * whole in struct executor) only went to the agent. About 750 bytes of a
 * 0.1 cpu / 16 MB command task's 2.9 KB (docs/performance.md). */
static void task_info_compact(Mesos__V1__TaskInfo *ti)
{
    res_pb_array_free(ti->resources, ti->n_resources);
    ti->resources = NULL;
    ti->n_resources = 0;
    /* The agent is t->agent. */
    if (ti->agent_id != NULL)
        protobuf_c_message_free_unpacked(&ti->agent_id->base, NULL);
    ti->agent_id = NULL;
    ti->command = command_user_only(ti->command);
    if (ti->executor != NULL) {
        Mesos__V1__ExecutorInfo *ex = ti->executor;
        Mesos__V1__ExecutorInfo *k = xmalloc(sizeof(*k));
        mesos__v1__executor_info__init(k);
        k->executor_id = ex->executor_id;
        ex->executor_id = NULL;
        k->command = command_user_only(ex->command);
        ex->command = NULL;
        protobuf_c_message_free_unpacked(&ex->base, NULL);
        ti->executor = k;
    }
    if (ti->has_data) {
        free(ti->data.data);
        ti->data.data = NULL;
        ti->data.len = 0;
        ti->has_data = false;
    }
    ProtobufCMessage *gone[] = {
        ti->check ? &ti->check->base : NULL,
        ti->max_completion_time ? &ti->max_completion_time->base : NULL,
    };
    for (size_t i = 0; i < sizeof(gone) / sizeof(gone[0]); i++)
        if (gone[i] != NULL)
            protobuf_c_message_free_unpacked(gone[i], NULL);
    ti->check = NULL;
    ti->max_completion_time = NULL;
    for (size_t i = 0; i < ti->n_limits; i++)
        protobuf_c_message_free_unpacked(&ti->limits[i]->base, NULL);
    free(ti->limits);
    ti->limits = NULL;
    ti->n_limits = 0;
}

struct task *master_task_launch(struct master *m, struct framework *fw,
                                struct agent *ag,
                                const Mesos__V1__TaskInfo *info,
                                const res_list *resources, const char *role)
{
    struct task *t = task_add(m, fw, ag, info, resources, role);
    Offerd__Agent__Event__RunTask rt = OFFERD__AGENT__EVENT__RUN_TASK__INIT;
    rt.framework_info = fw->info;
    rt.task = t->info;
    Offerd__Agent__Event ev = OFFERD__AGENT__EVENT__INIT;
    ev.type = OFFERD__AGENT__EVENT__TYPE__RUN_TASK;
    ev.run_task = &rt;
    master_send_to_agent(ag, &ev);
    task_info_compact(t->info);
    return t;
}

void master_task_launch_group(struct master *m, struct framework *fw,
                              struct agent *ag,
                              const Mesos__V1__ExecutorInfo *executor,
                              Mesos__V1__TaskInfo *const *infos, size_t n,
                              const res_list *resources, const char *role)
{
    Mesos__V1__TaskInfo **tis = xcalloc(n ? n : 1, sizeof(*tis));
    for (size_t i = 0; i < n; i++)
        tis[i] = task_add(m, fw, ag, infos[i], &resources[i], role)->info;
    Mesos__V1__ExecutorInfo *ex =
        jpb_copy(&mesos__v1__executor_info__descriptor, &executor->base);
    if (ex->framework_id == NULL) {
        ex->framework_id = xcalloc(1, sizeof(*ex->framework_id));
        mesos__v1__framework_id__init(ex->framework_id);
        ex->framework_id->value = xstrdup(fw->id);
    }
    Mesos__V1__TaskGroupInfo g = MESOS__V1__TASK_GROUP_INFO__INIT;
    g.n_tasks = n;
    g.tasks = tis;
    Offerd__Agent__Event__RunTaskGroup rg =
        OFFERD__AGENT__EVENT__RUN_TASK_GROUP__INIT;
    rg.framework_info = fw->info;
    rg.executor = ex;
    rg.task_group = &g;
    Offerd__Agent__Event ev = OFFERD__AGENT__EVENT__INIT;
    ev.type = OFFERD__AGENT__EVENT__TYPE__RUN_TASK_GROUP;
    ev.run_task_group = &rg;
    master_send_to_agent(ag, &ev);
    protobuf_c_message_free_unpacked(&ex->base, NULL);
    for (size_t i = 0; i < n; i++)
        task_info_compact(tis[i]);
    free(tis);
}

/* ---- Updates the master makes itself ------------------------------------ */

static void fill_status(Mesos__V1__TaskStatus *st, Mesos__V1__TaskID *tid,
                        Mesos__V1__AgentID *aid, const char *task_id,
                        const char *agent_id, Mesos__V1__TaskState state,
                        Mesos__V1__TaskStatus__Source source,
                        Mesos__V1__TaskStatus__Reason reason,
                        const char *message)
{
    mesos__v1__task_status__init(st);
    mesos__v1__task_id__init(tid);
    tid->value = (char *)task_id;
    st->task_id = tid;
    st->state = state;
    st->has_source = true;
    st->source = source;
    if (reason != 0) {
        st->has_reason = true;
        st->reason = reason;
    }
    st->message = (char *)message;
    if (agent_id != NULL) {
        mesos__v1__agent_id__init(aid);
        aid->value = (char *)agent_id;
        st->agent_id = aid;
    }
    st->has_timestamp = true;
    st->timestamp = clock_wall_secs();
}

static void send_update(struct master *m, struct framework *fw,
                        Mesos__V1__TaskStatus *st)
{
    Mesos__V1__Scheduler__Event__Update up =
        MESOS__V1__SCHEDULER__EVENT__UPDATE__INIT;
    up.status = st;
    Mesos__V1__Scheduler__Event ev = MESOS__V1__SCHEDULER__EVENT__INIT;
    ev.has_type = true;
    ev.type = MESOS__V1__SCHEDULER__EVENT__TYPE__UPDATE;
    ev.update = &up;
    master_send_to_framework(fw, &ev);
}

void master_send_master_update(struct master *m, struct framework *fw,
                               const char *task_id, const char *agent_id,
                               Mesos__V1__TaskState state,
                               Mesos__V1__TaskStatus__Reason reason,
                               const char *message)
{
    Mesos__V1__TaskStatus st;
    Mesos__V1__TaskID tid;
    Mesos__V1__AgentID aid;
    fill_status(&st, &tid, &aid, task_id, agent_id, state,
                MESOS__V1__TASK_STATUS__SOURCE__SOURCE_MASTER, reason, message);
    send_update(m, fw, &st);
}

Mesos__V1__TaskState master_lost_state(const struct framework *fw)
{
    return fw->partition_aware ? MESOS__V1__TASK_STATE__TASK_UNREACHABLE
                               : MESOS__V1__TASK_STATE__TASK_LOST;
}

void master_task_transition(struct master *m, struct task *t,
                            Mesos__V1__TaskState state,
                            Mesos__V1__TaskStatus__Source source,
                            Mesos__V1__TaskStatus__Reason reason,
                            const char *message)
{
    Mesos__V1__TaskStatus st;
    Mesos__V1__TaskID tid;
    Mesos__V1__AgentID aid;
    fill_status(&st, &tid, &aid, t->info->task_id->value,
                t->agent != NULL ? t->agent->id : NULL, state, source, reason,
                message);
    if (t->status != NULL)
        protobuf_c_message_free_unpacked(&t->status->base, NULL);
    t->status = jpb_copy(&mesos__v1__task_status__descriptor, &st.base);
    if (t->state != state && task_state_is_terminal(state))
        master_task_count(m, state);
    master_live_task_state(m, t, state);
    t->has_status_update_state = false;
    record_state(t, state, st.timestamp);
    if (task_state_is_terminal(state) ||
        state == MESOS__V1__TASK_STATE__TASK_UNREACHABLE)
        master_task_recover(m, t);
    send_update(m, t->fw, &st);
}

/* ---- Updates from agents ----------------------------------------------------
 */

static void ack_to_agent(struct master *m, struct agent *ag,
                         const char *framework_id, const char *task_id,
                         const uint8_t *uuid, size_t uuid_len)
{
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = (char *)framework_id;
    Mesos__V1__TaskID tid = MESOS__V1__TASK_ID__INIT;
    tid.value = (char *)task_id;
    Offerd__Agent__Event__Acknowledge ack =
        OFFERD__AGENT__EVENT__ACKNOWLEDGE__INIT;
    ack.framework_id = &fid;
    ack.task_id = &tid;
    ack.uuid.data = (uint8_t *)uuid;
    ack.uuid.len = uuid_len;
    Offerd__Agent__Event ev = OFFERD__AGENT__EVENT__INIT;
    ev.type = OFFERD__AGENT__EVENT__TYPE__ACKNOWLEDGE;
    ev.acknowledge = &ack;
    master_send_to_agent(ag, &ev);
}

void master_task_status_update(struct master *m, struct agent *ag,
                               const Offerd__Agent__Call__Update *u)
{
    Mesos__V1__TaskStatus *st = u->status;
    const char *fid = u->framework_id->value;
    const char *tid = st->task_id->value;
    m->metrics.messages_status_update++;
    struct framework *fw = master_framework_find(m, fid);
    if (fw == NULL) {
        /* A removed framework: acknowledge for it, so the agent stops
         * retrying an update nobody will ever acknowledge. */
        m->metrics.invalid_status_updates++;
        log_info("status update for task %s of unknown framework %s "
                 "acknowledged by the master",
                 tid, fid);
        if (st->has_uuid)
            ack_to_agent(m, ag, fid, tid, st->uuid.data, st->uuid.len);
        return;
    }
    struct task *t = hmap_get(fw->tasks, tid);
    if (t != NULL && t->agent != ag) {
        m->metrics.invalid_status_updates++;
        log_warn("status update for task %s from agent %s, which does not "
                 "run it",
                 tid, ag->id);
        return;
    }
    m->metrics.valid_status_updates++;
    Mesos__V1__TaskState latest =
        u->has_latest_state ? u->latest_state : st->state;
    if (t != NULL && task_state_is_terminal(t->state) &&
        !task_state_is_terminal(latest)) {
        /* A resend that was overtaken (e.g. delayed in the network): the
         * task's state does not go back. */
        log_warn("out-of-order update of task %s (latest state %d after %d): "
                 "forwarded, task state kept",
                 tid, (int)latest, (int)t->state);
    } else if (t != NULL) {
        if (t->status != NULL)
            protobuf_c_message_free_unpacked(&t->status->base, NULL);
        t->status = jpb_copy(&mesos__v1__task_status__descriptor, &st->base);
        if (t->state != latest && task_state_is_terminal(latest)) {
            master_task_count(m, latest);
            if (st->has_reason &&
                st->reason ==
                    MESOS__V1__TASK_STATUS__REASON__REASON_CONTAINER_PREEMPTED)
                m->metrics.tasks_preempted++;
        }
        master_live_task_state(m, t, latest);
        record_state(t, st->state,
                     st->has_timestamp ? st->timestamp : clock_wall_secs());
        if (task_state_is_terminal(latest))
            master_task_recover(m, t);
        t->status_update_state = st->state;
        t->has_status_update_state = true;
        if (task_state_is_terminal(st->state) && st->has_uuid &&
            st->uuid.len == sizeof(t->terminal_uuid)) {
            memcpy(t->terminal_uuid, st->uuid.data, st->uuid.len);
            t->has_terminal_uuid = true;
        }
    }
    /* Forward as is: the framework acknowledges by the uuid. */
    send_update(m, fw, st);
}

void master_task_acknowledge(struct master *m, struct framework *fw,
                             const char *agent_id, const char *task_id,
                             const uint8_t *uuid, size_t uuid_len)
{
    m->metrics.messages_status_update_acknowledgement++;
    struct agent *ag = master_agent_find(m, agent_id);
    if (ag != NULL)
        ack_to_agent(m, ag, fw->id, task_id, uuid, uuid_len);
    struct task *t = hmap_get(fw->tasks, task_id);
    /* Mesos counts as invalid an acknowledgement for an agent not
     * registered or not connected, or for a task whose update did not come
     * through this master; valid what it forwards to the agent. */
    if (ag == NULL || ag->stream == NULL ||
        (t != NULL && !t->has_status_update_state))
        m->metrics.invalid_status_update_acknowledgements++;
    else
        m->metrics.valid_status_update_acknowledgements++;
    if (t != NULL && t->has_terminal_uuid && uuid_len == 16 &&
        memcmp(t->terminal_uuid, uuid, 16) == 0 &&
        task_state_is_terminal(t->state)) {
        master_task_recover(m, t);
        master_task_remove(m, t);
    }
}

/* ---- Kill and reconcile ------------------------------------------------ */

/* What the master answers for a task it does not hold, by what it knows of
 * the agent (Mesos's explicit reconciliation rules):
 *  - the agent is back from before a master restart but not re-registered
 *    yet (or, with no agent given, some agent is): no answer yet;
 *  - the task was on an agent now unreachable: TASK_UNREACHABLE;
 *  - the agent is unreachable: TASK_UNREACHABLE;
 *  - the agent is gone: TASK_GONE;
 *  - the agent is registered and does not run it: TASK_GONE;
 *  - otherwise: TASK_UNKNOWN.
 * Frameworks that are not partition-aware get TASK_LOST instead. */
static void answer_unknown(struct master *m, struct framework *fw,
                           const char *task_id, const char *agent_id)
{
    const char *unreachable_on = hmap_get(fw->unreachable_tasks, task_id);
    if (agent_id == NULL && unreachable_on != NULL)
        agent_id = unreachable_on;
    Mesos__V1__TaskState state = MESOS__V1__TASK_STATE__TASK_UNKNOWN;
    const char *msg = "Reconciliation: Task is unknown";
    if (agent_id != NULL) {
        if (master_agent_find(m, agent_id) == NULL &&
            hmap_get(m->recovered_agents, agent_id) != NULL)
            return; /* it may still come back with the task */
        if (unreachable_on != NULL ||
            hmap_get(m->unreachable_agents, agent_id) != NULL) {
            state = MESOS__V1__TASK_STATE__TASK_UNREACHABLE;
            msg = "Reconciliation: Task is unreachable";
        } else if (hmap_get(m->gone_agents, agent_id) != NULL) {
            state = MESOS__V1__TASK_STATE__TASK_GONE;
            msg = "Reconciliation: Task is gone";
        } else if (master_agent_find(m, agent_id) != NULL) {
            state = MESOS__V1__TASK_STATE__TASK_GONE;
            msg = "Reconciliation: Task is unknown to the agent";
        }
    } else if (hmap_count(m->recovered_agents) > 0) {
        return; /* agents are still coming back after a master restart */
    }
    if (!fw->partition_aware)
        state = MESOS__V1__TASK_STATE__TASK_LOST;
    master_send_master_update(
        m, fw, task_id, agent_id, state,
        MESOS__V1__TASK_STATUS__REASON__REASON_RECONCILIATION, msg);
}

static void answer_known(struct master *m, struct framework *fw, struct task *t)
{
    Mesos__V1__TaskStatus st;
    Mesos__V1__TaskID tid;
    Mesos__V1__AgentID aid;
    fill_status(&st, &tid, &aid, t->info->task_id->value,
                t->agent != NULL ? t->agent->id : NULL,
                t->has_status_update_state ? t->status_update_state : t->state,
                MESOS__V1__TASK_STATUS__SOURCE__SOURCE_MASTER,
                MESOS__V1__TASK_STATUS__REASON__REASON_RECONCILIATION,
                "Reconciliation: Latest task state");
    if (t->status != NULL && t->status->has_healthy) {
        st.has_healthy = true;
        st.healthy = t->status->healthy;
    }
    if (t->status != NULL) /* borrowed for the send, as Mesos includes it */
        st.check_status = t->status->check_status;
    send_update(m, fw, &st);
}

void master_task_reconcile(
    struct master *m, struct framework *fw,
    Mesos__V1__Scheduler__Call__Reconcile__Task *const *tasks, size_t n)
{
    m->metrics.messages_reconcile_tasks++;
    if (n == 0) {
        size_t pos = 0;
        void *val;
        while (hmap_next(fw->tasks, &pos, NULL, &val))
            answer_known(m, fw, val);
        /* Partition-aware frameworks also hear of their unreachable
         * tasks. */
        const char *key;
        pos = 0;
        while (hmap_next(fw->unreachable_tasks, &pos, &key, &val))
            master_send_master_update(
                m, fw, key, val, MESOS__V1__TASK_STATE__TASK_UNREACHABLE,
                MESOS__V1__TASK_STATUS__REASON__REASON_RECONCILIATION,
                "Reconciliation: Task is unreachable");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const char *tid = tasks[i]->task_id->value;
        const char *aid =
            tasks[i]->agent_id != NULL ? tasks[i]->agent_id->value : NULL;
        struct task *t = hmap_get(fw->tasks, tid);
        if (t != NULL)
            answer_known(m, fw, t);
        else
            answer_unknown(m, fw, tid, aid);
    }
}

/* Send KILL_TASK for t (with the reason the agent reports, 0: none). */
static void send_kill(struct master *m, struct task *t,
                      const Mesos__V1__KillPolicy *policy, int reason);

void master_task_kill(struct master *m, struct framework *fw,
                      const char *task_id, const char *agent_id,
                      const Mesos__V1__KillPolicy *policy)
{
    m->metrics.messages_kill_task++;
    struct task *t = hmap_get(fw->tasks, task_id);
    if (t == NULL) {
        /* Mesos reconciles a kill of an unknown task. */
        answer_unknown(m, fw, task_id, agent_id);
        return;
    }
    if (task_state_is_terminal(t->state))
        return;
    send_kill(m, t, policy, 0);
}

static void send_kill(struct master *m, struct task *t,
                      const Mesos__V1__KillPolicy *policy, int reason)
{
    const char *task_id = t->info->task_id->value;
    t->kill_requested = true;
    if (t->agent == NULL || t->agent->stream == NULL) {
        log_info("kill of task %s waits for agent %s to reconnect", task_id,
                 t->agent != NULL ? t->agent->id : "(none)");
        return;
    }
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = t->fw->id;
    Mesos__V1__TaskID tid = MESOS__V1__TASK_ID__INIT;
    tid.value = (char *)task_id;
    Offerd__Agent__Event__KillTask kt = OFFERD__AGENT__EVENT__KILL_TASK__INIT;
    kt.framework_id = &fid;
    kt.task_id = &tid;
    kt.kill_policy = (Mesos__V1__KillPolicy *)policy;
    if (reason != 0) {
        kt.has_reason = true;
        kt.reason = (Mesos__V1__TaskStatus__Reason)reason;
    }
    Offerd__Agent__Event ev = OFFERD__AGENT__EVENT__INIT;
    ev.type = OFFERD__AGENT__EVENT__TYPE__KILL_TASK;
    ev.kill_task = &kt;
    /* Delivered: the agent carries the kill through its own restarts; only
     * an undelivered one is sent again when the agent reconnects. */
    t->kill_requested = master_send_to_agent(t->agent, &ev) != 0;
}

void master_task_evict(struct master *m, struct task *t,
                       Mesos__V1__TaskStatus__Reason reason)
{
    if (task_state_is_terminal(t->state))
        return;
    m->metrics.messages_kill_task++;
    send_kill(m, t, NULL, (int)reason);
}
