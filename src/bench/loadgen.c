/*
 * offerd-loadgen: load a master with many simulated agents and one
 * scheduler, and print what it costs as one JSON object
 * (docs/performance.md, "The master under load").
 *
 * Everything runs on one libevent loop in this process:
 *  - N simulated agents, each the real agent's own master connection
 *    (agent/master_conn: SUBSCRIBE stream, PONGs, POSTed calls in
 *    protobuf). A RUN_TASK is answered with TASK_STARTING; its
 *    acknowledgement with TASK_RUNNING, as the real agent sends one update
 *    of a task at a time. No process is started.
 *  - one framework through libofferd (JSON or protobuf), launching M tasks
 *    on its offers and acknowledging every update;
 *  - a probe calling GET /health every 10 ms (the cheap call), and
 *    optional pollers reading /state back to back.
 * Phases, in order: agents register; tasks launch until all run;
 * endpoints are timed one request at a time; the probe runs alone (idle);
 * the probe runs with the pollers.
 */
#include "agent/master_conn.h"
#include "common/clock.h"
#include "common/http_client.h"
#include "common/ids.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/netport.h"
#include "common/resources.h"
#include "common/resources_pb.h"
#include "mesos/v1/mesos.pb-c.h"
#include "mesos/v1/scheduler.pb-c.h"
#include "offerd/agent.pb-c.h"
#include "offerd/scheduler.h"

#include <event2/event.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#ifndef OFFERD_MASTER_BIN
#define OFFERD_MASTER_BIN "offerd"
#endif

#define PROBE_PERIOD_MS 10
#define TASK_CPUS       0.1
#define TASK_MEM        16.0
#define AGENTS_PER_TICK 100 /* SUBSCRIBEs started per 10 ms */

/* ---- Options ---- */

struct options {
    int agents, tasks, pollers;
    double idle_secs, poll_secs, timeout_secs;
    const char *master; /* host:port, or NULL: start one */
    pid_t pid;          /* of a master given with --master, or 0 */
    const char *offerd; /* the master binary to start */
    bool json;          /* scheduler encoding */
    int endpoint_reads; /* reads of each timed endpoint */
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: offerd-loadgen [options]\n"
            "Simulated agents and a scheduler against an offerd master;\n"
            "prints one JSON object (docs/performance.md).\n"
            "  --agents=N          simulated agents (default 100)\n"
            "  --tasks=M           tasks to launch and run (default 1000)\n"
            "  --pollers=K         clients reading /state back to back in\n"
            "                      the last phase (default 1; 0: none)\n"
            "  --idle-seconds=S    probe alone (default 5)\n"
            "  --poll-seconds=S    probe with the pollers (default 5)\n"
            "  --endpoint-reads=R  reads of each timed endpoint (default 5)\n"
            "  --timeout=S         give up when a phase takes longer\n"
            "                      (default 600)\n"
            "  --scheduler=json|protobuf  the framework's encoding\n"
            "                      (default json)\n"
            "  --master=HOST:PORT  use a running master (default: start\n"
            "                      one, --registry=in_memory, and stop it)\n"
            "  --pid=PID           that master's pid, for RSS and CPU\n"
            "  --offerd=PATH       the master binary to start (default\n"
            "                      the one built with this program)\n"
            "  --help\n");
}

static int parse_options(int argc, char **argv, struct options *o)
{
    *o = (struct options){100,  1000, 1, 5, 5, 600, NULL, 0, OFFERD_MASTER_BIN,
                          true, 5};
    static const struct option longs[] = {
        {"agents", required_argument, NULL, 'a'},
        {"tasks", required_argument, NULL, 't'},
        {"pollers", required_argument, NULL, 'p'},
        {"idle-seconds", required_argument, NULL, 'i'},
        {"poll-seconds", required_argument, NULL, 's'},
        {"endpoint-reads", required_argument, NULL, 'r'},
        {"timeout", required_argument, NULL, 'T'},
        {"scheduler", required_argument, NULL, 'e'},
        {"master", required_argument, NULL, 'm'},
        {"pid", required_argument, NULL, 'P'},
        {"offerd", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        switch (c) {
        case 'a':
            o->agents = atoi(optarg);
            break;
        case 't':
            o->tasks = atoi(optarg);
            break;
        case 'p':
            o->pollers = atoi(optarg);
            break;
        case 'i':
            o->idle_secs = atof(optarg);
            break;
        case 's':
            o->poll_secs = atof(optarg);
            break;
        case 'r':
            o->endpoint_reads = atoi(optarg);
            break;
        case 'T':
            o->timeout_secs = atof(optarg);
            break;
        case 'e':
            if (strcmp(optarg, "json") != 0 && strcmp(optarg, "protobuf") != 0)
                return -1;
            o->json = strcmp(optarg, "json") == 0;
            break;
        case 'm':
            o->master = optarg;
            break;
        case 'P':
            o->pid = (pid_t)atoi(optarg);
            break;
        case 'o':
            o->offerd = optarg;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            return -1;
        }
    }
    if (optind != argc || o->agents < 1 || o->tasks < 0 || o->pollers < 0 ||
        o->endpoint_reads < 1 || o->idle_secs < 0 || o->poll_secs < 0)
        return -1;
    return 0;
}

/* ---- Samples ---- */

struct samples {
    double *v; /* milliseconds */
    size_t n, cap;
    double max;
};

static void samples_add(struct samples *s, double ms)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 64;
        s->v = xreallocarray(s->v, s->cap, sizeof(*s->v));
    }
    s->v[s->n++] = ms;
    if (ms > s->max)
        s->max = ms;
}

static int dbl_cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* Nearest-rank percentile q of s (sorted in place); 0 when empty. */
static double samples_pct(struct samples *s, double q)
{
    if (s->n == 0)
        return 0;
    qsort(s->v, s->n, sizeof(*s->v), dbl_cmp);
    size_t rank = (size_t)ceil(q * (double)s->n);
    return s->v[rank > 0 ? rank - 1 : 0];
}

static json_t *samples_json(struct samples *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "count", json_integer((json_int_t)s->n));
    json_object_set_new(o, "min_ms", json_real(samples_pct(s, 0)));
    json_object_set_new(o, "p50_ms", json_real(samples_pct(s, 0.50)));
    json_object_set_new(o, "p99_ms", json_real(samples_pct(s, 0.99)));
    json_object_set_new(o, "max_ms", json_real(s->max));
    return o;
}

/* ---- /proc ---- */

/* VmRSS and VmHWM of pid in MiB (0 when unknown). */
static void proc_rss(pid_t pid, double *rss, double *peak)
{
    *rss = *peak = 0;
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return;
    char line[256];
    while (fgets(line, sizeof(line), f) != NULL) {
        unsigned long kb;
        if (sscanf(line, "VmRSS: %lu kB", &kb) == 1)
            *rss = (double)kb / 1024;
        else if (sscanf(line, "VmHWM: %lu kB", &kb) == 1)
            *peak = (double)kb / 1024;
    }
    fclose(f);
}

/* utime + stime of pid in ms (from /proc/<pid>/stat), or -1. */
static double proc_cpu_ms(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    char buf[1024];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* the command may hold spaces */
    unsigned long long ut, st;
    if (p == NULL || sscanf(p + 2,
                            "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
                            "%llu %llu",
                            &ut, &st) != 2)
        return -1;
    return (double)(ut + st) * 1000.0 / (double)sysconf(_SC_CLK_TCK);
}

static double self_cpu_ms(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000.0 +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000.0;
}

/* ---- The run ---- */

enum phase {
    PH_AGENTS,
    PH_LAUNCH,
    PH_ENDPOINTS,
    PH_IDLE,
    PH_POLL,
    PH_DONE,
};

struct sim_agent {
    struct lg *lg;
    int index;
    struct agent_conn *conn;
    char *id;
    bool registered;
};

/* An offer waiting for its ACCEPT or DECLINE (the scheduler keeps at most
 * MAX_CALLS_IN_FLIGHT calls open, as a framework bounds its connections). */
struct queued_offer {
    char *id, *agent_id;
    double cpus, mem;
};

#define MAX_CALLS_IN_FLIGHT 64

struct endpoint {
    const char *path;
    struct samples t;
    size_t bytes;
    double srv_sum0, srv_count0; /* the master's histogram before */
    double server_ms; /* the master's mean time per read (its /metrics) */
};

struct lg {
    struct options o;
    struct event_base *base;
    char host[64];
    uint16_t port;
    pid_t pid;
    bool own_master;
    char dir[128];
    enum phase phase;
    int64_t phase_start;
    const char *failure;
    struct event *tick;

    char agent_resources[128];
    struct sim_agent *agents;
    int started, registered;
    int64_t agents_ms;

    struct offerd_sched *sched;
    struct queued_offer *q;
    size_t qhead, qn, qcap;
    res_list task_res;
    int64_t *accept_ns;
    int launched, running;
    struct samples launch_lat;
    int64_t launch_t0, launch_t1;
    double mcpu0, mcpu1, scpu0, scpu1;
    double rss_running, peak_running;
    uint64_t updates;

    struct endpoint eps[4];
    size_t ep, ep_read;
    bool ep_inflight;

    struct event *probe_timer;
    bool probe_inflight;
    int64_t probe_sent;
    struct samples probe_idle, probe_poll;
    int pollers_inflight;
    struct samples poll_state;
};

static void fail(struct lg *lg, const char *why)
{
    if (lg->failure == NULL)
        lg->failure = why;
    event_base_loopbreak(lg->base);
}

static struct http_client_options get_opts(const struct lg *lg,
                                           const char *path)
{
    return (struct http_client_options){
        .host = lg->host,
        .port = lg->port,
        .method = HTTP_GET,
        .path = path,
        .timeout_ms = (int)(lg->o.timeout_secs * 1000),
        .max_body = (size_t)4 << 30,
    };
}

/* A GET whose body is counted as it arrives and not kept, as
 * `curl -o /dev/null` reads it: a 60 MB /state is timed as the master
 * sends it, not as this process copies it into one block afterwards.
 * done(status, body bytes, arg) runs once. */
struct counted_get {
    size_t bytes;
    void (*done)(int status, size_t bytes, void *arg);
    void *arg;
};

static void counted_chunk(const uint8_t *data, size_t len, void *arg)
{
    (void)data;
    ((struct counted_get *)arg)->bytes += len;
}

static void counted_close(const struct http_client_response *r, void *arg)
{
    struct counted_get *c = arg;
    c->done(http_client_status(r), c->bytes, c->arg);
    free(c);
}

static void get_counted(const struct lg *lg, const char *path,
                        void (*done)(int status, size_t bytes, void *arg),
                        void *arg)
{
    struct counted_get *c = xcalloc(1, sizeof(*c));
    c->done = done;
    c->arg = arg;
    struct http_client_options o = get_opts(lg, path);
    struct http_client_stream_cbs cbs = {NULL, counted_chunk, counted_close, c};
    http_client_stream(lg->base, &o, &cbs);
}

/* ---- Simulated agents ---- */

static Offerd__Agent__Call *agent_subscribe(void *arg)
{
    struct sim_agent *a = arg;
    Offerd__Agent__Call *call = xmalloc(sizeof(*call));
    offerd__agent__call__init(call);
    call->type = OFFERD__AGENT__CALL__TYPE__SUBSCRIBE;
    Offerd__Agent__Call__Subscribe *s = xmalloc(sizeof(*s));
    offerd__agent__call__subscribe__init(s);
    call->subscribe = s;
    Mesos__V1__AgentInfo *ai = xmalloc(sizeof(*ai));
    mesos__v1__agent_info__init(ai);
    char host[64];
    snprintf(host, sizeof(host), "lg-agent-%d", a->index);
    ai->hostname = xstrdup(host);
    ai->has_port = 1;
    ai->port = 10000 + a->index % 50000;
    res_list r = RES_LIST_INIT;
    char err[128];
    if (res_list_parse(a->lg->agent_resources, NULL, &r, err, sizeof(err)) != 0)
        abort(); /* our own text */
    ai->resources = res_list_to_pb(&r, true, &ai->n_resources);
    res_list_clear(&r);
    if (a->id != NULL) {
        ai->id = xmalloc(sizeof(*ai->id));
        mesos__v1__agent_id__init(ai->id);
        ai->id->value = xstrdup(a->id);
        call->agent_id = xmalloc(sizeof(*call->agent_id));
        mesos__v1__agent_id__init(call->agent_id);
        call->agent_id->value = xstrdup(a->id);
    }
    s->agent_info = ai;
    s->address = xmalloc(sizeof(*s->address));
    mesos__v1__address__init(s->address);
    s->address->hostname = xstrdup(host);
    s->address->ip = xstrdup("127.0.0.1");
    s->address->port = ai->port;
    s->version = xstrdup("loadgen");
    return call;
}

/* Send one status update of task_id. The first byte of the uuid says which
 * state it carried (1: STARTING, 2: RUNNING), so that the acknowledgement
 * alone tells what comes next; the rest is random as a v4 uuid. */
static void agent_update(struct sim_agent *a, const char *fid,
                         const char *task_id, Mesos__V1__TaskState state)
{
    uint8_t uuid[16];
    id_uuid_v4_bytes(uuid);
    uuid[0] = state == MESOS__V1__TASK_STATE__TASK_STARTING ? 1 : 2;
    Mesos__V1__TaskID tid = MESOS__V1__TASK_ID__INIT;
    tid.value = (char *)task_id;
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = a->id;
    Mesos__V1__FrameworkID fwid = MESOS__V1__FRAMEWORK_ID__INIT;
    fwid.value = (char *)fid;
    Mesos__V1__TaskStatus st = MESOS__V1__TASK_STATUS__INIT;
    st.task_id = &tid;
    st.state = state;
    st.has_source = 1;
    st.source = MESOS__V1__TASK_STATUS__SOURCE__SOURCE_EXECUTOR;
    st.agent_id = &aid;
    st.has_timestamp = 1;
    st.timestamp = clock_wall_secs();
    st.has_uuid = 1;
    st.uuid.data = uuid;
    st.uuid.len = sizeof(uuid);
    Offerd__Agent__Call__Update up = OFFERD__AGENT__CALL__UPDATE__INIT;
    up.framework_id = &fwid;
    up.status = &st;
    up.has_latest_state = 1;
    up.latest_state = state;
    Offerd__Agent__Call call = OFFERD__AGENT__CALL__INIT;
    call.agent_id = &aid;
    call.type = OFFERD__AGENT__CALL__TYPE__UPDATE;
    call.update = &up;
    if (agent_conn_send(a->conn, &call) == 0)
        a->lg->updates++;
}

static void agent_event(const Offerd__Agent__Event *ev, void *arg)
{
    struct sim_agent *a = arg;
    switch (ev->type) {
    case OFFERD__AGENT__EVENT__TYPE__REGISTERED:
        if (ev->registered == NULL || ev->registered->agent_id == NULL)
            return;
        free(a->id);
        a->id = xstrdup(ev->registered->agent_id->value);
        if (!a->registered) {
            a->registered = true;
            a->lg->registered++;
        }
        break;
    case OFFERD__AGENT__EVENT__TYPE__RUN_TASK: {
        const Offerd__Agent__Event__RunTask *rt = ev->run_task;
        if (rt == NULL || rt->task == NULL || rt->framework_info == NULL ||
            rt->framework_info->id == NULL)
            return;
        agent_update(a, rt->framework_info->id->value, rt->task->task_id->value,
                     MESOS__V1__TASK_STATE__TASK_STARTING);
        break;
    }
    case OFFERD__AGENT__EVENT__TYPE__ACKNOWLEDGE: {
        const Offerd__Agent__Event__Acknowledge *ack = ev->acknowledge;
        if (ack != NULL && ack->uuid.len == 16 && ack->uuid.data[0] == 1)
            agent_update(a, ack->framework_id->value, ack->task_id->value,
                         MESOS__V1__TASK_STATE__TASK_RUNNING);
        break;
    }
    default:
        break; /* PINGs are answered by the connection itself */
    }
}

static void agent_disconnected(void *arg)
{
    struct sim_agent *a = arg;
    if (a->registered) {
        a->registered = false;
        a->lg->registered--;
    }
}

/* ---- The scheduler ---- */

static double offer_scalar(const Mesos__V1__Offer *of, const char *name)
{
    double v = 0;
    for (size_t i = 0; i < of->n_resources; i++) {
        const Mesos__V1__Resource *r = of->resources[i];
        if (strcmp(r->name, name) == 0 && r->scalar != NULL &&
            r->n_reservations == 0 &&
            (r->role == NULL || strcmp(r->role, "*") == 0))
            v += r->scalar->value;
    }
    return v;
}

static void offers_pump(struct lg *lg);

static void sched_offers(struct offerd_sched *s,
                         const Mesos__V1__Scheduler__Event *ev, void *user)
{
    (void)s;
    struct lg *lg = user;
    for (size_t i = 0; i < ev->offers->n_offers; i++) {
        const Mesos__V1__Offer *of = ev->offers->offers[i];
        if (lg->qn == lg->qcap) {
            /* Compact, then grow. */
            if (lg->qhead > 0)
                memmove(lg->q, lg->q + lg->qhead,
                        (lg->qn - lg->qhead) * sizeof(*lg->q));
            lg->qn -= lg->qhead;
            lg->qhead = 0;
            if (lg->qn == lg->qcap) {
                lg->qcap = lg->qcap ? lg->qcap * 2 : 1024;
                lg->q = xreallocarray(lg->q, lg->qcap, sizeof(*lg->q));
            }
        }
        lg->q[lg->qn++] = (struct queued_offer){
            xstrdup(of->id->value), xstrdup(of->agent_id->value),
            offer_scalar(of, "cpus"), offer_scalar(of, "mem")};
    }
    offers_pump(lg);
}

/* ACCEPT (launching what fits) or DECLINE queued offers while fewer than
 * MAX_CALLS_IN_FLIGHT calls are open. */
static void offers_pump(struct lg *lg)
{
    struct offerd_sched *s = lg->sched;
    if (s == NULL || !offerd_sched_is_subscribed(s))
        return;
    Mesos__V1__Filters filters = MESOS__V1__FILTERS__INIT;
    filters.has_refuse_seconds = 1;
    filters.refuse_seconds = 3600;
    while (lg->qhead < lg->qn &&
           offerd_sched_pending_calls(s) < MAX_CALLS_IN_FLIGHT) {
        struct queued_offer *of = &lg->q[lg->qhead++];
        const char *ids[] = {of->id};
        int fit = (int)fmin(floor(of->cpus / TASK_CPUS + 1e-9),
                            floor(of->mem / TASK_MEM + 1e-9));
        int k =
            fit < lg->o.tasks - lg->launched ? fit : lg->o.tasks - lg->launched;
        if (k <= 0) {
            offerd_sched_decline(s, ids, 1, &filters);
            free(of->id);
            free(of->agent_id);
            continue;
        }
        size_t nres;
        Mesos__V1__Resource **res = res_list_to_pb(&lg->task_res, true, &nres);
        Mesos__V1__TaskInfo *infos = xcalloc((size_t)k, sizeof(*infos));
        Mesos__V1__TaskInfo **pinfos = xcalloc((size_t)k, sizeof(*pinfos));
        Mesos__V1__TaskID *tids = xcalloc((size_t)k, sizeof(*tids));
        char(*names)[32] = xcalloc((size_t)k, sizeof(*names));
        Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
        aid.value = of->agent_id;
        Mesos__V1__CommandInfo cmd = MESOS__V1__COMMAND_INFO__INIT;
        cmd.value = "sleep 3600";
        int64_t now = clock_monotonic_ns();
        if (lg->launched == 0)
            lg->launch_t0 = now;
        for (int t = 0; t < k; t++) {
            int idx = lg->launched++;
            snprintf(names[t], sizeof(names[t]), "lg-%d", idx);
            lg->accept_ns[idx] = now;
            mesos__v1__task_id__init(&tids[t]);
            tids[t].value = names[t];
            mesos__v1__task_info__init(&infos[t]);
            infos[t].name = "lg";
            infos[t].task_id = &tids[t];
            infos[t].agent_id = &aid;
            infos[t].resources = res;
            infos[t].n_resources = nres;
            infos[t].command = &cmd;
            pinfos[t] = &infos[t];
        }
        Mesos__V1__Offer__Operation__Launch launch =
            MESOS__V1__OFFER__OPERATION__LAUNCH__INIT;
        launch.task_infos = pinfos;
        launch.n_task_infos = (size_t)k;
        Mesos__V1__Offer__Operation op = MESOS__V1__OFFER__OPERATION__INIT;
        op.has_type = 1;
        op.type = MESOS__V1__OFFER__OPERATION__TYPE__LAUNCH;
        op.launch = &launch;
        Mesos__V1__Offer__Operation *ops[] = {&op};
        if (offerd_sched_accept(s, ids, 1, ops, 1, &filters) != 0)
            fail(lg, "ACCEPT could not be sent");
        res_pb_array_free(res, nres);
        free(infos);
        free(pinfos);
        free(tids);
        free(names);
        free(of->id);
        free(of->agent_id);
    }
}

static void sched_update(struct offerd_sched *s,
                         const Mesos__V1__Scheduler__Event *ev, void *user)
{
    (void)s;
    struct lg *lg = user;
    const Mesos__V1__TaskStatus *st = ev->update->status;
    int idx;
    if (st->state != MESOS__V1__TASK_STATE__TASK_RUNNING ||
        sscanf(st->task_id->value, "lg-%d", &idx) != 1 || idx < 0 ||
        idx >= lg->o.tasks || lg->accept_ns[idx] == 0)
        return;
    int64_t now = clock_monotonic_ns();
    samples_add(&lg->launch_lat,
                (double)(now - lg->accept_ns[idx]) / CLOCK_NS_PER_MS);
    lg->accept_ns[idx] = 0; /* a retried update counts once */
    if (++lg->running == lg->o.tasks) {
        lg->launch_t1 = now;
        lg->mcpu1 = lg->pid > 0 ? proc_cpu_ms(lg->pid) : -1;
        lg->scpu1 = self_cpu_ms();
    }
}

static void sched_failed(struct offerd_sched *s, int call_type, int status,
                         const char *reason, void *user)
{
    (void)s;
    (void)user;
    fprintf(stderr, "offerd-loadgen: call %d failed: %d %s\n", call_type,
            status, reason != NULL ? reason : "");
}

static int sched_start(struct lg *lg)
{
    Mesos__V1__FrameworkInfo fi = MESOS__V1__FRAMEWORK_INFO__INIT;
    fi.user = "loadgen";
    fi.name = "offerd-loadgen";
    char *roles[] = {"*"};
    fi.roles = roles;
    fi.n_roles = 1;
    Mesos__V1__FrameworkInfo__Capability cap =
        MESOS__V1__FRAMEWORK_INFO__CAPABILITY__INIT;
    cap.has_type = 1;
    cap.type = MESOS__V1__FRAMEWORK_INFO__CAPABILITY__TYPE__MULTI_ROLE;
    Mesos__V1__FrameworkInfo__Capability *caps[] = {&cap};
    fi.capabilities = caps;
    fi.n_capabilities = 1;
    struct offerd_sched_options so = {0};
    so.master_host = lg->host;
    so.master_port = lg->port;
    so.encoding = lg->o.json ? OFFERD_ENCODING_JSON : OFFERD_ENCODING_PROTOBUF;
    so.framework_info = &fi;
    so.callbacks.offers = sched_offers;
    so.callbacks.update = sched_update;
    so.callbacks.call_failed = sched_failed;
    so.user = lg;
    so.auto_acknowledge = true;
    so.max_event_size = (size_t)1 << 30;
    char err[256];
    lg->sched = offerd_sched_new(lg->base, &so, err, sizeof(err));
    if (lg->sched == NULL) {
        fprintf(stderr, "offerd-loadgen: %s\n", err);
        return -1;
    }
    return offerd_sched_start(lg->sched);
}

/* ---- Probe and pollers ---- */

static void probe_done(const struct http_client_response *r, void *arg)
{
    struct lg *lg = arg;
    lg->probe_inflight = false;
    if (http_client_status(r) != 200)
        return;
    double ms =
        (double)(clock_monotonic_ns() - lg->probe_sent) / CLOCK_NS_PER_MS;
    if (lg->phase == PH_IDLE)
        samples_add(&lg->probe_idle, ms);
    else if (lg->phase == PH_POLL)
        samples_add(&lg->probe_poll, ms);
}

static void on_probe(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct lg *lg = arg;
    /* One probe at a time: a stalled loop shows as one long call. */
    if (lg->probe_inflight || (lg->phase != PH_IDLE && lg->phase != PH_POLL))
        return;
    lg->probe_inflight = true;
    lg->probe_sent = clock_monotonic_ns();
    struct http_client_options o = get_opts(lg, "/health");
    http_client_request(lg->base, &o, probe_done, lg);
}

struct poll_req {
    struct lg *lg;
    int64_t sent;
};

static void poller_next(struct lg *lg);

static void poll_done(int status, size_t bytes, void *arg)
{
    (void)bytes;
    struct poll_req *p = arg;
    struct lg *lg = p->lg;
    lg->pollers_inflight--;
    if (status == 200)
        samples_add(&lg->poll_state,
                    (double)(clock_monotonic_ns() - p->sent) / CLOCK_NS_PER_MS);
    free(p);
    if (lg->phase == PH_POLL)
        poller_next(lg);
}

static void poller_next(struct lg *lg)
{
    struct poll_req *p = xmalloc(sizeof(*p));
    *p = (struct poll_req){lg, clock_monotonic_ns()};
    lg->pollers_inflight++;
    get_counted(lg, "/state", poll_done, p);
}

/* ---- Endpoints ---- */

static void endpoint_next(struct lg *lg);

struct ep_req {
    struct lg *lg;
    int64_t sent;
};

/* The master's own time for route (its sum and count of
 * offerd_http_request_duration_seconds{endpoint="route"} in the /metrics
 * text body); false when absent. */
static bool route_latency(const char *body, const char *route, double *sum,
                          double *count)
{
    char key[160];
    bool ok = true;
    const char *suffix[] = {"_sum", "_count"};
    double *out[] = {sum, count};
    for (size_t i = 0; i < 2; i++) {
        snprintf(key, sizeof(key),
                 "offerd_http_request_duration_seconds%s{endpoint=\"%s\"} ",
                 suffix[i], route);
        const char *p = strstr(body, key);
        if (p == NULL || sscanf(p + strlen(key), "%lf", out[i]) != 1)
            ok = false;
    }
    return ok;
}

/* After step ep_read of the current endpoint: on to the next. */
static void endpoint_step(struct ep_req *e)
{
    struct lg *lg = e->lg;
    size_t reads = (size_t)lg->o.endpoint_reads;
    free(e);
    if (++lg->ep_read == reads + 2) {
        lg->ep_read = 0;
        lg->ep++;
    }
    endpoint_next(lg);
}

/* Step ep_read of the current endpoint: 0 reads /metrics before, 1 to
 * reads the endpoint, reads + 1 reads /metrics after. */
static void endpoint_done(const struct http_client_response *r, void *arg)
{
    struct ep_req *e = arg;
    struct lg *lg = e->lg;
    lg->ep_inflight = false;
    struct endpoint *ep = &lg->eps[lg->ep];
    size_t reads = (size_t)lg->o.endpoint_reads;
    bool metrics = lg->ep_read == 0 || lg->ep_read == reads + 1;
    if (http_client_status(r) != 200) {
        fprintf(stderr, "offerd-loadgen: GET %s: %d %s\n",
                metrics ? "/metrics" : ep->path, http_client_status(r),
                http_client_error(r) ? http_client_error(r) : "");
    } else if (metrics) {
        size_t len;
        const char *body = (const char *)http_client_body(r, &len);
        char route[64];
        snprintf(route, sizeof(route), "%s", ep->path);
        route[strcspn(route, "?")] = '\0';
        double sum, count;
        if (route_latency(body, route, &sum, &count)) {
            if (lg->ep_read == 0) {
                ep->srv_sum0 = sum;
                ep->srv_count0 = count;
            } else if (count > ep->srv_count0) {
                ep->server_ms =
                    (sum - ep->srv_sum0) * 1000.0 / (count - ep->srv_count0);
            }
        }
    }
    endpoint_step(e);
}

/* The endpoint itself, its body counted (get_counted). */
static void endpoint_read_done(int status, size_t bytes, void *arg)
{
    struct ep_req *e = arg;
    struct lg *lg = e->lg;
    lg->ep_inflight = false;
    struct endpoint *ep = &lg->eps[lg->ep];
    if (status != 200) {
        fprintf(stderr, "offerd-loadgen: GET %s: %d\n", ep->path, status);
    } else {
        ep->bytes = bytes;
        samples_add(&ep->t,
                    (double)(clock_monotonic_ns() - e->sent) / CLOCK_NS_PER_MS);
    }
    endpoint_step(e);
}

static void endpoint_next(struct lg *lg)
{
    if (lg->ep == sizeof(lg->eps) / sizeof(lg->eps[0]))
        return; /* the tick moves on */
    struct ep_req *e = xmalloc(sizeof(*e));
    *e = (struct ep_req){lg, clock_monotonic_ns()};
    lg->ep_inflight = true;
    size_t reads = (size_t)lg->o.endpoint_reads;
    bool metrics = lg->ep_read == 0 || lg->ep_read == reads + 1;
    if (!metrics) {
        get_counted(lg, lg->eps[lg->ep].path, endpoint_read_done, e);
        return;
    }
    struct http_client_options o = get_opts(lg, "/metrics");
    http_client_request(lg->base, &o, endpoint_done, e);
}

/* ---- Phases ---- */

static void enter(struct lg *lg, enum phase p)
{
    lg->phase = p;
    lg->phase_start = clock_monotonic_ns();
    switch (p) {
    case PH_LAUNCH:
        lg->mcpu0 = lg->pid > 0 ? proc_cpu_ms(lg->pid) : -1;
        lg->scpu0 = self_cpu_ms();
        if (sched_start(lg) != 0)
            fail(lg, "the scheduler could not start");
        break;
    case PH_ENDPOINTS:
        if (lg->pid > 0)
            proc_rss(lg->pid, &lg->rss_running, &lg->peak_running);
        endpoint_next(lg);
        break;
    case PH_POLL:
        for (int i = 0; i < lg->o.pollers; i++)
            poller_next(lg);
        break;
    case PH_DONE:
        event_base_loopbreak(lg->base);
        break;
    default:
        break;
    }
}

static double phase_secs(const struct lg *lg)
{
    return (double)(clock_monotonic_ns() - lg->phase_start) / CLOCK_NS_PER_SEC;
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct lg *lg = arg;
    if (lg->phase < PH_IDLE && phase_secs(lg) > lg->o.timeout_secs) {
        static char why[128];
        snprintf(why, sizeof(why),
                 "timed out: %d/%d agents registered, %d/%d tasks running",
                 lg->registered, lg->o.agents, lg->running, lg->o.tasks);
        fail(lg, why);
        return;
    }
    switch (lg->phase) {
    case PH_AGENTS:
        for (int i = 0; i < AGENTS_PER_TICK && lg->started < lg->o.agents; i++)
            agent_conn_start(lg->agents[lg->started++].conn);
        if (lg->registered == lg->o.agents) {
            lg->agents_ms =
                (clock_monotonic_ns() - lg->phase_start) / CLOCK_NS_PER_MS;
            enter(lg, PH_LAUNCH);
        }
        break;
    case PH_LAUNCH:
        offers_pump(lg);
        if (lg->running == lg->o.tasks) {
            if (lg->o.tasks == 0) {
                lg->mcpu1 = lg->pid > 0 ? proc_cpu_ms(lg->pid) : -1;
                lg->scpu1 = self_cpu_ms();
            }
            enter(lg, PH_ENDPOINTS);
        }
        break;
    case PH_ENDPOINTS:
        if (!lg->ep_inflight)
            enter(lg, PH_IDLE);
        break;
    case PH_IDLE:
        if (phase_secs(lg) >= lg->o.idle_secs)
            enter(lg, PH_POLL);
        break;
    case PH_POLL:
        if (phase_secs(lg) >= lg->o.poll_secs) {
            lg->phase = PH_DONE; /* pollers stop once their read ends */
            if (lg->pollers_inflight == 0 && !lg->probe_inflight)
                enter(lg, PH_DONE);
        }
        break;
    case PH_DONE:
        if (lg->pollers_inflight == 0 && !lg->probe_inflight)
            event_base_loopbreak(lg->base);
        break;
    }
}

/* SIGINT or SIGTERM: stop, clean up (the master this run started
 * included), print nothing. */
static void on_signal(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    fail(arg, "interrupted");
}

/* ---- The master ---- */

static void health_done(const struct http_client_response *r, void *arg)
{
    *(int *)arg = http_client_status(r);
}

/* Wait until GET /health answers 200 (30 s at most). */
static int wait_healthy(struct lg *lg)
{
    int64_t end = clock_monotonic_ns() + 30 * CLOCK_NS_PER_SEC;
    while (clock_monotonic_ns() < end) {
        int status = -1;
        struct http_client_options o = get_opts(lg, "/health");
        o.timeout_ms = 1000;
        http_client_request(lg->base, &o, health_done, &status);
        while (status == -1)
            event_base_loop(lg->base, EVLOOP_ONCE);
        if (status == 200)
            return 0;
        if (lg->own_master && waitpid(lg->pid, NULL, WNOHANG) == lg->pid)
            return -1;
        usleep(50 * 1000); /* before the loop runs: nothing waits on it */
    }
    return -1;
}

static int start_master(struct lg *lg)
{
    snprintf(lg->dir, sizeof(lg->dir), "/tmp/offerd-loadgen-XXXXXX");
    if (mkdtemp(lg->dir) == NULL)
        return -1;
    lg->port = netport_free_loopback();
    snprintf(lg->host, sizeof(lg->host), "127.0.0.1");
    char port[32], work[160], logp[160];
    snprintf(port, sizeof(port), "--port=%u", (unsigned)lg->port);
    snprintf(work, sizeof(work), "--work_dir=%s/work", lg->dir);
    snprintf(logp, sizeof(logp), "%s/master.log", lg->dir);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        FILE *f = freopen(logp, "w", stderr);
        if (f == NULL || dup2(fileno(stderr), STDOUT_FILENO) < 0)
            _exit(127);
        execl(lg->o.offerd, lg->o.offerd, "--ip=127.0.0.1", port, work,
              "--registry=in_memory", "--logging_level=WARNING", (char *)NULL);
        _exit(127);
    }
    lg->pid = pid;
    lg->own_master = true;
    return 0;
}

static void stop_master(struct lg *lg)
{
    if (!lg->own_master)
        return;
    kill(lg->pid, SIGTERM);
    for (int i = 0; i < 100; i++) {
        if (waitpid(lg->pid, NULL, WNOHANG) == lg->pid)
            goto reaped;
        usleep(50 * 1000);
    }
    kill(lg->pid, SIGKILL);
    waitpid(lg->pid, NULL, 0);
reaped:;
    char cmd[200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", lg->dir);
    if (system(cmd) != 0)
        fprintf(stderr, "offerd-loadgen: could not remove %s\n", lg->dir);
}

/* Raise the fd limit to the hard limit; returns the soft limit after. */
static rlim_t raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 0;
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    getrlimit(RLIMIT_NOFILE, &rl);
    return rl.rlim_cur;
}

/* ---- Report ---- */

static json_t *report(struct lg *lg, rlim_t fds)
{
    json_t *o = json_object();
    json_t *load = json_object();
    json_object_set_new(load, "agents", json_integer(lg->o.agents));
    json_object_set_new(load, "tasks", json_integer(lg->o.tasks));
    json_object_set_new(load, "pollers", json_integer(lg->o.pollers));
    json_object_set_new(load, "scheduler_encoding",
                        json_string(lg->o.json ? "json" : "protobuf"));
    json_object_set_new(load, "fd_limit", json_integer((json_int_t)fds));
    double la[3] = {0, 0, 0};
    if (getloadavg(la, 3) < 1)
        la[0] = 0;
    json_object_set_new(load, "machine_load_1min", json_real(la[0]));
    json_object_set_new(o, "load", load);

    double rss = 0, peak = 0;
    if (lg->pid > 0)
        proc_rss(lg->pid, &rss, &peak);
    json_t *mem = json_object();
    json_object_set_new(mem, "rss_all_running_mib", json_real(lg->rss_running));
    json_object_set_new(mem, "rss_end_mib", json_real(rss));
    json_object_set_new(mem, "peak_rss_mib", json_real(peak));
    json_object_set_new(o, "master_memory", mem);

    json_object_set_new(o, "agents_registered_ms", json_integer(lg->agents_ms));
    double secs = (double)(lg->launch_t1 - lg->launch_t0) / CLOCK_NS_PER_SEC;
    json_t *l = json_object();
    json_object_set_new(l, "seconds", json_real(secs));
    json_object_set_new(l, "launches_per_sec",
                        json_real(secs > 0 ? lg->o.tasks / secs : 0));
    json_object_set_new(l, "accept_to_running", samples_json(&lg->launch_lat));
    double mcpu = lg->mcpu0 >= 0 && lg->mcpu1 >= 0 ? lg->mcpu1 - lg->mcpu0 : -1;
    double scpu = lg->scpu1 - lg->scpu0;
    double per = lg->o.tasks > 0 ? 1000.0 / lg->o.tasks : 0;
    json_object_set_new(l, "master_cpu_ms_per_1k",
                        mcpu >= 0 ? json_real(mcpu * per) : json_null());
    json_object_set_new(l, "loadgen_cpu_ms_per_1k", json_real(scpu * per));
    json_object_set_new(l, "agent_updates_sent",
                        json_integer((json_int_t)lg->updates));
    json_object_set_new(o, "launch", l);

    json_t *eps = json_object();
    for (size_t i = 0; i < sizeof(lg->eps) / sizeof(lg->eps[0]); i++) {
        json_t *e = samples_json(&lg->eps[i].t);
        json_object_set_new(e, "bytes",
                            json_integer((json_int_t)lg->eps[i].bytes));
        json_object_set_new(e, "master_ms", json_real(lg->eps[i].server_ms));
        json_object_set_new(eps, lg->eps[i].path, e);
    }
    json_object_set_new(o, "endpoints", eps);

    json_t *cheap = json_object();
    json_object_set_new(cheap, "call", json_string("GET /health"));
    json_object_set_new(cheap, "idle", samples_json(&lg->probe_idle));
    json_object_set_new(cheap, "during_state_polling",
                        samples_json(&lg->probe_poll));
    json_object_set_new(cheap, "longest_idle_stall_ms",
                        json_real(lg->probe_idle.max));
    json_object_set_new(o, "cheap_call", cheap);
    json_t *polls = samples_json(&lg->poll_state);
    json_object_set_new(o, "state_polling", polls);
    json_object_set_new(o, "loadgen_cpu_ms_total", json_real(self_cpu_ms()));
    return o;
}

int main(int argc, char **argv)
{
    struct lg lg_storage, *lg = &lg_storage;
    memset(lg, 0, sizeof(*lg));
    if (parse_options(argc, argv, &lg->o) != 0) {
        usage(stderr);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    log_set_level(LOG_LEVEL_WARNING);
    rlim_t fds = raise_fd_limit();
    if (fds < (rlim_t)lg->o.agents + 64)
        fprintf(stderr,
                "offerd-loadgen: fd limit %llu may be short for %d agents\n",
                (unsigned long long)fds, lg->o.agents);
    lg->base = event_base_new();
    int rc = 1;

    if (lg->o.master != NULL) {
        unsigned p;
        if (sscanf(lg->o.master, "%63[^:]:%u", lg->host, &p) != 2 || p == 0 ||
            p > 65535) {
            fprintf(stderr, "offerd-loadgen: bad --master\n");
            return 2;
        }
        lg->port = (uint16_t)p;
        lg->pid = lg->o.pid;
    } else if (start_master(lg) != 0) {
        fprintf(stderr, "offerd-loadgen: could not start %s\n", lg->o.offerd);
        return 1;
    }
    if (wait_healthy(lg) != 0) {
        fprintf(stderr, "offerd-loadgen: master %s:%u not healthy\n", lg->host,
                (unsigned)lg->port);
        stop_master(lg);
        return 1;
    }

    int per = (lg->o.tasks + lg->o.agents - 1) / lg->o.agents;
    snprintf(lg->agent_resources, sizeof(lg->agent_resources),
             "cpus:%.1f;mem:%.0f;disk:1024", per * TASK_CPUS + 1,
             per * TASK_MEM + 256);
    char err[128];
    char task_res[64];
    snprintf(task_res, sizeof(task_res), "cpus:%.1f;mem:%.0f", TASK_CPUS,
             TASK_MEM);
    if (res_list_parse(task_res, NULL, &lg->task_res, err, sizeof(err)) != 0)
        abort();
    lg->accept_ns = xcalloc((size_t)lg->o.tasks + 1, sizeof(int64_t));
    lg->agents = xcalloc((size_t)lg->o.agents, sizeof(*lg->agents));
    struct agent_conn_config cc = {
        .master_ip = lg->host,
        .master_port = lg->port,
        .backoff_factor_ns = CLOCK_NS_PER_SEC,
        .backoff_max_ns = 30 * CLOCK_NS_PER_SEC,
    };
    for (int i = 0; i < lg->o.agents; i++) {
        struct sim_agent *a = &lg->agents[i];
        a->lg = lg;
        a->index = i;
        struct agent_conn_cbs cbs = {agent_subscribe, agent_event,
                                     agent_disconnected, a};
        a->conn = agent_conn_new(lg->base, &cc, &cbs);
    }
    const char *paths[] = {"/state", "/metrics/snapshot", "/tasks?limit=100",
                           "/state-summary"};
    for (size_t i = 0; i < 4; i++)
        lg->eps[i].path = paths[i];

    lg->tick = event_new(lg->base, -1, EV_PERSIST, on_tick, lg);
    struct timeval tv = {0, 10 * 1000};
    event_add(lg->tick, &tv);
    struct event *sigint = evsignal_new(lg->base, SIGINT, on_signal, lg);
    struct event *sigterm = evsignal_new(lg->base, SIGTERM, on_signal, lg);
    event_add(sigint, NULL);
    event_add(sigterm, NULL);
    lg->probe_timer = event_new(lg->base, -1, EV_PERSIST, on_probe, lg);
    struct timeval pv = {0, PROBE_PERIOD_MS * 1000};
    event_add(lg->probe_timer, &pv);
    enter(lg, PH_AGENTS);
    event_base_dispatch(lg->base);

    if (lg->failure != NULL) {
        fprintf(stderr, "offerd-loadgen: %s\n", lg->failure);
    } else {
        json_t *o = report(lg, fds);
        char *text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        printf("%s\n", text);
        free(text);
        json_decref(o);
        rc = 0;
    }
    offerd_sched_free(lg->sched);
    for (int i = 0; i < lg->o.agents; i++) {
        agent_conn_free(lg->agents[i].conn);
        free(lg->agents[i].id);
    }
    free(lg->agents);
    for (size_t i = lg->qhead; i < lg->qn; i++) {
        free(lg->q[i].id);
        free(lg->q[i].agent_id);
    }
    free(lg->q);
    free(lg->accept_ns);
    res_list_clear(&lg->task_res);
    free(lg->launch_lat.v);
    free(lg->probe_idle.v);
    free(lg->probe_poll.v);
    free(lg->poll_state.v);
    for (size_t i = 0; i < 4; i++)
        free(lg->eps[i].t.v);
    event_free(lg->tick);
    event_free(sigint);
    event_free(sigterm);
    event_free(lg->probe_timer);
    event_base_free(lg->base);
    stop_master(lg);
    return rc;
}
