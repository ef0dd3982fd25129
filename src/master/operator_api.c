/*
 * POST /api/v1: Mesos's v1 operator API (mesos.v1.master.Call/Response), in
 * JSON or protobuf. Calls answer synchronously: 200 with a Response for the
 * GET_* calls, 200 with an empty body for the others once their change is
 * durable. Calls offerd does not serve yet are answered 501 with the call's
 * name, so tools can tell "not here" from "malformed" (400).
 */
#include "master/operator_api.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_pb.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/resources_pb.h"
#include "master/maintenance.h"
#include "master/master.h"
#include "master/reservations.h"
#include "mesos/v1/master.pb-c.h"
#include "offerd/registry.pb-c.h"

static void reply_response(struct http_request *req, enum http_encoding enc,
                           const Mesos__V1__Master__Response *resp)
{
    size_t len;
    uint8_t *buf = jpb_encode(&resp->base, (enum jpb_format)enc, &len);
    http_reply(req, 200,
               enc == HTTP_ENC_JSON ? HTTP_CONTENT_JSON : HTTP_CONTENT_PROTOBUF,
               buf, len);
    free(buf);
}

/* ---- GET_AGENTS ------------------------------------------------------------
 */

static Mesos__V1__TimeInfo *time_new(double secs)
{
    Mesos__V1__TimeInfo *t = xmalloc(sizeof(*t));
    mesos__v1__time_info__init(t);
    t->nanoseconds = (int64_t)(secs * 1e9);
    return t;
}

/* A new GetAgents response (free with protobuf_c_message_free_unpacked). */
static Mesos__V1__Master__Response__GetAgents *get_agents(struct master *m)
{
    Mesos__V1__Master__Response__GetAgents *ga = xmalloc(sizeof(*ga));
    mesos__v1__master__response__get_agents__init(ga);
    size_t n = hmap_count(m->agents), pos = 0;
    ga->agents = xcalloc(n ? n : 1, sizeof(*ga->agents));
    void *val;
    while (hmap_next(m->agents, &pos, NULL, &val)) {
        const struct agent *ag = val;
        if (ag->info == NULL)
            continue;
        Mesos__V1__Master__Response__GetAgents__Agent *a = xmalloc(sizeof(*a));
        mesos__v1__master__response__get_agents__agent__init(a);
        a->agent_info =
            master_pb_copy(&mesos__v1__agent_info__descriptor, &ag->info->base);
        a->active = ag->connected && !ag->deactivated;
        a->has_deactivated = true;
        a->deactivated = ag->deactivated;
        a->version = xstrdup(ag->version != NULL ? ag->version : "");
        a->pid = xasprintf("slave(1)@%s:%u", ag->ip, (unsigned)ag->port);
        a->registered_time = time_new(ag->registered_time);
        if (ag->reregistered_time > 0)
            a->reregistered_time = time_new(ag->reregistered_time);
        a->total_resources =
            res_list_to_pb(&ag->total, true, &a->n_total_resources);
        if (ag->drain != NULL)
            a->drain_info = master_pb_copy(&mesos__v1__drain_info__descriptor,
                                           &ag->drain->base);
        ga->agents[ga->n_agents++] = a;
    }
    n = hmap_count(m->recovered_agents);
    ga->recovered_agents = xcalloc(n ? n : 1, sizeof(*ga->recovered_agents));
    pos = 0;
    while (hmap_next(m->recovered_agents, &pos, NULL, &val)) {
        const Offerd__Registry__Agent *r = val;
        ga->recovered_agents[ga->n_recovered_agents++] =
            master_pb_copy(&mesos__v1__agent_info__descriptor, &r->info->base);
    }
    return ga;
}

/* RESERVE_RESOURCES, UNRESERVE_RESOURCES, CREATE_VOLUMES, DESTROY_VOLUMES:
 * 202 once durable (reservations.c answers). */
static void resv_call(struct master *m, struct http_request *req,
                      enum master_resv_op kind, const char *agent_id,
                      Mesos__V1__Resource *const *pb, size_t n)
{
    res_list res = RES_LIST_INIT;
    char err[512];
    if (res_list_from_pb(pb, n, &res, err, sizeof(err)) != 0)
        http_reply_error(req, 400, "%s", err);
    else
        master_resv_operator(m, req, kind, agent_id, &res);
    res_list_clear(&res);
}

/* ---- The endpoint
 * ------------------------------------------------------------
 */

static const char *call_name(Mesos__V1__Master__Call__Type t)
{
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
        &mesos__v1__master__call__type__descriptor, (int)t);
    return v != NULL ? v->name : "UNKNOWN";
}

#define REQUIRE(field, name)                                                   \
    do {                                                                       \
        if (call->field == NULL) {                                             \
            http_reply_error(req, 400, "%s: required for %s", name,            \
                             call_name(call->type));                           \
            goto out;                                                          \
        }                                                                      \
    } while (0)

void master_operator_api(struct http_request *req, void *arg)
{
    struct master *m = arg;
    enum http_encoding body_enc, reply_enc;
    if (http_negotiate(req, &body_enc, &reply_enc) != 0)
        return;
    size_t len;
    const uint8_t *body = http_request_body(req, &len);
    char err[512];
    Mesos__V1__Master__Call *call = (Mesos__V1__Master__Call *)jpb_decode(
        &mesos__v1__master__call__descriptor, (enum jpb_format)body_enc, body,
        len, err, sizeof(err));
    if (call == NULL) {
        http_reply_error(req, 400, "%s", err);
        return;
    }
    if (!call->has_type ||
        call->type == MESOS__V1__MASTER__CALL__TYPE__UNKNOWN ||
        protobuf_c_enum_descriptor_get_value(
            &mesos__v1__master__call__type__descriptor, call->type) == NULL) {
        http_reply_error(req, 400, "unknown call type");
        goto out;
    }

    Mesos__V1__Master__Response resp = MESOS__V1__MASTER__RESPONSE__INIT;
    resp.has_type = true;
    switch (call->type) {
    case MESOS__V1__MASTER__CALL__TYPE__GET_HEALTH: {
        Mesos__V1__Master__Response__GetHealth h =
            MESOS__V1__MASTER__RESPONSE__GET_HEALTH__INIT;
        h.healthy = true;
        resp.type = MESOS__V1__MASTER__RESPONSE__TYPE__GET_HEALTH;
        resp.get_health = &h;
        reply_response(req, reply_enc, &resp);
        break;
    }
    case MESOS__V1__MASTER__CALL__TYPE__GET_VERSION: {
        Mesos__V1__VersionInfo vi = MESOS__V1__VERSION_INFO__INIT;
        vi.version = OFFERD_VERSION;
        Mesos__V1__Master__Response__GetVersion v =
            MESOS__V1__MASTER__RESPONSE__GET_VERSION__INIT;
        v.version_info = &vi;
        resp.type = MESOS__V1__MASTER__RESPONSE__TYPE__GET_VERSION;
        resp.get_version = &v;
        reply_response(req, reply_enc, &resp);
        break;
    }
    case MESOS__V1__MASTER__CALL__TYPE__GET_AGENTS: {
        Mesos__V1__Master__Response__GetAgents *ga = get_agents(m);
        resp.type = MESOS__V1__MASTER__RESPONSE__TYPE__GET_AGENTS;
        resp.get_agents = ga;
        reply_response(req, reply_enc, &resp);
        protobuf_c_message_free_unpacked(&ga->base, NULL);
        break;
    }
    case MESOS__V1__MASTER__CALL__TYPE__GET_MAINTENANCE_SCHEDULE: {
        Mesos__V1__Master__Response__GetMaintenanceSchedule gs =
            MESOS__V1__MASTER__RESPONSE__GET_MAINTENANCE_SCHEDULE__INIT;
        gs.schedule =
            (Mesos__V1__Maintenance__Schedule *)master_maint_schedule(m);
        resp.type = MESOS__V1__MASTER__RESPONSE__TYPE__GET_MAINTENANCE_SCHEDULE;
        resp.get_maintenance_schedule = &gs;
        reply_response(req, reply_enc, &resp);
        break;
    }
    case MESOS__V1__MASTER__CALL__TYPE__GET_MAINTENANCE_STATUS: {
        Mesos__V1__Master__Response__GetMaintenanceStatus gs =
            MESOS__V1__MASTER__RESPONSE__GET_MAINTENANCE_STATUS__INIT;
        gs.status = master_maint_status(m);
        resp.type = MESOS__V1__MASTER__RESPONSE__TYPE__GET_MAINTENANCE_STATUS;
        resp.get_maintenance_status = &gs;
        reply_response(req, reply_enc, &resp);
        protobuf_c_message_free_unpacked(&gs.status->base, NULL);
        break;
    }
    case MESOS__V1__MASTER__CALL__TYPE__UPDATE_MAINTENANCE_SCHEDULE:
        REQUIRE(update_maintenance_schedule, "update_maintenance_schedule");
        master_maint_update_schedule(
            m, req, call->update_maintenance_schedule->schedule);
        break;
    case MESOS__V1__MASTER__CALL__TYPE__START_MAINTENANCE:
        REQUIRE(start_maintenance, "start_maintenance");
        master_maint_machines(m, req, true, call->start_maintenance->machines,
                              call->start_maintenance->n_machines);
        break;
    case MESOS__V1__MASTER__CALL__TYPE__STOP_MAINTENANCE:
        REQUIRE(stop_maintenance, "stop_maintenance");
        master_maint_machines(m, req, false, call->stop_maintenance->machines,
                              call->stop_maintenance->n_machines);
        break;
    case MESOS__V1__MASTER__CALL__TYPE__DRAIN_AGENT: {
        REQUIRE(drain_agent, "drain_agent");
        const Mesos__V1__Master__Call__DrainAgent *d = call->drain_agent;
        Mesos__V1__DurationInfo grace = MESOS__V1__DURATION_INFO__INIT;
        if (d->max_grace_period != NULL) {
            const Google__Protobuf__Duration *g = d->max_grace_period;
            if (g->seconds < 0 || g->nanos < 0 ||
                g->seconds > INT64_MAX / 1000000000 - 1) {
                http_reply_error(req, 400,
                                 "drain_agent.max_grace_period: must be a "
                                 "non-negative duration");
                goto out;
            }
            grace.nanoseconds = g->seconds * 1000000000 + g->nanos;
        }
        master_maint_drain_agent(m, req, d->agent_id->value,
                                 d->max_grace_period != NULL ? &grace : NULL,
                                 d->has_mark_gone && d->mark_gone);
        break;
    }
    case MESOS__V1__MASTER__CALL__TYPE__DEACTIVATE_AGENT:
        REQUIRE(deactivate_agent, "deactivate_agent");
        master_maint_set_agent_active(
            m, req, call->deactivate_agent->agent_id->value, false);
        break;
    case MESOS__V1__MASTER__CALL__TYPE__REACTIVATE_AGENT:
        REQUIRE(reactivate_agent, "reactivate_agent");
        master_maint_set_agent_active(
            m, req, call->reactivate_agent->agent_id->value, true);
        break;
    case MESOS__V1__MASTER__CALL__TYPE__RESERVE_RESOURCES:
        REQUIRE(reserve_resources, "reserve_resources");
        resv_call(m, req, MASTER_RESV_RESERVE,
                  call->reserve_resources->agent_id->value,
                  call->reserve_resources->resources,
                  call->reserve_resources->n_resources);
        break;
    case MESOS__V1__MASTER__CALL__TYPE__UNRESERVE_RESOURCES:
        REQUIRE(unreserve_resources, "unreserve_resources");
        resv_call(m, req, MASTER_RESV_UNRESERVE,
                  call->unreserve_resources->agent_id->value,
                  call->unreserve_resources->resources,
                  call->unreserve_resources->n_resources);
        break;
    case MESOS__V1__MASTER__CALL__TYPE__CREATE_VOLUMES:
        REQUIRE(create_volumes, "create_volumes");
        resv_call(
            m, req, MASTER_RESV_CREATE, call->create_volumes->agent_id->value,
            call->create_volumes->volumes, call->create_volumes->n_volumes);
        break;
    case MESOS__V1__MASTER__CALL__TYPE__DESTROY_VOLUMES:
        REQUIRE(destroy_volumes, "destroy_volumes");
        resv_call(
            m, req, MASTER_RESV_DESTROY, call->destroy_volumes->agent_id->value,
            call->destroy_volumes->volumes, call->destroy_volumes->n_volumes);
        break;
    default:
        http_reply_error(req, 501, "%s is not supported by offerd yet",
                         call_name(call->type));
        break;
    }
out:
    jpb_free(&call->base);
}
