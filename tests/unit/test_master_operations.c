/*
 * Offer operation feedback (master/operations.c) without sockets: RESERVE,
 * UNRESERVE, CREATE and DESTROY of an ACCEPT with and without an id, the
 * UPDATE_OPERATION_STATUS events (OPERATION_FINISHED once durable,
 * OPERATION_ERROR on refusal, OPERATION_FAILED when the registry refuses),
 * ACKNOWLEDGE_OPERATION_STATUS, RECONCILE_OPERATIONS and GET_OPERATIONS,
 * and what becomes of them when their agent is removed.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "master/agents.h"
#include "master/frameworks.h"
#include "master/master_types.h"
#include "master/operations.h"
#include "master/registry_mem.h"
#include "master_fixture.h"

#define FW_INFO                                                                \
    "{\"user\":\"u\",\"name\":\"fw\",\"roles\":[\"web\"],\"principal\":"       \
    "\"p1\",\"failover_timeout\":600,\"capabilities\":[{\"type\":"             \
    "\"MULTI_ROLE\"}]}"

/* Offer resources reserved (or not) to web, allocated to web. */
#define RESV(name, value)                                                      \
    "{\"name\":\"" name "\",\"type\":\"SCALAR\",\"scalar\":{\"value\":" value  \
    "},\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"web\","              \
    "\"principal\":\"p1\"}],\"allocation_info\":{\"role\":\"web\"}}"
#define VOLUME                                                                 \
    "{\"name\":\"disk\",\"type\":\"SCALAR\",\"scalar\":{\"value\":100},"       \
    "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"web\",\"principal\":"  \
    "\"p1\"}],\"disk\":{\"persistence\":{\"id\":\"v1\",\"principal\":\"p1\"}," \
    "\"volume\":{\"container_path\":\"data\",\"mode\":\"RW\"}},"               \
    "\"allocation_info\":{\"role\":\"web\"}}"

MFX_STANDARD_FIXTURE

static char OFFER[256];

static void setup_offer(void)
{
    mfx_start(&X, NULL);
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024;disk:1000");
    json_decref(mfx_first_offer(&X, &FW, OFFER));
}

/* ACCEPT the current offer with one operation: type, the name of its list
 * of resources and their JSON, with id (NULL: none). Returns the status. */
static int accept_op(const char *type, const char *id, const char *list,
                     const char *resources)
{
    char idj[MASTER_MAX_OPERATION_ID + 64] = "", payload[8192];
    if (id != NULL)
        snprintf(idj, sizeof(idj), "\"id\":{\"value\":\"%s\"},", id);
    char lower[32];
    size_t i = 0;
    for (; type[i] != '\0' && i + 1 < sizeof(lower); i++)
        lower[i] = (char)(type[i] - 'A' + 'a');
    lower[i] = '\0';
    snprintf(payload, sizeof(payload),
             "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{\"type\":"
             "\"%s\",%s\"%s\":{\"%s\":[%s]}}],\"filters\":{"
             "\"refuse_seconds\":0}}",
             OFFER, type, idj, lower, list, resources);
    return mfx_framework_call(&X, &FW, "ACCEPT", "accept", payload);
}

/* The next offer to FW, its id into OFFER. */
static void next_offer(void)
{
    json_decref(mfx_first_offer(&X, &FW, OFFER));
}

/* The status of an UPDATE_OPERATION_STATUS event (borrowed from ev). */
static json_t *status_of(json_t *ev)
{
    return json_object_get(json_object_get(ev, "update_operation_status"),
                           "status");
}

static const char *str(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static const char *op_id_of(json_t *st)
{
    return str(json_object_get(st, "operation_id"), "value");
}

/* Wait for FW's next operation status: its state must be want, its
 * operation id op_id; with_uuid says whether it must carry a uuid (copied
 * into uuid, 64 bytes, when not NULL). Returns the event (decref it). */
static json_t *expect_status(const char *want, const char *op_id,
                             bool with_uuid, char *uuid)
{
    json_t *ev = mfx_next_event(&X, &FW, "UPDATE_OPERATION_STATUS");
    ck_assert_msg(ev != NULL, "no operation status (%s)", want);
    json_t *st = status_of(ev);
    ck_assert_str_eq(str(st, "state"), want);
    ck_assert_str_eq(op_id_of(st), op_id);
    json_t *u = json_object_get(st, "uuid");
    ck_assert_int_eq(u != NULL, with_uuid);
    if (uuid != NULL && u != NULL)
        snprintf(uuid, 64, "%s", str(u, "value"));
    return ev;
}

static int acknowledge(const char *agent_id, const char *op_id,
                       const char *uuid)
{
    char payload[512];
    snprintf(payload, sizeof(payload),
             "{\"agent_id\":{\"value\":\"%s\"},\"operation_id\":{\"value\":"
             "\"%s\"},\"uuid\":\"%s\"}",
             agent_id, op_id, uuid);
    return mfx_framework_call(&X, &FW, "ACKNOWLEDGE_OPERATION_STATUS",
                              "acknowledge_operation_status", payload);
}

/* GET_OPERATIONS: the operations listed (decref). */
static json_t *get_operations(void)
{
    struct http_fake *f = mfx_operator(&X, "{\"type\":\"GET_OPERATIONS\"}");
    ck_assert_int_eq(http_fake_status(f), 200);
    json_error_t e;
    json_t *j = json_loads(mfx_body(f), 0, &e);
    ck_assert_msg(j != NULL, "not JSON: %s", mfx_body(f));
    http_fake_free(f);
    json_t *ops =
        json_object_get(json_object_get(j, "get_operations"), "operations");
    json_t *r = ops != NULL ? json_incref(ops) : json_array();
    json_decref(j);
    return r;
}

static size_t operations_kept(void)
{
    json_t *ops = get_operations();
    size_t n = json_array_size(ops);
    json_decref(ops);
    return n;
}

/* The value of one metric. */
static double metric(const char *name)
{
    return mfx_metric(&X, name);
}

/* Each kind with an id: OPERATION_FINISHED with a uuid and the agent id,
 * after the change is durable (the agent has its checkpointed resources);
 * acknowledged, the operation is forgotten. */
START_TEST(test_each_kind_with_id_finishes)
{
    static const struct {
        const char *type, *id, *list, *res;
    } steps[] = {
        {"RESERVE", "r1", "resources", RESV("disk", "100")},
        {"CREATE", "c1", "volumes", VOLUME},
        {"DESTROY", "d1", "volumes", VOLUME},
        {"UNRESERVE", "u1", "resources", RESV("disk", "100")},
    };
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        if (i > 0)
            next_offer();
        ck_assert_int_eq(
            accept_op(steps[i].type, steps[i].id, steps[i].list, steps[i].res),
            202);
        char uuid[64];
        json_t *ev =
            expect_status("OPERATION_FINISHED", steps[i].id, true, uuid);
        ck_assert_str_eq(
            str(json_object_get(status_of(ev), "agent_id"), "value"), AG.id);
        json_decref(ev);
        /* Durable before: the agent was sent its checkpointed resources. */
        ev = mfx_next_event(&X, &AG, "CHECKPOINT_RESOURCES");
        ck_assert_ptr_nonnull(ev);
        json_decref(ev);
        /* Kept until acknowledged. */
        json_t *ops = get_operations();
        ck_assert_uint_eq(json_array_size(ops), 1);
        json_t *op = json_array_get(ops, 0);
        ck_assert_str_eq(str(json_object_get(op, "framework_id"), "value"),
                         FW.id);
        ck_assert_str_eq(str(json_object_get(op, "latest_status"), "state"),
                         "OPERATION_FINISHED");
        ck_assert_str_eq(str(json_object_get(op, "info"), "type"),
                         steps[i].type);
        ck_assert_ptr_nonnull(json_object_get(op, "uuid"));
        json_decref(ops);
        ck_assert_int_eq(acknowledge(AG.id, steps[i].id, uuid), 202);
        ck_assert_uint_eq(operations_kept(), 0);
    }
    struct agent *ag = master_agent_find(X.m, AG.id);
    ck_assert_uint_eq(ag->ckpt_version, 4);
    ck_assert_uint_eq(ag->ckpt.n, 0);
    /* Mesos's metrics: lifetime totals for terminal states. */
    ck_assert(metric("master/operations/total") == 4);
    ck_assert(metric("master/operations/finished") == 4);
    ck_assert(metric("master/operations/pending") == 0);
    ck_assert(metric("master/operations/create/finished") == 1);
    ck_assert(metric("master/operations/unreserve/total") == 1);
    ck_assert(metric("master/operations/grow_volume/total") == 0);
}
END_TEST

/* Without an id: the same changes, no operation status at all, nothing
 * kept. */
START_TEST(test_each_kind_without_id_no_feedback)
{
    static const struct {
        const char *type, *list, *res;
    } steps[] = {
        {"RESERVE", "resources", RESV("disk", "100")},
        {"CREATE", "volumes", VOLUME},
        {"DESTROY", "volumes", VOLUME},
        {"UNRESERVE", "resources", RESV("disk", "100")},
    };
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        if (i > 0)
            next_offer();
        ck_assert_int_eq(
            accept_op(steps[i].type, NULL, steps[i].list, steps[i].res), 202);
        json_t *ev = mfx_next_event(&X, &AG, "CHECKPOINT_RESOURCES");
        ck_assert_ptr_nonnull(ev);
        json_decref(ev);
        ck_assert_uint_eq(operations_kept(), 0);
    }
    mfx_settle(&X);
    ck_assert(!mfx_has_event(&FW, "UPDATE_OPERATION_STATUS"));
    ck_assert_uint_eq(master_agent_find(X.m, AG.id)->ckpt_version, 4);
}
END_TEST

/* A refused operation with an id: OPERATION_ERROR with the reason, no
 * uuid, no agent id (as Mesos's drop()); nothing changed, nothing kept.
 * Without an id: no event at all. */
START_TEST(test_refusal_is_operation_error)
{
    long stored = registry_mem_count(X.store, NULL);
    /* Unreserving what is not reserved. */
    ck_assert_int_eq(
        accept_op("UNRESERVE", "bad1", "resources", RESV("cpus", "1")), 202);
    json_t *ev = expect_status("OPERATION_ERROR", "bad1", false, NULL);
    json_t *st = status_of(ev);
    ck_assert_ptr_null(json_object_get(st, "agent_id"));
    ck_assert_ptr_nonnull(strstr(str(st, "message"), "UNRESERVE refused"));
    json_decref(ev);
    /* More than offered. */
    next_offer();
    ck_assert_int_eq(
        accept_op("RESERVE", "bad2", "resources", RESV("cpus", "8")), 202);
    ev = expect_status("OPERATION_ERROR", "bad2", false, NULL);
    json_decref(ev);
    /* The same without an id: silence. */
    next_offer();
    ck_assert_int_eq(accept_op("RESERVE", NULL, "resources", RESV("cpus", "8")),
                     202);
    next_offer(); /* the resources came back, and no status before them */
    ck_assert(!mfx_has_event(&FW, "UPDATE_OPERATION_STATUS"));
    /* Nothing changed. */
    struct agent *ag = master_agent_find(X.m, AG.id);
    ck_assert_uint_eq(ag->ckpt_version, 0);
    ck_assert_uint_eq(ag->ckpt.n, 0);
    ck_assert(!mfx_has_event(&AG, "CHECKPOINT_RESOURCES"));
    ck_assert_int_eq(registry_mem_count(X.store, NULL), stored);
    ck_assert_uint_eq(operations_kept(), 0);
    /* Counted with or without an id. */
    ck_assert(metric("master/operations/error") == 3);
    ck_assert(metric("master/operations/reserve/error") == 2);
    ck_assert(metric("master/operations/unreserve/error") == 1);
    ck_assert(metric("master/operations/finished") == 0);
}
END_TEST

/* An ACCEPT of an unknown offer: its operations with an id get
 * OPERATION_ERROR. */
START_TEST(test_invalid_offer_is_operation_error)
{
    snprintf(OFFER, sizeof(OFFER), "no-such-offer");
    ck_assert_int_eq(accept_op("RESERVE", "r1", "resources", RESV("cpus", "1")),
                     202);
    json_t *ev = expect_status("OPERATION_ERROR", "r1", false, NULL);
    ck_assert_ptr_nonnull(
        strstr(str(status_of(ev), "message"), "invalid offers"));
    json_decref(ev);
    ck_assert_uint_eq(operations_kept(), 0);
}
END_TEST

/* An id still kept (terminal, not acknowledged) cannot be used again. */
START_TEST(test_duplicate_id_refused)
{
    ck_assert_int_eq(accept_op("RESERVE", "r1", "resources", RESV("cpus", "1")),
                     202);
    json_decref(expect_status("OPERATION_FINISHED", "r1", true, NULL));
    next_offer();
    ck_assert_int_eq(accept_op("RESERVE", "r1", "resources", RESV("mem", "10")),
                     202);
    json_t *ev = expect_status("OPERATION_ERROR", "r1", false, NULL);
    ck_assert_ptr_nonnull(strstr(str(status_of(ev), "message"), "r1"));
    json_decref(ev);
    /* Empty and too long ids. */
    next_offer();
    ck_assert_int_eq(accept_op("RESERVE", "", "resources", RESV("mem", "10")),
                     202);
    json_decref(expect_status("OPERATION_ERROR", "", false, NULL));
    char long_id[MASTER_MAX_OPERATION_ID + 2];
    memset(long_id, 'x', sizeof(long_id) - 1);
    long_id[sizeof(long_id) - 1] = '\0';
    next_offer();
    ck_assert_int_eq(
        accept_op("RESERVE", long_id, "resources", RESV("mem", "10")), 202);
    json_decref(expect_status("OPERATION_ERROR", long_id, false, NULL));
    ck_assert_uint_eq(master_agent_find(X.m, AG.id)->ckpt_version, 1);
    ck_assert_uint_eq(operations_kept(), 1);
}
END_TEST

static bool offer_has_reservation(json_t *ev)
{
    json_t *offers = json_object_get(json_object_get(ev, "offers"), "offers");
    for (size_t i = 0; i < json_array_size(offers); i++) {
        json_t *res = json_object_get(json_array_get(offers, i), "resources");
        for (size_t k = 0; k < json_array_size(res); k++)
            if (json_object_get(json_array_get(res, k), "reservations"))
                return true;
    }
    return false;
}

/* The registry refuses the change: OPERATION_FAILED with a uuid, the change
 * undone (the resources are offered unreserved again), the agent not told;
 * the failure is acknowledged like any terminal status. */
START_TEST(test_registry_failure_is_operation_failed)
{
    registry_mem_set_failing(X.store, true);
    ck_assert_int_eq(accept_op("RESERVE", "r1", "resources", RESV("cpus", "1")),
                     202);
    char uuid[64];
    json_t *ev = expect_status("OPERATION_FAILED", "r1", true, uuid);
    ck_assert_ptr_nonnull(
        strstr(str(status_of(ev), "message"), "registry write failed"));
    json_decref(ev);
    registry_mem_set_failing(X.store, false);
    ck_assert(!mfx_has_event(&AG, "CHECKPOINT_RESOURCES"));
    struct agent *ag = master_agent_find(X.m, AG.id);
    ck_assert_uint_eq(ag->ckpt.n, 0);
    ev = mfx_next_event(&X, &FW, "OFFERS");
    ck_assert_ptr_nonnull(ev);
    ck_assert(!offer_has_reservation(ev));
    json_decref(ev);
    ck_assert_uint_eq(operations_kept(), 1);
    ck_assert_int_eq(acknowledge(AG.id, "r1", uuid), 202);
    ck_assert_uint_eq(operations_kept(), 0);
    ck_assert(metric("master/operations/reserve/failed") == 1);
    ck_assert(metric("master/operations/pending") == 0);
}
END_TEST

/* Without an id the registry's refusal is silent, and undone too. */
static bool ckpt_empty(void *arg)
{
    (void)arg;
    return master_agent_find(X.m, AG.id)->ckpt.n == 0;
}

START_TEST(test_registry_failure_without_id_undone)
{
    registry_mem_set_failing(X.store, true);
    ck_assert_int_eq(accept_op("RESERVE", NULL, "resources", RESV("cpus", "1")),
                     202);
    struct agent *ag = master_agent_find(X.m, AG.id);
    ck_assert_uint_eq(ag->ckpt_version, 1); /* the write was asked for */
    ck_assert(mfx_run_until(&X, ckpt_empty, NULL));
    registry_mem_set_failing(X.store, false);
    const res_list *total = alloc_agent_total(ag->alloc);
    for (uint32_t i = 0; i < total->n; i++)
        ck_assert(!res_is_dynamically_reserved(&total->v[i]));
    for (uint32_t i = 0; i < ag->total.n; i++)
        ck_assert(!res_is_dynamically_reserved(&ag->total.v[i]));
    mfx_settle(&X);
    ck_assert(!mfx_has_event(&FW, "UPDATE_OPERATION_STATUS"));
    ck_assert(!mfx_has_event(&AG, "CHECKPOINT_RESOURCES"));
}
END_TEST

/* Acknowledgements Mesos ignores (202, nothing forgotten) and those it
 * refuses as malformed (400). */
START_TEST(test_acknowledgement_answers)
{
    ck_assert_int_eq(accept_op("RESERVE", "r1", "resources", RESV("cpus", "1")),
                     202);
    char uuid[64];
    json_decref(expect_status("OPERATION_FINISHED", "r1", true, uuid));
    /* 16 bytes of another uuid, base64. */
    const char *other = "AAAAAAAAAAAAAAAAAAAAAA==";
    ck_assert_int_eq(acknowledge(AG.id, "r1", other), 202);
    ck_assert_int_eq(acknowledge("other-agent", "r1", uuid), 202);
    ck_assert_int_eq(acknowledge(AG.id, "nobody", uuid), 202);
    ck_assert_uint_eq(operations_kept(), 1);
    /* Malformed. */
    ck_assert_int_eq(acknowledge(AG.id, "r1", "AAAA"), 400);
    char payload[256];
    snprintf(payload, sizeof(payload),
             "{\"operation_id\":{\"value\":\"r1\"},\"uuid\":\"%s\"}", uuid);
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "ACKNOWLEDGE_OPERATION_STATUS",
                                        "acknowledge_operation_status",
                                        payload),
                     400);
    ck_assert_int_eq(
        mfx_framework_call(&X, &FW, "ACKNOWLEDGE_OPERATION_STATUS", NULL, NULL),
        400);
    ck_assert_uint_eq(operations_kept(), 1);
    /* The right one. */
    ck_assert_int_eq(acknowledge(AG.id, "r1", uuid), 202);
    ck_assert_uint_eq(operations_kept(), 0);
    /* Once more: unknown now, still 202. */
    ck_assert_int_eq(acknowledge(AG.id, "r1", uuid), 202);
    /* Counted as Mesos counts them (the malformed ones never got here). */
    ck_assert_uint_eq(
        X.m->metrics.messages_operation_status_update_acknowledgement, 5);
    ck_assert_uint_eq(
        X.m->metrics.valid_operation_status_update_acknowledgements, 1);
    ck_assert_uint_eq(
        X.m->metrics.invalid_operation_status_update_acknowledgements, 4);
}
END_TEST

static int reconcile(const char *ops)
{
    char payload[2048];
    snprintf(payload, sizeof(payload), "{\"operations\":%s}", ops);
    return mfx_framework_call(&X, &FW, "RECONCILE_OPERATIONS",
                              "reconcile_operations", payload);
}

/* RECONCILE_OPERATIONS: 202, then one UPDATE_OPERATION_STATUS per
 * operation, without uuid: the latest state of a known one, Mesos's
 * OPERATION_UNKNOWN for the others; all kept ones when the list is
 * empty. */
START_TEST(test_reconciliation_answers)
{
    ck_assert_int_eq(accept_op("RESERVE", "r1", "resources", RESV("cpus", "1")),
                     202);
    char uuid[64];
    json_decref(expect_status("OPERATION_FINISHED", "r1", true, uuid));
    char ops[1024];
    snprintf(ops, sizeof(ops),
             "[{\"operation_id\":{\"value\":\"r1\"},\"agent_id\":{\"value\":"
             "\"%s\"}},{\"operation_id\":{\"value\":\"x\"},\"agent_id\":{"
             "\"value\":\"%s\"}},{\"operation_id\":{\"value\":\"y\"},"
             "\"agent_id\":{\"value\":\"nobody\"}},{\"operation_id\":{"
             "\"value\":\"z\"}}]",
             AG.id, AG.id);
    ck_assert_int_eq(reconcile(ops), 202);
    static const struct {
        const char *id, *state, *message;
    } want[] = {
        {"r1", "OPERATION_FINISHED", NULL},
        {"x", "OPERATION_UNKNOWN", "Operation is unknown"},
        {"y", "OPERATION_UNKNOWN", "Both operation and agent are unknown"},
        {"z", "OPERATION_UNKNOWN", "no 'agent_id'"},
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        json_t *ev = expect_status(want[i].state, want[i].id, false, NULL);
        if (want[i].message != NULL)
            ck_assert_ptr_nonnull(
                strstr(str(status_of(ev), "message"), want[i].message));
        json_decref(ev);
    }
    /* Implicit: every operation kept. */
    ck_assert_int_eq(reconcile("[]"), 202);
    json_decref(expect_status("OPERATION_FINISHED", "r1", false, NULL));
    /* Acknowledged: forgotten, so unknown. */
    ck_assert_int_eq(acknowledge(AG.id, "r1", uuid), 202);
    ck_assert_int_eq(reconcile("[]"), 202);
    snprintf(ops, sizeof(ops),
             "[{\"operation_id\":{\"value\":\"r1\"},\"agent_id\":{\"value\":"
             "\"%s\"}}]",
             AG.id);
    ck_assert_int_eq(reconcile(ops), 202);
    json_decref(expect_status("OPERATION_UNKNOWN", "r1", false, NULL));
    ck_assert(!mfx_has_event(&FW, "UPDATE_OPERATION_STATUS"));
    /* The payload is required. */
    ck_assert_int_eq(
        mfx_framework_call(&X, &FW, "RECONCILE_OPERATIONS", NULL, NULL), 400);
    ck_assert_uint_eq(X.m->metrics.messages_reconcile_operations, 4);
}
END_TEST

/* A LAUNCH with an id: TASK_ERROR (launches get no operation feedback),
 * nothing launched. */
START_TEST(test_launch_with_id_is_task_error)
{
    char payload[2048];
    snprintf(payload, sizeof(payload),
             "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{"
             "\"type\":\"LAUNCH\",\"id\":{\"value\":\"l1\"},\"launch\":{"
             "\"task_infos\":[{\"name\":\"t\",\"task_id\":{\"value\":"
             "\"t1\"},\"agent_id\":{\"value\":\"%s\"},\"command\":{"
             "\"value\":\"true\"},\"resources\":[{\"name\":\"cpus\","
             "\"type\":\"SCALAR\",\"scalar\":{\"value\":1}}]}]}}]}",
             OFFER, AG.id);
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "ACCEPT", "accept", payload),
                     202);
    json_t *ev = mfx_next_event(&X, &FW, "UPDATE");
    ck_assert_ptr_nonnull(ev);
    json_t *st = json_object_get(json_object_get(ev, "update"), "status");
    ck_assert_str_eq(str(st, "state"), "TASK_ERROR");
    ck_assert_str_eq(str(st, "reason"), "REASON_TASK_INVALID");
    ck_assert_ptr_nonnull(strstr(str(st, "message"), "`id`"));
    json_decref(ev);
    ck_assert(!mfx_has_event(&AG, "RUN_TASK"));
    ck_assert_uint_eq(operations_kept(), 0);
}
END_TEST

/* An unacknowledged terminal update is re-sent with the same uuid until
 * it is acknowledged. */
START_TEST(test_terminal_update_resent_until_acknowledged)
{
    master_ops_set_retry_ms(X.m, 20);
    ck_assert_int_eq(accept_op("RESERVE", "r1", "resources", RESV("cpus", "1")),
                     202);
    char first[64], again[64];
    json_decref(expect_status("OPERATION_FINISHED", "r1", true, first));
    json_decref(expect_status("OPERATION_FINISHED", "r1", true, again));
    ck_assert_str_eq(first, again);
    json_decref(expect_status("OPERATION_FINISHED", "r1", true, again));
    ck_assert_str_eq(first, again);
    ck_assert_int_eq(acknowledge(AG.id, "r1", first), 202);
    /* Forgotten, its timer with it. */
    ck_assert_uint_eq(operations_kept(), 0);
}
END_TEST

/* A framework torn down: its operations are forgotten. */
START_TEST(test_removed_framework_operations_forgotten)
{
    ck_assert_int_eq(accept_op("RESERVE", "r1", "resources", RESV("cpus", "1")),
                     202);
    json_decref(expect_status("OPERATION_FINISHED", "r1", true, NULL));
    ck_assert_uint_eq(operations_kept(), 1);
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "TEARDOWN", NULL, NULL), 202);
    ck_assert_uint_eq(operations_kept(), 0);
}
END_TEST

/* The message of an UPDATE_OPERATION_STATUS event (borrowed). */
static const char *message_of(json_t *ev)
{
    return str(status_of(ev), "message");
}

/* MARK_AGENT_GONE: the operations on the agent, here one finished and not
 * acknowledged, are reported OPERATION_GONE_BY_OPERATOR (once, no uuid),
 * then forgotten and counted, as Mesos's markGone and __removeSlave. */
START_TEST(test_gone_agent_operations_gone_by_operator)
{
    ck_assert_int_eq(accept_op("RESERVE", "r1", "resources", RESV("cpus", "1")),
                     202);
    json_decref(expect_status("OPERATION_FINISHED", "r1", true, NULL));
    char call[512];
    snprintf(call, sizeof(call),
             "{\"type\":\"MARK_AGENT_GONE\",\"mark_agent_gone\":{"
             "\"agent_id\":{\"value\":\"%s\"}}}",
             AG.id);
    struct http_fake *f = mfx_operator(&X, call);
    ck_assert_int_eq(http_fake_status(f), 200);
    http_fake_free(f);
    json_t *ev = expect_status("OPERATION_GONE_BY_OPERATOR", "r1", false, NULL);
    ck_assert_str_eq(message_of(ev), "Agent has been marked gone");
    ck_assert_str_eq(str(json_object_get(status_of(ev), "agent_id"), "value"),
                     AG.id);
    json_decref(ev);
    ck_assert_uint_eq(operations_kept(), 0);
    ck_assert(metric("master/operations/gone_by_operator") == 1);
    ck_assert(metric("master/operations/reserve/gone_by_operator") == 1);
    ck_assert(metric("master/operations/finished") == 1);
    ck_assert(metric("master/operations/total") == 1);
    /* Not re-sent: nothing left to retry. */
    master_ops_set_retry_ms(X.m, 1);
    mfx_settle(&X);
    ck_assert(!mfx_has_event(&FW, "UPDATE_OPERATION_STATUS"));
}
END_TEST

static bool fw_disconnected(void *arg)
{
    (void)arg;
    const struct framework *fw = master_framework_find(X.m, FW.id);
    return fw != NULL && fw->stream == NULL;
}

/* A framework not connected when the agent is marked gone is not sent the
 * feedback (nothing dropped: it learns by reconciling, as in Mesos). */
START_TEST(test_gone_agent_disconnected_framework_not_told)
{
    ck_assert_int_eq(accept_op("RESERVE", "r1", "resources", RESV("cpus", "1")),
                     202);
    json_decref(expect_status("OPERATION_FINISHED", "r1", true, NULL));
    http_fake_disconnect(FW.stream);
    ck_assert(mfx_run_until(&X, fw_disconnected, NULL));
    double dropped = metric("master/dropped_messages");
    char call[512];
    snprintf(call, sizeof(call),
             "{\"type\":\"MARK_AGENT_GONE\",\"mark_agent_gone\":{"
             "\"agent_id\":{\"value\":\"%s\"}}}",
             AG.id);
    struct http_fake *f = mfx_operator(&X, call);
    ck_assert_int_eq(http_fake_status(f), 200);
    http_fake_free(f);
    ck_assert(metric("master/dropped_messages") == dropped);
    ck_assert(metric("master/operations/gone_by_operator") == 1);
}
END_TEST

static bool agent_removed(void *arg)
{
    (void)arg;
    return hmap_count(X.m->agents) == 0;
}

/* An agent that stops answering pings: its operations are reported
 * OPERATION_UNREACHABLE ("Agent was marked unreachable"), then forgotten. */
START_TEST(test_unreachable_agent_operations_unreachable)
{
    ck_assert_int_eq(accept_op("RESERVE", "r1", "resources", RESV("cpus", "1")),
                     202);
    json_decref(expect_status("OPERATION_FINISHED", "r1", true, NULL));
    for (int64_t i = 0; i <= X.flags.max_agent_ping_timeouts; i++)
        master_agents_ping(X.m);
    ck_assert(mfx_run_until(&X, agent_removed, NULL));
    json_t *ev = expect_status("OPERATION_UNREACHABLE", "r1", false, NULL);
    ck_assert_str_eq(message_of(ev), "Agent was marked unreachable");
    json_decref(ev);
    ck_assert_uint_eq(operations_kept(), 0);
    ck_assert(metric("master/operations/unreachable") == 1);
    ck_assert(metric("master/operations/gone_by_operator") == 0);
}
END_TEST

/* An agent that unregisters while an operation on it is still pending
 * (its registry write not done): no feedback (Mesos sends none), the
 * operation is forgotten, counted out of pending, and the write's
 * completion reports nothing. */
START_TEST(test_removed_agent_pending_operation_forgotten)
{
    /* Kept as an ACCEPT keeps it before its write completes (a memory
     * store completes writes within the call). */
    Mesos__V1__OperationID oid = MESOS__V1__OPERATION_ID__INIT;
    oid.value = "r1";
    Mesos__V1__Offer__Operation op = MESOS__V1__OFFER__OPERATION__INIT;
    op.has_type = true;
    op.type = MESOS__V1__OFFER__OPERATION__TYPE__RESERVE;
    op.id = &oid;
    master_ops_count(X.m, op.type, -1,
                     MESOS__V1__OPERATION_STATE__OPERATION_PENDING);
    free(master_op_add(X.m, master_framework_find(X.m, FW.id),
                       master_agent_find(X.m, AG.id), &op));
    ck_assert(metric("master/operations/pending") == 1);
    ck_assert_uint_eq(operations_kept(), 1);
    ck_assert_int_eq(mfx_agent_call(&X, &AG, "UNREGISTER", NULL, NULL), 202);
    mfx_settle(&X);
    ck_assert_uint_eq(hmap_count(X.m->agents), 0);
    ck_assert(!mfx_has_event(&FW, "UPDATE_OPERATION_STATUS"));
    ck_assert_uint_eq(operations_kept(), 0);
    ck_assert(metric("master/operations/pending") == 0);
    ck_assert(metric("master/operations/gone_by_operator") == 1);
    ck_assert(metric("master/operations/finished") == 0);
}
END_TEST

static Suite *master_operations_suite(void)
{
    Suite *s = suite_create("master_operations");
    TCase *tc = tcase_create("feedback");
    tcase_add_checked_fixture(tc, setup_offer, teardown);
    tcase_add_test(tc, test_each_kind_with_id_finishes);
    tcase_add_test(tc, test_each_kind_without_id_no_feedback);
    tcase_add_test(tc, test_refusal_is_operation_error);
    tcase_add_test(tc, test_invalid_offer_is_operation_error);
    tcase_add_test(tc, test_duplicate_id_refused);
    tcase_add_test(tc, test_launch_with_id_is_task_error);
    tcase_add_test(tc, test_registry_failure_is_operation_failed);
    tcase_add_test(tc, test_registry_failure_without_id_undone);
    suite_add_tcase(s, tc);
    tc = tcase_create("calls");
    tcase_add_checked_fixture(tc, setup_offer, teardown);
    tcase_add_test(tc, test_acknowledgement_answers);
    tcase_add_test(tc, test_reconciliation_answers);
    tcase_add_test(tc, test_removed_framework_operations_forgotten);
    tcase_add_test(tc, test_terminal_update_resent_until_acknowledged);
    suite_add_tcase(s, tc);
    tc = tcase_create("agent_removed");
    tcase_add_checked_fixture(tc, setup_offer, teardown);
    tcase_add_test(tc, test_gone_agent_operations_gone_by_operator);
    tcase_add_test(tc, test_gone_agent_disconnected_framework_not_told);
    tcase_add_test(tc, test_unreachable_agent_operations_unreachable);
    tcase_add_test(tc, test_removed_agent_pending_operation_forgotten);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(master_operations_suite)
