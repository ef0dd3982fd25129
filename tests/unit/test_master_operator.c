/*
 * The operator API's read calls (GET_STATE, GET_FRAMEWORKS, GET_TASKS, ...)
 * and its event stream (SUBSCRIBE), driven through fake requests
 * (master_fixture.h): every call answers in JSON and protobuf with what the
 * JSON endpoints show, and a subscriber sees SUBSCRIBED, then the cluster's
 * changes as they happen; a subscriber that stops reading is dropped and
 * the master carries on.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "common/http_fake.h"
#include "master/frameworks.h"
#include "master/operator_api.h"
#include "master/operator_events.h"
#include "master_fixture.h"
#include "mesos/v1/master.pb-c.h"

#define FW_INFO                                                                \
    "{\"user\":\"u\",\"name\":\"fw\",\"roles\":[\"web\"],"                     \
    "\"failover_timeout\":60,\"capabilities\":[{\"type\":\"MULTI_ROLE\"}]}"
#define SMALL                                                                  \
    "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":0.5},"      \
    "\"allocation_info\":{\"role\":\"web\"}},{\"name\":\"mem\",\"type\":"      \
    "\"SCALAR\",\"scalar\":{\"value\":64},\"allocation_info\":{\"role\":"      \
    "\"web\"}}]"

MFX_STANDARD_FIXTURE

/* ---- Helpers ----------------------------------------------------------- */

/* An operator call's JSON reply, asserting 200 and its type. */
static json_t *op_get(const char *type)
{
    char call[128];
    snprintf(call, sizeof(call), "{\"type\":\"%s\"}", type);
    struct http_fake *f = mfx_operator(&X, call);
    ck_assert_msg(http_fake_status(f) == 200, "%s answered %d: %s", type,
                  http_fake_status(f), mfx_body(f));
    ck_assert_str_eq(http_fake_content_type(f), HTTP_CONTENT_JSON);
    json_error_t e;
    json_t *j = json_loads(mfx_body(f), 0, &e);
    ck_assert_msg(j != NULL, "%s: not JSON: %s", type, e.text);
    http_fake_free(f);
    ck_assert_str_eq(json_string_value(json_object_get(j, "type")), type);
    return j;
}

/* GET of a read endpoint (e.g. "/tasks") through the master's routes. */
static json_t *endpoint(const char *path)
{
    struct http_fake *f = http_fake_new(X.base, HTTP_GET, path);
    http_fake_dispatch_server(f, X.m->http);
    ck_assert_int_eq(http_fake_status(f), 200);
    json_t *j = json_loads(mfx_body(f), 0, NULL);
    ck_assert_ptr_nonnull(j);
    http_fake_free(f);
    return j;
}

/* POST an operator Call in protobuf, asking for protobuf; the reply's body
 * unpacked (caller frees). */
static Mesos__V1__Master__Response *op_get_pb(Mesos__V1__Master__Call__Type t)
{
    Mesos__V1__Master__Call call = MESOS__V1__MASTER__CALL__INIT;
    call.has_type = true;
    call.type = t;
    uint8_t buf[64];
    size_t len = mesos__v1__master__call__pack(&call, buf);
    struct http_fake *f = http_fake_new(X.base, HTTP_POST, "/api/v1");
    http_fake_add_header(f, "Content-Type", HTTP_CONTENT_PROTOBUF);
    http_fake_add_header(f, "Accept", HTTP_CONTENT_PROTOBUF);
    http_fake_set_body(f, buf, len);
    http_fake_dispatch(f, master_operator_api, X.m);
    ck_assert(http_fake_replied(f));
    ck_assert_int_eq(http_fake_status(f), 200);
    ck_assert_str_eq(http_fake_content_type(f), HTTP_CONTENT_PROTOBUF);
    size_t blen;
    const uint8_t *body = http_fake_body(f, &blen);
    Mesos__V1__Master__Response *r =
        mesos__v1__master__response__unpack(NULL, blen, body);
    ck_assert_ptr_nonnull(r);
    http_fake_free(f);
    return r;
}

/* SUBSCRIBE an operator in JSON: the stream, with SUBSCRIBED read. */
static json_t *op_subscribe(struct mfx_peer *p)
{
    memset(p, 0, sizeof(*p));
    p->stream = mfx_operator(&X, "{\"type\":\"SUBSCRIBE\"}");
    ck_assert_msg(http_fake_is_stream(p->stream), "SUBSCRIBE answered %d: %s",
                  http_fake_status(p->stream), mfx_body(p->stream));
    ck_assert_str_eq(http_fake_content_type(p->stream), HTTP_CONTENT_JSON);
    /* Operator streams carry no stream id (Mesos's neither). */
    ck_assert_ptr_null(http_fake_reply_header(p->stream, "Mesos-Stream-Id"));
    ck_assert_uint_ge(mfx_unread(p), 1);
    json_t *ev = mfx_next_event(&X, p, "SUBSCRIBED");
    ck_assert_ptr_nonnull(ev);
    ck_assert_uint_eq(p->next, 1); /* the very first record */
    return ev;
}

/* The type of every unread event of p, space-separated, all read. */
static void unread_types(struct mfx_peer *p, char *out, size_t len)
{
    out[0] = '\0';
    size_t n = http_fake_record_count(p->stream);
    for (; p->next < n; p->next++) {
        size_t rlen;
        const uint8_t *r = http_fake_record(p->stream, p->next, &rlen);
        json_t *ev = json_loadb((const char *)r, rlen, 0, NULL);
        ck_assert_ptr_nonnull(ev);
        const char *t = json_string_value(json_object_get(ev, "type"));
        if (strcmp(t, "HEARTBEAT") != 0) {
            size_t used = strlen(out);
            snprintf(out + used, len - used, "%s%s", used ? " " : "", t);
        }
        json_decref(ev);
    }
}

/* ACCEPT of offer_id launching task t1. */
static int launch(const char *offer_id)
{
    char payload[2048];
    snprintf(payload, sizeof(payload),
             "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{\"type\":"
             "\"LAUNCH\",\"launch\":{\"task_infos\":[{\"name\":\"t\","
             "\"task_id\":{\"value\":\"t1\"},\"agent_id\":{\"value\":\"%s\"},"
             "\"resources\":%s,\"command\":{\"value\":\"true\"}}]}}]}",
             offer_id, AG.id, SMALL);
    return mfx_framework_call(&X, &FW, "ACCEPT", "accept", payload);
}

/* The agent reports t1 in state. */
static void agent_update(const char *state)
{
    char payload[1024];
    snprintf(payload, sizeof(payload),
             "{\"framework_id\":{\"value\":\"%s\"},\"status\":{\"task_id\":{"
             "\"value\":\"t1\"},\"state\":\"%s\",\"source\":"
             "\"SOURCE_EXECUTOR\",\"uuid\":\"AAECAwQFBgcICQoLDA0ODw==\","
             "\"agent_id\":{\"value\":\"%s\"}}}",
             FW.id, state, AG.id);
    ck_assert_int_eq(mfx_agent_call(&X, &AG, "UPDATE", "update", payload), 202);
}

/* A framework, an agent and task t1 running. */
static void running_task(void)
{
    char offer_id[256];
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    json_decref(mfx_first_offer(&X, &FW, offer_id));
    ck_assert_int_eq(launch(offer_id), 202);
    json_t *run = mfx_next_event(&X, &AG, "RUN_TASK");
    ck_assert_ptr_nonnull(run);
    json_decref(run);
    agent_update("TASK_RUNNING");
}

/* j.a.b (b NULL: j.a). */
static json_t *path(json_t *j, const char *a, const char *b)
{
    json_t *v = json_object_get(j, a);
    return b != NULL ? json_object_get(v, b) : v;
}

/* ---- The read calls ------------------------------------------------------ */

/* Every read call answers 200 with its Response type and payload, in JSON
 * and in protobuf, on an empty cluster too. */
START_TEST(test_read_calls_answer)
{
    static const struct {
        const char *type, *field;
        Mesos__V1__Master__Call__Type call;
        Mesos__V1__Master__Response__Type resp;
    } calls[] = {
        {"GET_STATE", "get_state", MESOS__V1__MASTER__CALL__TYPE__GET_STATE,
         MESOS__V1__MASTER__RESPONSE__TYPE__GET_STATE},
        {"GET_FRAMEWORKS", "get_frameworks",
         MESOS__V1__MASTER__CALL__TYPE__GET_FRAMEWORKS,
         MESOS__V1__MASTER__RESPONSE__TYPE__GET_FRAMEWORKS},
        {"GET_TASKS", "get_tasks", MESOS__V1__MASTER__CALL__TYPE__GET_TASKS,
         MESOS__V1__MASTER__RESPONSE__TYPE__GET_TASKS},
        {"GET_EXECUTORS", "get_executors",
         MESOS__V1__MASTER__CALL__TYPE__GET_EXECUTORS,
         MESOS__V1__MASTER__RESPONSE__TYPE__GET_EXECUTORS},
        {"GET_ROLES", "get_roles", MESOS__V1__MASTER__CALL__TYPE__GET_ROLES,
         MESOS__V1__MASTER__RESPONSE__TYPE__GET_ROLES},
        {"GET_FLAGS", "get_flags", MESOS__V1__MASTER__CALL__TYPE__GET_FLAGS,
         MESOS__V1__MASTER__RESPONSE__TYPE__GET_FLAGS},
        {"GET_METRICS", "get_metrics",
         MESOS__V1__MASTER__CALL__TYPE__GET_METRICS,
         MESOS__V1__MASTER__RESPONSE__TYPE__GET_METRICS},
        {"GET_LOGGING_LEVEL", "get_logging_level",
         MESOS__V1__MASTER__CALL__TYPE__GET_LOGGING_LEVEL,
         MESOS__V1__MASTER__RESPONSE__TYPE__GET_LOGGING_LEVEL},
        {"GET_MASTER", "get_master", MESOS__V1__MASTER__CALL__TYPE__GET_MASTER,
         MESOS__V1__MASTER__RESPONSE__TYPE__GET_MASTER},
        {"GET_OPERATIONS", "get_operations",
         MESOS__V1__MASTER__CALL__TYPE__GET_OPERATIONS,
         MESOS__V1__MASTER__RESPONSE__TYPE__GET_OPERATIONS},
        {"GET_AGENTS", "get_agents", MESOS__V1__MASTER__CALL__TYPE__GET_AGENTS,
         MESOS__V1__MASTER__RESPONSE__TYPE__GET_AGENTS},
    };
    for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
        json_t *j = op_get(calls[i].type);
        ck_assert_msg(json_is_object(json_object_get(j, calls[i].field)),
                      "%s: no %s", calls[i].type, calls[i].field);
        json_decref(j);
        Mesos__V1__Master__Response *r = op_get_pb(calls[i].call);
        ck_assert(r->has_type);
        ck_assert_int_eq(r->type, calls[i].resp);
        protobuf_c_message_free_unpacked(&r->base, NULL);
    }
    /* Empty lists are there, and empty. */
    json_t *j = op_get("GET_EXECUTORS");
    ck_assert_uint_eq(json_array_size(path(j, "get_executors", "executors")),
                      0);
    json_decref(j);
    j = op_get("GET_OPERATIONS");
    ck_assert_uint_eq(json_array_size(path(j, "get_operations", "operations")),
                      0);
    json_decref(j);
}
END_TEST

/* GET_STATE, GET_TASKS, GET_FRAMEWORKS show what /state, /tasks and
 * /frameworks show. */
START_TEST(test_state_matches_endpoints)
{
    running_task();
    json_t *st = op_get("GET_STATE");
    json_t *gs = json_object_get(st, "get_state");
    json_t *tasks = path(gs, "get_tasks", "tasks");
    ck_assert_uint_eq(json_array_size(tasks), 1);
    json_t *t = json_array_get(tasks, 0);
    ck_assert_str_eq(json_string_value(path(t, "task_id", "value")), "t1");
    ck_assert_str_eq(json_string_value(json_object_get(t, "state")),
                     "TASK_RUNNING");
    ck_assert_str_eq(json_string_value(path(t, "framework_id", "value")),
                     FW.id);
    ck_assert_str_eq(json_string_value(path(t, "agent_id", "value")), AG.id);
    ck_assert_uint_eq(json_array_size(json_object_get(t, "statuses")), 2);
    json_t *fws = path(gs, "get_frameworks", "frameworks");
    ck_assert_uint_eq(json_array_size(fws), 1);
    json_t *fw = json_array_get(fws, 0);
    ck_assert_str_eq(json_string_value(path(
                         json_object_get(fw, "framework_info"), "id", "value")),
                     FW.id);
    ck_assert(json_is_true(json_object_get(fw, "active")));
    ck_assert(json_is_true(json_object_get(fw, "connected")));
    ck_assert(json_array_size(json_object_get(fw, "allocated_resources")) > 0);
    json_t *ags = path(gs, "get_agents", "agents");
    ck_assert_uint_eq(json_array_size(ags), 1);
    json_t *es = endpoint("/slaves");
    ck_assert_uint_eq(
        json_array_size(
            json_object_get(json_array_get(ags, 0), "capabilities")),
        json_array_size(json_object_get(
            json_array_get(json_object_get(es, "slaves"), 0), "capabilities")));
    json_decref(es);
    ck_assert_str_eq(json_string_value(path(
                         json_object_get(json_array_get(ags, 0), "agent_info"),
                         "id", "value")),
                     AG.id);

    /* GET_TASKS and GET_FRAMEWORKS are GET_STATE's parts. */
    json_t *gt = op_get("GET_TASKS");
    ck_assert(json_equal(json_object_get(gt, "get_tasks"),
                         json_object_get(gs, "get_tasks")));
    json_decref(gt);

    /* The endpoints agree. */
    json_t *et = endpoint("/tasks");
    json_t *e0 = json_array_get(json_object_get(et, "tasks"), 0);
    ck_assert_uint_eq(json_array_size(json_object_get(et, "tasks")), 1);
    ck_assert_str_eq(json_string_value(json_object_get(e0, "id")), "t1");
    ck_assert_str_eq(json_string_value(json_object_get(e0, "state")),
                     json_string_value(json_object_get(t, "state")));
    json_decref(et);
    json_t *ef = endpoint("/frameworks");
    json_t *f0 = json_array_get(json_object_get(ef, "frameworks"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(f0, "id")), FW.id);
    ck_assert(json_equal(json_object_get(f0, "active"),
                         json_object_get(fw, "active")));
    json_decref(ef);
    json_decref(st);

    /* A torn-down framework is a completed one. */
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "TEARDOWN", NULL, NULL), 202);
    json_t *gf = op_get("GET_FRAMEWORKS");
    ck_assert_uint_eq(json_array_size(path(gf, "get_frameworks", "frameworks")),
                      0);
    json_t *done = path(gf, "get_frameworks", "completed_frameworks");
    ck_assert_uint_eq(json_array_size(done), 1);
    ck_assert(
        json_is_false(json_object_get(json_array_get(done, 0), "active")));
    json_decref(gf);
}
END_TEST

/* GET_METRICS lists what /metrics/snapshot lists, with its values. */
START_TEST(test_metrics_match_snapshot)
{
    running_task();
    json_t *snap = endpoint("/metrics/snapshot");
    json_t *gm = op_get("GET_METRICS");
    json_t *list = path(gm, "get_metrics", "metrics");
    ck_assert_uint_eq(json_array_size(list), json_object_size(snap));
    size_t i;
    json_t *mt;
    json_array_foreach(list, i, mt)
    {
        const char *name = json_string_value(json_object_get(mt, "name"));
        json_t *v = json_object_get(snap, name);
        ck_assert_msg(v != NULL, "%s not in /metrics/snapshot", name);
        /* The machine's own figures (system/load_*, system/mem_free_bytes)
         * move between the two reads; so do the clocks. */
        if (strcmp(name, "master/uptime_secs") != 0 &&
            strncmp(name, "system/", 7) != 0 &&
            strncmp(name, "allocator/mesos/allocation_run", 30) != 0)
            ck_assert_msg(json_number_value(v) ==
                              json_number_value(json_object_get(mt, "value")),
                          "%s differs", name);
    }
    json_t *v = json_object_get(snap, "master/tasks_running");
    ck_assert(json_number_value(v) == 1.0);
    json_decref(gm);
    json_decref(snap);
}
END_TEST

/* GET_FLAGS lists /flags; GET_ROLES the roles of /roles; GET_MASTER this
 * master; GET_LOGGING_LEVEL the verbosity. */
START_TEST(test_flags_roles_master)
{
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    json_t *ef = endpoint("/flags");
    json_t *all = json_object_get(ef, "flags");
    json_t *gf = op_get("GET_FLAGS");
    json_t *list = path(gf, "get_flags", "flags");
    ck_assert_uint_eq(json_array_size(list), json_object_size(all));
    size_t i;
    json_t *f;
    json_array_foreach(list, i, f)
    {
        const char *name = json_string_value(json_object_get(f, "name"));
        ck_assert_str_eq(json_string_value(json_object_get(f, "value")),
                         json_string_value(json_object_get(all, name)));
    }
    ck_assert_uint_ge(json_array_size(list), 10);
    json_decref(gf);
    json_decref(ef);

    json_t *gr = op_get("GET_ROLES");
    json_t *roles = path(gr, "get_roles", "roles");
    bool found = false;
    json_t *r;
    json_array_foreach(roles, i, r)
    {
        if (strcmp(json_string_value(json_object_get(r, "name")), "web") != 0)
            continue;
        found = true;
        ck_assert(json_number_value(json_object_get(r, "weight")) == 1.0);
        json_t *fids = json_object_get(r, "frameworks");
        ck_assert_uint_eq(json_array_size(fids), 1);
        ck_assert_str_eq(json_string_value(
                             json_object_get(json_array_get(fids, 0), "value")),
                         FW.id);
    }
    ck_assert(found);
    json_t *er = endpoint("/roles");
    ck_assert_uint_eq(json_array_size(json_object_get(er, "roles")),
                      json_array_size(roles));
    json_decref(er);
    json_decref(gr);

    json_t *gm = op_get("GET_MASTER");
    json_t *mi = path(gm, "get_master", "master_info");
    ck_assert_str_eq(json_string_value(json_object_get(mi, "id")), X.m->id);
    ck_assert_str_eq(json_string_value(json_object_get(mi, "hostname")), "mfx");
    ck_assert_int_eq(json_integer_value(json_object_get(mi, "port")), 5050);
    ck_assert(json_number_value(path(gm, "get_master", "start_time")) > 0);
    json_decref(gm);

    json_t *gl = op_get("GET_LOGGING_LEVEL");
    ck_assert_int_eq(json_integer_value(path(gl, "get_logging_level", "level")),
                     0);
    json_decref(gl);
}
END_TEST

/* ---- The event stream ---------------------------------------------------- */

/* SUBSCRIBED first, with the state and the heartbeat interval; then the
 * events of a framework launching a task, its agent updating it, the
 * framework tearing down. */
START_TEST(test_subscribe_events)
{
    json_t *ev = op_subscribe(&OP);
    json_t *sub = json_object_get(ev, "subscribed");
    ck_assert(json_number_value(
                  json_object_get(sub, "heartbeat_interval_seconds")) == 15.0);
    ck_assert(json_is_object(path(sub, "get_state", "get_frameworks")));
    json_decref(ev);
    ev = mfx_next_event(&X, &OP, "HEARTBEAT");
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);

    running_task();
    char types[1024];
    unread_types(&OP, types, sizeof(types));
    ck_assert_str_eq(types,
                     "FRAMEWORK_ADDED AGENT_ADDED TASK_ADDED TASK_UPDATED");

    /* The events' contents. */
    size_t len;
    json_t *added = NULL, *updated = NULL;
    for (size_t i = 0; i < http_fake_record_count(OP.stream); i++) {
        const uint8_t *r = http_fake_record(OP.stream, i, &len);
        json_t *e = json_loadb((const char *)r, len, 0, NULL);
        const char *t = json_string_value(json_object_get(e, "type"));
        if (strcmp(t, "TASK_ADDED") == 0)
            added = json_incref(e);
        else if (strcmp(t, "TASK_UPDATED") == 0)
            updated = json_incref(e);
        else if (strcmp(t, "AGENT_ADDED") == 0)
            ck_assert_str_eq(
                json_string_value(path(
                    path(path(e, "agent_added", "agent"), "agent_info", "id"),
                    "value", NULL)),
                AG.id);
        json_decref(e);
    }
    ck_assert_str_eq(json_string_value(path(path(added, "task_added", "task"),
                                            "state", NULL)),
                     "TASK_STAGING");
    ck_assert_str_eq(
        json_string_value(
            path(path(updated, "task_updated", "status"), "state", NULL)),
        "TASK_RUNNING");
    ck_assert_str_eq(json_string_value(path(updated, "task_updated", "state")),
                     "TASK_RUNNING");
    ck_assert_str_eq(
        json_string_value(
            path(path(updated, "task_updated", "framework_id"), "value", NULL)),
        FW.id);
    json_decref(added);
    json_decref(updated);

    /* A second subscriber sees the task in its SUBSCRIBED. */
    ev = op_subscribe(&OP2);
    json_t *tasks =
        path(path(path(ev, "subscribed", "get_state"), "get_tasks", NULL),
             "tasks", NULL);
    ck_assert_uint_eq(json_array_size(tasks), 1);
    json_decref(ev);
    ck_assert_uint_eq(X.m->nopev_subs, 2);

    ck_assert_int_eq(mfx_framework_call(&X, &FW, "TEARDOWN", NULL, NULL), 202);
    unread_types(&OP, types, sizeof(types));
    ck_assert_str_eq(types, "TASK_UPDATED FRAMEWORK_REMOVED");
    unread_types(&OP2, types, sizeof(types));
    ck_assert_str_eq(types, "TASK_UPDATED FRAMEWORK_REMOVED");

    /* Periodic heartbeats reach everyone. */
    size_t before = http_fake_record_count(OP.stream);
    master_opev_heartbeat(X.m);
    ck_assert_uint_eq(http_fake_record_count(OP.stream), before + 1);
    ev = mfx_next_event(&X, &OP, "HEARTBEAT");
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
}
END_TEST

/* TASK_UPDATED for every new state only: a retried update is not one. */
START_TEST(test_task_updated_per_state)
{
    json_decref(op_subscribe(&OP));
    running_task();
    char types[1024];
    unread_types(&OP, types, sizeof(types));
    ck_assert_str_eq(types,
                     "FRAMEWORK_ADDED AGENT_ADDED TASK_ADDED TASK_UPDATED");
    agent_update("TASK_RUNNING");
    unread_types(&OP, types, sizeof(types));
    ck_assert_str_eq(types, "");
    agent_update("TASK_FINISHED");
    json_t *ev = mfx_next_event(&X, &OP, "TASK_UPDATED");
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(json_string_value(path(ev, "task_updated", "state")),
                     "TASK_FINISHED");
    json_decref(ev);
    /* A finished task is a completed one in GET_TASKS, as in /state. */
    json_t *gt = op_get("GET_TASKS");
    ck_assert_uint_eq(json_array_size(path(gt, "get_tasks", "tasks")), 0);
    ck_assert_uint_eq(json_array_size(path(gt, "get_tasks", "completed_tasks")),
                      1);
    json_decref(gt);
}
END_TEST

/* Past MASTER_MAX_OPERATOR_SUBSCRIBERS the oldest subscriber makes room,
 * as in Mesos. */
START_TEST(test_oldest_subscriber_evicted)
{
    size_t n = MASTER_MAX_OPERATOR_SUBSCRIBERS;
    struct http_fake **subs = calloc(n + 1, sizeof(*subs));
    for (size_t i = 0; i <= n; i++) {
        subs[i] = mfx_operator(&X, "{\"type\":\"SUBSCRIBE\"}");
        ck_assert(http_fake_is_stream(subs[i]));
    }
    ck_assert_uint_eq(X.m->nopev_subs, n);
    ck_assert(http_fake_stream_ended(subs[0]));
    ck_assert(!http_fake_stream_ended(subs[1]));
    ck_assert(!http_fake_stream_ended(subs[n]));
    ck_assert_uint_eq(X.m->metrics.opev_dropped, 0);
    mfx_stop(&X);
    for (size_t i = 0; i <= n; i++)
        http_fake_free(subs[i]);
    free(subs);
    mfx_start(&X, NULL); /* for the teardown */
}
END_TEST

static bool agent_gone(void *arg)
{
    (void)arg;
    return X.m->nopev_subs == 0;
}

static bool fw_disconnected(void *arg)
{
    (void)arg;
    struct framework *fw = master_framework_find(X.m, FW.id);
    return fw != NULL && fw->stream == NULL;
}

/* FRAMEWORK_UPDATED when a framework re-subscribes (not when it
 * disconnects, as Mesos); AGENT_REMOVED; a subscriber that hangs up is
 * forgotten, not counted as dropped. */
START_TEST(test_updates_and_hangup)
{
    json_decref(op_subscribe(&OP));
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    http_fake_disconnect(FW.stream);
    ck_assert(mfx_run_until(&X, fw_disconnected, NULL));
    ck_assert(!mfx_has_event(&OP, "FRAMEWORK_UPDATED"));
    char info[512];
    snprintf(info, sizeof(info),
             "{\"id\":{\"value\":\"%s\"},\"user\":\"u\",\"name\":"
             "\"fw\",\"roles\":[\"web\"],\"failover_timeout\":60,"
             "\"capabilities\":[{\"type\":\"MULTI_ROLE\"}]}",
             FW.id);
    mfx_peer_free(&FW);
    mfx_framework_subscribe(&X, &FW, info);
    json_t *ev = mfx_next_event(&X, &OP, "FRAMEWORK_UPDATED");
    ck_assert_ptr_nonnull(ev);
    ck_assert(json_is_true(
        path(path(ev, "framework_updated", "framework"), "connected", NULL)));
    json_decref(ev);
    /* DRAIN_AGENT with mark_gone removes the agent. */
    char call[512];
    snprintf(call, sizeof(call),
             "{\"type\":\"DRAIN_AGENT\",\"drain_agent\":{\"agent_id\":{"
             "\"value\":\"%s\"},\"mark_gone\":true}}",
             AG.id);
    http_fake_free(mfx_operator(&X, call));
    ev = mfx_next_event(&X, &OP, "AGENT_REMOVED");
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(json_string_value(path(
                         path(ev, "agent_removed", "agent_id"), "value", NULL)),
                     AG.id);
    json_decref(ev);
    /* Told why, as Mesos's markGone tells it. */
    ev = mfx_next_event(&X, &AG, "SHUTDOWN");
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(
        json_string_value(path(path(ev, "shutdown", NULL), "message", NULL)),
        "Agent has been marked gone");
    json_decref(ev);

    http_fake_disconnect(OP.stream);
    ck_assert(mfx_run_until(&X, agent_gone, NULL));
    ck_assert_uint_eq(X.m->metrics.opev_dropped, 0);
}
END_TEST

static bool dropped(void *arg)
{
    (void)arg;
    return X.m->metrics.opev_dropped == 1 && X.m->nopev_subs == 1;
}

/* A subscriber that stops reading is dropped once its queue passes the
 * cap; the others and the master go on. */
START_TEST(test_stalled_subscriber_dropped)
{
    X.m->opts.operator_stream_cap = 8192;
    json_decref(op_subscribe(&OP));
    json_decref(op_subscribe(&OP2));
    http_fake_stall(OP.stream, true);
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    struct mfx_peer ags[40];
    int n = 0;
    while (http_fake_close_count(OP.stream) == 0 && n < 40) {
        char host[32];
        snprintf(host, sizeof(host), "host%d", n);
        mfx_agent_subscribe(&X, &ags[n++], host, "cpus:2;mem:1024");
        mfx_settle(&X);
    }
    ck_assert_int_lt(n, 40);
    ck_assert(mfx_run_until(&X, dropped, NULL));
    ck_assert_int_eq(http_fake_close_reason(OP.stream), HTTP_CLOSE_SLOW);

    /* The other subscriber saw every agent arrive. */
    int seen = 0;
    json_t *ev;
    while ((ev = mfx_next_event(&X, &OP2, "AGENT_ADDED")) != NULL) {
        seen++;
        json_decref(ev);
        if (seen == n)
            break;
    }
    ck_assert_int_eq(seen, n);
    /* The metrics say so, and the master answers. */
    json_t *snap = endpoint("/metrics/snapshot");
    ck_assert(json_number_value(json_object_get(
                  snap, "master/operator_event_stream_subscribers")) == 1.0);
    ck_assert(json_number_value(json_object_get(
                  snap, "master/operator_event_stream_subscribers_dropped")) ==
              1.0);
    json_decref(snap);
    json_decref(op_get("GET_STATE"));
    for (int i = 0; i < n; i++)
        mfx_peer_free(&ags[i]);
}
END_TEST

/* SUBSCRIBE in protobuf: records are mesos.v1.master.Event messages. */
START_TEST(test_subscribe_protobuf)
{
    Mesos__V1__Master__Call call = MESOS__V1__MASTER__CALL__INIT;
    call.has_type = true;
    call.type = MESOS__V1__MASTER__CALL__TYPE__SUBSCRIBE;
    uint8_t buf[16];
    size_t len = mesos__v1__master__call__pack(&call, buf);
    memset(&OP, 0, sizeof(OP));
    OP.stream = http_fake_new(X.base, HTTP_POST, "/api/v1");
    http_fake_add_header(OP.stream, "Content-Type", HTTP_CONTENT_PROTOBUF);
    http_fake_add_header(OP.stream, "Accept", HTTP_CONTENT_PROTOBUF);
    http_fake_set_body(OP.stream, buf, len);
    http_fake_dispatch(OP.stream, master_operator_api, X.m);
    ck_assert(http_fake_is_stream(OP.stream));
    ck_assert_str_eq(http_fake_content_type(OP.stream), HTTP_CONTENT_PROTOBUF);
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    ck_assert_uint_ge(http_fake_record_count(OP.stream), 3);
    static const Mesos__V1__Master__Event__Type want[] = {
        MESOS__V1__MASTER__EVENT__TYPE__SUBSCRIBED,
        MESOS__V1__MASTER__EVENT__TYPE__HEARTBEAT,
        MESOS__V1__MASTER__EVENT__TYPE__FRAMEWORK_ADDED,
    };
    for (size_t i = 0; i < 3; i++) {
        size_t rlen;
        const uint8_t *r = http_fake_record(OP.stream, i, &rlen);
        Mesos__V1__Master__Event *ev =
            mesos__v1__master__event__unpack(NULL, rlen, r);
        ck_assert_ptr_nonnull(ev);
        ck_assert_int_eq(ev->type, want[i]);
        if (i == 0)
            ck_assert_ptr_nonnull(ev->subscribed->get_state);
        if (i == 2)
            ck_assert_str_eq(
                ev->framework_added->framework->framework_info->id->value,
                FW.id);
        protobuf_c_message_free_unpacked(&ev->base, NULL);
    }
}
END_TEST

static Suite *master_operator_suite(void)
{
    Suite *s = suite_create("master_operator");
    TCase *tc = tcase_create("read");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_read_calls_answer);
    tcase_add_test(tc, test_state_matches_endpoints);
    tcase_add_test(tc, test_metrics_match_snapshot);
    tcase_add_test(tc, test_flags_roles_master);
    suite_add_tcase(s, tc);
    tc = tcase_create("subscribe");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_subscribe_events);
    tcase_add_test(tc, test_task_updated_per_state);
    tcase_add_test(tc, test_oldest_subscriber_evicted);
    tcase_add_test(tc, test_updates_and_hangup);
    tcase_add_test(tc, test_stalled_subscriber_dropped);
    tcase_add_test(tc, test_subscribe_protobuf);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(master_operator_suite)
