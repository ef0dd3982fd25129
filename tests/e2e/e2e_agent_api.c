/*
 * End-to-end tests of the agent's v1 operator API (POST /api/v1 on
 * offerd-agent, docs/agent.md "Operator API"): a real agent registered
 * with the fake master of harness_agent_master.h runs a task, and every
 * served call is made over loopback in JSON and in protobuf; then the
 * refusals (501, 400, 415, 406, 405, 404).
 *
 * Every agent is stopped with SIGUSR1 (kill everything) at teardown, and
 * as a last resort every process whose working directory lies under this
 * binary's work directories is SIGKILLed.
 */
#include "harness.h"
#include "harness_agent_master.h"

#include "common/fs.h"
#include "common/http.h"
#include "common/json_pb.h"
#include "mesos/v1/agent.pb-c.h"
#include "mesos/v1/mesos.pb-c.h"
#include "offerd/agent.pb-c.h"

#include <check.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FW_ID "fw-api-0001"

static char base_dir[64];

static void suite_setup(void)
{
    snprintf(base_dir, sizeof(base_dir), "/tmp/offerd-agent-api-XXXXXX");
    if (mkdtemp(base_dir) == NULL)
        base_dir[0] = '\0';
}

static void suite_teardown(void)
{
    if (e2e_kill_under(base_dir) > 0)
        fprintf(stderr, "e2e_agent_api: killed processes left by failed "
                        "tests\n");
    fs_remove_tree(base_dir);
}

static struct e2e_proc agent;
static char agent_work[PATH_MAX];

static void setup(void)
{
    ck_assert(base_dir[0] != '\0');
    snprintf(agent_work, sizeof(agent_work), "%s/agent-XXXXXX", base_dir);
    ck_assert_ptr_nonnull(mkdtemp(agent_work));
    hfm_start();
    ck_assert_msg(hfm_spawn_agent(&agent, agent_work, NULL) == 0,
                  "offerd-agent did not start");
}

static void teardown(void)
{
    if (agent.pid > 0) {
        ck_assert_int_eq(hfm_stop_agent(&agent), 0);
        ck_assert(e2e_wait_none_under(agent_work, 5000));
    }
    e2e_proc_cleanup(&agent);
    e2e_kill_under(agent_work);
    fs_remove_tree(agent_work);
    hfm_stop();
}

/* POST a Call given as JSON to path, sent and answered in enc; expect 200
 * and return the decoded Response (caller jpb_free's it). */
static Mesos__V1__Agent__Response *call_at(const char *path, const char *json,
                                           enum http_encoding enc)
{
    const char *ct =
        enc == HTTP_ENC_JSON ? HTTP_CONTENT_JSON : HTTP_CONTENT_PROTOBUF;
    char h_ct[64], h_acc[64];
    snprintf(h_ct, sizeof(h_ct), "Content-Type: %s", ct);
    snprintf(h_acc, sizeof(h_acc), "Accept: %s", ct);
    const char *headers[] = {h_ct, h_acc, NULL};
    char err[256];
    uint8_t *pb = NULL;
    size_t len = strlen(json);
    const void *body = json;
    if (enc == HTTP_ENC_PROTOBUF) {
        ProtobufCMessage *c = jpb_from_json_text(
            &mesos__v1__agent__call__descriptor, json, len, err, sizeof(err));
        ck_assert_msg(c != NULL, "%s", err);
        pb = jpb_to_pb(c, &len);
        jpb_free(c);
        body = pb;
    }
    struct e2e_response r;
    ck_assert_int_eq(
        e2e_http(agent.port, "POST", path, headers, body, len, 10000, &r), 0);
    free(pb);
    ck_assert_msg(r.status == 200, "%s: %d %s", json, r.status, r.body);
    ck_assert_str_eq(e2e_response_header(&r, "Content-Type"), ct);
    Mesos__V1__Agent__Response *resp = (Mesos__V1__Agent__Response *)jpb_decode(
        &mesos__v1__agent__response__descriptor, (enum jpb_format)enc,
        (const uint8_t *)r.body, r.body_len, err, sizeof(err));
    ck_assert_msg(resp != NULL, "%s", err);
    e2e_response_free(&r);
    return resp;
}

static Mesos__V1__Agent__Response *call(const char *json,
                                        enum http_encoding enc)
{
    return call_at("/api/v1", json, enc);
}

/* POST raw bytes; return the status, the body's first line in reason. */
static int call_raw(const char *method, const char *content_type,
                    const char *accept, const char *body, char *reason,
                    size_t reasonlen)
{
    char h_ct[96], h_acc[96];
    const char *headers[3] = {NULL, NULL, NULL};
    size_t n = 0;
    if (content_type != NULL) {
        snprintf(h_ct, sizeof(h_ct), "Content-Type: %s", content_type);
        headers[n++] = h_ct;
    }
    if (accept != NULL) {
        snprintf(h_acc, sizeof(h_acc), "Accept: %s", accept);
        headers[n++] = h_acc;
    }
    struct e2e_response r;
    ck_assert_int_eq(e2e_http(agent.port, method, "/api/v1", headers, body,
                              body != NULL ? strlen(body) : 0, 10000, &r),
                     0);
    int status = r.status;
    snprintf(reason, reasonlen, "%s", r.body != NULL ? r.body : "");
    e2e_response_free(&r);
    return status;
}

struct sandbox_file {
    const char *dir, *name;
};

static bool sandbox_file_exists(void *arg)
{
    const struct sandbox_file *f = arg;
    char p[PATH_MAX + 64];
    snprintf(p, sizeof(p), "%s/%s", f->dir, f->name);
    struct stat st;
    return stat(p, &st) == 0 && st.st_size > 0;
}

static double metric_of(const Mesos__V1__Agent__Response *r, const char *name)
{
    for (size_t i = 0; i < r->get_metrics->n_metrics; i++)
        if (strcmp(r->get_metrics->metrics[i]->name, name) == 0)
            return r->get_metrics->metrics[i]->value;
    ck_abort_msg("no metric %s", name);
    return -1;
}

START_TEST(test_served_calls)
{
    hfm.auto_ack = true;
    hfm_wait_subscribed(1, 10000);
    struct hfm_task t = {.framework_id = FW_ID,
                         .task_id = "api",
                         .shell = "echo hello-api > out.txt; sleep 60",
                         .resources = "cpus:0.5;mem:32"};
    hfm_run_task(&t);
    size_t from = 0;
    ck_assert(hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "api",
                            MESOS__V1__TASK_STATE__TASK_RUNNING, 15000) >= 0);
    char sandbox[PATH_MAX];
    ck_assert(e2e_agent_sandbox(agent.port, "api", sandbox, sizeof(sandbox)));
    struct sandbox_file f = {sandbox, "out.txt"};
    ck_assert(hfm_pump_until(sandbox_file_exists, &f, 10000));

    char list[PATH_MAX + 128], read[PATH_MAX + 160], want[PATH_MAX + 32];
    snprintf(list, sizeof(list),
             "{\"type\": \"LIST_FILES\", \"list_files\": {\"path\": \"%s\"}}",
             sandbox);
    snprintf(read, sizeof(read),
             "{\"type\": \"READ_FILE\", \"read_file\": {\"path\": "
             "\"%s/out.txt\", \"offset\": 0}}",
             sandbox);
    snprintf(want, sizeof(want), "%s/out.txt", sandbox);

    for (int e = 0; e < 2; e++) {
        enum http_encoding enc = (enum http_encoding)e;
        Mesos__V1__Agent__Response *r = call("{\"type\": \"GET_HEALTH\"}", enc);
        ck_assert(r->get_health->healthy);
        jpb_free(&r->base);

        r = call_at("/slave(1)/api/v1", "{\"type\": \"GET_VERSION\"}", enc);
        ck_assert_str_eq(r->get_version->version_info->version, OFFERD_VERSION);
        jpb_free(&r->base);

        r = call("{\"type\": \"GET_AGENT\"}", enc);
        ck_assert_str_eq(r->get_agent->agent_info->id->value, HFM_AGENT_ID);
        ck_assert_int_eq(r->get_agent->agent_info->port, agent.port);
        ck_assert_uint_ge(r->get_agent->agent_info->n_resources, 3);
        jpb_free(&r->base);

        r = call("{\"type\": \"GET_FLAGS\"}", enc);
        bool seen = false;
        for (size_t i = 0; i < r->get_flags->n_flags; i++)
            seen |= strcmp(r->get_flags->flags[i]->name, "resources") == 0 &&
                    strcmp(r->get_flags->flags[i]->value,
                           "cpus:2;mem:1024;disk:4096") == 0;
        ck_assert(seen);
        jpb_free(&r->base);

        r = call("{\"type\": \"GET_METRICS\"}", enc);
        ck_assert_double_eq(metric_of(r, "slave/registered"), 1);
        ck_assert_double_eq(metric_of(r, "slave/tasks_running"), 1);
        ck_assert_double_eq(metric_of(r, "slave/cpus_total"), 2);
        ck_assert_double_eq(metric_of(r, "slave/cpus_used"), 0.5);
        jpb_free(&r->base);

        r = call("{\"type\": \"GET_LOGGING_LEVEL\"}", enc);
        ck_assert_int_eq(r->type,
                         MESOS__V1__AGENT__RESPONSE__TYPE__GET_LOGGING_LEVEL);
        ck_assert_uint_eq(r->get_logging_level->level, 0);
        jpb_free(&r->base);

        r = call("{\"type\": \"GET_STATE\"}", enc);
        const Mesos__V1__Agent__Response__GetState *gs = r->get_state;
        ck_assert_uint_eq(gs->get_tasks->n_launched_tasks, 1);
        const Mesos__V1__Task *task = gs->get_tasks->launched_tasks[0];
        ck_assert_str_eq(task->task_id->value, "api");
        ck_assert_str_eq(task->agent_id->value, HFM_AGENT_ID);
        ck_assert_int_eq(task->state, MESOS__V1__TASK_STATE__TASK_RUNNING);
        ck_assert_uint_eq(gs->get_executors->n_executors, 1);
        ck_assert_uint_eq(gs->get_frameworks->n_frameworks, 1);
        ck_assert_str_eq(
            gs->get_frameworks->frameworks[0]->framework_info->id->value,
            FW_ID);
        jpb_free(&r->base);

        r = call("{\"type\": \"GET_TASKS\"}", enc);
        ck_assert_uint_eq(r->get_tasks->n_launched_tasks, 1);
        jpb_free(&r->base);
        r = call("{\"type\": \"GET_EXECUTORS\"}", enc);
        ck_assert_uint_eq(r->get_executors->n_executors, 1);
        jpb_free(&r->base);
        r = call("{\"type\": \"GET_FRAMEWORKS\"}", enc);
        ck_assert_uint_eq(r->get_frameworks->n_frameworks, 1);
        jpb_free(&r->base);

        r = call("{\"type\": \"GET_CONTAINERS\"}", enc);
        ck_assert_uint_eq(r->get_containers->n_containers, 1);
        const Mesos__V1__Agent__Response__GetContainers__Container *c =
            r->get_containers->containers[0];
        ck_assert_str_eq(c->executor_id->value, "api");
        ck_assert_str_eq(c->framework_id->value, FW_ID);
        ck_assert(c->container_id->value[0] != '\0');
        ck_assert_ptr_nonnull(c->resource_statistics);
        ck_assert_uint_ge(c->resource_statistics->processes, 1);
        ck_assert_uint_gt(c->resource_statistics->mem_rss_bytes, 0);
        ck_assert_double_eq(c->resource_statistics->cpus_limit, 0.5);
        jpb_free(&r->base);

        r = call(list, enc);
        seen = false;
        for (size_t i = 0; i < r->list_files->n_file_infos; i++)
            seen |= strcmp(r->list_files->file_infos[i]->path, want) == 0;
        ck_assert_msg(seen, "no %s in LIST_FILES", want);
        jpb_free(&r->base);

        r = call(read, enc);
        ck_assert_uint_eq(r->read_file->size, 10);
        ck_assert_uint_eq(r->read_file->data.len, 10);
        ck_assert(memcmp(r->read_file->data.data, "hello-api\n", 10) == 0);
        jpb_free(&r->base);
    }
}
END_TEST

START_TEST(test_refusals)
{
    char why[512];
    ck_assert_int_eq(call_raw("POST", HTTP_CONTENT_JSON, NULL,
                              "{\"type\": \"SET_LOGGING_LEVEL\"}", why,
                              sizeof(why)),
                     400);
    ck_assert_ptr_nonnull(strstr(why, "set_logging_level"));
    /* SET_LOGGING_LEVEL is served: GET_LOGGING_LEVEL answers the level. */
    ck_assert_int_eq(
        call_raw(
            "POST", HTTP_CONTENT_JSON, NULL,
            "{\"type\": \"SET_LOGGING_LEVEL\", \"set_logging_level\": "
            "{\"level\": 2, \"duration\": {\"nanoseconds\": 60000000000}}}",
            why, sizeof(why)),
        200);
    ck_assert_int_eq(call_raw("POST", HTTP_CONTENT_JSON, NULL,
                              "{\"type\": \"GET_LOGGING_LEVEL\"}", why,
                              sizeof(why)),
                     200);
    ck_assert_msg(strstr(why, "\"level\":2") != NULL, "%s", why);
    ck_assert_int_eq(call_raw("POST", HTTP_CONTENT_JSON, NULL,
                              "{\"type\": \"ATTACH_CONTAINER_OUTPUT\"}", why,
                              sizeof(why)),
                     501);
    ck_assert_int_eq(
        call_raw("POST", HTTP_CONTENT_JSON, NULL, "{", why, sizeof(why)), 400);
    ck_assert_ptr_nonnull(strstr(why, "invalid JSON"));
    /* One line: the only newline ends it. */
    ck_assert_ptr_eq(strchr(why, '\n'), why + strlen(why) - 1);
    ck_assert_int_eq(
        call_raw("POST", HTTP_CONTENT_JSON, NULL, "{}", why, sizeof(why)), 400);
    ck_assert_ptr_nonnull(strstr(why, "'type'"));
    ck_assert_int_eq(call_raw("POST", HTTP_CONTENT_JSON, NULL,
                              "{\"type\": \"READ_FILE\", \"read_file\": "
                              "{\"path\": \"nope\", \"offset\": 0}}",
                              why, sizeof(why)),
                     404);
    ck_assert_int_eq(call_raw("POST", HTTP_CONTENT_JSON, NULL,
                              "{\"type\": \"LIST_FILES\", \"list_files\": "
                              "{\"path\": \"../..\"}}",
                              why, sizeof(why)),
                     403);
    ck_assert_int_eq(call_raw("POST", HTTP_CONTENT_PROTOBUF, NULL, "\xff\xff",
                              why, sizeof(why)),
                     400);
    ck_assert_int_eq(call_raw("POST", "text/plain", NULL,
                              "{\"type\": \"GET_HEALTH\"}", why, sizeof(why)),
                     415);
    ck_assert_int_eq(call_raw("POST", HTTP_CONTENT_JSON, "text/html",
                              "{\"type\": \"GET_HEALTH\"}", why, sizeof(why)),
                     406);
    ck_assert_int_eq(call_raw("GET", NULL, NULL, NULL, why, sizeof(why)), 405);
    /* The agent still serves after all that. */
    Mesos__V1__Agent__Response *r =
        call("{\"type\": \"GET_HEALTH\"}", HTTP_ENC_JSON);
    ck_assert(r->get_health->healthy);
    jpb_free(&r->base);
}
END_TEST

static Suite *agent_api_suite(void)
{
    Suite *s = suite_create("e2e_agent_api");
    TCase *tc = tcase_create("agent_api");
    tcase_add_unchecked_fixture(tc, suite_setup, suite_teardown);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 90);
    tcase_add_test(tc, test_served_calls);
    tcase_add_test(tc, test_refusals);
    suite_add_tcase(s, tc);
    return s;
}

E2E_CHECK_MAIN(agent_api_suite)
