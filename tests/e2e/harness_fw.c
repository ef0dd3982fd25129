/*
 * The e2e test framework on libofferd (see harness_fw.h).
 */
#include "harness_fw.h"

#include "cli/offer_fit.h"
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

/* Launch as many pending tasks as fit in the offer, in one ACCEPT. */
static void launch_on(struct hfw *f, const Mesos__V1__Offer *offer)
{
    res_list avail = RES_LIST_INIT, want = RES_LIST_INIT;
    char err[256];
    ck_assert_msg(res_list_from_pb(offer->resources, offer->n_resources, &avail,
                                   err, sizeof(err)) == 0,
                  "offer resources: %s", err);
    ck_assert_msg(res_list_parse(f->task_res ? f->task_res : DEFAULT_TASK_RES,
                                 NULL, &want, err, sizeof(err)) == 0,
                  "task resources: %s", err);
    const char *role =
        offer->allocation_info != NULL ? offer->allocation_info->role : "*";
    Mesos__V1__Offer__Operation opv[HFW_MAX_TASKS], *ops[HFW_MAX_TASKS];
    Mesos__V1__Offer__Operation__Launch launches[HFW_MAX_TASKS];
    Mesos__V1__TaskInfo infos[HFW_MAX_TASKS], *pinfos[HFW_MAX_TASKS];
    Mesos__V1__TaskID tids[HFW_MAX_TASKS];
    Mesos__V1__CommandInfo cmds[HFW_MAX_TASKS];
    Mesos__V1__Resource **pres[HFW_MAX_TASKS];
    size_t nres[HFW_MAX_TASKS];
    Mesos__V1__DurationInfo grace = MESOS__V1__DURATION_INFO__INIT;
    Mesos__V1__KillPolicy kp = MESOS__V1__KILL_POLICY__INIT;
    grace.nanoseconds = (int64_t)(f->kill_grace_secs * 1e9);
    kp.grace_period = &grace;
    int n = 0;
    while (n < f->npending) {
        res_list taken = RES_LIST_INIT;
        if (cli_offer_fit(&avail, &want, role, &taken) != 0)
            break;
        pres[n] = res_list_to_pb(&taken, false, &nres[n]);
        res_list_clear(&taken);
        const struct hfw_pending *p = &f->pending[n];
        mesos__v1__task_id__init(&tids[n]);
        tids[n].value = (char *)p->task_id;
        mesos__v1__command_info__init(&cmds[n]);
        cmds[n].has_shell = 1;
        cmds[n].shell = 1;
        cmds[n].value = (char *)p->command;
        mesos__v1__task_info__init(&infos[n]);
        infos[n].name = (char *)p->task_id;
        infos[n].task_id = &tids[n];
        infos[n].agent_id = offer->agent_id;
        infos[n].n_resources = nres[n];
        infos[n].resources = pres[n];
        infos[n].command = &cmds[n];
        if (f->kill_grace_secs > 0)
            infos[n].kill_policy = &kp;
        pinfos[n] = &infos[n];
        mesos__v1__offer__operation__launch__init(&launches[n]);
        launches[n].n_task_infos = 1;
        launches[n].task_infos = &pinfos[n];
        mesos__v1__offer__operation__init(&opv[n]);
        opv[n].has_type = 1;
        opv[n].type = MESOS__V1__OFFER__OPERATION__TYPE__LAUNCH;
        opv[n].launch = &launches[n];
        ops[n] = &opv[n];
        n++;
    }
    res_list_clear(&avail);
    res_list_clear(&want);
    const char *oid = offer->id->value;
    if (n == 0) {
        decline(f, oid, 1);
        return;
    }
    Mesos__V1__Filters filters = MESOS__V1__FILTERS__INIT;
    filters.has_refuse_seconds = 1;
    filters.refuse_seconds = 1;
    ck_assert_int_eq(
        offerd_sched_accept(f->s, &oid, 1, ops, (size_t)n, &filters), 0);
    for (int i = 0; i < n; i++)
        res_pb_array_free(pres[i], nres[i]);
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
        (f->ack == HFW_ACK_NONTERMINAL &&
         !e2e_task_state_is_terminal(u->state)))
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
    fi.user = "e2e";
    fi.name = (char *)(f->name != NULL ? f->name : "e2e-fw");
    fi.has_failover_timeout = 1;
    fi.failover_timeout = 600;
    struct offerd_sched_options o;
    memset(&o, 0, sizeof(o));
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
