/*
 * Tests for offerctl (src/cli/offerctl*.c): argument parsing, the Calls
 * each command sends (checked against mesos.v1.master.Call as the master
 * decodes it), the tables it prints from canned answers, exit statuses and
 * one-line errors, and `logs` reading a sandbox file through a fake agent.
 * No sockets: octl_run talks to a fake struct octl_io.
 */
#include "cli/master_addr.h"
#include "cli/offerctl.h"
#include "cli/offerctl_build.h"
#include "cli/offerctl_table.h"
#include "common/json_pb.h"
#include "mesos/v1/master.pb-c.h"

#include "check_main.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- A fake octl_io ---------------------------------------------------- */

#define FAKE_MAX 32

struct canned {
    const char *match; /* a Call's type, or the start of a GET path */
    int status;
    const char *body;
    bool sticky; /* answers every match, not just the first */
    bool used;
};

struct fake {
    struct canned answers[FAKE_MAX];
    size_t nanswers;
    char *sent[FAKE_MAX]; /* POST bodies, or "GET <host>:<port><path>" */
    size_t nsent;
    int sleeps;
    int stop_after; /* stopped() once this many sleeps passed; 0 never */
};

static struct fake F;
static char *out_buf, *err_buf;
static size_t out_len, err_len;

static void answer(const char *match, int status, const char *body)
{
    ck_assert_uint_lt(F.nanswers, FAKE_MAX);
    F.answers[F.nanswers++] =
        (struct canned){match, status, body, false, false};
}

static void answer_always(const char *match, int status, const char *body)
{
    answer(match, status, body);
    F.answers[F.nanswers - 1].sticky = true;
}

static void fake_request(void *arg, const struct octl_request *rq,
                         struct octl_reply *rp)
{
    char what[8192];
    const char *type = NULL;
    json_t *call = NULL;
    if (rq->post) {
        ck_assert_str_eq(rq->path, "/api/v1");
        call = json_loads(rq->body, 0, NULL);
        ck_assert_ptr_nonnull(call);
        type = json_string_value(json_object_get(call, "type"));
        snprintf(what, sizeof(what), "%s", rq->body);
    } else {
        snprintf(what, sizeof(what), "GET %s:%u%s",
                 rq->to_agent ? rq->host : "master", (unsigned)rq->port,
                 rq->path);
    }
    ck_assert_uint_lt(F.nsent, FAKE_MAX);
    F.sent[F.nsent++] = strdup(what);
    for (size_t i = 0; i < F.nanswers; i++) {
        struct canned *a = &F.answers[i];
        bool hit = rq->post
                       ? (type && strcmp(a->match, type) == 0)
                       : strncmp(rq->path, a->match, strlen(a->match)) == 0;
        if (!hit || (a->used && !a->sticky))
            continue;
        a->used = true;
        rp->status = a->status;
        rp->body = strdup(a->body);
        rp->len = strlen(a->body);
        json_decref(call);
        return;
    }
    json_decref(call);
    ck_abort_msg("no canned answer for %s", what);
}

static void fake_sleep(void *arg, int64_t ms)
{
    F.sleeps++;
}

static bool fake_stopped(void *arg)
{
    return F.stop_after > 0 && F.sleeps >= F.stop_after;
}

/* Parse and run a command line given as words; returns the exit status.
 * out_buf and err_buf hold what it printed. */
static int run_argv(const char *const *words)
{
    char *argv[64];
    int argc = 0;
    argv[argc++] = (char *)"offerctl";
    for (size_t i = 0; words[i] != NULL; i++)
        argv[argc++] = (char *)words[i];
    argv[argc] = NULL;
    free(out_buf);
    free(err_buf);
    out_buf = err_buf = NULL;
    FILE *out = open_memstream(&out_buf, &out_len);
    FILE *err = open_memstream(&err_buf, &err_len);
    struct octl_args a;
    char why[512];
    int rc;
    if (octl_parse_args(argc, argv, NULL, &a, why, sizeof(why)) != 0) {
        fprintf(err, "offerctl: %s\n", why);
        rc = OCTL_EXIT_USAGE;
    } else {
        struct octl_io io = {fake_request, fake_sleep, fake_stopped,
                             NULL,         out,        err};
        rc = octl_run(&a, &io);
    }
    fclose(out);
    fclose(err);
    return rc;
}

#define RUN(...) run_argv((const char *const[]){__VA_ARGS__, NULL})

/* The n-th Call sent, parsed; also decoded as the master decodes it. */
static json_t *sent_call(size_t n)
{
    ck_assert_uint_gt(F.nsent, n);
    json_t *j = json_loads(F.sent[n], 0, NULL);
    ck_assert_msg(j != NULL, "not JSON: %s", F.sent[n]);
    char err[512];
    ProtobufCMessage *m = jpb_from_json(&mesos__v1__master__call__descriptor, j,
                                        err, sizeof(err));
    ck_assert_msg(m != NULL, "the master would refuse %s: %s", F.sent[n], err);
    jpb_free(m);
    return j;
}

static void assert_json_eq(json_t *got, const char *want_text)
{
    json_t *want = json_loads(want_text, 0, NULL);
    ck_assert_msg(want != NULL, "bad expected JSON %s", want_text);
    char *g = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);
    char *w = json_dumps(want, JSON_COMPACT | JSON_SORT_KEYS);
    ck_assert_msg(json_equal(got, want), "got %s\nwant %s", g, w);
    free(g);
    free(w);
    json_decref(want);
}

/* Forget the answers and requests of the fake (frees what it holds). */
static void reset_fake(void)
{
    for (size_t i = 0; i < F.nsent; i++)
        free(F.sent[i]);
    memset(&F, 0, sizeof(F));
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* ---- Parsing ------------------------------------------------------------ */

START_TEST(test_parse_globals_anywhere)
{
    char *argv[] = {"offerctl",
                    "frameworks",
                    "--json",
                    "--all",
                    "--master=10.0.0.1:5050",
                    "--timeout=2secs",
                    NULL};
    struct octl_args a;
    char err[256];
    ck_assert_int_eq(
        octl_parse_args(6, argv, "1.2.3.4:1", &a, err, sizeof(err)), 0);
    ck_assert_str_eq(octl_cmd_name(a.cmd), "frameworks");
    ck_assert(a.json);
    ck_assert_str_eq(a.master, "10.0.0.1:5050");
    ck_assert_int_eq(a.timeout_ms, 2000);
    ck_assert_str_eq(a.opt[OCTL_OPT_ALL], "true");
    ck_assert_uint_eq(a.npos, 0);
}
END_TEST

START_TEST(test_parse_master_env_and_default)
{
    char *argv[] = {"offerctl", "agents", NULL};
    struct octl_args a;
    char err[256];
    ck_assert_int_eq(
        octl_parse_args(2, argv, "10.1.1.1:5050", &a, err, sizeof(err)), 0);
    ck_assert_str_eq(a.master, "10.1.1.1:5050");
    ck_assert_int_eq(octl_parse_args(2, argv, NULL, &a, err, sizeof(err)), 0);
    ck_assert_str_eq(a.master, OCTL_DEFAULT_MASTER);
}
END_TEST

/* Usage errors: each a one-line reason naming what is wrong. */
static const struct {
    const char *argv[6];
    const char *reason;
} usage_cases[] = {
    {{"bogus"}, "unknown command 'bogus'"},
    {{}, "missing command"},
    {{"agents", "--nope"}, "unknown option --nope"},
    {{"agents", "--role=db"}, "agents does not take --role"},
    {{"reserve", "--role"}, "--role needs a value"},
    {{"tasks", "--all=yes"}, "--all takes no value"},
    {{"agents", "--master"}, "--master needs a value"},
    {{"agents", "--timeout=soon"}, "--timeout"},
    {{"reserve", "--role=a", "--role=b"}, "--role given twice"},
};

START_TEST(test_parse_usage_errors)
{
    const char *const *words = usage_cases[_i].argv;
    char *argv[8] = {"offerctl"};
    int argc = 1;
    for (; argc < 7 && words[argc - 1] != NULL; argc++)
        argv[argc] = (char *)words[argc - 1];
    struct octl_args a;
    char err[256] = "";
    ck_assert_int_eq(octl_parse_args(argc, argv, NULL, &a, err, sizeof(err)),
                     -1);
    ck_assert_msg(strstr(err, usage_cases[_i].reason) != NULL,
                  "reason '%s' lacks '%s'", err, usage_cases[_i].reason);
    ck_assert_ptr_null(strchr(err, '\n'));
}
END_TEST

START_TEST(test_help_per_command)
{
    ck_assert_int_eq(RUN("reserve", "--help"), 0);
    ck_assert_ptr_nonnull(strstr(out_buf, "Usage: offerctl reserve AGENT_ID"));
    ck_assert_ptr_nonnull(strstr(out_buf, "--principal"));
    ck_assert_int_eq(RUN("--help"), 0);
    ck_assert_ptr_nonnull(strstr(out_buf, "maintenance"));
    ck_assert_int_eq(RUN("help", "logs"), 0);
    ck_assert_ptr_nonnull(strstr(out_buf, "Usage: offerctl logs TASK_ID"));
    ck_assert_uint_eq(F.nsent, 0);
}
END_TEST

/* Bad arguments of a known command: exit 2, one line, nothing sent. */
static const struct {
    const char *argv[6];
    const char *reason;
} arg_cases[] = {
    {{"reserve", "S1"}, "missing AGENT_ID and RESOURCES"},
    {{"reserve", "S1", "cpus:1"}, "no role to reserve to"},
    {{"reserve", "S1", "cpus:x", "--role=db"}, "bad resources 'cpus:x'"},
    {{"reserve", "S1", "cpus:1", "--role=a b"}, "--role"},
    {{"reserve", "S1", "[{\"name\":1}]"}, "resource 0: name"},
    {{"reserve", "S1", "[]", "--role=db"}, "do not apply to JSON"},
    {{"agents", "extra"}, "unexpected argument 'extra'"},
    {{"quota", "set", "db"}, "give --guarantee"},
    {{"quota", "set", "db", "--guarantee=ports:[1-2]"}, "scalar"},
    {{"quota", "frob"}, "unknown quota command 'frob'"},
    {{"weights", "set", "db"}, "expected ROLE=WEIGHT"},
    {{"weights", "set", "db=-1"}, "a positive number"},
    {{"maintenance"}, "missing command"},
    {{"maintenance", "down"}, "missing MACHINE"},
    {{"maintenance", "down", "h/999.1.1.1"}, "bad IPv4 address"},
    {{"maintenance", "schedule", "{bad"}, "bad schedule"},
    {{"drain", "S1", "--max_grace_period=5"}, "--max_grace_period"},
    {{"volumes", "create", "S1", "disk:10", "--role=db"}, "--id=ID"},
    {{"volumes", "create", "S1", "cpus:1", "--role=db", "--id=v"},
     "--container_path"},
    {{"volumes", "grow", "S1", "pg", "-5"}, "bad SIZE '-5'"},
    {{"volumes", "shrink", "S1", "pg"}, "missing AGENT_ID, VOLUME_ID and SIZE"},
    {{"volumes", "resize"}, "unknown volumes command 'resize'"},
    {{"logs"}, "missing TASK_ID"},
    {{"logs", "t1", "--file=/etc/passwd"}, "--file"},
    {{"teardown"}, "missing FRAMEWORK_ID"},
};

START_TEST(test_bad_arguments)
{
    const char *const *w = arg_cases[_i].argv;
    ck_assert_int_eq(run_argv(w), OCTL_EXIT_USAGE);
    ck_assert_msg(strstr(err_buf, arg_cases[_i].reason) != NULL,
                  "error '%s' lacks '%s'", err_buf, arg_cases[_i].reason);
    ck_assert_int_eq(count_lines(err_buf), 1);
    ck_assert_str_eq(out_buf, "");
    ck_assert_uint_eq(F.nsent, 0);
}
END_TEST

/* ---- The Calls each change sends -------------------------------------- */

static const struct {
    const char *argv[10];
    const char *type; /* canned 200/202 for it */
    const char *call; /* the Call expected */
} call_cases[] = {
    {{"reserve", "S1", "cpus:1;mem:512", "--role=db", "--principal=ops"},
     "RESERVE_RESOURCES",
     "{\"type\":\"RESERVE_RESOURCES\",\"reserve_resources\":{\"agent_id\":"
     "{\"value\":\"S1\"},\"resources\":["
     "{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1.0},"
     "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"db\","
     "\"principal\":\"ops\"}]},"
     "{\"name\":\"mem\",\"type\":\"SCALAR\",\"scalar\":{\"value\":512.0},"
     "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"db\","
     "\"principal\":\"ops\"}]}]}}"},
    {{"unreserve", "S1", "cpus(db):1"},
     "UNRESERVE_RESOURCES",
     "{\"type\":\"UNRESERVE_RESOURCES\",\"unreserve_resources\":{"
     "\"agent_id\":{\"value\":\"S1\"},\"resources\":["
     "{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1.0},"
     "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"db\"}]}]}}"},
    {{"reserve", "S1",
      "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":2},"
      "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"x\"}]}]"},
     "RESERVE_RESOURCES",
     "{\"type\":\"RESERVE_RESOURCES\",\"reserve_resources\":{\"agent_id\":"
     "{\"value\":\"S1\"},\"resources\":[{\"name\":\"cpus\",\"type\":"
     "\"SCALAR\",\"scalar\":{\"value\":2},\"reservations\":[{\"type\":"
     "\"DYNAMIC\",\"role\":\"x\"}]}]}}"},
    {{"quota", "set", "web", "--guarantee=cpus:1;mem:64", "--limit=cpus:4",
      "--force"},
     "UPDATE_QUOTA",
     "{\"type\":\"UPDATE_QUOTA\",\"update_quota\":{\"force\":true,"
     "\"quota_configs\":[{\"role\":\"web\",\"guarantees\":{\"cpus\":"
     "{\"value\":1.0},\"mem\":{\"value\":64.0}},\"limits\":{\"cpus\":"
     "{\"value\":4.0}}}]}}"},
    {{"quota", "remove", "web"},
     "REMOVE_QUOTA",
     "{\"type\":\"REMOVE_QUOTA\",\"remove_quota\":{\"role\":\"web\"}}"},
    {{"weights", "set", "web=2", "db=0.5"},
     "UPDATE_WEIGHTS",
     "{\"type\":\"UPDATE_WEIGHTS\",\"update_weights\":{\"weight_infos\":["
     "{\"weight\":2.0,\"role\":\"web\"},{\"weight\":0.5,\"role\":\"db\"}]}}"},
    {{"volumes", "create", "S1", "disk:100", "--role=db", "--id=pg",
      "--container_path=data", "--mode=RO"},
     "CREATE_VOLUMES",
     "{\"type\":\"CREATE_VOLUMES\",\"create_volumes\":{\"agent_id\":"
     "{\"value\":\"S1\"},\"volumes\":[{\"name\":\"disk\",\"type\":"
     "\"SCALAR\",\"scalar\":{\"value\":100.0},\"reservations\":[{\"type\":"
     "\"DYNAMIC\",\"role\":\"db\"}],\"disk\":{\"persistence\":{\"id\":"
     "\"pg\"},\"volume\":{\"container_path\":\"data\",\"mode\":\"RO\"}}}]}}"},
    {{"maintenance", "down", "node1/10.0.0.1"},
     "START_MAINTENANCE",
     "{\"type\":\"START_MAINTENANCE\",\"start_maintenance\":{\"machines\":"
     "[{\"hostname\":\"node1\",\"ip\":\"10.0.0.1\"}]}}"},
    {{"maintenance", "up", "node1/10.0.0.1", "node2/10.0.0.2"},
     "STOP_MAINTENANCE",
     "{\"type\":\"STOP_MAINTENANCE\",\"stop_maintenance\":{\"machines\":"
     "[{\"hostname\":\"node1\",\"ip\":\"10.0.0.1\"},{\"hostname\":\"node2\","
     "\"ip\":\"10.0.0.2\"}]}}"},
    {{"maintenance", "schedule", "{\"windows\":[]}"},
     "UPDATE_MAINTENANCE_SCHEDULE",
     "{\"type\":\"UPDATE_MAINTENANCE_SCHEDULE\","
     "\"update_maintenance_schedule\":{\"schedule\":{\"windows\":[]}}}"},
    {{"drain", "S1", "--max_grace_period=1.5secs", "--mark_gone"},
     "DRAIN_AGENT",
     "{\"type\":\"DRAIN_AGENT\",\"drain_agent\":{\"agent_id\":{\"value\":"
     "\"S1\"},\"max_grace_period\":{\"seconds\":1,\"nanos\":500000000},"
     "\"mark_gone\":true}}"},
    {{"deactivate", "S1"},
     "DEACTIVATE_AGENT",
     "{\"type\":\"DEACTIVATE_AGENT\",\"deactivate_agent\":{\"agent_id\":"
     "{\"value\":\"S1\"}}}"},
    {{"reactivate", "S1"},
     "REACTIVATE_AGENT",
     "{\"type\":\"REACTIVATE_AGENT\",\"reactivate_agent\":{\"agent_id\":"
     "{\"value\":\"S1\"}}}"},
    {{"teardown", "F1"},
     "TEARDOWN",
     "{\"type\":\"TEARDOWN\",\"teardown\":{\"framework_id\":{\"value\":"
     "\"F1\"}}}"},
};

START_TEST(test_change_calls)
{
    answer(call_cases[_i].type, 200, "");
    ck_assert_int_eq(run_argv(call_cases[_i].argv), 0);
    ck_assert_str_eq(err_buf, "");
    ck_assert_int_eq(count_lines(out_buf), 1); /* one line saying done */
    ck_assert_uint_eq(F.nsent, 1);
    json_t *call = sent_call(0);
    assert_json_eq(call, call_cases[_i].call);
    json_decref(call);
}
END_TEST

/* The read commands send the read call of their name, and nothing else. */
static const struct {
    const char *argv[3];
    const char *type;
} read_cases[] = {
    {{"agents"}, "GET_AGENTS"},
    {{"frameworks"}, "GET_FRAMEWORKS"},
    {{"tasks"}, "GET_TASKS"},
    {{"roles"}, "GET_ROLES"},
    {{"quota"}, "GET_QUOTA"},
    {{"weights"}, "GET_WEIGHTS"},
    {{"volumes"}, "GET_AGENTS"},
    {{"maintenance", "schedule"}, "GET_MAINTENANCE_SCHEDULE"},
    {{"maintenance", "status"}, "GET_MAINTENANCE_STATUS"},
    {{"state"}, "GET_STATE"},
    {{"health"}, "GET_HEALTH"},
    {{"version"}, "GET_VERSION"},
    {{"flags"}, "GET_FLAGS"},
    {{"metrics"}, "GET_METRICS"},
};

START_TEST(test_read_calls_json)
{
    char body[256];
    snprintf(body, sizeof(body),
             "{\"type\":\"%s\",\"get_health\":{\"healthy\":true}}",
             read_cases[_i].type);
    answer(read_cases[_i].type, 200, body);
    const char *argv[5] = {read_cases[_i].argv[0], read_cases[_i].argv[1], NULL,
                           NULL, NULL};
    argv[read_cases[_i].argv[1] ? 2 : 1] = "--json";
    ck_assert_int_eq(run_argv(argv), 0);
    ck_assert_uint_eq(F.nsent, 1);
    json_t *call = sent_call(0);
    ck_assert_str_eq(json_string_value(json_object_get(call, "type")),
                     read_cases[_i].type);
    ck_assert_uint_eq(json_object_size(call), 1);
    json_decref(call);
    /* --json prints the answer itself. */
    json_t *printed = json_loads(out_buf, 0, NULL);
    ck_assert_ptr_nonnull(printed);
    json_t *want = json_loads(body, 0, NULL);
    ck_assert(json_equal(printed, want));
    json_decref(printed);
    json_decref(want);
}
END_TEST

/* ---- Exit statuses ------------------------------------------------------ */

START_TEST(test_not_json_answer)
{
    answer("GET_TASKS", 200, "<html>");
    ck_assert_int_eq(RUN("tasks"), OCTL_EXIT_REFUSED);
    ck_assert_ptr_nonnull(strstr(err_buf, "not JSON"));
    ck_assert_int_eq(count_lines(err_buf), 1);
}
END_TEST

START_TEST(test_unhealthy)
{
    answer("GET_HEALTH", 200,
           "{\"type\":\"GET_HEALTH\",\"get_health\":{\"healthy\":false}}");
    ck_assert_int_eq(RUN("health"), OCTL_EXIT_REFUSED);
    ck_assert_str_eq(out_buf, "unhealthy\n");
}
END_TEST

/* ---- Tables ------------------------------------------------------------- */

#define RES(n, v)                                                              \
    "{\"name\":\"" n "\",\"type\":\"SCALAR\",\"scalar\":{\"value\":" #v "}}"
#define RESV(n, v, role)                                                       \
    "{\"name\":\"" n "\",\"type\":\"SCALAR\",\"scalar\":{\"value\":" #v        \
    "},\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"" role "\"}]}"

static const char AGENTS[] =
    "{\"type\":\"GET_AGENTS\",\"get_agents\":{\"agents\":["
    "{\"agent_info\":{\"hostname\":\"node1\",\"id\":{\"value\":\"S0\"}},"
    "\"active\":true,\"version\":\"0.1.0\",\"pid\":\"slave(1)@127.0.0.1:5051\","
    "\"total_resources\":[" RES("cpus", 4) "," RES("mem", 3584) "," RESV(
        "mem", 512,
        "db") "," RES("disk",
                      10240) ","
                             "{\"name\":\"disk\",\"type\":\"SCALAR\","
                             "\"scalar\":"
                             "{\"value\":2048},\"reservations\":[{\"type\":"
                             "\"DYNAMIC\",\"role\":\"db\"}],\"disk\":{"
                             "\"persistence\":{\"id\":\"pg\"},\"volume\":{"
                             "\"container_path\":\"data\",\"mode\":\"RW\"}}}],"
                             "\"allocated_resources\":[" RES(
                                 "cpus",
                                 1.5) "," RES("mem",
                                              1024) "]},"
                                                    "{\"agent_info\":{"
                                                    "\"hostname\":\"node2\","
                                                    "\"id\":{\"value\":\"S1\"}}"
                                                    ","
                                                    "\"active\":false,"
                                                    "\"deactivated\":true,"
                                                    "\"version\":\"0.1.0\","
                                                    "\"drain_info\":{\"state\":"
                                                    "\"DRAINED\"},"
                                                    "\"total_resources\":[" RES(
                                                        "cpus",
                                                        2) "]}],"
                                                           "\"recovered_"
                                                           "agents\":[{"
                                                           "\"hostname\":"
                                                           "\"node3\",\"id\":{"
                                                           "\"value\":"
                                                           "\"S2\"}}]}}";

/* Each read command's table, from a canned answer. */
static const struct {
    const char *type; /* the read Call, answered 200 with body */
    const char *body;
    const char *argv[3];
    const char *out; /* all of stdout */
} table_cases[] = {
    {"GET_AGENTS",
     AGENTS,
     {"agents"},
     "ID  HOSTNAME  STATE      CPUS   MEM      DISK      RESERVED\n"
     "S0  node1     active     1.5/4  1GB/4GB  0MB/12GB  db\n"
     "S1  node2     drained    0/2    0MB/0MB  0MB/0MB   -\n"
     "S2  node3     recovered  -      -        -         -\n"},
    {"GET_AGENTS",
     AGENTS,
     {"volumes"},
     "AGENT  ID  ROLE  SIZE  PATH  MODE\n"
     "S0     pg  db    2GB   data  RW\n"},
    {"GET_ROLES",
     "{\"get_roles\":{\"roles\":[{\"name\":\"web\",\"weight\":2.0,"
     "\"frameworks\":[{\"value\":\"F0\"}],\"resources\":[" RES("cpus",
                                                               2) "]}]}}",
     {"roles"},
     "NAME  WEIGHT  FRAMEWORKS  CPUS  MEM  DISK\n"
     "web   2       1           2     0MB  0MB\n"},
    {"GET_QUOTA",
     "{\"get_quota\":{\"status\":{\"configs\":[{\"role\":\"web\","
     "\"guarantees\":{\"cpus\":{\"value\":1.5},\"mem\":{\"value\":"
     "512}},\"limits\":{\"cpus\":{\"value\":4}}},{\"role\":\"db\","
     "\"limits\":{\"mem\":{\"value\":64}}}]}}}",
     {"quota"},
     "ROLE  GUARANTEE         LIMIT\n"
     "web   cpus:1.5;mem:512  cpus:4\n"
     "db    -                 mem:64\n"},
    {"GET_WEIGHTS",
     "{\"get_weights\":{\"weight_infos\":[{\"weight\":2.5,\"role\":"
     "\"web\"}]}}",
     {"weights"},
     "ROLE  WEIGHT\nweb   2.5\n"},
    {"GET_MAINTENANCE_SCHEDULE",
     "{\"get_maintenance_schedule\":{\"schedule\":{\"windows\":[{"
     "\"machine_ids\":[{\"hostname\":\"node1\",\"ip\":\"10.0.0.1\"}],"
     "\"unavailability\":{\"start\":{\"nanoseconds\":"
     "1796053022000000000},\"duration\":{\"nanoseconds\":"
     "7200000000000}}}]}}}",
     {"maintenance", "schedule"},
     "MACHINE         START (UTC)          DURATION\n"
     "node1/10.0.0.1  2026-11-30 15:37:02  2hrs\n"},
    {"GET_MAINTENANCE_STATUS",
     "{\"get_maintenance_status\":{\"status\":{\"draining_machines\":"
     "[{\"id\":{\"hostname\":\"node1\",\"ip\":\"10.0.0.1\"},"
     "\"statuses\":[{\"status\":\"ACCEPT\",\"framework_id\":{\"value\":"
     "\"F0\"}}]}],\"down_machines\":[{\"hostname\":\"node2\",\"ip\":"
     "\"10.0.0.2\"}]}}}",
     {"maintenance", "status"},
     "MACHINE         MODE      FRAMEWORK  ANSWER\n"
     "node1/10.0.0.1  DRAINING  F0         ACCEPT\n"
     "node2/10.0.0.2  DOWN      -          -\n"},
    {"GET_STATE",
     "{\"get_state\":{\"get_agents\":{\"agents\":[{\"active\":true},"
     "{\"active\":false}]},\"get_frameworks\":{\"frameworks\":[{"
     "\"active\":true}],\"completed_frameworks\":[{}]},\"get_tasks\":{"
     "\"tasks\":[{\"state\":\"TASK_RUNNING\"},{\"state\":"
     "\"TASK_RUNNING\"}],\"completed_tasks\":[{\"state\":"
     "\"TASK_FINISHED\"}]}}}",
     {"state"},
     "WHAT                 COUNT\n"
     "agents               2 (1 active, 0 recovered)\n"
     "frameworks           1 (1 active, 1 completed)\n"
     "tasks TASK_RUNNING   2\n"
     "tasks TASK_FINISHED  1\n"},
    {"GET_FLAGS",
     "{\"get_flags\":{\"flags\":[{\"name\":\"port\",\"value\":\"5050\"},"
     "{\"name\":\"offer_timeout\"}]}}",
     {"flags"},
     "FLAG           VALUE\n"
     "port           5050\n"
     "offer_timeout  -\n"},
    {"GET_METRICS",
     "{\"get_metrics\":{\"metrics\":[{\"name\":\"master/uptime_secs\","
     "\"value\":12.25},{\"name\":\"allocator/mesos/allocation_runs\","
     "\"value\":3}]}}",
     {"metrics", "master/"},
     "METRIC              VALUE\n"
     "master/uptime_secs  12.25\n"},
    {"GET_VERSION",
     "{\"get_version\":{\"version_info\":{\"version\":\"0.1.0\"}}}",
     {"version"},
     "offerctl " OFFERD_VERSION "\nmaster   0.1.0\n"},
};

START_TEST(test_tables)
{
    answer(table_cases[_i].type, 200, table_cases[_i].body);
    ck_assert_int_eq(run_argv(table_cases[_i].argv), 0);
    ck_assert_str_eq(out_buf, table_cases[_i].out);
}
END_TEST

START_TEST(test_volume_destroy_by_id)
{
    answer("GET_AGENTS", 200, AGENTS);
    answer("DESTROY_VOLUMES", 202, "");
    ck_assert_int_eq(RUN("volumes", "destroy", "S0", "pg"), 0);
    ck_assert_uint_eq(F.nsent, 2);
    json_t *call = sent_call(1);
    json_t *vol = json_array_get(
        json_object_get(json_object_get(call, "destroy_volumes"), "volumes"),
        0);
    ck_assert_str_eq(
        json_string_value(json_object_get(
            json_object_get(json_object_get(vol, "disk"), "persistence"),
            "id")),
        "pg");
    json_decref(call);
}
END_TEST

START_TEST(test_volume_grow_and_shrink)
{
    answer_always("GET_AGENTS", 200, AGENTS);
    answer("GROW_VOLUME", 202, "");
    ck_assert_int_eq(RUN("volumes", "grow", "S0", "pg", "512"), 0);
    ck_assert_str_eq(out_buf, "volume pg on agent S0 grown\n");
    json_t *call = sent_call(1);
    assert_json_eq(
        call, "{\"type\":\"GROW_VOLUME\",\"grow_volume\":{\"agent_id\":{"
              "\"value\":\"S0\"},\"volume\":{\"name\":\"disk\",\"type\":"
              "\"SCALAR\",\"scalar\":{\"value\":2048},\"reservations\":[{"
              "\"type\":\"DYNAMIC\",\"role\":\"db\"}],\"disk\":{"
              "\"persistence\":{\"id\":\"pg\"},\"volume\":{\"container_path\":"
              "\"data\",\"mode\":\"RW\"}}},\"addition\":{\"name\":\"disk\","
              "\"type\":\"SCALAR\",\"scalar\":{\"value\":512.0},"
              "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"db\"}]}}}");
    json_decref(call);
    answer("SHRINK_VOLUME", 202, "");
    ck_assert_int_eq(RUN("volumes", "shrink", "S0", "pg", "100.5"), 0);
    call = sent_call(3);
    json_t *sub =
        json_object_get(json_object_get(call, "shrink_volume"), "subtract");
    assert_json_eq(sub, "{\"value\":100.5}");
    json_decref(call);
    /* A volume the agent does not hold: nothing is sent after the read. */
    ck_assert_int_eq(RUN("volumes", "shrink", "S0", "nope", "1"),
                     OCTL_EXIT_REFUSED);
    ck_assert_uint_eq(F.nsent, 5);
}
END_TEST

START_TEST(test_frameworks_table)
{
    answer_always(
        "GET_FRAMEWORKS", 200,
        "{\"type\":\"GET_FRAMEWORKS\",\"get_frameworks\":{\"frameworks\":["
        "{\"framework_info\":{\"user\":\"u\",\"name\":\"web\",\"id\":"
        "{\"value\":\"F0\"},\"roles\":[\"web\",\"batch\"]},\"active\":true,"
        "\"connected\":true,\"recovered\":false,\"allocated_resources\":[" RES(
            "cpus",
            2) "," RES("mem",
                       1536) "]}],"
                             "\"completed_frameworks\":[{\"framework_info\":{"
                             "\"user\":\"u\","
                             "\"name\":\"old\",\"id\":{\"value\":\"F9\"}},"
                             "\"active\":false,"
                             "\"connected\":false,\"recovered\":false}]}}");
    ck_assert_int_eq(RUN("frameworks"), 0);
    ck_assert_str_eq(out_buf,
                     "ID  NAME  ROLES      STATE   CPUS  MEM    DISK\n"
                     "F0  web   web,batch  active  2     1.5GB  0MB\n");
    ck_assert_int_eq(RUN("frameworks", "--all"), 0);
    ck_assert_ptr_nonnull(strstr(out_buf, "F9  old   *          completed"));
}
END_TEST

START_TEST(test_tasks_table)
{
    answer_always(
        "GET_TASKS", 200,
        "{\"type\":\"GET_TASKS\",\"get_tasks\":{\"tasks\":[{\"name\":\"t\","
        "\"task_id\":{\"value\":\"t1\"},\"framework_id\":{\"value\":\"F0\"},"
        "\"agent_id\":{\"value\":\"S0\"},\"state\":\"TASK_RUNNING\","
        "\"resources\":[" RES("cpus", 0.1) "," RES(
            "mem", 32) "]}],"
                       "\"completed_tasks\":[{\"name\":\"d\",\"task_id\":{"
                       "\"value\":\"t0\"},"
                       "\"framework_id\":{\"value\":\"F0\"},\"agent_id\":{"
                       "\"value\":\"S0\"},"
                       "\"state\":\"TASK_FINISHED\"}]}}");
    ck_assert_int_eq(RUN("tasks"), 0);
    ck_assert_str_eq(
        out_buf, "ID  NAME  FRAMEWORK  AGENT  STATE         CPUS  MEM   DISK\n"
                 "t1  t     F0         S0     TASK_RUNNING  0.1   32MB  0MB\n");
    ck_assert_int_eq(RUN("tasks", "--all"), 0);
    ck_assert_ptr_nonnull(strstr(out_buf, "TASK_FINISHED"));
}
END_TEST

/* A machine given by hostname alone is completed from the schedule. */
START_TEST(test_maintenance_down_completes_machine)
{
    answer("GET_MAINTENANCE_SCHEDULE", 200,
           "{\"get_maintenance_schedule\":{\"schedule\":{\"windows\":[{"
           "\"machine_ids\":[{\"hostname\":\"node1\",\"ip\":\"10.0.0.1\"}],"
           "\"unavailability\":{\"start\":{\"nanoseconds\":1}}}]}}}");
    answer("START_MAINTENANCE", 200, "");
    ck_assert_int_eq(RUN("maintenance", "down", "NODE1"), 0);
    json_t *call = sent_call(1);
    assert_json_eq(call, "{\"type\":\"START_MAINTENANCE\","
                         "\"start_maintenance\":{\"machines\":[{"
                         "\"hostname\":\"node1\",\"ip\":\"10.0.0.1\"}]}}");
    json_decref(call);
}
END_TEST

/* ---- logs --------------------------------------------------------------- */

static const char LOGS_STATE[] =
    "{\"get_state\":{\"get_tasks\":{\"tasks\":[{\"name\":\"t\",\"task_id\":"
    "{\"value\":\"t1\"},\"framework_id\":{\"value\":\"F0\"},\"agent_id\":"
    "{\"value\":\"S0\"},\"state\":\"TASK_RUNNING\"}]},\"get_agents\":{"
    "\"agents\":[{\"agent_info\":{\"hostname\":\"node1\",\"id\":{\"value\":"
    "\"S0\"}},\"pid\":\"slave(1)@10.0.0.7:5051\"}]}}}";

static const char AGENT_STATE[] =
    "{\"frameworks\":[{\"id\":\"F0\",\"executors\":[{\"id\":\"t1\","
    "\"directory\":\"/var/lib/offerd/sandboxes/F0/t 1/r\"}]}]}";

START_TEST(test_logs_reads_until_end)
{
    answer("GET_STATE", 200, LOGS_STATE);
    answer("/state", 200, AGENT_STATE);
    answer("/files/read", 200, "{\"data\":\"hello \",\"offset\":0}");
    answer("/files/read", 200, "{\"data\":\"world\\n\",\"offset\":6}");
    answer("/files/read", 200, "{\"data\":\"\",\"offset\":12}");
    ck_assert_int_eq(RUN("logs", "t1"), 0);
    ck_assert_str_eq(out_buf, "hello world\n");
    ck_assert_str_eq(err_buf, "");
    ck_assert_uint_eq(F.nsent, 5);
    ck_assert_str_eq(F.sent[1], "GET 10.0.0.7:5051/state");
    ck_assert_str_eq(F.sent[2],
                     "GET 10.0.0.7:5051/files/read?path=/var/lib/offerd/"
                     "sandboxes/F0/t%201/r/stdout&offset=0&length=65536");
    ck_assert_ptr_nonnull(strstr(F.sent[3], "&offset=6&"));
    ck_assert_ptr_nonnull(strstr(F.sent[4], "&offset=12&"));
}
END_TEST

START_TEST(test_logs_follow_polls_until_stopped)
{
    answer("GET_STATE", 200, LOGS_STATE);
    answer("/state", 200, AGENT_STATE);
    answer("/files/read", 200, "{\"data\":\"a\\n\",\"offset\":0}");
    answer("/files/read", 200, "{\"data\":\"\",\"offset\":2}");
    answer("/files/read", 200, "{\"data\":\"\",\"offset\":2}");
    answer("/files/read", 200, "{\"data\":\"b\\n\",\"offset\":2}");
    answer_always("/files/read", 200, "{\"data\":\"\",\"offset\":4}");
    F.stop_after = 3;
    ck_assert_int_eq(
        RUN("logs", "t1", "--follow", "--file=stderr", "--interval=10ms"), 0);
    ck_assert_str_eq(out_buf, "a\nb\n");
    ck_assert_int_eq(F.sleeps, 3);
    ck_assert_ptr_nonnull(strstr(F.sent[2], "/r/stderr&offset=0&"));
}
END_TEST

/* Refusals: the exit status and the one line on stderr, nothing on
 * stdout, and no request after the one refused. */
static const struct {
    struct {
        const char *match; /* as in struct canned */
        int status;
        const char *body;
    } answers[2];
    const char *argv[5];
    int exit;
    const char *err; /* all of stderr */
    size_t nsent;    /* requests sent */
} refusal_cases[] = {
    /* The master's reason, its first line. */
    {{{"RESERVE_RESOURCES", 409,
       "Invalid RESERVE operation: the agent does not have cpus:8 "
       "available\nsecond line\n"}},
     {"reserve", "S1", "cpus:8", "--role=db"},
     OCTL_EXIT_REFUSED,
     "offerctl: Invalid RESERVE operation: the agent does not have cpus:8 "
     "available\n",
     1},
    {{{"GET_AGENTS", 503, ""}},
     {"agents"},
     OCTL_EXIT_REFUSED,
     "offerctl: the master answered 503\n",
     1},
    /* The client's reason names the address; it is printed once. */
    {{{"GET_AGENTS", 0, "127.0.0.1:9: connection refused"}},
     {"agents", "--master=127.0.0.1:9"},
     OCTL_EXIT_UNREACHABLE,
     "offerctl: cannot reach the master at 127.0.0.1:9: connection refused\n",
     1},
    /* An id the agent does not hold: refused before any change. */
    {{{"GET_AGENTS", 200, AGENTS}},
     {"volumes", "destroy", "S0", "nope"},
     OCTL_EXIT_REFUSED,
     "offerctl: agent S0 has no volume 'nope'\n",
     1},
    {{{"GET_STATE", 200, LOGS_STATE}},
     {"logs", "nope"},
     OCTL_EXIT_REFUSED,
     "offerctl: no task 'nope' in the master's state\n",
     1},
    {{{"GET_STATE", 200, LOGS_STATE}, {"/state", 0, "connection refused"}},
     {"logs", "t1"},
     OCTL_EXIT_UNREACHABLE,
     "offerctl: cannot reach the agent at 10.0.0.7:5051: connection refused\n",
     2},
    {{{"GET_STATE", 200, LOGS_STATE}, {"/state", 200, "{\"frameworks\":[]}"}},
     {"logs", "t1"},
     OCTL_EXIT_REFUSED,
     "offerctl: agent S0 holds no sandbox of task 't1'\n",
     2},
};

START_TEST(test_refusals)
{
    for (size_t k = 0; k < 2 && refusal_cases[_i].answers[k].match; k++)
        answer(refusal_cases[_i].answers[k].match,
               refusal_cases[_i].answers[k].status,
               refusal_cases[_i].answers[k].body);
    ck_assert_int_eq(run_argv(refusal_cases[_i].argv), refusal_cases[_i].exit);
    ck_assert_str_eq(err_buf, refusal_cases[_i].err);
    ck_assert_str_eq(out_buf, "");
    ck_assert_uint_eq(F.nsent, refusal_cases[_i].nsent);
}
END_TEST

/* ---- Building blocks ---------------------------------------------------- */

START_TEST(test_table_alignment)
{
    static const char *const cols[] = {"A", "LONGER", "Z"};
    struct octl_table *t = octl_table_new(3, cols);
    octl_table_set(t, 0, "wide cell");
    octl_table_set(t, 2, "end");
    octl_table_end_row(t);
    octl_table_setf(t, 1, "%d", 42);
    octl_table_end_row(t);
    ck_assert_uint_eq(octl_table_rows(t), 2);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    octl_table_print(t, f);
    fclose(f);
    ck_assert_str_eq(buf, "A          LONGER  Z\n"
                          "wide cell  -       end\n"
                          "-          42      -\n");
    free(buf);
    octl_table_free(t);
}
END_TEST

static const struct {
    double mb;
    const char *text;
} mb_cases[] = {
    {0, "0MB"},      {512, "512MB"},   {1023.5, "1023.5MB"}, {1024, "1GB"},
    {1536, "1.5GB"}, {10000, "9.8GB"}, {1048576, "1TB"},     {0.25, "0.3MB"},
};

START_TEST(test_fmt_mb)
{
    char b[64];
    ck_assert_str_eq(octl_fmt_mb(mb_cases[_i].mb, b, sizeof(b)),
                     mb_cases[_i].text);
}
END_TEST

START_TEST(test_fmt_num_duration)
{
    char b[64];
    ck_assert_str_eq(octl_fmt_num(2.0, b, 64), "2");
    ck_assert_str_eq(octl_fmt_num(0.125, b, 64), "0.125");
    ck_assert_str_eq(octl_fmt_num(1.5, b, 64), "1.5");
    ck_assert_str_eq(octl_fmt_duration(7200000000000LL, b, 64), "2hrs");
    ck_assert_str_eq(octl_fmt_duration(90000000000LL, b, 64), "90secs");
    ck_assert_str_eq(octl_fmt_duration(1500, b, 64), "1500ns");
}
END_TEST

START_TEST(test_machine_ids)
{
    char err[256];
    json_t *m = octl_machine_id("node1/10.0.0.1", err, sizeof(err));
    assert_json_eq(m, "{\"hostname\":\"node1\",\"ip\":\"10.0.0.1\"}");
    json_decref(m);
    m = octl_machine_id("10.0.0.1", err, sizeof(err));
    assert_json_eq(m, "{\"ip\":\"10.0.0.1\"}");
    json_decref(m);
    m = octl_machine_id("node1", err, sizeof(err));
    assert_json_eq(m, "{\"hostname\":\"node1\"}");
    json_decref(m);
    ck_assert_ptr_null(octl_machine_id("/10.0.0.1", err, sizeof(err)));
    ck_assert_ptr_null(octl_machine_id("node1/", err, sizeof(err)));
}
END_TEST

START_TEST(test_quantities_sum_and_json)
{
    char err[256];
    json_t *q = octl_quantities("cpus:1;cpus(db):0.5;mem:64", err, sizeof(err));
    ck_assert_ptr_nonnull(q);
    assert_json_eq(q, "{\"cpus\":{\"value\":1.5},\"mem\":{\"value\":64.0}}");
    json_decref(q);
    q = octl_quantities(
        "[{\"name\":\"gpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":2}}]",
        err, sizeof(err));
    assert_json_eq(q, "{\"gpus\":{\"value\":2.0}}");
    json_decref(q);
    ck_assert_ptr_null(octl_quantities("", err, sizeof(err)));
}
END_TEST

START_TEST(test_resources_text)
{
    json_t *arr = json_loads(
        "[" RES("cpus", 1) "," RES("cpus", 0.5) "," RES(
            "mem",
            512) ",{\"name\":\"ports\",\"type\":\"RANGES\",\"ranges\":{"
                 "\"range\":[{\"begin\":1,\"end\":5},{\"begin\":9,\"end\":"
                 "9}]}}]",
        0, NULL);
    ck_assert_ptr_nonnull(arr);
    char *s = octl_resources_text(arr);
    ck_assert_str_eq(s, "cpus:1.5;mem:512;ports:[1-5,9-9]");
    free(s);
    json_decref(arr);
}
END_TEST

/* ---- The man page, the completion and the page know every command ----- */

/* A file of the source tree (found from this file's path), whole; the
 * caller frees it. */
static char *source_file(const char *rel)
{
    char path[4096];
    const char *tests = strstr(__FILE__, "tests/unit/test_offerctl.c");
    ck_assert_ptr_nonnull(tests);
    snprintf(path, sizeof(path), "%.*s%s", (int)(tests - __FILE__), __FILE__,
             rel);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        fwrite(chunk, 1, n, m);
    fclose(f);
    fclose(m);
    return buf;
}

/* True when word occurs in text between blanks or double quotes. */
static bool has_word(const char *text, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = strstr(text, word); p != NULL; p = strstr(p + 1, word))
        if (p > text && strchr(" \n\"", p[-1]) && p[n] != '\0' &&
            strchr(" \n\"", p[n]))
            return true;
    return false;
}

START_TEST(test_docs_cover_every_command)
{
    char *usage = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&usage, &len);
    octl_usage(f);
    fclose(f);
    char *man = source_file("docs/man/offerctl.1");
    char *comp = source_file("contrib/bash-completion/offerctl");
    char *page = source_file("docs/offerctl.md");
    const char *p = strstr(usage, "Commands:\n");
    ck_assert_ptr_nonnull(p);
    p += strlen("Commands:\n");
    int n = 0;
    while (strncmp(p, "  ", 2) == 0) {
        char name[32], want[64];
        ck_assert_int_eq(sscanf(p, " %31s", name), 1);
        snprintf(want, sizeof(want), ".B %s", name);
        ck_assert_msg(strstr(man, want) != NULL ||
                          (snprintf(want, sizeof(want), ".BR %s", name),
                           strstr(man, want) != NULL) ||
                          (snprintf(want, sizeof(want), ".BI \"%s ", name),
                           strstr(man, want) != NULL),
                      "the man page lacks %s", name);
        ck_assert_msg(has_word(comp, name), "the completion lacks %s", name);
        snprintf(want, sizeof(want), "| `%s", name);
        ck_assert_msg(strstr(page, want) != NULL, "docs/offerctl.md lacks %s",
                      name);
        n++;
        p = strchr(p, '\n') + 1;
    }
    ck_assert_int_eq(n, 20);
    free(usage);
    free(man);
    free(comp);
    free(page);
}
END_TEST

/* ---- --master (cli/master_addr.h, shared with offerd-execute) ---------- */

static const struct {
    const char *text;
    const char *ip; /* NULL: refused */
    unsigned port;
} addr_cases[] = {
    {"127.0.0.1:5050", "127.0.0.1", 5050},
    {"http://127.0.0.1:5050/", "127.0.0.1", 5050},
    {"[::1]:5051", "::1", 5051},
    {"localhost:6000", NULL, 6000}, /* resolved: 127.0.0.1 or ::1 */
    {"127.0.0.1", NULL, 0},
    {":5050", NULL, 0},
    {"127.0.0.1:0", NULL, 0},
    {"127.0.0.1:70000", NULL, 0},
    {"127.0.0.1:50x", NULL, 0},
};

START_TEST(test_master_addr)
{
    char ip[64] = "", err[256] = "";
    uint16_t port = 0;
    int rc = cli_master_addr_parse(addr_cases[_i].text, ip, sizeof(ip), &port,
                                   err, sizeof(err));
    if (addr_cases[_i].port == 0) {
        ck_assert_int_eq(rc, -1);
        ck_assert_msg(strncmp(err, "--master: ", 10) == 0, "reason: %s", err);
        ck_assert_uint_eq(port, 0);
        return;
    }
    ck_assert_msg(rc == 0, "%s: %s", addr_cases[_i].text, err);
    ck_assert_uint_eq(port, addr_cases[_i].port);
    if (addr_cases[_i].ip != NULL)
        ck_assert_str_eq(ip, addr_cases[_i].ip);
    else
        ck_assert(strcmp(ip, "127.0.0.1") == 0 || strcmp(ip, "::1") == 0);
}
END_TEST

static void setup(void)
{
    reset_fake();
}

static void teardown(void)
{
    setup();
    free(out_buf);
    free(err_buf);
    out_buf = err_buf = NULL;
}

/* Add a loop test over every entry of the array cases. */
#define ADD_CASES(tc, fn, cases)                                               \
    tcase_add_loop_test((tc), (fn), 0, sizeof(cases) / sizeof((cases)[0]))

/* A test case of s with the fake's fixture. */
static TCase *new_tcase(Suite *s, const char *name)
{
    TCase *tc = tcase_create(name);
    tcase_add_checked_fixture(tc, setup, teardown);
    suite_add_tcase(s, tc);
    return tc;
}

static Suite *offerctl_suite(void)
{
    Suite *s = suite_create("offerctl");
    TCase *tc = new_tcase(s, "parse");
    tcase_add_test(tc, test_parse_globals_anywhere);
    tcase_add_test(tc, test_parse_master_env_and_default);
    ADD_CASES(tc, test_parse_usage_errors, usage_cases);
    tcase_add_test(tc, test_help_per_command);
    ADD_CASES(tc, test_bad_arguments, arg_cases);

    tc = new_tcase(s, "calls");
    ADD_CASES(tc, test_change_calls, call_cases);
    ADD_CASES(tc, test_read_calls_json, read_cases);
    ADD_CASES(tc, test_refusals, refusal_cases);
    tcase_add_test(tc, test_not_json_answer);
    tcase_add_test(tc, test_unhealthy);

    tc = new_tcase(s, "tables");
    ADD_CASES(tc, test_tables, table_cases);
    tcase_add_test(tc, test_volume_destroy_by_id);
    tcase_add_test(tc, test_volume_grow_and_shrink);
    tcase_add_test(tc, test_frameworks_table);
    tcase_add_test(tc, test_tasks_table);
    tcase_add_test(tc, test_maintenance_down_completes_machine);

    tc = new_tcase(s, "logs");
    tcase_add_test(tc, test_logs_reads_until_end);
    tcase_add_test(tc, test_logs_follow_polls_until_stopped);

    tc = new_tcase(s, "blocks");
    tcase_add_test(tc, test_table_alignment);
    ADD_CASES(tc, test_fmt_mb, mb_cases);
    tcase_add_test(tc, test_fmt_num_duration);
    tcase_add_test(tc, test_machine_ids);
    tcase_add_test(tc, test_quantities_sum_and_json);
    tcase_add_test(tc, test_resources_text);
    tcase_add_test(tc, test_docs_cover_every_command);
    ADD_CASES(tc, test_master_addr, addr_cases);
    return s;
}

OFFERD_CHECK_MAIN(offerctl_suite)
