/*
 * What the agent's readers see under --acls (agent/viewer.h): /state's
 * document and the operator API's GET_STATE, GET_FRAMEWORKS,
 * GET_EXECUTORS, GET_TASKS and GET_CONTAINERS, for principals with
 * different view_* rights, over a hand-built agent view (no master, no
 * sockets). Frameworks: fw1 of user alice, fw2 of bob; tasks: t1 of fw1
 * (alice), t2 of fw1 run as root, t3 of fw2.
 */
#include "agent/attributes.h"
#include "agent/auth_agent.h"
#include "agent/flags_agent.h"
#include "agent/operator_api.h"
#include "agent/tasks.h"
#include "agent/viewer.h"
#include "check_main.h"
#include "common/auth.h"
#include "common/hmap.h"
#include "common/http.h"
#include "common/http_fake.h"
#include "common/json_pb.h"
#include "common/mem.h"
#include "common/resources.h"
#include "mesos/v1/agent.pb-c.h"

#include <check.h>
#include <event2/event.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* clang-format off */
static const char ACLS[] =
    "--acls={\"permissive\": false,"
    "\"view_frameworks\": ["
    " {\"principals\": {\"values\": [\"ops\"]}, \"users\": {\"type\": \"ANY\"}},"
    " {\"principals\": {\"values\": [\"al\"]}, \"users\": {\"values\": "
    "[\"alice\"]}}],"
    "\"view_tasks\": ["
    " {\"principals\": {\"values\": [\"ops\"]}, \"users\": {\"type\": \"ANY\"}},"
    " {\"principals\": {\"values\": [\"al\"]}, \"users\": {\"values\": "
    "[\"alice\"]}}],"
    "\"view_executors\": ["
    " {\"principals\": {\"values\": [\"ops\"]}, \"users\": {\"type\": "
    "\"ANY\"}}],"
    "\"view_flags\": ["
    " {\"principals\": {\"values\": [\"ops\"]}, \"flags\": {\"type\": "
    "\"ANY\"}}],"
    "\"set_log_level\": ["
    " {\"principals\": {\"values\": [\"ops\"]}, \"level\": {\"type\": "
    "\"ANY\"}}]}";
/* clang-format on */

static char creds[64];
static struct event_base *base;
static struct agent_flags af;
static struct agent_auth *auth;
static struct agent_tasks *tasks;
static struct hmap *frameworks;
static res_list total = RES_LIST_INIT;
static struct agent_attrs attrs; /* none */
static struct agent_opapi *api;

static void add_task(const char *fw, const char *id, const char *user)
{
    char json[512];
    snprintf(json, sizeof(json),
             "{\"name\": \"%s\", \"task_id\": {\"value\": \"%s\"},"
             " \"agent_id\": {\"value\": \"S0\"}, \"resources\": [],"
             " \"command\": {\"value\": \"sleep 1\"%s%s%s}}",
             id, id, user != NULL ? ", \"user\": \"" : "",
             user != NULL ? user : "", user != NULL ? "\"" : "");
    char err[256];
    Mesos__V1__TaskInfo *ti = (Mesos__V1__TaskInfo *)jpb_from_json_text(
        &mesos__v1__task_info__descriptor, json, strlen(json), err,
        sizeof(err));
    ck_assert_msg(ti != NULL, "%s", err);
    struct agent_task *t = agent_tasks_add(tasks, fw, ti);
    jpb_free(&ti->base);
    t->phase = AGENT_TASK_RUNNING;
    t->state = MESOS__V1__TASK_STATE__TASK_RUNNING;
    snprintf(t->run_id, sizeof(t->run_id), "run-%s", id);
}

static void add_framework(const char *id, const char *user)
{
    Mesos__V1__FrameworkInfo *fi = xmalloc(sizeof(*fi));
    mesos__v1__framework_info__init(fi);
    fi->user = xstrdup(user);
    fi->name = xstrdup(id);
    hmap_put(frameworks, id, fi);
}

static void view(void *arg, struct agent_state_view *out)
{
    (void)arg;
    out->agent_id = "S0";
    out->hostname = "host";
    out->ip = "127.0.0.1";
    out->port = 5051;
    out->master = "127.0.0.1:5050";
    out->resources = &total;
    out->attributes = &attrs;
    out->flags = agent_flags_object(&af);
    out->frameworks = frameworks;
    out->tasks = tasks;
}

static void setup(void)
{
    snprintf(creds, sizeof(creds), "/tmp/offerd-viewer-XXXXXX");
    int fd = mkstemp(creds);
    ck_assert_int_ge(fd, 0);
    const char text[] = "ops so\nal sa\neve se\n";
    ck_assert_int_eq(write(fd, text, sizeof(text) - 1),
                     (ssize_t)(sizeof(text) - 1));
    close(fd);
    char cflag[96];
    snprintf(cflag, sizeof(cflag), "--http_credentials=%s", creds);
    char *argv[] = {"offerd-agent",    "--master=127.0.0.1:5050",
                    "--work_dir=/tmp", cflag,
                    (char *)ACLS,      NULL};
    char err[256];
    agent_flags_init(&af);
    ck_assert_int_eq(agent_flags_parse(&af, 5, argv, NULL, err, sizeof(err)),
                     FLAGS_OK);
    auth = agent_auth_new(&af, err, sizeof(err));
    ck_assert_msg(auth != NULL, "%s", err);
    base = event_base_new();
    struct agent_tasks_cbs cbs = {NULL, NULL, NULL};
    tasks = agent_tasks_new(base, &cbs);
    frameworks = hmap_new();
    add_framework("fw1", "alice");
    add_framework("fw2", "bob");
    add_task("fw1", "t1", NULL);
    add_task("fw1", "t2", "root");
    add_task("fw2", "t3", NULL);
    struct agent_opapi_config cfg = {NULL, "/nonexistent", view,
                                     NULL, NULL,           auth};
    api = agent_opapi_new(&cfg);
}

static void free_info(void *v)
{
    jpb_free(v);
}

static void teardown(void)
{
    agent_opapi_free(api);
    hmap_free(frameworks, free_info);
    agent_tasks_free(tasks);
    event_base_free(base);
    agent_auth_free(auth);
    agent_flags_fini(&af);
    unlink(creds);
}

/* The operator API's answer to a call of type as principal (NULL:
 * anonymous). Caller jpb_free's it. */
static Mesos__V1__Agent__Response *call_as(const char *principal,
                                           const char *secret, const char *type)
{
    char body[128];
    snprintf(body, sizeof(body), "{\"type\": \"%s\"}", type);
    struct http_fake *x = http_fake_new(NULL, HTTP_POST, "/api/v1");
    http_fake_add_header(x, "Content-Type", HTTP_CONTENT_JSON);
    if (principal != NULL) {
        char *h = auth_basic_header(principal, secret);
        http_fake_add_header(x, "Authorization", h);
        free(h);
    }
    http_fake_set_body(x, body, strlen(body));
    http_fake_dispatch(x, agent_opapi_handle, api);
    ck_assert_int_eq(http_fake_status(x), 200);
    size_t len;
    const uint8_t *b = http_fake_body(x, &len);
    char err[256];
    Mesos__V1__Agent__Response *r = (Mesos__V1__Agent__Response *)jpb_decode(
        &mesos__v1__agent__response__descriptor, JPB_JSON, b, len, err,
        sizeof(err));
    ck_assert_msg(r != NULL, "%s", err);
    http_fake_free(x);
    return r;
}

/* What each principal sees, as counts: frameworks, executors, tasks. */
static const struct {
    const char *principal, *secret;
    size_t frameworks, executors, tasks;
} readers[] = {
    {"ops", "so", 2, 3, 3}, /* everything */
    {"al", "sa", 1, 0, 1},  /* fw1, its task as alice; no executor */
    {"eve", "se", 0, 0, 0}, /* nothing */
    {NULL, NULL, 0, 0, 0},  /* anonymous: nothing */
};

START_TEST(test_operator_api_filtered)
{
    for (size_t i = 0; i < sizeof(readers) / sizeof(readers[0]); i++) {
        const char *p = readers[i].principal, *s = readers[i].secret;
        Mesos__V1__Agent__Response *r = call_as(p, s, "GET_FRAMEWORKS");
        ck_assert_uint_eq(r->get_frameworks->n_frameworks,
                          readers[i].frameworks);
        jpb_free(&r->base);
        r = call_as(p, s, "GET_EXECUTORS");
        ck_assert_uint_eq(r->get_executors->n_executors, readers[i].executors);
        jpb_free(&r->base);
        r = call_as(p, s, "GET_TASKS");
        ck_assert_uint_eq(r->get_tasks->n_launched_tasks, readers[i].tasks);
        jpb_free(&r->base);
        r = call_as(p, s, "GET_STATE");
        ck_assert_uint_eq(r->get_state->get_frameworks->n_frameworks,
                          readers[i].frameworks);
        ck_assert_uint_eq(r->get_state->get_executors->n_executors,
                          readers[i].executors);
        ck_assert_uint_eq(r->get_state->get_tasks->n_launched_tasks,
                          readers[i].tasks);
        jpb_free(&r->base);
        /* A container is seen as its executor is. */
        r = call_as(p, s, "GET_CONTAINERS");
        ck_assert_uint_eq(r->get_containers->n_containers,
                          readers[i].executors);
        jpb_free(&r->base);
    }
}
END_TEST

/* GET_FLAGS and SET_LOGGING_LEVEL through the operator API need
 * view_flags and set_log_level as /flags and /logging/toggle do. */
START_TEST(test_operator_api_flags_and_logging)
{
    static const char *const calls[] = {
        "{\"type\": \"GET_FLAGS\"}",
        "{\"type\": \"SET_LOGGING_LEVEL\", \"set_logging_level\": "
        "{\"level\": 1, \"duration\": {\"nanoseconds\": 1000000000}}}",
    };
    static const char *const why[] = {
        "principal 'eve' is not authorized to view_flags\n",
        "principal 'eve' is not authorized to set_log_level\n",
    };
    /* Sandboxes through the API need access_sandboxes as /files/... do
     * (nobody has it here). */
    static const char *const files[] = {
        "{\"type\": \"LIST_FILES\", \"list_files\": {\"path\": \"/x\"}}",
        "{\"type\": \"READ_FILE\", \"read_file\": {\"path\": \"/x\", "
        "\"offset\": 0}}",
    };
    for (size_t i = 0; i < 2; i++) {
        struct http_fake *x = http_fake_new(NULL, HTTP_POST, "/api/v1");
        http_fake_add_header(x, "Content-Type", HTTP_CONTENT_JSON);
        char *h = auth_basic_header("eve", "se");
        http_fake_add_header(x, "Authorization", h);
        free(h);
        http_fake_set_body(x, files[i], strlen(files[i]));
        http_fake_dispatch(x, agent_opapi_handle, api);
        size_t len;
        ck_assert_int_eq(http_fake_status(x), 403);
        ck_assert_str_eq((const char *)http_fake_body(x, &len),
                         "principal 'eve' is not authorized to "
                         "access_sandboxes\n");
        http_fake_free(x);
    }
    for (size_t i = 0; i < 2; i++) {
        for (int as_ops = 0; as_ops < 2; as_ops++) {
            struct http_fake *x = http_fake_new(NULL, HTTP_POST, "/api/v1");
            http_fake_add_header(x, "Content-Type", HTTP_CONTENT_JSON);
            char *h =
                auth_basic_header(as_ops ? "ops" : "eve", as_ops ? "so" : "se");
            http_fake_add_header(x, "Authorization", h);
            free(h);
            http_fake_set_body(x, calls[i], strlen(calls[i]));
            http_fake_dispatch(x, agent_opapi_handle, api);
            size_t len;
            const char *b = (const char *)http_fake_body(x, &len);
            if (as_ops) {
                /* GET_FLAGS answers; this API has no toggle: 501. */
                ck_assert_int_eq(http_fake_status(x), i == 0 ? 200 : 501);
            } else {
                ck_assert_int_eq(http_fake_status(x), 403);
                ck_assert_str_eq(b, why[i]);
            }
            http_fake_free(x);
        }
    }
}
END_TEST

/* /state's document: frameworks, their executors, the executors' tasks. */
START_TEST(test_state_json_filtered)
{
    for (size_t i = 0; i < sizeof(readers) / sizeof(readers[0]); i++) {
        struct http_fake *x = http_fake_new(NULL, HTTP_GET, "/state");
        if (readers[i].principal != NULL) {
            char *h =
                auth_basic_header(readers[i].principal, readers[i].secret);
            http_fake_add_header(x, "Authorization", h);
            free(h);
        }
        struct agent_viewer w;
        struct http_request *req = http_fake_request(x);
        ck_assert(agent_auth_viewer(auth, req, &w));
        struct agent_state_view v;
        memset(&v, 0, sizeof(v));
        view(NULL, &v);
        v.viewer = &w;
        json_t *st = agent_state_json(&v);
        agent_viewer_fini(&w);
        http_reply(req, 200, NULL, NULL, 0); /* frees req */
        http_fake_free(x);
        json_t *fws = json_object_get(st, "frameworks");
        ck_assert_uint_eq(json_array_size(fws), readers[i].frameworks);
        size_t nexec = 0, ntasks = 0;
        for (size_t f = 0; f < json_array_size(fws); f++) {
            json_t *exs = json_object_get(json_array_get(fws, f), "executors");
            nexec += json_array_size(exs);
            for (size_t e = 0; e < json_array_size(exs); e++)
                ntasks += json_array_size(
                    json_object_get(json_array_get(exs, e), "tasks"));
        }
        ck_assert_uint_eq(nexec, readers[i].executors);
        /* Tasks are shown inside their executors: none without them. */
        ck_assert_uint_le(ntasks, readers[i].tasks);
        json_decref(st);
    }
    /* Without --acls no viewer: everything shows. */
    ck_assert(!agent_auth_viewer(NULL, NULL, NULL));
}
END_TEST

static Suite *agent_viewer_suite(void)
{
    Suite *s = suite_create("agent_viewer");
    TCase *tc = tcase_create("viewer");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_operator_api_filtered);
    tcase_add_test(tc, test_state_json_filtered);
    tcase_add_test(tc, test_operator_api_flags_and_logging);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(agent_viewer_suite)
