/*
 * The e2e test framework on libofferd (see harness_fw.h).
 */
#include "harness_fw.h"

#include "sched/fit.h"
#include "harness.h"
#include "common/resources.h"
#include "common/resources_pb.h"
#include "mesos/v1/scheduler.pb-c.h"

#include <check.h>
#include <event2/event.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define DEFAULT_TASK_RES "cpus:0.1;mem:16"

static bool was_acked(const struct hfw *f, const uint8_t *uuid)
{
    for (int i = 0; i < f->nacked; i++)
        if (memcmp(f->acked[i], uuid, 16) == 0)
            return true;
    return false;
}

static void ack(struct hfw *f, const struct hfw_update *u)
{
    ck_assert_int_eq(
        offerd_sched_acknowledge(f->s, u->agent_id, u->task_id, u->uuid, 16),
        0);
    if (!was_acked(f, u->uuid)) {
        ck_assert_int_lt(f->nacked, HFW_MAX_UPDATES);
        memcpy(f->acked[f->nacked++], u->uuid, 16);
    }
}

int hfw_ack_held(struct hfw *f)
{
    int n = 0;
    for (int i = 0; i < f->nupdates; i++) {
        const struct hfw_update *u = &f->updates[i];
        if (u->has_uuid && !was_acked(f, u->uuid)) {
            ack(f, u);
            n++;
        }
    }
    return n;
}

/* ---- Callbacks ---- */

static void on_subscribed(struct offerd_sched *s, const char *framework_id,
                          double hb, const Mesos__V1__Scheduler__Event *ev,
                          void *user)
{
    (void)s;
    (void)hb;
    (void)ev;
    struct hfw *f = user;
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
    ((struct hfw *)user)->subscribed = false;
}

static void decline(struct hfw *f, const char *offer_id, double secs)
{
    Mesos__V1__Filters filters = MESOS__V1__FILTERS__INIT;
    filters.has_refuse_seconds = 1;
    filters.refuse_seconds = secs;
    const char *ids[1] = {offer_id};
    ck_assert_int_eq(offerd_sched_decline(f->s, ids, 1, &filters), 0);
}

int hfw_pack_launches(struct hfw_launches *l, const Mesos__V1__Offer *offer,
                      const char *task_res, const char *const *ids,
                      const char *const *commands, int ntasks,
                      double grace_secs)
{
    res_list avail = RES_LIST_INIT, want = RES_LIST_INIT;
    char err[256];
    ck_assert_msg(res_list_from_pb(offer->resources, offer->n_resources, &avail,
                                   err, sizeof(err)) == 0,
                  "offer resources: %s", err);
    ck_assert_msg(res_list_parse(task_res, NULL, &want, err, sizeof(err)) == 0,
                  "task resources: %s", err);
    const char *role =
        offer->allocation_info != NULL ? offer->allocation_info->role : "*";
    mesos__v1__duration_info__init(&l->grace);
    mesos__v1__kill_policy__init(&l->kp);
    l->grace.nanoseconds = (int64_t)(grace_secs * 1e9);
    l->kp.grace_period = &l->grace;
    int n = 0;
    while (n < ntasks && n < HFW_MAX_PER_ACCEPT) {
        res_list taken = RES_LIST_INIT;
        if (sched_fit_take(&avail, &want, role, &taken) != 0)
            break;
        l->pres[n] = res_list_to_pb(&taken, false, &l->nres[n]);
        res_list_clear(&taken);
        mesos__v1__task_id__init(&l->tids[n]);
        l->tids[n].value = (char *)ids[n];
        mesos__v1__command_info__init(&l->cmds[n]);
        l->cmds[n].has_shell = 1;
        l->cmds[n].shell = 1;
        l->cmds[n].value = (char *)commands[n];
        Mesos__V1__TaskInfo *ti = &l->infos[n];
        mesos__v1__task_info__init(ti);
        ti->name = (char *)ids[n];
        ti->task_id = &l->tids[n];
        ti->agent_id = offer->agent_id;
        ti->n_resources = l->nres[n];
        ti->resources = l->pres[n];
        ti->command = &l->cmds[n];
        if (grace_secs > 0)
            ti->kill_policy = &l->kp;
        l->pinfos[n] = ti;
        mesos__v1__offer__operation__launch__init(&l->launches[n]);
        l->launches[n].n_task_infos = 1;
        l->launches[n].task_infos = &l->pinfos[n];
        mesos__v1__offer__operation__init(&l->opv[n]);
        l->opv[n].has_type = 1;
        l->opv[n].type = MESOS__V1__OFFER__OPERATION__TYPE__LAUNCH;
        l->opv[n].launch = &l->launches[n];
        l->ops[n] = &l->opv[n];
        n++;
    }
    res_list_clear(&avail);
    res_list_clear(&want);
    l->n = n;
    return n;
}

void hfw_launches_clear(struct hfw_launches *l)
{
    for (int i = 0; i < l->n; i++)
        res_pb_array_free(l->pres[i], l->nres[i]);
    l->n = 0;
}

/* Launch as many pending tasks as fit in the offer, in one ACCEPT. */
static void launch_on(struct hfw *f, const Mesos__V1__Offer *offer)
{
    const char *ids[HFW_MAX_PER_ACCEPT], *cmds[HFW_MAX_PER_ACCEPT];
    int want = 0;
    for (; want < f->npending && want < HFW_MAX_PER_ACCEPT; want++) {
        ids[want] = f->pending[want].task_id;
        cmds[want] = f->pending[want].command;
    }
    static struct hfw_launches l;
    int n = hfw_pack_launches(&l, offer,
                              f->task_res ? f->task_res : DEFAULT_TASK_RES, ids,
                              cmds, want, f->kill_grace_secs);
    for (int i = 0; i < n; i++) {
        l.infos[i].health_check = (Mesos__V1__HealthCheck *)f->health_check;
        l.infos[i].check = (Mesos__V1__CheckInfo *)f->check;
    }
    const char *oid = offer->id->value;
    if (n == 0) {
        decline(f, oid, 1);
        return;
    }
    for (int i = 0; i < n && f->edit_task != NULL; i++)
        f->edit_task(&l.infos[i], f->edit_arg);
    Mesos__V1__Filters filters = MESOS__V1__FILTERS__INIT;
    filters.has_refuse_seconds = 1;
    filters.refuse_seconds = 1;
    ck_assert_int_eq(
        offerd_sched_accept(f->s, &oid, 1, l.ops, (size_t)n, &filters), 0);
    hfw_launches_clear(&l);
    memmove(f->pending, f->pending + n,
            (size_t)(f->npending - n) * sizeof(f->pending[0]));
    f->npending -= n;
}

static void on_offers(struct offerd_sched *s,
                      const Mesos__V1__Scheduler__Event *ev, void *user)
{
    (void)s;
    struct hfw *f = user;
    for (size_t i = 0; i < ev->offers->n_offers; i++) {
        const Mesos__V1__Offer *o = ev->offers->offers[i];
        if (f->npending > 0)
            launch_on(f, o);
        else
            decline(f, o->id->value, 1);
    }
}

static void on_update(struct offerd_sched *s,
                      const Mesos__V1__Scheduler__Event *ev, void *user)
{
    (void)s;
    struct hfw *f = user;
    const Mesos__V1__TaskStatus *st = ev->update->status;
    ck_assert_int_lt(f->nupdates, HFW_MAX_UPDATES);
    struct hfw_update *u = &f->updates[f->nupdates++];
    memset(u, 0, sizeof(*u));
    snprintf(u->task_id, sizeof(u->task_id), "%s", st->task_id->value);
    snprintf(u->agent_id, sizeof(u->agent_id), "%s",
             st->agent_id != NULL ? st->agent_id->value : "");
    u->state = (int)st->state;
    u->reason = st->has_reason ? (int)st->reason : -1;
    u->source = st->has_source ? (int)st->source : -1;
    snprintf(u->message, sizeof(u->message), "%s",
             st->message != NULL ? st->message : "");
    u->healthy = st->has_healthy ? (int)st->healthy : -1;
    const Mesos__V1__CheckStatusInfo *cs = st->check_status;
    u->has_check_status = cs != NULL;
    u->check_value = -1;
    if (cs != NULL && cs->command != NULL && cs->command->has_exit_code)
        u->check_value = cs->command->exit_code;
    if (cs != NULL && cs->http != NULL && cs->http->has_status_code)
        u->check_value = (int)cs->http->status_code;
    if (cs != NULL && cs->tcp != NULL && cs->tcp->has_succeeded)
        u->check_value = cs->tcp->succeeded ? 1 : 0;
    u->has_uuid = st->has_uuid && st->uuid.len == 16;
    if (!u->has_uuid)
        return; /* from the master: nothing to acknowledge */
    memcpy(u->uuid, st->uuid.data, 16);
    bool again = was_acked(f, u->uuid);
    if (again)
        f->acked_again++;
    /* A uuid acknowledged before is acknowledged again (the agent did not
     * get the first one), whatever the policy. */
    if (again || f->ack == HFW_ACK_ALL ||
        (f->ack == HFW_ACK_NONTERMINAL && !task_state_is_terminal(u->state)))
        ack(f, u);
}

static void on_error(struct offerd_sched *s,
                     const Mesos__V1__Scheduler__Event *ev, void *user)
{
    (void)s;
    (void)ev;
    ((struct hfw *)user)->errors++;
}

/* ---- Life ---- */

static bool cond_subscribed(void *arg)
{
    return ((struct hfw *)arg)->subscribed;
}

void hfw_start(struct hfw *f, struct event_base *base, uint16_t master_port,
               enum offerd_encoding enc)
{
    f->base = base;
    Mesos__V1__FrameworkInfo fi = MESOS__V1__FRAMEWORK_INFO__INIT;
    fi.user = (char *)(f->user != NULL ? f->user : "e2e");
    fi.name = (char *)(f->name != NULL ? f->name : "e2e-fw");
    fi.has_failover_timeout = 1;
    fi.failover_timeout = 600;
    struct offerd_sched_options o;
    memset(&o, 0, sizeof(o));
    o.master = f->master;
    o.master_host = "127.0.0.1";
    o.master_port = master_port;
    o.encoding = enc;
    o.framework_info = &fi;
    o.user = f;
    o.auto_acknowledge = false;
    o.backoff_min_ms = 100;
    o.backoff_max_ms = 500;
    o.callbacks.subscribed = on_subscribed;
    o.callbacks.disconnected = on_disconnected;
    o.callbacks.offers = on_offers;
    o.callbacks.update = on_update;
    o.callbacks.error = on_error;
    char err[256];
    f->s = offerd_sched_new(base, &o, err, sizeof(err));
    ck_assert_msg(f->s != NULL, "offerd_sched_new: %s", err);
    ck_assert_int_eq(offerd_sched_start(f->s), 0);
    ck_assert_msg(e2e_loop_until(base, cond_subscribed, f, 10000),
                  "framework %s did not subscribe", fi.name);
}

void hfw_free(struct hfw *f)
{
    offerd_sched_free(f->s);
    f->s = NULL;
    f->subscribed = false;
}

void hfw_launch(struct hfw *f, const char *task_id, const char *command)
{
    ck_assert_int_lt(f->npending, HFW_MAX_TASKS);
    struct hfw_pending *p = &f->pending[f->npending++];
    snprintf(p->task_id, sizeof(p->task_id), "%s", task_id);
    snprintf(p->command, sizeof(p->command), "%s", command);
    ck_assert_int_eq(offerd_sched_revive(f->s, NULL, 0), 0);
}

int hfw_pending(const struct hfw *f)
{
    return f->npending;
}

void hfw_kill(struct hfw *f, const char *task_id)
{
    ck_assert_int_eq(offerd_sched_kill(f->s, task_id, NULL, NULL), 0);
}

int hfw_state(const struct hfw *f, const char *task_id)
{
    int st = -1;
    for (int i = 0; i < f->nupdates; i++)
        if (strcmp(f->updates[i].task_id, task_id) == 0)
            st = f->updates[i].state;
    return st;
}

size_t hfw_updates_of(const struct hfw *f, const char *task_id,
                      const struct hfw_update **out, size_t max)
{
    size_t n = 0;
    for (int i = 0; i < f->nupdates; i++) {
        if (strcmp(f->updates[i].task_id, task_id) != 0)
            continue;
        if (n < max)
            out[n] = &f->updates[i];
        n++;
    }
    return n;
}

size_t hfw_distinct_updates_of(const struct hfw *f, const char *task_id,
                               const struct hfw_update **out, size_t max)
{
    size_t n = 0;
    for (int i = 0; i < f->nupdates; i++) {
        const struct hfw_update *u = &f->updates[i];
        if (strcmp(u->task_id, task_id) != 0)
            continue;
        bool seen = false;
        for (int k = 0; k < i && u->has_uuid && !seen; k++)
            seen = f->updates[k].has_uuid &&
                   memcmp(f->updates[k].uuid, u->uuid, 16) == 0;
        if (seen)
            continue;
        if (n < max)
            out[n] = u;
        n++;
    }
    return n;
}
