/*
 * spread: run N copies of a shell command, at most one per machine, with
 * libofferd's offer pool. The same program is shown, whole, in
 * docs/scheduler-library.md.
 *
 *   offerd-pool-example 127.0.0.1:5050 [instances] [command]
 */
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mesos/v1/mesos.pb-c.h"
#include "mesos/v1/scheduler.pb-c.h"
#include "offerd/offer_pool.h"
#include "offerd/placement.h"
#include "offerd/scheduler.h"

struct app {
    struct event_base *base;
    struct offerd_pool *pool;          /* fed by the client */
    struct offerd_request *req;        /* what one copy needs */
    struct offerd_constraints *unique; /* hostname:UNIQUE */
    struct offerd_placements *running; /* where copies run now */
    const char *command;
    int instances, launched, ended, failed;
};

/* Order the pool by free cpus, most first: copies go where room is. */
static double most_cpus_first(const Mesos__V1__Offer *offer,
                              const struct offerd_usable *usable, void *arg)
{
    (void)offer;
    (void)arg;
    return -usable->cpus;
}

/* Launch one copy into an offer taken from the pool. */
static void launch(struct offerd_sched *s, struct app *a,
                   struct offerd_pool_offer *h)
{
    const Mesos__V1__Offer *offer = offerd_pool_offer_get(h);
    struct offerd_fit *fit = offerd_pool_fit_new(a->pool, h);
    Mesos__V1__Resource **res;
    size_t nres;
    if (offerd_fit_take(fit, a->req, &res, &nres) != 0) {
        offerd_fit_free(fit); /* take() checked the fit: not reached */
        return;
    }
    char id[32];
    snprintf(id, sizeof(id), "spread-%d", a->launched);

    Mesos__V1__TaskID tid = MESOS__V1__TASK_ID__INIT;
    Mesos__V1__CommandInfo cmd = MESOS__V1__COMMAND_INFO__INIT;
    Mesos__V1__TaskInfo task = MESOS__V1__TASK_INFO__INIT;
    tid.value = id;
    cmd.has_shell = 1;
    cmd.shell = 1;
    cmd.value = (char *)a->command;
    task.name = "spread";
    task.task_id = &tid;
    task.agent_id = offer->agent_id;
    task.n_resources = nres;
    task.resources = res;
    task.command = &cmd;
    Mesos__V1__TaskInfo *tasks[] = {&task};
    Mesos__V1__Offer__Operation__Launch l =
        MESOS__V1__OFFER__OPERATION__LAUNCH__INIT;
    l.n_task_infos = 1;
    l.task_infos = tasks;
    Mesos__V1__Offer__Operation op = MESOS__V1__OFFER__OPERATION__INIT;
    op.has_type = 1;
    op.type = MESOS__V1__OFFER__OPERATION__TYPE__LAUNCH;
    op.launch = &l;
    Mesos__V1__Offer__Operation *ops[] = {&op};
    const char *ids[] = {offerd_pool_offer_id(h)};
    if (offerd_sched_accept(s, ids, 1, ops, 1, NULL) == 0) {
        offerd_placements_add(a->running, id, offer);
        a->launched++;
        printf("launched %s on %s\n", id, offerd_pool_offer_hostname(h));
    }
    offerd_resources_free(res, nres);
    offerd_fit_free(fit);
}

/* The client has put the new offers into the pool before calling this. */
static void offers(struct offerd_sched *s,
                   const Mesos__V1__Scheduler__Event *ev, void *user)
{
    struct app *a = user;
    (void)ev;
    struct offerd_pool_offer *h;
    while (a->launched < a->instances &&
           (h = offerd_pool_take(a->pool, a->req, a->unique, a->running,
                                 NULL)) != NULL) {
        launch(s, a, h);
        offerd_pool_release(a->pool, h);
    }
    /* Give back the rest; the client sends the DECLINE on return. */
    for (h = offerd_pool_first(a->pool); h != NULL;
         h = offerd_pool_next(a->pool, h))
        offerd_pool_decline(a->pool, h, -1);
}

static void update(struct offerd_sched *s,
                   const Mesos__V1__Scheduler__Event *ev, void *user)
{
    struct app *a = user;
    const Mesos__V1__TaskStatus *st = ev->update->status;
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
        &mesos__v1__task_state__descriptor, st->state);
    printf("%s: %s\n", st->task_id->value, v != NULL ? v->name : "?");
    switch (st->state) {
    case MESOS__V1__TASK_STATE__TASK_STAGING:
    case MESOS__V1__TASK_STATE__TASK_STARTING:
    case MESOS__V1__TASK_STATE__TASK_RUNNING:
        return;
    default: /* terminal: its machine is free again */
        if (offerd_placements_remove(a->running, st->task_id->value) != 0)
            return; /* a repeated update */
        a->ended++;
        if (st->state != MESOS__V1__TASK_STATE__TASK_FINISHED)
            a->failed++;
        if (a->ended == a->instances)
            offerd_sched_teardown(s); /* the master closes the stream */
    }
}

static void disconnected(struct offerd_sched *s, const char *reason,
                         bool will_retry, void *user)
{
    struct app *a = user;
    (void)s;
    if (!will_retry) { /* torn down, or refused for good */
        fprintf(stderr, "done: %s\n", reason);
        event_base_loopbreak(a->base);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2 || strchr(argv[1], ':') == NULL) {
        fprintf(stderr, "usage: %s IP:PORT [instances] [command]\n", argv[0]);
        return 2;
    }
    char host[64];
    snprintf(host, sizeof(host), "%.*s", (int)(strchr(argv[1], ':') - argv[1]),
             argv[1]);
    struct app a = {
        .command = argc > 3 ? argv[3] : "echo hello",
        .instances = argc > 2 ? atoi(argv[2]) : 3,
    };
    if (a.instances < 1) {
        fprintf(stderr, "instances: at least 1\n");
        return 2;
    }
    char err[256];
    struct offerd_pool_options po = {.score = most_cpus_first};
    a.pool = offerd_pool_new(&po, err, sizeof(err));
    a.req = offerd_request_new("cpus:0.1;mem:32", NULL, err, sizeof(err));
    a.unique = offerd_constraints_parse("hostname:UNIQUE", err, sizeof(err));
    a.running = offerd_placements_new();
    a.base = event_base_new();

    Mesos__V1__FrameworkInfo info = MESOS__V1__FRAMEWORK_INFO__INIT;
    info.user = "nobody";
    info.name = "spread";
    struct offerd_sched_options o = {
        .master_host = host,
        .master_port = (uint16_t)atoi(strchr(argv[1], ':') + 1),
        .encoding = OFFERD_ENCODING_PROTOBUF,
        .framework_info = &info,
        .auto_acknowledge = true,
        .user = &a,
        .callbacks = {.offers = offers,
                      .update = update,
                      .disconnected = disconnected},
    };
    struct offerd_sched *s = offerd_sched_new(a.base, &o, err, sizeof(err));
    if (s == NULL) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    offerd_sched_set_pool(s, a.pool);
    offerd_sched_start(s);
    event_base_dispatch(a.base);

    struct offerd_pool_metrics m;
    offerd_pool_get_metrics(a.pool, &m);
    printf("offers: %llu received, %llu used, %llu declined, %llu expired, "
           "%llu rescinded\n",
           (unsigned long long)m.added, (unsigned long long)m.used,
           (unsigned long long)m.declined, (unsigned long long)m.expired,
           (unsigned long long)m.rescinded);
    offerd_sched_free(s); /* before the pool it feeds */
    offerd_pool_free(a.pool);
    offerd_placements_free(a.running);
    offerd_constraints_free(a.unique);
    offerd_request_free(a.req);
    event_base_free(a.base);
    return a.ended == a.instances && a.failed == 0 ? 0 : 1;
}
