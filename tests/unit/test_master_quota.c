/*
 * Role weights and quota (master/quota.c) without sockets: the v1 operator
 * calls GET_WEIGHTS, UPDATE_WEIGHTS, GET_QUOTA, UPDATE_QUOTA, SET_QUOTA and
 * REMOVE_QUOTA, the /weights and /quota endpoints, their refusals (status,
 * reason, state and registry unchanged), recovery after a master restart,
 * and the allocator enforcing what was set.
 */
#include <check.h>
#include <event2/event.h>
#include <string.h>

#include "check_main.h"
#include "common/json_pb.h"
#include "master/operator_api.h"
#include "master/quota.h"
#include "master/registry_mem.h"
#include "master_fixture.h"

static struct mfx X;
static struct mfx_peer FA, FB, AG1, AG2, AG3;

static void setup(void)
{
    mfx_start(&X, NULL);
}

static void teardown(void)
{
    mfx_peer_free(&FA);
    mfx_peer_free(&FB);
    mfx_peer_free(&AG1);
    mfx_peer_free(&AG2);
    mfx_peer_free(&AG3);
    mfx_stop(&X);
}

static long stored(const char *kind)
{
    return registry_mem_count(X.store, kind);
}

/* An operator call; its status, and its body in body (may be NULL). */
static int call(const char *json, char *body, size_t len)
{
    struct http_fake *f = mfx_operator(&X, json);
    int status = http_fake_status(f);
    if (body != NULL)
        snprintf(body, len, "%s", mfx_body(f));
    http_fake_free(f);
    return status;
}

/* The JSON reply of a GET_* call (caller json_decrefs). */
static json_t *get(const char *type)
{
    char json[128], body[8192];
    snprintf(json, sizeof(json), "{\"type\":\"%s\"}", type);
    ck_assert_int_eq(call(json, body, sizeof(body)), 200);
    json_error_t e;
    json_t *j = json_loads(body, 0, &e);
    ck_assert_msg(j != NULL, "not JSON: %s", body);
    return j;
}

static bool replied(void *arg)
{
    return http_fake_replied(arg);
}

/* A request through the master's routes; the status, body in body. */
static int http(enum http_method method, const char *path, const char *data,
                char *body, size_t len)
{
    struct http_fake *f = http_fake_new(X.base, method, path);
    if (data != NULL) {
        http_fake_add_header(f, "Content-Type", HTTP_CONTENT_JSON);
        http_fake_set_body(f, data, strlen(data));
    }
    http_fake_dispatch_server(f, X.m->http);
    ck_assert(mfx_run_until(&X, replied, f));
    int status = http_fake_status(f);
    if (body != NULL)
        snprintf(body, len, "%s", mfx_body(f));
    http_fake_free(f);
    return status;
}

struct role_q {
    const char *role;
    bool found;
    double weight;
    int64_t guarantee_cpus, limit_cpus; /* -1: none */
};

static void role_cb(void *arg, const struct alloc_role_info *info)
{
    struct role_q *q = arg;
    if (strcmp(info->role, q->role) != 0)
        return;
    q->found = true;
    q->weight = info->weight;
    for (uint32_t i = 0; i < info->guarantee.n; i++)
        if (strcmp(info->guarantee.v[i].name, "cpus") == 0)
            q->guarantee_cpus = info->guarantee.v[i].milli;
    for (uint32_t i = 0; i < info->limit.n; i++)
        if (strcmp(info->limit.v[i].name, "cpus") == 0)
            q->limit_cpus = info->limit.v[i].milli;
}

/* What the allocator knows of role. */
static struct role_q alloc_role(const char *role)
{
    struct role_q q = {role, false, 0, -1, -1};
    alloc_foreach_role(X.m->alloc, role_cb, &q);
    return q;
}

#define WEIGHTS(body)                                                          \
    "{\"type\":\"UPDATE_WEIGHTS\",\"update_weights\":{\"weight_infos\":" body  \
    "}}"
#define QUOTA(force, configs)                                                  \
    "{\"type\":\"UPDATE_QUOTA\",\"update_quota\":{\"force\":" force            \
    ",\"quota_configs\":" configs "}}"
#define SET(body)                                                              \
    "{\"type\":\"SET_QUOTA\",\"set_quota\":{\"quota_request\":" body "}}"

/* ---- Weights --------------------------------------------------------------
 */

START_TEST(test_update_weights)
{
    char body[512];
    ck_assert_int_eq(
        call(WEIGHTS("[{\"role\":\"a\",\"weight\":2.5},{\"role\":\" b \","
                     "\"weight\":0.5}]"),
             body, sizeof(body)),
        200);
    ck_assert_str_eq(body, "");
    ck_assert_int_eq(stored("weight"), 2);
    json_t *j = get("GET_WEIGHTS");
    json_t *infos =
        json_object_get(json_object_get(j, "get_weights"), "weight_infos");
    ck_assert_int_eq(json_array_size(infos), 2);
    ck_assert_str_eq(json_string_value(json_object_get(j, "type")),
                     "GET_WEIGHTS");
    json_decref(j);
    struct role_q a = alloc_role("a"), b = alloc_role("b");
    ck_assert(a.found && b.found);
    ck_assert(a.weight == 2.5 && b.weight == 0.5);
    /* GET_ROLES shows it. */
    j = get("GET_ROLES");
    json_t *roles = json_object_get(json_object_get(j, "get_roles"), "roles");
    bool seen = false;
    for (size_t i = 0; i < json_array_size(roles); i++) {
        json_t *r = json_array_get(roles, i);
        if (strcmp(json_string_value(json_object_get(r, "name")), "a") == 0) {
            ck_assert(json_real_value(json_object_get(r, "weight")) == 2.5);
            seen = true;
        }
    }
    ck_assert(seen);
    json_decref(j);
    /* /roles shows the weight. */
    ck_assert_int_eq(http(HTTP_GET, "/roles", NULL, body, sizeof(body)), 200);
    ck_assert_ptr_nonnull(strstr(body, "\"weight\": 2.5") != NULL
                              ? strstr(body, "\"weight\": 2.5")
                              : strstr(body, "\"weight\":2.5"));
    /* Updated again: replaced, still one record per role. */
    ck_assert_int_eq(call(WEIGHTS("[{\"role\":\"a\",\"weight\":3}]"), NULL, 0),
                     200);
    ck_assert_int_eq(stored("weight"), 2);
    ck_assert(alloc_role("a").weight == 3.0);
}
END_TEST

START_TEST(test_weights_refusals)
{
    static const struct {
        const char *json;
        const char *reason;
    } cases[] = {
        {WEIGHTS("[{\"role\":\"\",\"weight\":1}]"), "Invalid role ''"},
        {WEIGHTS("[{\"role\":\"a//b\",\"weight\":1}]"), "Invalid role 'a//b'"},
        {WEIGHTS("[{\"role\":\"-x\",\"weight\":1}]"), "Invalid role '-x'"},
        {WEIGHTS("[{\"role\":\"ok\",\"weight\":1},{\"role\":\"a\","
                 "\"weight\":0}]"),
         "Weights must be positive"},
        {WEIGHTS("[{\"role\":\"a\",\"weight\":-1}]"), "Invalid weight '-1'"},
        {WEIGHTS("[{\"role\":\"a\",\"weight\":\"Infinity\"}]"),
         "Weights must be positive"},
        {WEIGHTS("[{\"role\":\"a\"}]"), "weight"},
        {"{\"type\":\"UPDATE_WEIGHTS\"}", "update_weights: required"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char body[512];
        ck_assert_int_eq(call(cases[i].json, body, sizeof(body)), 400);
        ck_assert_msg(strstr(body, cases[i].reason) != NULL, "case %zu: %s", i,
                      body);
    }
    ck_assert_int_eq(stored("weight"), 0);
    json_t *j = get("GET_WEIGHTS");
    ck_assert_int_eq(json_array_size(json_object_get(
                         json_object_get(j, "get_weights"), "weight_infos")),
                     0);
    json_decref(j);
    ck_assert(!alloc_role("ok").found);
}
END_TEST

START_TEST(test_weights_endpoint)
{
    char body[1024];
    ck_assert_int_eq(http(HTTP_PUT, "/weights",
                          "[{\"role\":\"web\",\"weight\":4.0}]", body,
                          sizeof(body)),
                     200);
    ck_assert_int_eq(
        http(HTTP_GET, "/master/weights", NULL, body, sizeof(body)), 200);
    json_t *j = json_loads(body, 0, NULL);
    ck_assert(json_is_array(j) && json_array_size(j) == 1);
    ck_assert_str_eq(
        json_string_value(json_object_get(json_array_get(j, 0), "role")),
        "web");
    ck_assert(json_real_value(
                  json_object_get(json_array_get(j, 0), "weight")) == 4.0);
    json_decref(j);
    /* Refusals: not JSON, not an array, a bad WeightInfo, a bad weight. */
    ck_assert_int_eq(http(HTTP_PUT, "/weights", "[{", body, sizeof(body)), 400);
    ck_assert_int_eq(http(HTTP_PUT, "/weights", "{}", body, sizeof(body)), 400);
    ck_assert_int_eq(
        http(HTTP_PUT, "/weights", "[{\"role\":\"x\"}]", body, sizeof(body)),
        400);
    ck_assert_int_eq(http(HTTP_PUT, "/weights",
                          "[{\"role\":\"x\",\"weight\":0}]", body,
                          sizeof(body)),
                     400);
    ck_assert_ptr_nonnull(strstr(body, "Weights must be positive"));
    ck_assert_int_eq(http(HTTP_POST, "/weights", "[]", body, sizeof(body)),
                     405);
    ck_assert_int_eq(stored("weight"), 1);
}
END_TEST

/* ---- Quota ----------------------------------------------------------------
 */

START_TEST(test_update_quota)
{
    mfx_agent_subscribe(&X, &AG1, "host1", "cpus:4;mem:4096");
    char body[512];
    ck_assert_int_eq(
        call(QUOTA("false", "[{\"role\":\"a\",\"guarantees\":{\"cpus\":{"
                            "\"value\":1},\"mem\":{\"value\":512}},"
                            "\"limits\":{\"cpus\":{\"value\":2}}}]"),
             body, sizeof(body)),
        200);
    ck_assert_int_eq(stored("quota"), 1);
    struct role_q a = alloc_role("a");
    ck_assert(a.found);
    ck_assert_int_eq(a.guarantee_cpus, 1000);
    ck_assert_int_eq(a.limit_cpus, 2000);
    json_t *j = get("GET_QUOTA");
    json_t *st = json_object_get(json_object_get(j, "get_quota"), "status");
    json_t *cfg = json_array_get(json_object_get(st, "configs"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(cfg, "role")), "a");
    ck_assert(json_real_value(json_object_get(
                  json_object_get(json_object_get(cfg, "limits"), "cpus"),
                  "value")) == 2.0);
    json_t *info = json_array_get(json_object_get(st, "infos"), 0);
    ck_assert_int_eq(json_array_size(json_object_get(info, "guarantee")), 2);
    json_decref(j);
    /* /roles shows the quota as Mesos does: only the names set. */
    char roles[65536];
    ck_assert_int_eq(http(HTTP_GET, "/roles", NULL, roles, sizeof(roles)), 200);
    j = json_loads(roles, 0, NULL);
    json_t *r = json_array_get(json_object_get(j, "roles"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(r, "name")), "a");
    json_t *q = json_object_get(r, "quota");
    ck_assert(json_real_value(
                  json_object_get(json_object_get(q, "limit"), "cpus")) == 2.0);
    ck_assert_ptr_null(json_object_get(json_object_get(q, "limit"), "mem"));
    ck_assert(json_real_value(json_object_get(json_object_get(q, "guarantee"),
                                              "mem")) == 512.0);
    json_decref(j);
    /* A role named twice: the last config wins and counts once against
     * the capacity (4 cpus). */
    ck_assert_int_eq(
        call(QUOTA("false",
                   "[{\"role\":\"a\",\"guarantees\":{\"cpus\":{\"value\":3}}},"
                   "{\"role\":\"a\",\"guarantees\":{\"cpus\":{\"value\":2.5}}"
                   "}]"),
             body, sizeof(body)),
        200);
    ck_assert_int_eq(stored("quota"), 1);
    ck_assert_int_eq(alloc_role("a").guarantee_cpus, 2500);
    ck_assert_int_eq(alloc_role("a").limit_cpus, -1);
    /* Mesos's quota gauges. */
    ck_assert_int_eq(
        http(HTTP_GET, "/metrics/snapshot", NULL, roles, sizeof(roles)), 200);
    j = json_loads(roles, 0, NULL);
    ck_assert(json_real_value(json_object_get(
                  j, "allocator/mesos/quota/roles/a/resources/cpus/"
                     "guarantee")) == 2.5);
    ck_assert_ptr_nonnull(
        json_object_get(j, "allocator/mesos/quota/roles/a/resources/cpus/"
                           "offered_or_allocated"));
    ck_assert_ptr_null(json_object_get(
        j, "allocator/mesos/quota/roles/a/resources/cpus/limit"));
    json_decref(j);
    /* An empty config removes the quota. */
    ck_assert_int_eq(call(QUOTA("false", "[{\"role\":\"a\"}]"), NULL, 0), 200);
    ck_assert_int_eq(stored("quota"), 0);
    ck_assert_int_eq(alloc_role("a").limit_cpus, -1);
    j = get("GET_QUOTA");
    ck_assert_int_eq(
        json_array_size(json_object_get(
            json_object_get(json_object_get(j, "get_quota"), "status"),
            "configs")),
        0);
    json_decref(j);
}
END_TEST

START_TEST(test_update_quota_refusals)
{
    mfx_agent_subscribe(&X, &AG1, "host1", "cpus:2;mem:1024");
    /* One valid quota first: refusals must leave it as it is. */
    ck_assert_int_eq(
        call(QUOTA("false",
                   "[{\"role\":\"keep\",\"guarantees\":{\"cpus\":{\"value\":"
                   "1}}}]"),
             NULL, 0),
        200);
    static const struct {
        const char *json;
        const char *reason;
    } cases[] = {
        {QUOTA("false", "[{\"role\":\"a/b\",\"limits\":{\"cpus\":{"
                        "\"value\":1}}}]"),
         "Updating quota on nested role 'a/b' is not supported yet"},
        {QUOTA("false", "[{\"role\":\"..\"}]"), "Invalid 'QuotaConfig.role'"},
        {QUOTA("false", "[{\"role\":\"a\",\"guarantees\":{\"cpus\":{"
                        "\"value\":-1}}}]"),
         "Negative values not supported"},
        {QUOTA("false", "[{\"role\":\"a\",\"limits\":{\"cpus\":{"
                        "\"value\":\"Infinity\"}}}]"),
         "Infinite values not supported"},
        {QUOTA("false", "[{\"role\":\"a\",\"limits\":{\"cpus\":{"
                        "\"value\":\"NaN\"}}}]"),
         "NaN not supported"},
        {QUOTA("false", "[{\"role\":\"a\",\"limits\":{\"mem\":{"
                        "\"value\":2e12}}}]"),
         "1 exabyte"},
        {QUOTA("false", "[{\"role\":\"a\",\"guarantees\":{\"cpus\":{"
                        "\"value\":2}},\"limits\":{\"cpus\":{\"value\":1}}}]"),
         "is not contained within the 'QuotaConfig.limits'"},
        /* The capacity check (force skips it, below). */
        {QUOTA("false", "[{\"role\":\"a\",\"guarantees\":{\"cpus\":{"
                        "\"value\":1.5}}}]"),
         "exceed cluster capacity"},
        {QUOTA("false", "[{\"role\":\"a\",\"guarantees\":{\"gpus\":{"
                        "\"value\":1}}}]"),
         "exceed cluster capacity"},
        /* All or nothing: a good config with a bad one. */
        {QUOTA("false", "[{\"role\":\"b\"},{\"role\":\"\"}]"),
         "Invalid 'QuotaConfig.role'"},
        {"{\"type\":\"UPDATE_QUOTA\"}", "update_quota: required"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char body[1024];
        ck_assert_int_eq(call(cases[i].json, body, sizeof(body)), 400);
        ck_assert_msg(strstr(body, cases[i].reason) != NULL, "case %zu: %s", i,
                      body);
    }
    ck_assert_int_eq(stored("quota"), 1);
    json_t *j = get("GET_QUOTA");
    ck_assert_int_eq(
        json_array_size(json_object_get(
            json_object_get(json_object_get(j, "get_quota"), "status"),
            "configs")),
        1);
    json_decref(j);
    ck_assert(!alloc_role("a").found);
    /* force skips the capacity check. */
    ck_assert_int_eq(
        call(QUOTA("true", "[{\"role\":\"a\",\"guarantees\":{\"cpus\":{"
                           "\"value\":1.5}}}]"),
             NULL, 0),
        200);
    ck_assert_int_eq(stored("quota"), 2);
    ck_assert_int_eq(alloc_role("a").guarantee_cpus, 1500);
}
END_TEST

/* The allocator keeps at most ALLOC_MAX_NAMES scalar resource names: a
 * quota that would bring more is refused, forced or not, and nothing is
 * stored; known names are fine. */
START_TEST(test_quota_name_cap)
{
    mfx_fill_resource_names(&X);

    char body[1024];
    ck_assert_int_eq(call(QUOTA("false", "[{\"role\":\"a\",\"limits\":{"
                                         "\"fresh\":{\"value\":1}}}]"),
                          body, sizeof(body)),
                     400);
    ck_assert_msg(strstr(body, "distinct scalar resource names"), "%s", body);
    ck_assert_int_eq(call(QUOTA("true", "[{\"role\":\"a\",\"guarantees\":{"
                                        "\"fresh\":{\"value\":1}}}]"),
                          body, sizeof(body)),
                     400);
    ck_assert_msg(strstr(body, "distinct scalar resource names"), "%s", body);
    ck_assert_int_eq(stored("quota"), 0);
    ck_assert(!alloc_role("a").found);
    ck_assert_int_eq(call(QUOTA("false", "[{\"role\":\"a\",\"limits\":{"
                                         "\"x5\":{\"value\":1}}}]"),
                          NULL, 0),
                     200);
    ck_assert_int_eq(stored("quota"), 1);
    ck_assert(alloc_role("a").found);
}
END_TEST

#define FW_A                                                                   \
    "{\"user\":\"u\",\"name\":\"fa\",\"roles\":[\"a\"],\"capabilities\":[{"    \
    "\"type\":\"MULTI_ROLE\"}]}"
#define FW_B                                                                   \
    "{\"user\":\"u\",\"name\":\"fb\",\"roles\":[\"b\"],\"capabilities\":[{"    \
    "\"type\":\"MULTI_ROLE\"}]}"

/* The cpus of every offer of an OFFERS event, in milli-units. */
static int64_t offers_cpus(json_t *ev)
{
    int64_t sum = 0;
    json_t *offers = json_object_get(json_object_get(ev, "offers"), "offers");
    for (size_t i = 0; i < json_array_size(offers); i++) {
        json_t *res = json_object_get(json_array_get(offers, i), "resources");
        for (size_t k = 0; k < json_array_size(res); k++) {
            json_t *r = json_array_get(res, k);
            if (strcmp(json_string_value(json_object_get(r, "name")), "cpus") ==
                0)
                sum += (int64_t)(json_number_value(json_object_get(
                                     json_object_get(r, "scalar"), "value")) *
                                     1000 +
                                 0.5);
        }
    }
    return sum;
}

START_TEST(test_limit_below_consumption)
{
    mfx_framework_subscribe(&X, &FB, FW_B);
    mfx_agent_subscribe(&X, &AG1, "host1", "cpus:2;mem:1024");
    json_t *ev = mfx_next_event(&X, &FB, "OFFERS");
    ck_assert_ptr_nonnull(ev);
    json_t *offer = json_array_get(
        json_object_get(json_object_get(ev, "offers"), "offers"), 0);
    char payload[2048];
    snprintf(payload, sizeof(payload),
             "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{\"type\":"
             "\"LAUNCH\",\"launch\":{\"task_infos\":[{\"name\":\"t\","
             "\"task_id\":{\"value\":\"t1\"},\"agent_id\":{\"value\":\"%s\"},"
             "\"resources\":[{\"name\":\"cpus\",\"type\":\"SCALAR\","
             "\"scalar\":{\"value\":1}}],\"command\":{\"value\":\"true\"}}]}}"
             "]}",
             json_string_value(
                 json_object_get(json_object_get(offer, "id"), "value")),
             AG1.id);
    json_decref(ev);
    /* /roles: b consumes what its task uses, not what it is offered. */
    char roles[65536];
    ck_assert_int_eq(http(HTTP_GET, "/roles", NULL, roles, sizeof(roles)), 200);
    json_t *j = json_loads(roles, 0, NULL);
    ck_assert_int_eq(
        json_object_size(json_object_get(
            json_object_get(json_array_get(json_object_get(j, "roles"), 0),
                            "quota"),
            "consumed")),
        0);
    json_decref(j);
    ck_assert_int_eq(mfx_framework_call(&X, &FB, "ACCEPT", "accept", payload),
                     202);
    ck_assert_int_eq(http(HTTP_GET, "/roles", NULL, roles, sizeof(roles)), 200);
    j = json_loads(roles, 0, NULL);
    json_t *consumed = json_object_get(
        json_object_get(json_array_get(json_object_get(j, "roles"), 0),
                        "quota"),
        "consumed");
    ck_assert(json_real_value(json_object_get(consumed, "cpus")) == 1.0);
    ck_assert_ptr_null(json_object_get(consumed, "mem"));
    json_decref(j);
    char body[1024];
    ck_assert_int_eq(
        call(QUOTA("false",
                   "[{\"role\":\"b\",\"limits\":{\"cpus\":{\"value\":0.5}}}]"),
             body, sizeof(body)),
        400);
    ck_assert_ptr_nonnull(strstr(body, "is already consuming"));
    ck_assert_int_eq(stored("quota"), 0);
    /* A limit at what it uses is fine; force goes below. */
    ck_assert_int_eq(
        call(QUOTA("false",
                   "[{\"role\":\"b\",\"limits\":{\"cpus\":{\"value\":1}}}]"),
             NULL, 0),
        200);
    ck_assert_int_eq(
        call(QUOTA("true",
                   "[{\"role\":\"b\",\"limits\":{\"cpus\":{\"value\":0.5}}}]"),
             NULL, 0),
        200);
    ck_assert_int_eq(alloc_role("b").limit_cpus, 500);
}
END_TEST

START_TEST(test_set_and_remove_quota)
{
    mfx_agent_subscribe(&X, &AG1, "host1", "cpus:2;mem:1024");
    const char *good = SET("{\"role\":\"a\",\"guarantee\":[{\"name\":\"cpus\","
                           "\"type\":\"SCALAR\",\"scalar\":{\"value\":1}}]}");
    char body[1024];
    ck_assert_int_eq(call(good, body, sizeof(body)), 200);
    ck_assert_int_eq(stored("quota"), 1);
    /* Legacy quota: the limit is the guarantee. */
    ck_assert_int_eq(alloc_role("a").guarantee_cpus, 1000);
    ck_assert_int_eq(alloc_role("a").limit_cpus, 1000);
    static const struct {
        const char *json;
        int status;
        const char *reason;
    } cases[] = {
        {SET("{\"role\":\"a\",\"guarantee\":[{\"name\":\"cpus\",\"type\":"
             "\"SCALAR\",\"scalar\":{\"value\":1}}]}"),
         400, "which already has quota"},
        {SET("{\"role\":\"b\",\"guarantee\":[{\"name\":\"cpus\",\"type\":"
             "\"SCALAR\",\"scalar\":{\"value\":1.5}}]}"),
         409, "Quota guarantees overcommit the cluster"},
        {SET("{\"role\":\"b\",\"guarantee\":[]}"), 400,
         "QuotaInfo with empty 'guarantee'"},
        {SET("{\"role\":\"b\",\"guarantee\":[{\"name\":\"ports\",\"type\":"
             "\"RANGES\",\"ranges\":{\"range\":[{\"begin\":1,\"end\":2}]}}]}"),
         400, "non-scalar"},
        {SET("{\"role\":\"b\",\"guarantee\":[{\"name\":\"cpus\",\"type\":"
             "\"SCALAR\",\"scalar\":{\"value\":1}},{\"name\":\"cpus\","
             "\"type\":\"SCALAR\",\"scalar\":{\"value\":1}}]}"),
         400, "duplicate resource name 'cpus'"},
        {SET("{\"role\":\"b\",\"guarantee\":[{\"name\":\"cpus\",\"type\":"
             "\"SCALAR\",\"scalar\":{\"value\":1},\"reservations\":[{"
             "\"type\":\"DYNAMIC\",\"role\":\"b\"}]}]}"),
         400, "ReservationInfo"},
        {SET("{\"role\":\"b/c\",\"guarantee\":[{\"name\":\"cpus\",\"type\":"
             "\"SCALAR\",\"scalar\":{\"value\":0.1}}]}"),
         400, "nested role"},
        {SET("{\"guarantee\":[{\"name\":\"cpus\",\"type\":\"SCALAR\","
             "\"scalar\":{\"value\":0.1}}]}"),
         400, "must specify a role"},
        {"{\"type\":\"REMOVE_QUOTA\",\"remove_quota\":{\"role\":\"zz\"}}", 400,
         "Role 'zz' has no quota set"},
        {"{\"type\":\"REMOVE_QUOTA\",\"remove_quota\":{\"role\":\"a//\"}}", 400,
         "Invalid role"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ck_assert_int_eq(call(cases[i].json, body, sizeof(body)),
                         cases[i].status);
        ck_assert_msg(strstr(body, cases[i].reason) != NULL, "case %zu: %s", i,
                      body);
    }
    ck_assert_int_eq(stored("quota"), 1);
    ck_assert(!alloc_role("b").found);
    /* force skips the overcommit check. */
    ck_assert_int_eq(
        call(SET("{\"role\":\"b\",\"force\":true,\"guarantee\":[{\"name\":"
                 "\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1.5}}]}"),
             NULL, 0),
        200);
    ck_assert_int_eq(stored("quota"), 2);
    ck_assert_int_eq(
        call("{\"type\":\"REMOVE_QUOTA\",\"remove_quota\":{\"role\":\"a\"}}",
             NULL, 0),
        200);
    ck_assert_int_eq(stored("quota"), 1);
    ck_assert_int_eq(alloc_role("a").limit_cpus, -1);
}
END_TEST

START_TEST(test_quota_endpoint)
{
    mfx_agent_subscribe(&X, &AG1, "host1", "cpus:2;mem:1024");
    char body[2048];
    ck_assert_int_eq(http(HTTP_POST, "/quota",
                          "{\"role\":\"web\",\"guarantee\":[{\"name\":"
                          "\"mem\",\"type\":\"SCALAR\",\"scalar\":{"
                          "\"value\":256}}]}",
                          body, sizeof(body)),
                     200);
    ck_assert_int_eq(http(HTTP_GET, "/master/quota", NULL, body, sizeof(body)),
                     200);
    json_t *j = json_loads(body, 0, NULL);
    ck_assert_ptr_nonnull(j);
    ck_assert_int_eq(json_array_size(json_object_get(j, "configs")), 1);
    ck_assert_int_eq(json_array_size(json_object_get(j, "infos")), 1);
    json_decref(j);
    /* Refusals. */
    ck_assert_int_eq(http(HTTP_POST, "/quota", "{", body, sizeof(body)), 400);
    ck_assert_int_eq(http(HTTP_POST, "/quota",
                          "{\"role\":\"x\",\"guarantee\":[{\"name\":"
                          "\"mem\",\"type\":\"SCALAR\",\"scalar\":{"
                          "\"value\":4096}}]}",
                          body, sizeof(body)),
                     409);
    ck_assert_int_eq(http(HTTP_DELETE, "/quota", NULL, body, sizeof(body)),
                     400);
    ck_assert_ptr_nonnull(strstr(body, "expected 3 tokens"));
    ck_assert_int_eq(http(HTTP_DELETE, "/quota/nope", NULL, body, sizeof(body)),
                     400);
    ck_assert_ptr_nonnull(strstr(body, "Role 'nope' has no quota set"));
    ck_assert_int_eq(http(HTTP_GET, "/quota/web", NULL, body, sizeof(body)),
                     405);
    ck_assert_int_eq(stored("quota"), 1);
    ck_assert_int_eq(
        http(HTTP_DELETE, "/master/quota/web", NULL, body, sizeof(body)), 200);
    ck_assert_int_eq(stored("quota"), 0);
}
END_TEST

/* ---- Durability -----------------------------------------------------------
 */

START_TEST(test_restart_recovers)
{
    mfx_agent_subscribe(&X, &AG1, "host1", "cpus:2;mem:1024");
    ck_assert_int_eq(call(WEIGHTS("[{\"role\":\"a\",\"weight\":2}]"), NULL, 0),
                     200);
    ck_assert_int_eq(
        call(QUOTA("false", "[{\"role\":\"a\",\"guarantees\":{\"cpus\":{"
                            "\"value\":1}},\"limits\":{\"cpus\":{\"value\":"
                            "1.5}}}]"),
             NULL, 0),
        200);
    mfx_peer_free(&AG1);
    mfx_restart(&X);
    struct role_q a = alloc_role("a");
    ck_assert(a.found);
    ck_assert(a.weight == 2.0);
    ck_assert_int_eq(a.guarantee_cpus, 1000);
    ck_assert_int_eq(a.limit_cpus, 1500);
    json_t *j = get("GET_WEIGHTS");
    ck_assert_int_eq(json_array_size(json_object_get(
                         json_object_get(j, "get_weights"), "weight_infos")),
                     1);
    json_decref(j);
    j = get("GET_QUOTA");
    ck_assert_int_eq(
        json_array_size(json_object_get(
            json_object_get(json_object_get(j, "get_quota"), "status"),
            "configs")),
        1);
    json_decref(j);
    /* Removed, and still removed after another restart. */
    ck_assert_int_eq(
        call("{\"type\":\"REMOVE_QUOTA\",\"remove_quota\":{\"role\":\"a\"}}",
             NULL, 0),
        200);
    mfx_restart(&X);
    ck_assert_int_eq(alloc_role("a").limit_cpus, -1);
    ck_assert(alloc_role("a").weight == 2.0);
}
END_TEST

START_TEST(test_registry_failure_changes_nothing)
{
    mfx_agent_subscribe(&X, &AG1, "host1", "cpus:2;mem:1024");
    registry_mem_set_failing(X.store, true);
    char body[512];
    ck_assert_int_eq(
        call(WEIGHTS("[{\"role\":\"a\",\"weight\":2}]"), body, sizeof(body)),
        503);
    ck_assert_int_eq(
        call(QUOTA("false", "[{\"role\":\"a\",\"limits\":{\"cpus\":{"
                            "\"value\":1}}}]"),
             body, sizeof(body)),
        503);
    registry_mem_set_failing(X.store, false);
    ck_assert(!alloc_role("a").found);
    ck_assert_int_eq(stored("weight"), 0);
    ck_assert_int_eq(stored("quota"), 0);
    json_t *j = get("GET_WEIGHTS");
    ck_assert_int_eq(json_array_size(json_object_get(
                         json_object_get(j, "get_weights"), "weight_infos")),
                     0);
    json_decref(j);
}
END_TEST

/* ---- Enforcement ----------------------------------------------------------
 */

START_TEST(test_guarantee_before_fair_share)
{
    /* Role a is guaranteed the whole cluster: b, subscribed first, gets
     * nothing while a's guarantee is outstanding. */
    mfx_agent_subscribe(&X, &AG1, "host1", "cpus:1;mem:512");
    mfx_agent_subscribe(&X, &AG2, "host2", "cpus:1;mem:512");
    ck_assert_int_eq(
        call(QUOTA("false", "[{\"role\":\"a\",\"guarantees\":{\"cpus\":{"
                            "\"value\":2},\"mem\":{\"value\":1024}}}]"),
             NULL, 0),
        200);
    mfx_framework_subscribe(&X, &FB, FW_B);
    mfx_framework_subscribe(&X, &FA, FW_A);
    int64_t got = 0;
    while (got < 2000) {
        json_t *ev = mfx_next_event(&X, &FA, "OFFERS");
        ck_assert_msg(ev != NULL, "a got %lld milli-cpus only", (long long)got);
        got += offers_cpus(ev);
        json_decref(ev);
    }
    mfx_settle(&X);
    ck_assert_int_eq(got, 2000);
    ck_assert(!mfx_has_event(&FB, "OFFERS"));
}
END_TEST

START_TEST(test_limit_never_exceeded)
{
    /* b may hold at most 1 cpu of three; a, with a guarantee of 1, gets
     * its share and the rest. */
    ck_assert_int_eq(
        call(QUOTA("true",
                   "[{\"role\":\"b\",\"limits\":{\"cpus\":{\"value\":1}}},"
                   "{\"role\":\"a\",\"guarantees\":{\"cpus\":{\"value\":1}}}]"),
             NULL, 0),
        200);
    mfx_framework_subscribe(&X, &FB, FW_B);
    mfx_agent_subscribe(&X, &AG1, "host1", "cpus:1;mem:512");
    mfx_agent_subscribe(&X, &AG2, "host2", "cpus:1;mem:512");
    mfx_agent_subscribe(&X, &AG3, "host3", "cpus:1;mem:512");
    json_t *ev = mfx_next_event(&X, &FB, "OFFERS");
    ck_assert_ptr_nonnull(ev);
    int64_t a = 0, b = offers_cpus(ev);
    json_decref(ev);
    mfx_framework_subscribe(&X, &FA, FW_A);
    while (a + b < 3000) {
        ev = mfx_next_event(&X, &FA, "OFFERS");
        ck_assert_msg(ev != NULL, "offered a %lld, b %lld milli-cpus",
                      (long long)a, (long long)b);
        a += offers_cpus(ev);
        json_decref(ev);
        while (mfx_has_event(&FB, "OFFERS")) {
            ev = mfx_next_event(&X, &FB, "OFFERS");
            b += offers_cpus(ev);
            json_decref(ev);
        }
    }
    ck_assert_int_le(b, 1000);
    ck_assert_int_ge(a, 1000);
    ck_assert_int_eq(a + b, 3000);
}
END_TEST

/* ---- --weights ------------------------------------------------------------
 */

START_TEST(test_weights_flag_check)
{
    static const struct {
        const char *text;
        const char *reason; /* NULL: valid */
    } cases[] = {
        {"a=2,b=0.5", NULL},
        {"a=2,,b=1,", NULL},
        {"", NULL},
        {"a", "--weights should be of the form 'role=weight,role=weight'"},
        {"a=1=2", "--weights should be of the form"},
        {"=2", "--weights should be of the form"},
        {"a=", "--weights should be of the form"},
        {"a//b=1", "Invalid weight: 'a//b=1'. a//b is not a valid role"},
        {"a=0", "Invalid weight: 'a=0'. Weights must be positive"},
        {"a=-1", "Weights must be positive"},
        {"a=x", "Weights must be positive"},
        {"a=inf", "Weights must be positive"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char err[256] = "";
        int rc =
            master_quota_weights_flag_check(cases[i].text, err, sizeof(err));
        if (cases[i].reason == NULL)
            ck_assert_msg(rc == 0, "case %zu: %s", i, err);
        else
            ck_assert_msg(rc == -1 && strstr(err, cases[i].reason) != NULL,
                          "case %zu: %s", i, err);
    }
}
END_TEST

static bool weights_stored(void *arg)
{
    return stored("weight") == *(long *)arg;
}

START_TEST(test_weights_flag)
{
    const char *flags[] = {"--weights=a=2,b=0.5", NULL};
    mfx_start(&X, flags);
    ck_assert(alloc_role("a").weight == 2.0);
    ck_assert(alloc_role("b").weight == 0.5);
    long two = 2;
    ck_assert(mfx_run_until(&X, weights_stored, &two));
    /* Once the registry holds weights, the flag is ignored. */
    ck_assert_int_eq(call(WEIGHTS("[{\"role\":\"a\",\"weight\":3}]"), NULL, 0),
                     200);
    mfx_restart(&X);
    ck_assert(alloc_role("a").weight == 3.0);
    ck_assert(alloc_role("b").weight == 0.5);
}
END_TEST

static Suite *master_quota_suite(void)
{
    Suite *s = suite_create("master_quota");
    TCase *tc = tcase_create("weights");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_update_weights);
    tcase_add_test(tc, test_weights_refusals);
    tcase_add_test(tc, test_weights_endpoint);
    tcase_add_test(tc, test_weights_flag_check);
    suite_add_tcase(s, tc);
    tc = tcase_create("quota");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_update_quota);
    tcase_add_test(tc, test_update_quota_refusals);
    tcase_add_test(tc, test_quota_name_cap);
    tcase_add_test(tc, test_limit_below_consumption);
    tcase_add_test(tc, test_set_and_remove_quota);
    tcase_add_test(tc, test_quota_endpoint);
    suite_add_tcase(s, tc);
    tc = tcase_create("durability");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_restart_recovers);
    tcase_add_test(tc, test_registry_failure_changes_nothing);
    suite_add_tcase(s, tc);
    tc = tcase_create("enforcement");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_guarantee_before_fair_share);
    tcase_add_test(tc, test_limit_never_exceeded);
    suite_add_tcase(s, tc);
    tc = tcase_create("flag");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_test(tc, test_weights_flag);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(master_quota_suite)
