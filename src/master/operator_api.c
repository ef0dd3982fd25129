/*
 * POST /api/v1: Mesos's v1 operator API (mesos.v1.master.Call/Response), in
 * JSON or protobuf. Calls answer synchronously: 200 with a Response for the
 * GET_* calls, 200 with an empty body for the others once their change is
 * durable. Calls offerd does not serve yet are answered 501 with the call's
 * name, so tools can tell "not here" from "malformed" (400).
 */
#include "master/authz.h"
#include "master/operator_api.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_pb.h"
#include "common/log.h"
#include "common/log_toggle.h"
#include "common/mem.h"
#include "common/resources_pb.h"
#include "master/admin_endpoints.h"
#include "master/agents.h"
#include "master/calls.h"
#include "master/files.h"
#include "master/maintenance.h"
#include "master/master.h"
#include "master/operator_events.h"
#include "master/operator_state.h"
#include "master/operator_stream.h"
#include "master/quota.h"
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

/* ---- The calls -------------------------------------------------------------
 */

static const Mesos__V1__Master__Call *op_call(const struct master_call_ctx *c)
{
    return (const Mesos__V1__Master__Call *)c->call;
}

static Mesos__V1__Master__Response
response_of(Mesos__V1__Master__Response__Type type)
{
    Mesos__V1__Master__Response resp = MESOS__V1__MASTER__RESPONSE__INIT;
    resp.has_type = true;
    resp.type = type;
    return resp;
}

static void get_health(struct master_call_ctx *c)
{
    Mesos__V1__Master__Response__GetHealth h =
        MESOS__V1__MASTER__RESPONSE__GET_HEALTH__INIT;
    h.healthy = true;
    Mesos__V1__Master__Response resp =
        response_of(MESOS__V1__MASTER__RESPONSE__TYPE__GET_HEALTH);
    resp.get_health = &h;
    reply_response(c->req, c->reply_enc, &resp);
}

static void get_version(struct master_call_ctx *c)
{
    Mesos__V1__Master__Response__GetVersion v =
        MESOS__V1__MASTER__RESPONSE__GET_VERSION__INIT;
    v.version_info = master_opst_version();
    Mesos__V1__Master__Response resp =
        response_of(MESOS__V1__MASTER__RESPONSE__TYPE__GET_VERSION);
    resp.get_version = &v;
    reply_response(c->req, c->reply_enc, &resp);
    protobuf_c_message_free_unpacked(&v.version_info->base, NULL);
}

/* GET_STATE, GET_AGENTS, GET_FRAMEWORKS, GET_TASKS, GET_EXECUTORS: written
 * in slices (operator_stream.c); the others: the Response operator_state.c
 * builds. */
static void get_state_call(struct master_call_ctx *c)
{
    Mesos__V1__Master__Call__Type type = (Mesos__V1__Master__Call__Type)c->type;
    if (master_opstream_serves(type)) {
        master_opstream_reply(c->m, c->req, c->principal, type, c->reply_enc);
        return;
    }
    Mesos__V1__Master__Response *resp = master_opst_response(c->m, type);
    master_authz_filter_response(c->m, c->principal, &resp->base);
    reply_response(c->req, c->reply_enc, resp);
    protobuf_c_message_free_unpacked(&resp->base, NULL);
}

static void subscribe(struct master_call_ctx *c)
{
    master_opev_subscribe(c->m, c->req, c->reply_enc);
}

static void get_maintenance_schedule(struct master_call_ctx *c)
{
    Mesos__V1__Master__Response__GetMaintenanceSchedule gs =
        MESOS__V1__MASTER__RESPONSE__GET_MAINTENANCE_SCHEDULE__INIT;
    gs.schedule =
        (Mesos__V1__Maintenance__Schedule *)master_maint_schedule(c->m);
    Mesos__V1__Master__Response resp = response_of(
        MESOS__V1__MASTER__RESPONSE__TYPE__GET_MAINTENANCE_SCHEDULE);
    resp.get_maintenance_schedule = &gs;
    reply_response(c->req, c->reply_enc, &resp);
}

static void get_maintenance_status(struct master_call_ctx *c)
{
    Mesos__V1__Master__Response__GetMaintenanceStatus gs =
        MESOS__V1__MASTER__RESPONSE__GET_MAINTENANCE_STATUS__INIT;
    gs.status = master_maint_status(c->m);
    Mesos__V1__Master__Response resp =
        response_of(MESOS__V1__MASTER__RESPONSE__TYPE__GET_MAINTENANCE_STATUS);
    resp.get_maintenance_status = &gs;
    reply_response(c->req, c->reply_enc, &resp);
    protobuf_c_message_free_unpacked(&gs.status->base, NULL);
}

static void update_maintenance_schedule(struct master_call_ctx *c)
{
    master_maint_update_schedule(
        c->m, c->req, op_call(c)->update_maintenance_schedule->schedule);
}

static void start_maintenance(struct master_call_ctx *c)
{
    const Mesos__V1__Master__Call__StartMaintenance *s =
        op_call(c)->start_maintenance;
    master_maint_machines(c->m, c->req, true, s->machines, s->n_machines);
}

static void stop_maintenance(struct master_call_ctx *c)
{
    const Mesos__V1__Master__Call__StopMaintenance *s =
        op_call(c)->stop_maintenance;
    master_maint_machines(c->m, c->req, false, s->machines, s->n_machines);
}

static void drain_agent(struct master_call_ctx *c)
{
    const Mesos__V1__Master__Call__DrainAgent *d = op_call(c)->drain_agent;
    Mesos__V1__DurationInfo grace = MESOS__V1__DURATION_INFO__INIT;
    if (d->max_grace_period != NULL) {
        const Google__Protobuf__Duration *g = d->max_grace_period;
        if (g->seconds < 0 || g->nanos < 0 ||
            g->seconds > INT64_MAX / 1000000000 - 1) {
            http_reply_error(c->req, 400,
                             "drain_agent.max_grace_period: must be a "
                             "non-negative duration");
            return;
        }
        grace.nanoseconds = g->seconds * 1000000000 + g->nanos;
    }
    master_maint_drain_agent(c->m, c->req, d->agent_id->value,
                             d->max_grace_period != NULL ? &grace : NULL,
                             d->has_mark_gone && d->mark_gone);
}

static void deactivate_agent(struct master_call_ctx *c)
{
    master_maint_set_agent_active(
        c->m, c->req, op_call(c)->deactivate_agent->agent_id->value, false);
}

static void reactivate_agent(struct master_call_ctx *c)
{
    master_maint_set_agent_active(
        c->m, c->req, op_call(c)->reactivate_agent->agent_id->value, true);
}

static void reserve_resources(struct master_call_ctx *c)
{
    const Mesos__V1__Master__Call__ReserveResources *r =
        op_call(c)->reserve_resources;
    resv_call(c->m, c->req, MASTER_RESV_RESERVE, r->agent_id->value,
              r->resources, r->n_resources);
}

static void unreserve_resources(struct master_call_ctx *c)
{
    const Mesos__V1__Master__Call__UnreserveResources *r =
        op_call(c)->unreserve_resources;
    resv_call(c->m, c->req, MASTER_RESV_UNRESERVE, r->agent_id->value,
              r->resources, r->n_resources);
}

static void create_volumes(struct master_call_ctx *c)
{
    const Mesos__V1__Master__Call__CreateVolumes *v =
        op_call(c)->create_volumes;
    resv_call(c->m, c->req, MASTER_RESV_CREATE, v->agent_id->value, v->volumes,
              v->n_volumes);
}

static void destroy_volumes(struct master_call_ctx *c)
{
    const Mesos__V1__Master__Call__DestroyVolumes *v =
        op_call(c)->destroy_volumes;
    resv_call(c->m, c->req, MASTER_RESV_DESTROY, v->agent_id->value, v->volumes,
              v->n_volumes);
}

/* GROW_VOLUME and SHRINK_VOLUME: 202 once durable (reservations.c
 * answers). The agent id is optional in the .proto (for resource
 * providers, which offerd does not have); here it is required. */
static void grow_volume(struct master_call_ctx *c)
{
    const Mesos__V1__Master__Call__GrowVolume *g = op_call(c)->grow_volume;
    if (g->agent_id == NULL) {
        http_reply_error(c->req, 400,
                         "grow_volume.agent_id: required for GROW_VOLUME");
        return;
    }
    master_resv_operator_resize(c->m, c->req, MASTER_RESV_GROW,
                                g->agent_id->value, g->volume, g->addition,
                                NULL);
}

static void shrink_volume(struct master_call_ctx *c)
{
    const Mesos__V1__Master__Call__ShrinkVolume *s = op_call(c)->shrink_volume;
    if (s->agent_id == NULL) {
        http_reply_error(c->req, 400,
                         "shrink_volume.agent_id: required for SHRINK_VOLUME");
        return;
    }
    master_resv_operator_resize(c->m, c->req, MASTER_RESV_SHRINK,
                                s->agent_id->value, s->volume, NULL,
                                s->subtract);
}

static void teardown(struct master_call_ctx *c)
{
    master_teardown_framework(c->m, c->req,
                              op_call(c)->teardown->framework_id->value);
}

/* ---- Agents gone, logging, files (issue 16) ------------------------------ */

static void mark_agent_gone(struct master_call_ctx *c)
{
    const Mesos__V1__AgentID *id = op_call(c)->mark_agent_gone->agent_id;
    if (id == NULL || id->value == NULL) {
        http_reply_error(c->req, 400, "mark_agent_gone.agent_id: required");
        return;
    }
    master_agent_mark_gone(c->m, c->req, id->value);
}

/* GET_LOGGING_LEVEL: the verbosity in force (0, or what SET_LOGGING_LEVEL
 * or /logging/toggle set until it reverts), as Mesos answers glog's. */
static void get_logging_level(struct master_call_ctx *c)
{
    Mesos__V1__Master__Response__GetLoggingLevel gl =
        MESOS__V1__MASTER__RESPONSE__GET_LOGGING_LEVEL__INIT;
    gl.level = log_toggle_verbosity(master_log_toggle(c->m));
    Mesos__V1__Master__Response resp =
        response_of(MESOS__V1__MASTER__RESPONSE__TYPE__GET_LOGGING_LEVEL);
    resp.get_logging_level = &gl;
    reply_response(c->req, c->reply_enc, &resp);
}

/* SET_LOGGING_LEVEL {level, duration}: 200 once set; the level reverts
 * after duration. */
static void set_logging_level(struct master_call_ctx *c)
{
    const Mesos__V1__Master__Call__SetLoggingLevel *s =
        op_call(c)->set_logging_level;
    if (s->duration == NULL) {
        http_reply_error(c->req, 400, "set_logging_level.duration: required");
        return;
    }
    if (s->duration->nanoseconds < 0) {
        http_reply_error(c->req, 400,
                         "set_logging_level.duration: must not be negative");
        return;
    }
    log_toggle_set(master_log_toggle(c->m), s->level, s->duration->nanoseconds);
    http_reply(c->req, 200, NULL, NULL, 0);
}

static void list_files(struct master_call_ctx *c)
{
    Mesos__V1__Master__Response *resp =
        master_files_list(c->m, c->req, op_call(c)->list_files);
    if (resp == NULL)
        return;
    reply_response(c->req, c->reply_enc, resp);
    protobuf_c_message_free_unpacked(&resp->base, NULL);
}

static void read_file(struct master_call_ctx *c)
{
    Mesos__V1__Master__Response *resp =
        master_files_read(c->m, c->req, op_call(c)->read_file);
    if (resp == NULL)
        return;
    reply_response(c->req, c->reply_enc, resp);
    protobuf_c_message_free_unpacked(&resp->base, NULL);
}

/* ---- Weights and quota (quota.c) ---------------------------------------- */

static void get_weights(struct master_call_ctx *c)
{
    Mesos__V1__Master__Response__GetWeights *gw =
        master_quota_get_weights(c->m);
    Mesos__V1__Master__Response resp =
        response_of(MESOS__V1__MASTER__RESPONSE__TYPE__GET_WEIGHTS);
    resp.get_weights = gw;
    master_authz_filter_response(c->m, c->principal, &resp.base);
    reply_response(c->req, c->reply_enc, &resp);
    protobuf_c_message_free_unpacked(&gw->base, NULL);
}

static void update_weights(struct master_call_ctx *c)
{
    const Mesos__V1__Master__Call__UpdateWeights *u =
        op_call(c)->update_weights;
    master_quota_update_weights(c->m, c->req, u->weight_infos,
                                u->n_weight_infos);
}

static void get_quota(struct master_call_ctx *c)
{
    Mesos__V1__Master__Response__GetQuota gq =
        MESOS__V1__MASTER__RESPONSE__GET_QUOTA__INIT;
    gq.status = master_quota_status(c->m);
    Mesos__V1__Master__Response resp =
        response_of(MESOS__V1__MASTER__RESPONSE__TYPE__GET_QUOTA);
    resp.get_quota = &gq;
    master_authz_filter_response(c->m, c->principal, &resp.base);
    reply_response(c->req, c->reply_enc, &resp);
    protobuf_c_message_free_unpacked(&gq.status->base, NULL);
}

static void update_quota(struct master_call_ctx *c)
{
    const Mesos__V1__Master__Call__UpdateQuota *u = op_call(c)->update_quota;
    master_quota_update(c->m, c->req, u->has_force && u->force,
                        u->quota_configs, u->n_quota_configs);
}

static void set_quota(struct master_call_ctx *c)
{
    master_quota_set(c->m, c->req, op_call(c)->set_quota->quota_request);
}

static void remove_quota(struct master_call_ctx *c)
{
    master_quota_remove(c->m, c->req, op_call(c)->remove_quota->role);
}

/* ---- The endpoint
 * ------------------------------------------------------------
 */

static const struct master_api operator_api;

static void not_supported(struct master_call_ctx *c)
{
    http_reply_error(c->req, 501, "%s is not supported by offerd yet",
                     master_call_type_name(&operator_api, c->type));
}

#define ROW(type, payload, fn, action)                                         \
    {                                                                          \
        MESOS__V1__MASTER__CALL__TYPE__##type, payload, fn,                    \
            MASTER_CALL_NO_COUNT, MASTER_CALL_OPEN, action                     \
    }

static const struct master_call operator_rows[] = {
    ROW(GET_HEALTH, NULL, get_health, ACL_NONE),
    ROW(GET_VERSION, NULL, get_version, ACL_NONE),
    ROW(GET_AGENTS, NULL, get_state_call, ACL_NONE),
    ROW(GET_STATE, NULL, get_state_call, ACL_NONE),
    ROW(GET_FRAMEWORKS, NULL, get_state_call, ACL_NONE),
    ROW(GET_TASKS, NULL, get_state_call, ACL_NONE),
    ROW(GET_EXECUTORS, NULL, get_state_call, ACL_NONE),
    ROW(GET_OPERATIONS, NULL, get_state_call, ACL_NONE),
    ROW(GET_ROLES, NULL, get_state_call, ACL_NONE),
    ROW(GET_FLAGS, NULL, get_state_call, ACL_VIEW_FLAGS),
    ROW(GET_METRICS, NULL, get_state_call, ACL_NONE),
    ROW(GET_LOGGING_LEVEL, NULL, get_logging_level, ACL_NONE),
    ROW(GET_MASTER, NULL, get_state_call, ACL_NONE),
    ROW(SUBSCRIBE, NULL, subscribe, ACL_NONE),
    ROW(GET_MAINTENANCE_SCHEDULE, NULL, get_maintenance_schedule,
        ACL_GET_MAINTENANCE_SCHEDULES),
    ROW(GET_MAINTENANCE_STATUS, NULL, get_maintenance_status,
        ACL_GET_MAINTENANCE_STATUSES),
    ROW(UPDATE_MAINTENANCE_SCHEDULE, "update_maintenance_schedule",
        update_maintenance_schedule, ACL_UPDATE_MAINTENANCE_SCHEDULES),
    ROW(START_MAINTENANCE, "start_maintenance", start_maintenance,
        ACL_START_MAINTENANCES),
    ROW(STOP_MAINTENANCE, "stop_maintenance", stop_maintenance,
        ACL_STOP_MAINTENANCES),
    ROW(DRAIN_AGENT, "drain_agent", drain_agent, ACL_DRAIN_AGENTS),
    ROW(DEACTIVATE_AGENT, "deactivate_agent", deactivate_agent,
        ACL_DEACTIVATE_AGENTS),
    ROW(REACTIVATE_AGENT, "reactivate_agent", reactivate_agent,
        ACL_REACTIVATE_AGENTS),
    ROW(RESERVE_RESOURCES, "reserve_resources", reserve_resources,
        ACL_RESERVE_RESOURCES),
    ROW(UNRESERVE_RESOURCES, "unreserve_resources", unreserve_resources,
        ACL_UNRESERVE_RESOURCES),
    ROW(CREATE_VOLUMES, "create_volumes", create_volumes, ACL_CREATE_VOLUMES),
    ROW(DESTROY_VOLUMES, "destroy_volumes", destroy_volumes,
        ACL_DESTROY_VOLUMES),
    ROW(GROW_VOLUME, "grow_volume", grow_volume, ACL_RESIZE_VOLUME),
    ROW(SHRINK_VOLUME, "shrink_volume", shrink_volume, ACL_RESIZE_VOLUME),
    /* Framework history (issue 16). */
    ROW(TEARDOWN, "teardown", teardown, ACL_TEARDOWN_FRAMEWORKS),
    /* Agents gone, logging, files (issue 16). */
    ROW(MARK_AGENT_GONE, "mark_agent_gone", mark_agent_gone,
        ACL_MARK_AGENTS_GONE),
    ROW(SET_LOGGING_LEVEL, "set_logging_level", set_logging_level,
        ACL_SET_LOG_LEVEL),
    ROW(LIST_FILES, "list_files", list_files, ACL_ACCESS_MESOS_LOGS),
    ROW(READ_FILE, "read_file", read_file, ACL_ACCESS_MESOS_LOGS),
    /* Weights and quota (quota.c). */
    ROW(GET_WEIGHTS, NULL, get_weights, ACL_NONE),
    ROW(UPDATE_WEIGHTS, "update_weights", update_weights, ACL_UPDATE_WEIGHTS),
    ROW(GET_QUOTA, NULL, get_quota, ACL_NONE),
    ROW(UPDATE_QUOTA, "update_quota", update_quota, ACL_UPDATE_QUOTAS),
    ROW(SET_QUOTA, "set_quota", set_quota, ACL_UPDATE_QUOTAS),
    ROW(REMOVE_QUOTA, "remove_quota", remove_quota, ACL_UPDATE_QUOTAS),
};

static const struct master_api operator_api = {
    .name = "operator",
    .realm = MASTER_REALM_READWRITE,
    .call_desc = &mesos__v1__master__call__descriptor,
    .rows = operator_rows,
    .nrows = sizeof(operator_rows) / sizeof(operator_rows[0]),
    .bind = NULL,
    .fallback = not_supported,
};

void master_operator_api(struct http_request *req, void *arg)
{
    master_call_dispatch(&operator_api, arg, req);
}
