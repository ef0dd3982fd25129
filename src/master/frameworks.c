/*
 * Frameworks: SUBSCRIBE (new and re-subscription of a known id within its
 * failover timeout), the subscription stream, disconnection and the failover
 * timeout, and removal (TEARDOWN or a failover timeout that ran out).
 *
 * A subscription is durable before the framework hears of it: the registry
 * records the framework, then the stream starts with SUBSCRIBED. A failed
 * registry write answers 503 and changes nothing.
 */
#include "master/frameworks.h"

#include <event2/event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/json_pb.h"
#include "common/log.h"
#include "common/task_state.h"
#include "common/mem.h"
#include "master/executors.h"
#include "master/framework_options.h"
#include "master/limits.h"
#include "master/maintenance.h"
#include "master/master.h"
#include "master/metrics_counters.h"
#include "master/offers.h"
#include "master/operations.h"
#include "master/operator_events.h"
#include "master/persist.h"
#include "master/send.h"
#include "master/tasks.h"

#define MAX_FAILOVER_SECS (365.0 * 24 * 3600 * 100) /* Mesos: a Duration */

struct framework *master_framework_find(struct master *m, const char *id)
{
    return hmap_get(m->frameworks, id);
}

/* ---- Capabilities and roles ---------------------------------------------- */

static bool has_cap(const Mesos__V1__FrameworkInfo *fi,
                    Mesos__V1__FrameworkInfo__Capability__Type t)
{
    for (size_t i = 0; i < fi->n_capabilities; i++)
        if (fi->capabilities[i]->has_type && fi->capabilities[i]->type == t)
            return true;
    return false;
}

static uint32_t alloc_caps_of(const Mesos__V1__FrameworkInfo *fi)
{
    uint32_t caps = 0;
    if (has_cap(
            fi,
            MESOS__V1__FRAMEWORK_INFO__CAPABILITY__TYPE__REVOCABLE_RESOURCES))
        caps |= ALLOC_FW_REVOCABLE;
    if (has_cap(fi, MESOS__V1__FRAMEWORK_INFO__CAPABILITY__TYPE__GPU_RESOURCES))
        caps |= ALLOC_FW_GPU;
    if (has_cap(fi,
                MESOS__V1__FRAMEWORK_INFO__CAPABILITY__TYPE__SHARED_RESOURCES))
        caps |= ALLOC_FW_SHARED;
    if (has_cap(fi, MESOS__V1__FRAMEWORK_INFO__CAPABILITY__TYPE__MULTI_ROLE))
        caps |= ALLOC_FW_MULTI_ROLE;
    if (has_cap(
            fi,
            MESOS__V1__FRAMEWORK_INFO__CAPABILITY__TYPE__RESERVATION_REFINEMENT))
        caps |= ALLOC_FW_REFINEMENT;
    if (has_cap(fi, MESOS__V1__FRAMEWORK_INFO__CAPABILITY__TYPE__REGION_AWARE))
        caps |= ALLOC_FW_REGION_AWARE;
    return caps;
}

/* The roles a FrameworkInfo subscribes to, validated as Mesos does: with
 * MULTI_ROLE the `roles` list (and `role` unset), without it the single
 * `role` (default "*"). Returns the count and a malloc'd array of borrowed
 * strings in *out, or -1 with a reason. */
static int roles_of(const Mesos__V1__FrameworkInfo *fi, const char ***out,
                    char *err, size_t errlen)
{
    bool multi =
        has_cap(fi, MESOS__V1__FRAMEWORK_INFO__CAPABILITY__TYPE__MULTI_ROLE);
    const char **roles;
    size_t n;
    if (multi) {
        if (fi->role != NULL &&
            fi->role != mesos__v1__framework_info__role__default_value) {
            snprintf(err, errlen,
                     "framework_info.role must not be set with the MULTI_ROLE "
                     "capability (use framework_info.roles)");
            return -1;
        }
        n = fi->n_roles;
        roles = xcalloc(n ? n : 1, sizeof(*roles));
        for (size_t i = 0; i < n; i++)
            roles[i] = fi->roles[i];
    } else {
        if (fi->n_roles > 0) {
            snprintf(err, errlen,
                     "framework_info.roles needs the MULTI_ROLE capability");
            return -1;
        }
        n = 1;
        roles = xcalloc(1, sizeof(*roles));
        roles[0] = fi->role != NULL ? fi->role : "*";
    }
    if (n > 1024) {
        free(roles);
        snprintf(err, errlen, "framework_info.roles: at most 1024 roles");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        char rerr[256];
        if (res_role_validate(roles[i], rerr, sizeof(rerr)) != 0) {
            snprintf(err, errlen, "framework_info.roles[%zu]: %s", i, rerr);
            free(roles);
            return -1;
        }
        for (size_t j = 0; j < i; j++) {
            if (strcmp(roles[i], roles[j]) == 0) {
                snprintf(err, errlen,
                         "framework_info.roles: '%s' is listed twice",
                         roles[i]);
                free(roles);
                return -1;
            }
        }
    }
    *out = roles;
    return (int)n;
}

static void set_roles(struct framework *fw, const char **roles, int n)
{
    for (uint32_t i = 0; i < fw->nroles; i++)
        free(fw->roles[i]);
    free(fw->roles);
    fw->roles = xcalloc(n ? (size_t)n : 1, sizeof(*fw->roles));
    for (int i = 0; i < n; i++)
        fw->roles[i] = xstrdup(roles[i]);
    fw->nroles = (uint32_t)n;
}

/* Take capabilities and roles from fw->info into the framework record. */
static void apply_info(struct framework *fw, const char **roles, int nroles)
{
    fw->alloc_caps = alloc_caps_of(fw->info);
    fw->partition_aware = has_cap(
        fw->info, MESOS__V1__FRAMEWORK_INFO__CAPABILITY__TYPE__PARTITION_AWARE);
    fw->refinement = (fw->alloc_caps & ALLOC_FW_REFINEMENT) != 0;
    set_roles(fw, roles, nroles);
}

/* ---- Records ------------------------------------------------------------- */

static struct framework *framework_new(struct master *m, const char *id)
{
    struct framework *fw = xcalloc(1, sizeof(*fw));
    fw->m = m;
    fw->id = xstrdup(id);
    fw->tasks = hmap_new_borrowing(); /* keyed by each task's own id */
    fw->offers = hmap_new();
    fw->unreachable_tasks = hmap_new();
    fw->executors = hmap_new();
    return fw;
}

static void task_free_cb(void *p)
{
    master_task_free(p);
}

void master_framework_free(struct framework *fw)
{
    if (fw == NULL)
        return;
    if (fw->stream != NULL)
        http_stream_close(fw->stream);
    if (fw->failover_timer != NULL)
        event_free(fw->failover_timer);
    hmap_free(fw->tasks, task_free_cb);
    hmap_free(fw->offers, NULL); /* offers are owned by m->offers */
    hmap_free(fw->unreachable_tasks, free);
    hmap_free(fw->executors, master_executor_free);
    master_task_records_free(fw);
    if (fw->info != NULL)
        protobuf_c_message_free_unpacked(&fw->info->base, NULL);
    for (uint32_t i = 0; i < fw->nroles; i++)
        free(fw->roles[i]);
    free(fw->roles);
    free(fw->pending_offers);
    free(fw->id);
    free(fw);
}

/* Stamp the id into a FrameworkInfo we own. */
static void set_info_id(Mesos__V1__FrameworkInfo *fi, const char *id)
{
    if (fi->id == NULL) {
        fi->id = xmalloc(sizeof(*fi->id));
        mesos__v1__framework_id__init(fi->id);
        fi->id->value = NULL;
    }
    free(fi->id->value);
    fi->id->value = xstrdup(id);
}

/* ---- Failover timeout ------------------------------------------------------
 */

static void on_failover_timeout(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct framework *fw = arg;
    log_info("framework %s did not re-subscribe within its failover timeout",
             fw->id);
    master_framework_remove(fw->m, fw, "failover timeout expired");
}

/* Start fw's failover countdown: its failover_timeout, or at least
 * min_secs. */
static void start_failover_timer(struct framework *fw, double min_secs)
{
    double secs =
        fw->info->has_failover_timeout ? fw->info->failover_timeout : 0.0;
    if (!(secs >= 0) || secs > MAX_FAILOVER_SECS)
        secs = 0;
    secs = master_limits_failover_secs(fw, secs);
    if (secs < min_secs)
        secs = min_secs;
    if (fw->failover_timer == NULL)
        fw->failover_timer = evtimer_new(fw->m->base, on_failover_timeout, fw);
    struct timeval tv = {(time_t)secs,
                         (suseconds_t)((secs - floor(secs)) * 1e6)};
    evtimer_add(fw->failover_timer, &tv);
}

/* ---- The stream ------------------------------------------------------------
 */

static void on_stream_close(struct http_stream *s, enum http_close_reason why,
                            void *arg)
{
    struct framework *fw = arg;
    log_info("framework %s disconnected (%s)", fw->id,
             master_close_reason(why));
    http_stream_close(s);
    master_mc_framework_set_stream(fw->m, fw, NULL);
    master_framework_disconnected(fw->m, fw);
}

void master_framework_disconnected(struct master *m, struct framework *fw)
{
    if (fw->stream != NULL) {
        http_stream_close(fw->stream);
        master_mc_framework_set_stream(m, fw, NULL);
    }
    master_mc_framework_set_active(m, fw, false);
    alloc_framework_set_active(m->alloc, fw->alloc, false);
    master_offers_of_framework(m, fw, false);
    master_inverse_offers_of_framework(m, fw, false);
    start_failover_timer(fw, 0);
}

/* ---- SUBSCRIBE --------------------------------------------------------------
 */

/* What a SUBSCRIBE carries across the registry write. */
struct subscribe {
    struct master *m;
    struct http_request *req;
    enum http_encoding enc;
    char *id;
    bool is_new;
    Mesos__V1__FrameworkInfo *info; /* the new info, owned */
    /* The call's suppressed_roles and offer_constraints (owned; NULL: none),
     * applied with the info. */
    Mesos__V1__Scheduler__Call__Subscribe *call;
};

static void send_subscribed(struct master *m, struct framework *fw)
{
    Mesos__V1__MasterInfo mi;
    Mesos__V1__Address addr;
    master_fill_info(m, &mi, &addr);
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = fw->id;
    Mesos__V1__Scheduler__Event__Subscribed sub =
        MESOS__V1__SCHEDULER__EVENT__SUBSCRIBED__INIT;
    sub.framework_id = &fid;
    sub.has_heartbeat_interval_seconds = true;
    sub.heartbeat_interval_seconds = MASTER_HEARTBEAT_SECS;
    sub.master_info = &mi;
    Mesos__V1__Scheduler__Event ev = MESOS__V1__SCHEDULER__EVENT__INIT;
    ev.has_type = true;
    ev.type = MESOS__V1__SCHEDULER__EVENT__TYPE__SUBSCRIBED;
    ev.subscribed = &sub;
    master_send_to_framework(fw, &ev);
}

static void send_error_event(struct master *m, struct framework *fw,
                             const char *message)
{
    Mesos__V1__Scheduler__Event__Error e =
        MESOS__V1__SCHEDULER__EVENT__ERROR__INIT;
    e.message = (char *)message;
    Mesos__V1__Scheduler__Event ev = MESOS__V1__SCHEDULER__EVENT__INIT;
    ev.has_type = true;
    ev.type = MESOS__V1__SCHEDULER__EVENT__TYPE__ERROR;
    ev.error = &e;
    master_send_to_framework(fw, &ev);
}

static void subscribe_free(struct subscribe *s)
{
    if (s->info != NULL)
        protobuf_c_message_free_unpacked(&s->info->base, NULL);
    if (s->call != NULL)
        protobuf_c_message_free_unpacked(&s->call->base, NULL);
    free(s->id);
    free(s);
}

/* Check what a SUBSCRIBE or UPDATE_FRAMEWORK asks of the allocator beyond
 * roles: suppressed_roles within the roles, offer_filters and
 * offer_constraints valid. Returns 0, or -1 with the reason (prefixed with
 * the call's field, `prefix`). */
static int options_check(struct master *m, const Mesos__V1__FrameworkInfo *fi,
                         char *const *suppressed, size_t nsuppressed,
                         const Mesos__V1__Scheduler__OfferConstraints *oc,
                         const char *prefix, char *err, size_t errlen)
{
    const char **roles = NULL;
    char why[512];
    int n = roles_of(fi, &roles, why, sizeof(why));
    int rc = -1;
    struct fw_options o = {0};
    if (n < 0)
        goto out;
    if (master_suppressed_roles_check(suppressed, nsuppressed, roles,
                                      (uint32_t)n, why, sizeof(why)) != 0 ||
        master_fw_options_build(fi, oc, roles, (uint32_t)n, &o, why,
                                sizeof(why)) != 0)
        goto out;
    if (alloc_role_options_check(m->alloc, o.v, o.n, why, sizeof(why)) != 0)
        goto out;
    rc = 0;
out:
    if (rc != 0)
        snprintf(err, errlen, "%s%s", prefix, why);
    master_fw_options_free(&o);
    free(roles);
    return rc;
}

static bool role_in(const char *role, char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], role) == 0)
            return true;
    return false;
}

/* Give the allocator fw's options (checked by options_check before the
 * registry write) and make its suppressed roles exactly `suppressed`, as
 * Mesos's updateFramework: roles newly listed are suppressed, roles no
 * longer listed are revived (their filters cleared). */
static void options_apply(struct master *m, struct framework *fw,
                          char *const *suppressed, size_t nsuppressed,
                          const Mesos__V1__Scheduler__OfferConstraints *oc)
{
    char err[512];
    struct fw_options o = {0};
    if (master_fw_options_build(fw->info, oc, (const char *const *)fw->roles,
                                fw->nroles, &o, err, sizeof(err)) != 0 ||
        alloc_framework_set_options(m->alloc, fw->alloc, o.v, o.n, err,
                                    sizeof(err)) != 0)
        /* Checked before the registry write: cannot happen. */
        log_error("framework %s: options not applied: %s", fw->id, err);
    master_fw_options_free(&o);
    for (uint32_t i = 0; i < fw->nroles; i++) {
        const char *role = fw->roles[i];
        bool want = role_in(role, suppressed, nsuppressed);
        if (want == alloc_framework_is_suppressed(m->alloc, fw->alloc, role))
            continue;
        if (want)
            alloc_framework_suppress(m->alloc, fw->alloc, &role, 1);
        else
            alloc_framework_revive(m->alloc, fw->alloc, &role, 1);
    }
}

static void subscribe_done(struct master *m, bool ok, const char *err,
                           void *arg)
{
    struct subscribe *s = arg;
    struct framework *fw = master_framework_find(m, s->id);
    if (fw == NULL) {
        /* Removed while the write was in flight (a teardown won). */
        http_reply_error(s->req, 409, "framework %s was removed meanwhile",
                         s->id);
        subscribe_free(s);
        return;
    }
    fw->subscribing = false;
    if (!ok) {
        log_warn("framework %s: subscription not recorded: %s", s->id, err);
        http_reply_error(s->req, 503, "registry write failed: %s", err);
        /* A new framework goes, unless an agent reported its tasks while
         * the write was in flight: it then stays as that agent's
         * placeholder (master_framework_adopt_pending). */
        if (s->is_new && fw->alloc == NULL) {
            hmap_del(m->frameworks, fw->id);
            master_mc_framework_unindexed(m, fw);
            master_limits_framework_gone(m, fw->id);
            master_framework_free(fw);
        }
        subscribe_free(s);
        return;
    }

    /* Apply: the new info, the allocator, the stream. */
    const char **roles = NULL;
    char rerr[256];
    int nroles = roles_of(s->info, &roles, rerr, sizeof(rerr));
    if (fw->info != NULL)
        protobuf_c_message_free_unpacked(&fw->info->base, NULL);
    fw->info = s->info;
    s->info = NULL;
    apply_info(fw, roles, nroles < 0 ? 0 : nroles);
    if (fw->alloc == NULL) {
        fw->alloc = alloc_framework_add(
            m->alloc, fw, roles, (uint32_t)fw->nroles, fw->alloc_caps, true);
        alloc_framework_set_id(m->alloc, fw->alloc, fw->id);
    } else {
        alloc_framework_update(m->alloc, fw->alloc, roles, (uint32_t)fw->nroles,
                               fw->alloc_caps);
        alloc_framework_set_active(m->alloc, fw->alloc, true);
    }
    free(roles);
    /* In the same loop turn as the add: no cycle runs in between, so a
     * role subscribed suppressed is never offered. */
    options_apply(m, fw, s->call->suppressed_roles, s->call->n_suppressed_roles,
                  s->call->offer_constraints);
    if (fw->failover_timer != NULL)
        evtimer_del(fw->failover_timer);

    if (fw->stream != NULL) {
        /* A new subscription replaces the old connection (Mesos: the
         * framework failed over). */
        send_error_event(m, fw, "Framework failed over");
        http_stream_close(fw->stream);
        master_mc_framework_set_stream(m, fw, NULL);
    }
    if (s->is_new) {
        fw->registered_time = clock_wall_secs();
        m->metrics.messages_register_framework++;
    } else {
        fw->reregistered_time = clock_wall_secs();
        m->metrics.messages_reregister_framework++;
    }
    fw->enc = s->enc;
    master_mc_framework_set_stream(
        m, fw,
        master_stream_open(s->req, s->enc, fw->stream_id, on_stream_close, fw));
    master_mc_framework_set_active(m, fw, true);
    send_subscribed(m, fw);
    master_opev_framework(m, fw, s->is_new);
    log_info("framework %s (%s) %s", fw->id, fw->info->name,
             s->is_new ? "subscribed" : "re-subscribed");
    subscribe_free(s);
    master_allocate_soon(m);
}

/* FrameworkInfo.failover_timeout, when set, is a number of seconds from 0
 * to MAX_FAILOVER_SECS; 400 otherwise (the field path after prefix). */
static bool failover_timeout_ok(struct http_request *req,
                                const Mesos__V1__FrameworkInfo *fi,
                                const char *prefix)
{
    if (fi->has_failover_timeout &&
        (!(fi->failover_timeout >= 0) ||
         fi->failover_timeout > MAX_FAILOVER_SECS)) {
        http_reply_error(req, 400,
                         "%sframework_info.failover_timeout: must be a "
                         "non-negative number of seconds",
                         prefix);
        return false;
    }
    return true;
}

void master_framework_subscribe(struct master *m, struct http_request *req,
                                const Mesos__V1__Scheduler__Call *call,
                                enum http_encoding reply_enc)
{
    const Mesos__V1__FrameworkInfo *fi = call->subscribe->framework_info;
    char err[512];
    if (http_request_header(req, "Mesos-Stream-Id") != NULL) {
        http_reply_error(req, 400,
                         "SUBSCRIBE must not carry a Mesos-Stream-Id header");
        return;
    }
    const char *id = NULL;
    if (fi->id != NULL)
        id = fi->id->value;
    if (call->framework_id != NULL) {
        if (id != NULL && strcmp(id, call->framework_id->value) != 0) {
            http_reply_error(req, 400,
                             "framework_id differs from "
                             "subscribe.framework_info.id");
            return;
        }
        id = call->framework_id->value;
    }
    if (id != NULL && (id[0] == '\0' || strlen(id) > 255)) {
        http_reply_error(req, 400, "framework_id: must be 1 to 255 bytes");
        return;
    }
    const char **roles = NULL;
    int nroles = roles_of(fi, &roles, err, sizeof(err));
    if (nroles < 0) {
        http_reply_error(req, 400, "%s", err);
        return;
    }
    free(roles);
    if (!failover_timeout_ok(req, fi, ""))
        return;
    if (options_check(m, fi, call->subscribe->suppressed_roles,
                      call->subscribe->n_suppressed_roles,
                      call->subscribe->offer_constraints, "subscribe.", err,
                      sizeof(err)) != 0) {
        http_reply_error(req, 400, "%s", err);
        return;
    }
    if (id != NULL && hmap_get(m->completed, id) != NULL) {
        http_reply_error(req, 403, "framework %s has been removed", id);
        return;
    }

    struct framework *fw = id != NULL ? master_framework_find(m, id) : NULL;
    bool is_new = fw == NULL;
    if (fw != NULL && fw->subscribing) {
        http_reply_error(req, 409,
                         "a subscription of framework %s is in progress", id);
        return;
    }
    if (fw != NULL && fw->info != NULL && fw->info->principal != NULL &&
        (fi->principal == NULL ||
         strcmp(fw->info->principal, fi->principal) != 0)) {
        http_reply_error(req, 400,
                         "changing a framework's principal is not allowed");
        return;
    }
    if (is_new && hmap_count(m->frameworks) >= MASTER_MAX_FRAMEWORKS) {
        http_reply_error(req, 503, "too many frameworks (%d)",
                         MASTER_MAX_FRAMEWORKS);
        return;
    }
    if (master_limits_subscribe(m, req, fi, is_new) != 0)
        return;

    char newid[ID_DERIVED_SIZE];
    if (is_new && id == NULL) {
        id_derive(ID_FRAMEWORK, m->id, m->next_framework++, newid,
                  sizeof(newid));
        id = newid;
    }
    struct subscribe *s = xcalloc(1, sizeof(*s));
    s->m = m;
    s->req = req;
    s->enc = reply_enc;
    s->id = xstrdup(id);
    s->is_new = is_new;
    s->info = jpb_copy(&mesos__v1__framework_info__descriptor, &fi->base);
    set_info_id(s->info, id);
    s->call = jpb_copy(&mesos__v1__scheduler__call__subscribe__descriptor,
                       &call->subscribe->base);
    if (is_new) {
        fw = framework_new(m, id);
        hmap_put(m->frameworks, fw->id, fw);
        master_limits_framework_added(m, fw->id, req, fi);
    }
    fw->subscribing = true;
    /* The request is deferred: it is answered when the write completes. */
    master_persist_framework(m, s->info,
                             is_new ? clock_wall_secs() : fw->registered_time,
                             subscribe_done, s);
}

/* ---- UPDATE_FRAMEWORK ---------------------------------------------------- */

struct update {
    struct http_request *req;
    char *id;
    Mesos__V1__FrameworkInfo *info; /* owned */
    /* The call (owned): its suppressed_roles and offer_constraints. */
    Mesos__V1__Scheduler__Call__UpdateFramework *call;
};

static void update_done(struct master *m, bool ok, const char *err, void *arg)
{
    struct update *u = arg;
    struct framework *fw = master_framework_find(m, u->id);
    if (!ok || fw == NULL) {
        if (!ok)
            http_reply_error(u->req, 503, "registry write failed: %s", err);
        else
            http_reply_error(u->req, 409, "framework %s was removed meanwhile",
                             u->id);
    } else {
        const char **roles = NULL;
        char rerr[256];
        int n = roles_of(u->info, &roles, rerr, sizeof(rerr));
        protobuf_c_message_free_unpacked(&fw->info->base, NULL);
        fw->info = u->info;
        u->info = NULL;
        apply_info(fw, roles, n < 0 ? 0 : n);
        alloc_framework_update(m->alloc, fw->alloc, roles, fw->nroles,
                               fw->alloc_caps);
        free(roles);
        options_apply(m, fw, u->call->suppressed_roles,
                      u->call->n_suppressed_roles, u->call->offer_constraints);
        log_info("framework %s updated", fw->id);
        master_opev_framework(m, fw, false);
        http_reply(u->req, 200, NULL, NULL, 0);
        master_allocate_soon(m);
    }
    if (u->info != NULL)
        protobuf_c_message_free_unpacked(&u->info->base, NULL);
    protobuf_c_message_free_unpacked(&u->call->base, NULL);
    free(u->id);
    free(u);
}

void master_framework_update(
    struct master *m, struct http_request *req, struct framework *fw,
    const Mesos__V1__Scheduler__Call__UpdateFramework *call)
{
    const Mesos__V1__FrameworkInfo *fi = call->framework_info;
    char err[512];
    const char **roles = NULL;
    if (roles_of(fi, &roles, err, sizeof(err)) < 0) {
        http_reply_error(req, 400, "update_framework.%s", err);
        return;
    }
    free(roles);
    if (!failover_timeout_ok(req, fi, "update_framework."))
        return;
    if ((fw->info->principal == NULL) != (fi->principal == NULL) ||
        (fi->principal != NULL &&
         strcmp(fw->info->principal, fi->principal) != 0)) {
        http_reply_error(req, 400,
                         "changing a framework's principal is not allowed");
        return;
    }
    if (strcmp(fw->info->user, fi->user) != 0) {
        http_reply_error(req, 400,
                         "changing a framework's user is not allowed");
        return;
    }
    if (options_check(m, fi, call->suppressed_roles, call->n_suppressed_roles,
                      call->offer_constraints, "update_framework.", err,
                      sizeof(err)) != 0) {
        http_reply_error(req, 400, "%s", err);
        return;
    }
    struct update *u = xcalloc(1, sizeof(*u));
    u->req = req;
    u->id = xstrdup(fw->id);
    u->info = jpb_copy(&mesos__v1__framework_info__descriptor, &fi->base);
    u->call = jpb_copy(
        &mesos__v1__scheduler__call__update_framework__descriptor, &call->base);
    master_persist_framework(m, u->info, fw->registered_time, update_done, u);
}

/* ---- Placeholders -------------------------------------------------------- */

/* Give fw, known only from an agent's report (info), its info, its roles
 * and a place in the allocator, inactive, and the time the cluster has to
 * come back before it is removed. */
static void placeholder_fill(struct master *m, struct framework *fw,
                             const Mesos__V1__FrameworkInfo *info)
{
    fw->info = jpb_copy(&mesos__v1__framework_info__descriptor, &info->base);
    const char **roles = NULL;
    char err[256];
    int n = roles_of(fw->info, &roles, err, sizeof(err));
    if (n < 0) {
        /* An agent's or the registry's copy that no longer validates:
         * keep the framework in the default role. */
        roles = xcalloc(1, sizeof(*roles));
        roles[0] = "*";
        n = 1;
    }
    apply_info(fw, roles, n);
    fw->alloc = alloc_framework_add(m->alloc, fw, roles, (uint32_t)n,
                                    fw->alloc_caps, false);
    alloc_framework_set_id(m->alloc, fw->alloc, fw->id);
    free(roles);
    fw->registered_time = clock_wall_secs();
    /* Known from the registry or an agent after a master restart: give it
     * the time the cluster has to come back. */
    start_failover_timer(fw, (double)m->flags->agent_reregister_timeout /
                                 CLOCK_NS_PER_SEC);
}

struct framework *
master_framework_placeholder(struct master *m,
                             const Mesos__V1__FrameworkInfo *info)
{
    struct framework *fw = framework_new(m, info->id->value);
    placeholder_fill(m, fw, info);
    hmap_put(m->frameworks, fw->id, fw);
    return fw;
}

void master_framework_adopt_pending(struct master *m, struct framework *fw,
                                    const Mesos__V1__FrameworkInfo *info)
{
    if (fw->alloc != NULL)
        return;
    if (fw->info != NULL) { /* cannot happen: set with the allocator's */
        protobuf_c_message_free_unpacked(&fw->info->base, NULL);
        fw->info = NULL;
    }
    placeholder_fill(m, fw, info);
}

/* ---- Removal ------------------------------------------------------------- */

static void removal_recorded(struct master *m, bool ok, const char *err,
                             void *arg)
{
    (void)m;
    char *id = arg;
    if (!ok)
        log_warn("removal of framework %s not recorded: %s", id, err);
    free(id);
}

/* Keep fw (taken) among the completed frameworks, the latest
 * --max_completed_frameworks: the oldest is forgotten first. */
static void remember_completed(struct master *m, struct framework *fw)
{
    uint32_t max = (uint32_t)m->flags->max_completed_frameworks;
    if (max == 0) {
        master_framework_free(fw);
        return;
    }
    if (m->ncompleted >= max) {
        struct framework *old = hmap_del(m->completed, m->completed_order[0]);
        master_framework_free(old);
        free(m->completed_order[0]);
        memmove(m->completed_order, m->completed_order + 1,
                (m->ncompleted - 1) * sizeof(char *));
        m->ncompleted--;
    }
    m->completed_order =
        xreallocarray(m->completed_order, m->ncompleted + 1, sizeof(char *));
    m->completed_order[m->ncompleted++] = xstrdup(fw->id);
    hmap_put(m->completed, fw->id, fw);
}

/* SHUTDOWN_FRAMEWORK for fw to ag, unless ag is in told (then add it). */
static void shutdown_on_agent(struct hmap *told, struct framework *fw,
                              struct agent *ag)
{
    if (hmap_get(told, ag->id) != NULL)
        return;
    hmap_put(told, ag->id, ag);
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = fw->id;
    Offerd__Agent__Event__ShutdownFramework sf =
        OFFERD__AGENT__EVENT__SHUTDOWN_FRAMEWORK__INIT;
    sf.framework_id = &fid;
    Offerd__Agent__Event ev = OFFERD__AGENT__EVENT__INIT;
    ev.type = OFFERD__AGENT__EVENT__TYPE__SHUTDOWN_FRAMEWORK;
    ev.shutdown_framework = &sf;
    master_send_to_agent(ag, &ev);
}

void master_framework_remove(struct master *m, struct framework *fw,
                             const char *why)
{
    log_info("removing framework %s: %s", fw->id, why);
    master_opev_framework_removing(m, fw);
    if (fw->stream != NULL) {
        http_stream_close(fw->stream);
        master_mc_framework_set_stream(m, fw, NULL);
    }
    master_mc_framework_set_active(m, fw, false);
    if (fw->failover_timer != NULL)
        evtimer_del(fw->failover_timer);
    master_offers_of_framework(m, fw, false);
    master_inverse_offers_of_framework(m, fw, false);
    master_ops_forget_framework(m, fw->id);

    /* Tell every agent with tasks or executors of the framework to shut
     * it down, once each, then forget the tasks and executors: the
     * allocator frees their resources when the framework leaves it. */
    struct hmap *told = hmap_new();
    const char *key;
    void *val;
    size_t pos = 0;
    uint32_t ntasks = (uint32_t)hmap_count(fw->tasks);
    struct task **tasks = xcalloc(ntasks ? ntasks : 1, sizeof(*tasks));
    uint32_t k = 0;
    while (hmap_next(fw->tasks, &pos, &key, &val))
        tasks[k++] = val;
    pos = 0;
    while (hmap_next(fw->executors, &pos, &key, &val))
        shutdown_on_agent(told, fw, ((struct executor *)val)->agent);
    master_executors_forget_framework(m, fw);
    for (uint32_t i = 0; i < k; i++) {
        struct task *t = tasks[i];
        if (t->agent != NULL)
            shutdown_on_agent(told, fw, t->agent);
        if (!task_state_is_terminal(t->state))
            master_task_count(m, MESOS__V1__TASK_STATE__TASK_KILLED);
        t->recovered = true; /* alloc_framework_remove frees them */
        master_task_remove(m, t);
    }
    free(tasks);
    hmap_free(told, NULL);

    alloc_framework_remove(m->alloc, fw->alloc);
    fw->alloc = NULL;
    hmap_del(m->frameworks, fw->id);
    master_mc_framework_unindexed(m, fw);
    master_limits_framework_gone(m, fw->id);
    fw->unregistered_time = clock_wall_secs();
    m->metrics.messages_unregister_framework++;
    master_persist_framework_removed(m, fw->id, removal_recorded,
                                     xstrdup(fw->id));
    remember_completed(m, fw);
    master_allocate_soon(m);
}
