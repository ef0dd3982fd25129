/*
 * Dynamic reservations and persistent volumes (docs/reservation.md and
 * docs/persistent-volume.md in apache/mesos): the RESERVE, UNRESERVE,
 * CREATE, DESTROY, GROW_VOLUME and SHRINK_VOLUME offer operations of
 * frameworks, the same from operators (/reserve, /unreserve,
 * /create-volumes, /destroy-volumes and /api/v1), and the agents'
 * checkpointed resources.
 *
 * Each operation is a conversion of an agent's resources: `from` (what it
 * consumes) becomes `to` (what it makes), e.g. unreserved cpus become cpus
 * reserved to a role. The allocator applies it to the agent's total and to
 * what is offered or free; the master then records the agent's checkpointed
 * resources (its dynamic reservations and volumes) in the registry and,
 * once durable, sends them to the agent (CHECKPOINT_RESOURCES), which
 * persists them and reports them when it re-registers. The versions of that
 * list tell whose view is newer after a restart of either side.
 */
#include "master/reservations.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/json_pb.h"
#include "common/log.h"
#include "common/task_state.h"
#include "common/mem.h"
#include "common/resources_pb.h"
#include "master/agents.h"
#include "master/master.h"
#include "master/offers.h"
#include "master/operations.h"
#include "master/persist.h"
#include "master/send.h"
#include "master/tasks.h"
#include "master/registry.h"
#include "mesos/v1/master.pb-c.h"
#include "offerd/registry.pb-c.h"

static bool same_string(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    return strcmp(a, b) == 0;
}

static const char *principal_of(const struct framework *fw)
{
    return fw != NULL && fw->info->principal != NULL &&
                   fw->info->principal[0] != '\0'
               ? fw->info->principal
               : NULL;
}

static bool has_capability(const struct framework *fw,
                           Mesos__V1__FrameworkInfo__Capability__Type type)
{
    for (size_t i = 0; i < fw->info->n_capabilities; i++)
        if (fw->info->capabilities[i]->has_type &&
            fw->info->capabilities[i]->type == type)
            return true;
    return false;
}

/* True when the agent's total holds a volume of role with id. */
static bool volume_exists(const res_list *total, const char *role,
                          const char *id)
{
    for (uint32_t i = 0; i < total->n; i++) {
        const struct resource *r = &total->v[i];
        if (res_is_persistent_volume(r) &&
            strcmp(r->disk->persistence_id, id) == 0 &&
            same_string(res_reservation_role(r), role))
            return true;
    }
    return false;
}

/* True when a live task on ag uses the volume (role, id). */
static bool volume_in_use(const struct agent *ag, const char *role,
                          const char *id)
{
    size_t pos = 0;
    void *val;
    while (hmap_next(ag->tasks, &pos, NULL, &val)) {
        const struct task *t = val;
        if (task_state_is_terminal(t->state))
            continue;
        for (uint32_t i = 0; i < t->resources.n; i++) {
            const struct resource *r = &t->resources.v[i];
            if (res_is_persistent_volume(r) &&
                strcmp(r->disk->persistence_id, id) == 0 &&
                same_string(res_reservation_role(r), role))
                return true;
        }
    }
    return false;
}

/* An id that can name a directory, as Mesos's validateID: 1 to 255 bytes,
 * not "." or "..", no '/', '\\' or control characters. */
static bool id_ok(const char *id)
{
    size_t n = strlen(id);
    if (n == 0 || n > 255 || strcmp(id, ".") == 0 || strcmp(id, "..") == 0)
        return false;
    for (const char *p = id; *p != '\0'; p++)
        if (*p == '/' || *p == '\\' || (unsigned char)*p < 0x20 || *p == 0x7f)
            return false;
    return true;
}

/* A volume's container path: relative, no "..". */
static bool path_ok(const char *p)
{
    if (p == NULL || p[0] == '\0' || p[0] == '/' || strlen(p) > 1024)
        return false;
    for (const char *s = p; *s != '\0';) {
        const char *e = strchr(s, '/');
        size_t len = e != NULL ? (size_t)(e - s) : strlen(s);
        if (len == 2 && s[0] == '.' && s[1] == '.')
            return false;
        if (e == NULL)
            break;
        s = e + 1;
    }
    return true;
}

int master_resv_convert(struct agent *ag, const struct framework *fw,
                        const char *alloc_role, enum master_resv_op op,
                        const res_list *res, res_list *from, res_list *to,
                        char *err, size_t errlen)
{
    if (op == MASTER_RESV_GROW || op == MASTER_RESV_SHRINK) {
        snprintf(err, errlen, "volumes are resized by master_resv_resize");
        return -1;
    }
    if (res->n == 0) {
        snprintf(err, errlen, "the operation names no resources");
        return -1;
    }
    const res_list *total =
        ag->alloc != NULL ? alloc_agent_total(ag->alloc) : &ag->total;
    const char *principal = principal_of(fw);
    bool conflict = false;
    res_list f = RES_LIST_INIT, t = RES_LIST_INIT;
    for (uint32_t i = 0; i < res->n; i++) {
        const struct resource *r = &res->v[i];
        char *what = res_render(r);
        struct resource a, b;
        res_copy(&a, r);
        res_copy(&b, r);
        /* Offer resources carry their allocation role; the conversion is
         * of the resources themselves. */
        free(a.alloc_role);
        free(b.alloc_role);
        a.alloc_role = b.alloc_role = NULL;
        const char *bad = NULL;
        char why[512];
        if (r->revocable) {
            bad = "revocable resources cannot be reserved or hold volumes";
        } else if (op == MASTER_RESV_RESERVE) {
            const struct res_reservation *top =
                r->nresv > 0 ? &r->resv[r->nresv - 1] : NULL;
            if (top == NULL || top->type != RES_RESV_DYNAMIC) {
                bad = "it does not carry a dynamic reservation";
            } else if (res_is_persistent_volume(r)) {
                bad = "persistent volumes cannot be reserved";
            } else if (res_role_validate(top->role, why, sizeof(why)) != 0) {
                bad = why;
            } else if (r->nresv > 1 &&
                       (strcmp(top->role, r->resv[r->nresv - 2].role) == 0 ||
                        !res_role_is_subrole(top->role,
                                             r->resv[r->nresv - 2].role))) {
                bad = "a refined reservation must be to a descendant of the "
                      "reservation it refines";
            } else if (fw != NULL && !same_string(top->principal, principal)) {
                snprintf(why, sizeof(why),
                         "the reservation's principal '%s' is not the "
                         "framework's principal '%s'",
                         top->principal ? top->principal : "",
                         principal ? principal : "");
                bad = why;
            } else if (fw != NULL && alloc_role != NULL &&
                       strcmp(top->role, alloc_role) != 0) {
                snprintf(why, sizeof(why),
                         "the reservation's role '%s' is not the role the "
                         "resources are allocated to ('%s')",
                         top->role, alloc_role);
                bad = why;
            } else {
                res_pop_reservation(&a);
            }
        } else if (op == MASTER_RESV_UNRESERVE) {
            if (r->nresv == 0 || r->resv[r->nresv - 1].type != RES_RESV_DYNAMIC)
                bad = "it is not dynamically reserved";
            else if (res_is_persistent_volume(r))
                bad = "it is a persistent volume: destroy it first";
            else
                res_pop_reservation(&b);
        } else if (op == MASTER_RESV_CREATE) {
            if (!res_is_persistent_volume(r) || !r->disk->has_volume) {
                bad = "it is not a persistent volume (disk with persistence "
                      "id and volume)";
            } else if (!id_ok(r->disk->persistence_id)) {
                bad = "the persistence id must be 1 to 255 bytes, not '.' or "
                      "'..', without '/', '\\' or control characters";
            } else if (r->nresv == 0) {
                bad = "persistent volumes can only be created on reserved "
                      "disk";
            } else if (!path_ok(r->disk->container_path)) {
                bad = "the volume's container path must be relative and "
                      "must not contain '..'";
            } else if (r->disk->host_path != NULL) {
                bad = "a persistent volume may not set a host path";
            } else if (
                r->shared &&
                (fw == NULL ||
                 !has_capability(
                     fw,
                     MESOS__V1__FRAMEWORK_INFO__CAPABILITY__TYPE__SHARED_RESOURCES))) {
                bad = "shared volumes need the SHARED_RESOURCES capability";
            } else if (fw != NULL && r->disk->persistence_principal != NULL &&
                       !same_string(r->disk->persistence_principal,
                                    principal)) {
                bad = "the volume's principal is not the framework's";
            } else if (volume_exists(total, res_reservation_role(r),
                                     r->disk->persistence_id) ||
                       volume_exists(&t, res_reservation_role(r),
                                     r->disk->persistence_id)) {
                snprintf(why, sizeof(why),
                         "a volume with id '%s' exists for role '%s' on this "
                         "agent",
                         r->disk->persistence_id, res_reservation_role(r));
                bad = why;
            } else {
                res_drop_volume(&a);
            }
        } else { /* DESTROY */
            if (!res_is_persistent_volume(r)) {
                bad = "it is not a persistent volume";
            } else if (volume_in_use(ag, res_reservation_role(r),
                                     r->disk->persistence_id)) {
                snprintf(why, sizeof(why),
                         "persistent volume '%s' is in use by a task",
                         r->disk->persistence_id);
                bad = why;
                conflict = true;
            } else {
                res_drop_volume(&b);
            }
        }
        if (bad != NULL) {
            snprintf(err, errlen, "%s: %s", what, bad);
            free(what);
            res_clear(&a);
            res_clear(&b);
            res_list_clear(&f);
            res_list_clear(&t);
            return conflict ? -2 : -1;
        }
        free(what);
        res_list_add(&f, &a);
        res_list_add(&t, &b);
        res_clear(&a);
        res_clear(&b);
    }
    res_list_clear(from);
    res_list_clear(to);
    *from = f;
    *to = t;
    return 0;
}

/* ---- Resizing volumes (GROW_VOLUME, SHRINK_VOLUME) ------------------------
 */

/* Why volume v cannot be resized, or NULL (Mesos's validation of
 * GrowVolume and ShrinkVolume). */
static const char *not_resizable(const struct resource *v, bool grow)
{
    if (!res_is_persistent_volume(v) || !v->disk->has_volume)
        return "it is not a persistent volume (disk with persistence id and "
               "volume)";
    if (v->disk->volume_mode == RES_VOLUME_RO)
        return "read-only persistent volumes are not supported";
    if (v->shared)
        return grow ? "growing a shared persistent volume is not supported"
                    : "shrinking a shared persistent volume is not supported";
    if (v->provider_id != NULL)
        return "volumes of resource providers cannot be resized";
    if (v->disk->source != RES_DISK_SOURCE_NONE &&
        v->disk->source != RES_DISK_SOURCE_PATH)
        return "volumes on MOUNT, BLOCK or RAW disks cannot be resized";
    if (v->type != RES_SCALAR || v->scalar <= 0)
        return "the volume's size must be more than zero";
    return NULL;
}

/* Decode pb into *r without its allocation role (conversions are of the
 * resources themselves). Returns 0, or -1 with the reason in why. */
static int unallocated_of_pb(const Mesos__V1__Resource *pb, struct resource *r,
                             char *why, size_t whylen)
{
    if (res_from_pb(pb, r, why, whylen) != 0)
        return -1;
    free(r->alloc_role);
    r->alloc_role = NULL;
    return 0;
}

int master_resv_resize(enum master_resv_op op,
                       const Mesos__V1__Resource *volume,
                       const Mesos__V1__Resource *addition,
                       const Mesos__V1__Value__Scalar *subtract, res_list *from,
                       res_list *to, char *err, size_t errlen)
{
    bool grow = op == MASTER_RESV_GROW;
    if (op != MASTER_RESV_GROW && op != MASTER_RESV_SHRINK) {
        snprintf(err, errlen, "not a GROW_VOLUME or SHRINK_VOLUME");
        return -1;
    }
    if (volume == NULL || (grow ? addition == NULL : subtract == NULL)) {
        snprintf(err, errlen, "%s",
                 volume == NULL ? "the volume is required"
                 : grow         ? "the addition is required"
                                : "the amount to subtract is required");
        return -1;
    }
    char why[512];
    struct resource v, a, plain;
    if (unallocated_of_pb(volume, &v, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "invalid volume: %s", why);
        return -1;
    }
    memset(&a, 0, sizeof(a));
    /* The disk the volume was made of: what an addition must be like, and
     * what a shrink frees. */
    res_copy(&plain, &v);
    res_drop_volume(&plain);
    res_list f = RES_LIST_INIT, t = RES_LIST_INIT;
    char *what = res_render(&v);
    const char *bad = not_resizable(&v, grow);
    int64_t sub = 0;
    if (bad != NULL) {
        /* reported below */
    } else if (grow) {
        if (unallocated_of_pb(addition, &a, why, sizeof(why)) != 0) {
            snprintf(err, errlen, "invalid addition: %s", why);
            goto fail;
        }
        if (a.type != RES_SCALAR || a.scalar <= 0)
            bad = "the addition must be a scalar more than zero";
        else if (res_is_persistent_volume(&a) || !res_same_identity(&a, &plain))
            bad = "the addition must be disk with the volume's reservations "
                  "and disk source, and no persistence or volume";
        else if (v.scalar + a.scalar > RES_SCALAR_MAX_UNITS * RES_SCALE)
            bad = "the grown volume would be too large";
    } else {
        if (res_scalar_from_double(subtract->value, &sub) != 0 || sub <= 0)
            bad = "the amount to subtract must be more than zero";
        else if (sub >= v.scalar)
            bad = "the amount to subtract must be smaller than the volume's "
                  "size";
    }
    if (bad != NULL) {
        snprintf(err, errlen, "%s: %s", what, bad);
        goto fail;
    }
    res_list_add(&f, &v);
    if (grow) {
        /* volume + addition -> the volume with the sum's size */
        res_list_add(&f, &a);
        v.scalar += a.scalar;
        res_list_add(&t, &v);
    } else {
        /* volume -> the smaller volume + the freed disk, still reserved */
        v.scalar -= sub;
        plain.scalar = sub;
        res_list_add(&t, &v);
        res_list_add(&t, &plain);
    }
    res_list_clear(from);
    res_list_clear(to);
    *from = f;
    *to = t;
    free(what);
    res_clear(&v);
    res_clear(&a);
    res_clear(&plain);
    return 0;
fail:
    free(what);
    res_clear(&v);
    res_clear(&a);
    res_clear(&plain);
    res_list_clear(&f);
    res_list_clear(&t);
    return -1;
}

/* master_resv_resize for the GROW_VOLUME or SHRINK_VOLUME of an offer
 * operation (whose message may be missing). */
static int resize_of_op(const Mesos__V1__Offer__Operation *op,
                        enum master_resv_op kind, res_list *from, res_list *to,
                        char *err, size_t errlen)
{
    if (kind == MASTER_RESV_GROW) {
        const Mesos__V1__Offer__Operation__GrowVolume *g = op->grow_volume;
        return master_resv_resize(kind, g != NULL ? g->volume : NULL,
                                  g != NULL ? g->addition : NULL, NULL, from,
                                  to, err, errlen);
    }
    const Mesos__V1__Offer__Operation__ShrinkVolume *s = op->shrink_volume;
    return master_resv_resize(kind, s != NULL ? s->volume : NULL, NULL,
                              s != NULL ? s->subtract : NULL, from, to, err,
                              errlen);
}

/* ---- Checkpointed resources
 * --------------------------------------------------
 */

static bool is_checkpointed(const struct resource *r, const void *arg)
{
    (void)arg;
    return res_is_dynamically_reserved(r) || res_is_persistent_volume(r);
}

void master_agent_ckpt_of(const res_list *total, res_list *out)
{
    res_list_filter(total, is_checkpointed, NULL, out);
    res_list_allocate(out, NULL);
}

void master_agent_send_ckpt(struct master *m, struct agent *ag)
{
    size_t n;
    Mesos__V1__Resource **pb = res_list_to_pb(&ag->ckpt, true, &n);
    Offerd__Agent__Event__CheckpointResources cr =
        OFFERD__AGENT__EVENT__CHECKPOINT_RESOURCES__INIT;
    cr.n_resources = n;
    cr.resources = pb;
    cr.version = ag->ckpt_version;
    Offerd__Agent__Event ev = OFFERD__AGENT__EVENT__INIT;
    ev.type = OFFERD__AGENT__EVENT__TYPE__CHECKPOINT_RESOURCES;
    ev.checkpoint_resources = &cr;
    master_send_to_agent(ag, &ev);
    res_pb_array_free(pb, n);
}

struct ckpt_write {
    char *agent_id;
    uint64_t version;
    struct http_request *req; /* an operator's call, answered when done */
    char *op_key; /* a framework's operation with feedback (operations.c) */
    Mesos__V1__Offer__Operation__Type type; /* counted in the metrics */
    /* To undo a change the registry refused (an operator's, or a
     * framework's with or without feedback: a change that is not durable
     * is not kept). */
    res_list from, to;
};

/* Undo w's change on ag (to -> from again), rescinding offers of ag that
 * hold its resources. Returns 0, or -1 when they are in use. */
static int undo_change(struct master *m, struct agent *ag,
                       const struct ckpt_write *w)
{
    if (ag == NULL || ag->alloc == NULL)
        return -1;
    if (alloc_agent_update_available(m->alloc, ag->alloc, &w->to, &w->from) !=
        0) {
        master_offers_on_agent(m, ag, true);
        if (alloc_agent_update_available(m->alloc, ag->alloc, &w->to,
                                         &w->from) != 0)
            return -1;
    }
    res_list_sub_all(&ag->total, &w->to);
    res_list_add_all(&ag->total, &w->from);
    res_list_clear(&ag->ckpt);
    master_agent_ckpt_of(&ag->total, &ag->ckpt);
    return 0;
}

static void ckpt_written(struct master *m, bool ok, const char *err, void *arg)
{
    struct ckpt_write *w = arg;
    struct agent *ag = master_agent_find(m, w->agent_id);
    if (!ok) {
        log_error("agent %s: checkpointed resources (version %llu) not "
                  "recorded: %s",
                  w->agent_id, (unsigned long long)w->version, err);
        bool undone = undo_change(m, ag, w) == 0;
        if (!undone)
            log_error("agent %s: the change could not be undone: its "
                      "resources are in use",
                      w->agent_id);
        if (w->req != NULL)
            http_reply_error(w->req, 503, "registry write failed: %s", err);
        master_ops_count(m, w->type,
                         MESOS__V1__OPERATION_STATE__OPERATION_PENDING,
                         MESOS__V1__OPERATION_STATE__OPERATION_FAILED);
        if (w->op_key != NULL) {
            char msg[1200];
            snprintf(msg, sizeof(msg), "registry write failed: %s%s", err,
                     undone ? "" : " (the change could not be undone)");
            master_op_done(m, w->op_key,
                           MESOS__V1__OPERATION_STATE__OPERATION_FAILED, msg);
        }
        if (undone)
            master_allocate_soon(m);
    } else {
        if (ag != NULL && ag->ckpt_version == w->version)
            master_agent_send_ckpt(m, ag);
        master_ops_count(m, w->type,
                         MESOS__V1__OPERATION_STATE__OPERATION_PENDING,
                         MESOS__V1__OPERATION_STATE__OPERATION_FINISHED);
        if (w->req != NULL)
            http_reply(w->req, 202, NULL, NULL, 0);
        if (w->op_key != NULL)
            master_op_done(m, w->op_key,
                           MESOS__V1__OPERATION_STATE__OPERATION_FINISHED,
                           NULL);
    }
    res_list_clear(&w->from);
    res_list_clear(&w->to);
    free(w->op_key);
    free(w->agent_id);
    free(w);
}

/* ag's total changed by from -> to: record its new checkpointed
 * resources, then send them to the agent (and answer req, when set; tell
 * the operation named op_key, taken, when set). */
static void checkpoint(struct master *m, struct agent *ag,
                       enum master_resv_op kind, const res_list *from,
                       const res_list *to, struct http_request *req,
                       char *op_key)
{
    static const Mesos__V1__Offer__Operation__Type types[] = {
        MESOS__V1__OFFER__OPERATION__TYPE__RESERVE,
        MESOS__V1__OFFER__OPERATION__TYPE__UNRESERVE,
        MESOS__V1__OFFER__OPERATION__TYPE__CREATE,
        MESOS__V1__OFFER__OPERATION__TYPE__DESTROY,
        MESOS__V1__OFFER__OPERATION__TYPE__GROW_VOLUME,
        MESOS__V1__OFFER__OPERATION__TYPE__SHRINK_VOLUME,
    };
    res_list_sub_all(&ag->total, from);
    res_list_add_all(&ag->total, to);
    res_list_clear(&ag->ckpt);
    master_agent_ckpt_of(&ag->total, &ag->ckpt);
    ag->ckpt_version++;
    struct ckpt_write *w = xcalloc(1, sizeof(*w));
    w->agent_id = xstrdup(ag->id);
    w->version = ag->ckpt_version;
    w->req = req;
    w->op_key = op_key;
    w->type = types[kind];
    master_ops_count(m, w->type, -1,
                     MESOS__V1__OPERATION_STATE__OPERATION_PENDING);
    res_list_copy(&w->from, from);
    res_list_copy(&w->to, to);
    master_persist_agent(m, ag, ckpt_written, w);
}

/* ---- Offer operations (ACCEPT) ---------------------------------------------
 */

static const char *op_name(enum master_resv_op op)
{
    static const char *const names[] = {"RESERVE",     "UNRESERVE",
                                        "CREATE",      "DESTROY",
                                        "GROW_VOLUME", "SHRINK_VOLUME"};
    return names[op];
}

void master_resv_accept_op(struct master *m, struct framework *fw,
                           struct agent *ag, const char *role,
                           const Mesos__V1__Offer__Operation *op,
                           res_list *remaining)
{
    enum master_resv_op kind;
    Mesos__V1__Resource *const *pb = NULL;
    size_t n = 0;
    switch (op->type) {
    case MESOS__V1__OFFER__OPERATION__TYPE__RESERVE:
        kind = MASTER_RESV_RESERVE;
        if (op->reserve != NULL) {
            pb = op->reserve->resources;
            n = op->reserve->n_resources;
        }
        break;
    case MESOS__V1__OFFER__OPERATION__TYPE__UNRESERVE:
        kind = MASTER_RESV_UNRESERVE;
        if (op->unreserve != NULL) {
            pb = op->unreserve->resources;
            n = op->unreserve->n_resources;
        }
        break;
    case MESOS__V1__OFFER__OPERATION__TYPE__CREATE:
        kind = MASTER_RESV_CREATE;
        if (op->create != NULL) {
            pb = op->create->volumes;
            n = op->create->n_volumes;
        }
        break;
    case MESOS__V1__OFFER__OPERATION__TYPE__DESTROY:
        kind = MASTER_RESV_DESTROY;
        if (op->destroy != NULL) {
            pb = op->destroy->volumes;
            n = op->destroy->n_volumes;
        }
        break;
    case MESOS__V1__OFFER__OPERATION__TYPE__GROW_VOLUME:
        kind = MASTER_RESV_GROW;
        break;
    case MESOS__V1__OFFER__OPERATION__TYPE__SHRINK_VOLUME:
        kind = MASTER_RESV_SHRINK;
        break;
    default: {
        const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
            &mesos__v1__offer__operation__type__descriptor, op->type);
        char msg[256];
        snprintf(msg, sizeof(msg), "offer operation %s is not supported",
                 v != NULL ? v->name : "UNKNOWN");
        master_op_error(fw, op, msg);
        return;
    }
    }
    bool resize = kind == MASTER_RESV_GROW || kind == MASTER_RESV_SHRINK;
    res_list res = RES_LIST_INIT, from = RES_LIST_INIT, to = RES_LIST_INIT;
    char err[1024], msg[1200];
    if (resize ? resize_of_op(op, kind, &from, &to, err, sizeof(err)) != 0
               : res_list_from_pb(pb, n, &res, err, sizeof(err)) != 0 ||
                     master_resv_convert(ag, fw, role, kind, &res, &from, &to,
                                         err, sizeof(err)) != 0) {
        snprintf(msg, sizeof(msg), "%s refused: %s", op_name(kind), err);
        goto fail;
    }
    if (op->id != NULL && master_op_check(m, fw, op, err, sizeof(err)) != 0) {
        snprintf(msg, sizeof(msg), "%s refused: %s", op_name(kind), err);
        goto fail;
    }
    res_list_allocate(&from, role);
    res_list_allocate(&to, role);
    if (!res_list_contains(remaining, &from)) {
        snprintf(msg, sizeof(msg),
                 "%s refused: its resources are not in the accepted offers",
                 op_name(kind));
        goto fail;
    }
    if (alloc_agent_update_allocation(m->alloc, ag->alloc, fw->alloc, &from,
                                      &to) != 0) {
        snprintf(msg, sizeof(msg),
                 "%s refused: the allocator does not hold "
                 "the resources",
                 op_name(kind));
        goto fail;
    }
    res_list_sub_all(remaining, &from);
    /* As Mesos: a resized volume is not for the ACCEPT's later operations;
     * it goes back to the allocator at once, without the ACCEPT's filter
     * (Mesos means to make resizes non-speculative, so it keeps them out
     * of what an ACCEPT may count on). */
    if (!resize)
        res_list_add_all(remaining, &to);
    else if (alloc_recover(m->alloc, ag->alloc, fw->alloc, &to, -1,
                           clock_monotonic_ns()) != 0)
        log_error("framework %s: the allocator did not hold the result of "
                  "%s",
                  fw->id, op_name(kind));
    res_list_allocate(&from, NULL);
    res_list_allocate(&to, NULL);
    log_info("framework %s: %s on agent %s", fw->id, op_name(kind), ag->id);
    checkpoint(m, ag, kind, &from, &to, NULL,
               op->id != NULL ? master_op_add(m, fw, ag, op) : NULL);
    res_list_clear(&res);
    res_list_clear(&from);
    res_list_clear(&to);
    return;
fail:
    log_info("framework %s: %s", fw->id, msg);
    master_op_error(fw, op, msg);
    res_list_clear(&res);
    res_list_clear(&from);
    res_list_clear(&to);
}

/* ---- Operator calls
 * -----------------------------------------------------------
 */

/* Apply an operator's valid conversion from -> to on ag, answering req
 * (409 when the agent does not have `from` free, even after rescinding its
 * offers; 202 once durable). */
static void operator_apply(struct master *m, struct http_request *req,
                           struct agent *ag, enum master_resv_op kind,
                           const res_list *from, const res_list *to)
{
    /* The resources must be free: offers holding them are rescinded first,
     * as Mesos does. */
    if (alloc_agent_update_available(m->alloc, ag->alloc, from, to) != 0) {
        master_offers_on_agent(m, ag, true);
        if (alloc_agent_update_available(m->alloc, ag->alloc, from, to) != 0) {
            char *what = res_list_render(from);
            http_reply_error(req, 409,
                             "Invalid %s operation: the agent does not have "
                             "%s available (in use by tasks?)",
                             op_name(kind), what);
            free(what);
            return;
        }
    }
    log_info("operator: %s on agent %s", op_name(kind), ag->id);
    checkpoint(m, ag, kind, from, to, req, NULL);
    master_allocate_soon(m);
}

void master_resv_operator(struct master *m, struct http_request *req,
                          enum master_resv_op kind, const char *agent_id,
                          const res_list *res)
{
    struct agent *ag = master_agent_find(m, agent_id);
    if (ag == NULL || ag->alloc == NULL) {
        http_reply_error(req, 400, "No agent found with specified ID '%s'",
                         agent_id);
        return;
    }
    res_list from = RES_LIST_INIT, to = RES_LIST_INIT;
    char err[1024];
    int rc = master_resv_convert(ag, NULL, NULL, kind, res, &from, &to, err,
                                 sizeof(err));
    if (rc != 0) {
        http_reply_error(req, rc == -2 ? 409 : 400, "Invalid %s operation: %s",
                         op_name(kind), err);
        return;
    }
    operator_apply(m, req, ag, kind, &from, &to);
    res_list_clear(&from);
    res_list_clear(&to);
}

void master_resv_operator_resize(struct master *m, struct http_request *req,
                                 enum master_resv_op kind, const char *agent_id,
                                 const Mesos__V1__Resource *volume,
                                 const Mesos__V1__Resource *addition,
                                 const Mesos__V1__Value__Scalar *subtract)
{
    if (agent_id == NULL) {
        http_reply_error(req, 400, "Invalid %s operation: no agent id",
                         op_name(kind));
        return;
    }
    struct agent *ag = master_agent_find(m, agent_id);
    if (ag == NULL || ag->alloc == NULL) {
        http_reply_error(req, 400, "No agent found with specified ID '%s'",
                         agent_id);
        return;
    }
    res_list from = RES_LIST_INIT, to = RES_LIST_INIT;
    char err[1024];
    if (master_resv_resize(kind, volume, addition, subtract, &from, &to, err,
                           sizeof(err)) != 0) {
        http_reply_error(req, 400, "Invalid %s operation: %s", op_name(kind),
                         err);
        return;
    }
    operator_apply(m, req, ag, kind, &from, &to);
    res_list_clear(&from);
    res_list_clear(&to);
}

/* ---- The legacy endpoints
 * ------------------------------------------------------
 */

static void handle_legacy(struct http_request *req, struct master *m,
                          enum master_resv_op kind)
{
    size_t len;
    const char *body = (const char *)http_request_body(req, &len);
    const char *field =
        kind == MASTER_RESV_RESERVE || kind == MASTER_RESV_UNRESERVE
            ? "resources"
            : "volumes";
    char *agent = http_form_value(body, len, "slaveId");
    char *json = http_form_value(body, len, field);
    if (agent == NULL || agent[0] == '\0') {
        http_reply_error(req, 400, "Missing 'slaveId' query parameter");
    } else if (json == NULL) {
        http_reply_error(req, 400, "Missing '%s' query parameter", field);
    } else {
        res_list res = RES_LIST_INIT;
        char err[1024];
        if (res_list_from_json(json, &res, err, sizeof(err)) != 0)
            http_reply_error(req, 400,
                             "Error in parsing '%s' query "
                             "parameter: %s",
                             field, err);
        else
            master_resv_operator(m, req, kind, agent, &res);
        res_list_clear(&res);
    }
    free(agent);
    free(json);
}

static void handle_reserve(struct http_request *req, void *arg)
{
    handle_legacy(req, arg, MASTER_RESV_RESERVE);
}

static void handle_unreserve(struct http_request *req, void *arg)
{
    handle_legacy(req, arg, MASTER_RESV_UNRESERVE);
}

static void handle_create(struct http_request *req, void *arg)
{
    handle_legacy(req, arg, MASTER_RESV_CREATE);
}

static void handle_destroy(struct http_request *req, void *arg)
{
    handle_legacy(req, arg, MASTER_RESV_DESTROY);
}

int master_resv_endpoints_register(struct master *m)
{
    static const struct {
        const char *path;
        http_handler_fn fn;
    } routes[] = {
        {"/reserve", handle_reserve},
        {"/unreserve", handle_unreserve},
        {"/create-volumes", handle_create},
        {"/destroy-volumes", handle_destroy},
    };
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
        char alias[64];
        snprintf(alias, sizeof(alias), "/master%s", routes[i].path);
        if (http_server_route(m->http, routes[i].path, HTTP_POST, routes[i].fn,
                              m) != 0 ||
            http_server_route(m->http, alias, HTTP_POST, routes[i].fn, m) != 0)
            return -1;
    }
    return 0;
}
