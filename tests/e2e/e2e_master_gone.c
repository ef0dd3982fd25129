/*
 * End-to-end tests of the operator calls of issue 16 on the real master and
 * agent: MARK_AGENT_GONE (a running task ends TASK_GONE_BY_OPERATOR, the
 * agent shuts down, is refused when it comes back with its id, across a
 * master restart too, while a fresh agent registers), and the master's
 * log file served by LIST_FILES / READ_FILE (JSON and protobuf) and
 * /files/read and /files/debug over real HTTP, and SET_LOGGING_LEVEL /
 * GET_LOGGING_LEVEL.
 */
#include <check.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "harness_api.h"
#include "mesos/v1/master.pb-c.h"

#define FW_INFO_PA                                                             \
    "{\"user\":\"u\",\"name\":\"gone-e2e\",\"failover_timeout\":60,"           \
    "\"capabilities\":[{\"type\":\"PARTITION_AWARE\"}]}"

/* What the agent logs when the master refuses it as gone. */
#define REFUSED_GONE "was marked gone"

static struct e2e_proc master, agent, fresh;
static const char *const MASTER_FLAGS[] = {"--allocation_interval=50ms", NULL};
static const char *const AGENT_FLAGS[] = {"--resources=cpus:2;mem:512",
                                          "--hostname=gone1", NULL};

static void teardown(void)
{
    e2e_proc_cleanup(&fresh);
    e2e_proc_cleanup(&agent);
    e2e_proc_cleanup(&master);
}

/* POST an operator call (JSON) to the master: status, body in out. */
static int operator_call(const char *json, char *out, size_t outlen)
{
    return api_post(master.port, "/api/v1", NULL, json, out, outlen);
}

static int mark_gone(const char *agent_id)
{
    char call[512], why[512];
    snprintf(call, sizeof(call),
             "{\"type\":\"MARK_AGENT_GONE\",\"mark_agent_gone\":{\"agent_id\":"
             "{\"value\":\"%s\"}}}",
             agent_id);
    return operator_call(call, why, sizeof(why));
}

static bool cond_agent_exited(void *arg)
{
    return !e2e_proc_running(arg);
}

/* The ids under "gone" in /registrar(1)/registry hold agent_id. */
static bool registry_shows_gone(const char *agent_id)
{
    json_t *j = api_get_json(master.port, "/registrar(1)/registry");
    json_t *gone = json_object_get(json_object_get(j, "gone"), "slaves");
    bool found = false;
    for (size_t i = 0; i < json_array_size(gone); i++) {
        const char *id = json_string_value(json_object_get(
            json_object_get(json_array_get(gone, i), "id"), "value"));
        found |= id != NULL && strcmp(id, agent_id) == 0;
    }
    json_decref(j);
    return found;
}

static const char *status_field(json_t *ev, const char *field)
{
    return json_string_value(json_object_get(
        json_object_get(json_object_get(ev, "update"), "status"), field));
}

START_TEST(test_mark_agent_gone)
{
    ck_assert_int_eq(e2e_start_master(&master, MASTER_FLAGS), 0);
    ck_assert_int_eq(e2e_start_agent(&agent, master.port, AGENT_FLAGS), 0);
    ck_assert_int_eq(e2e_wait_agents(&master, 1, 20000), 0);

    /* A partition-aware framework runs a long task on the agent. */
    struct conn fw;
    api_subscribe_framework(&fw, master.port, FW_INFO_PA);
    char offer_id[256], agent_id[256];
    json_t *offers = api_wait_offer(&fw, offer_id, agent_id, 10000);
    ck_assert_ptr_nonnull(offers);
    json_decref(offers);
    char accept[2048];
    snprintf(accept, sizeof(accept),
             "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{\"type\":"
             "\"LAUNCH\",\"launch\":{\"task_infos\":[{\"name\":\"sleeper\","
             "\"task_id\":{\"value\":\"sleeper\"},\"agent_id\":{\"value\":"
             "\"%s\"},\"resources\":%s,\"command\":{\"value\":\"sleep "
             "600\"}}]}}]}",
             offer_id, agent_id, SMALL);
    ck_assert_int_eq(api_fw_call(&fw, master.port, "ACCEPT", "accept", accept),
                     202);
    json_t *ev;
    bool running = false;
    while (!running && (ev = api_wait_event(&fw, "UPDATE", 15000)) != NULL) {
        running = strcmp(status_field(ev, "state"), "TASK_RUNNING") == 0;
        /* Acknowledged, so the agent sends the next update. */
        const char *uuid = status_field(ev, "uuid");
        if (uuid != NULL) {
            char ack[1024];
            snprintf(ack, sizeof(ack),
                     "{\"agent_id\":{\"value\":\"%s\"},\"task_id\":{"
                     "\"value\":\"sleeper\"},\"uuid\":\"%s\"}",
                     agent_id, uuid);
            ck_assert_int_eq(api_fw_call(&fw, master.port, "ACKNOWLEDGE",
                                         "acknowledge", ack),
                             202);
        }
        json_decref(ev);
    }
    ck_assert_msg(running, "the task did not start");

    /* Marked gone: the task is TASK_GONE_BY_OPERATOR, the framework hears
     * FAILURE, the agent shuts down and leaves /slaves. */
    ck_assert_int_eq(mark_gone(agent_id), 200);
    ev = api_wait_event(&fw, "UPDATE", 10000);
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(status_field(ev, "state"), "TASK_GONE_BY_OPERATOR");
    ck_assert_str_eq(status_field(ev, "reason"),
                     "REASON_AGENT_REMOVED_BY_OPERATOR");
    json_decref(ev);
    ev = api_wait_event(&fw, "FAILURE", 10000);
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
    ck_assert_msg(e2e_poll_until(cond_agent_exited, &agent, 20000),
                  "the agent did not shut down when marked gone");
    ck_assert_int_eq(e2e_wait_agents(&master, 0, 10000), 0);
    json_t *slaves = api_get_json(master.port, "/slaves");
    ck_assert_uint_eq(json_array_size(json_object_get(slaves, "slaves")), 0);
    json_decref(slaves);
    ck_assert(registry_shows_gone(agent_id));
    /* Again: 200, it already is. Unknown: 404. */
    ck_assert_int_eq(mark_gone(agent_id), 200);
    ck_assert_int_eq(mark_gone("no-such-agent"), 404);

    /* It comes back with its id (its work_dir): refused. */
    ck_assert_int_eq(e2e_restart_agent(&agent, master.port, AGENT_FLAGS), 0);
    ck_assert_msg(e2e_wait_log(&agent, REFUSED_GONE, 1, 10000),
                  "the gone agent was not refused");
    ck_assert_double_eq(e2e_metric(master.port, "master/slaves_active"), 0);

    /* After a master restart too. */
    api_conn_close(&fw);
    int refusals = e2e_log_count(&agent, REFUSED_GONE);
    ck_assert_int_eq(e2e_proc_stop(&master, SIGTERM, 10000), 0);
    ck_assert_int_eq(e2e_restart_master(&master, MASTER_FLAGS), 0);
    ck_assert(registry_shows_gone(agent_id));
    ck_assert_msg(e2e_wait_log(&agent, REFUSED_GONE, refusals + 1, 10000),
                  "the restarted master did not refuse the gone agent");
    ck_assert_double_eq(e2e_metric(master.port, "master/slaves_active"), 0);
    ck_assert_int_eq(mark_gone(agent_id), 200);

    /* A fresh agent on the same host registers with a new id. */
    ck_assert_int_eq(e2e_start_agent(&fresh, master.port, AGENT_FLAGS), 0);
    ck_assert_int_eq(e2e_wait_agents(&master, 1, 20000), 0);
    slaves = api_get_json(master.port, "/slaves");
    const char *id = json_string_value(json_object_get(
        json_array_get(json_object_get(slaves, "slaves"), 0), "id"));
    ck_assert_ptr_nonnull(id);
    ck_assert_str_ne(id, agent_id);
    json_decref(slaves);
}
END_TEST

/* ---- The master's log ---------------------------------------------------
 */

/* READ_FILE of /master/log in protobuf: status; the bytes read (malloc'd,
 * NUL-terminated) in *data and the file's size in *size when 200. */
static int read_log_pb(uint64_t offset, char **data, uint64_t *size)
{
    Mesos__V1__Master__Call__ReadFile rf =
        MESOS__V1__MASTER__CALL__READ_FILE__INIT;
    rf.path = "/master/log";
    rf.offset = offset;
    Mesos__V1__Master__Call call = MESOS__V1__MASTER__CALL__INIT;
    call.has_type = true;
    call.type = MESOS__V1__MASTER__CALL__TYPE__READ_FILE;
    call.read_file = &rf;
    uint8_t buf[256];
    size_t len = mesos__v1__master__call__pack(&call, buf);
    const char *headers[] = {"Content-Type: application/x-protobuf",
                             "Accept: application/x-protobuf", NULL};
    struct e2e_response r;
    ck_assert_int_eq(
        e2e_http(master.port, "POST", "/api/v1", headers, buf, len, 10000, &r),
        0);
    int status = r.status;
    if (status == 200) {
        Mesos__V1__Master__Response *resp = mesos__v1__master__response__unpack(
            NULL, r.body_len, (const uint8_t *)r.body);
        ck_assert_ptr_nonnull(resp);
        ck_assert_ptr_nonnull(resp->read_file);
        *size = resp->read_file->size;
        *data = strndup((const char *)resp->read_file->data.data,
                        resp->read_file->data.len);
        protobuf_c_message_free_unpacked(&resp->base, NULL);
    }
    e2e_response_free(&r);
    return status;
}

START_TEST(test_master_log_files)
{
    const char *const flags[] = {"--allocation_interval=50ms", "--log_dir=logs",
                                 NULL};
    ck_assert_int_eq(e2e_start_master(&master, flags), 0);

    /* The log holds the start-up line; protobuf READ_FILE reads it exact. */
    char *data = NULL;
    uint64_t size = 0;
    ck_assert_int_eq(read_log_pb(0, &data, &size), 200);
    ck_assert_msg(strstr(data, "listening on") != NULL, "log: %s", data);
    ck_assert_uint_ge(size, strlen(data));
    free(data);

    /* SET_LOGGING_LEVEL over HTTP; GET_LOGGING_LEVEL answers it. */
    char why[4096];
    ck_assert_int_eq(
        operator_call("{\"type\":\"SET_LOGGING_LEVEL\",\"set_logging_level\":"
                      "{\"level\":1,\"duration\":{\"nanoseconds\":"
                      "60000000000}}}",
                      why, sizeof(why)),
        200);
    ck_assert_int_eq(
        operator_call("{\"type\":\"GET_LOGGING_LEVEL\"}", why, sizeof(why)),
        200);
    ck_assert_msg(strstr(why, "\"level\":1") != NULL, "%s", why);

    /* JSON: LIST_FILES of the file is empty (as Mesos's browse), READ_FILE
     * answers base64 bytes and the size. */
    ck_assert_int_eq(operator_call("{\"type\":\"LIST_FILES\",\"list_files\":{"
                                   "\"path\":\"/master/log\"}}",
                                   why, sizeof(why)),
                     200);
    json_t *j = json_loads(why, 0, NULL);
    ck_assert_ptr_nonnull(j);
    ck_assert_str_eq(json_string_value(json_object_get(j, "type")),
                     "LIST_FILES");
    json_decref(j);
    ck_assert_int_eq(operator_call("{\"type\":\"READ_FILE\",\"read_file\":{"
                                   "\"path\":\"/master/log\",\"offset\":0,"
                                   "\"length\":10}}",
                                   why, sizeof(why)),
                     200);
    j = json_loads(why, 0, NULL);
    ck_assert_ptr_nonnull(j);
    json_t *rf = json_object_get(j, "read_file");
    ck_assert_ptr_nonnull(json_object_get(rf, "data"));
    ck_assert_int_ge(json_integer_value(json_object_get(rf, "size")), 10);
    json_decref(j);

    /* /files/read and /files/debug, as Mesos's. */
    j = api_get_json(master.port, "/files/read?path=/master/log&offset=0");
    ck_assert_ptr_nonnull(
        strstr(json_string_value(json_object_get(j, "data")), "listening on"));
    json_decref(j);
    j = api_get_json(master.port, "/files/debug");
    char want[400];
    snprintf(want, sizeof(want), "%s/logs/offerd-master.log", master.dir);
    char real[4096];
    ck_assert_ptr_nonnull(realpath(want, real));
    ck_assert_str_eq(json_string_value(json_object_get(j, "/master/log")),
                     real);
    json_decref(j);
    j = api_get_json(master.port, "/state");
    ck_assert_str_eq(json_string_value(json_object_get(j, "log_dir")), "logs");
    json_decref(j);

    /* Bad paths: 404. */
    ck_assert_int_eq(operator_call("{\"type\":\"READ_FILE\",\"read_file\":{"
                                   "\"path\":\"/master/log/x\",\"offset\":0}}",
                                   why, sizeof(why)),
                     404);
    ck_assert_int_eq(operator_call("{\"type\":\"LIST_FILES\",\"list_files\":{"
                                   "\"path\":\"/etc\"}}",
                                   why, sizeof(why)),
                     404);

    /* Without --log_dir: /master/log is not found. */
    ck_assert_int_eq(e2e_proc_stop(&master, SIGTERM, 10000), 0);
    ck_assert_int_eq(e2e_restart_master(&master, MASTER_FLAGS), 0);
    ck_assert_int_eq(read_log_pb(0, &data, &size), 404);
}
END_TEST

static Suite *master_gone_suite(void)
{
    Suite *s = suite_create("e2e_master_gone");
    TCase *tc = tcase_create("gone");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_mark_agent_gone);
    tcase_add_test(tc, test_master_log_files);
    suite_add_tcase(s, tc);
    return s;
}

E2E_CHECK_MAIN(master_gone_suite)
