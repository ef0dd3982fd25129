/*
 * offerd-execute: run a shell command as K tasks on an offerd (or Mesos)
 * cluster and wait for them, as Mesos's mesos-execute does. Built on
 * libofferd: it subscribes as a framework, keeps its offers in an offer pool
 * (offerd/offer_pool.h), launches tasks into the offers that fit the
 * resources and the --constraints, declines the rest, prints one line per
 * status update, acknowledges them, and when every task is terminal tears
 * the framework down.
 *
 * Exit status: 0 when every task FINISHED; 1 otherwise (a task failed, was
 * killed or lost; Ctrl-C; the master refused or could not be reached
 * within --subscribe_timeout; bad flags). --help exits 0.
 *
 * The whole program is one event loop: signals arrive as loop events, and
 * the shutdown sequence (drain in-flight calls, TEARDOWN, wait for the
 * master to close the stream) is a small state machine driven by a timer,
 * bounded by a deadline.
 */
#include "cli/cli_auth.h"
#include "cli/master_addr.h"
#include "common/flags.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/resources.h"
#include "common/resources_pb.h"
#include "common/task_state.h"
#include "mesos/v1/mesos.pb-c.h"
#include "mesos/v1/scheduler.pb-c.h"
#include "offerd/offer_pool.h"
#include "offerd/placement.h"
#include "offerd/scheduler.h"

#include <event2/event.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

#define PROGRAM "offerd-execute"

/* Refusal for offers declined while tasks still wait for resources, and
 * once nothing more is needed. */
#define DECLINE_WAITING_SECS 5.0
#define DECLINE_DONE_SECS    3600.0

/* Time allowed to kill the tasks after Ctrl-C, and to tear down. */
#define KILL_GRACE_MS 10000
#define FINISH_MS     5000

/* Most instances one run may launch. */
#define MAX_INSTANCES 10000

struct exec_flags {
    const char *master;
    const char *name;
    const char *command;
    const char *resources;
    const char *constraints;
    int64_t instances;
    const char *role;
    const char *encoding;
    const char *framework_name;
    bool checkpoint;
    int64_t kill_after_ns;
    int64_t subscribe_timeout_ns;
    const char *logging_level;
    const char *principal;   /* --principal (HTTP Basic), or NULL */
    const char *secret;      /* --secret */
    const char *secret_file; /* --secret_file */
};

struct task {
    char *id;
    char *agent_id;        /* set once launched */
    bool launched;         /* submitted in an ACCEPT */
    bool terminal;         /* a terminal update arrived */
    bool finished;         /* ... and it was TASK_FINISHED */
    bool kill_armed;       /* --kill_after timer started */
    struct event *kill_ev; /* --kill_after timer, NULL when unused */
    struct execute *x;
};

/* Phases of the run. */
enum phase {
    PH_RUNNING,  /* launching and waiting for tasks */
    PH_KILLING,  /* Ctrl-C: kills sent, waiting for terminal updates */
    PH_DRAINING, /* waiting for in-flight calls (acks) before TEARDOWN */
    PH_TEARDOWN, /* TEARDOWN sent, waiting for the master */
    PH_DONE,     /* leaving the loop */
};

struct execute {
    struct event_base *base;
    struct exec_flags f;
    struct offerd_sched *s;
    struct offerd_pool *pool;               /* the framework's offers */
    struct offerd_request *req;             /* resources of each task */
    struct offerd_constraints *constraints; /* NULL: none */
    struct offerd_placements *placements;   /* launched, not yet terminal */
    bool waiting_said; /* "cannot be placed" printed since the last launch */
    struct task *tasks;
    int ntasks;
    int nlaunched;
    int nterminal;
    enum phase phase;
    int exit_code;
    bool suppressed;
    struct event *sigint_ev, *sigterm_ev;
    struct event *subscribe_deadline; /* not subscribed within the timeout */
    struct event *step_ev;            /* drives PH_DRAINING/PH_TEARDOWN */
    struct event *phase_deadline;     /* bounds PH_KILLING..PH_TEARDOWN */
};

static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* One line on stdout, flushed (the output is often a pipe or a file). */
static void out(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    fflush(stdout);
}

static void err_line(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static void err_line(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, PROGRAM ": ");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
}

static void arm_ms(struct event *ev, int64_t ms)
{
    struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};
    evtimer_add(ev, &tv);
}

static struct task *find_task(struct execute *x, const char *id)
{
    for (int i = 0; i < x->ntasks; i++)
        if (strcmp(x->tasks[i].id, id) == 0)
            return &x->tasks[i];
    return NULL;
}

/* ---- Ending ---- */

static void quit(struct execute *x)
{
    x->phase = PH_DONE;
    event_base_loopexit(x->base, NULL);
}

/* Start the shutdown: wait for in-flight calls, TEARDOWN, wait for the
 * master, leave (each step bounded by FINISH_MS in all). */
static void finish(struct execute *x, int code)
{
    if (x->phase == PH_DRAINING || x->phase == PH_TEARDOWN ||
        x->phase == PH_DONE)
        return;
    x->exit_code = code;
    if (!offerd_sched_is_subscribed(x->s)) {
        quit(x);
        return;
    }
    x->phase = PH_DRAINING;
    evtimer_del(x->phase_deadline);
    arm_ms(x->phase_deadline, FINISH_MS);
    arm_ms(x->step_ev, 0);
}

static void on_step(evutil_socket_t fd, short what, void *arg)
{
    struct execute *x = arg;
    (void)fd;
    (void)what;
    size_t pending = offerd_sched_pending_calls(x->s);
    if (x->phase == PH_DRAINING && pending == 0) {
        if (offerd_sched_teardown(x->s) != 0) {
            quit(x);
            return;
        }
        x->phase = PH_TEARDOWN;
        log_info("tearing down framework %s", offerd_sched_framework_id(x->s));
    } else if (x->phase == PH_TEARDOWN && pending == 0) {
        /* TEARDOWN answered (a failure was reported by on_call_failed). */
        quit(x);
        return;
    }
    if (x->phase == PH_DRAINING || x->phase == PH_TEARDOWN)
        arm_ms(x->step_ev, 10);
}

static void on_phase_deadline(evutil_socket_t fd, short what, void *arg)
{
    struct execute *x = arg;
    (void)fd;
    (void)what;
    if (x->phase == PH_KILLING) {
        err_line("tasks not terminal %d ms after the kill; tearing down",
                 KILL_GRACE_MS);
        finish(x, 1);
        return;
    }
    if (x->phase == PH_TEARDOWN)
        err_line("no answer to TEARDOWN within %d ms", FINISH_MS);
    quit(x);
}

/* Every task is terminal (or will never launch): done. */
static void check_all_terminal(struct execute *x)
{
    if (x->phase == PH_KILLING) {
        if (x->nterminal == x->nlaunched)
            finish(x, 1);
        return;
    }
    if (x->nterminal < x->ntasks)
        return;
    int finished = 0;
    for (int i = 0; i < x->ntasks; i++)
        finished += x->tasks[i].finished;
    finish(x, finished == x->ntasks ? 0 : 1);
}

/* ---- Killing ---- */

static void kill_task(struct execute *x, struct task *t)
{
    if (!t->launched || t->terminal)
        return;
    if (offerd_sched_kill(x->s, t->id, t->agent_id, NULL) != 0)
        err_line("cannot kill task %s now (not subscribed)", t->id);
}

static void on_kill_after(evutil_socket_t fd, short what, void *arg)
{
    struct task *t = arg;
    (void)fd;
    (void)what;
    if (t->terminal)
        return;
    out("killing task %s (--kill_after)", t->id);
    kill_task(t->x, t);
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
    struct execute *x = arg;
    (void)what;
    if (x->phase != PH_RUNNING) {
        err_line("%s again: exiting at once", strsignal((int)sig));
        x->exit_code = 1;
        quit(x);
        return;
    }
    int active = x->nlaunched - x->nterminal;
    err_line("%s: killing %d task%s and tearing down", strsignal((int)sig),
             active, active == 1 ? "" : "s");
    if (active == 0 || !offerd_sched_is_subscribed(x->s)) {
        finish(x, 1);
        return;
    }
    x->phase = PH_KILLING;
    arm_ms(x->phase_deadline, KILL_GRACE_MS);
    for (int i = 0; i < x->ntasks; i++)
        kill_task(x, &x->tasks[i]);
}

/* ---- Offers ---- */

static void decline(struct execute *x, const char *offer_id, double secs)
{
    Mesos__V1__Filters filters = MESOS__V1__FILTERS__INIT;
    filters.has_refuse_seconds = 1;
    filters.refuse_seconds = secs;
    const char *ids[1] = {offer_id};
    offerd_sched_decline(x->s, ids, 1, &filters);
}

/* Tasks built for one ACCEPT; everything here is owned by it. */
struct launch {
    Mesos__V1__TaskInfo *infos;
    Mesos__V1__TaskInfo **ptrs;
    Mesos__V1__TaskID *tids;
    Mesos__V1__CommandInfo cmd;
    Mesos__V1__AgentID aid;
    Mesos__V1__Resource ***res; /* per task, from offerd_fit_take */
    size_t *nres;
    struct task **which;
    int n;
};

static void launch_free(struct launch *l)
{
    for (int i = 0; i < l->n; i++)
        offerd_resources_free(l->res[i], l->nres[i]);
    free(l->infos);
    free(l->ptrs);
    free(l->tids);
    free(l->res);
    free(l->nres);
    free(l->which);
}

/*
 * Launch as many waiting tasks as fit into an offer taken from the pool,
 * each one checked against the constraints with the tasks placed before it
 * (which may be on this very offer). Returns the number submitted.
 */
static int launch_into(struct execute *x, struct offerd_pool_offer *h)
{
    const Mesos__V1__Offer *offer = offerd_pool_offer_get(h);
    const char *oid = offerd_pool_offer_id(h);
    int remaining = x->ntasks - x->nlaunched;
    struct launch l;
    memset(&l, 0, sizeof(l));
    l.infos = xcalloc((size_t)remaining, sizeof(*l.infos));
    l.ptrs = xcalloc((size_t)remaining, sizeof(*l.ptrs));
    l.tids = xcalloc((size_t)remaining, sizeof(*l.tids));
    l.res = xcalloc((size_t)remaining, sizeof(*l.res));
    l.nres = xcalloc((size_t)remaining, sizeof(*l.nres));
    l.which = xcalloc((size_t)remaining, sizeof(*l.which));
    mesos__v1__command_info__init(&l.cmd);
    l.cmd.has_shell = 1;
    l.cmd.shell = 1;
    l.cmd.value = (char *)x->f.command;
    mesos__v1__agent_id__init(&l.aid);
    l.aid.value = (char *)offerd_pool_offer_agent_id(h);

    struct offerd_fit *fit = offerd_pool_fit_new(x->pool, h);
    for (int i = 0; i < x->ntasks && l.n < remaining; i++) {
        struct task *t = &x->tasks[i];
        if (t->launched)
            continue;
        if (!offerd_constraints_match(x->constraints, offer, x->placements))
            break;
        int k = l.n;
        if (offerd_fit_take(fit, x->req, &l.res[k], &l.nres[k]) != 0)
            break;
        l.n++;
        offerd_placements_add(x->placements, t->id, offer);
        mesos__v1__task_id__init(&l.tids[k]);
        l.tids[k].value = t->id;
        Mesos__V1__TaskInfo *ti = &l.infos[k];
        mesos__v1__task_info__init(ti);
        ti->name = (char *)x->f.name;
        ti->task_id = &l.tids[k];
        ti->agent_id = &l.aid;
        ti->n_resources = l.nres[k];
        ti->resources = l.res[k];
        ti->command = &l.cmd;
        l.ptrs[k] = ti;
        l.which[k] = t;
    }
    offerd_fit_free(fit);

    if (l.n == 0) {
        /* The pool found it fitting, so this does not happen; the offer
         * is ours (used) all the same: give it back. */
        decline(x, oid, DECLINE_WAITING_SECS);
        launch_free(&l);
        return 0;
    }
    Mesos__V1__Offer__Operation op = MESOS__V1__OFFER__OPERATION__INIT;
    Mesos__V1__Offer__Operation__Launch launch =
        MESOS__V1__OFFER__OPERATION__LAUNCH__INIT;
    launch.n_task_infos = (size_t)l.n;
    launch.task_infos = l.ptrs;
    op.has_type = 1;
    op.type = MESOS__V1__OFFER__OPERATION__TYPE__LAUNCH;
    op.launch = &launch;
    Mesos__V1__Offer__Operation *ops[1] = {&op};
    const char *ids[1] = {oid};
    bool sent = offerd_sched_accept(x->s, ids, 1, ops, 1, NULL) == 0;
    for (int k = 0; k < l.n; k++) {
        struct task *t = l.which[k];
        if (!sent) {
            offerd_placements_remove(x->placements, t->id);
            continue;
        }
        t->launched = true;
        free(t->agent_id);
        t->agent_id = xstrdup(l.aid.value);
        x->nlaunched++;
        out("submitted task %s to agent %s", t->id, t->agent_id);
    }
    int n = sent ? l.n : 0;
    launch_free(&l);
    return n;
}

/* Place the waiting tasks into the pool's offers, in the pool's order. */
static void place_tasks(struct execute *x)
{
    while (x->phase == PH_RUNNING && x->nlaunched < x->ntasks) {
        struct offerd_pool_find_report rep;
        struct offerd_pool_offer *h = offerd_pool_take(
            x->pool, x->req, x->constraints, x->placements, &rep);
        if (h == NULL) {
            if (rep.constrained > 0 && !x->waiting_said) {
                int waiting = x->ntasks - x->nlaunched;
                char text[256];
                if (offerd_constraints_format(x->constraints, text,
                                              sizeof(text)) != 0)
                    snprintf(text, sizeof(text), "the constraints");
                out("waiting: %d task%s cannot be placed on the offered "
                    "agents under %s",
                    waiting, waiting == 1 ? "" : "s", text);
                x->waiting_said = true;
            }
            return;
        }
        int n = launch_into(x, h);
        offerd_pool_release(x->pool, h);
        if (n == 0)
            return;
        x->waiting_said = false;
    }
}

static void on_offers(struct offerd_sched *s,
                      const Mesos__V1__Scheduler__Event *ev, void *user)
{
    struct execute *x = user;
    (void)ev; /* the client put them into the pool already */
    place_tasks(x);
    /* Decline what is left (the client sends it when this returns): back
     * soon while tasks wait, for long once nothing more is needed. */
    bool done = x->phase != PH_RUNNING || x->nlaunched == x->ntasks;
    double secs = done ? DECLINE_DONE_SECS : DECLINE_WAITING_SECS;
    for (struct offerd_pool_offer *h = offerd_pool_first(x->pool); h != NULL;
         h = offerd_pool_next(x->pool, h))
        offerd_pool_decline(x->pool, h, secs);
    if (x->nlaunched == x->ntasks && !x->suppressed &&
        offerd_sched_suppress(s, NULL, 0) == 0)
        x->suppressed = true;
}

/* ---- Other events ---- */

static void on_subscribed(struct offerd_sched *s, const char *framework_id,
                          double hb, const Mesos__V1__Scheduler__Event *ev,
                          void *user)
{
    struct execute *x = user;
    (void)hb;
    (void)ev;
    evtimer_del(x->subscribe_deadline);
    out("subscribed with framework id %s", framework_id);
    /* After a re-subscription, ask for the state of the tasks still
     * running, in case an update was missed meanwhile. */
    struct offerd_reconcile_task *rt = xcalloc((size_t)x->ntasks, sizeof(*rt));
    size_t n = 0;
    for (int i = 0; i < x->ntasks; i++) {
        struct task *t = &x->tasks[i];
        if (t->launched && !t->terminal) {
            rt[n].task_id = t->id;
            rt[n].agent_id = t->agent_id;
            n++;
        }
    }
    if (n > 0)
        offerd_sched_reconcile(s, rt, n);
    free(rt);
    if (x->phase == PH_KILLING)
        for (int i = 0; i < x->ntasks; i++)
            kill_task(x, &x->tasks[i]);
}

static void on_update(struct offerd_sched *s,
                      const Mesos__V1__Scheduler__Event *ev, void *user)
{
    struct execute *x = user;
    const Mesos__V1__TaskStatus *st = ev->update->status;
    const char *id = st->task_id->value;
    if (st->message != NULL && st->message[0] != '\0')
        out("task %s is in state %s (%s)", id, task_state_name(st->state),
            st->message);
    else
        out("task %s is in state %s", id, task_state_name(st->state));
    /* Acknowledge here, before a TEARDOWN this update may trigger. */
    if (st->has_uuid && st->agent_id != NULL)
        offerd_sched_acknowledge(s, st->agent_id->value, id, st->uuid.data,
                                 st->uuid.len);
    struct task *t = find_task(x, id);
    if (t == NULL || t->terminal)
        return;
    if (st->state == MESOS__V1__TASK_STATE__TASK_RUNNING &&
        x->f.kill_after_ns > 0 && !t->kill_armed) {
        t->kill_armed = true;
        t->kill_ev = evtimer_new(x->base, on_kill_after, t);
        arm_ms(t->kill_ev, x->f.kill_after_ns / 1000000);
    }
    if (task_state_is_terminal(st->state)) {
        t->terminal = true;
        offerd_placements_remove(x->placements, t->id);
        t->finished = st->state == MESOS__V1__TASK_STATE__TASK_FINISHED;
        if (!t->launched) {
            /* Known only from reconciliation: count it as launched. */
            t->launched = true;
            x->nlaunched++;
        }
        x->nterminal++;
        if (t->kill_ev != NULL)
            evtimer_del(t->kill_ev);
        check_all_terminal(x);
    }
}

static void on_error(struct offerd_sched *s,
                     const Mesos__V1__Scheduler__Event *ev, void *user)
{
    struct execute *x = user;
    (void)s;
    err_line("the master sent an ERROR: %s", ev->error->message);
    x->exit_code = 1;
    quit(x);
}

static void on_disconnected(struct offerd_sched *s, const char *reason,
                            bool will_retry, void *user)
{
    struct execute *x = user;
    (void)s;
    if (x->phase == PH_TEARDOWN || x->phase == PH_DONE) {
        if (!will_retry)
            quit(x);
        return;
    }
    if (!will_retry) {
        err_line("disconnected from the master: %s", reason);
        x->exit_code = 1;
        quit(x);
        return;
    }
    err_line("disconnected from the master (%s); reconnecting", reason);
    if (!evtimer_pending(x->subscribe_deadline, NULL))
        arm_ms(x->subscribe_deadline, x->f.subscribe_timeout_ns / 1000000);
}

static void on_call_failed(struct offerd_sched *s, int call_type, int status,
                           const char *reason, void *user)
{
    struct execute *x = user;
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
        &mesos__v1__scheduler__call__type__descriptor, call_type);
    const char *name = v != NULL ? v->name : "call";
    if (status == 0)
        err_line("%s failed: %s", name, reason);
    else
        err_line("%s failed: %d %s", name, status, reason);
    if (call_type == MESOS__V1__SCHEDULER__CALL__TYPE__ACCEPT &&
        x->phase == PH_RUNNING) {
        /* The tasks of that ACCEPT will never run. */
        finish(x, 1);
    } else if (call_type == MESOS__V1__SCHEDULER__CALL__TYPE__TEARDOWN) {
        quit(x);
    }
    (void)s;
}

static void on_subscribe_deadline(evutil_socket_t fd, short what, void *arg)
{
    struct execute *x = arg;
    (void)fd;
    (void)what;
    char d[32];
    if (flags_format_duration(x->f.subscribe_timeout_ns, d, sizeof(d)) != 0)
        snprintf(d, sizeof(d), "the timeout");
    err_line("could not subscribe to the master at %s within %s", x->f.master,
             d);
    x->exit_code = 1;
    quit(x);
}

/* ---- Set-up ---- */

static const char *current_user(void)
{
    struct passwd *pw = getpwuid(getuid());
    if (pw != NULL && pw->pw_name != NULL)
        return pw->pw_name;
    const char *u = getenv("USER");
    return u != NULL && u[0] ? u : "root";
}

/* Check the flags after parsing; returns 0 or -1 with a reason. */
static int check_flags(struct execute *x, enum offerd_encoding *enc, char *err,
                       size_t errlen)
{
    struct exec_flags *f = &x->f;
    if (f->master == NULL || f->name == NULL || f->command == NULL) {
        snprintf(err, errlen, "missing required flag --%s",
                 f->master == NULL ? "master"
                 : f->name == NULL ? "name"
                                   : "command");
        return -1;
    }
    if (f->name[0] == '\0' || f->command[0] == '\0') {
        snprintf(err, errlen, "--name and --command must not be empty");
        return -1;
    }
    if (f->instances < 1 || f->instances > MAX_INSTANCES) {
        snprintf(err, errlen, "--instances: must be between 1 and %d",
                 MAX_INSTANCES);
        return -1;
    }
    if (strcmp(f->encoding, "json") == 0) {
        *enc = OFFERD_ENCODING_JSON;
    } else if (strcmp(f->encoding, "protobuf") == 0) {
        *enc = OFFERD_ENCODING_PROTOBUF;
    } else {
        snprintf(err, errlen, "--encoding: expected json or protobuf, got '%s'",
                 f->encoding);
        return -1;
    }
    char why[200];
    if (res_role_validate(f->role, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "--role: %s", why);
        return -1;
    }
    x->req = offerd_request_new(f->resources, f->role, why, sizeof(why));
    if (x->req == NULL) {
        snprintf(err, errlen, "--resources: %s", why);
        return -1;
    }
    if (f->constraints != NULL) {
        x->constraints =
            offerd_constraints_parse(f->constraints, why, sizeof(why));
        if (x->constraints == NULL) {
            snprintf(err, errlen, "--constraints: %s", why);
            return -1;
        }
    }
    if (f->subscribe_timeout_ns <= 0) {
        snprintf(err, errlen, "--subscribe_timeout: must be positive");
        return -1;
    }
    enum log_level lvl;
    if (log_parse_level(f->logging_level, &lvl) != 0) {
        snprintf(err, errlen, "--logging_level: unknown level '%s'",
                 f->logging_level);
        return -1;
    }
    log_set_level(lvl);
    return 0;
}

int main(int argc, char **argv)
{
    struct execute x;
    memset(&x, 0, sizeof(x));
    x.exit_code = 1;
    struct exec_flags *f = &x.f;
    const struct flag_def defs[] = {
        {"master", FLAG_STRING, NULL,
         "The master to subscribe with (required): HOST:PORT, "
         "zk://HOST:PORT[,HOST:PORT...]/PATH (the leading master of that "
         "ZooKeeper group, found at start within --subscribe_timeout and "
         "followed when it changes) or file:///PATH (a file holding either).",
         &f->master},
        {"name", FLAG_STRING, NULL,
         "Name of the tasks; task ids are <name>-<i> (required).", &f->name},
        {"command", FLAG_STRING, NULL,
         "Shell command every task runs (required).", &f->command},
        {"resources", FLAG_STRING, "cpus:0.1;mem:32",
         "Resources of each task, in Mesos's text form or as a JSON array.",
         &f->resources},
        {"instances", FLAG_INT, "1", "Number of tasks to launch.",
         &f->instances},
        {"constraints", FLAG_STRING, NULL,
         "Placement constraints in Marathon's vocabulary, as text "
         "(hostname:UNIQUE;rack:CLUSTER:r1) or as a JSON array "
         "([[\"hostname\",\"UNIQUE\"]]); operators UNIQUE, CLUSTER, IS, "
         "GROUP_BY, LIKE, UNLIKE, MAX_PER, over the agent's hostname or an "
         "attribute. They count the tasks not yet ended: a task that cannot "
         "be placed waits (and says so) until one ends or an agent fits.",
         &f->constraints},
        {"role", FLAG_STRING, "*",
         "Role the framework subscribes with; its reservations are used "
         "before unreserved resources.",
         &f->role},
        {"encoding", FLAG_STRING, "protobuf",
         "Encoding of the scheduler API: json or protobuf.", &f->encoding},
        {"framework_name", FLAG_STRING, "offerd-execute instance",
         "Name of the framework.", &f->framework_name},
        {"checkpoint", FLAG_BOOL, "false",
         "Ask agents to checkpoint the tasks (they survive an agent "
         "restart).",
         &f->checkpoint},
        {"kill_after", FLAG_DURATION, NULL,
         "Kill each task this long after it is running (e.g. 10secs, "
         "2mins).",
         &f->kill_after_ns},
        {"subscribe_timeout", FLAG_DURATION, "1mins",
         "Give up (exit 1) when not subscribed this long after starting or "
         "after losing the master; also the framework's failover timeout.",
         &f->subscribe_timeout_ns},
        {"logging_level", FLAG_STRING, "WARNING",
         "Lowest level of library log messages on stderr: DEBUG, INFO, "
         "WARNING or ERROR.",
         &f->logging_level},
        {"principal", FLAG_STRING, NULL,
         "Principal to authenticate as (HTTP Basic) to a master that "
         "authenticates frameworks; also the framework's principal.",
         &f->principal},
        {"secret", FLAG_STRING, NULL,
         "Secret of --principal (prefer --secret_file or OFFERD_SECRET: a "
         "command line is visible to every user of the machine).",
         &f->secret},
        {"secret_file", FLAG_STRING, NULL,
         "File holding the secret of --principal.", &f->secret_file},
    };
    struct flags *fl =
        flags_new(PROGRAM,
                  "Run a shell command as tasks on an offerd (or Mesos) "
                  "cluster and wait for them; exit 0 when all of them "
                  "finished.",
                  defs, sizeof(defs) / sizeof(defs[0]));
    char err[512];
    enum offerd_encoding enc = OFFERD_ENCODING_PROTOBUF;
    enum flags_result fr =
        flags_parse(fl, argc, argv, environ, err, sizeof(err));
    if (fr != FLAGS_OK) {
        int status = flags_report(fl, fr, err);
        flags_free(fl);
        return status;
    }
    char ip[64];
    uint16_t port = 0;
    const char *principal = NULL;
    char *secret = NULL;
    if (check_flags(&x, &enc, err, sizeof(err)) != 0 ||
        cli_credentials(f->principal, f->secret, f->secret_file, &principal,
                        &secret, err, sizeof(err)) != 0) {
        fprintf(stderr, PROGRAM ": %s\nRun '" PROGRAM " --help' for usage.\n",
                err);
        offerd_request_free(x.req);
        offerd_constraints_free(x.constraints);
        flags_free(fl);
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);

    /* The pool declines offers below a minimum of cpus; a task asking for
     * less than that must still get the offers it fits. */
    struct offerd_usable amounts;
    offerd_request_amounts(x.req, &amounts);
    struct offerd_pool_options po;
    memset(&po, 0, sizeof(po));
    if (amounts.cpus < OFFERD_POOL_DEFAULT_MIN_CPUS)
        po.min_cpus = amounts.cpus > 0 ? amounts.cpus : -1;
    x.pool = offerd_pool_new(&po, err, sizeof(err));
    x.placements = offerd_placements_new();

    x.ntasks = (int)f->instances;
    x.tasks = xcalloc((size_t)x.ntasks, sizeof(*x.tasks));
    for (int i = 0; i < x.ntasks; i++) {
        x.tasks[i].id = xasprintf("%s-%d", f->name, i);
        x.tasks[i].x = &x;
    }

    x.base = event_base_new();
    if (x.base == NULL) {
        err_line("cannot create the event loop");
        goto out;
    }
    /* The leader, once, for a clear error when there is none; libofferd
     * then follows a zk:// group (or a file naming one) by itself. */
    if (cli_master_addr_find(x.base, f->master,
                             (int)(f->subscribe_timeout_ns / 1000000), ip,
                             sizeof(ip), &port, err, sizeof(err)) != 0) {
        err_line("%s", err);
        goto out;
    }
    bool detected = strncmp(f->master, "zk://", 5) == 0 ||
                    strncmp(f->master, "file://", 7) == 0;
    x.sigint_ev = evsignal_new(x.base, SIGINT, on_signal, &x);
    x.sigterm_ev = evsignal_new(x.base, SIGTERM, on_signal, &x);
    evsignal_add(x.sigint_ev, NULL);
    evsignal_add(x.sigterm_ev, NULL);
    x.subscribe_deadline = evtimer_new(x.base, on_subscribe_deadline, &x);
    x.step_ev = evtimer_new(x.base, on_step, &x);
    x.phase_deadline = evtimer_new(x.base, on_phase_deadline, &x);

    Mesos__V1__FrameworkInfo info = MESOS__V1__FRAMEWORK_INFO__INIT;
    Mesos__V1__FrameworkInfo__Capability caps[2];
    Mesos__V1__FrameworkInfo__Capability *capp[2] = {&caps[0], &caps[1]};
    for (int i = 0; i < 2; i++)
        mesos__v1__framework_info__capability__init(&caps[i]);
    caps[0].has_type = caps[1].has_type = 1;
    caps[0].type = MESOS__V1__FRAMEWORK_INFO__CAPABILITY__TYPE__MULTI_ROLE;
    caps[1].type =
        MESOS__V1__FRAMEWORK_INFO__CAPABILITY__TYPE__TASK_KILLING_STATE;
    char *roles[1] = {(char *)f->role};
    info.user = (char *)current_user();
    info.name = (char *)f->framework_name;
    info.n_roles = 1;
    info.roles = roles;
    info.n_capabilities = 2;
    info.capabilities = capp;
    info.has_checkpoint = 1;
    info.checkpoint = f->checkpoint;
    info.has_failover_timeout = 1;
    info.failover_timeout = (double)f->subscribe_timeout_ns / 1e9;

    struct offerd_sched_options o;
    memset(&o, 0, sizeof(o));
    o.master = detected ? f->master : NULL;
    o.master_host = ip;
    o.master_port = port;
    o.encoding = enc;
    o.framework_info = &info;
    o.principal = principal;
    o.secret = secret;
    o.user = &x;
    o.auto_acknowledge = false; /* on_update acknowledges, see there */
    o.backoff_min_ms = 250;
    o.backoff_max_ms = 5000;
    o.callbacks.subscribed = on_subscribed;
    o.callbacks.offers = on_offers;
    o.callbacks.update = on_update;
    o.callbacks.error = on_error;
    o.callbacks.disconnected = on_disconnected;
    o.callbacks.call_failed = on_call_failed;
    x.s = offerd_sched_new(x.base, &o, err, sizeof(err));
    if (x.s == NULL) {
        err_line("%s", err);
        goto out;
    }
    offerd_sched_set_pool(x.s, x.pool);
    offerd_sched_start(x.s);
    arm_ms(x.subscribe_deadline, f->subscribe_timeout_ns / 1000000);
    x.phase = PH_RUNNING;
    event_base_dispatch(x.base);

out:
    if (secret != NULL) {
        explicit_bzero(secret, strlen(secret));
        free(secret);
    }
    offerd_sched_free(x.s); /* before the pool it feeds */
    offerd_pool_free(x.pool);
    offerd_placements_free(x.placements);
    offerd_constraints_free(x.constraints);
    offerd_request_free(x.req);
    for (int i = 0; i < x.ntasks; i++) {
        if (x.tasks[i].kill_ev != NULL)
            event_free(x.tasks[i].kill_ev);
        free(x.tasks[i].id);
        free(x.tasks[i].agent_id);
    }
    free(x.tasks);
    if (x.sigint_ev != NULL)
        event_free(x.sigint_ev);
    if (x.sigterm_ev != NULL)
        event_free(x.sigterm_ev);
    if (x.subscribe_deadline != NULL)
        event_free(x.subscribe_deadline);
    if (x.step_ev != NULL)
        event_free(x.step_ev);
    if (x.phase_deadline != NULL)
        event_free(x.phase_deadline);
    if (x.base != NULL)
        event_base_free(x.base);
    flags_free(fl);
    return x.exit_code;
}
