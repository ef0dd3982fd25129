/*
 * Role weights and quota over loopback with the real master: /weights and
 * /quota (Mesos's operator endpoints), the v1 operator calls in JSON and in
 * protobuf, and both kept in the registry across a master restart.
 */
#include <check.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_pb.h"
#include "harness.h"
#include "harness_api.h"
#include "mesos/v1/master.pb-c.h"

static struct e2e_proc master;

static const char *const JSON_HDRS[] = {"Content-Type: application/json",
                                        "Accept: application/json", NULL};
static const char *const PB_HDRS[] = {"Content-Type: application/x-protobuf",
                                      "Accept: application/x-protobuf", NULL};

/* A request with a JSON body (may be NULL); the status, the body in r. */
static int req(const char *method, const char *path, const char *body,
               struct e2e_response *r)
{
    ck_assert_int_eq(e2e_http(master.port, method, path, JSON_HDRS, body,
                              body != NULL ? strlen(body) : 0, T, r),
                     0);
    return r->status;
}

static int req_status(const char *method, const char *path, const char *body)
{
    struct e2e_response r;
    int status = req(method, path, body, &r);
    e2e_response_free(&r);
    return status;
}

/* A v1 operator call in protobuf; the decoded Response (jpb_free), or NULL
 * for an empty 200. */
static Mesos__V1__Master__Response *pb_call(const Mesos__V1__Master__Call *c)
{
    size_t len;
    uint8_t *buf = jpb_to_pb(&c->base, &len);
    struct e2e_response r;
    ck_assert_int_eq(
        e2e_http(master.port, "POST", "/api/v1", PB_HDRS, buf, len, T, &r), 0);
    free(buf);
    ck_assert_msg(r.status == 200, "status %d: %s", r.status, r.body);
    Mesos__V1__Master__Response *resp = NULL;
    if (r.body_len > 0) {
        char err[256];
        resp = (Mesos__V1__Master__Response *)jpb_from_pb(
            &mesos__v1__master__response__descriptor, (const uint8_t *)r.body,
            r.body_len, err, sizeof(err));
        ck_assert_msg(resp != NULL, "%s", err);
        ck_assert_str_eq(e2e_response_header(&r, "Content-Type"),
                         "application/x-protobuf");
    }
    e2e_response_free(&r);
    return resp;
}

/* The weight of role in GET /weights, or -1. */
static double http_weight(const char *role)
{
    json_t *arr = api_get_json(master.port, "/weights");
    double w = -1;
    for (size_t i = 0; i < json_array_size(arr); i++) {
        json_t *wi = json_array_get(arr, i);
        if (strcmp(json_string_value(json_object_get(wi, "role")), role) == 0)
            w = json_number_value(json_object_get(wi, "weight"));
    }
    json_decref(arr);
    return w;
}

/* The limit of name in role's config of GET /quota, or -1 (none). */
static double http_limit(const char *role, const char *name)
{
    json_t *st = api_get_json(master.port, "/master/quota");
    json_t *configs = json_object_get(st, "configs");
    double v = -1;
    for (size_t i = 0; i < json_array_size(configs); i++) {
        json_t *c = json_array_get(configs, i);
        if (strcmp(json_string_value(json_object_get(c, "role")), role) != 0)
            continue;
        json_t *l = json_object_get(json_object_get(c, "limits"), name);
        if (l != NULL)
            v = json_number_value(json_object_get(l, "value"));
    }
    json_decref(st);
    return v;
}

START_TEST(test_weights_and_quota_survive_restart)
{
    const char *flags[] = {"--allocation_interval=100ms", NULL};
    ck_assert_int_eq(e2e_start_master(&master, flags), 0);

    /* /weights. */
    ck_assert_int_eq(
        req_status("PUT", "/weights", "[{\"role\":\"web\",\"weight\":2.5}]"),
        200);
    ck_assert_int_eq(
        req_status("PUT", "/weights", "[{\"role\":\"web\",\"weight\":-1}]"),
        400);
    ck_assert(http_weight("web") == 2.5);

    /* /quota: no agent, so a guarantee overcommits the cluster (409)
     * unless forced. */
    const char *set = "{\"role\":\"web\",\"guarantee\":[{\"name\":\"cpus\","
                      "\"type\":\"SCALAR\",\"scalar\":{\"value\":1}}]}";
    struct e2e_response r;
    ck_assert_int_eq(req("POST", "/quota", set, &r), 409);
    ck_assert_ptr_nonnull(strstr(r.body, "overcommit"));
    ck_assert_str_eq(e2e_response_header(&r, "Content-Type"),
                     "text/plain; charset=utf-8");
    e2e_response_free(&r);
    ck_assert_int_eq(
        req_status("POST", "/quota",
                   "{\"role\":\"web\",\"force\":true,\"guarantee\":[{\"name\":"
                   "\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1}}]}"),
        200);
    ck_assert(http_limit("web", "cpus") == 1.0);
    ck_assert_int_eq(req_status("DELETE", "/quota/nope", NULL), 400);

    /* v1 in JSON: UPDATE_QUOTA with guarantees and limits. */
    ck_assert_int_eq(
        req_status("POST", "/api/v1",
                   "{\"type\":\"UPDATE_QUOTA\",\"update_quota\":{\"force\":"
                   "true,\"quota_configs\":[{\"role\":\"batch\","
                   "\"guarantees\":{\"mem\":{\"value\":128}},\"limits\":{"
                   "\"cpus\":{\"value\":3},\"mem\":{\"value\":1024}}}]}}"),
        200);
    ck_assert_int_eq(req("POST", "/api/v1", "{\"type\":\"GET_QUOTA\"}", &r),
                     200);
    json_t *j = json_loads(r.body, 0, NULL);
    e2e_response_free(&r);
    ck_assert_int_eq(
        json_array_size(json_object_get(
            json_object_get(json_object_get(j, "get_quota"), "status"),
            "configs")),
        2);
    json_decref(j);

    /* v1 in protobuf: UPDATE_WEIGHTS, then GET_WEIGHTS. */
    Mesos__V1__WeightInfo wi = MESOS__V1__WEIGHT_INFO__INIT;
    wi.role = "batch";
    wi.weight = 0.5;
    Mesos__V1__WeightInfo *wis[] = {&wi};
    Mesos__V1__Master__Call__UpdateWeights uw =
        MESOS__V1__MASTER__CALL__UPDATE_WEIGHTS__INIT;
    uw.weight_infos = wis;
    uw.n_weight_infos = 1;
    Mesos__V1__Master__Call c = MESOS__V1__MASTER__CALL__INIT;
    c.has_type = true;
    c.type = MESOS__V1__MASTER__CALL__TYPE__UPDATE_WEIGHTS;
    c.update_weights = &uw;
    ck_assert_ptr_null(pb_call(&c));
    Mesos__V1__Master__Call g = MESOS__V1__MASTER__CALL__INIT;
    g.has_type = true;
    g.type = MESOS__V1__MASTER__CALL__TYPE__GET_WEIGHTS;
    Mesos__V1__Master__Response *resp = pb_call(&g);
    ck_assert_ptr_nonnull(resp);
    ck_assert_ptr_nonnull(resp->get_weights);
    ck_assert_uint_eq(resp->get_weights->n_weight_infos, 2);
    jpb_free(&resp->base);

    /* A restart: everything comes back from the registry. */
    ck_assert_int_eq(e2e_proc_stop(&master, SIGTERM, 10000), 0);
    ck_assert_int_eq(e2e_restart_master(&master, flags), 0);
    ck_assert(http_weight("web") == 2.5);
    ck_assert(http_weight("batch") == 0.5);
    ck_assert(http_limit("web", "cpus") == 1.0);
    ck_assert(http_limit("batch", "cpus") == 3.0);
    g.type = MESOS__V1__MASTER__CALL__TYPE__GET_QUOTA;
    resp = pb_call(&g);
    ck_assert_ptr_nonnull(resp->get_quota);
    ck_assert_uint_eq(resp->get_quota->status->n_configs, 2);
    jpb_free(&resp->base);
    /* The allocator has them too: /roles shows weight and quota. */
    json_t *roles = api_get_json(master.port, "/roles");
    int seen = 0;
    json_t *arr = json_object_get(roles, "roles");
    for (size_t i = 0; i < json_array_size(arr); i++) {
        json_t *role = json_array_get(arr, i);
        const char *name = json_string_value(json_object_get(role, "name"));
        if (strcmp(name, "batch") == 0) {
            ck_assert(json_number_value(json_object_get(role, "weight")) ==
                      0.5);
            ck_assert(
                json_number_value(json_object_get(
                    json_object_get(json_object_get(role, "quota"), "limit"),
                    "cpus")) == 3.0);
            seen++;
        }
    }
    json_decref(roles);
    ck_assert_int_eq(seen, 1);

    /* Removed, and still removed after another restart. */
    ck_assert_int_eq(req_status("DELETE", "/master/quota/web", NULL), 200);
    ck_assert_int_eq(e2e_proc_stop(&master, SIGTERM, 10000), 0);
    ck_assert_int_eq(e2e_restart_master(&master, flags), 0);
    ck_assert(http_limit("web", "cpus") == -1);
    ck_assert(http_limit("batch", "cpus") == 3.0);
    /* REMOVE_QUOTA in protobuf. */
    Mesos__V1__Master__Call__RemoveQuota rq =
        MESOS__V1__MASTER__CALL__REMOVE_QUOTA__INIT;
    rq.role = "batch";
    Mesos__V1__Master__Call rm = MESOS__V1__MASTER__CALL__INIT;
    rm.has_type = true;
    rm.type = MESOS__V1__MASTER__CALL__TYPE__REMOVE_QUOTA;
    rm.remove_quota = &rq;
    ck_assert_ptr_null(pb_call(&rm));
    ck_assert(http_limit("batch", "cpus") == -1);
    ck_assert_int_eq(e2e_proc_stop(&master, SIGTERM, 10000), 0);
    e2e_proc_cleanup(&master);
}
END_TEST

static Suite *quota_suite(void)
{
    Suite *s = suite_create("e2e_quota");
    TCase *tc = tcase_create("quota");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_weights_and_quota_survive_restart);
    suite_add_tcase(s, tc);
    return s;
}

E2E_CHECK_MAIN(quota_suite)
