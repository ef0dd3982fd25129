/*
 * Tests of offerd's .proto files: that the generated protobuf-c code packs
 * Mesos messages to the exact bytes Mesos's own .proto files define (wire
 * bytes computed by hand), that field numbers, labels and enum values match
 * Mesos's include/mesos/v1 files (looked up by name through the
 * descriptors), that Mesos's [default = ...] values are kept, and that
 * offerd's own agent and registry messages round-trip.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "common/mem.h"
#include "google/protobuf/duration.pb-c.h"
#include "mesos/v1/allocator.pb-c.h"
#include "mesos/v1/maintenance.pb-c.h"
#include "mesos/v1/master.pb-c.h"
#include "mesos/v1/mesos.pb-c.h"
#include "mesos/v1/quota.pb-c.h"
#include "mesos/v1/scheduler.pb-c.h"
#include "offerd/agent.pb-c.h"
#include "offerd/registry.pb-c.h"

/* Pack `m` and compare with the expected bytes, printing both on mismatch. */
static void expect_packed(const ProtobufCMessage *m, const uint8_t *want,
                          size_t want_len)
{
    size_t len = protobuf_c_message_get_packed_size(m);
    uint8_t *buf = xmalloc(len);
    size_t written = protobuf_c_message_pack(m, buf);

    ck_assert_uint_eq(written, len);
    if (len != want_len ||
        (want != NULL && len > 0 && memcmp(buf, want, len) != 0)) {
        fprintf(stderr, "packed %s (%zu bytes):", m->descriptor->name, len);
        for (size_t i = 0; i < len; i++)
            fprintf(stderr, " %02x", buf[i]);
        fprintf(stderr, "\nexpected (%zu bytes):", want_len);
        for (size_t i = 0; i < want_len; i++)
            fprintf(stderr, " %02x", want[i]);
        fprintf(stderr, "\n");
    }
    ck_assert_uint_eq(len, want_len);
    if (want_len > 0)
        ck_assert_mem_eq(buf, want, want_len);
    free(buf);
}

/* Pack `m`, unpack the bytes with the same descriptor, pack again: the
 * two encodings must be identical. Returns the unpacked copy. */
static ProtobufCMessage *round_trip(const ProtobufCMessage *m)
{
    size_t len = protobuf_c_message_get_packed_size(m);
    uint8_t *buf = xmalloc(len);
    protobuf_c_message_pack(m, buf);

    ProtobufCMessage *copy =
        protobuf_c_message_unpack(m->descriptor, NULL, len, buf);
    ck_assert_ptr_nonnull(copy);
    ck_assert_uint_eq(protobuf_c_message_get_packed_size(copy), len);
    uint8_t *again = xmalloc(len);
    protobuf_c_message_pack(copy, again);
    ck_assert_mem_eq(buf, again, len);
    free(again);
    free(buf);
    return copy;
}

/* ---- hand-computed wire bytes ---------------------------------------- */

START_TEST(test_pack_resource_scalar)
{
    /* Resource{name: "cpus", type: SCALAR, scalar: {value: 1.5}}.
     * `type` is required, so SCALAR (0) is written; role keeps its
     * default "*" and is not written. */
    Mesos__V1__Value__Scalar scalar = MESOS__V1__VALUE__SCALAR__INIT;
    scalar.value = 1.5;
    Mesos__V1__Resource r = MESOS__V1__RESOURCE__INIT;
    r.name = "cpus";
    r.type = MESOS__V1__VALUE__TYPE__SCALAR;
    r.scalar = &scalar;

    static const uint8_t want[] = {
        0x0a, 0x04, 'c',  'p',  'u',  's',  /* 1: name */
        0x10, 0x00,                         /* 2: type SCALAR */
        0x1a, 0x09, 0x09, 0x00, 0x00, 0x00, /* 3: scalar{1: 1.5} */
        0x00, 0x00, 0x00, 0xf8, 0x3f,
    };
    expect_packed(&r.base, want, sizeof want);
}
END_TEST

START_TEST(test_pack_resource_reserved)
{
    /* A disk reserved for "eng" in both formats, from a resource provider:
     * role (6), provider_id (12), reservations (13) with ReservationInfo
     * principal (1), role (3), type (4). */
    Mesos__V1__Value__Scalar scalar = MESOS__V1__VALUE__SCALAR__INIT;
    scalar.value = 1024;
    Mesos__V1__ResourceProviderID rp = MESOS__V1__RESOURCE_PROVIDER_ID__INIT;
    rp.value = "rp";
    Mesos__V1__Resource__ReservationInfo res =
        MESOS__V1__RESOURCE__RESERVATION_INFO__INIT;
    res.principal = "ops";
    res.role = "eng";
    res.has_type = 1;
    res.type = MESOS__V1__RESOURCE__RESERVATION_INFO__TYPE__DYNAMIC;
    Mesos__V1__Resource__ReservationInfo *stack[] = {&res};
    Mesos__V1__Resource r = MESOS__V1__RESOURCE__INIT;
    r.provider_id = &rp;
    r.name = "disk";
    r.type = MESOS__V1__VALUE__TYPE__SCALAR;
    r.scalar = &scalar;
    r.role = "eng";
    r.n_reservations = 1;
    r.reservations = stack;

    static const uint8_t want[] = {
        0x0a, 0x04, 'd',  'i',  's',  'k',              /* 1: name */
        0x10, 0x00,                                     /* 2: type */
        0x1a, 0x09, 0x09, 0x00, 0x00, 0x00, 0x00, 0x00, /* 3: 1024.0 */
        0x00, 0x90, 0x40,                               /* */
        0x32, 0x03, 'e',  'n',  'g',                    /* 6: role */
        0x62, 0x04, 0x0a, 0x02, 'r',  'p',              /* 12: provider */
        0x6a, 0x0c,                                     /* 13: reservation */
        0x0a, 0x03, 'o',  'p',  's',                    /*   1: principal */
        0x1a, 0x03, 'e',  'n',  'g',                    /*   3: role */
        0x20, 0x02,                                     /*   4: DYNAMIC */
    };
    expect_packed(&r.base, want, sizeof want);
}
END_TEST

START_TEST(test_pack_scheduler_subscribe)
{
    /* Call{type: SUBSCRIBE, subscribe: {framework_info: {user: "u",
     * name: "n", capabilities: [{type: MULTI_ROLE}], roles: ["r"]}}}.
     * failover_timeout, checkpoint and role keep their defaults and are
     * not written. */
    Mesos__V1__FrameworkInfo__Capability cap =
        MESOS__V1__FRAMEWORK_INFO__CAPABILITY__INIT;
    cap.has_type = 1;
    cap.type = MESOS__V1__FRAMEWORK_INFO__CAPABILITY__TYPE__MULTI_ROLE;
    Mesos__V1__FrameworkInfo__Capability *caps[] = {&cap};
    char *roles[] = {"r"};
    Mesos__V1__FrameworkInfo fi = MESOS__V1__FRAMEWORK_INFO__INIT;
    fi.user = "u";
    fi.name = "n";
    fi.n_capabilities = 1;
    fi.capabilities = caps;
    fi.n_roles = 1;
    fi.roles = roles;
    Mesos__V1__Scheduler__Call__Subscribe sub =
        MESOS__V1__SCHEDULER__CALL__SUBSCRIBE__INIT;
    sub.framework_info = &fi;
    Mesos__V1__Scheduler__Call call = MESOS__V1__SCHEDULER__CALL__INIT;
    call.has_type = 1;
    call.type = MESOS__V1__SCHEDULER__CALL__TYPE__SUBSCRIBE;
    call.subscribe = &sub;

    static const uint8_t want[] = {
        0x10, 0x01,             /* 2: type SUBSCRIBE */
        0x1a, 0x0f,             /* 3: subscribe */
        0x0a, 0x0d,             /*   1: framework_info */
        0x0a, 0x01, 'u',        /*     1: user */
        0x12, 0x01, 'n',        /*     2: name */
        0x52, 0x02, 0x08, 0x06, /*     10: capability MULTI_ROLE */
        0x62, 0x01, 'r',        /*     12: roles */
    };
    expect_packed(&call.base, want, sizeof want);
}
END_TEST

START_TEST(test_pack_offer)
{
    Mesos__V1__OfferID id = MESOS__V1__OFFER_ID__INIT;
    id.value = "o1";
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = "f1";
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = "a1";
    Mesos__V1__Value__Scalar two = MESOS__V1__VALUE__SCALAR__INIT;
    two.value = 2.0;
    Mesos__V1__Resource cpus = MESOS__V1__RESOURCE__INIT;
    cpus.name = "cpus";
    cpus.type = MESOS__V1__VALUE__TYPE__SCALAR;
    cpus.scalar = &two;
    Mesos__V1__Resource *resources[] = {&cpus};
    Mesos__V1__Resource__AllocationInfo alloc =
        MESOS__V1__RESOURCE__ALLOCATION_INFO__INIT;
    alloc.role = "r";
    Mesos__V1__Offer offer = MESOS__V1__OFFER__INIT;
    offer.id = &id;
    offer.framework_id = &fid;
    offer.agent_id = &aid;
    offer.hostname = "h";
    offer.n_resources = 1;
    offer.resources = resources;
    offer.allocation_info = &alloc;

    static const uint8_t want[] = {
        0x0a, 0x04, 0x0a, 0x02, 'o',  '1',  /* 1: id */
        0x12, 0x04, 0x0a, 0x02, 'f',  '1',  /* 2: framework_id */
        0x1a, 0x04, 0x0a, 0x02, 'a',  '1',  /* 3: agent_id */
        0x22, 0x01, 'h',                    /* 4: hostname */
        0x2a, 0x13,                         /* 5: resources */
        0x0a, 0x04, 'c',  'p',  'u',  's',  /*   1: name */
        0x10, 0x00,                         /*   2: type */
        0x1a, 0x09, 0x09, 0x00, 0x00, 0x00, /*   3: scalar 2.0 */
        0x00, 0x00, 0x00, 0x00, 0x40,       /* */
        0x52, 0x03, 0x0a, 0x01, 'r',        /* 10: allocation_info */
    };
    expect_packed(&offer.base, want, sizeof want);
}
END_TEST

START_TEST(test_pack_offer_operation)
{
    /* Offer.Operation{type: RESERVE, id: {"x"}, reserve: {resources:
     * [cpus 2]}}: id is field 12, reserve field 3, RESERVE = 2. */
    Mesos__V1__Value__Scalar two = MESOS__V1__VALUE__SCALAR__INIT;
    two.value = 2.0;
    Mesos__V1__Resource cpus = MESOS__V1__RESOURCE__INIT;
    cpus.name = "cpus";
    cpus.type = MESOS__V1__VALUE__TYPE__SCALAR;
    cpus.scalar = &two;
    Mesos__V1__Resource *resources[] = {&cpus};
    Mesos__V1__Offer__Operation__Reserve reserve =
        MESOS__V1__OFFER__OPERATION__RESERVE__INIT;
    reserve.n_resources = 1;
    reserve.resources = resources;
    Mesos__V1__OperationID opid = MESOS__V1__OPERATION_ID__INIT;
    opid.value = "x";
    Mesos__V1__Offer__Operation op = MESOS__V1__OFFER__OPERATION__INIT;
    op.has_type = 1;
    op.type = MESOS__V1__OFFER__OPERATION__TYPE__RESERVE;
    op.id = &opid;
    op.reserve = &reserve;

    static const uint8_t want[] = {
        0x08, 0x02,                         /* 1: type RESERVE */
        0x1a, 0x15, 0x0a, 0x13,             /* 3: reserve{1: resource} */
        0x0a, 0x04, 'c',  'p',  'u',  's',  /* */
        0x10, 0x00,                         /* */
        0x1a, 0x09, 0x09, 0x00, 0x00, 0x00, /* */
        0x00, 0x00, 0x00, 0x00, 0x40,       /* */
        0x62, 0x03, 0x0a, 0x01, 'x',        /* 12: id */
    };
    expect_packed(&op.base, want, sizeof want);
}
END_TEST

START_TEST(test_pack_task_info_limits_map)
{
    /* TaskInfo.limits is map<string, Value.Scalar> = 15: on the wire a
     * repeated entry message {1: key, 2: value}. */
    Mesos__V1__TaskID tid = MESOS__V1__TASK_ID__INIT;
    tid.value = "t1";
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = "a1";
    Mesos__V1__Value__Scalar two = MESOS__V1__VALUE__SCALAR__INIT;
    two.value = 2.0;
    Mesos__V1__TaskInfo__LimitsEntry entry =
        MESOS__V1__TASK_INFO__LIMITS_ENTRY__INIT;
    entry.key = "cpus";
    entry.value = &two;
    Mesos__V1__TaskInfo__LimitsEntry *limits[] = {&entry};
    Mesos__V1__TaskInfo task = MESOS__V1__TASK_INFO__INIT;
    task.name = "t";
    task.task_id = &tid;
    task.agent_id = &aid;
    task.n_limits = 1;
    task.limits = limits;

    static const uint8_t want[] = {
        0x0a, 0x01, 't',                    /* 1: name */
        0x12, 0x04, 0x0a, 0x02, 't',  '1',  /* 2: task_id */
        0x1a, 0x04, 0x0a, 0x02, 'a',  '1',  /* 3: agent_id */
        0x7a, 0x11,                         /* 15: limits entry */
        0x0a, 0x04, 'c',  'p',  'u',  's',  /*   1: key */
        0x12, 0x09, 0x09, 0x00, 0x00, 0x00, /*   2: value 2.0 */
        0x00, 0x00, 0x00, 0x00, 0x40,
    };
    expect_packed(&task.base, want, sizeof want);
}
END_TEST

START_TEST(test_pack_master_drain_agent)
{
    /* master Call{type: DRAIN_AGENT (37), drain_agent (21): {agent_id,
     * max_grace_period: google.protobuf.Duration{seconds: 600}}}. */
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = "a1";
    Google__Protobuf__Duration grace = GOOGLE__PROTOBUF__DURATION__INIT;
    grace.has_seconds = 1;
    grace.seconds = 600;
    Mesos__V1__Master__Call__DrainAgent drain =
        MESOS__V1__MASTER__CALL__DRAIN_AGENT__INIT;
    drain.agent_id = &aid;
    drain.max_grace_period = &grace;
    Mesos__V1__Master__Call call = MESOS__V1__MASTER__CALL__INIT;
    call.has_type = 1;
    call.type = MESOS__V1__MASTER__CALL__TYPE__DRAIN_AGENT;
    call.drain_agent = &drain;

    static const uint8_t want[] = {
        0x08, 0x25,                   /* 1: type 37 */
        0xaa, 0x01, 0x0b,             /* 21: drain_agent */
        0x0a, 0x04, 0x0a, 0x02, 'a',  /*   1: agent_id */
        '1',  0x12, 0x03, 0x08, 0xd8, /*   2: {1: 600} */
        0x04,
    };
    expect_packed(&call.base, want, sizeof want);
}
END_TEST

START_TEST(test_pack_quota_config_maps)
{
    /* QuotaConfig{role: "r", guarantees (2): {"mem": 1}, limits (3):
     * {"mem": 2}}. */
    Mesos__V1__Value__Scalar one = MESOS__V1__VALUE__SCALAR__INIT;
    one.value = 1.0;
    Mesos__V1__Value__Scalar two = MESOS__V1__VALUE__SCALAR__INIT;
    two.value = 2.0;
    Mesos__V1__Quota__QuotaConfig__GuaranteesEntry g =
        MESOS__V1__QUOTA__QUOTA_CONFIG__GUARANTEES_ENTRY__INIT;
    g.key = "mem";
    g.value = &one;
    Mesos__V1__Quota__QuotaConfig__LimitsEntry l =
        MESOS__V1__QUOTA__QUOTA_CONFIG__LIMITS_ENTRY__INIT;
    l.key = "mem";
    l.value = &two;
    Mesos__V1__Quota__QuotaConfig__GuaranteesEntry *gs[] = {&g};
    Mesos__V1__Quota__QuotaConfig__LimitsEntry *ls[] = {&l};
    Mesos__V1__Quota__QuotaConfig qc = MESOS__V1__QUOTA__QUOTA_CONFIG__INIT;
    qc.role = "r";
    qc.n_guarantees = 1;
    qc.guarantees = gs;
    qc.n_limits = 1;
    qc.limits = ls;

    static const uint8_t want[] = {
        0x0a, 0x01, 'r',                    /* 1: role */
        0x12, 0x10, 0x0a, 0x03, 'm',  'e',  /* 2: {"mem": 1.0} */
        'm',  0x12, 0x09, 0x09, 0x00, 0x00, /* */
        0x00, 0x00, 0x00, 0x00, 0xf0, 0x3f, /* */
        0x1a, 0x10, 0x0a, 0x03, 'm',  'e',  /* 3: {"mem": 2.0} */
        'm',  0x12, 0x09, 0x09, 0x00, 0x00, /* */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x40,
    };
    expect_packed(&qc.base, want, sizeof want);
}
END_TEST

START_TEST(test_unpack_task_status)
{
    /* Bytes as Mesos would send them: task_id "t1", state TASK_KILLED
     * (4), source SOURCE_AGENT (9: 1), reason REASON_AGENT_DRAINING
     * (10: 34), uuid (11). */
    static const uint8_t bytes[] = {
        0x0a, 0x04, 0x0a, 0x02, 't',  '1',  0x10, 0x04,
        0x48, 0x01, 0x50, 0x22, 0x5a, 0x02, 0xab, 0xcd,
    };
    Mesos__V1__TaskStatus *st =
        mesos__v1__task_status__unpack(NULL, sizeof bytes, bytes);
    ck_assert_ptr_nonnull(st);
    ck_assert_str_eq(st->task_id->value, "t1");
    ck_assert_int_eq(st->state, MESOS__V1__TASK_STATE__TASK_KILLED);
    ck_assert(st->has_source);
    ck_assert_int_eq(st->source, MESOS__V1__TASK_STATUS__SOURCE__SOURCE_AGENT);
    ck_assert(st->has_reason);
    ck_assert_int_eq(st->reason,
                     MESOS__V1__TASK_STATUS__REASON__REASON_AGENT_DRAINING);
    ck_assert(st->has_uuid);
    ck_assert_uint_eq(st->uuid.len, 2);
    ck_assert_uint_eq(st->uuid.data[0], 0xab);
    ck_assert(!st->has_healthy);
    mesos__v1__task_status__free_unpacked(st, NULL);
}
END_TEST

START_TEST(test_unpack_skips_unknown_fields)
{
    /* FrameworkID{value: "f"} followed by a field 99 from a newer peer. */
    static const uint8_t bytes[] = {0x0a, 0x01, 'f', 0x98, 0x06, 0x01};
    Mesos__V1__FrameworkID *id =
        mesos__v1__framework_id__unpack(NULL, sizeof bytes, bytes);
    ck_assert_ptr_nonnull(id);
    ck_assert_str_eq(id->value, "f");
    mesos__v1__framework_id__free_unpacked(id, NULL);
}
END_TEST

START_TEST(test_unpack_rejects_missing_required)
{
    /* Resource without its required name and type. */
    static const uint8_t bytes[] = {0x32, 0x01, '*'};
    ck_assert_ptr_null(mesos__v1__resource__unpack(NULL, sizeof bytes, bytes));
}
END_TEST

/* ---- field numbers and labels, by name -------------------------------- */

#define REQ PROTOBUF_C_LABEL_REQUIRED
#define OPT PROTOBUF_C_LABEL_OPTIONAL
#define REP PROTOBUF_C_LABEL_REPEATED

struct field_case {
    const ProtobufCMessageDescriptor *msg;
    const char *field;
    unsigned number;
    ProtobufCLabel label;
};

/* Taken from Mesos's include/mesos/v1 .proto files (Mesos 1.11). */
static const struct field_case field_cases[] = {
    /* mesos.v1.Resource and its parts */
    {&mesos__v1__resource__descriptor, "provider_id", 12, OPT},
    {&mesos__v1__resource__descriptor, "name", 1, REQ},
    {&mesos__v1__resource__descriptor, "type", 2, REQ},
    {&mesos__v1__resource__descriptor, "scalar", 3, OPT},
    {&mesos__v1__resource__descriptor, "ranges", 4, OPT},
    {&mesos__v1__resource__descriptor, "set", 5, OPT},
    {&mesos__v1__resource__descriptor, "role", 6, OPT},
    {&mesos__v1__resource__descriptor, "allocation_info", 11, OPT},
    {&mesos__v1__resource__descriptor, "reservation", 8, OPT},
    {&mesos__v1__resource__descriptor, "reservations", 13, REP},
    {&mesos__v1__resource__descriptor, "disk", 7, OPT},
    {&mesos__v1__resource__descriptor, "revocable", 9, OPT},
    {&mesos__v1__resource__descriptor, "shared", 10, OPT},
    {&mesos__v1__resource__reservation_info__descriptor, "type", 4, OPT},
    {&mesos__v1__resource__reservation_info__descriptor, "role", 3, OPT},
    {&mesos__v1__resource__reservation_info__descriptor, "principal", 1, OPT},
    {&mesos__v1__resource__reservation_info__descriptor, "labels", 2, OPT},
    {&mesos__v1__resource__allocation_info__descriptor, "role", 1, OPT},
    {&mesos__v1__resource__disk_info__descriptor, "persistence", 1, OPT},
    {&mesos__v1__resource__disk_info__descriptor, "volume", 2, OPT},
    {&mesos__v1__resource__disk_info__descriptor, "source", 3, OPT},
    {&mesos__v1__resource__disk_info__persistence__descriptor, "id", 1, REQ},
    {&mesos__v1__resource__disk_info__persistence__descriptor, "principal", 2,
     OPT},
    {&mesos__v1__resource__disk_info__source__descriptor, "type", 1, REQ},
    {&mesos__v1__resource__disk_info__source__descriptor, "mount", 3, OPT},
    {&mesos__v1__resource__disk_info__source__descriptor, "vendor", 7, OPT},
    {&mesos__v1__resource__disk_info__source__descriptor, "id", 4, OPT},
    {&mesos__v1__resource__disk_info__source__descriptor, "metadata", 5, OPT},
    {&mesos__v1__resource__disk_info__source__descriptor, "profile", 6, OPT},
    {&mesos__v1__value__descriptor, "type", 1, REQ},
    {&mesos__v1__value__descriptor, "text", 5, OPT},
    {&mesos__v1__value__range__descriptor, "begin", 1, REQ},
    {&mesos__v1__value__range__descriptor, "end", 2, REQ},
    {&mesos__v1__attribute__descriptor, "set", 6, OPT},
    {&mesos__v1__attribute__descriptor, "text", 5, OPT},
    /* FrameworkInfo, AgentInfo, MasterInfo */
    {&mesos__v1__framework_info__descriptor, "user", 1, REQ},
    {&mesos__v1__framework_info__descriptor, "name", 2, REQ},
    {&mesos__v1__framework_info__descriptor, "id", 3, OPT},
    {&mesos__v1__framework_info__descriptor, "failover_timeout", 4, OPT},
    {&mesos__v1__framework_info__descriptor, "checkpoint", 5, OPT},
    {&mesos__v1__framework_info__descriptor, "role", 6, OPT},
    {&mesos__v1__framework_info__descriptor, "roles", 12, REP},
    {&mesos__v1__framework_info__descriptor, "hostname", 7, OPT},
    {&mesos__v1__framework_info__descriptor, "principal", 8, OPT},
    {&mesos__v1__framework_info__descriptor, "webui_url", 9, OPT},
    {&mesos__v1__framework_info__descriptor, "capabilities", 10, REP},
    {&mesos__v1__framework_info__descriptor, "labels", 11, OPT},
    {&mesos__v1__framework_info__descriptor, "offer_filters", 13, REP},
    {&mesos__v1__agent_info__descriptor, "hostname", 1, REQ},
    {&mesos__v1__agent_info__descriptor, "port", 8, OPT},
    {&mesos__v1__agent_info__descriptor, "resources", 3, REP},
    {&mesos__v1__agent_info__descriptor, "attributes", 5, REP},
    {&mesos__v1__agent_info__descriptor, "id", 6, OPT},
    {&mesos__v1__agent_info__descriptor, "domain", 10, OPT},
    {&mesos__v1__master_info__descriptor, "id", 1, REQ},
    {&mesos__v1__master_info__descriptor, "ip", 2, REQ},
    {&mesos__v1__master_info__descriptor, "port", 3, REQ},
    {&mesos__v1__master_info__descriptor, "address", 7, OPT},
    {&mesos__v1__master_info__descriptor, "domain", 8, OPT},
    {&mesos__v1__master_info__descriptor, "capabilities", 9, REP},
    /* Offer, Offer.Operation, InverseOffer */
    {&mesos__v1__offer__descriptor, "hostname", 4, REQ},
    {&mesos__v1__offer__descriptor, "url", 8, OPT},
    {&mesos__v1__offer__descriptor, "domain", 11, OPT},
    {&mesos__v1__offer__descriptor, "resources", 5, REP},
    {&mesos__v1__offer__descriptor, "attributes", 7, REP},
    {&mesos__v1__offer__descriptor, "executor_ids", 6, REP},
    {&mesos__v1__offer__descriptor, "unavailability", 9, OPT},
    {&mesos__v1__offer__descriptor, "allocation_info", 10, OPT},
    {&mesos__v1__offer__operation__descriptor, "type", 1, OPT},
    {&mesos__v1__offer__operation__descriptor, "id", 12, OPT},
    {&mesos__v1__offer__operation__descriptor, "launch", 2, OPT},
    {&mesos__v1__offer__operation__descriptor, "launch_group", 7, OPT},
    {&mesos__v1__offer__operation__descriptor, "reserve", 3, OPT},
    {&mesos__v1__offer__operation__descriptor, "unreserve", 4, OPT},
    {&mesos__v1__offer__operation__descriptor, "create", 5, OPT},
    {&mesos__v1__offer__operation__descriptor, "destroy", 6, OPT},
    {&mesos__v1__offer__operation__descriptor, "grow_volume", 13, OPT},
    {&mesos__v1__offer__operation__descriptor, "shrink_volume", 14, OPT},
    {&mesos__v1__offer__operation__descriptor, "create_disk", 15, OPT},
    {&mesos__v1__offer__operation__descriptor, "destroy_disk", 16, OPT},
    {&mesos__v1__offer__operation__reserve__descriptor, "source", 2, REP},
    {&mesos__v1__offer__operation__reserve__descriptor, "resources", 1, REP},
    {&mesos__v1__offer__operation__launch_group__descriptor, "executor", 1,
     REQ},
    {&mesos__v1__offer__operation__launch_group__descriptor, "task_group", 2,
     REQ},
    {&mesos__v1__offer__operation__create_disk__descriptor, "target_type", 2,
     REQ},
    {&mesos__v1__offer__operation__create_disk__descriptor, "target_profile", 3,
     OPT},
    {&mesos__v1__offer__operation__shrink_volume__descriptor, "subtract", 2,
     REQ},
    {&mesos__v1__inverse_offer__descriptor, "framework_id", 3, REQ},
    {&mesos__v1__inverse_offer__descriptor, "agent_id", 4, OPT},
    {&mesos__v1__inverse_offer__descriptor, "unavailability", 5, REQ},
    {&mesos__v1__inverse_offer__descriptor, "resources", 6, REP},
    /* TaskInfo, Task, TaskStatus */
    {&mesos__v1__task_info__descriptor, "executor", 5, OPT},
    {&mesos__v1__task_info__descriptor, "command", 7, OPT},
    {&mesos__v1__task_info__descriptor, "container", 9, OPT},
    {&mesos__v1__task_info__descriptor, "health_check", 8, OPT},
    {&mesos__v1__task_info__descriptor, "check", 13, OPT},
    {&mesos__v1__task_info__descriptor, "kill_policy", 12, OPT},
    {&mesos__v1__task_info__descriptor, "data", 6, OPT},
    {&mesos__v1__task_info__descriptor, "labels", 10, OPT},
    {&mesos__v1__task_info__descriptor, "discovery", 11, OPT},
    {&mesos__v1__task_info__descriptor, "max_completion_time", 14, OPT},
    {&mesos__v1__task_info__descriptor, "limits", 15, REP},
    {&mesos__v1__task__descriptor, "executor_id", 4, OPT},
    {&mesos__v1__task__descriptor, "state", 6, REQ},
    {&mesos__v1__task__descriptor, "statuses", 8, REP},
    {&mesos__v1__task__descriptor, "status_update_state", 9, OPT},
    {&mesos__v1__task__descriptor, "status_update_uuid", 10, OPT},
    {&mesos__v1__task__descriptor, "container", 13, OPT},
    {&mesos__v1__task__descriptor, "user", 14, OPT},
    {&mesos__v1__task__descriptor, "health_check", 15, OPT},
    {&mesos__v1__task__descriptor, "kill_policy", 16, OPT},
    {&mesos__v1__task__descriptor, "limits", 17, REP},
    {&mesos__v1__task_status__descriptor, "task_id", 1, REQ},
    {&mesos__v1__task_status__descriptor, "state", 2, REQ},
    {&mesos__v1__task_status__descriptor, "message", 4, OPT},
    {&mesos__v1__task_status__descriptor, "source", 9, OPT},
    {&mesos__v1__task_status__descriptor, "reason", 10, OPT},
    {&mesos__v1__task_status__descriptor, "data", 3, OPT},
    {&mesos__v1__task_status__descriptor, "agent_id", 5, OPT},
    {&mesos__v1__task_status__descriptor, "executor_id", 7, OPT},
    {&mesos__v1__task_status__descriptor, "timestamp", 6, OPT},
    {&mesos__v1__task_status__descriptor, "uuid", 11, OPT},
    {&mesos__v1__task_status__descriptor, "healthy", 8, OPT},
    {&mesos__v1__task_status__descriptor, "check_status", 15, OPT},
    {&mesos__v1__task_status__descriptor, "labels", 12, OPT},
    {&mesos__v1__task_status__descriptor, "container_status", 13, OPT},
    {&mesos__v1__task_status__descriptor, "unreachable_time", 14, OPT},
    {&mesos__v1__task_status__descriptor, "limitation", 16, OPT},
    /* Executors, commands, containers, checks */
    {&mesos__v1__executor_info__descriptor, "type", 15, OPT},
    {&mesos__v1__executor_info__descriptor, "executor_id", 1, REQ},
    {&mesos__v1__executor_info__descriptor, "framework_id", 8, OPT},
    {&mesos__v1__executor_info__descriptor, "container", 11, OPT},
    {&mesos__v1__executor_info__descriptor, "shutdown_grace_period", 13, OPT},
    {&mesos__v1__command_info__descriptor, "shell", 6, OPT},
    {&mesos__v1__command_info__descriptor, "value", 3, OPT},
    {&mesos__v1__command_info__descriptor, "arguments", 7, REP},
    {&mesos__v1__command_info__descriptor, "user", 5, OPT},
    {&mesos__v1__command_info__uri__descriptor, "output_file", 5, OPT},
    {&mesos__v1__container_info__descriptor, "type", 1, REQ},
    {&mesos__v1__container_info__descriptor, "hostname", 4, OPT},
    {&mesos__v1__container_info__descriptor, "mesos", 5, OPT},
    {&mesos__v1__container_info__descriptor, "network_infos", 7, REP},
    {&mesos__v1__container_info__descriptor, "tty_info", 10, OPT},
    {&mesos__v1__volume__descriptor, "mode", 3, REQ},
    {&mesos__v1__volume__descriptor, "container_path", 1, REQ},
    {&mesos__v1__volume__descriptor, "source", 5, OPT},
    {&mesos__v1__linux_info__descriptor, "share_cgroups", 8, OPT},
    {&mesos__v1__health_check__descriptor, "http", 1, OPT},
    {&mesos__v1__health_check__descriptor, "type", 8, OPT},
    {&mesos__v1__health_check__descriptor, "tcp", 9, OPT},
    {&mesos__v1__health_check__descriptor, "consecutive_failures", 5, OPT},
    {&mesos__v1__check_info__descriptor, "tcp", 7, OPT},
    {&mesos__v1__environment__variable__descriptor, "type", 3, OPT},
    {&mesos__v1__environment__variable__descriptor, "secret", 4, OPT},
    /* Operations, maintenance and the rest of mesos.v1 */
    {&mesos__v1__operation__descriptor, "info", 3, REQ},
    {&mesos__v1__operation__descriptor, "latest_status", 4, REQ},
    {&mesos__v1__operation__descriptor, "uuid", 6, REQ},
    {&mesos__v1__operation_status__descriptor, "state", 2, REQ},
    {&mesos__v1__operation_status__descriptor, "converted_resources", 4, REP},
    {&mesos__v1__operation_status__descriptor, "resource_provider_id", 7, OPT},
    {&mesos__v1__filters__descriptor, "refuse_seconds", 1, OPT},
    {&mesos__v1__machine_info__descriptor, "id", 1, REQ},
    {&mesos__v1__machine_info__descriptor, "mode", 2, OPT},
    {&mesos__v1__machine_info__descriptor, "unavailability", 3, OPT},
    {&mesos__v1__unavailability__descriptor, "start", 1, REQ},
    {&mesos__v1__unavailability__descriptor, "duration", 2, OPT},
    {&mesos__v1__drain_info__descriptor, "state", 1, REQ},
    {&mesos__v1__drain_info__descriptor, "config", 2, REQ},
    {&mesos__v1__drain_config__descriptor, "mark_gone", 2, OPT},
    {&mesos__v1__weight_info__descriptor, "weight", 1, REQ},
    {&mesos__v1__role__descriptor, "frameworks", 3, REP},
    {&mesos__v1__port__descriptor, "visibility", 4, OPT},
    {&mesos__v1__discovery_info__descriptor, "ports", 6, OPT},
    {&mesos__v1__label__descriptor, "key", 1, REQ},
    {&mesos__v1__address__descriptor, "port", 3, REQ},
    {&mesos__v1__url__descriptor, "address", 2, REQ},
    /* mesos.v1.scheduler */
    {&mesos__v1__scheduler__call__descriptor, "framework_id", 1, OPT},
    {&mesos__v1__scheduler__call__descriptor, "type", 2, OPT},
    {&mesos__v1__scheduler__call__descriptor, "subscribe", 3, OPT},
    {&mesos__v1__scheduler__call__descriptor, "accept", 4, OPT},
    {&mesos__v1__scheduler__call__descriptor, "decline", 5, OPT},
    {&mesos__v1__scheduler__call__descriptor, "accept_inverse_offers", 13, OPT},
    {&mesos__v1__scheduler__call__descriptor, "decline_inverse_offers", 14,
     OPT},
    {&mesos__v1__scheduler__call__descriptor, "revive", 15, OPT},
    {&mesos__v1__scheduler__call__descriptor, "kill", 6, OPT},
    {&mesos__v1__scheduler__call__descriptor, "shutdown", 7, OPT},
    {&mesos__v1__scheduler__call__descriptor, "acknowledge", 8, OPT},
    {&mesos__v1__scheduler__call__descriptor, "acknowledge_operation_status",
     17, OPT},
    {&mesos__v1__scheduler__call__descriptor, "reconcile", 9, OPT},
    {&mesos__v1__scheduler__call__descriptor, "reconcile_operations", 18, OPT},
    {&mesos__v1__scheduler__call__descriptor, "message", 10, OPT},
    {&mesos__v1__scheduler__call__descriptor, "request", 11, OPT},
    {&mesos__v1__scheduler__call__descriptor, "suppress", 16, OPT},
    {&mesos__v1__scheduler__call__descriptor, "update_framework", 19, OPT},
    {&mesos__v1__scheduler__call__subscribe__descriptor, "framework_info", 1,
     REQ},
    {&mesos__v1__scheduler__call__subscribe__descriptor, "suppressed_roles", 2,
     REP},
    {&mesos__v1__scheduler__call__subscribe__descriptor, "offer_constraints", 3,
     OPT},
    {&mesos__v1__scheduler__call__accept__descriptor, "filters", 3, OPT},
    {&mesos__v1__scheduler__call__decline__descriptor, "filters", 2, OPT},
    {&mesos__v1__scheduler__call__kill__descriptor, "kill_policy", 3, OPT},
    {&mesos__v1__scheduler__call__acknowledge__descriptor, "agent_id", 1, REQ},
    {&mesos__v1__scheduler__call__acknowledge__descriptor, "uuid", 3, REQ},
    {&mesos__v1__scheduler__call__acknowledge_operation_status__descriptor,
     "operation_id", 4, REQ},
    {&mesos__v1__scheduler__call__update_framework__descriptor,
     "offer_constraints", 3, OPT},
    {&mesos__v1__scheduler__event__descriptor, "type", 1, OPT},
    {&mesos__v1__scheduler__event__descriptor, "subscribed", 2, OPT},
    {&mesos__v1__scheduler__event__descriptor, "offers", 3, OPT},
    {&mesos__v1__scheduler__event__descriptor, "inverse_offers", 9, OPT},
    {&mesos__v1__scheduler__event__descriptor, "rescind", 4, OPT},
    {&mesos__v1__scheduler__event__descriptor, "rescind_inverse_offer", 10,
     OPT},
    {&mesos__v1__scheduler__event__descriptor, "update", 5, OPT},
    {&mesos__v1__scheduler__event__descriptor, "update_operation_status", 11,
     OPT},
    {&mesos__v1__scheduler__event__descriptor, "message", 6, OPT},
    {&mesos__v1__scheduler__event__descriptor, "failure", 7, OPT},
    {&mesos__v1__scheduler__event__descriptor, "error", 8, OPT},
    {&mesos__v1__scheduler__event__subscribed__descriptor,
     "heartbeat_interval_seconds", 2, OPT},
    {&mesos__v1__scheduler__event__subscribed__descriptor, "master_info", 3,
     OPT},
    {&mesos__v1__scheduler__event__failure__descriptor, "status", 3, OPT},
    {&mesos__v1__scheduler__attribute_constraint__selector__descriptor,
     "attribute_name", 2, OPT},
    {&mesos__v1__scheduler__attribute_constraint__predicate__descriptor,
     "text_not_matches", 6, OPT},
    {&mesos__v1__scheduler__offer_constraints__descriptor, "role_constraints",
     1, REP},
    /* mesos.v1.master */
    {&mesos__v1__master__call__descriptor, "type", 1, OPT},
    {&mesos__v1__master__call__descriptor, "reserve_resources", 7, OPT},
    {&mesos__v1__master__call__descriptor, "grow_volume", 18, OPT},
    {&mesos__v1__master__call__descriptor, "update_maintenance_schedule", 11,
     OPT},
    {&mesos__v1__master__call__descriptor, "drain_agent", 21, OPT},
    {&mesos__v1__master__call__descriptor, "deactivate_agent", 22, OPT},
    {&mesos__v1__master__call__descriptor, "reactivate_agent", 23, OPT},
    {&mesos__v1__master__call__descriptor, "update_quota", 20, OPT},
    {&mesos__v1__master__call__descriptor, "teardown", 16, OPT},
    {&mesos__v1__master__call__descriptor, "mark_agent_gone", 17, OPT},
    {&mesos__v1__master__call__descriptor, "set_quota", 14, OPT},
    {&mesos__v1__master__call__descriptor, "remove_quota", 15, OPT},
    {&mesos__v1__master__call__reserve_resources__descriptor, "source", 3, REP},
    {&mesos__v1__master__call__reserve_resources__descriptor, "resources", 2,
     REP},
    {&mesos__v1__master__call__drain_agent__descriptor, "max_grace_period", 2,
     OPT},
    {&mesos__v1__master__call__drain_agent__descriptor, "mark_gone", 3, OPT},
    {&mesos__v1__master__call__update_quota__descriptor, "quota_configs", 2,
     REP},
    {&mesos__v1__master__response__descriptor, "get_state", 9, OPT},
    {&mesos__v1__master__response__descriptor, "get_operations", 20, OPT},
    {&mesos__v1__master__response__descriptor, "get_quota", 19, OPT},
    {&mesos__v1__master__response__get_agents__agent__descriptor, "deactivated",
     12, OPT},
    {&mesos__v1__master__response__get_agents__agent__descriptor, "version", 3,
     REQ},
    {&mesos__v1__master__response__get_agents__agent__descriptor, "drain_info",
     13, OPT},
    {&mesos__v1__master__response__get_agents__agent__descriptor,
     "estimated_drain_start_time", 14, OPT},
    {&mesos__v1__master__response__get_frameworks__framework__descriptor,
     "recovered", 11, REQ},
    {&mesos__v1__master__response__get_frameworks__framework__descriptor,
     "offer_constraints", 12, OPT},
    {&mesos__v1__master__response__get_tasks__descriptor, "unreachable_tasks",
     5, REP},
    {&mesos__v1__master__response__get_tasks__descriptor, "completed_tasks", 3,
     REP},
    {&mesos__v1__master__response__get_master__descriptor, "elected_time", 3,
     OPT},
    {&mesos__v1__master__event__descriptor, "task_updated", 4, OPT},
    {&mesos__v1__master__event__descriptor, "agent_removed", 6, OPT},
    {&mesos__v1__master__event__descriptor, "framework_removed", 9, OPT},
    {&mesos__v1__master__event__task_updated__descriptor, "state", 3, REQ},
    /* maintenance, quota, allocator */
    {&mesos__v1__maintenance__window__descriptor, "machine_ids", 1, REP},
    {&mesos__v1__maintenance__window__descriptor, "unavailability", 2, REQ},
    {&mesos__v1__maintenance__cluster_status__descriptor, "down_machines", 2,
     REP},
    {&mesos__v1__maintenance__cluster_status__draining_machine__descriptor,
     "statuses", 2, REP},
    {&mesos__v1__quota__quota_config__descriptor, "role", 1, REQ},
    {&mesos__v1__quota__quota_config__descriptor, "guarantees", 2, REP},
    {&mesos__v1__quota__quota_config__descriptor, "limits", 3, REP},
    {&mesos__v1__quota__quota_request__descriptor, "force", 1, OPT},
    {&mesos__v1__quota__quota_info__descriptor, "guarantee", 3, REP},
    {&mesos__v1__quota__quota_status__descriptor, "configs", 2, REP},
    {&mesos__v1__allocator__inverse_offer_status__descriptor, "status", 1, REQ},
    {&mesos__v1__allocator__inverse_offer_status__descriptor, "timestamp", 3,
     REQ},
};

START_TEST(test_field_number)
{
    const struct field_case *c = &field_cases[_i];
    const ProtobufCFieldDescriptor *f =
        protobuf_c_message_descriptor_get_field_by_name(c->msg, c->field);
    ck_assert_msg(f != NULL, "%s has no field %s", c->msg->name, c->field);
    ck_assert_msg(f->id == c->number, "%s.%s is %u, Mesos has %u", c->msg->name,
                  c->field, f->id, c->number);
    ck_assert_msg(f->label == c->label, "%s.%s has label %d, Mesos %d",
                  c->msg->name, c->field, (int)f->label, (int)c->label);
}
END_TEST

/* ---- enum values, by name --------------------------------------------- */

struct enum_case {
    const ProtobufCEnumDescriptor *e;
    const char *name;
    int value;
};

#define TASK_STATE   &mesos__v1__task_state__descriptor
#define REASON       &mesos__v1__task_status__reason__descriptor
#define OP_TYPE      &mesos__v1__offer__operation__type__descriptor
#define FW_CAP       &mesos__v1__framework_info__capability__type__descriptor
#define AGENT_CAP    &mesos__v1__agent_info__capability__type__descriptor
#define SCHED_CALL   &mesos__v1__scheduler__call__type__descriptor
#define SCHED_EVENT  &mesos__v1__scheduler__event__type__descriptor
#define MASTER_CALL  &mesos__v1__master__call__type__descriptor
#define MASTER_RESP  &mesos__v1__master__response__type__descriptor
#define MASTER_EVENT &mesos__v1__master__event__type__descriptor

static const struct enum_case enum_cases[] = {
    {TASK_STATE, "TASK_STAGING", 6},
    {TASK_STATE, "TASK_STARTING", 0},
    {TASK_STATE, "TASK_RUNNING", 1},
    {TASK_STATE, "TASK_KILLING", 8},
    {TASK_STATE, "TASK_FINISHED", 2},
    {TASK_STATE, "TASK_FAILED", 3},
    {TASK_STATE, "TASK_KILLED", 4},
    {TASK_STATE, "TASK_ERROR", 7},
    {TASK_STATE, "TASK_LOST", 5},
    {TASK_STATE, "TASK_DROPPED", 9},
    {TASK_STATE, "TASK_UNREACHABLE", 10},
    {TASK_STATE, "TASK_GONE", 11},
    {TASK_STATE, "TASK_GONE_BY_OPERATOR", 12},
    {TASK_STATE, "TASK_UNKNOWN", 13},
    {REASON, "REASON_COMMAND_EXECUTOR_FAILED", 0},
    {REASON, "REASON_CONTAINER_LAUNCH_FAILED", 21},
    {REASON, "REASON_CONTAINER_LIMITATION", 19},
    {REASON, "REASON_CONTAINER_LIMITATION_DISK", 20},
    {REASON, "REASON_CONTAINER_LIMITATION_MEMORY", 8},
    {REASON, "REASON_CONTAINER_PREEMPTED", 17},
    {REASON, "REASON_CONTAINER_UPDATE_FAILED", 22},
    {REASON, "REASON_MAX_COMPLETION_TIME_REACHED", 33},
    {REASON, "REASON_EXECUTOR_REGISTRATION_TIMEOUT", 23},
    {REASON, "REASON_EXECUTOR_REREGISTRATION_TIMEOUT", 24},
    {REASON, "REASON_EXECUTOR_TERMINATED", 1},
    {REASON, "REASON_EXECUTOR_UNREGISTERED", 2},
    {REASON, "REASON_FRAMEWORK_REMOVED", 3},
    {REASON, "REASON_GC_ERROR", 4},
    {REASON, "REASON_INVALID_FRAMEWORKID", 5},
    {REASON, "REASON_INVALID_OFFERS", 6},
    {REASON, "REASON_IO_SWITCHBOARD_EXITED", 27},
    {REASON, "REASON_MASTER_DISCONNECTED", 7},
    {REASON, "REASON_RECONCILIATION", 9},
    {REASON, "REASON_RESOURCES_UNKNOWN", 18},
    {REASON, "REASON_AGENT_DISCONNECTED", 10},
    {REASON, "REASON_AGENT_DRAINING", 34},
    {REASON, "REASON_AGENT_REMOVED", 11},
    {REASON, "REASON_AGENT_REMOVED_BY_OPERATOR", 31},
    {REASON, "REASON_AGENT_REREGISTERED", 32},
    {REASON, "REASON_AGENT_RESTARTED", 12},
    {REASON, "REASON_AGENT_UNKNOWN", 13},
    {REASON, "REASON_TASK_KILLED_DURING_LAUNCH", 30},
    {REASON, "REASON_TASK_CHECK_STATUS_UPDATED", 28},
    {REASON, "REASON_TASK_HEALTH_CHECK_STATUS_UPDATED", 29},
    {REASON, "REASON_TASK_GROUP_INVALID", 25},
    {REASON, "REASON_TASK_GROUP_UNAUTHORIZED", 26},
    {REASON, "REASON_TASK_INVALID", 14},
    {REASON, "REASON_TASK_UNAUTHORIZED", 15},
    {REASON, "REASON_TASK_UNKNOWN", 16},
    {&mesos__v1__task_status__source__descriptor, "SOURCE_MASTER", 0},
    {&mesos__v1__task_status__source__descriptor, "SOURCE_AGENT", 1},
    {&mesos__v1__task_status__source__descriptor, "SOURCE_EXECUTOR", 2},
    {OP_TYPE, "UNKNOWN", 0},
    {OP_TYPE, "LAUNCH", 1},
    {OP_TYPE, "LAUNCH_GROUP", 6},
    {OP_TYPE, "RESERVE", 2},
    {OP_TYPE, "UNRESERVE", 3},
    {OP_TYPE, "CREATE", 4},
    {OP_TYPE, "DESTROY", 5},
    {OP_TYPE, "GROW_VOLUME", 11},
    {OP_TYPE, "SHRINK_VOLUME", 12},
    {OP_TYPE, "CREATE_DISK", 13},
    {OP_TYPE, "DESTROY_DISK", 14},
    {FW_CAP, "UNKNOWN", 0},
    {FW_CAP, "REVOCABLE_RESOURCES", 1},
    {FW_CAP, "TASK_KILLING_STATE", 2},
    {FW_CAP, "GPU_RESOURCES", 3},
    {FW_CAP, "SHARED_RESOURCES", 4},
    {FW_CAP, "PARTITION_AWARE", 5},
    {FW_CAP, "MULTI_ROLE", 6},
    {FW_CAP, "RESERVATION_REFINEMENT", 7},
    {FW_CAP, "REGION_AWARE", 8},
    {AGENT_CAP, "MULTI_ROLE", 1},
    {AGENT_CAP, "HIERARCHICAL_ROLE", 2},
    {AGENT_CAP, "RESERVATION_REFINEMENT", 3},
    {AGENT_CAP, "RESOURCE_PROVIDER", 4},
    {AGENT_CAP, "RESIZE_VOLUME", 5},
    {AGENT_CAP, "AGENT_OPERATION_FEEDBACK", 6},
    {AGENT_CAP, "AGENT_DRAINING", 7},
    {AGENT_CAP, "TASK_RESOURCE_LIMITS", 8},
    {&mesos__v1__master_info__capability__type__descriptor, "AGENT_UPDATE", 1},
    {&mesos__v1__master_info__capability__type__descriptor, "AGENT_DRAINING",
     2},
    {&mesos__v1__master_info__capability__type__descriptor, "QUOTA_V2", 3},
    {&mesos__v1__operation_state__descriptor, "OPERATION_UNSUPPORTED", 0},
    {&mesos__v1__operation_state__descriptor, "OPERATION_PENDING", 1},
    {&mesos__v1__operation_state__descriptor, "OPERATION_FINISHED", 2},
    {&mesos__v1__operation_state__descriptor, "OPERATION_DROPPED", 5},
    {&mesos__v1__operation_state__descriptor, "OPERATION_GONE_BY_OPERATOR", 7},
    {&mesos__v1__operation_state__descriptor, "OPERATION_RECOVERING", 8},
    {&mesos__v1__operation_state__descriptor, "OPERATION_UNKNOWN", 9},
    {&mesos__v1__value__type__descriptor, "SCALAR", 0},
    {&mesos__v1__value__type__descriptor, "RANGES", 1},
    {&mesos__v1__value__type__descriptor, "SET", 2},
    {&mesos__v1__value__type__descriptor, "TEXT", 3},
    {&mesos__v1__resource__reservation_info__type__descriptor, "STATIC", 1},
    {&mesos__v1__resource__reservation_info__type__descriptor, "DYNAMIC", 2},
    {&mesos__v1__resource__disk_info__source__type__descriptor, "PATH", 1},
    {&mesos__v1__resource__disk_info__source__type__descriptor, "MOUNT", 2},
    {&mesos__v1__resource__disk_info__source__type__descriptor, "RAW", 4},
    {&mesos__v1__machine_info__mode__descriptor, "UP", 1},
    {&mesos__v1__machine_info__mode__descriptor, "DRAINING", 2},
    {&mesos__v1__machine_info__mode__descriptor, "DOWN", 3},
    {&mesos__v1__drain_state__descriptor, "DRAINING", 1},
    {&mesos__v1__drain_state__descriptor, "DRAINED", 2},
    {&mesos__v1__capability_info__capability__descriptor, "CHOWN", 1000},
    {&mesos__v1__capability_info__capability__descriptor, "SYS_ADMIN", 1021},
    {&mesos__v1__capability_info__capability__descriptor, "CHECKPOINT_RESTORE",
     1040},
    {&mesos__v1__volume__source__type__descriptor, "HOST_PATH", 4},
    {&mesos__v1__volume__source__type__descriptor, "CSI_VOLUME", 5},
    {&mesos__v1__container_info__type__descriptor, "DOCKER", 1},
    {&mesos__v1__container_info__type__descriptor, "MESOS", 2},
    {&mesos__v1__network_info__protocol__descriptor, "IPv6", 2},
    {&mesos__v1__discovery_info__visibility__descriptor, "EXTERNAL", 2},
    {&mesos__v1__executor_info__type__descriptor, "DEFAULT", 1},
    {&mesos__v1__executor_info__type__descriptor, "CUSTOM", 2},
    {&mesos__v1__environment__variable__type__descriptor, "SECRET", 2},
    {SCHED_CALL, "UNKNOWN", 0},
    {SCHED_CALL, "SUBSCRIBE", 1},
    {SCHED_CALL, "TEARDOWN", 2},
    {SCHED_CALL, "ACCEPT", 3},
    {SCHED_CALL, "DECLINE", 4},
    {SCHED_CALL, "ACCEPT_INVERSE_OFFERS", 13},
    {SCHED_CALL, "DECLINE_INVERSE_OFFERS", 14},
    {SCHED_CALL, "REVIVE", 5},
    {SCHED_CALL, "KILL", 6},
    {SCHED_CALL, "SHUTDOWN", 7},
    {SCHED_CALL, "ACKNOWLEDGE", 8},
    {SCHED_CALL, "ACKNOWLEDGE_OPERATION_STATUS", 15},
    {SCHED_CALL, "RECONCILE", 9},
    {SCHED_CALL, "RECONCILE_OPERATIONS", 16},
    {SCHED_CALL, "MESSAGE", 10},
    {SCHED_CALL, "REQUEST", 11},
    {SCHED_CALL, "SUPPRESS", 12},
    {SCHED_CALL, "UPDATE_FRAMEWORK", 17},
    {SCHED_EVENT, "SUBSCRIBED", 1},
    {SCHED_EVENT, "OFFERS", 2},
    {SCHED_EVENT, "INVERSE_OFFERS", 9},
    {SCHED_EVENT, "RESCIND", 3},
    {SCHED_EVENT, "RESCIND_INVERSE_OFFER", 10},
    {SCHED_EVENT, "UPDATE", 4},
    {SCHED_EVENT, "UPDATE_OPERATION_STATUS", 11},
    {SCHED_EVENT, "MESSAGE", 5},
    {SCHED_EVENT, "FAILURE", 6},
    {SCHED_EVENT, "ERROR", 7},
    {SCHED_EVENT, "HEARTBEAT", 8},
    {&mesos__v1__scheduler__response__type__descriptor, "RECONCILE_OPERATIONS",
     1},
    {&mesos__v1__scheduler__attribute_constraint__selector__pseudoattribute_type__descriptor,
     "ZONE", 3},
    {MASTER_CALL, "GET_HEALTH", 1},
    {MASTER_CALL, "GET_FLAGS", 2},
    {MASTER_CALL, "GET_VERSION", 3},
    {MASTER_CALL, "GET_METRICS", 4},
    {MASTER_CALL, "GET_LOGGING_LEVEL", 5},
    {MASTER_CALL, "SET_LOGGING_LEVEL", 6},
    {MASTER_CALL, "LIST_FILES", 7},
    {MASTER_CALL, "READ_FILE", 8},
    {MASTER_CALL, "GET_STATE", 9},
    {MASTER_CALL, "GET_AGENTS", 10},
    {MASTER_CALL, "GET_FRAMEWORKS", 11},
    {MASTER_CALL, "GET_EXECUTORS", 12},
    {MASTER_CALL, "GET_OPERATIONS", 33},
    {MASTER_CALL, "GET_TASKS", 13},
    {MASTER_CALL, "GET_ROLES", 14},
    {MASTER_CALL, "GET_WEIGHTS", 15},
    {MASTER_CALL, "UPDATE_WEIGHTS", 16},
    {MASTER_CALL, "GET_MASTER", 17},
    {MASTER_CALL, "SUBSCRIBE", 18},
    {MASTER_CALL, "RESERVE_RESOURCES", 19},
    {MASTER_CALL, "UNRESERVE_RESOURCES", 20},
    {MASTER_CALL, "CREATE_VOLUMES", 21},
    {MASTER_CALL, "DESTROY_VOLUMES", 22},
    {MASTER_CALL, "GROW_VOLUME", 34},
    {MASTER_CALL, "SHRINK_VOLUME", 35},
    {MASTER_CALL, "GET_MAINTENANCE_STATUS", 23},
    {MASTER_CALL, "GET_MAINTENANCE_SCHEDULE", 24},
    {MASTER_CALL, "UPDATE_MAINTENANCE_SCHEDULE", 25},
    {MASTER_CALL, "START_MAINTENANCE", 26},
    {MASTER_CALL, "STOP_MAINTENANCE", 27},
    {MASTER_CALL, "DRAIN_AGENT", 37},
    {MASTER_CALL, "DEACTIVATE_AGENT", 38},
    {MASTER_CALL, "REACTIVATE_AGENT", 39},
    {MASTER_CALL, "GET_QUOTA", 28},
    {MASTER_CALL, "UPDATE_QUOTA", 36},
    {MASTER_CALL, "SET_QUOTA", 29},
    {MASTER_CALL, "REMOVE_QUOTA", 30},
    {MASTER_CALL, "TEARDOWN", 31},
    {MASTER_CALL, "MARK_AGENT_GONE", 32},
    {MASTER_RESP, "GET_HEALTH", 1},
    {MASTER_RESP, "LIST_FILES", 6},
    {MASTER_RESP, "GET_STATE", 8},
    {MASTER_RESP, "GET_AGENTS", 9},
    {MASTER_RESP, "GET_OPERATIONS", 19},
    {MASTER_RESP, "GET_TASKS", 12},
    {MASTER_RESP, "GET_MASTER", 15},
    {MASTER_RESP, "GET_MAINTENANCE_SCHEDULE", 17},
    {MASTER_RESP, "GET_QUOTA", 18},
    {MASTER_EVENT, "SUBSCRIBED", 1},
    {MASTER_EVENT, "TASK_ADDED", 2},
    {MASTER_EVENT, "TASK_UPDATED", 3},
    {MASTER_EVENT, "AGENT_ADDED", 4},
    {MASTER_EVENT, "AGENT_REMOVED", 5},
    {MASTER_EVENT, "FRAMEWORK_ADDED", 6},
    {MASTER_EVENT, "FRAMEWORK_UPDATED", 7},
    {MASTER_EVENT, "FRAMEWORK_REMOVED", 8},
    {MASTER_EVENT, "HEARTBEAT", 9},
    {&mesos__v1__allocator__inverse_offer_status__status__descriptor, "UNKNOWN",
     1},
    {&mesos__v1__allocator__inverse_offer_status__status__descriptor, "ACCEPT",
     2},
    {&mesos__v1__allocator__inverse_offer_status__status__descriptor, "DECLINE",
     3},
};

START_TEST(test_enum_value)
{
    const struct enum_case *c = &enum_cases[_i];
    const ProtobufCEnumValue *v =
        protobuf_c_enum_descriptor_get_value_by_name(c->e, c->name);
    ck_assert_msg(v != NULL, "%s has no value %s", c->e->name, c->name);
    ck_assert_msg(v->value == c->value, "%s.%s is %d, Mesos has %d", c->e->name,
                  c->name, v->value, c->value);
}
END_TEST

START_TEST(test_enum_sizes)
{
    /* The enums that must be complete have exactly Mesos's values. */
    ck_assert_uint_eq(mesos__v1__task_state__descriptor.n_values, 14);
    ck_assert_uint_eq(mesos__v1__task_status__reason__descriptor.n_values, 35);
    ck_assert_uint_eq(mesos__v1__offer__operation__type__descriptor.n_values,
                      11);
    ck_assert_uint_eq(mesos__v1__scheduler__call__type__descriptor.n_values,
                      18);
    ck_assert_uint_eq(mesos__v1__scheduler__event__type__descriptor.n_values,
                      12);
    ck_assert_uint_eq(mesos__v1__master__call__type__descriptor.n_values, 40);
    ck_assert_uint_eq(mesos__v1__master__response__type__descriptor.n_values,
                      20);
    ck_assert_uint_eq(mesos__v1__master__event__type__descriptor.n_values, 10);
}
END_TEST

/* ---- [default = ...] values ------------------------------------------- */

START_TEST(test_mesos_defaults)
{
    Mesos__V1__Filters filters = MESOS__V1__FILTERS__INIT;
    ck_assert(filters.refuse_seconds == 5.0);

    Mesos__V1__FrameworkInfo fi = MESOS__V1__FRAMEWORK_INFO__INIT;
    ck_assert(fi.failover_timeout == 0.0);
    ck_assert(!fi.checkpoint);
    ck_assert_str_eq(fi.role, "*");

    Mesos__V1__Resource r = MESOS__V1__RESOURCE__INIT;
    ck_assert_str_eq(r.role, "*");

    Mesos__V1__AgentInfo ai = MESOS__V1__AGENT_INFO__INIT;
    ck_assert_int_eq(ai.port, 5051);
    Mesos__V1__MasterInfo mi = MESOS__V1__MASTER_INFO__INIT;
    ck_assert_uint_eq(mi.port, 5050);

    Mesos__V1__CommandInfo ci = MESOS__V1__COMMAND_INFO__INIT;
    ck_assert(ci.shell);
    Mesos__V1__CommandInfo__URI uri = MESOS__V1__COMMAND_INFO__URI__INIT;
    ck_assert(uri.extract);

    Mesos__V1__HealthCheck hc = MESOS__V1__HEALTH_CHECK__INIT;
    ck_assert(hc.delay_seconds == 15.0);
    ck_assert(hc.interval_seconds == 10.0);
    ck_assert(hc.timeout_seconds == 20.0);
    ck_assert_uint_eq(hc.consecutive_failures, 3);
    ck_assert(hc.grace_period_seconds == 10.0);
    Mesos__V1__HealthCheck__HTTPCheckInfo http =
        MESOS__V1__HEALTH_CHECK__HTTPCHECK_INFO__INIT;
    ck_assert_int_eq(http.protocol, MESOS__V1__NETWORK_INFO__PROTOCOL__IPv4);

    Mesos__V1__CheckInfo chk = MESOS__V1__CHECK_INFO__INIT;
    ck_assert(chk.delay_seconds == 15.0);
    ck_assert(chk.interval_seconds == 10.0);
    ck_assert(chk.timeout_seconds == 20.0);

    Mesos__V1__Environment__Variable var =
        MESOS__V1__ENVIRONMENT__VARIABLE__INIT;
    ck_assert_int_eq(var.type, MESOS__V1__ENVIRONMENT__VARIABLE__TYPE__VALUE);

    Mesos__V1__ContainerInfo__DockerInfo docker =
        MESOS__V1__CONTAINER_INFO__DOCKER_INFO__INIT;
    ck_assert_int_eq(docker.network,
                     MESOS__V1__CONTAINER_INFO__DOCKER_INFO__NETWORK__HOST);
    ck_assert(!docker.privileged);

    Mesos__V1__Image image = MESOS__V1__IMAGE__INIT;
    ck_assert(image.cached);
    Mesos__V1__LinuxInfo linux_info = MESOS__V1__LINUX_INFO__INIT;
    ck_assert(linux_info.share_cgroups);
    Mesos__V1__CSIPluginInfo csi = MESOS__V1__CSIPLUGIN_INFO__INIT;
    ck_assert_str_eq(csi.name, "default");
    Mesos__V1__DrainConfig dc = MESOS__V1__DRAIN_CONFIG__INIT;
    ck_assert(!dc.mark_gone);
    Mesos__V1__Master__Call__DrainAgent da =
        MESOS__V1__MASTER__CALL__DRAIN_AGENT__INIT;
    ck_assert(!da.mark_gone);
}
END_TEST

START_TEST(test_defaults_not_written)
{
    /* Filters with the default refuse_seconds left unset packs to nothing;
     * set explicitly it is field 1 as a double. */
    Mesos__V1__Filters f = MESOS__V1__FILTERS__INIT;
    expect_packed(&f.base, NULL, 0);
    f.has_refuse_seconds = 1;
    f.refuse_seconds = 2.0;
    static const uint8_t want[] = {0x09, 0x00, 0x00, 0x00, 0x00,
                                   0x00, 0x00, 0x00, 0x40};
    expect_packed(&f.base, want, sizeof want);
}
END_TEST

/* ---- offerd's own messages -------------------------------------------- */

START_TEST(test_agent_call_update_round_trip)
{
    static uint8_t uuid[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = "fw";
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = "ag";
    Mesos__V1__TaskID tid = MESOS__V1__TASK_ID__INIT;
    tid.value = "t";
    Mesos__V1__TaskStatus st = MESOS__V1__TASK_STATUS__INIT;
    st.task_id = &tid;
    st.state = MESOS__V1__TASK_STATE__TASK_RUNNING;
    st.has_uuid = 1;
    st.uuid.len = sizeof uuid;
    st.uuid.data = uuid;
    Offerd__Agent__Call__Update up = OFFERD__AGENT__CALL__UPDATE__INIT;
    up.framework_id = &fid;
    up.status = &st;
    up.has_latest_state = 1;
    up.latest_state = MESOS__V1__TASK_STATE__TASK_FINISHED;
    Offerd__Agent__Call call = OFFERD__AGENT__CALL__INIT;
    call.agent_id = &aid;
    call.type = OFFERD__AGENT__CALL__TYPE__UPDATE;
    call.update = &up;

    Offerd__Agent__Call *copy = (Offerd__Agent__Call *)round_trip(&call.base);
    ck_assert_int_eq(copy->type, OFFERD__AGENT__CALL__TYPE__UPDATE);
    ck_assert_str_eq(copy->agent_id->value, "ag");
    ck_assert_ptr_nonnull(copy->update);
    ck_assert_str_eq(copy->update->framework_id->value, "fw");
    ck_assert_mem_eq(copy->update->status->uuid.data, uuid, sizeof uuid);
    ck_assert_int_eq(copy->update->latest_state,
                     MESOS__V1__TASK_STATE__TASK_FINISHED);
    offerd__agent__call__free_unpacked(copy, NULL);
}
END_TEST

START_TEST(test_agent_event_wire)
{
    /* Event{type: PING, ping: {sequence: 300}}: PING = 9, ping field 10. */
    Offerd__Agent__Event__Ping ping = OFFERD__AGENT__EVENT__PING__INIT;
    ping.sequence = 300;
    Offerd__Agent__Event ev = OFFERD__AGENT__EVENT__INIT;
    ev.type = OFFERD__AGENT__EVENT__TYPE__PING;
    ev.ping = &ping;
    static const uint8_t want[] = {0x08, 0x09, 0x52, 0x03, 0x08, 0xac, 0x02};
    expect_packed(&ev.base, want, sizeof want);
}
END_TEST

START_TEST(test_agent_payload_numbering)
{
    /* Each Call payload is field type + 2, each Event payload type + 1. */
    const ProtobufCEnumDescriptor *ct = &offerd__agent__call__type__descriptor;
    const ProtobufCMessageDescriptor *cm = &offerd__agent__call__descriptor;
    for (unsigned i = 0; i < cm->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &cm->fields[i];
        if (f->type != PROTOBUF_C_TYPE_MESSAGE ||
            strcmp(f->name, "agent_id") == 0)
            continue;
        const ProtobufCEnumValue *v =
            protobuf_c_enum_descriptor_get_value((ct), (int)f->id - 2);
        ck_assert_msg(v != NULL, "Call.%s has no type", f->name);
    }
    const ProtobufCEnumDescriptor *et = &offerd__agent__event__type__descriptor;
    const ProtobufCMessageDescriptor *em = &offerd__agent__event__descriptor;
    for (unsigned i = 0; i < em->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &em->fields[i];
        if (f->type != PROTOBUF_C_TYPE_MESSAGE)
            continue;
        const ProtobufCEnumValue *v =
            protobuf_c_enum_descriptor_get_value(et, (int)f->id - 1);
        ck_assert_msg(v != NULL, "Event.%s has no type", f->name);
    }
    ck_assert_int_eq(OFFERD__AGENT__EVENT__TYPE__CHECKPOINT_RESOURCES, 7);
    ck_assert_int_eq(OFFERD__AGENT__CALL__TYPE__CHECKPOINTED_RESOURCES, 5);
}
END_TEST

START_TEST(test_registry_round_trip)
{
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = "ag";
    Mesos__V1__AgentInfo info = MESOS__V1__AGENT_INFO__INIT;
    info.hostname = "host";
    info.id = &aid;
    Offerd__Registry__Agent agent = OFFERD__REGISTRY__AGENT__INIT;
    agent.info = &info;
    agent.has_checkpointed_resources_version = 1;
    agent.checkpointed_resources_version = 7;
    Offerd__Registry__Agent *agents[] = {&agent};

    Mesos__V1__TimeInfo when = MESOS__V1__TIME_INFO__INIT;
    when.nanoseconds = 1000;
    Offerd__Registry__GoneAgent gone = OFFERD__REGISTRY__GONE_AGENT__INIT;
    gone.id = &aid;
    gone.timestamp = &when;
    Offerd__Registry__GoneAgent *gones[] = {&gone};

    Mesos__V1__WeightInfo w = MESOS__V1__WEIGHT_INFO__INIT;
    w.weight = 2.5;
    w.role = "eng";
    Mesos__V1__WeightInfo *weights[] = {&w};

    Offerd__Registry__Registry reg = OFFERD__REGISTRY__REGISTRY__INIT;
    reg.n_agents = 1;
    reg.agents = agents;
    reg.n_gone_agents = 1;
    reg.gone_agents = gones;
    reg.n_weights = 1;
    reg.weights = weights;

    Offerd__Registry__Registry *copy =
        (Offerd__Registry__Registry *)round_trip(&reg.base);
    ck_assert_uint_eq(copy->n_agents, 1);
    ck_assert_str_eq(copy->agents[0]->info->id->value, "ag");
    ck_assert_uint_eq(copy->agents[0]->checkpointed_resources_version, 7);
    ck_assert_uint_eq(copy->n_gone_agents, 1);
    ck_assert_int_eq(copy->gone_agents[0]->timestamp->nanoseconds, 1000);
    ck_assert(copy->weights[0]->weight == 2.5);
    ck_assert_uint_eq(copy->format_version, 1);
    offerd__registry__registry__free_unpacked(copy, NULL);
}
END_TEST

static Suite *proto_suite(void)
{
    Suite *s = suite_create("proto");

    TCase *wire = tcase_create("wire");
    tcase_add_test(wire, test_pack_resource_scalar);
    tcase_add_test(wire, test_pack_resource_reserved);
    tcase_add_test(wire, test_pack_scheduler_subscribe);
    tcase_add_test(wire, test_pack_offer);
    tcase_add_test(wire, test_pack_offer_operation);
    tcase_add_test(wire, test_pack_task_info_limits_map);
    tcase_add_test(wire, test_pack_master_drain_agent);
    tcase_add_test(wire, test_pack_quota_config_maps);
    tcase_add_test(wire, test_unpack_task_status);
    tcase_add_test(wire, test_unpack_skips_unknown_fields);
    tcase_add_test(wire, test_unpack_rejects_missing_required);
    suite_add_tcase(s, wire);

    TCase *numbers = tcase_create("numbers");
    tcase_add_loop_test(numbers, test_field_number, 0,
                        (int)(sizeof field_cases / sizeof field_cases[0]));
    tcase_add_loop_test(numbers, test_enum_value, 0,
                        (int)(sizeof enum_cases / sizeof enum_cases[0]));
    tcase_add_test(numbers, test_enum_sizes);
    suite_add_tcase(s, numbers);

    TCase *defaults = tcase_create("defaults");
    tcase_add_test(defaults, test_mesos_defaults);
    tcase_add_test(defaults, test_defaults_not_written);
    suite_add_tcase(s, defaults);

    TCase *offerd = tcase_create("offerd");
    tcase_add_test(offerd, test_agent_call_update_round_trip);
    tcase_add_test(offerd, test_agent_event_wire);
    tcase_add_test(offerd, test_agent_payload_numbering);
    tcase_add_test(offerd, test_registry_round_trip);
    suite_add_tcase(s, offerd);

    return s;
}

OFFERD_CHECK_MAIN(proto_suite)
