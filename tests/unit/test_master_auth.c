/*
 * The master's authentication and authorization (master/authz.c): every
 * API call through the call table, every endpoint through the HTTP gate,
 * with --credentials, every --authenticate_* flag and --acls on. Each
 * refusal asserts the status and reason, and that nothing changed.
 */
#include "master_fixture.h"

#include "check_main.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/hmap.h"
#include "master/agents.h"
#include "master/master.h"
#include "master/operator_api.h"
#include "master/operator_events.h"
#include "master/scheduler_api.h"

MFX_STANDARD_FIXTURE

static char creds_path[64];

/* Deny-by-default rules for each action the tests touch: only the named
 * principal may. */
#define ONLY(action, who, obj)                                                 \
    "\"" action "\": [{\"principals\": {\"values\": [" who "]}, \"" obj "\": " \
    "{\"type\": \"ANY\"}}, {\"principals\": {\"type\": \"ANY\"}, \"" obj       \
    "\": {\"type\": \"NONE\"}}]"

/* clang-format off */
static const char ACLS[] =
    "--acls={"
    "\"register_frameworks\": [{\"principals\": {\"values\": [\"fw\", "
    "\"eve\"]}, \"roles\": {\"values\": [\"web\"]}}, {\"principals\": "
    "{\"type\": \"ANY\"}, \"roles\": {\"type\": \"NONE\"}}],"
    "\"run_tasks\": [{\"principals\": {\"values\": [\"fw\"]}, \"users\": "
    "{\"values\": [\"nobody\"]}}, {\"principals\": {\"type\": \"ANY\"}, "
    "\"users\": {\"type\": \"NONE\"}}],"
    ONLY("reserve_resources", "\"ops\"", "roles") ","
    ONLY("drain_agents", "\"ops\"", "agents") ","
    ONLY("start_maintenances", "\"ops\"", "machines") ","
    ONLY("view_flags", "\"ops\"", "flags") ","
    ONLY("view_frameworks", "\"ops\", \"fw\"", "users") ","
    ONLY("view_tasks", "\"ops\"", "users") ","
    ONLY("view_executors", "\"ops\"", "users") ","
    ONLY("register_agents", "\"agent\", \"agent2\"", "agents")
    "}";
/* clang-format on */

static void auth_setup(void)
{
    snprintf(creds_path, sizeof(creds_path), "/tmp/offerd-creds-XXXXXX");
    int fd = mkstemp(creds_path);
    ck_assert_int_ge(fd, 0);
    const char text[] = "fw s1\neve se\nagent sa\nagent2 sb\nops so\n";
    ck_assert_int_eq(write(fd, text, sizeof(text) - 1),
                     (ssize_t)(sizeof(text) - 1));
    close(fd);
    char creds_flag[96];
    snprintf(creds_flag, sizeof(creds_flag), "--credentials=%s", creds_path);
    const char *flags[] = {creds_flag,
                           "--authenticate_frameworks",
                           "--authenticate_agents",
                           "--authenticate_http_readwrite",
                           "--authenticate_http_readonly",
                           ACLS,
                           NULL};
    mfx_start(&X, flags);
}

static void auth_teardown(void)
{
    teardown();
    unlink(creds_path);
}

#define FW_INFO                                                                \
    "{\"user\":\"nobody\",\"name\":\"fw\",\"roles\":[\"web\"],"                \
    "\"principal\":\"fw\",\"capabilities\":[{\"type\":\"MULTI_ROLE\"}]}"

static const char *body_of(struct http_fake *f)
{
    return mfx_body(f);
}

/* Status and reason of a scheduler SUBSCRIBE with info_json. */
static int subscribe_status(const char *info_json, char *reason, size_t len)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"type\":\"SUBSCRIBE\",\"subscribe\":{\"framework_info\":%s}}",
             info_json);
    struct http_fake *f = mfx_post(&X, master_scheduler_api, NULL, json);
    int status = http_fake_status(f);
    snprintf(reason, len, "%s", body_of(f));
    http_fake_free(f);
    return status;
}

START_TEST(test_subscribe_needs_credentials)
{
    char reason[256];
    ck_assert_int_eq(subscribe_status(FW_INFO, reason, sizeof(reason)), 401);
    ck_assert_str_eq(reason, "authentication required\n");
    struct http_fake *f = mfx_post(
        &X, master_scheduler_api, NULL,
        "{\"type\":\"SUBSCRIBE\",\"subscribe\":{\"framework_info\":" FW_INFO
        "}}");
    ck_assert_str_eq(http_fake_reply_header(f, "WWW-Authenticate"),
                     "Basic realm=\"mesos\"");
    http_fake_free(f);
    mfx_set_principal(&X, "fw", "wrong");
    ck_assert_int_eq(subscribe_status(FW_INFO, reason, sizeof(reason)), 401);
    ck_assert_str_eq(reason, "invalid credentials\n");
    ck_assert_uint_eq(hmap_count(X.m->frameworks), 0);
    mfx_set_principal(&X, "fw", "s1");
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    ck_assert_uint_eq(hmap_count(X.m->frameworks), 1);
}
END_TEST

START_TEST(test_subscribe_principal_must_match)
{
    char reason[256];
    mfx_set_principal(&X, "eve", "se");
    ck_assert_int_eq(subscribe_status(FW_INFO, reason, sizeof(reason)), 403);
    ck_assert_str_eq(reason, "authenticated principal 'eve' does not match "
                             "principal 'fw' set in FrameworkInfo\n");
    /* A role the ACLs keep the principal out of. */
    mfx_set_principal(&X, "fw", "s1");
    ck_assert_int_eq(
        subscribe_status(
            "{\"user\":\"nobody\",\"name\":\"fw\",\"roles\":["
            "\"prod\"],\"principal\":\"fw\",\"capabilities\":[{\"type\":"
            "\"MULTI_ROLE\"}]}",
            reason, sizeof(reason)),
        403);
    ck_assert_str_eq(
        reason,
        "principal 'fw' is not authorized to register_frameworks for prod\n");
    ck_assert_uint_eq(hmap_count(X.m->frameworks), 0);
}
END_TEST

START_TEST(test_takeover_refused)
{
    mfx_set_principal(&X, "fw", "s1");
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    /* eve re-subscribes with fw's framework id. */
    mfx_set_principal(&X, "eve", "se");
    char info[512], reason[256];
    snprintf(info, sizeof(info),
             "{\"id\":{\"value\":\"%s\"},\"user\":\"nobody\",\"name\":\"x\","
             "\"roles\":[\"web\"],\"principal\":\"eve\",\"failover_timeout\":"
             "0,\"capabilities\":[{\"type\":\"MULTI_ROLE\"}]}",
             FW.id);
    ck_assert_int_eq(subscribe_status(info, reason, sizeof(reason)), 403);
    ck_assert_ptr_nonnull(strstr(reason, "belongs to principal 'fw'"));
    /* ... or calls with its stream id: TEARDOWN refused. */
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "TEARDOWN", NULL, NULL), 403);
    ck_assert_uint_eq(hmap_count(X.m->frameworks), 1);
    struct framework *fw = hmap_get(X.m->frameworks, FW.id);
    ck_assert_ptr_nonnull(fw);
    ck_assert(fw->active);
    /* Its own principal still may. */
    mfx_set_principal(&X, "fw", "s1");
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "REVIVE", NULL, NULL), 202);
}
END_TEST

static int launch_as(const char *offer_id, const char *user)
{
    char payload[2048];
    snprintf(payload, sizeof(payload),
             "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{\"type\":"
             "\"LAUNCH\",\"launch\":{\"task_infos\":[{\"name\":\"t\","
             "\"task_id\":{\"value\":\"t1\"},\"agent_id\":{\"value\":\"%s\"},"
             "\"resources\":[{\"name\":\"cpus\",\"type\":\"SCALAR\","
             "\"scalar\":{\"value\":0.5}}],\"command\":{\"value\":\"id\","
             "\"user\":\"%s\"}}]}}]}",
             offer_id, AG.id, user);
    return mfx_framework_call(&X, &FW, "ACCEPT", "accept", payload);
}

START_TEST(test_run_tasks_as_root_refused)
{
    mfx_set_principal(&X, "agent", "sa");
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    mfx_set_principal(&X, "fw", "s1");
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    char offer_id[256];
    json_t *offers = mfx_first_offer(&X, &FW, offer_id);
    json_decref(offers);
    ck_assert_int_eq(launch_as(offer_id, "root"), 403);
    ck_assert(!mfx_has_event(&AG, "RUN_TASK"));
    struct framework *fw = hmap_get(X.m->frameworks, FW.id);
    ck_assert_uint_eq(hmap_count(fw->tasks), 0);
    ck_assert_ptr_nonnull(hmap_get(X.m->offers, offer_id));
    ck_assert_int_eq(launch_as(offer_id, "nobody"), 202);
    json_t *ev = mfx_next_event(&X, &AG, "RUN_TASK");
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
}
END_TEST

START_TEST(test_agent_impersonation_refused)
{
    struct http_fake *f = mfx_post(
        &X, master_agent_api, NULL,
        "{\"type\":\"SUBSCRIBE\",\"subscribe\":{\"agent_info\":{\"hostname\":"
        "\"h\",\"resources\":[]}}}");
    ck_assert_int_eq(http_fake_status(f), 401);
    http_fake_free(f);
    ck_assert_uint_eq(hmap_count(X.m->agents), 0);
    mfx_set_principal(&X, "agent", "sa");
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    struct agent *ag = master_agent_find(X.m, AG.id);
    ck_assert_str_eq(ag->principal, "agent");
    /* agent2 subscribes with the id of the connected agent. */
    mfx_set_principal(&X, "agent2", "sb");
    char json[512];
    snprintf(json, sizeof(json),
             "{\"type\":\"SUBSCRIBE\",\"subscribe\":{\"agent_info\":{"
             "\"id\":{\"value\":\"%s\"},\"hostname\":\"host1\","
             "\"resources\":[]}}}",
             AG.id);
    f = mfx_post(&X, master_agent_api, NULL, json);
    ck_assert_int_eq(http_fake_status(f), 403);
    ck_assert_ptr_nonnull(strstr(body_of(f), "connected as principal 'agent'"));
    http_fake_free(f);
    ck_assert_ptr_eq(master_agent_find(X.m, AG.id), ag);
    ck_assert_ptr_nonnull(ag->stream);
    ck_assert(!http_fake_stream_ended(AG.stream));
    /* Nor may it send the agent's calls. */
    ck_assert_int_eq(mfx_agent_call(&X, &AG, "UNREGISTER", NULL, NULL), 403);
    ck_assert_ptr_eq(master_agent_find(X.m, AG.id), ag);
    /* eve is not in register_agents. */
    mfx_set_principal(&X, "eve", "se");
    f = mfx_post(&X, master_agent_api, NULL,
                 "{\"type\":\"SUBSCRIBE\",\"subscribe\":{\"agent_info\":{"
                 "\"hostname\":\"h2\",\"resources\":[]}}}");
    ck_assert_int_eq(http_fake_status(f), 403);
    ck_assert_str_eq(body_of(f),
                     "principal 'eve' is not authorized to register_agents\n");
    http_fake_free(f);
    ck_assert_uint_eq(hmap_count(X.m->agents), 1);
}
END_TEST

START_TEST(test_operator_calls_authorized)
{
    mfx_set_principal(&X, "agent", "sa");
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    char call[512];
    snprintf(call, sizeof(call),
             "{\"type\":\"DRAIN_AGENT\",\"drain_agent\":{\"agent_id\":{"
             "\"value\":\"%s\"}}}",
             AG.id);
    mfx_set_principal(&X, NULL, NULL);
    struct http_fake *f = mfx_operator(&X, call);
    ck_assert_int_eq(http_fake_status(f), 401);
    http_fake_free(f);
    mfx_set_principal(&X, "eve", "se");
    f = mfx_operator(&X, call);
    ck_assert_int_eq(http_fake_status(f), 403);
    ck_assert_str_eq(body_of(f),
                     "principal 'eve' is not authorized to drain_agents\n");
    http_fake_free(f);
    ck_assert_ptr_null(master_agent_find(X.m, AG.id)->drain);
    snprintf(call, sizeof(call),
             "{\"type\":\"RESERVE_RESOURCES\",\"reserve_resources\":{"
             "\"agent_id\":{\"value\":\"%s\"},\"resources\":[{\"name\":"
             "\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1},"
             "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"web\","
             "\"principal\":\"eve\"}]}]}}",
             AG.id);
    f = mfx_operator(&X, call);
    ck_assert_int_eq(http_fake_status(f), 403);
    ck_assert_str_eq(
        body_of(f),
        "principal 'eve' is not authorized to reserve_resources for web\n");
    http_fake_free(f);
    ck_assert_uint_eq(master_agent_find(X.m, AG.id)->ckpt.n, 0);
    f = mfx_operator(&X, "{\"type\":\"GET_FLAGS\"}");
    ck_assert_int_eq(http_fake_status(f), 403);
    http_fake_free(f);
    mfx_set_principal(&X, "ops", "so");
    f = mfx_operator(&X, "{\"type\":\"GET_FLAGS\"}");
    ck_assert_int_eq(http_fake_status(f), 200);
    http_fake_free(f);
    snprintf(call, sizeof(call),
             "{\"type\":\"DRAIN_AGENT\",\"drain_agent\":{\"agent_id\":{"
             "\"value\":\"%s\"}}}",
             AG.id);
    f = mfx_operator(&X, call);
    ck_assert_int_eq(http_fake_status(f), 200);
    http_fake_free(f);
}
END_TEST

START_TEST(test_endpoints_gated)
{
    /* /health stays open; the read endpoints need credentials. */
    struct http_fake *f = mfx_http(&X, HTTP_GET, "/health", NULL, NULL);
    ck_assert_int_eq(http_fake_status(f), 200);
    http_fake_free(f);
    f = mfx_http(&X, HTTP_GET, "/master/state", NULL, NULL);
    ck_assert_int_eq(http_fake_status(f), 401);
    ck_assert_str_eq(http_fake_reply_header(f, "WWW-Authenticate"),
                     "Basic realm=\"mesos\"");
    http_fake_free(f);
    mfx_set_principal(&X, "eve", "se");
    f = mfx_http(&X, HTTP_GET, "/state", NULL, NULL);
    ck_assert_int_eq(http_fake_status(f), 200);
    http_fake_free(f);
    f = mfx_http(&X, HTTP_GET, "/flags", NULL, NULL);
    ck_assert_int_eq(http_fake_status(f), 403);
    http_fake_free(f);
    /* Machines down by an unauthorized principal. */
    f = mfx_http(&X, HTTP_POST, "/machine/down", HTTP_CONTENT_JSON,
                 "[{\"hostname\":\"host1\"}]");
    ck_assert_int_eq(http_fake_status(f), 403);
    ck_assert_str_eq(
        body_of(f),
        "principal 'eve' is not authorized to start_maintenances\n");
    http_fake_free(f);
    /* /reserve for a role: the form's resources are the objects. */
    f = mfx_http(&X, HTTP_POST, "/reserve", "application/x-www-form-urlencoded",
                 "slaveId=x&resources=[{\"name\":\"cpus\",\"type\":\"SCALAR\","
                 "\"scalar\":{\"value\":1},\"reservations\":[{\"type\":"
                 "\"DYNAMIC\",\"role\":\"web\",\"principal\":\"eve\"}]}]");
    ck_assert_int_eq(http_fake_status(f), 403);
    ck_assert_str_eq(
        body_of(f),
        "principal 'eve' is not authorized to reserve_resources for web\n");
    http_fake_free(f);
    mfx_set_principal(&X, "ops", "so");
    f = mfx_http(&X, HTTP_GET, "/flags", NULL, NULL);
    ck_assert_int_eq(http_fake_status(f), 200);
    http_fake_free(f);
    /* Past the gate, the handler answers (unknown agent). */
    f = mfx_http(&X, HTTP_POST, "/reserve", "application/x-www-form-urlencoded",
                 "slaveId=x&resources=[{\"name\":\"cpus\",\"type\":\"SCALAR\","
                 "\"scalar\":{\"value\":1},\"reservations\":[{\"type\":"
                 "\"DYNAMIC\",\"role\":\"web\",\"principal\":\"ops\"}]}]");
    ck_assert_int_ne(http_fake_status(f), 403);
    ck_assert_int_ne(http_fake_status(f), 401);
    http_fake_free(f);
}
END_TEST

static size_t json_count(struct http_fake *f, const char *key)
{
    json_error_t je;
    json_t *j = json_loads(mfx_body(f), 0, &je);
    ck_assert_ptr_nonnull(j);
    size_t n = json_array_size(json_object_get(j, key));
    json_decref(j);
    return n;
}

/* Readers see what view_* lets them: frameworks, tasks, flags. */
START_TEST(test_readers_filtered)
{
    mfx_set_principal(&X, "agent", "sa");
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    mfx_set_principal(&X, "fw", "s1");
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    char offer_id[256];
    json_decref(mfx_first_offer(&X, &FW, offer_id));
    ck_assert_int_eq(launch_as(offer_id, "nobody"), 202);
    static const char *const who[] = {"eve", "ops"};
    for (size_t i = 0; i < 2; i++) {
        size_t want = i; /* eve sees nothing, ops everything */
        mfx_set_principal(&X, who[i], i == 0 ? "se" : "so");
        struct http_fake *f = mfx_http(&X, HTTP_GET, "/state", NULL, NULL);
        ck_assert_int_eq(http_fake_status(f), 200);
        ck_assert_uint_eq(json_count(f, "frameworks"), want);
        ck_assert((strstr(mfx_body(f), "\"flags\"") != NULL) == (i == 1));
        http_fake_free(f);
        f = mfx_http(&X, HTTP_GET, "/master/tasks", NULL, NULL);
        ck_assert_uint_eq(json_count(f, "tasks"), want);
        http_fake_free(f);
        f = mfx_operator(&X, "{\"type\":\"GET_FRAMEWORKS\"}");
        ck_assert_int_eq(http_fake_status(f), 200);
        json_t *j = json_loads(mfx_body(f), 0, NULL);
        ck_assert_uint_eq(
            json_array_size(json_object_get(
                json_object_get(j, "get_frameworks"), "frameworks")),
            want);
        json_decref(j);
        http_fake_free(f);
        f = mfx_operator(&X, "{\"type\":\"GET_TASKS\"}");
        j = json_loads(mfx_body(f), 0, NULL);
        ck_assert_uint_eq(
            json_array_size(
                json_object_get(json_object_get(j, "get_tasks"), "tasks")) +
                json_array_size(json_object_get(json_object_get(j, "get_tasks"),
                                                "pending_tasks")),
            want);
        json_decref(j);
        http_fake_free(f);
    }
}
END_TEST

/* Executors by view_executors: fw sees its framework, not its executor. */
START_TEST(test_executors_filtered)
{
    mfx_set_principal(&X, "agent", "sa");
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    mfx_set_principal(&X, "fw", "s1");
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    char offer_id[256], payload[2048];
    json_decref(mfx_first_offer(&X, &FW, offer_id));
    snprintf(payload, sizeof(payload),
             "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{\"type\":"
             "\"LAUNCH\",\"launch\":{\"task_infos\":[{\"name\":\"t\","
             "\"task_id\":{\"value\":\"t1\"},\"agent_id\":{\"value\":\"%s\"},"
             "\"resources\":[{\"name\":\"cpus\",\"type\":\"SCALAR\","
             "\"scalar\":{\"value\":0.5}}],\"executor\":{\"type\":"
             "\"CUSTOM\",\"executor_id\":{\"value\":\"e1\"},\"command\":{"
             "\"value\":\"my-executor\",\"user\":\"nobody\"},\"resources\":"
             "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{"
             "\"value\":0.1}}]}}]}}]}",
             offer_id, AG.id);
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "ACCEPT", "accept", payload),
                     202);
    static const char *const who[] = {"fw", "ops"};
    for (size_t i = 0; i < 2; i++) {
        size_t want = i; /* fw: its framework without the executor */
        mfx_set_principal(&X, who[i], i == 0 ? "s1" : "so");
        struct http_fake *f = mfx_http(&X, HTTP_GET, "/state", NULL, NULL);
        json_t *j = json_loads(mfx_body(f), 0, NULL);
        json_t *fws = json_object_get(j, "frameworks");
        ck_assert_uint_eq(json_array_size(fws), 1);
        ck_assert_uint_eq(json_array_size(json_object_get(
                              json_array_get(fws, 0), "executors")),
                          want);
        json_decref(j);
        http_fake_free(f);
        f = mfx_operator(&X, "{\"type\":\"GET_EXECUTORS\"}");
        j = json_loads(mfx_body(f), 0, NULL);
        ck_assert_uint_eq(
            json_array_size(json_object_get(json_object_get(j, "get_executors"),
                                            "executors")),
            want);
        json_decref(j);
        http_fake_free(f);
    }
}
END_TEST

/* An operator subscriber as principal/secret on p; returns its SUBSCRIBED
 * event's get_state (new reference). */
static json_t *op_subscribe_as(struct mfx_peer *p, const char *principal,
                               const char *secret)
{
    mfx_set_principal(&X, principal, secret);
    memset(p, 0, sizeof(*p));
    p->stream = mfx_operator(&X, "{\"type\":\"SUBSCRIBE\"}");
    ck_assert_msg(http_fake_is_stream(p->stream), "SUBSCRIBE answered %d: %s",
                  http_fake_status(p->stream), mfx_body(p->stream));
    json_t *ev = mfx_next_event(&X, p, "SUBSCRIBED");
    ck_assert_ptr_nonnull(ev);
    json_t *st =
        json_object_get(json_object_get(ev, "subscribed"), "get_state");
    json_incref(st);
    json_decref(ev);
    return st;
}

static size_t state_count(const json_t *st, const char *part, const char *list)
{
    return json_array_size(json_object_get(json_object_get(st, part), list));
}

/* The types of p's unread events, heartbeats included, space-separated
 * (all read). */
static void unread_types(struct mfx_peer *p, char *out, size_t len)
{
    out[0] = '\0';
    for (size_t n = http_fake_record_count(p->stream); p->next < n; p->next++) {
        size_t rlen;
        const uint8_t *r = http_fake_record(p->stream, p->next, &rlen);
        json_t *ev = json_loadb((const char *)r, rlen, 0, NULL);
        const char *type = json_string_value(json_object_get(ev, "type"));
        size_t used = strlen(out);
        snprintf(out + used, len - used, "%s%s", used > 0 ? " " : "",
                 type != NULL ? type : "?");
        json_decref(ev);
    }
}

/* The operator event stream shows each subscriber what its view_* rules
 * let it see, event by event (Mesos's Subscriber::send): eve (no view
 * rights, no other right either) may subscribe and sees agents and
 * heartbeats only; fw sees frameworks but not tasks; ops sees all. */
START_TEST(test_operator_stream_filtered)
{
    mfx_set_principal(&X, "agent", "sa");
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    mfx_set_principal(&X, "fw", "s1");
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    char offer_id[256];
    json_decref(mfx_first_offer(&X, &FW, offer_id));
    ck_assert_int_eq(launch_as(offer_id, "nobody"), 202);

    /* SUBSCRIBED's state, as GET_STATE would show each. */
    static struct mfx_peer FWOP; /* an operator subscriber as fw */
    json_t *st_eve = op_subscribe_as(&OP, "eve", "se");
    json_t *st_fw = op_subscribe_as(&FWOP, "fw", "s1");
    json_t *st_ops = op_subscribe_as(&OP2, "ops", "so");
    ck_assert_uint_eq(state_count(st_eve, "get_frameworks", "frameworks"), 0);
    ck_assert_uint_eq(state_count(st_eve, "get_tasks", "pending_tasks") +
                          state_count(st_eve, "get_tasks", "tasks"),
                      0);
    ck_assert_uint_eq(state_count(st_eve, "get_agents", "agents"), 1);
    ck_assert_uint_eq(state_count(st_fw, "get_frameworks", "frameworks"), 1);
    ck_assert_uint_eq(state_count(st_fw, "get_tasks", "pending_tasks") +
                          state_count(st_fw, "get_tasks", "tasks"),
                      0);
    ck_assert_uint_eq(state_count(st_ops, "get_frameworks", "frameworks"), 1);
    ck_assert_uint_eq(state_count(st_ops, "get_tasks", "pending_tasks") +
                          state_count(st_ops, "get_tasks", "tasks"),
                      1);
    json_decref(st_eve);
    json_decref(st_fw);
    json_decref(st_ops);
    struct mfx_peer *subs[] = {&OP, &FWOP, &OP2};
    char types[512];
    for (size_t i = 0; i < 3; i++)
        unread_types(subs[i], types, sizeof(types)); /* the first HEARTBEAT */

    /* A task update, a second framework, a second agent, a heartbeat. */
    mfx_set_principal(&X, "agent", "sa");
    mfx_task_update(&X, &FW, &AG, "t1", "TASK_RUNNING", 1, false);
    mfx_set_principal(&X, "fw", "s1");
    mfx_framework_subscribe(&X, &FW2, FW_INFO);
    mfx_set_principal(&X, "agent2", "sb");
    mfx_agent_subscribe(&X, &AG2, "host2", "cpus:1;mem:512");
    master_opev_heartbeat(X.m);
    mfx_settle(&X);

    static const char *const want[] = {
        "AGENT_ADDED HEARTBEAT",
        "FRAMEWORK_ADDED AGENT_ADDED HEARTBEAT",
        "TASK_UPDATED FRAMEWORK_ADDED AGENT_ADDED HEARTBEAT",
    };
    for (size_t i = 0; i < 3; i++) {
        unread_types(subs[i], types, sizeof(types));
        ck_assert_str_eq(types, want[i]);
    }

    /* The framework's removal: its tasks' TASK_UPDATED (TASK_KILLED) and
     * FRAMEWORK_REMOVED go to those who may see them. */
    mfx_set_principal(&X, "ops", "so");
    char call[512];
    snprintf(call, sizeof(call),
             "{\"type\":\"TEARDOWN\",\"teardown\":{\"framework_id\":{"
             "\"value\":\"%s\"}}}",
             FW.id);
    struct http_fake *f = mfx_operator(&X, call);
    ck_assert_int_eq(http_fake_status(f), 200);
    http_fake_free(f);
    mfx_settle(&X);
    static const char *const removed[] = {
        "",
        "FRAMEWORK_REMOVED",
        "TASK_UPDATED FRAMEWORK_REMOVED",
    };
    for (size_t i = 0; i < 3; i++) {
        unread_types(subs[i], types, sizeof(types));
        ck_assert_str_eq(types, removed[i]);
    }
    mfx_peer_free(&FWOP);
}
END_TEST

/* Without --credentials nothing is asked; a bad file is refused at start. */
START_TEST(test_flags_refused)
{
    struct master_flags mf;
    master_flags_init(&mf);
    char *argv[] = {"offerd", "--authenticate_frameworks", NULL};
    char err[256];
    ck_assert_int_eq(master_flags_parse(&mf, 2, argv, NULL, err, sizeof(err)),
                     FLAGS_ERROR);
    ck_assert_ptr_nonnull(strstr(err, "needs --credentials"));
    master_flags_fini(&mf);
    master_flags_init(&mf);
    char *argv2[] = {"offerd", "--http_authenticators=digest", NULL};
    ck_assert_int_eq(master_flags_parse(&mf, 2, argv2, NULL, err, sizeof(err)),
                     FLAGS_ERROR);
    master_flags_fini(&mf);
}
END_TEST

static Suite *master_auth_suite(void)
{
    Suite *s = suite_create("master_auth");
    TCase *tc = tcase_create("auth");
    tcase_add_checked_fixture(tc, auth_setup, auth_teardown);
    tcase_add_test(tc, test_subscribe_needs_credentials);
    tcase_add_test(tc, test_subscribe_principal_must_match);
    tcase_add_test(tc, test_takeover_refused);
    tcase_add_test(tc, test_run_tasks_as_root_refused);
    tcase_add_test(tc, test_agent_impersonation_refused);
    tcase_add_test(tc, test_operator_calls_authorized);
    tcase_add_test(tc, test_endpoints_gated);
    tcase_add_test(tc, test_readers_filtered);
    tcase_add_test(tc, test_executors_filtered);
    tcase_add_test(tc, test_operator_stream_filtered);
    suite_add_tcase(s, tc);
    TCase *flags = tcase_create("flags");
    tcase_add_test(flags, test_flags_refused);
    suite_add_tcase(s, flags);
    return s;
}

OFFERD_CHECK_MAIN(master_auth_suite)
