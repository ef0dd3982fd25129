/*
 * GROW_VOLUME and SHRINK_VOLUME (master/reservations.c) without sockets:
 * from a framework's ACCEPT, with and without an operation id (feedback:
 * OPERATION_FINISHED once durable, OPERATION_ERROR on refusal,
 * OPERATION_FAILED and undone when the registry refuses), and from the
 * operator API (202, 400, 409, 503). Each refusal leaves the agent's
 * checkpointed resources, its total, the registry and the agent's stream
 * as they were. Last, the conversion alone (master_resv_resize) for
 * volumes on PATH disks.
 *
 * The agent has disk:1000; role web reserves 300 of it and holds volume v1
 * of 100 on that reservation (the framework or the operator made them).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "common/resources_pb.h"
#include "master/agents.h"
#include "master/master_types.h"
#include "master/operations.h"
#include "master/registry_mem.h"
#include "master/reservations.h"
#include "master_fixture.h"
#include "offerd/registry.pb-c.h"

#define FW_INFO                                                                \
    "{\"user\":\"u\",\"name\":\"fw\",\"roles\":[\"web\"],\"principal\":"       \
    "\"p1\",\"capabilities\":[{\"type\":\"MULTI_ROLE\"}]}"
#define RESERVATION                                                            \
    "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"web\","                \
    "\"principal\":\"p1\"}]"
#define ALLOCATED ",\"allocation_info\":{\"role\":\"web\"}"
#define VOLUME_INFO(mode)                                                      \
    "\"disk\":{\"persistence\":{\"id\":\"v1\",\"principal\":\"p1\"},"          \
    "\"volume\":{\"container_path\":\"data\",\"mode\":\"" mode "\"}}"

/* Short allocation cycles: refused resources come back quickly. */
static const char *const FLAGS[] = {"--allocation_interval=50ms", NULL};

MFX_STANDARD_FIXTURE

static char OFFER[256];

/* JSON of disk reserved to web: size units, the volume v1 when vol, with
 * web's allocation role when alloc. A new string in a small ring (valid
 * for the next seven calls). */
static const char *disk(const char *size, bool vol, bool alloc)
{
    static char ring[8][512];
    static unsigned k;
    char *b = ring[k++ % 8];
    snprintf(b, sizeof(ring[0]),
             "{\"name\":\"disk\",\"type\":\"SCALAR\",\"scalar\":{\"value\":%s},"
             "%s%s%s}",
             size, RESERVATION, vol ? "," VOLUME_INFO("RW") : "",
             alloc ? ALLOCATED : "");
    return b;
}

/* ---- Reading state ------------------------------------------------------
 */

/* The size of volume v1 in l, in milli-units; -1 when absent. */
static int64_t volume_in(const res_list *l)
{
    for (uint32_t i = 0; i < l->n; i++)
        if (res_is_persistent_volume(&l->v[i]) &&
            strcmp(l->v[i].disk->persistence_id, "v1") == 0)
            return l->v[i].scalar;
    return -1;
}

/* The disk reserved to web in l that is no volume, in milli-units. */
static int64_t reserved_disk_in(const res_list *l)
{
    int64_t sum = 0;
    for (uint32_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i].name, "disk") == 0 &&
            !res_is_persistent_volume(&l->v[i]) &&
            res_is_reserved(&l->v[i], "web"))
            sum += l->v[i].scalar;
    return sum;
}

/* The same two figures of a JSON array of Resource. */
static void sizes_in_json(json_t *arr, int64_t *vol, int64_t *resv)
{
    res_list l = RES_LIST_INIT;
    char *text = json_dumps(arr, JSON_COMPACT);
    char err[512];
    ck_assert_msg(res_list_from_json(text, &l, err, sizeof(err)) == 0, "%s",
                  err);
    free(text);
    res_list_allocate(&l, NULL);
    *vol = volume_in(&l);
    *resv = reserved_disk_in(&l);
    res_list_clear(&l);
}

static struct agent *agent(void)
{
    return master_agent_find(X.m, AG.id);
}

/* The agent's record in the registry: a copy of its bytes (free it). */
static uint8_t *stored(size_t *len)
{
    uint8_t *v = registry_mem_get(X.store, "agent", AG.id, len);
    ck_assert_ptr_nonnull(v);
    return v;
}

/* The volume and reserved disk of the agent's stored checkpointed
 * resources. */
static void stored_sizes(int64_t *vol, int64_t *resv)
{
    size_t len;
    uint8_t *v = stored(&len);
    Offerd__Registry__Agent *a = offerd__registry__agent__unpack(NULL, len, v);
    ck_assert_ptr_nonnull(a);
    res_list l = RES_LIST_INIT;
    char err[512];
    ck_assert_int_eq(res_list_from_pb(a->checkpointed_resources,
                                      a->n_checkpointed_resources, &l, err,
                                      sizeof(err)),
                     0);
    *vol = volume_in(&l);
    *resv = reserved_disk_in(&l);
    res_list_clear(&l);
    offerd__registry__agent__free_unpacked(a, NULL);
    free(v);
}

/* Assert the master's view of v1 and web's reserved disk, in units: the
 * checkpointed resources, the agent's total, the allocator's total and
 * the registry's record agree. */
static void assert_sizes(int64_t vol, int64_t resv)
{
    struct agent *ag = agent();
    ck_assert_int_eq(volume_in(&ag->ckpt), vol * 1000);
    ck_assert_int_eq(reserved_disk_in(&ag->ckpt), resv * 1000);
    ck_assert_int_eq(volume_in(&ag->total), vol * 1000);
    ck_assert_int_eq(reserved_disk_in(&ag->total), resv * 1000);
    const res_list *at = alloc_agent_total(ag->alloc);
    res_list t = RES_LIST_INIT;
    res_list_copy(&t, at);
    res_list_allocate(&t, NULL);
    ck_assert_int_eq(volume_in(&t), vol * 1000);
    ck_assert_int_eq(reserved_disk_in(&t), resv * 1000);
    res_list_clear(&t);
    int64_t sv, sr;
    stored_sizes(&sv, &sr);
    ck_assert_int_eq(sv, vol * 1000);
    ck_assert_int_eq(sr, resv * 1000);
}

/* The agent's next CHECKPOINT_RESOURCES must hold v1 of vol and resv of
 * reserved disk (milli-units). */
static void expect_checkpoint_milli(int64_t vol, int64_t resv)
{
    json_t *ev = mfx_next_event(&X, &AG, "CHECKPOINT_RESOURCES");
    ck_assert_msg(ev != NULL, "no CHECKPOINT_RESOURCES");
    int64_t v, r;
    sizes_in_json(json_object_get(json_object_get(ev, "checkpoint_resources"),
                                  "resources"),
                  &v, &r);
    ck_assert_int_eq(v, vol);
    ck_assert_int_eq(r, resv);
    json_decref(ev);
}

/* The same in whole units. */
static void expect_checkpoint(int64_t vol, int64_t resv)
{
    expect_checkpoint_milli(vol * 1000, resv * 1000);
}

/* Wait for the next offer with v1 in it (others declined, with no
 * filter); its id into OFFER, v1's size and the reserved disk offered
 * into *vol and *resv (milli-units). */
static void next_volume_offer(int64_t *vol, int64_t *resv)
{
    for (int tries = 0; tries < 10; tries++) {
        json_t *ev = mfx_first_offer(&X, &FW, OFFER);
        json_t *offer = json_array_get(
            json_object_get(json_object_get(ev, "offers"), "offers"), 0);
        sizes_in_json(json_object_get(offer, "resources"), vol, resv);
        json_decref(ev);
        /* An offer rescinded since (an operator's change took its
         * resources) is stale. */
        if (hmap_get(X.m->offers, OFFER) == NULL)
            continue;
        if (*vol >= 0)
            return;
        char payload[512];
        snprintf(payload, sizeof(payload),
                 "{\"offer_ids\":[{\"value\":\"%s\"}],\"filters\":{"
                 "\"refuse_seconds\":0}}",
                 OFFER);
        ck_assert_int_eq(
            mfx_framework_call(&X, &FW, "DECLINE", "decline", payload), 202);
    }
    ck_abort_msg("v1 was not offered");
}

/* ---- Framework calls ----------------------------------------------------
 */

/* ACCEPT OFFER with the operations (a JSON array's inside) and a refuse
 * filter of refuse seconds. Returns the status. */
static int accept_ops(const char *ops, int refuse)
{
    char payload[8192];
    snprintf(payload, sizeof(payload),
             "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[%s],"
             "\"filters\":{\"refuse_seconds\":%d}}",
             OFFER, ops, refuse);
    return mfx_framework_call(&X, &FW, "ACCEPT", "accept", payload);
}

/* The JSON of an operation's id field ("" for none). */
static const char *id_field(const char *id)
{
    static char b[128];
    if (id == NULL)
        return "";
    snprintf(b, sizeof(b), "\"id\":{\"value\":\"%s\"},", id);
    return b;
}

/* ACCEPT OFFER with one GROW_VOLUME of volume by addition (JSON). */
static int grow(const char *id, const char *volume, const char *addition)
{
    char op[4096];
    snprintf(op, sizeof(op),
             "{\"type\":\"GROW_VOLUME\",%s\"grow_volume\":{\"volume\":%s,"
             "\"addition\":%s}}",
             id_field(id), volume, addition);
    return accept_ops(op, 0);
}

/* ACCEPT OFFER with one SHRINK_VOLUME of volume by subtract (a number). */
static int shrink(const char *id, const char *volume, const char *subtract)
{
    char op[4096];
    snprintf(op, sizeof(op),
             "{\"type\":\"SHRINK_VOLUME\",%s\"shrink_volume\":{\"volume\":%s,"
             "\"subtract\":{\"value\":%s}}}",
             id_field(id), volume, subtract);
    return accept_ops(op, 0);
}

/* The status of an UPDATE_OPERATION_STATUS event (borrowed). */
static json_t *status_of(json_t *ev)
{
    return json_object_get(json_object_get(ev, "update_operation_status"),
                           "status");
}

static const char *str(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* FW's next operation status: state want for operation op_id. Returns its
 * message (copied into msg, 1024 bytes). */
static void expect_status(const char *want, const char *op_id, char *msg)
{
    json_t *ev = mfx_next_event(&X, &FW, "UPDATE_OPERATION_STATUS");
    ck_assert_msg(ev != NULL, "no operation status (%s)", want);
    json_t *st = status_of(ev);
    ck_assert_str_eq(str(st, "state"), want);
    ck_assert_str_eq(str(json_object_get(st, "operation_id"), "value"), op_id);
    /* Terminal updates of applied operations are reliable (uuid), a
     * refusal is not. */
    ck_assert_int_eq(json_object_get(st, "uuid") != NULL,
                     strcmp(want, "OPERATION_ERROR") != 0);
    if (msg != NULL)
        snprintf(msg, 1024, "%s", str(st, "message") ? str(st, "message") : "");
    json_decref(ev);
}

static double metric(const char *name)
{
    return mfx_metric(&X, name);
}

/* The framework reserves disk 300 to web and creates v1 (100) on it, in
 * one ACCEPT; then waits for the offer that holds v1. */
static void setup_framework_volume(void)
{
    mfx_start(&X, FLAGS);
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024;disk:1000");
    json_decref(mfx_first_offer(&X, &FW, OFFER));
    char ops[4096];
    snprintf(ops, sizeof(ops),
             "{\"type\":\"RESERVE\",\"reserve\":{\"resources\":[%s]}},"
             "{\"type\":\"CREATE\",\"create\":{\"volumes\":[%s]}}",
             disk("300", false, true), disk("100", true, true));
    ck_assert_int_eq(accept_ops(ops, 0), 202);
    /* One list for both: the first write's is outdated once durable. */
    expect_checkpoint(100, 200);
    int64_t vol, resv;
    next_volume_offer(&vol, &resv);
    ck_assert_int_eq(vol, 100000);
    ck_assert_int_eq(resv, 200000);
    assert_sizes(100, 200);
}

/* GROW_VOLUME with an id: OPERATION_FINISHED once durable, the agent sent
 * the grown volume, the next offer holds it; the reserved disk it took is
 * gone. */
START_TEST(test_framework_grow_with_id)
{
    ck_assert_int_eq(
        grow("g1", disk("100", true, true), disk("50", false, true)), 202);
    expect_status("OPERATION_FINISHED", "g1", NULL);
    expect_checkpoint(150, 150);
    assert_sizes(150, 150);
    ck_assert_uint_eq(agent()->ckpt_version, 3);
    int64_t vol, resv;
    next_volume_offer(&vol, &resv);
    ck_assert_int_eq(vol, 150000);
    ck_assert_int_eq(resv, 150000);
    ck_assert(metric("master/operations/grow_volume/finished") == 1);
    ck_assert(metric("master/operations/grow_volume/total") == 1);
    ck_assert(metric("master/operations/pending") == 0);
}
END_TEST

/* SHRINK_VOLUME with an id: the volume less subtract, and the freed part
 * is disk reserved to the volume's role. */
START_TEST(test_framework_shrink_with_id)
{
    ck_assert_int_eq(shrink("s1", disk("100", true, true), "40"), 202);
    expect_status("OPERATION_FINISHED", "s1", NULL);
    expect_checkpoint(60, 240);
    assert_sizes(60, 240);
    int64_t vol, resv;
    next_volume_offer(&vol, &resv);
    ck_assert_int_eq(vol, 60000);
    ck_assert_int_eq(resv, 240000);
    ck_assert(metric("master/operations/shrink_volume/finished") == 1);
}
END_TEST

/* Without an id: the same changes, and no operation status at all. */
START_TEST(test_framework_without_id_no_feedback)
{
    ck_assert_int_eq(
        grow(NULL, disk("100", true, true), disk("200", false, true)), 202);
    expect_checkpoint(300, 0);
    assert_sizes(300, 0);
    int64_t vol, resv;
    next_volume_offer(&vol, &resv);
    ck_assert_int_eq(vol, 300000);
    ck_assert_int_eq(shrink(NULL, disk("300", true, true), "0.5"), 202);
    expect_checkpoint_milli(299500, 500);
    mfx_settle(&X);
    ck_assert(!mfx_has_event(&FW, "UPDATE_OPERATION_STATUS"));
    ck_assert_int_eq(volume_in(&agent()->ckpt), 299500);
    ck_assert_int_eq(reserved_disk_in(&agent()->ckpt), 500);
    ck_assert_uint_eq(agent()->ckpt_version, 4);
}
END_TEST

/* As in Mesos, the resized volume is not in what the ACCEPT's later
 * operations may use, and it goes back to the allocator without the
 * ACCEPT's filter: the agent is offered again at once, although the ACCEPT
 * refused the rest for an hour (a filter holds only offers within what it
 * refused). */
START_TEST(test_resized_volume_offered_again_unfiltered)
{
    char ops[4096];
    snprintf(ops, sizeof(ops),
             "{\"type\":\"GROW_VOLUME\",\"grow_volume\":{\"volume\":%s,"
             "\"addition\":%s}},"
             "{\"type\":\"SHRINK_VOLUME\",\"id\":{\"value\":\"s1\"},"
             "\"shrink_volume\":{\"volume\":%s,\"subtract\":{\"value\":10}}}",
             disk("100", true, true), disk("20", false, true),
             disk("120", true, true));
    ck_assert_int_eq(accept_ops(ops, 3600), 202);
    char msg[1024];
    expect_status("OPERATION_ERROR", "s1", msg);
    ck_assert_ptr_nonnull(strstr(msg, "not in the accepted offers"));
    expect_checkpoint(120, 180);
    json_t *ev = mfx_first_offer(&X, &FW, OFFER);
    json_t *offer = json_array_get(
        json_object_get(json_object_get(ev, "offers"), "offers"), 0);
    json_t *res = json_object_get(offer, "resources");
    int64_t vol, resv;
    sizes_in_json(res, &vol, &resv);
    ck_assert_int_eq(vol, 120000);
    ck_assert_int_eq(resv, 180000);
    json_decref(ev);
}
END_TEST

/* Refused operations: OPERATION_ERROR naming the reason, and nothing
 * changed. */
START_TEST(test_framework_refusals)
{
    static const struct {
        bool is_grow;
        const char *volume;   /* NULL: v1 as offered */
        const char *addition; /* or the amount to subtract */
        const char *reason;
    } cases[] = {
        /* Not a volume. */
        {true,
         "{\"name\":\"disk\",\"type\":\"SCALAR\",\"scalar\":{\"value\":100}"
         "," RESERVATION ALLOCATED "}",
         NULL, "not a persistent volume"},
        /* Read-only and shared volumes. */
        {true,
         "{\"name\":\"disk\",\"type\":\"SCALAR\",\"scalar\":{\"value\":100}"
         "," RESERVATION "," VOLUME_INFO("RO") ALLOCATED "}",
         NULL, "read-only"},
        {false,
         "{\"name\":\"disk\",\"type\":\"SCALAR\",\"scalar\":{\"value\":100}"
         "," RESERVATION "," VOLUME_INFO("RW") ",\"shared\":{}" ALLOCATED "}",
         "10", "shared"},
        /* A volume on a MOUNT disk. */
        {true,
         "{\"name\":\"disk\",\"type\":\"SCALAR\",\"scalar\":{\"value\":100}"
         "," RESERVATION
         ",\"disk\":{\"persistence\":{\"id\":\"v1\"},\"volume\":{"
         "\"container_path\":\"data\",\"mode\":\"RW\"},\"source\":{\"type\":"
         "\"MOUNT\",\"mount\":{\"root\":\"/mnt\"}}}" ALLOCATED "}",
         NULL, "MOUNT"},
        /* A size the offer does not hold. */
        {true, "90", NULL, "not in the accepted offers"},
        /* Additions: nothing, another role's or unreserved disk, cpus, a
         * volume, more than offered. */
        {true, NULL,
         "{\"name\":\"disk\",\"type\":\"SCALAR\",\"scalar\":{"
         "\"value\":0}," RESERVATION ALLOCATED "}",
         "more than zero"},
        {true, NULL,
         "{\"name\":\"disk\",\"type\":\"SCALAR\",\"scalar\":{"
         "\"value\":10}" ALLOCATED "}",
         "the volume's reservations"},
        {true, NULL,
         "{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{"
         "\"value\":1}," RESERVATION ALLOCATED "}",
         "the volume's reservations"},
        {true, NULL, "VOLUME", "no persistence"},
        {true, NULL, "500", "not in the accepted offers"},
        /* Subtracting nothing, everything, more, less than nothing. */
        {false, NULL, "0", "more than zero"},
        {false, NULL, "0.0001", "more than zero"},
        {false, NULL, "100", "smaller than the volume's size"},
        {false, NULL, "150", "smaller than the volume's size"},
        {false, NULL, "-5", "more than zero"},
    };
    size_t len0;
    uint8_t *before = stored(&len0);
    uint64_t version = agent()->ckpt_version;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *vol = cases[i].volume;
        if (vol == NULL)
            vol = disk("100", true, true);
        else if (vol[0] != '{')
            vol = disk(vol, true, true);
        const char *add = cases[i].addition;
        if (cases[i].is_grow && add == NULL)
            add = disk("10", false, true);
        else if (cases[i].is_grow && strcmp(add, "VOLUME") == 0)
            add = disk("10", true, true);
        else if (cases[i].is_grow && add[0] != '{')
            add = disk(add, false, true);
        char id[16];
        snprintf(id, sizeof(id), "bad%zu", i);
        ck_assert_int_eq(
            cases[i].is_grow ? grow(id, vol, add) : shrink(id, vol, add), 202);
        char msg[1024];
        expect_status("OPERATION_ERROR", id, msg);
        ck_assert_msg(strstr(msg, cases[i].reason) != NULL,
                      "case %zu: '%s' does not say '%s'", i, msg,
                      cases[i].reason);
        ck_assert_ptr_nonnull(
            strstr(msg, cases[i].is_grow ? "GROW_VOLUME" : "SHRINK_VOLUME"));
        /* The offer's resources came back, v1 unchanged. */
        int64_t v, r;
        next_volume_offer(&v, &r);
        ck_assert_int_eq(v, 100000);
        ck_assert_int_eq(r, 200000);
    }
    /* The payload missing. */
    ck_assert_int_eq(accept_ops("{\"type\":\"GROW_VOLUME\",\"id\":{\"value\":"
                                "\"none\"}}",
                                0),
                     202);
    char msg[1024];
    expect_status("OPERATION_ERROR", "none", msg);
    ck_assert_ptr_nonnull(strstr(msg, "required"));
    /* Nothing changed. */
    ck_assert_uint_eq(agent()->ckpt_version, version);
    assert_sizes(100, 200);
    size_t len1;
    uint8_t *after = stored(&len1);
    ck_assert_uint_eq(len0, len1);
    ck_assert(memcmp(before, after, len0) == 0);
    free(before);
    free(after);
    ck_assert(!mfx_has_event(&AG, "CHECKPOINT_RESOURCES"));
    ck_assert(metric("master/operations/grow_volume/error") == 10);
    ck_assert(metric("master/operations/shrink_volume/error") == 6);
    ck_assert(metric("master/operations/grow_volume/finished") == 0);
    ck_assert(metric("master/operations/shrink_volume/finished") == 0);
}
END_TEST

/* Without an id a refusal is silent. */
START_TEST(test_framework_refusal_without_id_silent)
{
    ck_assert_int_eq(shrink(NULL, disk("100", true, true), "100"), 202);
    int64_t v, r;
    next_volume_offer(&v, &r);
    ck_assert_int_eq(v, 100000);
    ck_assert(!mfx_has_event(&FW, "UPDATE_OPERATION_STATUS"));
    ck_assert(!mfx_has_event(&AG, "CHECKPOINT_RESOURCES"));
    ck_assert(metric("master/operations/shrink_volume/error") == 1);
}
END_TEST

/* The registry refuses the change: OPERATION_FAILED, the change undone
 * (v1 offered at its old size again), the agent not told. */
START_TEST(test_framework_registry_failure_undone)
{
    registry_mem_set_failing(X.store, true);
    ck_assert_int_eq(
        grow("g1", disk("100", true, true), disk("50", false, true)), 202);
    char msg[1024];
    expect_status("OPERATION_FAILED", "g1", msg);
    ck_assert_ptr_nonnull(strstr(msg, "registry write failed"));
    registry_mem_set_failing(X.store, false);
    int64_t vol, resv;
    next_volume_offer(&vol, &resv);
    ck_assert_int_eq(vol, 100000);
    ck_assert_int_eq(resv, 200000);
    assert_sizes(100, 200);
    ck_assert(!mfx_has_event(&AG, "CHECKPOINT_RESOURCES"));
    ck_assert(metric("master/operations/grow_volume/failed") == 1);
}
END_TEST

/* ---- Operator calls -----------------------------------------------------
 */

/* The operator reserves disk 300 to web and creates v1 (100) on it. */
static void setup_operator_volume(void)
{
    mfx_start(&X, FLAGS);
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024;disk:1000");
    char call[4096];
    snprintf(call, sizeof(call),
             "{\"type\":\"RESERVE_RESOURCES\",\"reserve_resources\":{"
             "\"agent_id\":{\"value\":\"%s\"},\"resources\":[%s]}}",
             AG.id, disk("300", false, false));
    struct http_fake *f = mfx_operator(&X, call);
    ck_assert_int_eq(http_fake_status(f), 202);
    http_fake_free(f);
    snprintf(call, sizeof(call),
             "{\"type\":\"CREATE_VOLUMES\",\"create_volumes\":{"
             "\"agent_id\":{\"value\":\"%s\"},\"volumes\":[%s]}}",
             AG.id, disk("100", true, false));
    f = mfx_operator(&X, call);
    ck_assert_int_eq(http_fake_status(f), 202);
    http_fake_free(f);
    json_decref(mfx_next_event(&X, &AG, "CHECKPOINT_RESOURCES"));
    json_decref(mfx_next_event(&X, &AG, "CHECKPOINT_RESOURCES"));
    assert_sizes(100, 200);
}

/* An operator GROW_VOLUME (agent NULL: none given); the exchange. */
static struct http_fake *op_grow(const char *agent_id, const char *volume,
                                 const char *addition)
{
    char call[4096], aid[300] = "";
    if (agent_id != NULL)
        snprintf(aid, sizeof(aid), "\"agent_id\":{\"value\":\"%s\"},",
                 agent_id);
    snprintf(call, sizeof(call),
             "{\"type\":\"GROW_VOLUME\",\"grow_volume\":{%s\"volume\":%s,"
             "\"addition\":%s}}",
             aid, volume, addition);
    return mfx_operator(&X, call);
}

static struct http_fake *op_shrink(const char *agent_id, const char *volume,
                                   const char *subtract)
{
    char call[4096], aid[300] = "";
    if (agent_id != NULL)
        snprintf(aid, sizeof(aid), "\"agent_id\":{\"value\":\"%s\"},",
                 agent_id);
    snprintf(call, sizeof(call),
             "{\"type\":\"SHRINK_VOLUME\",\"shrink_volume\":{%s\"volume\":%s,"
             "\"subtract\":{\"value\":%s}}}",
             aid, volume, subtract);
    return mfx_operator(&X, call);
}

/* Operator GROW_VOLUME then SHRINK_VOLUME: 202 once durable, the agent
 * sent each new list. */
START_TEST(test_operator_grow_and_shrink)
{
    /* More than the reserved disk beside the volume: 409, nothing done. */
    struct http_fake *f =
        op_grow(AG.id, disk("100", true, false), disk("250", false, false));
    ck_assert_int_eq(http_fake_status(f), 409);
    ck_assert_ptr_nonnull(strstr(mfx_body(f), "available"));
    http_fake_free(f);
    assert_sizes(100, 200);
    f = op_grow(AG.id, disk("100", true, false), disk("150", false, false));
    ck_assert_msg(http_fake_status(f) == 202, "%d %s", http_fake_status(f),
                  mfx_body(f));
    http_fake_free(f);
    expect_checkpoint(250, 50);
    assert_sizes(250, 50);
    f = op_shrink(AG.id, disk("250", true, false), "200");
    ck_assert_msg(http_fake_status(f) == 202, "%d %s", http_fake_status(f),
                  mfx_body(f));
    http_fake_free(f);
    expect_checkpoint(50, 250);
    assert_sizes(50, 250);
    ck_assert_uint_eq(agent()->ckpt_version, 4);
    /* Offered so to the framework of the role. */
    int64_t vol, resv;
    next_volume_offer(&vol, &resv);
    ck_assert_int_eq(vol, 50000);
    ck_assert_int_eq(resv, 250000);
    ck_assert(metric("master/operations/grow_volume/finished") == 1);
    ck_assert(metric("master/operations/shrink_volume/finished") == 1);
}
END_TEST

/* Operator refusals: the status, a one-line reason, nothing changed. */
START_TEST(test_operator_refusals)
{
    /* A task uses v1 (launched on the framework's offer). */
    int64_t v, r;
    next_volume_offer(&v, &r);
    char ops[4096];
    snprintf(ops, sizeof(ops),
             "{\"type\":\"LAUNCH\",\"launch\":{\"task_infos\":[{\"name\":"
             "\"t\",\"task_id\":{\"value\":\"t1\"},\"agent_id\":{\"value\":"
             "\"%s\"},\"command\":{\"value\":\"true\"},\"resources\":[%s,{"
             "\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":"
             "1}" ALLOCATED "}]}]}}",
             AG.id, disk("100", true, true));
    ck_assert_int_eq(accept_ops(ops, 0), 202);
    json_decref(mfx_next_event(&X, &AG, "RUN_TASK"));

    static const struct {
        bool is_grow;
        const char *agent;    /* "AG": the agent's id */
        const char *volume;   /* size of v1, or JSON */
        const char *addition; /* size of reserved disk, or subtract */
        int status;
        const char *reason;
    } cases[] = {
        {true, NULL, "100", "10", 400,
         "grow_volume.agent_id: required for GROW_VOLUME"},
        {false, NULL, "100", "10", 400,
         "shrink_volume.agent_id: required for SHRINK_VOLUME"},
        {true, "nope", "100", "10", 400, "No agent found"},
        {false, "AG", "100", "100", 400, "smaller than the volume's size"},
        {true, "AG",
         "{\"name\":\"disk\",\"type\":\"SCALAR\",\"scalar\":{\"value\":100}"
         "," RESERVATION "}",
         "10", 400, "not a persistent volume"},
        /* In use by the task. */
        {true, "AG", "100", "10", 409, "available"},
        {false, "AG", "100", "10", 409, "available"},
        /* No such volume (of that size) on the agent. */
        {false, "AG", "70", "10", 409, "available"},
    };
    size_t len0;
    uint8_t *before = stored(&len0);
    uint64_t version = agent()->ckpt_version;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *aid = cases[i].agent == NULL              ? NULL
                          : strcmp(cases[i].agent, "AG") == 0 ? AG.id
                                                              : cases[i].agent;
        const char *vol = cases[i].volume[0] == '{'
                              ? cases[i].volume
                              : disk(cases[i].volume, true, false);
        struct http_fake *f =
            cases[i].is_grow
                ? op_grow(aid, vol, disk(cases[i].addition, false, false))
                : op_shrink(aid, vol, cases[i].addition);
        ck_assert_msg(http_fake_status(f) == cases[i].status, "case %zu: %d %s",
                      i, http_fake_status(f), mfx_body(f));
        const char *body = mfx_body(f);
        ck_assert_msg(strstr(body, cases[i].reason) != NULL,
                      "case %zu: '%s' does not say '%s'", i, body,
                      cases[i].reason);
        /* One line. */
        ck_assert_ptr_eq(strchr(body, '\n'), body + strlen(body) - 1);
        http_fake_free(f);
    }
    ck_assert_uint_eq(agent()->ckpt_version, version);
    assert_sizes(100, 200);
    size_t len1;
    uint8_t *after = stored(&len1);
    ck_assert_uint_eq(len0, len1);
    ck_assert(memcmp(before, after, len0) == 0);
    free(before);
    free(after);
    ck_assert(!mfx_has_event(&AG, "CHECKPOINT_RESOURCES"));
}
END_TEST

/* The registry refuses: 503, nothing changed. */
START_TEST(test_operator_registry_failure)
{
    registry_mem_set_failing(X.store, true);
    struct http_fake *f = op_shrink(AG.id, disk("100", true, false), "30");
    ck_assert_int_eq(http_fake_status(f), 503);
    http_fake_free(f);
    registry_mem_set_failing(X.store, false);
    assert_sizes(100, 200);
    ck_assert(!mfx_has_event(&AG, "CHECKPOINT_RESOURCES"));
    ck_assert(metric("master/operations/shrink_volume/failed") == 1);
}
END_TEST

/* A master restart: the resized volume is what the recovered master
 * holds for the agent, once it is back. */
START_TEST(test_operator_resize_survives_master_restart)
{
    struct http_fake *f =
        op_grow(AG.id, disk("100", true, false), disk("200", false, false));
    ck_assert_int_eq(http_fake_status(f), 202);
    http_fake_free(f);
    expect_checkpoint(300, 0);
    mfx_restart(&X);
    /* The new master recovered the agent's record with the grown volume:
     * what it holds for the agent until the agent is back. */
    const Offerd__Registry__Agent *a = hmap_get(X.m->recovered_agents, AG.id);
    ck_assert_ptr_nonnull(a);
    ck_assert_uint_eq(a->checkpointed_resources_version, 3);
    res_list l = RES_LIST_INIT;
    char err[512];
    ck_assert_int_eq(res_list_from_pb(a->checkpointed_resources,
                                      a->n_checkpointed_resources, &l, err,
                                      sizeof(err)),
                     0);
    ck_assert_int_eq(volume_in(&l), 300000);
    ck_assert_int_eq(reserved_disk_in(&l), 0);
    res_list_clear(&l);
}
END_TEST

/* ---- The conversion alone (master_resv_resize) ---------------------------
 */

/* One Resource message from the JSON of one Resource object (free it with
 * protobuf_c_message_free_unpacked). */
static Mesos__V1__Resource *pb_of(const char *json)
{
    char arr[2048], err[512];
    snprintf(arr, sizeof(arr), "[%s]", json);
    res_list l = RES_LIST_INIT;
    ck_assert_msg(res_list_from_json(arr, &l, err, sizeof(err)) == 0, "%s: %s",
                  json, err);
    ck_assert_uint_eq(l.n, 1);
    Mesos__V1__Resource *pb = res_to_pb(&l.v[0], true);
    res_list_clear(&l);
    return pb;
}

/* Disk of size on a PATH disk with root, reserved to web; the volume v1
 * when vol. */
static const char *path_disk(const char *size, const char *root, bool vol)
{
    static char ring[4][512];
    static unsigned k;
    char *b = ring[k++ % 4];
    snprintf(b, sizeof(ring[0]),
             "{\"name\":\"disk\",\"type\":\"SCALAR\",\"scalar\":{\"value\":%s}"
             "," RESERVATION ",\"disk\":{%s\"source\":{\"type\":\"PATH\","
             "\"path\":{\"root\":\"%s\"}}}}",
             size,
             vol ? "\"persistence\":{\"id\":\"v1\"},\"volume\":{"
                   "\"container_path\":\"data\",\"mode\":\"RW\"},"
                 : "",
             root);
    return b;
}

/* GROW and SHRINK of volumes on a PATH disk: the addition must be of the
 * same disk; what a shrink frees keeps the disk's source. */
START_TEST(test_resize_path_disk)
{
    static const struct {
        bool is_grow;
        const char *volume, *addition;   /* addition: or subtract */
        const char *want_from, *want_to; /* NULL: refused */
    } cases[] = {
        {true, "100:/mnt/a", "50:/mnt/a", "v100+d50", "v150"},
        {true, "100:/mnt/a", "50:/mnt/b", NULL, NULL},
        {false, "100:/mnt/a", "30", "v100", "v70+d30"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char size[16], root[64];
        ck_assert_int_eq(sscanf(cases[i].volume, "%15[^:]:%63s", size, root),
                         2);
        Mesos__V1__Resource *vol = pb_of(path_disk(size, root, true));
        Mesos__V1__Resource *add = NULL;
        Mesos__V1__Value__Scalar sub = MESOS__V1__VALUE__SCALAR__INIT;
        if (cases[i].is_grow) {
            ck_assert_int_eq(
                sscanf(cases[i].addition, "%15[^:]:%63s", size, root), 2);
            add = pb_of(path_disk(size, root, false));
        } else {
            sub.value = atof(cases[i].addition);
        }
        res_list from = RES_LIST_INIT, to = RES_LIST_INIT;
        char err[1024];
        int rc = master_resv_resize(
            cases[i].is_grow ? MASTER_RESV_GROW : MASTER_RESV_SHRINK, vol, add,
            cases[i].is_grow ? NULL : &sub, &from, &to, err, sizeof(err));
        if (cases[i].want_from == NULL) {
            ck_assert_int_eq(rc, -1);
            ck_assert_ptr_nonnull(strstr(err, "disk source"));
            ck_assert_uint_eq(from.n + to.n, 0);
        } else {
            ck_assert_msg(rc == 0, "case %zu: %s", i, err);
            /* "v<size>" is v1, "d<size>" the PATH disk's plain part; every
             * resource keeps the disk's source root. */
            const res_list *lists[2] = {&from, &to};
            const char *want[2] = {cases[i].want_from, cases[i].want_to};
            for (int k = 0; k < 2; k++) {
                char got[64] = "";
                for (uint32_t j = 0; j < lists[k]->n; j++) {
                    const struct resource *r = &lists[k]->v[j];
                    ck_assert_ptr_nonnull(r->disk);
                    ck_assert_str_eq(r->disk->source_root, "/mnt/a");
                    ck_assert(res_is_reserved(r, "web"));
                    char one[24];
                    snprintf(one, sizeof(one), "%s%s%lld", j > 0 ? "+" : "",
                             res_is_persistent_volume(r) ? "v" : "d",
                             (long long)(r->scalar / 1000));
                    strncat(got, one, sizeof(got) - strlen(got) - 1);
                }
                ck_assert_msg(strcmp(got, want[k]) == 0, "case %zu: %s, not %s",
                              i, got, want[k]);
            }
        }
        res_list_clear(&from);
        res_list_clear(&to);
        protobuf_c_message_free_unpacked(&vol->base, NULL);
        if (add != NULL)
            protobuf_c_message_free_unpacked(&add->base, NULL);
    }
}
END_TEST

static Suite *master_volumes_suite(void)
{
    Suite *s = suite_create("master_volumes");
    TCase *tc = tcase_create("framework");
    tcase_add_checked_fixture(tc, setup_framework_volume, teardown);
    tcase_add_test(tc, test_framework_grow_with_id);
    tcase_add_test(tc, test_framework_shrink_with_id);
    tcase_add_test(tc, test_framework_without_id_no_feedback);
    tcase_add_test(tc, test_resized_volume_offered_again_unfiltered);
    tcase_add_test(tc, test_framework_refusals);
    tcase_add_test(tc, test_framework_refusal_without_id_silent);
    tcase_add_test(tc, test_framework_registry_failure_undone);
    suite_add_tcase(s, tc);
    tc = tcase_create("operator");
    tcase_add_checked_fixture(tc, setup_operator_volume, teardown);
    tcase_add_test(tc, test_operator_grow_and_shrink);
    tcase_add_test(tc, test_operator_refusals);
    tcase_add_test(tc, test_operator_registry_failure);
    tcase_add_test(tc, test_operator_resize_survives_master_restart);
    suite_add_tcase(s, tc);
    tc = tcase_create("conversion");
    tcase_add_test(tc, test_resize_path_disk);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(master_volumes_suite)
