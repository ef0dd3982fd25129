/*
 * POST /api/v1/scheduler: Mesos's v1 scheduler HTTP API
 * (docs/scheduler-http-api.md in apache/mesos). The body is a
 * mesos.v1.scheduler.Call in JSON or protobuf; SUBSCRIBE opens the
 * framework's event stream (frameworks.c), every other call carries the
 * framework's Mesos-Stream-Id and is answered 202 Accepted, or 400 with a
 * one-line reason for a malformed call. Semantic problems inside a
 * well-formed call (a stale offer, a duplicate task id) are reported to the
 * framework as Mesos does: TASK_ERROR / TASK_DROPPED / TASK_LOST updates.
 */
#include "master/scheduler_api.h"

#include <event2/event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/json_pb.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/resources_pb.h"
#include "master/agents.h"
#include "master/calls.h"
#include "master/executors.h"
#include "master/frameworks.h"
#include "master/maintenance.h"
#include "master/master.h"
#include "master/offers.h"
#include "master/operations.h"
#include "master/reservations.h"
#include "master/send.h"
#include "master/task_checks.h"
#include "master/tasks.h"

#define DEFAULT_REFUSE_SECS 5.0
#define MAX_REFUSE_SECS     (365.0 * 24 * 3600)

/* Filters.refuse_seconds in nanoseconds: Mesos's default (5 s) when absent,
 * negative or not a number; at most 365 days. */
int64_t master_refuse_ns(const Mesos__V1__Filters *f)
{
    double secs = DEFAULT_REFUSE_SECS;
    if (f != NULL && f->has_refuse_seconds)
        secs = f->refuse_seconds;
    if (!(secs >= 0))
        secs = DEFAULT_REFUSE_SECS;
    if (secs > MAX_REFUSE_SECS)
        secs = MAX_REFUSE_SECS;
    return (int64_t)(secs * (double)CLOCK_NS_PER_SEC);
}

static void reply_accepted(struct http_request *req)
{
    http_reply(req, 202, NULL, NULL, 0);
}

static const Mesos__V1__Scheduler__Call *
sched_call(const struct master_call_ctx *c)
{
    return (const Mesos__V1__Scheduler__Call *)c->call;
}

/* ---- ACCEPT -----------------------------------------------------------------
 */

/* A task id as Mesos accepts it. */
static const char *check_task_id(const char *id)
{
    size_t len = strlen(id);
    if (len == 0)
        return "task_id: must not be empty";
    if (len > 255)
        return "task_id: longer than 255 bytes";
    if (strcmp(id, ".") == 0 || strcmp(id, "..") == 0)
        return "task_id: must not be '.' or '..'";
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)id[i];
        if (c < 0x20 || c == 0x7f || c == '/' || c == ' ')
            return "task_id: must not contain '/', spaces or control "
                   "characters";
    }
    return NULL;
}

/* Validate a task of a LAUNCH against the framework, the agent and what is
 * left of the offers; on success *res (OUT) holds its resources with their
 * allocation role. Returns NULL or a reason (into err). */
static const char *validate_task(struct framework *fw, struct agent *ag,
                                 const char *role,
                                 const Mesos__V1__TaskInfo *ti,
                                 const res_list *remaining, res_list *res,
                                 char *err, size_t errlen)
{
    const char *e = check_task_id(ti->task_id->value);
    if (e != NULL)
        return e;
    if (hmap_get(fw->tasks, ti->task_id->value) != NULL) {
        snprintf(err, errlen, "Task has duplicate ID: %s", ti->task_id->value);
        return err;
    }
    if (strcmp(ti->agent_id->value, ag->id) != 0) {
        snprintf(err, errlen,
                 "Task uses agent %s, but the offer is for agent %s",
                 ti->agent_id->value, ag->id);
        return err;
    }
    if (ti->command != NULL && ti->command->shell == 0 &&
        ti->command->has_shell && ti->command->value == NULL)
        return "command.value: required (the program to run)";
    if (ti->kill_policy != NULL && ti->kill_policy->grace_period != NULL &&
        ti->kill_policy->grace_period->nanoseconds < 0)
        return "kill_policy.grace_period: must not be negative";
    if ((e = master_task_checks_validate(ti, err, errlen)) != NULL)
        return e;
    if (ti->n_resources == 0)
        return "Task uses no resources";
    char rerr[256];
    res_list_init(res);
    if (res_list_from_pb(ti->resources, ti->n_resources, res, rerr,
                         sizeof(rerr)) != 0) {
        snprintf(err, errlen, "Task uses invalid resources: %s", rerr);
        return err;
    }
    /* Mesos injects the offers' role into resources that carry none. */
    for (uint32_t i = 0; i < res->n; i++) {
        if (res->v[i].alloc_role == NULL) {
            res_list_allocate(res, role);
            break;
        }
    }
    if (!res_list_contains(remaining, res)) {
        char *want = res_list_render(res), *have = res_list_render(remaining);
        snprintf(err, errlen, "Task uses more resources %s than available %s",
                 want, have);
        free(want);
        free(have);
        res_list_clear(res);
        return err;
    }
    return NULL;
}

static void task_error(struct master *m, struct framework *fw,
                       const Mesos__V1__TaskInfo *ti, const char *reason)
{
    log_info("framework %s: task %s refused: %s", fw->id, ti->task_id->value,
             reason);
    master_task_count(m, MESOS__V1__TASK_STATE__TASK_ERROR);
    master_send_master_update(
        m, fw, ti->task_id->value,
        ti->agent_id != NULL ? ti->agent_id->value : NULL,
        MESOS__V1__TASK_STATE__TASK_ERROR,
        MESOS__V1__TASK_STATUS__REASON__REASON_TASK_INVALID, reason);
}

/* The executor of a LAUNCH's task ti, which passed validate_task with
 * resources res: validated as Mesos does, and when new on ag its
 * resources must fit in remaining beside res. Returns the ExecutorInfo
 * to launch with (the known one, or a new one then tracked and its
 * resources taken from remaining), or NULL with a reason in err. */
static const Mesos__V1__ExecutorInfo *
launch_executor(struct master *m, struct framework *fw, struct agent *ag,
                const char *role, const Mesos__V1__TaskInfo *ti,
                const res_list *res, res_list *remaining, char *err,
                size_t errlen)
{
    res_list exres = RES_LIST_INIT;
    Mesos__V1__ExecutorInfo *ex = master_executor_prepare(
        fw, ag, ti->executor, false, role, &exres, err, errlen);
    if (ex == NULL)
        return NULL;
    struct executor *known =
        master_executor_find(ag, fw->id, ex->executor_id->value);
    if (known != NULL) {
        protobuf_c_message_free_unpacked(&ex->base, NULL);
        res_list_clear(&exres);
        return known->info;
    }
    res_list total = RES_LIST_INIT;
    res_list_copy(&total, res);
    res_list_add_all(&total, &exres);
    if (!res_list_contains(remaining, &total)) {
        char *want = res_list_render(&total),
             *have = res_list_render(remaining);
        snprintf(err, errlen,
                 "Total resources %s required by task and its executor is "
                 "more than available %s",
                 want, have);
        free(want);
        free(have);
        res_list_clear(&total);
        res_list_clear(&exres);
        protobuf_c_message_free_unpacked(&ex->base, NULL);
        return NULL;
    }
    res_list_clear(&total);
    res_list_sub_all(remaining, &exres);
    struct executor *e = master_executor_add(m, fw, ag, ex, &exres);
    res_list_clear(&exres);
    return e->info;
}

static void launch(struct master *m, struct framework *fw, struct agent *ag,
                   const char *role, Mesos__V1__TaskInfo *const *tasks,
                   size_t n, res_list *remaining)
{
    for (size_t i = 0; i < n; i++) {
        char err[1024];
        res_list res;
        const char *e = NULL;
        if ((tasks[i]->command == NULL) == (tasks[i]->executor == NULL))
            e = "Task should have at least one (but not both) of "
                "CommandInfo or ExecutorInfo present";
        else
            e = validate_task(fw, ag, role, tasks[i], remaining, &res, err,
                              sizeof(err));
        if (e != NULL) {
            task_error(m, fw, tasks[i], e);
            continue;
        }
        Mesos__V1__TaskInfo ti = *tasks[i]; /* shallow: the executor swapped */
        if (ti.executor != NULL) {
            ti.executor = (Mesos__V1__ExecutorInfo *)launch_executor(
                m, fw, ag, role, tasks[i], &res, remaining, err, sizeof(err));
            if (ti.executor == NULL) {
                res_list_clear(&res);
                task_error(m, fw, tasks[i], err);
                continue;
            }
        }
        res_list_sub_all(remaining, &res);
        master_task_launch(m, fw, ag, &ti, &res, role);
        res_list_clear(&res);
    }
}

/* LAUNCH_GROUP: every task of the group or none. offerd's agent runs each
 * task's command side by side, and kills the others when one ends other
 * than FINISHED. The group's executor is tracked (executors.c): its
 * resources are taken from the offers when it is new on the agent, and
 * a later group naming it shares it. */
static void launch_group(struct master *m, struct framework *fw,
                         struct agent *ag, const char *role,
                         const Mesos__V1__Offer__Operation__LaunchGroup *lg,
                         res_list *remaining)
{
    const Mesos__V1__TaskGroupInfo *g = lg->task_group;
    char err[1024];
    const char *e = NULL;
    res_list left = RES_LIST_INIT;
    res_list_copy(&left, remaining);
    res_list *each = xcalloc(g->n_tasks ? g->n_tasks : 1, sizeof(*each));
    size_t ok = 0;
    if (g->n_tasks == 0)
        e = "task_group: must hold at least one task";
    res_list exec = RES_LIST_INIT;
    Mesos__V1__ExecutorInfo *ex = NULL;
    bool ex_new = false;
    if (e == NULL) {
        ex = master_executor_prepare(fw, ag, lg->executor, true, role, &exec,
                                     err, sizeof(err));
        if (ex == NULL)
            e = err;
        else
            ex_new = master_executor_find(ag, fw->id, ex->executor_id->value) ==
                     NULL;
    }
    if (e == NULL && ex_new) {
        if (!res_list_contains(&left, &exec))
            e = "Executor uses more resources than available";
        else
            res_list_sub_all(&left, &exec);
    }
    for (size_t i = 0; e == NULL && i < g->n_tasks; i++) {
        const Mesos__V1__TaskInfo *ti = g->tasks[i];
        if (ti->command == NULL) {
            e = "Tasks of a group must have a CommandInfo";
            break;
        }
        if (ti->executor != NULL) {
            /* Mesos: it may only repeat the group's. */
            res_list tres = RES_LIST_INIT;
            char terr[256];
            Mesos__V1__ExecutorInfo *tex = master_executor_prepare(
                fw, ag, ti->executor, true, role, &tres, terr, sizeof(terr));
            bool same = tex != NULL && master_executor_info_equal(tex, ex);
            if (tex != NULL)
                protobuf_c_message_free_unpacked(&tex->base, NULL);
            res_list_clear(&tres);
            if (!same) {
                snprintf(err, sizeof(err),
                         "The `ExecutorInfo` of task '%s' is different from "
                         "executor '%s'",
                         ti->task_id->value, ex->executor_id->value);
                e = err;
                break;
            }
        }
        for (size_t j = 0; j < i && e == NULL; j++)
            if (strcmp(g->tasks[j]->task_id->value, ti->task_id->value) == 0) {
                snprintf(err, sizeof(err), "Task has duplicate ID: %s",
                         ti->task_id->value);
                e = err;
            }
        if (e != NULL)
            break;
        e = validate_task(fw, ag, role, ti, &left, &each[i], err, sizeof(err));
        if (e == NULL) {
            res_list_sub_all(&left, &each[i]);
            ok++;
        }
    }
    if (e != NULL) {
        for (size_t i = 0; i < g->n_tasks; i++)
            task_error(m, fw, g->tasks[i], e);
    } else {
        res_list_clear(remaining);
        *remaining = left;
        res_list_init(&left);
        const Mesos__V1__ExecutorInfo *run;
        if (ex_new) {
            run = master_executor_add(m, fw, ag, ex, &exec)->info;
            ex = NULL; /* taken */
        } else {
            run =
                master_executor_find(ag, fw->id, ex->executor_id->value)->info;
        }
        master_task_launch_group(m, fw, ag, run, g->tasks, g->n_tasks, each,
                                 role);
    }
    if (ex != NULL)
        protobuf_c_message_free_unpacked(&ex->base, NULL);
    for (size_t i = 0; i < ok; i++)
        res_list_clear(&each[i]);
    free(each);
    res_list_clear(&exec);
    res_list_clear(&left);
}

/* Mesos's answer to the operations of an ACCEPT with invalid offers:
 * TASK_DROPPED or TASK_LOST for tasks, OPERATION_ERROR for the others
 * (when they have an id). */
static void drop_launches(struct master *m, struct framework *fw,
                          const Mesos__V1__Scheduler__Call__Accept *acc,
                          const char *why)
{
    Mesos__V1__TaskState st = fw->partition_aware
                                  ? MESOS__V1__TASK_STATE__TASK_DROPPED
                                  : MESOS__V1__TASK_STATE__TASK_LOST;
    for (size_t i = 0; i < acc->n_operations; i++) {
        const Mesos__V1__Offer__Operation *op = acc->operations[i];
        Mesos__V1__TaskInfo *const *tasks = NULL;
        size_t n = 0;
        if (op->type == MESOS__V1__OFFER__OPERATION__TYPE__LAUNCH &&
            op->launch != NULL) {
            tasks = op->launch->task_infos;
            n = op->launch->n_task_infos;
        } else if (op->type ==
                       MESOS__V1__OFFER__OPERATION__TYPE__LAUNCH_GROUP &&
                   op->launch_group != NULL) {
            tasks = op->launch_group->task_group->tasks;
            n = op->launch_group->task_group->n_tasks;
        } else {
            /* (launches carry their payload: accept_check_operations) */
            char msg[600];
            snprintf(msg, sizeof(msg),
                     "Operation attempted with invalid offers: %s", why);
            master_op_error(fw, op, msg);
        }
        for (size_t k = 0; k < n; k++) {
            master_task_count(m, st);
            master_send_master_update(
                m, fw, tasks[k]->task_id->value,
                tasks[k]->agent_id != NULL ? tasks[k]->agent_id->value : NULL,
                st, MESOS__V1__TASK_STATUS__REASON__REASON_INVALID_OFFERS, why);
        }
    }
}

/* The operations of an ACCEPT must be well-formed (their payload set)
 * before anything happens: that is a malformed call (400), not a semantic
 * error. Returns 0, or -1 after replying. */
static int
accept_check_operations(struct http_request *req,
                        const Mesos__V1__Scheduler__Call__Accept *acc)
{
    for (size_t i = 0; i < acc->n_operations; i++) {
        const Mesos__V1__Offer__Operation *op = acc->operations[i];
        if (!op->has_type) {
            http_reply_error(req, 400, "accept.operations[%zu].type: required",
                             i);
            return -1;
        }
        if ((op->type == MESOS__V1__OFFER__OPERATION__TYPE__LAUNCH &&
             op->launch == NULL) ||
            (op->type == MESOS__V1__OFFER__OPERATION__TYPE__LAUNCH_GROUP &&
             op->launch_group == NULL)) {
            http_reply_error(req, 400,
                             "accept.operations[%zu]: the operation's message "
                             "is missing",
                             i);
            return -1;
        }
    }
    return 0;
}

/* The offers an ACCEPT names: they exist, belong to fw, are on one agent
 * and allocated to one role. Returns how many were found, in offers (OUT,
 * room for acc->n_offer_ids); err is left empty when all are valid, else
 * holds Mesos's reason for the first problem. */
static size_t accept_find_offers(struct master *m, struct framework *fw,
                                 const Mesos__V1__Scheduler__Call__Accept *acc,
                                 struct offer **offers, char *err,
                                 size_t errlen)
{
    size_t noffers = 0;
    err[0] = '\0';
    if (acc->n_offer_ids == 0)
        snprintf(err, errlen, "No offers specified");
    for (size_t i = 0; i < acc->n_offer_ids; i++) {
        const char *id = acc->offer_ids[i]->value;
        struct offer *o = hmap_get(m->offers, id);
        bool dup = false;
        for (size_t j = 0; j < noffers; j++)
            dup = dup || offers[j] == o;
        if (o == NULL) {
            if (err[0] == '\0')
                snprintf(err, errlen, "Offer %s is no longer valid", id);
        } else if (o->fw != fw) {
            if (err[0] == '\0')
                snprintf(err, errlen,
                         "Offer %s is not an offer to framework %s", id,
                         fw->id);
        } else if (dup) {
            if (err[0] == '\0')
                snprintf(err, errlen, "Offer %s appears more than once", id);
        } else {
            if (noffers > 0 && offers[0]->agent != o->agent && err[0] == '\0')
                snprintf(err, errlen,
                         "Aggregated offers must belong to one single agent");
            if (noffers > 0 && strcmp(offers[0]->role, o->role) != 0 &&
                err[0] == '\0')
                snprintf(err, errlen,
                         "Aggregated offers must be allocated to the same "
                         "role");
            offers[noffers++] = o;
        }
    }
    return noffers;
}

/* Launches get no operation feedback: as Mesos, a LAUNCH or LAUNCH_GROUP
 * with an id is refused, each task with TASK_ERROR. Returns whether op was
 * such a launch. */
static bool launch_with_id(struct master *m, struct framework *fw,
                           const Mesos__V1__Offer__Operation *op)
{
    Mesos__V1__TaskInfo *const *tasks;
    size_t n;
    Mesos__V1__TaskStatus__Reason reason;
    const char *why;
    if (op->type == MESOS__V1__OFFER__OPERATION__TYPE__LAUNCH) {
        tasks = op->launch->task_infos;
        n = op->launch->n_task_infos;
        reason = MESOS__V1__TASK_STATUS__REASON__REASON_TASK_INVALID;
        why = "The `id` field cannot be set on LAUNCH operations";
    } else if (op->type == MESOS__V1__OFFER__OPERATION__TYPE__LAUNCH_GROUP) {
        tasks = op->launch_group->task_group->tasks;
        n = op->launch_group->task_group->n_tasks;
        reason = MESOS__V1__TASK_STATUS__REASON__REASON_TASK_GROUP_INVALID;
        why = "The `id` field cannot be set on LAUNCH_GROUP operations";
    } else {
        return false;
    }
    for (size_t k = 0; k < n; k++) {
        log_info("framework %s: task %s refused: %s", fw->id,
                 tasks[k]->task_id->value, why);
        master_task_count(m, MESOS__V1__TASK_STATE__TASK_ERROR);
        master_send_master_update(
            m, fw, tasks[k]->task_id->value,
            tasks[k]->agent_id != NULL ? tasks[k]->agent_id->value : NULL,
            MESOS__V1__TASK_STATE__TASK_ERROR, reason, why);
    }
    return true;
}

/* Apply the operations of an ACCEPT, in order, to remaining (the offers'
 * resources, allocated to role on ag); each uses what it needs. */
static void accept_apply(struct master *m, struct framework *fw,
                         struct agent *ag, const char *role,
                         const Mesos__V1__Scheduler__Call__Accept *acc,
                         res_list *remaining)
{
    for (size_t i = 0; i < acc->n_operations; i++) {
        const Mesos__V1__Offer__Operation *op = acc->operations[i];
        if (op->id != NULL && launch_with_id(m, fw, op))
            continue;
        switch (op->type) {
        case MESOS__V1__OFFER__OPERATION__TYPE__LAUNCH:
            launch(m, fw, ag, role, op->launch->task_infos,
                   op->launch->n_task_infos, remaining);
            break;
        case MESOS__V1__OFFER__OPERATION__TYPE__LAUNCH_GROUP:
            launch_group(m, fw, ag, role, op->launch_group, remaining);
            break;
        default:
            master_resv_accept_op(m, fw, ag, role, op, remaining);
            break;
        }
    }
}

static void handle_accept(struct master_call_ctx *c)
{
    struct master *m = c->m;
    struct framework *fw = c->fw;
    const Mesos__V1__Scheduler__Call__Accept *acc = sched_call(c)->accept;
    if (accept_check_operations(c->req, acc) != 0)
        return;
    m->metrics.messages_launch_tasks++;
    reply_accepted(c->req);

    char err[512];
    struct offer **offers =
        xcalloc(acc->n_offer_ids ? acc->n_offer_ids : 1, sizeof(*offers));
    size_t noffers = accept_find_offers(m, fw, acc, offers, err, sizeof(err));
    if (err[0] != '\0') {
        log_info("framework %s: ACCEPT with invalid offers: %s", fw->id, err);
        for (size_t i = 0; i < noffers; i++)
            master_offer_remove(m, offers[i], false, 0);
        drop_launches(m, fw, acc, err);
        free(offers);
        return;
    }

    struct agent *ag = offers[0]->agent;
    char *role = xstrdup(offers[0]->role);
    /* Forget the offers, keep their resources with the framework: what is
     * not used is given back below. */
    res_list remaining = RES_LIST_INIT;
    for (size_t i = 0; i < noffers; i++)
        master_offer_take(m, offers[i], &remaining);
    free(offers);
    m->metrics.offers_accepted += noffers;

    accept_apply(m, fw, ag, role, acc, &remaining);
    if (remaining.n > 0 &&
        alloc_recover(m->alloc, ag->alloc, fw->alloc, &remaining,
                      master_refuse_ns(acc->filters),
                      clock_monotonic_ns()) != 0)
        log_error("allocator did not hold the unused part of an ACCEPT");
    res_list_clear(&remaining);
    free(role);
    master_allocate_soon(m);
}

/* ---- Other calls -------------------------------------------------------- */

static void handle_decline(struct master_call_ctx *c)
{
    struct master *m = c->m;
    const Mesos__V1__Scheduler__Call__Decline *d = sched_call(c)->decline;
    int64_t refuse = master_refuse_ns(d->filters);
    for (size_t i = 0; i < d->n_offer_ids; i++) {
        struct offer *o = hmap_get(m->offers, d->offer_ids[i]->value);
        if (o == NULL || o->fw != c->fw) {
            log_info("framework %s declined unknown offer %s", c->fw->id,
                     d->offer_ids[i]->value);
            continue;
        }
        m->metrics.offers_declined++;
        master_offer_answered(m, o);
        master_offer_remove(m, o, false, refuse);
    }
    reply_accepted(c->req);
}

/* Check that roles are roles of fw; 400 otherwise. */
static bool roles_subscribed(struct http_request *req, struct framework *fw,
                             const char *what, char *const *roles, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        bool found = false;
        for (uint32_t k = 0; k < fw->nroles && !found; k++)
            found = strcmp(fw->roles[k], roles[i]) == 0;
        if (!found) {
            http_reply_error(req, 400,
                             "%s.roles: '%s' is not a role of the framework",
                             what, roles[i]);
            return false;
        }
    }
    return true;
}

static void handle_revive(struct master_call_ctx *c)
{
    const Mesos__V1__Scheduler__Call *call = sched_call(c);
    char *const *roles = call->revive != NULL ? call->revive->roles : NULL;
    size_t n = call->revive != NULL ? call->revive->n_roles : 0;
    if (!roles_subscribed(c->req, c->fw, "revive", roles, n))
        return;
    c->m->metrics.messages_revive_offers++;
    alloc_framework_revive(c->m->alloc, c->fw->alloc,
                           (const char *const *)roles, (uint32_t)n);
    master_allocate_soon(c->m);
    reply_accepted(c->req);
}

static void handle_suppress(struct master_call_ctx *c)
{
    const Mesos__V1__Scheduler__Call *call = sched_call(c);
    char *const *roles = call->suppress != NULL ? call->suppress->roles : NULL;
    size_t n = call->suppress != NULL ? call->suppress->n_roles : 0;
    if (!roles_subscribed(c->req, c->fw, "suppress", roles, n))
        return;
    c->m->metrics.messages_suppress_offers++;
    alloc_framework_suppress(c->m->alloc, c->fw->alloc,
                             (const char *const *)roles, (uint32_t)n);
    reply_accepted(c->req);
}

static void handle_acknowledge(struct master_call_ctx *c)
{
    const Mesos__V1__Scheduler__Call__Acknowledge *a =
        sched_call(c)->acknowledge;
    if (a->uuid.len != 16) {
        http_reply_error(c->req, 400,
                         "acknowledge.uuid: must be a 16-byte UUID, got %zu "
                         "bytes",
                         a->uuid.len);
        return;
    }
    master_task_acknowledge(c->m, c->fw, a->agent_id->value, a->task_id->value,
                            a->uuid.data, a->uuid.len);
    reply_accepted(c->req);
}

static void handle_message(struct master_call_ctx *c)
{
    struct master *m = c->m;
    const Mesos__V1__Scheduler__Call__Message *msg = sched_call(c)->message;
    reply_accepted(c->req);
    struct agent *ag = master_agent_find(m, msg->agent_id->value);
    if (ag == NULL || ag->stream == NULL) {
        m->metrics.invalid_framework_to_executor_messages++;
        log_info("framework %s: message for agent %s dropped: agent not "
                 "connected",
                 c->fw->id, msg->agent_id->value);
        return;
    }
    m->metrics.valid_framework_to_executor_messages++;
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = c->fw->id;
    Offerd__Agent__Event__FrameworkMessage fm =
        OFFERD__AGENT__EVENT__FRAMEWORK_MESSAGE__INIT;
    fm.framework_id = &fid;
    fm.executor_id = msg->executor_id;
    fm.data = msg->data;
    Offerd__Agent__Event ev = OFFERD__AGENT__EVENT__INIT;
    ev.type = OFFERD__AGENT__EVENT__TYPE__FRAMEWORK_MESSAGE;
    ev.framework_message = &fm;
    master_send_to_agent(ag, &ev);
}

static void handle_shutdown(struct master_call_ctx *c)
{
    const Mesos__V1__Scheduler__Call__Shutdown *sd = sched_call(c)->shutdown;
    reply_accepted(c->req);
    struct agent *ag = master_agent_find(c->m, sd->agent_id->value);
    if (ag == NULL)
        return;
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = c->fw->id;
    Offerd__Agent__Event__ShutdownExecutor se =
        OFFERD__AGENT__EVENT__SHUTDOWN_EXECUTOR__INIT;
    se.framework_id = &fid;
    se.executor_id = sd->executor_id;
    Offerd__Agent__Event ev = OFFERD__AGENT__EVENT__INIT;
    ev.type = OFFERD__AGENT__EVENT__TYPE__SHUTDOWN_EXECUTOR;
    ev.shutdown_executor = &se;
    master_send_to_agent(ag, &ev);
}

/* Answered with events (Mesos 1.10+: 202, then UPDATE_OPERATION_STATUS
 * for each operation asked about). */
static void handle_reconcile_operations(struct master_call_ctx *c)
{
    const Mesos__V1__Scheduler__Call__ReconcileOperations *ro =
        sched_call(c)->reconcile_operations;
    reply_accepted(c->req);
    master_op_reconcile(c->m, c->fw, ro->operations, ro->n_operations);
}

static void handle_update_framework(struct master_call_ctx *c)
{
    const Mesos__V1__FrameworkInfo *fi =
        sched_call(c)->update_framework->framework_info;
    if (fi->id == NULL || strcmp(fi->id->value, c->fw->id) != 0) {
        http_reply_error(c->req, 400,
                         "update_framework.framework_info.id: must be the "
                         "framework's id");
        return;
    }
    /* The same rules as SUBSCRIBE; frameworks.c applies it. */
    master_framework_update(c->m, c->req, c->fw,
                            sched_call(c)->update_framework);
}

static void handle_subscribe(struct master_call_ctx *c)
{
    master_framework_subscribe(c->m, c->req, sched_call(c), c->reply_enc);
}

static void handle_teardown(struct master_call_ctx *c)
{
    reply_accepted(c->req);
    master_framework_remove(c->m, c->fw, "the framework tore itself down");
}

static void handle_accept_inverse_offers(struct master_call_ctx *c)
{
    const Mesos__V1__Scheduler__Call__AcceptInverseOffers *a =
        sched_call(c)->accept_inverse_offers;
    master_inverse_offers_answer(c->m, c->fw, a->inverse_offer_ids,
                                 a->n_inverse_offer_ids, ALLOC_IO_ACCEPT,
                                 a->filters);
    reply_accepted(c->req);
}

static void handle_decline_inverse_offers(struct master_call_ctx *c)
{
    const Mesos__V1__Scheduler__Call__DeclineInverseOffers *d =
        sched_call(c)->decline_inverse_offers;
    master_inverse_offers_answer(c->m, c->fw, d->inverse_offer_ids,
                                 d->n_inverse_offer_ids, ALLOC_IO_DECLINE,
                                 d->filters);
    reply_accepted(c->req);
}

static void handle_kill(struct master_call_ctx *c)
{
    const Mesos__V1__Scheduler__Call__Kill *k = sched_call(c)->kill;
    reply_accepted(c->req);
    master_task_kill(c->m, c->fw, k->task_id->value,
                     k->agent_id != NULL ? k->agent_id->value : NULL,
                     k->kill_policy);
}

static void handle_acknowledge_operation_status(struct master_call_ctx *c)
{
    const Mesos__V1__Scheduler__Call__AcknowledgeOperationStatus *a =
        sched_call(c)->acknowledge_operation_status;
    if (a->uuid.len != 16) {
        http_reply_error(c->req, 400,
                         "acknowledge_operation_status.uuid: must be a "
                         "16-byte UUID, got %zu bytes",
                         a->uuid.len);
        return;
    }
    if (a->agent_id == NULL) {
        http_reply_error(c->req, 400,
                         "acknowledge_operation_status.agent_id: required");
        return;
    }
    if (a->operation_id == NULL) {
        http_reply_error(c->req, 400,
                         "acknowledge_operation_status.operation_id: "
                         "required");
        return;
    }
    /* As Mesos: an acknowledgement of an unknown operation or status is
     * accepted and ignored. */
    master_op_acknowledge(c->m, c->fw, a->agent_id->value,
                          a->operation_id->value, a->uuid.data, a->uuid.len);
    reply_accepted(c->req);
}

static void handle_reconcile(struct master_call_ctx *c)
{
    const Mesos__V1__Scheduler__Call__Reconcile *r = sched_call(c)->reconcile;
    reply_accepted(c->req);
    master_task_reconcile(c->m, c->fw, r->tasks, r->n_tasks);
}

static void handle_request(struct master_call_ctx *c)
{
    /* Mesos passes requests to an allocator that ignores them. */
    reply_accepted(c->req);
}

/* ---- The endpoint ----------------------------------------------------------
 */

/* Every non-SUBSCRIBE call names a subscribed framework and carries the
 * Mesos-Stream-Id of its current subscription. */
static int bind_framework(struct master_call_ctx *c)
{
    const Mesos__V1__Scheduler__Call *call = sched_call(c);
    if (call->framework_id == NULL) {
        http_reply_error(c->req, 400, "framework_id: required");
        return -1;
    }
    struct framework *fw =
        master_framework_find(c->m, call->framework_id->value);
    if (fw == NULL) {
        http_reply_error(c->req, 400, "framework %s cannot be found",
                         call->framework_id->value);
        return -1;
    }
    if (fw->stream == NULL) {
        http_reply_error(c->req, 403, "framework %s is not subscribed", fw->id);
        return -1;
    }
    const char *sid = http_request_header(c->req, "Mesos-Stream-Id");
    if (sid == NULL) {
        http_reply_error(c->req, 400,
                         "all non-subscribe calls must include the "
                         "Mesos-Stream-Id header");
        return -1;
    }
    if (strcmp(sid, fw->stream_id) != 0) {
        http_reply_error(c->req, 400,
                         "Mesos-Stream-Id %s is not the current stream of "
                         "framework %s",
                         sid, fw->id);
        return -1;
    }
    c->fw = fw;
    return 0;
}

static void unknown_call(struct master_call_ctx *c)
{
    http_reply_error(c->req, 400, "unknown call type");
}

#define ROW(type, payload, fn, counter, flags)                                 \
    {                                                                          \
        MESOS__V1__SCHEDULER__CALL__TYPE__##type, payload, fn, counter, flags, \
            ACL_NONE                                                           \
    }
#define NO_COUNT MASTER_CALL_NO_COUNT
#define COUNT    MASTER_CALL_COUNT

static const struct master_call sched_rows[] = {
    {MESOS__V1__SCHEDULER__CALL__TYPE__SUBSCRIBE, "subscribe", handle_subscribe,
     NO_COUNT, MASTER_CALL_OPEN, ACL_REGISTER_FRAMEWORKS},
    ROW(TEARDOWN, NULL, handle_teardown, NO_COUNT, 0),
    {MESOS__V1__SCHEDULER__CALL__TYPE__ACCEPT, "accept", handle_accept,
     NO_COUNT, 0, ACL_RUN_TASKS},
    ROW(DECLINE, "decline", handle_decline, COUNT(messages_decline_offers), 0),
    ROW(ACCEPT_INVERSE_OFFERS, "accept_inverse_offers",
        handle_accept_inverse_offers, NO_COUNT, 0),
    ROW(DECLINE_INVERSE_OFFERS, "decline_inverse_offers",
        handle_decline_inverse_offers, NO_COUNT, 0),
    ROW(REVIVE, NULL, handle_revive, NO_COUNT, 0),
    ROW(SUPPRESS, NULL, handle_suppress, NO_COUNT, 0),
    ROW(KILL, "kill", handle_kill, NO_COUNT, 0),
    ROW(SHUTDOWN, "shutdown", handle_shutdown, NO_COUNT, 0),
    ROW(ACKNOWLEDGE, "acknowledge", handle_acknowledge, NO_COUNT, 0),
    ROW(ACKNOWLEDGE_OPERATION_STATUS, "acknowledge_operation_status",
        handle_acknowledge_operation_status, NO_COUNT, 0),
    ROW(RECONCILE, "reconcile", handle_reconcile, NO_COUNT, 0),
    ROW(RECONCILE_OPERATIONS, "reconcile_operations",
        handle_reconcile_operations, NO_COUNT, 0),
    ROW(MESSAGE, "message", handle_message,
        COUNT(messages_framework_to_executor), 0),
    ROW(REQUEST, NULL, handle_request, COUNT(messages_resource_request), 0),
    {MESOS__V1__SCHEDULER__CALL__TYPE__UPDATE_FRAMEWORK, "update_framework",
     handle_update_framework, NO_COUNT, 0, ACL_REGISTER_FRAMEWORKS},
};

static const struct master_api sched_api = {
    .name = "scheduler",
    .realm = MASTER_REALM_FRAMEWORKS,
    .call_desc = &mesos__v1__scheduler__call__descriptor,
    .rows = sched_rows,
    .nrows = sizeof(sched_rows) / sizeof(sched_rows[0]),
    .bind = bind_framework,
    .fallback = unknown_call,
};

void master_scheduler_api(struct http_request *req, void *arg)
{
    master_call_dispatch(&sched_api, arg, req);
}
