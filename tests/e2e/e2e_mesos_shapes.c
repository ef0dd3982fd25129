/*
 * offerd's answers have the shapes of Mesos's documented examples, field by
 * field. tests/data/mesos-shapes/ holds one fixture per example of
 * apache/mesos docs/operator-http-api.md (each v1 call's answer, each
 * operator event) and of docs/endpoints/master/state.md: every field path
 * of the example with its JSON type ("path type"), and "absent-ok path
 * reason" for what offerd deliberately does not serve. metric-names.list
 * holds the metric names of the GET_METRICS example.
 *
 * The test starts a real master and agent, runs a framework's tasks (one
 * running, one finished), sets weights, quota and a maintenance schedule,
 * re-subscribes the framework, tears a second one down and lets a scripted
 * agent leave, so that every list has members. It then asks each call in
 * JSON and in protobuf (which must decode as a Response of the call's
 * type), reads every event from a JSON and a protobuf operator stream, and
 * checks each fixture path: at least one value is found at it, and every
 * value found has the fixture's JSON type.
 */
#include <check.h>
#include <jansson.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/json_pb.h"
#include "harness.h"
#include "harness_api.h"
#include "mesos/v1/master.pb-c.h"

#ifndef OFFERD_SOURCE_DIR
#error "OFFERD_SOURCE_DIR must name the source tree"
#endif
#define SHAPES_DIR OFFERD_SOURCE_DIR "/tests/data/mesos-shapes"

static struct e2e_proc master, agent;

/* ---- Fixtures ------------------------------------------------------------ */

/* The lines of SHAPES_DIR/name that are not comments, each NUL-terminated
 * and without its newline, in *lines (malloc'd, caller frees with
 * free_lines); returns how many. Fails the test when the file is missing. */
static size_t read_lines(const char *name, char ***lines)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", SHAPES_DIR, name);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    size_t n = 0, cap = 0;
    char **v = NULL;
    char buf[1024];
    while (fgets(buf, sizeof(buf), f) != NULL) {
        buf[strcspn(buf, "\n")] = '\0';
        if (buf[0] == '#' || buf[0] == '\0')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            v = realloc(v, cap * sizeof(*v));
            ck_assert_ptr_nonnull(v);
        }
        v[n++] = strdup(buf);
    }
    fclose(f);
    *lines = v;
    return n;
}

static void free_lines(char **lines, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(lines[i]);
    free(lines);
}

/* Count the values at path (dotted keys, "[]" for every element, "*" for
 * every member) under v; *bad counts those whose type is not want, and
 * *got keeps the type of the last one found. */
static void walk(const json_t *v, const char *path, const char *want,
                 size_t *found, size_t *bad, const char **got)
{
    if (*path == '\0') {
        (*found)++;
        *got = jpb_json_kind(v);
        if (strcmp(*got, want) != 0)
            (*bad)++;
        return;
    }
    if (strncmp(path, "[]", 2) == 0) {
        size_t i;
        const json_t *e;
        if (json_is_array(v))
            json_array_foreach(v, i, e)
                walk(e, path + 2, want, found, bad, got);
        return;
    }
    if (*path == '.')
        path++;
    size_t len = strcspn(path, ".[");
    if (!json_is_object(v))
        return;
    if (len == 1 && path[0] == '*') {
        const char *k;
        const json_t *e;
        json_object_foreach((json_t *)v, k, e)
        {
            walk(e, path + 1, want, found, bad, got);
        }
        return;
    }
    char key[256];
    snprintf(key, sizeof(key), "%.*s", (int)len, path);
    const json_t *e = json_object_get(v, key);
    if (e != NULL)
        walk(e, path + len, want, found, bad, got);
}

/* Whether path lies under (or is) an absent-ok path. */
static bool under(const char *path, const char *top)
{
    size_t n = strlen(top);
    return strncmp(path, top, n) == 0 &&
           (path[n] == '\0' || path[n] == '.' || path[n] == '[');
}

/* Every mismatch of every fixture, reported together at the end. */
static char failures_report[32768];
static size_t failures_used, failures_total;

/* Check answer against the fixture name.shape: every path found, with its
 * type, unless an absent-ok line covers it. Mismatches go to
 * failures_report. */
static void check_shape(const char *name, const json_t *answer)
{
    char file[128];
    snprintf(file, sizeof(file), "%s.shape", name);
    char **lines;
    size_t n = read_lines(file, &lines);
    char tops[64][256];
    size_t ntops = 0;
    for (size_t i = 0; i < n; i++) {
        if (strncmp(lines[i], "absent-ok ", 10) == 0 && ntops < 64) {
            sscanf(lines[i] + 10, "%255s", tops[ntops]);
            ntops++;
        }
    }
    char report[8192] = "";
    size_t used = 0, failures = 0, checked = 0;
    for (size_t i = 0; i < n; i++) {
        char path[512], want[32];
        if (strncmp(lines[i], "absent-ok ", 10) == 0)
            continue;
        ck_assert_msg(sscanf(lines[i], "%511s %31s", path, want) == 2,
                      "%s: bad line '%s'", file, lines[i]);
        bool skip = false;
        for (size_t k = 0; k < ntops && !skip; k++)
            skip = under(path, tops[k]);
        if (skip)
            continue;
        checked++;
        /* "array?": an array when present (see extract.py). */
        size_t wl = strlen(want);
        bool optional = wl > 0 && want[wl - 1] == '?';
        if (optional)
            want[wl - 1] = '\0';
        size_t found = 0, bad = 0;
        const char *got = "";
        walk(answer, path, want, &found, &bad, &got);
        if ((found > 0 || optional) && bad == 0)
            continue;
        failures++;
        int w = snprintf(report + used, sizeof(report) - used, "\n  %s %s: %s",
                         path, want, found == 0 ? "absent" : got);
        if (w > 0 && (size_t)w < sizeof(report) - used)
            used += (size_t)w;
    }
    free_lines(lines, n);
    ck_assert_msg(checked > 0, "%s: no path checked", file);
    if (failures == 0)
        return;
    failures_total += failures;
    int w = snprintf(failures_report + failures_used,
                     sizeof(failures_report) - failures_used,
                     "\n%s: %zu of %zu paths differ:%s", file, failures,
                     checked, report);
    if (w > 0 && (size_t)w < sizeof(failures_report) - failures_used)
        failures_used += (size_t)w;
}

/* ---- Calls --------------------------------------------------------------- */

/* An operator call in JSON: its 200 answer, parsed. */
static json_t *call_json(const char *call)
{
    static char body[1 << 20];
    ck_assert_int_eq(
        api_post(master.port, "/api/v1", NULL, call, body, sizeof(body)), 200);
    json_t *j = json_loads(body, 0, NULL);
    ck_assert_msg(j != NULL, "%s: answer is not JSON", call);
    return j;
}

/* The same call in protobuf: 200, and the body decodes as a Response of
 * the expected type. */
static void call_protobuf(const char *call, Mesos__V1__Master__Response__Type t)
{
    char err[256];
    ProtobufCMessage *c =
        jpb_from_json_text(&mesos__v1__master__call__descriptor, call,
                           strlen(call), err, sizeof(err));
    ck_assert_msg(c != NULL, "%s: %s", call, err);
    size_t len;
    uint8_t *pb = jpb_to_pb(c, &len);
    jpb_free(c);
    const char *headers[] = {"Content-Type: application/x-protobuf",
                             "Accept: application/x-protobuf", NULL};
    struct e2e_response r;
    ck_assert_int_eq(
        e2e_http(master.port, "POST", "/api/v1", headers, pb, len, T, &r), 0);
    free(pb);
    ck_assert_int_eq(r.status, 200);
    Mesos__V1__Master__Response *resp = mesos__v1__master__response__unpack(
        NULL, r.body_len, (const uint8_t *)r.body);
    ck_assert_msg(resp != NULL, "%s: protobuf answer does not decode", call);
    ck_assert_int_eq(resp->type, t);
    mesos__v1__master__response__free_unpacked(resp, NULL);
    e2e_response_free(&r);
}

/* Ask call in both encodings and check the JSON answer against fixture. */
static void check_call(const char *fixture, const char *call,
                       Mesos__V1__Master__Response__Type t)
{
    json_t *j = call_json(call);
    check_shape(fixture, j);
    json_decref(j);
    call_protobuf(call, t);
}

/* ---- Setting the scene --------------------------------------------------- */

/* Acknowledge the framework's updates until t1 runs and t2 has finished. */
static void ack_until_settled(struct conn *fw)
{
    bool t1_running = false, t2_finished = false;
    while (!t1_running || !t2_finished) {
        json_t *ev = api_wait_event(fw, "UPDATE", 20000);
        ck_assert_msg(ev != NULL, "no update (t1 running %d, t2 finished %d)",
                      t1_running, t2_finished);
        json_t *st = json_object_get(json_object_get(ev, "update"), "status");
        const char *state = json_string_value(json_object_get(st, "state"));
        const char *task = json_string_value(
            json_object_get(json_object_get(st, "task_id"), "value"));
        if (strcmp(task, "t1") == 0 && strcmp(state, "TASK_RUNNING") == 0)
            t1_running = true;
        if (strcmp(task, "t2") == 0 && strcmp(state, "TASK_FINISHED") == 0)
            t2_finished = true;
        ck_assert_msg(strcmp(state, "TASK_FAILED") != 0 &&
                          strcmp(state, "TASK_ERROR") != 0 &&
                          strcmp(state, "TASK_LOST") != 0,
                      "task %s: %s", task, state);
        api_fw_ack_status(fw, master.port, st);
        json_decref(ev);
    }
}

static bool task_completed(void *arg)
{
    (void)arg;
    json_t *st = e2e_get_json(master.port, "/state");
    if (st == NULL)
        return false;
    json_t *fw = json_array_get(json_object_get(st, "frameworks"), 0);
    bool done = json_array_size(json_object_get(fw, "completed_tasks")) > 0;
    json_decref(st);
    return done;
}

#define TASK_INFO                                                              \
    "{\"name\":\"%s\",\"task_id\":{\"value\":\"%s\"},"                         \
    "\"agent_id\":{\"value\":\"%s\"},\"resources\":%s,"                        \
    "\"command\":{\"value\":\"%s\",\"user\":\"%s\"},"                          \
    "\"container\":{\"type\":\"MESOS\"},"                                      \
    "\"health_check\":{\"type\":\"COMMAND\",\"command\":{\"value\":\"true\"}}" \
    ","                                                                        \
    "\"labels\":{\"labels\":[{\"key\":\"k\",\"value\":\"v\"}]}}"

/* The tasks hold a port each too, for the examples' ranges. */
#define TASK_RES(port)                                                         \
    "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":0.5}},"     \
    "{\"name\":\"mem\",\"type\":\"SCALAR\",\"scalar\":{\"value\":64}},"        \
    "{\"name\":\"ports\",\"type\":\"RANGES\",\"ranges\":{\"range\":[{"         \
    "\"begin\":" port ",\"end\":" port "}]}}]"

/* ---- The test ------------------------------------------------------------ */

/* Events the JSON operator stream must show, with their fixtures. */
static const char *const EVENTS[] = {
    "SUBSCRIBED",        "HEARTBEAT",     "AGENT_ADDED",
    "FRAMEWORK_ADDED",   "TASK_ADDED",    "TASK_UPDATED",
    "FRAMEWORK_UPDATED", "AGENT_REMOVED", "FRAMEWORK_REMOVED",
};
#define NEVENTS (sizeof(EVENTS) / sizeof(EVENTS[0]))

START_TEST(test_mesos_shapes)
{
    /* The default registry (SQLite in the work_dir), for the registrar's
     * metrics. */
    const char *mflags[] = {"--allocation_interval=100ms", "--cluster=shapes",
                            NULL};
    ck_assert_int_eq(e2e_start_master(&master, mflags), 0);
    struct conn js, pb, fw, fw2, ag2;
    api_operator_subscribe(&js, master.port, "application/json");
    api_operator_subscribe(&pb, master.port, "application/x-protobuf");

    const char *aflags[] = {
        "--resources=cpus:2;mem:512;disk:1024;ports:[31000-32000]", NULL};
    ck_assert_int_eq(e2e_start_agent(&agent, master.port, aflags), 0);
    ck_assert_int_eq(e2e_wait_agents(&master, 1, 20000), 0);

    /* A framework with the FrameworkInfo fields the examples show. */
    struct passwd *pw = getpwuid(geteuid());
    ck_assert_ptr_nonnull(pw);
    const char *user = pw->pw_name;
    char info[1024];
    snprintf(info, sizeof(info),
             "{\"user\":\"%s\",\"name\":\"shapes\",\"role\":\"web\","
             "\"principal\":\"p\",\"hostname\":\"fwhost\",\"checkpoint\":true,"
             "\"failover_timeout\":600,"
             "\"capabilities\":[{\"type\":\"PARTITION_AWARE\"}]}",
             user);
    api_subscribe_framework(&fw, master.port, info);
    char fw_id[256];
    snprintf(fw_id, sizeof(fw_id), "%s", fw.id);

    /* t1 keeps running, t2 finishes (a completed task). */
    char offer_id[256], agent_id[256];
    json_t *offers = api_wait_offer(&fw, offer_id, agent_id, 20000);
    ck_assert_ptr_nonnull(offers);
    json_decref(offers);
    char t1[1536], t2[1536], accept[4096];
    snprintf(t1, sizeof(t1), TASK_INFO, "t1", "t1", agent_id, TASK_RES("31000"),
             "sleep 600", user);
    snprintf(t2, sizeof(t2), TASK_INFO, "t2", "t2", agent_id, TASK_RES("31001"),
             "true", user);
    snprintf(accept, sizeof(accept),
             "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{\"type\":"
             "\"LAUNCH\",\"launch\":{\"task_infos\":[%s,%s]}}]}",
             offer_id, t1, t2);
    ck_assert_int_eq(api_fw_call(&fw, master.port, "ACCEPT", "accept", accept),
                     202);
    ack_until_settled(&fw);
    ck_assert(e2e_poll_until(task_completed, NULL, 20000));

    /* Weights, quota and a maintenance schedule, for their answers. */
    char reason[1024];
    ck_assert_int_eq(
        api_post(master.port, "/api/v1", NULL,
                 "{\"type\":\"UPDATE_WEIGHTS\",\"update_weights\":{"
                 "\"weight_infos\":[{\"role\":\"web\",\"weight\":2.0}]}}",
                 reason, sizeof(reason)),
        200);
    ck_assert_int_eq(
        api_post(
            master.port, "/api/v1", NULL,
            "{\"type\":\"UPDATE_QUOTA\",\"update_quota\":{\"quota_configs\":"
            "[{\"role\":\"web\",\"limits\":{\"cpus\":{\"value\":10},"
            "\"mem\":{\"value\":2048},\"disk\":{\"value\":4096}}}]}}",
            reason, sizeof(reason)),
        200);
    ck_assert_int_eq(
        api_post(master.port, "/api/v1", NULL,
                 "{\"type\":\"UPDATE_MAINTENANCE_SCHEDULE\","
                 "\"update_maintenance_schedule\":{\"schedule\":{\"windows\":[{"
                 "\"machine_ids\":[{\"hostname\":\"maint-host\",\"ip\":"
                 "\"10.0.0.9\"}],\"unavailability\":{\"start\":{"
                 "\"nanoseconds\":4102444800000000000}}}]}}}",
                 reason, sizeof(reason)),
        200);

    /* The framework comes back (FRAMEWORK_UPDATED, a reregistered_time);
     * a second one is torn down (FRAMEWORK_REMOVED); a scripted agent
     * leaves (AGENT_REMOVED). */
    api_conn_close(&fw);
    char again[2400];
    snprintf(again, sizeof(again), "{\"id\":{\"value\":\"%s\"},%s", fw_id,
             info + 1);
    api_subscribe_framework(&fw, master.port, again);
    api_subscribe_framework(
        &fw2, master.port,
        "{\"user\":\"u\",\"name\":\"leaving\",\"role\":\"*\",\"checkpoint\":"
        "true,\"failover_timeout\":0,\"capabilities\":[{\"type\":"
        "\"RESERVATION_REFINEMENT\"}]}");
    ck_assert_int_eq(api_fw_call(&fw2, master.port, "TEARDOWN", NULL, NULL),
                     202);
    api_subscribe_agent(&ag2, master.port, "leaving-host", AGENT_RES);
    char bye[512];
    snprintf(bye, sizeof(bye),
             "{\"type\":\"UNREGISTER\",\"agent_id\":{\"value\":\"%s\"}}",
             ag2.id);
    ck_assert_int_eq(api_post(master.port, "/api/v1/agent", ag2.stream_id, bye,
                              reason, sizeof(reason)),
                     202);

    /* Every event on the JSON stream, checked against its fixture. */
    bool seen[NEVENTS] = {false};
    size_t nseen = 0;
    while (nseen < NEVENTS) {
        json_t *ev = api_next_event(&js, 20000);
        ck_assert_msg(ev != NULL, "operator stream: %zu of %zu event types",
                      nseen, NEVENTS);
        const char *type = json_string_value(json_object_get(ev, "type"));
        for (size_t i = 0; i < NEVENTS; i++) {
            if (!seen[i] && strcmp(type, EVENTS[i]) == 0) {
                check_shape(EVENTS[i], ev);
                seen[i] = true;
                nseen++;
            }
        }
        json_decref(ev);
    }
    /* ... and the same types decode from the protobuf stream. */
    bool pseen[NEVENTS] = {false};
    nseen = 0;
    while (nseen < NEVENTS) {
        size_t len;
        uint8_t *rec = api_next_record(&pb, 20000, &len);
        ck_assert_msg(rec != NULL, "protobuf stream: %zu of %zu event types",
                      nseen, NEVENTS);
        Mesos__V1__Master__Event *ev =
            mesos__v1__master__event__unpack(NULL, len, rec);
        free(rec);
        ck_assert_msg(ev != NULL, "a protobuf record is not an Event");
        const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
            &mesos__v1__master__event__type__descriptor, ev->type);
        for (size_t i = 0; v != NULL && i < NEVENTS; i++) {
            if (!pseen[i] && strcmp(v->name, EVENTS[i]) == 0) {
                pseen[i] = true;
                nseen++;
            }
        }
        mesos__v1__master__event__free_unpacked(ev, NULL);
    }

    /* Every call with an example, in JSON and protobuf. */
    const struct {
        const char *fixture, *call;
        Mesos__V1__Master__Response__Type type;
    } calls[] = {
        {"GET_HEALTH", "{\"type\":\"GET_HEALTH\"}",
         MESOS__V1__MASTER__RESPONSE__TYPE__GET_HEALTH},
        {"GET_FLAGS", "{\"type\":\"GET_FLAGS\"}",
         MESOS__V1__MASTER__RESPONSE__TYPE__GET_FLAGS},
        {"GET_VERSION", "{\"type\":\"GET_VERSION\"}",
         MESOS__V1__MASTER__RESPONSE__TYPE__GET_VERSION},
        {"GET_METRICS", "{\"type\":\"GET_METRICS\",\"get_metrics\":{}}",
         MESOS__V1__MASTER__RESPONSE__TYPE__GET_METRICS},
        {"GET_LOGGING_LEVEL", "{\"type\":\"GET_LOGGING_LEVEL\"}",
         MESOS__V1__MASTER__RESPONSE__TYPE__GET_LOGGING_LEVEL},
        {"GET_STATE", "{\"type\":\"GET_STATE\"}",
         MESOS__V1__MASTER__RESPONSE__TYPE__GET_STATE},
        {"GET_AGENTS", "{\"type\":\"GET_AGENTS\"}",
         MESOS__V1__MASTER__RESPONSE__TYPE__GET_AGENTS},
        {"GET_FRAMEWORKS", "{\"type\":\"GET_FRAMEWORKS\"}",
         MESOS__V1__MASTER__RESPONSE__TYPE__GET_FRAMEWORKS},
        {"GET_EXECUTORS", "{\"type\":\"GET_EXECUTORS\"}",
         MESOS__V1__MASTER__RESPONSE__TYPE__GET_EXECUTORS},
        {"GET_TASKS", "{\"type\":\"GET_TASKS\"}",
         MESOS__V1__MASTER__RESPONSE__TYPE__GET_TASKS},
        {"GET_ROLES", "{\"type\":\"GET_ROLES\"}",
         MESOS__V1__MASTER__RESPONSE__TYPE__GET_ROLES},
        {"GET_WEIGHTS", "{\"type\":\"GET_WEIGHTS\"}",
         MESOS__V1__MASTER__RESPONSE__TYPE__GET_WEIGHTS},
        {"GET_MASTER", "{\"type\":\"GET_MASTER\"}",
         MESOS__V1__MASTER__RESPONSE__TYPE__GET_MASTER},
        {"GET_MAINTENANCE_STATUS", "{\"type\":\"GET_MAINTENANCE_STATUS\"}",
         MESOS__V1__MASTER__RESPONSE__TYPE__GET_MAINTENANCE_STATUS},
        {"GET_MAINTENANCE_SCHEDULE", "{\"type\":\"GET_MAINTENANCE_SCHEDULE\"}",
         MESOS__V1__MASTER__RESPONSE__TYPE__GET_MAINTENANCE_SCHEDULE},
        {"GET_QUOTA", "{\"type\":\"GET_QUOTA\"}",
         MESOS__V1__MASTER__RESPONSE__TYPE__GET_QUOTA},
    };
    for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
        check_call(calls[i].fixture, calls[i].call, calls[i].type);

    /* The JSON endpoint whose documentation carries an example. */
    json_t *st = api_get_json(master.port, "/state");
    check_shape("state", st);
    json_decref(st);

    /* Check's messages are short: the list goes to stderr. */
    if (failures_total > 0)
        fprintf(stderr, "shapes that differ from Mesos's examples:%s\n",
                failures_report);
    ck_assert_msg(failures_total == 0,
                  "%zu paths differ from the examples (listed on stderr)",
                  failures_total);

    /* Every metric of the GET_METRICS example, in GET_METRICS and in
     * /metrics/snapshot. */
    json_t *gm = call_json("{\"type\":\"GET_METRICS\",\"get_metrics\":{}}");
    json_t *names = json_object();
    size_t k;
    json_t *e;
    json_array_foreach(
        json_object_get(json_object_get(gm, "get_metrics"), "metrics"), k, e)
    {
        json_object_set(names, json_string_value(json_object_get(e, "name")),
                        json_true());
    }
    json_t *snap = api_get_json(master.port, "/metrics/snapshot");
    char **lines;
    size_t n = read_lines("metric-names.list", &lines);
    char missing[4096] = "";
    size_t used = 0, nmissing = 0;
    for (size_t i = 0; i < n; i++) {
        if (strncmp(lines[i], "absent-ok ", 10) == 0)
            continue;
        bool in_gm = json_object_get(names, lines[i]) != NULL;
        bool in_snap = json_is_number(json_object_get(snap, lines[i]));
        if (in_gm && in_snap)
            continue;
        nmissing++;
        int w =
            snprintf(missing + used, sizeof(missing) - used, " %s", lines[i]);
        if (w > 0 && (size_t)w < sizeof(missing) - used)
            used += (size_t)w;
    }
    free_lines(lines, n);
    ck_assert_msg(nmissing == 0, "%zu metrics missing:%s", nmissing, missing);
    json_decref(snap);
    json_decref(names);
    json_decref(gm);

    api_conn_close(&ag2);
    api_conn_close(&fw2);
    api_conn_close(&fw);
    api_conn_close(&js);
    api_conn_close(&pb);
    e2e_stop_master_agent(&master, &agent);
}
END_TEST

E2E_ONE_TEST_MAIN("e2e_mesos_shapes", "shapes", test_mesos_shapes, 120)
