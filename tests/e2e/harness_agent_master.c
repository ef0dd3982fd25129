/*
 * The fake master of agent end-to-end tests (see harness_agent_master.h).
 */
#include "harness_agent_master.h"

#include "harness.h"

#include "common/http.h"
#include "common/ids.h"
#include "common/json_pb.h"
#include "common/mem.h"
#include "common/netport.h"
#include "common/resources.h"
#include "common/resources_pb.h"

#include <check.h>
#include <event2/event.h>
#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

struct hfm hfm;

/* What the test does not see. */
static struct {
    struct event_base *base;
    struct http_server *srv;
    struct http_stream *stream; /* the agent's current stream */
    char stream_id[ID_UUID_SIZE];
} priv;

void hfm_send(const Offerd__Agent__Event *ev)
{
    ck_assert_msg(priv.stream != NULL, "no agent stream to send on");
    size_t len;
    uint8_t *buf = jpb_to_pb(&ev->base, &len);
    int rc = http_stream_send_record(priv.stream, buf, len);
    free(buf);
    ck_assert_int_eq(rc, 0);
}

void hfm_ack(const char *fw, const Mesos__V1__TaskStatus *st)
{
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = (char *)fw;
    Offerd__Agent__Event__Acknowledge ack =
        OFFERD__AGENT__EVENT__ACKNOWLEDGE__INIT;
    ack.framework_id = &fid;
    ack.task_id = st->task_id;
    ack.uuid = st->uuid;
    Offerd__Agent__Event ev = OFFERD__AGENT__EVENT__INIT;
    ev.type = OFFERD__AGENT__EVENT__TYPE__ACKNOWLEDGE;
    ev.acknowledge = &ack;
    hfm_send(&ev);
}

static void stream_closed(struct http_stream *s, enum http_close_reason why,
                          void *arg)
{
    (void)why;
    (void)arg;
    if (s == priv.stream)
        priv.stream = NULL;
    http_stream_close(s);
}

static void registered(void)
{
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = HFM_AGENT_ID;
    Mesos__V1__MasterInfo mi = MESOS__V1__MASTER_INFO__INIT;
    mi.id = "fake-master";
    mi.ip = 0x0100007f;
    mi.port = hfm.port;
    Offerd__Agent__Event__Registered reg =
        OFFERD__AGENT__EVENT__REGISTERED__INIT;
    reg.agent_id = &aid;
    reg.master_info = &mi;
    if (hfm.ping_timeout > 0) {
        reg.has_ping_timeout_seconds = 1;
        reg.ping_timeout_seconds = hfm.ping_timeout;
    }
    Offerd__Agent__Event ev = OFFERD__AGENT__EVENT__INIT;
    ev.type = OFFERD__AGENT__EVENT__TYPE__REGISTERED;
    ev.registered = &reg;
    hfm_send(&ev);
}

static void record(Offerd__Agent__Call *call)
{
    hfm.calls = xreallocarray(hfm.calls, hfm.ncalls + 1, sizeof(*hfm.calls));
    hfm.calls[hfm.ncalls++] = call;
}

/* An UPDATES call (the agent's updates of one loop turn) is recorded as
 * one UPDATE call per update, in order, so tests see each update as the
 * master applies it. */
static void handle_updates(struct http_request *req, Offerd__Agent__Call *call)
{
    const char *sid = http_request_header(req, "Mesos-Stream-Id");
    bool ok = sid != NULL && strcmp(sid, priv.stream_id) == 0 &&
              call->updates != NULL && call->updates->n_updates > 0;
    /* Recorded whatever the answer, as other calls are. */
    if (call->updates != NULL) {
        for (size_t i = 0; i < call->updates->n_updates; i++) {
            Offerd__Agent__Call one = OFFERD__AGENT__CALL__INIT;
            one.agent_id = call->agent_id;
            one.type = OFFERD__AGENT__CALL__TYPE__UPDATE;
            one.update = call->updates->updates[i];
            size_t len;
            uint8_t *pb = jpb_to_pb(&one.base, &len);
            char err[256];
            Offerd__Agent__Call *copy = (Offerd__Agent__Call *)jpb_decode(
                &offerd__agent__call__descriptor, JPB_PROTOBUF, pb, len, err,
                sizeof(err));
            free(pb);
            ck_assert_msg(copy != NULL, "%s", err);
            record(copy);
        }
    }
    if (!ok)
        http_reply_error(req, 400, "bad UPDATES call");
    else if (hfm.refuse_calls)
        http_reply_error(req, 403, "agent is not subscribed");
    else
        http_reply(req, 202, NULL, NULL, 0);
    if (ok && !hfm.refuse_calls && hfm.auto_ack && priv.stream != NULL)
        for (size_t i = 0; i < call->updates->n_updates; i++)
            hfm_ack(call->updates->updates[i]->framework_id->value,
                    call->updates->updates[i]->status);
    jpb_free(&call->base);
}

static void handle(struct http_request *req, void *arg)
{
    (void)arg;
    enum http_encoding body_enc, reply_enc;
    if (http_negotiate(req, &body_enc, &reply_enc) != 0)
        return;
    size_t len;
    const uint8_t *body = http_request_body(req, &len);
    char err[256];
    Offerd__Agent__Call *call = (Offerd__Agent__Call *)jpb_decode(
        &offerd__agent__call__descriptor, (enum jpb_format)body_enc, body, len,
        err, sizeof(err));
    if (call == NULL) {
        http_reply_error(req, 400, "%s", err);
        return;
    }
    if (call->type == OFFERD__AGENT__CALL__TYPE__UPDATES) {
        handle_updates(req, call);
        return;
    }
    record(call);

    if (call->type == OFFERD__AGENT__CALL__TYPE__SUBSCRIBE) {
        if (priv.stream != NULL) {
            http_stream_close(priv.stream);
            priv.stream = NULL;
        }
        id_uuid_v4(priv.stream_id);
        http_reply_header(req, "Mesos-Stream-Id", priv.stream_id);
        priv.stream = http_stream_start(req, HTTP_CONTENT_PROTOBUF, 0,
                                        stream_closed, NULL);
        hfm.subscribes++;
        registered();
        return;
    }
    const char *sid = http_request_header(req, "Mesos-Stream-Id");
    if (sid == NULL || strcmp(sid, priv.stream_id) != 0) {
        http_reply_error(req, 400, "wrong Mesos-Stream-Id");
        return;
    }
    if (hfm.refuse_calls) {
        http_reply_error(req, 403, "agent is not subscribed");
        return;
    }
    http_reply(req, 202, NULL, NULL, 0);
    if (hfm.auto_ack && call->type == OFFERD__AGENT__CALL__TYPE__UPDATE &&
        priv.stream != NULL)
        hfm_ack(call->update->framework_id->value, call->update->status);
}

void hfm_start(void)
{
    memset(&hfm, 0, sizeof(hfm));
    memset(&priv, 0, sizeof(priv));
    priv.base = event_base_new();
    ck_assert_ptr_nonnull(priv.base);
    priv.srv = http_server_new(priv.base, NULL);
    char err[256];
    ck_assert_msg(http_server_bind(priv.srv, "127.0.0.1", 0, &hfm.port, err,
                                   sizeof(err)) == 0,
                  "%s", err);
    ck_assert_int_eq(
        http_server_route(priv.srv, "/api/v1/agent", HTTP_POST, handle, NULL),
        0);
}

void hfm_stop(void)
{
    if (priv.stream != NULL)
        http_stream_close(priv.stream);
    priv.stream = NULL;
    http_server_free(priv.srv);
    /* Let the loop free what the server marked. */
    if (priv.base != NULL)
        event_base_loop(priv.base, EVLOOP_NONBLOCK);
    for (size_t i = 0; i < hfm.ncalls; i++)
        jpb_free(&hfm.calls[i]->base);
    free(hfm.calls);
    if (priv.base != NULL)
        event_base_free(priv.base);
    memset(&hfm, 0, sizeof(hfm));
    memset(&priv, 0, sizeof(priv));
}

void hfm_pump(int ms)
{
    e2e_loop_for(priv.base, ms);
}

bool hfm_pump_until(bool (*cond)(void *arg), void *arg, int timeout_ms)
{
    return e2e_loop_until(priv.base, cond, arg, timeout_ms);
}

bool hfm_has_stream(void)
{
    return priv.stream != NULL;
}

void hfm_close_stream(void)
{
    if (priv.stream != NULL)
        http_stream_close(priv.stream);
    priv.stream = NULL;
}

static bool subscribed(void *arg)
{
    return hfm.subscribes >= *(const int *)arg && priv.stream != NULL;
}

void hfm_wait_subscribed(int count, int timeout_ms)
{
    hfm_pump_until(subscribed, &count, timeout_ms);
    ck_assert_msg(hfm.subscribes >= count && priv.stream != NULL,
                  "the agent did not subscribe (%d of %d)", hfm.subscribes,
                  count);
}

struct call_wait {
    size_t from;
    Offerd__Agent__Call__Type type;
    const char *task_id;
    int state;
    long found;
};

static bool call_arrived(void *arg)
{
    struct call_wait *w = arg;
    for (size_t i = w->from; i < hfm.ncalls; i++) {
        const Offerd__Agent__Call *c = hfm.calls[i];
        if (c->type != w->type)
            continue;
        if (w->type == OFFERD__AGENT__CALL__TYPE__UPDATE) {
            const Mesos__V1__TaskStatus *st = c->update->status;
            if (w->task_id != NULL && strcmp(st->task_id->value, w->task_id))
                continue;
            if (w->state >= 0 && (int)st->state != w->state)
                continue;
        }
        w->found = (long)i;
        return true;
    }
    return false;
}

long hfm_wait_call(size_t *from, Offerd__Agent__Call__Type type,
                   const char *task_id, int state, int timeout_ms)
{
    struct call_wait w = {*from, type, task_id, state, -1};
    if (!hfm_pump_until(call_arrived, &w, timeout_ms))
        return -1;
    *from = (size_t)w.found + 1;
    return w.found;
}

size_t hfm_updates_of(const char *task_id, size_t from,
                      const Mesos__V1__TaskStatus **out, size_t max)
{
    size_t n = 0;
    for (size_t i = from; i < hfm.ncalls && n < max; i++) {
        const Offerd__Agent__Call *c = hfm.calls[i];
        if (c->type == OFFERD__AGENT__CALL__TYPE__UPDATE &&
            strcmp(c->update->status->task_id->value, task_id) == 0)
            out[n++] = c->update->status;
    }
    return n;
}

void hfm_run_task(const struct hfm_task *t)
{
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = (char *)t->framework_id;
    Mesos__V1__FrameworkInfo fi = MESOS__V1__FRAMEWORK_INFO__INIT;
    fi.user = "nobody-in-particular";
    fi.name = "e2e";
    fi.id = &fid;
    Mesos__V1__FrameworkInfo__Capability caps[2];
    Mesos__V1__FrameworkInfo__Capability *capv[2] = {&caps[0], &caps[1]};
    mesos__v1__framework_info__capability__init(&caps[0]);
    caps[0].has_type = 1;
    caps[0].type =
        MESOS__V1__FRAMEWORK_INFO__CAPABILITY__TYPE__REVOCABLE_RESOURCES;
    mesos__v1__framework_info__capability__init(&caps[1]);
    caps[1].has_type = 1;
    caps[1].type =
        MESOS__V1__FRAMEWORK_INFO__CAPABILITY__TYPE__TASK_KILLING_STATE;
    fi.capabilities = capv;
    fi.n_capabilities = t->killing_capable ? 2 : 1;

    Mesos__V1__TaskID tid = MESOS__V1__TASK_ID__INIT;
    tid.value = (char *)t->task_id;
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = HFM_AGENT_ID;
    Mesos__V1__CommandInfo cmd = MESOS__V1__COMMAND_INFO__INIT;
    cmd.has_shell = 1;
    if (t->shell != NULL) {
        cmd.value = (char *)t->shell;
        cmd.shell = 1;
    } else {
        cmd.value = (char *)t->program;
        cmd.shell = 0;
        while (t->argv != NULL && t->argv[cmd.n_arguments] != NULL)
            cmd.n_arguments++;
        cmd.arguments = (char **)t->argv;
    }
    Mesos__V1__Environment env = MESOS__V1__ENVIRONMENT__INIT;
    Mesos__V1__Environment__Variable var =
        MESOS__V1__ENVIRONMENT__VARIABLE__INIT;
    Mesos__V1__Environment__Variable *vars[1] = {&var};
    if (t->env_name != NULL) {
        var.name = (char *)t->env_name;
        var.value = (char *)t->env_value;
        env.n_variables = 1;
        env.variables = vars;
        cmd.environment = &env;
    }
    Mesos__V1__TaskInfo ti = MESOS__V1__TASK_INFO__INIT;
    ti.name = (char *)t->task_id;
    ti.task_id = &tid;
    ti.agent_id = &aid;
    ti.command = &cmd;
    Mesos__V1__DurationInfo d = MESOS__V1__DURATION_INFO__INIT;
    Mesos__V1__KillPolicy kp = MESOS__V1__KILL_POLICY__INIT;
    if (t->grace_ms > 0) {
        d.nanoseconds = (int64_t)t->grace_ms * 1000000;
        kp.grace_period = &d;
        ti.kill_policy = &kp;
    }
    res_list rl = RES_LIST_INIT;
    if (t->resources != NULL) {
        char err[256];
        ck_assert_msg(
            res_parse_text(t->resources, NULL, &rl, err, sizeof(err)) == 0,
            "%s", err);
        for (uint32_t i = 0; i < rl.n; i++)
            rl.v[i].revocable = t->revocable;
        res_list_allocate(&rl, "*");
    }
    size_t nres = 0;
    Mesos__V1__Resource **res =
        t->resources_json != NULL
            ? hfm_resources_from_json(t->resources_json, &nres)
            : res_list_to_pb(&rl, true, &nres);
    ti.resources = res;
    ti.n_resources = nres;
    Offerd__Agent__Event__RunTask rt = OFFERD__AGENT__EVENT__RUN_TASK__INIT;
    rt.framework_info = &fi;
    rt.task = &ti;
    Offerd__Agent__Event ev = OFFERD__AGENT__EVENT__INIT;
    ev.type = OFFERD__AGENT__EVENT__TYPE__RUN_TASK;
    ev.run_task = &rt;
    hfm_send(&ev);
    if (t->resources_json != NULL)
        hfm_resources_free(res, nres);
    else
        res_pb_array_free(res, nres);
    res_list_clear(&rl);
}

void hfm_kill(const char *framework_id, const char *task_id, int reason)
{
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = (char *)framework_id;
    Mesos__V1__TaskID tid = MESOS__V1__TASK_ID__INIT;
    tid.value = (char *)task_id;
    Offerd__Agent__Event__KillTask k = OFFERD__AGENT__EVENT__KILL_TASK__INIT;
    k.framework_id = &fid;
    k.task_id = &tid;
    if (reason >= 0) {
        k.has_reason = 1;
        k.reason = (Mesos__V1__TaskStatus__Reason)reason;
    }
    Offerd__Agent__Event ev = OFFERD__AGENT__EVENT__INIT;
    ev.type = OFFERD__AGENT__EVENT__TYPE__KILL_TASK;
    ev.kill_task = &k;
    hfm_send(&ev);
}

Mesos__V1__Resource **hfm_resources_from_json(const char *json, size_t *n)
{
    json_error_t e;
    json_t *arr = json_loads(json, 0, &e);
    ck_assert_msg(json_is_array(arr), "resources: %s", e.text);
    Mesos__V1__Resource **v = xcalloc(json_array_size(arr) + 1, sizeof(*v));
    size_t i;
    json_t *el;
    json_array_foreach(arr, i, el)
    {
        char err[256];
        v[i] = (Mesos__V1__Resource *)jpb_from_json(
            &mesos__v1__resource__descriptor, el, err, sizeof(err));
        ck_assert_msg(v[i] != NULL, "resources: %s", err);
    }
    *n = json_array_size(arr);
    json_decref(arr);
    return v;
}

void hfm_resources_free(Mesos__V1__Resource **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        jpb_free(&v[i]->base);
    free(v);
}

static bool agent_exited(void *arg)
{
    return !e2e_proc_running(arg);
}

int hfm_spawn_agent(struct e2e_proc *agent, const char *work_dir,
                    const char *const *extra)
{
    return hfm_spawn_agent_on(agent, work_dir, 0, extra);
}

int hfm_spawn_agent_on(struct e2e_proc *agent, const char *work_dir,
                       uint16_t fixed_port, const char *const *extra)
{
    for (int attempt = 0; attempt < 5; attempt++) {
        uint16_t port = fixed_port != 0 ? fixed_port : netport_free_loopback();
        if (port == 0)
            continue;
        char a_master[64], a_port[32], a_work[PATH_MAX + 16];
        snprintf(a_master, sizeof(a_master), "--master=127.0.0.1:%u",
                 (unsigned)hfm.port);
        snprintf(a_port, sizeof(a_port), "--port=%u", (unsigned)port);
        snprintf(a_work, sizeof(a_work), "--work_dir=%s", work_dir);
        const char *args[64];
        int n = 0;
        args[n++] = a_master;
        args[n++] = "--ip=127.0.0.1";
        args[n++] = a_port;
        args[n++] = a_work;
        args[n++] = "--registration_backoff_factor=20ms";
        args[n++] = "--registration_backoff_max=200ms";
        args[n++] = "--resources=cpus:2;mem:1024;disk:4096";
        /* hfm_run_task's framework names a made-up user. */
        args[n++] = "--switch_user=false";
        for (; extra != NULL && *extra != NULL && n < 63; extra++)
            args[n++] = *extra;
        args[n] = NULL;
        if (e2e_spawn(agent, OFFERD_AGENT_BIN, args) != 0)
            return -1;
        agent->port = port;
        if (e2e_wait_healthy(agent, 20000) == 0)
            return 0;
        if (e2e_proc_running(agent)) {
            e2e_proc_dump_log(agent, 8192);
            return -1;
        }
        e2e_proc_cleanup(agent); /* port taken meanwhile: try another */
    }
    return -1;
}

int hfm_stop_agent(struct e2e_proc *agent)
{
    if (agent->pid <= 0)
        return 0;
    kill(agent->pid, SIGUSR1);
    hfm_pump_until(agent_exited, agent, 15000);
    int rc = e2e_proc_stop(agent, SIGKILL, 1000);
    if (rc != 0)
        e2e_proc_dump_log(agent, 16384);
    return rc;
}

const char *hfm_reason_name(const Mesos__V1__TaskStatus *st)
{
    if (!st->has_reason)
        return "(none)";
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
        &mesos__v1__task_status__reason__descriptor, (int)st->reason);
    return v != NULL ? v->name : "?";
}
