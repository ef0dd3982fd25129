/*
 * End-to-end tests of the master's dynamic reservations and persistent
 * volumes, with a scripted agent (the CHECKPOINT_RESOURCES it receives are
 * checked) and scripted frameworks: RESERVE and CREATE inside ACCEPT, the
 * reserved resources and the volume offered back to their role only,
 * refusals (wrong principal, revocable, in use) reported to the framework,
 * the operator endpoints and their status codes, and a master restart.
 */
#include <check.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "harness_api.h"

#define RES                                                                    \
    "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":2}},"       \
    "{\"name\":\"mem\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1024}},"      \
    "{\"name\":\"disk\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1000}}]"

#define FW_A                                                                   \
    "{\"user\":\"u\",\"name\":\"a\",\"roles\":[\"a\"],\"principal\":\"p1\","   \
    "\"failover_timeout\":600,\"capabilities\":[{\"type\":\"MULTI_ROLE\"},"    \
    "{\"type\":\"RESERVATION_REFINEMENT\"}]}"
#define FW_B                                                                   \
    "{\"user\":\"u\",\"name\":\"b\",\"roles\":[\"b\"],\"principal\":\"p2\","   \
    "\"capabilities\":[{\"type\":\"MULTI_ROLE\"},{\"type\":"                   \
    "\"RESERVATION_REFINEMENT\"}]}"

/* The reserved pieces (reserved to a by p1) and the volume, as JSON. */
#define RESV(name, amount)                                                     \
    "{\"name\":\"" name "\",\"type\":\"SCALAR\",\"scalar\":{\"value\":" amount \
    "},\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"a\","                \
    "\"principal\":\"p1\"}],\"allocation_info\":{\"role\":\"a\"}}"
#define VOLUME                                                                 \
    "{\"name\":\"disk\",\"type\":\"SCALAR\",\"scalar\":{\"value\":100},"       \
    "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"a\",\"principal\":"    \
    "\"p1\"}],\"disk\":{\"persistence\":{\"id\":\"v1\",\"principal\":"         \
    "\"p1\"},\"volume\":{\"container_path\":\"data\",\"mode\":\"RW\"}},"       \
    "\"allocation_info\":{\"role\":\"a\"}}"

static struct e2e_proc master;

static void start(void)
{
    const char *args[] = {"--allocation_interval=50ms", NULL};
    ck_assert_int_eq(e2e_start_master(&master, args), 0);
}

static void subscribe_agent(struct conn *c, const char *id, int version,
                            const char *ckpt)
{
    memset(c, 0, sizeof(*c));
    char body[8192], idpart[300] = "";
    if (id != NULL)
        snprintf(idpart, sizeof(idpart), "\"id\":{\"value\":\"%s\"},", id);
    snprintf(body, sizeof(body),
             "{\"type\":\"SUBSCRIBE\",\"subscribe\":{\"agent_info\":{%s"
             "\"hostname\":\"host1\",\"port\":5051,\"resources\":%s},"
             "\"checkpointed_resources\":%s,"
             "\"checkpointed_resources_version\":%d,\"version\":\"test\"}}",
             idpart, RES, ckpt, version);
    const char *headers[] = {"Content-Type: application/json", NULL};
    ck_assert_int_eq(e2e_stream_open(master.port, "POST", "/api/v1/agent",
                                     headers, body, strlen(body), T, &c->s),
                     0);
    ck_assert_int_eq(c->s.head.status, 200);
    snprintf(c->stream_id, sizeof(c->stream_id), "%s",
             e2e_response_header(&c->s.head, "Mesos-Stream-Id"));
    json_t *ev = api_wait_event(c, "REGISTERED", T);
    ck_assert_ptr_nonnull(ev);
    snprintf(c->id, sizeof(c->id), "%s",
             json_string_value(json_object_get(
                 json_object_get(json_object_get(ev, "registered"), "agent_id"),
                 "value")));
    json_decref(ev);
}

/* The next CHECKPOINT_RESOURCES of the agent: its version, and the number
 * of resources in *n. */
static int next_checkpoint(struct conn *ag, size_t *n, bool *has_volume)
{
    json_t *ev = api_wait_event(ag, "CHECKPOINT_RESOURCES", T);
    ck_assert_msg(ev != NULL, "no CHECKPOINT_RESOURCES");
    json_t *cr = json_object_get(ev, "checkpoint_resources");
    json_t *res = json_object_get(cr, "resources");
    *n = json_array_size(res);
    *has_volume = false;
    size_t i;
    json_t *r;
    json_array_foreach(res, i, r)
    {
        if (json_object_get(json_object_get(r, "disk"), "persistence") != NULL)
            *has_volume = true;
    }
    int v = (int)json_integer_value(json_object_get(cr, "version"));
    json_decref(ev);
    return v;
}

/* Wait for an offer to fw; count its reserved resources and volumes. */
static json_t *offer_of(struct conn *fw, char *offer_id, char *agent_id,
                        int *reserved, int *volumes)
{
    json_t *ev = api_wait_offer(fw, offer_id, agent_id, T);
    if (ev == NULL)
        return NULL;
    *reserved = 0;
    *volumes = 0;
    json_t *offer = json_array_get(
        json_object_get(json_object_get(ev, "offers"), "offers"), 0);
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(offer, "resources"), i, r)
    {
        if (json_array_size(json_object_get(r, "reservations")) > 0)
            (*reserved)++;
        if (json_object_get(json_object_get(r, "disk"), "persistence") != NULL)
            (*volumes)++;
    }
    return ev;
}

static int accept_ops(struct conn *fw, const char *offer_id,
                      const char *operations)
{
    char payload[8192];
    snprintf(payload, sizeof(payload),
             "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":%s,"
             "\"filters\":{\"refuse_seconds\":0}}",
             offer_id, operations);
    return api_fw_call(fw, master.port, "ACCEPT", "accept", payload);
}

static int form_post(const char *path, const char *form)
{
    const char *headers[] = {"Content-Type: application/x-www-form-urlencoded",
                             NULL};
    struct e2e_response r;
    ck_assert_int_eq(
        e2e_http(master.port, "POST", path, headers, form, strlen(form), T, &r),
        0);
    int st = r.status;
    if (st >= 400)
        ck_assert_msg(strlen(r.body) > 1, "%s: %d without a reason", path, st);
    e2e_response_free(&r);
    return st;
}

/* An operation error reported to fw; its message must contain `want`. */
static void expect_operation_error(struct conn *fw, const char *want)
{
    json_t *ev = api_wait_event(fw, "UPDATE_OPERATION_STATUS", T);
    ck_assert_msg(ev != NULL, "no operation status (%s)", want);
    json_t *st = json_object_get(json_object_get(ev, "update_operation_status"),
                                 "status");
    ck_assert_str_eq(json_string_value(json_object_get(st, "state")),
                     "OPERATION_ERROR");
    const char *msg = json_string_value(json_object_get(st, "message"));
    ck_assert_msg(msg != NULL && strstr(msg, want) != NULL, "message: %s", msg);
    json_decref(ev);
}

START_TEST(test_framework_reserves_and_creates_a_volume)
{
    start();
    struct conn ag, a, b;
    subscribe_agent(&ag, NULL, 0, "[]");
    api_subscribe_framework(&a, master.port, FW_A);
    char offer[256], agent[256];
    int reserved, volumes;
    json_t *ev = offer_of(&a, offer, agent, &reserved, &volumes);
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
    ck_assert_int_eq(reserved, 0);

    /* RESERVE cpus, mem and disk to role a. */
    ck_assert_int_eq(
        accept_ops(
            &a, offer,
            "[{\"type\":\"RESERVE\",\"reserve\":{\"resources\":[" RESV(
                "cpus", "1") "," RESV("mem", "128") "," RESV("disk",
                                                             "100") "]}}]"),
        202);
    size_t n;
    bool vol;
    ck_assert_int_eq(next_checkpoint(&ag, &n, &vol), 1);
    ck_assert_int_eq(n, 3);
    ck_assert(!vol);
    /* Offered back reserved. */
    ev = offer_of(&a, offer, agent, &reserved, &volumes);
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
    ck_assert_int_eq(reserved, 3);

    /* CREATE a volume on the reserved disk. */
    ck_assert_int_eq(
        accept_ops(&a, offer,
                   "[{\"type\":\"CREATE\",\"create\":{\"volumes\":[" VOLUME
                   "]}}]"),
        202);
    ck_assert_int_eq(next_checkpoint(&ag, &n, &vol), 2);
    ck_assert(vol);
    ev = offer_of(&a, offer, agent, &reserved, &volumes);
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
    ck_assert_int_eq(volumes, 1);

    /* A framework of role b is offered none of it (a steps aside). */
    ck_assert_int_eq(api_decline(&a, master.port, offer, 60), 202);
    api_subscribe_framework(&b, master.port, FW_B);
    json_t *bev = offer_of(&b, offer + 128, agent, &reserved, &volumes);
    ck_assert_ptr_nonnull(bev);
    json_decref(bev);
    ck_assert_int_eq(reserved, 0);
    ck_assert_int_eq(volumes, 0);

    /* Refusals: b reserving with a's principal and role; a reserving
     * revocable resources. */
    char bad[2048];
    snprintf(
        bad, sizeof(bad),
        "[{\"type\":\"RESERVE\",\"id\":{\"value\":\"bad1\"},"
        "\"reserve\":{\"resources\":[{\"name\":\"cpus\",\"type\":\"SCALAR\","
        "\"scalar\":{\"value\":0.1},"
        "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"b\","
        "\"principal\":\"p1\"}],\"allocation_info\":{\"role\":\"b\"}}]}}]");
    ck_assert_int_eq(accept_ops(&b, offer + 128, bad), 202);
    expect_operation_error(&b, "principal");
    ck_assert_int_eq(api_fw_call(&a, master.port, "REVIVE", NULL, NULL), 202);
    ev = offer_of(&a, offer, agent, &reserved, &volumes);
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
    ck_assert_int_eq(
        accept_ops(&a, offer,
                   "[{\"type\":\"RESERVE\",\"id\":{\"value\":\"bad2\"},"
                   "\"reserve\":{\"resources\":[{"
                   "\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{"
                   "\"value\":0.1},\"revocable\":{},\"reservations\":[{"
                   "\"type\":\"DYNAMIC\",\"role\":\"a\",\"principal\":\"p1\"}]"
                   ",\"allocation_info\":{\"role\":\"a\"}}]}}]"),
        202);
    expect_operation_error(&a, "revocable");

    /* A task on the volume; then DESTROY is refused while it runs. */
    ev = offer_of(&a, offer, agent, &reserved, &volumes);
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
    char ops[4096];
    snprintf(ops, sizeof(ops),
             "[{\"type\":\"LAUNCH\",\"launch\":{\"task_infos\":[{\"name\":"
             "\"t\",\"task_id\":{\"value\":\"writer\"},\"agent_id\":{"
             "\"value\":\"%s\"},\"resources\":[" RESV(
                 "cpus",
                 "0.5") "," VOLUME
                        "],\"command\":{\"value\":\"echo hi > data/f\"}}]}}]",
             agent);
    ck_assert_int_eq(accept_ops(&a, offer, ops), 202);
    json_t *run = api_wait_event(&ag, "RUN_TASK", T);
    ck_assert_ptr_nonnull(run);
    json_decref(run);
    char form[4096];
    snprintf(form, sizeof(form), "slaveId=%s&volumes=[" VOLUME "]", ag.id);
    /* (the JSON has no '&', '+' or '%': it needs no encoding here) */
    ck_assert_int_eq(form_post("/destroy-volumes", form), 409);
    /* The framework's DESTROY of the used volume is refused too. */
    ev = offer_of(&a, offer, agent, &reserved, &volumes);
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
    ck_assert_int_eq(
        accept_ops(&a, offer,
                   "[{\"type\":\"DESTROY\",\"id\":{\"value\":\"bad3\"},"
                   "\"destroy\":{\"volumes\":[" VOLUME "]}}]"),
        202);
    expect_operation_error(&a, "in use");
    api_conn_close(&a);
    api_conn_close(&b);
    api_conn_close(&ag);
    e2e_proc_cleanup(&master);
}
END_TEST

/* The operator endpoints: codes and effects; then a master restart keeps the
 * reservations and sends them to an agent that lost them. */
START_TEST(test_operator_and_restart)
{
    start();
    struct conn ag;
    subscribe_agent(&ag, NULL, 0, "[]");
    char form[4096];
    /* Reserve cpus:1 to role c. */
#define OP_RES                                                                 \
    "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1},"        \
    "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"c\",\"principal\":"    \
    "\"ops\"}]}]"
    snprintf(form, sizeof(form), "slaveId=%s&resources=" OP_RES, ag.id);
    ck_assert_int_eq(form_post("/reserve", form), 202);
    size_t n;
    bool vol;
    ck_assert_int_eq(next_checkpoint(&ag, &n, &vol), 1);
    ck_assert_int_eq(n, 1);
    /* Bad inputs. */
    ck_assert_int_eq(form_post("/reserve", "resources=" OP_RES), 400);
    ck_assert_int_eq(form_post("/reserve", "slaveId=nope&resources=" OP_RES),
                     400);
    snprintf(form, sizeof(form), "slaveId=%s&resources=[{\"name\":", ag.id);
    ck_assert_int_eq(form_post("/reserve", form), 400);
    snprintf(form, sizeof(form),
             "slaveId=%s&resources=[{\"name\":\"cpus\",\"type\":\"SCALAR\","
             "\"scalar\":{\"value\":5},\"reservations\":[{\"type\":"
             "\"DYNAMIC\",\"role\":\"c\"}]}]",
             ag.id);
    ck_assert_int_eq(form_post("/reserve", form), 409);
    snprintf(form, sizeof(form),
             "slaveId=%s&resources=[{\"name\":\"cpus\",\"type\":\"SCALAR\","
             "\"scalar\":{\"value\":1}}]",
             ag.id);
    ck_assert_int_eq(form_post("/reserve", form), 400);
    ck_assert_int_eq(form_post("/unreserve", form), 400);
    /* The same through /api/v1: reserve mem to c, unreserve it again. */
    char call[4096];
    snprintf(call, sizeof(call),
             "{\"type\":\"RESERVE_RESOURCES\",\"reserve_resources\":{"
             "\"agent_id\":{\"value\":\"%s\"},\"resources\":[{\"name\":"
             "\"mem\",\"type\":\"SCALAR\",\"scalar\":{\"value\":64},"
             "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"c\"}]}]}}",
             ag.id);
    ck_assert_int_eq(api_post(master.port, "/api/v1", NULL, call, NULL, 0),
                     202);
    ck_assert_int_eq(next_checkpoint(&ag, &n, &vol), 2);
    ck_assert_int_eq(n, 2);
    snprintf(call, sizeof(call),
             "{\"type\":\"UNRESERVE_RESOURCES\",\"unreserve_resources\":{"
             "\"agent_id\":{\"value\":\"%s\"},\"resources\":[{\"name\":"
             "\"mem\",\"type\":\"SCALAR\",\"scalar\":{\"value\":64},"
             "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"c\"}]}]}}",
             ag.id);
    ck_assert_int_eq(api_post(master.port, "/api/v1", NULL, call, NULL, 0),
                     202);
    ck_assert_int_eq(next_checkpoint(&ag, &n, &vol), 3);
    ck_assert_int_eq(n, 1);

    /* A volume id that cannot name a directory is refused. */
    snprintf(call, sizeof(call),
             "{\"type\":\"CREATE_VOLUMES\",\"create_volumes\":{\"agent_id\":{"
             "\"value\":\"%s\"},\"volumes\":[{\"name\":\"disk\",\"type\":"
             "\"SCALAR\",\"scalar\":{\"value\":10},\"reservations\":[{"
             "\"type\":\"DYNAMIC\",\"role\":\"c\"}],\"disk\":{"
             "\"persistence\":{\"id\":\"../../evil\"},\"volume\":{"
             "\"container_path\":\"data\",\"mode\":\"RW\"}}}]}}",
             ag.id);
    char reason[512];
    ck_assert_int_eq(
        api_post(master.port, "/api/v1", NULL, call, reason, sizeof(reason)),
        400);
    ck_assert_ptr_nonnull(strstr(reason, "persistence id"));

    /* /roles shows the reservation; the master restarts; the agent comes
     * back having lost its checkpoint (version 0): the master sends it
     * its list again. */
    json_t *roles = api_get_json(master.port, "/slaves");
    json_t *rr =
        json_object_get(json_array_get(json_object_get(roles, "slaves"), 0),
                        "reserved_resources");
    ck_assert_ptr_nonnull(json_object_get(rr, "c"));
    json_decref(roles);
    char id[256];
    snprintf(id, sizeof(id), "%s", ag.id);
    api_conn_close(&ag);
    ck_assert_int_eq(e2e_proc_stop(&master, SIGTERM, 5000), 0);
    const char *args[] = {"--allocation_interval=50ms", NULL};
    ck_assert_int_eq(e2e_restart_master(&master, args), 0);
    subscribe_agent(&ag, id, 0, "[]");
    ck_assert_int_eq(next_checkpoint(&ag, &n, &vol), 3);
    ck_assert_int_eq(n, 1);
    roles = api_get_json(master.port, "/slaves");
    rr = json_object_get(json_array_get(json_object_get(roles, "slaves"), 0),
                         "reserved_resources");
    ck_assert_ptr_nonnull(json_object_get(rr, "c"));
    json_decref(roles);
    api_conn_close(&ag);
    e2e_proc_cleanup(&master);
}
END_TEST

static Suite *reservations_suite(void)
{
    Suite *s = suite_create("e2e_reservations");
    TCase *tc = tcase_create("reservations");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_framework_reserves_and_creates_a_volume);
    tcase_add_test(tc, test_operator_and_restart);
    suite_add_tcase(s, tc);
    return s;
}

E2E_CHECK_MAIN(reservations_suite)
