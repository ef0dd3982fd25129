/*
 * End-to-end: a master with authentication on for frameworks, agents and
 * read-write endpoints, and Mesos ACLs; an agent that authenticates with
 * --credential and guards its sandboxes with access_sandboxes. Each attack
 * of issue 19 that authentication covers is run over loopback and shown
 * refused (401/403, nothing changed), and the normal path with the right
 * credentials works end to end (offerd-execute and a scripted framework
 * launch tasks).
 */
#include <check.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/auth.h"
#include "harness.h"
#include "harness_api.h"

#ifndef OFFERD_EXECUTE_BIN
#define OFFERD_EXECUTE_BIN "offerd-execute"
#endif

static struct e2e_proc master, agent;
static char dir[64]; /* the test's files */

#define CREDENTIALS "fw s1\neve se\nagent sa\nagent2 sb\nops so\n"

/* Only principal who may do action (its object field obj), nobody else. */
#define ONLY(action, who, obj)                                                 \
    "\"" action "\": [{\"principals\": {\"values\": [" who "]}, \"" obj        \
    "\": {\"type\": \"ANY\"}}, {\"principals\": {\"type\": \"ANY\"}, \"" obj   \
    "\": {\"type\": \"NONE\"}}]"

/* clang-format off */
static const char MASTER_ACLS[] =
    "{"
    ONLY("register_frameworks", "\"fw\", \"eve\"", "roles") ","
    ONLY("run_tasks", "\"fw\"", "users") ","
    ONLY("reserve_resources", "\"ops\"", "roles") ","
    ONLY("unreserve_resources", "\"ops\"", "reserver_principals") ","
    ONLY("create_volumes", "\"ops\"", "roles") ","
    ONLY("destroy_volumes", "\"ops\"", "creator_principals") ","
    ONLY("start_maintenances", "\"ops\"", "machines") ","
    ONLY("update_maintenance_schedules", "\"ops\"", "machines") ","
    ONLY("drain_agents", "\"ops\"", "agents") ","
    ONLY("deactivate_agents", "\"ops\"", "agents") ","
    ONLY("teardown_frameworks", "\"ops\"", "framework_principals") ","
    ONLY("view_roles", "\"ops\"", "roles") ","
    ONLY("register_agents", "\"agent\", \"agent2\"", "agents")
    "}";
/* clang-format on */

static const char AGENT_ACLS[] =
    "{" ONLY("access_sandboxes", "\"ops\"", "users") "}";

static void write_file(const char *name, const char *text, char *path,
                       size_t len)
{
    snprintf(path, len, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fputs(text, f) >= 0, 1);
    ck_assert_int_eq(fclose(f), 0);
}

static char creds_flag[128], acls_flag[128], cred_flag[128],
    http_creds_flag[128], agent_acls_flag[128], secret_path[100];

static void start_cluster(void)
{
    snprintf(dir, sizeof(dir), "/tmp/offerd-e2e-auth-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char p[100];
    write_file("credentials", CREDENTIALS, p, sizeof(p));
    snprintf(creds_flag, sizeof(creds_flag), "--credentials=%s", p);
    snprintf(http_creds_flag, sizeof(http_creds_flag), "--http_credentials=%s",
             p);
    write_file("acls.json", MASTER_ACLS, p, sizeof(p));
    snprintf(acls_flag, sizeof(acls_flag), "--acls=%s", p);
    write_file("agent_acls.json", AGENT_ACLS, p, sizeof(p));
    snprintf(agent_acls_flag, sizeof(agent_acls_flag), "--acls=%s", p);
    write_file("credential", "{\"principal\": \"agent\", \"secret\": \"sa\"}",
               p, sizeof(p));
    snprintf(cred_flag, sizeof(cred_flag), "--credential=%s", p);
    write_file("fw_secret", "s1\n", secret_path, sizeof(secret_path));
    const char *margs[] = {"--registry=in_memory",
                           "--allocation_interval=100ms",
                           creds_flag,
                           "--authenticate_frameworks",
                           "--authenticate_agents",
                           "--authenticate_http_readwrite",
                           acls_flag,
                           NULL};
    ck_assert_int_eq(e2e_start_master(&master, margs), 0);
    const char *aargs[] = {cred_flag, http_creds_flag, agent_acls_flag,
                           "--resources=cpus:2;mem:1024;cpus(r):1", NULL};
    ck_assert_int_eq(e2e_start_agent(&agent, master.port, aargs), 0);
    /* The agent registered: it authenticated with --credential. */
    ck_assert_msg(e2e_wait_agents(&master, 1, 20000) == 0,
                  "the agent did not register");
}

static void stop_cluster(void)
{
    /* Both daemons stop cleanly (under ASan: without leaks). */
    ck_assert_int_eq(e2e_proc_stop(&agent, SIGTERM, 20000), 0);
    ck_assert_int_eq(e2e_proc_stop(&master, SIGTERM, 20000), 0);
    e2e_proc_cleanup(&agent);
    e2e_proc_cleanup(&master);
    api_set_credentials(NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* A request with principal's credentials (NULL: none); returns the
 * status, the response kept in r (caller frees). */
static int request(uint16_t port, const char *method, const char *path,
                   const char *principal, const char *secret,
                   const char *content_type, const char *body,
                   struct e2e_response *r)
{
    char auth[512] = "", ct[128] = "";
    const char *headers[3] = {NULL, NULL, NULL};
    size_t n = 0;
    if (principal != NULL) {
        char *h = auth_basic_header(principal, secret);
        snprintf(auth, sizeof(auth), "Authorization: %s", h);
        free(h);
        headers[n++] = auth;
    }
    if (content_type != NULL) {
        snprintf(ct, sizeof(ct), "Content-Type: %s", content_type);
        headers[n++] = ct;
    }
    ck_assert_int_eq(e2e_http(port, method, path, headers, body,
                              body != NULL ? strlen(body) : 0, T, r),
                     0);
    return r->status;
}

/* The status of a request, asserting the reason when want_reason is set
 * (a substring). */
static void expect(int want, uint16_t port, const char *method,
                   const char *path, const char *principal, const char *secret,
                   const char *content_type, const char *body,
                   const char *want_reason)
{
    struct e2e_response r;
    int status =
        request(port, method, path, principal, secret, content_type, body, &r);
    ck_assert_msg(status == want, "%s %s as %s: %d (%s), expected %d", method,
                  path, principal ? principal : "nobody", status,
                  r.body ? r.body : "", want);
    if (want == 401)
        ck_assert_str_eq(e2e_response_header(&r, "WWW-Authenticate"),
                         "Basic realm=\"mesos\"");
    if (want_reason != NULL)
        ck_assert_msg(r.body != NULL && strstr(r.body, want_reason) != NULL,
                      "%s %s: reason '%s' lacks '%s'", method, path,
                      r.body ? r.body : "", want_reason);
    e2e_response_free(&r);
}

#define FW_INFO(principal)                                                     \
    "{\"user\":\"u\",\"name\":\"" principal "-fw\",\"principal\":\"" principal \
    "\",\"failover_timeout\":60}"

/* ACCEPT offer_id with one LAUNCH of task_id running command as user. */
static int launch(struct conn *fw, const char *offer_id, const char *agent_id,
                  const char *task_id, const char *command, const char *user)
{
    char payload[4096];
    snprintf(payload, sizeof(payload),
             "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{\"type\":"
             "\"LAUNCH\",\"launch\":{\"task_infos\":[{\"name\":\"t\","
             "\"task_id\":{\"value\":\"%s\"},\"agent_id\":{\"value\":\"%s\"},"
             "\"resources\":" SMALL ",\"command\":{\"value\":\"%s\","
             "\"user\":\"%s\"}}]}}],\"filters\":{\"refuse_seconds\":0}}",
             offer_id, task_id, agent_id, command, user);
    return api_fw_call(fw, master.port, "ACCEPT", "accept", payload);
}

/* Whether the framework id is active in the master's /state. */
static bool framework_active(const char *id)
{
    json_t *st = e2e_get_json(master.port, "/state");
    ck_assert_ptr_nonnull(st);
    bool active = false;
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(st, "frameworks"), i, f)
    {
        if (strcmp(json_string_value(json_object_get(f, "id")), id) == 0)
            active = json_is_true(json_object_get(f, "active"));
    }
    json_decref(st);
    return active;
}

static void query_escape(const char *s, char *out, size_t len)
{
    size_t o = 0;
    for (; *s != '\0' && o + 4 < len; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
            (c >= '0' && c <= '9') || c == '/' || c == '-' || c == '_' ||
            c == '.')
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, len - o, "%%%02X", c);
    }
    out[o] = '\0';
}

START_TEST(test_attacks_refused_right_credentials_work)
{
    start_cluster();
    uint16_t mp = master.port;
    const char *sub_body =
        "{\"type\":\"SUBSCRIBE\",\"subscribe\":{\"framework_info\":" FW_INFO(
            "fw") "}}";

    /* SUBSCRIBE without credentials, or with a wrong secret. */
    expect(401, mp, "POST", "/api/v1/scheduler", NULL, NULL, "application/json",
           sub_body, "authentication required");
    expect(401, mp, "POST", "/api/v1/scheduler", "fw", "nope",
           "application/json", sub_body, "invalid credentials");

    /* The normal path through a client: offerd-execute authenticates with
     * --principal and --secret_file, and its task runs. */
    char master_flag[64], secret_flag[160];
    snprintf(master_flag, sizeof(master_flag), "--master=127.0.0.1:%u",
             (unsigned)mp);
    snprintf(secret_flag, sizeof(secret_flag), "--secret_file=%s", secret_path);
    const char *xargs[] = {master_flag,       "--name=ok",
                           "--command=true",  "--principal=fw",
                           secret_flag,       "--subscribe_timeout=20secs",
                           "--encoding=json", NULL};
    char out[8192];
    int rc = e2e_run(OFFERD_EXECUTE_BIN, xargs, out, sizeof(out), 40000);
    ck_assert_msg(rc == 0, "offerd-execute exit %d:\n%s", rc, out);

    /* An unauthorized principal runs a command as root. */
    struct conn eve;
    api_set_credentials("eve", "se");
    api_subscribe_framework(&eve, mp, FW_INFO("eve"));
    char offer_id[256], agent_id[256];
    json_t *offers = api_wait_offer(&eve, offer_id, agent_id, 10000);
    ck_assert_ptr_nonnull(offers);
    json_decref(offers);
    ck_assert_int_eq(
        launch(&eve, offer_id, agent_id, "pwn", "id > pwned.txt", "root"), 403);
    ck_assert_int_eq(api_fw_call(&eve, mp, "TEARDOWN", NULL, NULL), 202);
    api_conn_close(&eve);

    /* The right principal launches a task. */
    struct conn fw;
    api_set_credentials("fw", "s1");
    api_subscribe_framework(&fw, mp, FW_INFO("fw"));
    offers = api_wait_offer(&fw, offer_id, agent_id, 10000);
    ck_assert_ptr_nonnull(offers);
    json_decref(offers);
    ck_assert_int_eq(launch(&fw, offer_id, agent_id, "t1",
                            "echo sandbox-data > out.txt; sleep 60", "u"),
                     202);
    bool running = false;
    for (int i = 0; i < 10 && !running; i++) {
        json_t *ev = api_wait_event(&fw, "UPDATE", 10000);
        ck_assert_ptr_nonnull(ev);
        json_t *status =
            json_object_get(json_object_get(ev, "update"), "status");
        running = strcmp(json_string_value(json_object_get(status, "state")),
                         "TASK_RUNNING") == 0;
        api_fw_ack_status(&fw, mp, status);
        json_decref(ev);
    }
    ck_assert(running);

    /* Take over another framework: re-SUBSCRIBE with its id, or call with
     * its stream, under another principal. */
    char takeover[1024];
    snprintf(takeover, sizeof(takeover),
             "{\"type\":\"SUBSCRIBE\",\"subscribe\":{\"framework_info\":{"
             "\"id\":{\"value\":\"%s\"},\"user\":\"u\",\"name\":\"x\","
             "\"principal\":\"eve\",\"failover_timeout\":0}}}",
             fw.id);
    expect(403, mp, "POST", "/api/v1/scheduler", "eve", "se",
           "application/json", takeover, "belongs to principal 'fw'");
    api_set_credentials("eve", "se");
    ck_assert_int_eq(api_fw_call(&fw, mp, "TEARDOWN", NULL, NULL), 403);
    ck_assert(framework_active(fw.id));
    char form[320];
    snprintf(form, sizeof(form), "frameworkId=%s", fw.id);
    expect(403, mp, "POST", "/teardown", "eve", "se",
           "application/x-www-form-urlencoded", form, "teardown_frameworks");
    ck_assert(framework_active(fw.id));

    /* Reserve, unreserve, create and destroy under another principal. */
    char reason[512];
    const char *res = "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{"
                      "\"value\":1},\"reservations\":[{\"type\":\"DYNAMIC\","
                      "\"role\":\"r\",\"principal\":\"ops\"}]}]";
    const char *vol =
        "[{\"name\":\"disk\",\"type\":\"SCALAR\",\"scalar\":{\"value\":8},"
        "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"r\","
        "\"principal\":\"ops\"}],\"disk\":{\"persistence\":{\"id\":\"v\","
        "\"principal\":\"ops\"},\"volume\":{\"mode\":\"RW\","
        "\"container_path\":\"v\"}}}]";
    static const struct {
        const char *path, *field, *action;
    } forms[] = {
        {"/reserve", "resources", "reserve_resources"},
        {"/unreserve", "resources", "unreserve_resources"},
        {"/create-volumes", "volumes", "create_volumes"},
        {"/destroy-volumes", "volumes", "destroy_volumes"},
    };
    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
        api_set_credentials(NULL, NULL);
        ck_assert_int_eq(api_operator_form(mp, forms[i].path, agent_id,
                                           forms[i].field, i < 2 ? res : vol,
                                           reason, sizeof(reason)),
                         401);
        api_set_credentials("eve", "se");
        ck_assert_int_eq(api_operator_form(mp, forms[i].path, agent_id,
                                           forms[i].field, i < 2 ? res : vol,
                                           reason, sizeof(reason)),
                         403);
        ck_assert_msg(strstr(reason, forms[i].action) != NULL, "%s", reason);
    }
    char call[2048];
    snprintf(call, sizeof(call),
             "{\"type\":\"RESERVE_RESOURCES\",\"reserve_resources\":{"
             "\"agent_id\":{\"value\":\"%s\"},\"resources\":%s}}",
             agent_id, res);
    expect(401, mp, "POST", "/api/v1", NULL, NULL, "application/json", call,
           NULL);
    expect(403, mp, "POST", "/api/v1", "eve", "se", "application/json", call,
           "reserve_resources for r");

    /* Take a machine down, drain or deactivate its agent. */
    expect(403, mp, "POST", "/maintenance/schedule", "eve", "se",
           "application/json",
           "{\"windows\":[{\"machine_ids\":[{\"hostname\":\"localhost\"}],"
           "\"unavailability\":{\"start\":{\"nanoseconds\":1}}}]}",
           "update_maintenance_schedules");
    expect(401, mp, "POST", "/machine/down", NULL, NULL, "application/json",
           "[{\"hostname\":\"localhost\"}]", NULL);
    expect(403, mp, "POST", "/machine/down", "eve", "se", "application/json",
           "[{\"hostname\":\"localhost\"}]", "start_maintenances");
    static const char *const agent_calls[] = {"DRAIN_AGENT",
                                              "DEACTIVATE_AGENT"};
    for (size_t i = 0; i < 2; i++) {
        char lower[32];
        snprintf(lower, sizeof(lower), "%s", agent_calls[i]);
        for (char *c = lower; *c; c++)
            *c = (char)(*c == '_' ? '_' : *c - 'A' + 'a');
        snprintf(call, sizeof(call),
                 "{\"type\":\"%s\",\"%s\":{\"agent_id\":{\"value\":\"%s\"}}}",
                 agent_calls[i], lower, agent_id);
        expect(401, mp, "POST", "/api/v1", NULL, NULL, "application/json", call,
               NULL);
        expect(403, mp, "POST", "/api/v1", "eve", "se", "application/json",
               call, i == 0 ? "drain_agents" : "deactivate_agents");
    }

    /* Impersonate the agent: SUBSCRIBE with its id. */
    snprintf(call, sizeof(call),
             "{\"type\":\"SUBSCRIBE\",\"subscribe\":{\"agent_info\":{\"id\":"
             "{\"value\":\"%s\"},\"hostname\":\"localhost\",\"resources\":"
             "[]}}}",
             agent_id);
    expect(401, mp, "POST", "/api/v1/agent", NULL, NULL, "application/json",
           call, NULL);
    expect(403, mp, "POST", "/api/v1/agent", "eve", "se", "application/json",
           call, "register_agents");
    expect(403, mp, "POST", "/api/v1/agent", "agent2", "sb", "application/json",
           call, "connected as principal 'agent'");
    ck_assert_double_eq(e2e_metric(mp, "master/slaves_active"), 1);
    ck_assert_double_eq(e2e_metric(mp, "master/tasks_running"), 1);

    /* Read the sandbox: only access_sandboxes principals may. */
    char sandbox[1024], q[3200], url[3400];
    ck_assert(e2e_agent_sandbox(agent.port, "t1", sandbox, sizeof(sandbox)));
    char file[1100];
    snprintf(file, sizeof(file), "%s/out.txt", sandbox);
    query_escape(file, q, sizeof(q));
    snprintf(url, sizeof(url), "/files/read?path=%s&offset=0", q);
    expect(403, agent.port, "GET", url, NULL, NULL, NULL, NULL,
           "access_sandboxes");
    expect(403, agent.port, "GET", url, "eve", "se", NULL, NULL,
           "access_sandboxes");
    expect(401, agent.port, "GET", url, "ops", "wrong", NULL, NULL, NULL);
    struct e2e_response r;
    bool seen = false;
    for (int i = 0; i < 250 && !seen; i++) {
        ck_assert_int_eq(
            request(agent.port, "GET", url, "ops", "so", NULL, NULL, &r), 200);
        seen = r.body != NULL && strstr(r.body, "sandbox-data") != NULL;
        e2e_response_free(&r);
        if (!seen)
            e2e_sleep_ms(E2E_POLL_MS);
    }
    ck_assert(seen);

    /* The agent's cpus reserved to r: only view_roles principals see the
     * role in /state and the resource in GET_AGENTS. */
    static const struct {
        const char *who, *secret;
        bool sees;
    } readers[] = {{"eve", "se", false}, {"ops", "so", true}};
    size_t total[2];
    for (size_t i = 0; i < 2; i++) {
        ck_assert_int_eq(request(mp, "GET", "/state", readers[i].who,
                                 readers[i].secret, NULL, NULL, &r),
                         200);
        json_t *st = json_loads(r.body, 0, NULL);
        e2e_response_free(&r);
        json_t *ag = json_array_get(json_object_get(st, "slaves"), 0);
        ck_assert_msg(
            (json_object_get(json_object_get(ag, "reserved_resources"), "r") !=
             NULL) == readers[i].sees,
            "/state as %s", readers[i].who);
        json_decref(st);
        ck_assert_int_eq(request(mp, "POST", "/api/v1", readers[i].who,
                                 readers[i].secret, "application/json",
                                 "{\"type\":\"GET_AGENTS\"}", &r),
                         200);
        json_t *ga = json_loads(r.body, 0, NULL);
        e2e_response_free(&r);
        ag = json_array_get(
            json_object_get(json_object_get(ga, "get_agents"), "agents"), 0);
        total[i] = json_array_size(json_object_get(ag, "total_resources"));
        json_decref(ga);
    }
    ck_assert_msg(total[0] + 1 == total[1], "GET_AGENTS: eve %zu, ops %zu",
                  total[0], total[1]);

    api_conn_close(&fw);
    stop_cluster();
}
END_TEST

/* A malformed credentials or ACLs file refuses the start, in one line. */
START_TEST(test_bad_files_refuse_start)
{
    snprintf(dir, sizeof(dir), "/tmp/offerd-e2e-auth-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char p[100], flag[160], out[4096];
    write_file("credentials", "{\"credentials\": [{\"secret\": \"x\"}]}", p,
               sizeof(p));
    snprintf(flag, sizeof(flag), "--credentials=%s", p);
    char wd[120];
    snprintf(wd, sizeof(wd), "--work_dir=%s/w", dir);
    const char *args[] = {"--registry=in_memory", "--port=0", wd, flag, NULL};
    int rc = e2e_run(OFFERD_BIN, args, out, sizeof(out), 10000);
    ck_assert_msg(rc == 1, "exit %d: %s", rc, out);
    ck_assert_msg(strstr(out, "credentials[0]") != NULL, "%s", out);
    const char *args2[] = {"--registry=in_memory", "--port=0", wd,
                           "--acls={\"run_task\": []}", NULL};
    rc = e2e_run(OFFERD_BIN, args2, out, sizeof(out), 10000);
    ck_assert_msg(rc == 1, "exit %d: %s", rc, out);
    ck_assert_msg(strstr(out, "unknown field 'run_task'") != NULL, "%s", out);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static Suite *auth_suite(void)
{
    Suite *s = suite_create("e2e_auth");
    TCase *tc = tcase_create("auth");
    tcase_set_timeout(tc, 90);
    tcase_add_test(tc, test_attacks_refused_right_credentials_work);
    tcase_add_test(tc, test_bad_files_refuse_start);
    suite_add_tcase(s, tc);
    return s;
}

E2E_CHECK_MAIN(auth_suite)
