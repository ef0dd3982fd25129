/*
 * view_roles (and get_quotas) filtering of what readers see
 * (master/role_view.c): roles, weights and quota by role; agents'
 * resources in /state, /slaves, /state-summary, GET_AGENTS and GET_STATE
 * by the roles they name; GET_OPERATIONS; the operator event stream.
 *
 * The cluster of every case: an agent with cpus:4;mem:1024 unreserved and
 * one cpu statically reserved to each of "web" and "db"; a framework of
 * role "db" holding the agent's offer (every offered resource is
 * allocated to db); weights and quota limits for web and db. Three
 * readers: ops may view every role, web only "web", eve none.
 */
#include "master_fixture.h"

#include "check_main.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/acl.h"
#include "common/json_pb.h"
#include "master/agents.h"
#include "master/master.h"
#include "master/operator_events.h"
#include "master/role_view.h"

MFX_STANDARD_FIXTURE

static char creds_path[64];
static char OFFER[256];

/* Only ops sees every role, web sees "web", anyone else none. */
#define ROLE_RULES(action)                                                     \
    "\"" action "\": [{\"principals\": {\"values\": [\"ops\"]}, \"roles\": "   \
    "{\"type\": \"ANY\"}}, {\"principals\": {\"values\": [\"web\"]}, "         \
    "\"roles\": {\"values\": [\"web\"]}}, {\"principals\": {\"type\": "        \
    "\"ANY\"}, \"roles\": {\"type\": \"NONE\"}}]"

static const char ACLS[] =
    "--acls={" ROLE_RULES("view_roles") "," ROLE_RULES("get_quotas") "}";

#define FW_INFO                                                                \
    "{\"user\":\"nobody\",\"name\":\"dbfw\",\"roles\":[\"db\"],"               \
    "\"principal\":\"dbfw\",\"capabilities\":[{\"type\":\"MULTI_ROLE\"}]}"

/* A scalar resource of value, unreserved (SCALAR) or statically reserved
 * to role (STATIC). */
#define SCALAR(name, value)                                                    \
    "{\"name\":\"" name "\",\"type\":\"SCALAR\",\"scalar\":{\"value\":" value  \
    "}}"
#define STATIC(name, value, role)                                              \
    "{\"name\":\"" name "\",\"type\":\"SCALAR\",\"scalar\":{\"value\":" value  \
    "},\"reservations\":[{\"type\":\"STATIC\",\"role\":\"" role "\"}]}"
/* clang-format off */
#define AGENT_RESOURCES                                                        \
    SCALAR("cpus", "4") "," SCALAR("mem", "1024") ","                          \
    STATIC("cpus", "1", "web") "," STATIC("cpus", "1", "db")
/* clang-format on */

/* SUBSCRIBE an agent with AGENT_RESOURCES; asserts REGISTERED. */
static void agent_subscribe(struct mfx_peer *ag, const char *host)
{
    char json[2048];
    snprintf(json, sizeof(json),
             "{\"type\":\"SUBSCRIBE\",\"subscribe\":{\"agent_info\":{"
             "\"hostname\":\"%s\",\"port\":5051,\"resources\":[" AGENT_RESOURCES
             "]},\"version\":\"test\",\"address\":{\"ip\":"
             "\"127.0.0.2\",\"port\":5051}}}",
             host);
    memset(ag, 0, sizeof(*ag));
    ag->stream = mfx_post(&X, master_agent_api, NULL, json);
    ck_assert_msg(http_fake_is_stream(ag->stream), "agent SUBSCRIBE: %d %s",
                  http_fake_status(ag->stream), mfx_body(ag->stream));
    const char *sid = http_fake_reply_header(ag->stream, "Mesos-Stream-Id");
    ck_assert_ptr_nonnull(sid);
    snprintf(ag->stream_id, sizeof(ag->stream_id), "%s", sid);
    json_t *ev = mfx_next_event(&X, ag, "REGISTERED");
    ck_assert_ptr_nonnull(ev);
    const char *id = json_string_value(json_object_get(
        json_object_get(json_object_get(ev, "registered"), "agent_id"),
        "value"));
    ck_assert_ptr_nonnull(id);
    snprintf(ag->id, sizeof(ag->id), "%s", id);
    json_decref(ev);
}

/* An operator call as ops that must answer status. */
static void ops_call(const char *json, int status)
{
    mfx_set_principal(&X, "ops", "so");
    struct http_fake *f = mfx_operator(&X, json);
    ck_assert_msg(http_fake_status(f) == status, "%s: %d %s", json,
                  http_fake_status(f), mfx_body(f));
    http_fake_free(f);
}

static void vr_setup(void)
{
    snprintf(creds_path, sizeof(creds_path), "/tmp/offerd-creds-XXXXXX");
    int fd = mkstemp(creds_path);
    ck_assert_int_ge(fd, 0);
    const char text[] = "ops so\nweb sw\neve se\n";
    ck_assert_int_eq(write(fd, text, sizeof(text) - 1),
                     (ssize_t)(sizeof(text) - 1));
    close(fd);
    char creds_flag[96];
    snprintf(creds_flag, sizeof(creds_flag), "--credentials=%s", creds_path);
    const char *flags[] = {creds_flag, ACLS, NULL};
    mfx_start(&X, flags);
    ops_call("{\"type\":\"UPDATE_WEIGHTS\",\"update_weights\":{"
             "\"weight_infos\":[{\"role\":\"web\",\"weight\":2},"
             "{\"role\":\"db\",\"weight\":3}]}}",
             200);
    ops_call("{\"type\":\"UPDATE_QUOTA\",\"update_quota\":{\"quota_configs\":"
             "[{\"role\":\"web\",\"limits\":{\"cpus\":{\"value\":100}}},"
             "{\"role\":\"db\",\"limits\":{\"cpus\":{\"value\":100}}}]}}",
             200);
    /* The agent and the framework are anonymous. */
    mfx_set_principal(&X, NULL, NULL);
    agent_subscribe(&AG, "host1");
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    json_decref(mfx_first_offer(&X, &FW, OFFER));
}

static void vr_teardown(void)
{
    teardown();
    unlink(creds_path);
}

/* ---- Readers -------------------------------------------------------------
 */

/* What each reader may see of the cluster. */
struct reader {
    const char *principal, *secret;
    const char *reserved; /* the agent's reserved roles, sorted, ',' */
    size_t total;         /* resources of the agent shown in full (of 4) */
    size_t offered;       /* offered resources shown in full (of 3) */
    const char *roles;    /* roles of /roles, weights and quota (sorted) */
};

static const struct reader READERS[] = {
    {"ops", "so", "db,web", 4, 3, "db,web"},
    {"web", "sw", "web", 3, 0, "web"},
    {"eve", "se", "", 2, 0, ""},
};
#define NREADERS (sizeof(READERS) / sizeof(READERS[0]))

static void as(const struct reader *r)
{
    mfx_set_principal(&X, r->principal, r->secret);
}

/* GET target as the current principal: 200 asserted, the body parsed. */
static json_t *get_json(const char *target)
{
    struct http_fake *f = mfx_http(&X, HTTP_GET, target, NULL, NULL);
    ck_assert_msg(http_fake_status(f) == 200, "%s: %d %s", target,
                  http_fake_status(f), mfx_body(f));
    json_error_t je;
    json_t *j = json_loads(mfx_body(f), 0, &je);
    ck_assert_msg(j != NULL, "%s: %s", target, je.text);
    http_fake_free(f);
    return j;
}

/* An operator read call (type) as the current principal: its response
 * part (get_agents ...; new reference, the whole response kept alive by
 * it). */
static json_t *op_read(const char *type, const char *part)
{
    char call[128];
    snprintf(call, sizeof(call), "{\"type\":\"%s\"}", type);
    struct http_fake *f = mfx_operator(&X, call);
    ck_assert_msg(http_fake_status(f) == 200, "%s: %d %s", type,
                  http_fake_status(f), mfx_body(f));
    json_t *j = json_loads(mfx_body(f), 0, NULL);
    ck_assert_ptr_nonnull(j);
    http_fake_free(f);
    json_t *p = json_incref(json_object_get(j, part));
    json_decref(j);
    ck_assert_msg(p != NULL, "%s: no %s", type, part);
    return p;
}

/* The keys of object o, sorted and joined by ',' into out. */
static void keys_of(const json_t *o, char *out, size_t len)
{
    const char *k[8];
    size_t n = 0;
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)o, key, val)
    {
        (void)val;
        if (n < 8)
            k[n++] = key;
    }
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(k[j - 1], k[j]) > 0; j--) {
            const char *t = k[j];
            k[j] = k[j - 1];
            k[j - 1] = t;
        }
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        size_t used = strlen(out);
        snprintf(out + used, len - used, "%s%s", i ? "," : "", k[i]);
    }
}

/* The "role" fields of the objects of arr, sorted and joined by ','. */
static void roles_of(const json_t *arr, const char *field, char *out,
                     size_t len)
{
    json_t *o = json_object();
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e)
    {
        const char *role = json_string_value(json_object_get(e, field));
        ck_assert_ptr_nonnull(role);
        json_object_set_new(o, role, json_true());
    }
    keys_of(o, out, len);
    json_decref(o);
}

/* An agent of /state, /slaves or /state-summary as r may see it. */
static void assert_agent_json(const json_t *a, const struct reader *r,
                              const char *where)
{
    char keys[128];
    keys_of(json_object_get(a, "reserved_resources"), keys, sizeof(keys));
    ck_assert_msg(strcmp(keys, r->reserved) == 0,
                  "%s as %s: reserved_resources %s", where, r->principal, keys);
    /* The summaries name no role: whole for everyone. */
    ck_assert(json_real_value(json_object_get(json_object_get(a, "resources"),
                                              "cpus")) == 6.0);
    ck_assert(json_real_value(json_object_get(
                  json_object_get(a, "offered_resources"), "cpus")) == 5.0);
    if (strcmp(where, "/state-summary") == 0) {
        /* As Mesos's: no *_full lists to filter. */
        ck_assert_ptr_null(json_object_get(a, "reserved_resources_full"));
        ck_assert_ptr_null(json_object_get(a, "resources_full"));
        return;
    }
    json_t *full = json_object_get(a, "reserved_resources_full");
    keys_of(full, keys, sizeof(keys));
    ck_assert_msg(strcmp(keys, r->reserved) == 0,
                  "%s as %s: reserved_resources_full %s", where, r->principal,
                  keys);
    const char *key;
    json_t *val;
    json_object_foreach(full, key, val)
        ck_assert_uint_eq(json_array_size(val), 1);
    ck_assert_msg(json_array_size(json_object_get(a, "resources_full")) ==
                      r->total,
                  "%s as %s: resources_full", where, r->principal);
    ck_assert_msg(
        json_array_size(json_object_get(a, "offered_resources_full")) ==
            r->offered,
        "%s as %s: offered_resources_full %zu", where, r->principal,
        json_array_size(json_object_get(a, "offered_resources_full")));
    /* Unreserved, unallocated resources name no role. */
    ck_assert_uint_eq(
        json_array_size(json_object_get(a, "unreserved_resources_full")), 2);
    ck_assert_uint_eq(
        json_array_size(json_object_get(a, "used_resources_full")), 0);
}

/* The agent's reserved roles and resources in /state, /slaves and
 * /state-summary. */
START_TEST(test_agent_json_filtered)
{
    static const char *const targets[] = {"/state", "/master/slaves",
                                          "/state-summary"};
    for (size_t i = 0; i < NREADERS; i++) {
        as(&READERS[i]);
        for (size_t t = 0; t < 3; t++) {
            json_t *j = get_json(targets[t]);
            json_t *agents = json_object_get(j, "slaves");
            ck_assert_uint_eq(json_array_size(agents), 1);
            assert_agent_json(json_array_get(agents, 0), &READERS[i],
                              targets[t]);
            json_decref(j);
        }
    }
}
END_TEST

/* An agent of GET_AGENTS as r may see it. */
static void assert_agent_pb(const json_t *a, const struct reader *r,
                            const char *where)
{
    size_t info = json_array_size(
        json_object_get(json_object_get(a, "agent_info"), "resources"));
    size_t total = json_array_size(json_object_get(a, "total_resources"));
    size_t offered = json_array_size(json_object_get(a, "offered_resources"));
    ck_assert_msg(info == r->total && total == r->total &&
                      offered == r->offered,
                  "%s as %s: agent_info %zu, total %zu, offered %zu", where,
                  r->principal, info, total, offered);
}

/* GET_AGENTS and GET_STATE, and a subscriber's SUBSCRIBED state. */
START_TEST(test_agent_pb_filtered)
{
    for (size_t i = 0; i < NREADERS; i++) {
        as(&READERS[i]);
        json_t *ga = op_read("GET_AGENTS", "get_agents");
        ck_assert_uint_eq(json_array_size(json_object_get(ga, "agents")), 1);
        assert_agent_pb(json_array_get(json_object_get(ga, "agents"), 0),
                        &READERS[i], "GET_AGENTS");
        json_decref(ga);
        json_t *gs = op_read("GET_STATE", "get_state");
        json_t *agents =
            json_object_get(json_object_get(gs, "get_agents"), "agents");
        assert_agent_pb(json_array_get(agents, 0), &READERS[i], "GET_STATE");
        json_decref(gs);
    }
}
END_TEST

/* /roles, GET_ROLES, /weights, GET_WEIGHTS, /quota and GET_QUOTA list
 * only the roles the reader may view (quota: get_quotas). */
START_TEST(test_roles_weights_quota_filtered)
{
    char got[128];
    for (size_t i = 0; i < NREADERS; i++) {
        const struct reader *r = &READERS[i];
        as(r);
        json_t *j = get_json("/roles");
        roles_of(json_object_get(j, "roles"), "name", got, sizeof(got));
        ck_assert_msg(strcmp(got, r->roles) == 0, "/roles as %s: %s",
                      r->principal, got);
        json_decref(j);
        j = op_read("GET_ROLES", "get_roles");
        roles_of(json_object_get(j, "roles"), "name", got, sizeof(got));
        ck_assert_msg(strcmp(got, r->roles) == 0, "GET_ROLES as %s: %s",
                      r->principal, got);
        json_decref(j);

        j = get_json("/weights");
        roles_of(j, "role", got, sizeof(got));
        ck_assert_msg(strcmp(got, r->roles) == 0, "/weights as %s: %s",
                      r->principal, got);
        json_decref(j);
        j = op_read("GET_WEIGHTS", "get_weights");
        roles_of(json_object_get(j, "weight_infos"), "role", got, sizeof(got));
        ck_assert_msg(strcmp(got, r->roles) == 0, "GET_WEIGHTS as %s: %s",
                      r->principal, got);
        json_decref(j);

        j = get_json("/quota");
        roles_of(json_object_get(j, "configs"), "role", got, sizeof(got));
        ck_assert_msg(strcmp(got, r->roles) == 0, "/quota as %s: %s",
                      r->principal, got);
        roles_of(json_object_get(j, "infos"), "role", got, sizeof(got));
        ck_assert_str_eq(got, r->roles);
        json_decref(j);
        j = op_read("GET_QUOTA", "get_quota");
        roles_of(json_object_get(json_object_get(j, "status"), "configs"),
                 "role", got, sizeof(got));
        ck_assert_msg(strcmp(got, r->roles) == 0, "GET_QUOTA as %s: %s",
                      r->principal, got);
        json_decref(j);
    }
}
END_TEST

/* GET_OPERATIONS shows an operation to those who may view the roles of
 * what it consumes: a RESERVE to db of cpus allocated to db. */
START_TEST(test_operations_filtered)
{
    mfx_set_principal(&X, NULL, NULL);
    char payload[2048];
    snprintf(payload, sizeof(payload),
             "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{\"type\":"
             "\"RESERVE\",\"id\":{\"value\":\"op1\"},\"reserve\":{"
             "\"resources\":[{\"name\":\"cpus\",\"type\":\"SCALAR\","
             "\"scalar\":{\"value\":1},\"reservations\":[{\"type\":"
             "\"DYNAMIC\",\"role\":\"db\",\"principal\":\"dbfw\"}],"
             "\"allocation_info\":{\"role\":\"db\"}}]}}]}",
             OFFER);
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "ACCEPT", "accept", payload),
                     202);
    json_decref(mfx_next_event(&X, &FW, "UPDATE_OPERATION_STATUS"));
    static const size_t want[] = {1, 0, 0};
    for (size_t i = 0; i < NREADERS; i++) {
        as(&READERS[i]);
        json_t *go = op_read("GET_OPERATIONS", "get_operations");
        ck_assert_msg(json_array_size(json_object_get(go, "operations")) ==
                          want[i],
                      "GET_OPERATIONS as %s", READERS[i].principal);
        json_decref(go);
    }
}
END_TEST

/* An operator subscriber as r (on p): SUBSCRIBED's state is what
 * GET_STATE shows r. */
static void op_subscribe(struct mfx_peer *p, const struct reader *r)
{
    as(r);
    memset(p, 0, sizeof(*p));
    p->stream = mfx_operator(&X, "{\"type\":\"SUBSCRIBE\"}");
    ck_assert(http_fake_is_stream(p->stream));
    json_t *ev = mfx_next_event(&X, p, "SUBSCRIBED");
    ck_assert_ptr_nonnull(ev);
    json_t *agents = json_object_get(
        json_object_get(
            json_object_get(json_object_get(ev, "subscribed"), "get_state"),
            "get_agents"),
        "agents");
    assert_agent_pb(json_array_get(agents, 0), r, "SUBSCRIBED");
    json_decref(ev);
}

/* The event stream: FRAMEWORK_UPDATED's offered resources and
 * AGENT_ADDED's agent, per subscriber. */
START_TEST(test_operator_stream_filtered)
{
    static struct mfx_peer OP3;
    struct mfx_peer *subs[] = {&OP, &OP2, &OP3};
    for (size_t i = 0; i < NREADERS; i++)
        op_subscribe(subs[i], &READERS[i]);

    /* The framework updates itself (same info): FRAMEWORK_UPDATED shows
     * the offer it holds, all of it allocated to db. */
    mfx_set_principal(&X, NULL, NULL);
    char payload[1024];
    snprintf(payload, sizeof(payload),
             "{\"framework_info\":{\"id\":{\"value\":\"%s\"},\"user\":"
             "\"nobody\",\"name\":\"dbfw\",\"roles\":[\"db\"],\"principal\":"
             "\"dbfw\",\"capabilities\":[{\"type\":\"MULTI_ROLE\"}]}}",
             FW.id);
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "UPDATE_FRAMEWORK",
                                        "update_framework", payload),
                     200);
    for (size_t i = 0; i < NREADERS; i++) {
        json_t *ev = mfx_next_event(&X, subs[i], "FRAMEWORK_UPDATED");
        ck_assert_ptr_nonnull(ev);
        json_t *f = json_object_get(json_object_get(ev, "framework_updated"),
                                    "framework");
        ck_assert_msg(json_array_size(json_object_get(
                          f, "offered_resources")) == READERS[i].offered,
                      "FRAMEWORK_UPDATED as %s", READERS[i].principal);
        json_decref(ev);
    }

    /* A second agent: AGENT_ADDED without what the reader may not see. */
    mfx_set_principal(&X, NULL, NULL);
    agent_subscribe(&AG2, "host2");
    for (size_t i = 0; i < NREADERS; i++) {
        json_t *ev = mfx_next_event(&X, subs[i], "AGENT_ADDED");
        ck_assert_ptr_nonnull(ev);
        json_t *a =
            json_object_get(json_object_get(ev, "agent_added"), "agent");
        size_t info = json_array_size(
            json_object_get(json_object_get(a, "agent_info"), "resources"));
        ck_assert_msg(info == READERS[i].total &&
                          json_array_size(json_object_get(
                              a, "total_resources")) == READERS[i].total,
                      "AGENT_ADDED as %s: %zu", READERS[i].principal, info);
        json_decref(ev);
    }
    mfx_peer_free(&OP3);
}
END_TEST

/* ---- The predicate -------------------------------------------------------
 */

static Mesos__V1__Resource *resource_of(const char *json)
{
    char err[256];
    Mesos__V1__Resource *r = (Mesos__V1__Resource *)jpb_from_json_text(
        &mesos__v1__resource__descriptor, json, strlen(json), err, sizeof(err));
    ck_assert_msg(r != NULL, "%s: %s", json, err);
    return r;
}

/* A resource is viewable when every role it names is: each reservation
 * of a refined stack, its allocation role, a pre-refinement role. */
START_TEST(test_resource_predicate)
{
    char err[256];
    const char text[] = "{" ROLE_RULES("view_roles") "}";
    struct acls *a = acls_parse(text, strlen(text), err, sizeof(err));
    ck_assert_msg(a != NULL, "%s", err);
    struct acl_approver *web = acl_approver_new(a, "web", ACL_VIEW_ROLES);
    struct acl_approver *ops = acl_approver_new(a, "ops", ACL_VIEW_ROLES);
#define RESV(role) "{\"type\":\"DYNAMIC\",\"role\":\"" role "\"}"
    static const struct {
        const char *json;
        bool web;
    } cases[] = {
        {SCALAR("cpus", "1"), true},
        {STATIC("cpus", "1", "web"), true},
        {STATIC("cpus", "1", "db"), false},
        /* web refined over db, db refined over web: both needed. */
        {"{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1},"
         "\"reservations\":[" RESV("db") "," RESV("web") "]}",
         false},
        {"{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1},"
         "\"reservations\":[" RESV("web") "," RESV("db") "]}",
         false},
        /* Unreserved but allocated. */
        {"{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1},"
         "\"allocation_info\":{\"role\":\"db\"}}",
         false},
        {"{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1},"
         "\"allocation_info\":{\"role\":\"web\"}}",
         true},
        /* The pre-refinement form. */
        {"{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1},"
         "\"role\":\"db\"}",
         false},
        {"{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1},"
         "\"role\":\"*\"}",
         true},
    };
#undef RESV
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        Mesos__V1__Resource *r = resource_of(cases[i].json);
        ck_assert_msg(master_role_view_resource_pb(web, r) == cases[i].web,
                      "case %zu", i);
        ck_assert(master_role_view_resource_pb(ops, r));
        ck_assert(master_role_view_resource_pb(NULL, r));
        jpb_free(&r->base);
    }
    acl_approver_free(web);
    acl_approver_free(ops);
    acls_free(a);
}
END_TEST

static Suite *view_roles_suite(void)
{
    Suite *s = suite_create("master_view_roles");
    TCase *tc = tcase_create("readers");
    tcase_add_checked_fixture(tc, vr_setup, vr_teardown);
    tcase_add_test(tc, test_agent_json_filtered);
    tcase_add_test(tc, test_agent_pb_filtered);
    tcase_add_test(tc, test_roles_weights_quota_filtered);
    tcase_add_test(tc, test_operations_filtered);
    tcase_add_test(tc, test_operator_stream_filtered);
    suite_add_tcase(s, tc);
    TCase *pred = tcase_create("predicate");
    tcase_add_test(pred, test_resource_predicate);
    suite_add_tcase(s, pred);
    return s;
}

OFFERD_CHECK_MAIN(view_roles_suite)
