/*
 * End-to-end tests of offerd-execute: the real binary against a fake master
 * run in the test process (a common/http server on a free loopback port,
 * served by the test's own event loop while the child runs). The fake
 * offers one agent's resources, answers an ACCEPT's LAUNCH with scripted
 * status updates (RUNNING, then FINISHED or FAILED once RUNNING is
 * acknowledged, or KILLED when asked to kill), and records every call.
 * The tests check the exit status, the printed lines and the calls the
 * program sent.
 */
#include "harness.h"

#include "common/http.h"
#include "common/json_pb.h"
#include "common/resources.h"
#include "common/resources_pb.h"
#include "mesos/v1/mesos.pb-c.h"
#include "mesos/v1/scheduler.pb-c.h"

#include <arpa/inet.h>
#include <check.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef OFFERD_EXECUTE_BIN
#define OFFERD_EXECUTE_BIN "offerd-execute"
#endif

#define CT(x) MESOS__V1__SCHEDULER__CALL__TYPE__##x
#define TS(x) MESOS__V1__TASK_STATE__TASK_##x

/* What the fake does once a task runs. */
enum script {
    SCRIPT_FINISH, /* FINISHED after RUNNING is acknowledged */
    SCRIPT_FAIL,   /* FAILED after RUNNING is acknowledged */
    SCRIPT_HANG,   /* nothing until a KILL, then KILLED */
    SCRIPT_DROP,   /* close the stream after RUNNING is acknowledged; on
                      RECONCILE answer FINISHED */
};

#define MAX_CALLS 256

struct fake {
    struct event_base *base;
    struct http_server *srv;
    uint16_t port;
    enum script script;
    const char *offers; /* ';'-separated offer specs "id=resources|..." */
    struct http_stream *stream;
    enum http_encoding enc;
    char role[64];
    Mesos__V1__Scheduler__Call *calls[MAX_CALLS];
    char content_type[MAX_CALLS][64];
    size_t ncalls;
    int nsubscribes;
    int running_acked; /* RUNNING acknowledgements seen */
};

static struct fake fk;

/* ---- Fake master ---- */

static void fk_stream_closed(struct http_stream *st, enum http_close_reason why,
                             void *arg)
{
    (void)why;
    (void)arg;
    if (fk.stream == st)
        fk.stream = NULL;
    http_stream_close(st);
}

static void fk_end_stream(void)
{
    if (fk.stream != NULL)
        http_stream_close(fk.stream);
    fk.stream = NULL;
}

static void fk_send(const Mesos__V1__Scheduler__Event *ev)
{
    if (fk.stream == NULL)
        return;
    size_t len;
    uint8_t *b = jpb_encode(&ev->base, (enum jpb_format)fk.enc, &len);
    http_stream_send_record(fk.stream, b, len);
    free(b);
}

static void fk_send_subscribed(void)
{
    Mesos__V1__Scheduler__Event ev = MESOS__V1__SCHEDULER__EVENT__INIT;
    Mesos__V1__Scheduler__Event__Subscribed sub =
        MESOS__V1__SCHEDULER__EVENT__SUBSCRIBED__INIT;
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = "fw-e2e";
    sub.framework_id = &fid;
    sub.has_heartbeat_interval_seconds = 1;
    sub.heartbeat_interval_seconds = 15;
    ev.has_type = 1;
    ev.type = MESOS__V1__SCHEDULER__EVENT__TYPE__SUBSCRIBED;
    ev.subscribed = &sub;
    fk_send(&ev);
}

/* Send one OFFERS event with the offers of spec: "id=resources|id=...". */
static void fk_send_offers(const char *spec)
{
    Mesos__V1__Offer offers[8];
    Mesos__V1__Offer *ptrs[8];
    Mesos__V1__OfferID oids[8];
    Mesos__V1__Resource **res[8];
    size_t nres[8];
    char ids[8][32];
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    Mesos__V1__Resource__AllocationInfo ai =
        MESOS__V1__RESOURCE__ALLOCATION_INFO__INIT;
    fid.value = "fw-e2e";
    aid.value = "agent-1";
    ai.role = fk.role;
    int n = 0;
    char *copy = strdup(spec);
    char *save = NULL;
    for (char *tok = strtok_r(copy, "|", &save); tok != NULL && n < 8;
         tok = strtok_r(NULL, "|", &save)) {
        char *eq = strchr(tok, '=');
        ck_assert_ptr_nonnull(eq);
        *eq = '\0';
        snprintf(ids[n], sizeof(ids[n]), "%s", tok);
        res_list l = RES_LIST_INIT;
        char err[256];
        ck_assert_msg(res_parse_text(eq + 1, NULL, &l, err, sizeof(err)) == 0,
                      "%s", err);
        res_list_allocate(&l, fk.role);
        res[n] = res_list_to_pb(&l, false, &nres[n]);
        res_list_clear(&l);
        mesos__v1__offer__init(&offers[n]);
        mesos__v1__offer_id__init(&oids[n]);
        oids[n].value = ids[n];
        offers[n].id = &oids[n];
        offers[n].framework_id = &fid;
        offers[n].agent_id = &aid;
        offers[n].hostname = "host1";
        offers[n].n_resources = nres[n];
        offers[n].resources = res[n];
        offers[n].allocation_info = &ai;
        ptrs[n] = &offers[n];
        n++;
    }
    free(copy);
    Mesos__V1__Scheduler__Event ev = MESOS__V1__SCHEDULER__EVENT__INIT;
    Mesos__V1__Scheduler__Event__Offers o =
        MESOS__V1__SCHEDULER__EVENT__OFFERS__INIT;
    o.n_offers = (size_t)n;
    o.offers = ptrs;
    ev.has_type = 1;
    ev.type = MESOS__V1__SCHEDULER__EVENT__TYPE__OFFERS;
    ev.offers = &o;
    fk_send(&ev);
    for (int i = 0; i < n; i++)
        res_pb_array_free(res[i], nres[i]);
}

/* An update of task_id to state; uuid "<state letter>-<task>". */
static void fk_send_update(const char *task_id, Mesos__V1__TaskState state,
                           const char *message)
{
    char uuid[96];
    snprintf(uuid, sizeof(uuid), "%c-%s", state == TS(RUNNING) ? 'R' : 'T',
             task_id);
    Mesos__V1__Scheduler__Event ev = MESOS__V1__SCHEDULER__EVENT__INIT;
    Mesos__V1__Scheduler__Event__Update up =
        MESOS__V1__SCHEDULER__EVENT__UPDATE__INIT;
    Mesos__V1__TaskStatus st = MESOS__V1__TASK_STATUS__INIT;
    Mesos__V1__TaskID tid = MESOS__V1__TASK_ID__INIT;
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    tid.value = (char *)task_id;
    aid.value = "agent-1";
    st.task_id = &tid;
    st.agent_id = &aid;
    st.state = state;
    st.message = (char *)message;
    st.has_source = 1;
    st.source = MESOS__V1__TASK_STATUS__SOURCE__SOURCE_EXECUTOR;
    st.has_uuid = 1;
    st.uuid.data = (uint8_t *)uuid;
    st.uuid.len = strlen(uuid);
    up.status = &st;
    ev.has_type = 1;
    ev.type = MESOS__V1__SCHEDULER__EVENT__TYPE__UPDATE;
    ev.update = &up;
    fk_send(&ev);
}

static void fk_on_call(const Mesos__V1__Scheduler__Call *c)
{
    switch ((int)c->type) {
    case CT(ACCEPT):
        for (size_t i = 0; i < c->accept->n_operations; i++) {
            const Mesos__V1__Offer__Operation *op = c->accept->operations[i];
            if (op->launch == NULL)
                continue;
            for (size_t k = 0; k < op->launch->n_task_infos; k++)
                fk_send_update(op->launch->task_infos[k]->task_id->value,
                               TS(RUNNING), NULL);
        }
        break;
    case CT(ACKNOWLEDGE): {
        const Mesos__V1__Scheduler__Call__Acknowledge *a = c->acknowledge;
        if (a->uuid.len < 2 || a->uuid.data[0] != 'R')
            break;
        fk.running_acked++;
        const char *task = a->task_id->value;
        if (fk.script == SCRIPT_FINISH)
            fk_send_update(task, TS(FINISHED), NULL);
        else if (fk.script == SCRIPT_FAIL)
            fk_send_update(task, TS(FAILED), "Command exited with status 1");
        else if (fk.script == SCRIPT_DROP)
            fk_end_stream();
        break;
    }
    case CT(KILL):
        fk_send_update(c->kill->task_id->value, TS(KILLED),
                       "Command terminated with signal Terminated");
        break;
    case CT(RECONCILE):
        for (size_t i = 0; i < c->reconcile->n_tasks; i++)
            fk_send_update(c->reconcile->tasks[i]->task_id->value, TS(FINISHED),
                           "Reconciliation: finished");
        break;
    case CT(TEARDOWN):
        fk_end_stream();
        break;
    default:
        break;
    }
}

static void fk_handler(struct http_request *req, void *arg)
{
    (void)arg;
    enum http_encoding body_enc, reply_enc;
    if (http_negotiate(req, &body_enc, &reply_enc) != 0)
        return;
    size_t len;
    const uint8_t *b = http_request_body(req, &len);
    char err[256];
    ProtobufCMessage *m =
        jpb_decode(&mesos__v1__scheduler__call__descriptor,
                   (enum jpb_format)body_enc, b, len, err, sizeof(err));
    if (m == NULL) {
        http_reply_error(req, 400, "%s", err);
        return;
    }
    Mesos__V1__Scheduler__Call *c = (Mesos__V1__Scheduler__Call *)m;
    if (fk.ncalls == MAX_CALLS) {
        jpb_free(m);
        http_reply_error(req, 503, "fake master: too many calls");
        return;
    }
    const char *ct = http_request_header(req, "Content-Type");
    snprintf(fk.content_type[fk.ncalls], sizeof(fk.content_type[0]), "%s",
             ct ? ct : "");
    fk.calls[fk.ncalls++] = c;
    if (c->type == CT(SUBSCRIBE)) {
        fk.nsubscribes++;
        const Mesos__V1__FrameworkInfo *fi = c->subscribe->framework_info;
        snprintf(fk.role, sizeof(fk.role), "%s",
                 fi->n_roles > 0 ? fi->roles[0] : "*");
        fk_end_stream();
        http_reply_header(req, "Mesos-Stream-Id", "e2e-stream");
        fk.enc = reply_enc;
        fk.stream = http_stream_start(req,
                                      reply_enc == HTTP_ENC_PROTOBUF
                                          ? HTTP_CONTENT_PROTOBUF
                                          : HTTP_CONTENT_JSON,
                                      0, fk_stream_closed, NULL);
        fk_send_subscribed();
        if (fk.nsubscribes == 1)
            fk_send_offers(fk.offers);
        return;
    }
    http_reply(req, 202, NULL, NULL, 0);
    fk_on_call(c);
}

static void setup(void)
{
    memset(&fk, 0, sizeof(fk));
    fk.base = event_base_new();
    fk.offers = "o-1=cpus:2;mem:1024";
    fk.srv = http_server_new(fk.base, NULL);
    ck_assert_int_eq(http_server_route(fk.srv, "/api/v1/scheduler", HTTP_POST,
                                       fk_handler, NULL),
                     0);
    char err[256];
    ck_assert_int_eq(
        http_server_bind(fk.srv, "127.0.0.1", 0, &fk.port, err, sizeof(err)),
        0);
}

static void teardown(void)
{
    fk_end_stream();
    http_server_free(fk.srv);
    for (size_t i = 0; i < fk.ncalls; i++)
        jpb_free(&fk.calls[i]->base);
    event_base_free(fk.base);
}

static const Mesos__V1__Scheduler__Call *fk_find(int type, int nth)
{
    for (size_t i = 0; i < fk.ncalls; i++)
        if ((int)fk.calls[i]->type == type && nth-- == 0)
            return fk.calls[i];
    return NULL;
}

static int fk_count(int type)
{
    int n = 0;
    for (size_t i = 0; i < fk.ncalls; i++)
        n += (int)fk.calls[i]->type == type;
    return n;
}

/* ---- Running the program ---- */

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
}

/* Serve the fake master until the process exits or cond() holds (cond may
 * be NULL), at most ms. Returns 1 if the process exited. */
static int serve(struct e2e_proc *p, int (*cond)(void), int ms)
{
    struct event *tick = event_new(fk.base, -1, EV_PERSIST, on_tick, NULL);
    struct timeval tv = {0, 10000};
    event_add(tick, &tv);
    int64_t deadline = e2e_now_ms() + ms;
    int exited = 0;
    while (e2e_now_ms() < deadline) {
        event_base_loop(fk.base, EVLOOP_ONCE);
        if (!e2e_proc_running(p)) {
            exited = 1;
            break;
        }
        if (cond != NULL && cond())
            break;
    }
    event_free(tick);
    return exited;
}

static int exit_code(const struct e2e_proc *p)
{
    return WIFEXITED(p->exit_status) ? WEXITSTATUS(p->exit_status) : -1;
}

/* The process's output (stdout and stderr), NUL-terminated; caller frees. */
static char *read_log(const struct e2e_proc *p)
{
    FILE *f = fopen(p->log_path, "r");
    ck_assert_ptr_nonnull(f);
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while ((n = fread(buf + len, 1, cap - 1 - len, f)) > 0) {
        len += n;
        if (len == cap - 1) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
    }
    fclose(f);
    buf[len] = '\0';
    return buf;
}

static void assert_log_has(const char *log, const char *text)
{
    ck_assert_msg(strstr(log, text) != NULL, "output lacks '%s':\n%s", text,
                  log);
}

/* Start offerd-execute against the fake with extra args (NULL-terminated
 * after the common ones). */
static void spawn(struct e2e_proc *p, const char *const *extra)
{
    char master[64];
    snprintf(master, sizeof(master), "--master=127.0.0.1:%u",
             (unsigned)fk.port);
    const char *args[32];
    int n = 0;
    args[n++] = master;
    args[n++] = "--name=t";
    args[n++] = "--command=echo hello; exit 0";
    args[n++] = "--subscribe_timeout=10secs";
    for (; extra != NULL && *extra != NULL && n < 31; extra++)
        args[n++] = *extra;
    args[n] = NULL;
    ck_assert_int_eq(e2e_spawn(p, OFFERD_EXECUTE_BIN, args), 0);
}

/* Run to completion (at most 20 s) and return the output. */
static char *run_to_end(struct e2e_proc *p)
{
    int exited = serve(p, NULL, 20000);
    if (!exited)
        e2e_proc_dump_log(p, 4096);
    ck_assert_msg(exited, "offerd-execute did not exit");
    return read_log(p);
}

/* ---- Tests ---- */

START_TEST(test_help_exits_zero)
{
    char out[8192];
    const char *args[] = {"--help", NULL};
    int rc = e2e_run(OFFERD_EXECUTE_BIN, args, out, sizeof(out), 10000);
    ck_assert_int_eq(rc, 0);
    assert_log_has(out, "--master");
    assert_log_has(out, "--kill_after");
}
END_TEST

#define REQ "--master=127.0.0.1:5050", "--name=x", "--command=true"

static const struct {
    const char *args[6];
    const char *reason; /* in the output */
} bad_flags[] = {
    {{"--bogus", NULL}, "unknown flag '--bogus'"},
    {{"--master=127.0.0.1:5050", "--name=x", NULL}, "--command"},
    {{"--name=x", "--command=true", NULL}, "--master"},
    {{REQ, "--instances=0", NULL}, "--instances"},
    {{REQ, "--encoding=xml", NULL}, "--encoding"},
    {{REQ, "--resources=cpus:abc", NULL}, "--resources"},
    {{REQ, "--kill_after=soon", NULL}, "kill_after"},
    {{REQ, "--role=a//b", NULL}, "--role"},
    {{REQ, "--constraints=hostname:SPREAD", NULL},
     "--constraints: constraint 0: unknown operator 'SPREAD'"},
    {{"--master=nohostport", "--name=x", "--command=true", NULL}, "--master"},
};

START_TEST(test_bad_flag_exits_one)
{
    char out[8192];
    int rc = e2e_run(OFFERD_EXECUTE_BIN, bad_flags[_i].args, out, sizeof(out),
                     10000);
    ck_assert_msg(rc == 1, "case %d: exit %d\n%s", _i, rc, out);
    assert_log_has(out, bad_flags[_i].reason);
}
END_TEST

START_TEST(test_unreachable_master_exits_within_timeout)
{
    /* A port nothing listens on. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    socklen_t sl = sizeof(sa);
    getsockname(fd, (struct sockaddr *)&sa, &sl);
    close(fd);
    char master[64];
    snprintf(master, sizeof(master), "--master=127.0.0.1:%u",
             (unsigned)ntohs(sa.sin_port));
    const char *args[] = {master, "--name=t", "--command=true",
                          "--subscribe_timeout=1secs", NULL};
    char out[8192];
    int64_t t0 = e2e_now_ms();
    int rc = e2e_run(OFFERD_EXECUTE_BIN, args, out, sizeof(out), 15000);
    int64_t took = e2e_now_ms() - t0;
    ck_assert_msg(rc == 1, "exit %d\n%s", rc, out);
    ck_assert_int_ge(took, 900);
    ck_assert_int_lt(took, 8000);
    assert_log_has(out, "could not subscribe");
}
END_TEST

/* _i: 0 JSON, 1 protobuf. */
START_TEST(test_task_finishes_exit_zero)
{
    const char *enc = _i == 0 ? "--encoding=json" : "--encoding=protobuf";
    const char *extra[] = {enc, "--resources=cpus:0.1;mem:32", NULL};
    struct e2e_proc p;
    spawn(&p, extra);
    char *log = run_to_end(&p);
    ck_assert_msg(exit_code(&p) == 0, "exit %d\n%s", exit_code(&p), log);
    assert_log_has(log, "subscribed with framework id fw-e2e");
    assert_log_has(log, "submitted task t-0 to agent agent-1");
    assert_log_has(log, "task t-0 is in state TASK_RUNNING\n");
    assert_log_has(log, "task t-0 is in state TASK_FINISHED\n");
    ck_assert(strstr(log, "TASK_RUNNING") < strstr(log, "TASK_FINISHED"));

    /* The ACCEPT: one LAUNCH of the command with the asked resources. */
    const Mesos__V1__Scheduler__Call *acc = fk_find(CT(ACCEPT), 0);
    ck_assert_ptr_nonnull(acc);
    ck_assert_str_eq(acc->framework_id->value, "fw-e2e");
    ck_assert_int_eq(acc->accept->n_offer_ids, 1);
    ck_assert_str_eq(acc->accept->offer_ids[0]->value, "o-1");
    ck_assert_int_eq(acc->accept->n_operations, 1);
    const Mesos__V1__Offer__Operation *op = acc->accept->operations[0];
    ck_assert_int_eq(op->type, MESOS__V1__OFFER__OPERATION__TYPE__LAUNCH);
    ck_assert_int_eq(op->launch->n_task_infos, 1);
    const Mesos__V1__TaskInfo *ti = op->launch->task_infos[0];
    ck_assert_str_eq(ti->task_id->value, "t-0");
    ck_assert_str_eq(ti->agent_id->value, "agent-1");
    ck_assert(ti->command->has_shell && ti->command->shell);
    ck_assert_str_eq(ti->command->value, "echo hello; exit 0");
    res_list got = RES_LIST_INIT;
    char err[256];
    ck_assert_int_eq(res_list_from_pb(ti->resources, ti->n_resources, &got, err,
                                      sizeof(err)),
                     0);
    ck_assert_int_eq(res_list_scalar(&got, "cpus"), 100);
    ck_assert_int_eq(res_list_scalar(&got, "mem"), 32000);
    ck_assert_str_eq(got.v[0].alloc_role, "*");
    res_list_clear(&got);

    /* Both updates acknowledged, then the framework torn down. */
    ck_assert_int_eq(fk_count(CT(ACKNOWLEDGE)), 2);
    ck_assert_int_eq(fk_count(CT(TEARDOWN)), 1);
    const char *want_ct =
        _i == 0 ? "application/json" : "application/x-protobuf";
    for (size_t i = 0; i < fk.ncalls; i++)
        ck_assert_str_eq(fk.content_type[i], want_ct);
    /* The framework as mesos-execute declares it. */
    const Mesos__V1__FrameworkInfo *fi =
        fk_find(CT(SUBSCRIBE), 0)->subscribe->framework_info;
    ck_assert_str_eq(fi->name, "offerd-execute instance");
    ck_assert_ptr_nonnull(fi->user);
    free(log);
    e2e_proc_cleanup(&p);
}
END_TEST

START_TEST(test_task_fails_exit_one)
{
    fk.script = SCRIPT_FAIL;
    struct e2e_proc p;
    spawn(&p, NULL);
    char *log = run_to_end(&p);
    ck_assert_msg(exit_code(&p) == 1, "exit %d\n%s", exit_code(&p), log);
    assert_log_has(log, "task t-0 is in state TASK_RUNNING\n");
    assert_log_has(
        log, "task t-0 is in state TASK_FAILED (Command exited with status 1)");
    ck_assert_int_eq(fk_count(CT(TEARDOWN)), 1);
    free(log);
    e2e_proc_cleanup(&p);
}
END_TEST

START_TEST(test_instances_share_an_offer)
{
    const char *extra[] = {"--instances=3", "--resources=cpus:0.5;mem:100",
                           "--checkpoint", "--framework_name=batch", NULL};
    struct e2e_proc p;
    spawn(&p, extra);
    char *log = run_to_end(&p);
    ck_assert_msg(exit_code(&p) == 0, "exit %d\n%s", exit_code(&p), log);
    const Mesos__V1__Scheduler__Call *acc = fk_find(CT(ACCEPT), 0);
    ck_assert_int_eq(fk_count(CT(ACCEPT)), 1);
    const Mesos__V1__Offer__Operation__Launch *l =
        acc->accept->operations[0]->launch;
    ck_assert_int_eq(l->n_task_infos, 3);
    for (int i = 0; i < 3; i++) {
        char id[16];
        snprintf(id, sizeof(id), "t-%d", i);
        ck_assert_str_eq(l->task_infos[i]->task_id->value, id);
        char line[64];
        snprintf(line, sizeof(line), "task %s is in state TASK_FINISHED", id);
        assert_log_has(log, line);
    }
    const Mesos__V1__FrameworkInfo *fi =
        fk_find(CT(SUBSCRIBE), 0)->subscribe->framework_info;
    ck_assert_str_eq(fi->name, "batch");
    ck_assert(fi->has_checkpoint && fi->checkpoint);
    ck_assert_int_eq(fk_count(CT(ACKNOWLEDGE)), 6);
    free(log);
    e2e_proc_cleanup(&p);
}
END_TEST

START_TEST(test_declines_offers_it_does_not_need)
{
    fk.offers = "o-small=cpus:0.05;mem:16|o-big=cpus:1;mem:64|o-extra=cpus:1;"
                "mem:64";
    struct e2e_proc p;
    spawn(&p, NULL);
    char *log = run_to_end(&p);
    ck_assert_msg(exit_code(&p) == 0, "exit %d\n%s", exit_code(&p), log);
    ck_assert_int_eq(fk_count(CT(ACCEPT)), 1);
    ck_assert_str_eq(fk_find(CT(ACCEPT), 0)->accept->offer_ids[0]->value,
                     "o-big");
    /* Both offers it does not need are declined with a refusal filter, in
     * one DECLINE call or several. */
    int declined = 0;
    for (int i = 0; i < fk_count(CT(DECLINE)); i++) {
        const Mesos__V1__Scheduler__Call *d = fk_find(CT(DECLINE), i);
        ck_assert_ptr_nonnull(d->decline->filters);
        ck_assert(d->decline->filters->has_refuse_seconds);
        ck_assert(d->decline->filters->refuse_seconds > 0);
        for (size_t k = 0; k < d->decline->n_offer_ids; k++) {
            const char *id = d->decline->offer_ids[k]->value;
            ck_assert_msg(strcmp(id, "o-small") == 0 ||
                              strcmp(id, "o-extra") == 0,
                          "declined %s", id);
            declined++;
        }
    }
    ck_assert_int_eq(declined, 2);
    free(log);
    e2e_proc_cleanup(&p);
}
END_TEST

static int running_acked(void)
{
    return fk.running_acked >= 1;
}

START_TEST(test_ctrl_c_kills_and_tears_down)
{
    fk.script = SCRIPT_HANG;
    struct e2e_proc p;
    spawn(&p, NULL);
    ck_assert_int_eq(serve(&p, running_acked, 20000), 0);
    ck_assert(running_acked());
    kill(p.pid, SIGINT);
    char *log = run_to_end(&p);
    ck_assert_msg(exit_code(&p) == 1, "exit %d\n%s", exit_code(&p), log);
    const Mesos__V1__Scheduler__Call *k = fk_find(CT(KILL), 0);
    ck_assert_ptr_nonnull(k);
    ck_assert_str_eq(k->kill->task_id->value, "t-0");
    ck_assert_str_eq(k->kill->agent_id->value, "agent-1");
    assert_log_has(log, "task t-0 is in state TASK_KILLED");
    ck_assert_int_eq(fk_count(CT(TEARDOWN)), 1);
    free(log);
    e2e_proc_cleanup(&p);
}
END_TEST

START_TEST(test_kill_after)
{
    fk.script = SCRIPT_HANG;
    const char *extra[] = {"--kill_after=200ms", NULL};
    struct e2e_proc p;
    spawn(&p, extra);
    char *log = run_to_end(&p);
    /* A killed task did not finish: exit 1, as for any non-FINISHED end. */
    ck_assert_msg(exit_code(&p) == 1, "exit %d\n%s", exit_code(&p), log);
    assert_log_has(log, "killing task t-0 (--kill_after)");
    assert_log_has(log, "task t-0 is in state TASK_KILLED");
    ck_assert_int_eq(fk_count(CT(KILL)), 1);
    ck_assert_int_eq(fk_count(CT(TEARDOWN)), 1);
    free(log);
    e2e_proc_cleanup(&p);
}
END_TEST

START_TEST(test_resubscribes_and_reconciles_after_drop)
{
    fk.script = SCRIPT_DROP;
    struct e2e_proc p;
    spawn(&p, NULL);
    char *log = run_to_end(&p);
    ck_assert_msg(exit_code(&p) == 0, "exit %d\n%s", exit_code(&p), log);
    ck_assert_int_eq(fk.nsubscribes, 2);
    const Mesos__V1__Scheduler__Call *sub = fk_find(CT(SUBSCRIBE), 1);
    ck_assert_str_eq(sub->framework_id->value, "fw-e2e");
    ck_assert_str_eq(sub->subscribe->framework_info->id->value, "fw-e2e");
    const Mesos__V1__Scheduler__Call *rec = fk_find(CT(RECONCILE), 0);
    ck_assert_ptr_nonnull(rec);
    ck_assert_int_eq(rec->reconcile->n_tasks, 1);
    ck_assert_str_eq(rec->reconcile->tasks[0]->task_id->value, "t-0");
    assert_log_has(log, "task t-0 is in state TASK_FINISHED");
    free(log);
    e2e_proc_cleanup(&p);
}
END_TEST

static Suite *execute_suite(void)
{
    Suite *s = suite_create("e2e_execute");
    TCase *tc = tcase_create("flags");
    tcase_add_test(tc, test_help_exits_zero);
    tcase_add_loop_test(tc, test_bad_flag_exits_one, 0,
                        (int)(sizeof(bad_flags) / sizeof(bad_flags[0])));
    tcase_add_test(tc, test_unreachable_master_exits_within_timeout);
    suite_add_tcase(s, tc);

    tc = tcase_create("run");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, test_task_finishes_exit_zero, 0, 2);
    tcase_add_test(tc, test_task_fails_exit_one);
    tcase_add_test(tc, test_instances_share_an_offer);
    tcase_add_test(tc, test_declines_offers_it_does_not_need);
    tcase_add_test(tc, test_ctrl_c_kills_and_tears_down);
    tcase_add_test(tc, test_kill_after);
    tcase_add_test(tc, test_resubscribes_and_reconciles_after_drop);
    suite_add_tcase(s, tc);
    return s;
}

E2E_CHECK_MAIN(execute_suite)
