/*
 * view_roles filtering of what readers see; see role_view.h.
 */
#include "master/role_view.h"

#include <stdlib.h>
#include <string.h>

#include "common/auth.h"
#include "common/json_pb.h"
#include "master/authz.h"

struct acl_approver *master_role_viewer(const struct master *m, const char *who,
                                        enum acl_action action)
{
    const struct acls *acls = master_authz_acls(m);
    if (acls == NULL)
        return NULL;
    struct acl_approver *v = acl_approver_new(acls, who, action);
    bool all = false;
    if (acl_approver_constant(v, &all) && all) {
        acl_approver_free(v);
        return NULL;
    }
    return v;
}

struct acl_approver *master_role_viewer_of(const struct master *m,
                                           const struct http_request *req,
                                           enum acl_action action)
{
    if (!master_authz_has_acls(m))
        return NULL;
    char buf[AUTH_MAX_PRINCIPAL + 1];
    return master_role_viewer(m, master_authz_principal(m, req, buf), action);
}

bool master_role_view_role(const struct acl_approver *v, const char *role)
{
    return v == NULL || acl_approver_allows(v, role);
}

bool master_role_view_resource(const struct acl_approver *v,
                               const struct resource *r)
{
    if (v == NULL)
        return true;
    for (uint32_t i = 0; i < r->nresv; i++)
        if (!acl_approver_allows(v, r->resv[i].role))
            return false;
    return r->alloc_role == NULL || acl_approver_allows(v, r->alloc_role);
}

/* Whether v lets its reader see r, leaving out the top `skip` entries of
 * its reservation stack (1: what a RESERVE consumes, the resource before
 * its new reservation). The pre-refinement "role" counts as the only
 * reservation when the stack is empty. */
static bool resource_pb_viewable(const struct acl_approver *v,
                                 const Mesos__V1__Resource *r, size_t skip)
{
    if (v == NULL)
        return true;
    if (r->n_reservations == 0 && skip == 0 && r->role != NULL &&
        strcmp(r->role, "*") != 0 && !acl_approver_allows(v, r->role))
        return false;
    size_t n = r->n_reservations > skip ? r->n_reservations - skip : 0;
    for (size_t i = 0; i < n; i++) {
        const Mesos__V1__Resource__ReservationInfo *ri = r->reservations[i];
        if (ri != NULL && ri->role != NULL && !acl_approver_allows(v, ri->role))
            return false;
    }
    return r->allocation_info == NULL || r->allocation_info->role == NULL ||
           acl_approver_allows(v, r->allocation_info->role);
}

bool master_role_view_resource_pb(const struct acl_approver *v,
                                  const Mesos__V1__Resource *r)
{
    return resource_pb_viewable(v, r, 0);
}

static bool viewable_pred(const struct resource *r, const void *arg)
{
    return master_role_view_resource(arg, r);
}

void master_role_view_filter(const struct acl_approver *v, const res_list *in,
                             res_list *out)
{
    res_list_filter(in, viewable_pred, v, out);
}

/* ---- Messages, in place
 * -------------------------------------------------------
 */

/* Whether v hides any of the n resources of rs. */
static bool hides_any(const struct acl_approver *v,
                      Mesos__V1__Resource *const *rs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!resource_pb_viewable(v, rs[i], 0))
            return true;
    return false;
}

/* Keep the resources of rs (*n of them) that v lets its reader see, in
 * their order; free the others. */
static void keep_viewable(const struct acl_approver *v,
                          Mesos__V1__Resource **rs, size_t *n)
{
    size_t k = 0;
    for (size_t i = 0; i < *n; i++) {
        if (resource_pb_viewable(v, rs[i], 0))
            rs[k++] = rs[i];
        else
            protobuf_c_message_free_unpacked(&rs[i]->base, NULL);
    }
    *n = k;
}

#define KEEP(v, msg, field)  keep_viewable(v, (msg)->field, &(msg)->n_##field)
#define HIDES(v, msg, field) hides_any(v, (msg)->field, (msg)->n_##field)

void master_role_view_agent_pb(const struct acl_approver *v,
                               Mesos__V1__Master__Response__GetAgents__Agent *a)
{
    if (v == NULL || a == NULL)
        return;
    if (a->agent_info != NULL)
        KEEP(v, a->agent_info, resources);
    KEEP(v, a, total_resources);
    KEEP(v, a, allocated_resources);
    KEEP(v, a, offered_resources);
}

static bool agent_hides(const struct acl_approver *v,
                        const Mesos__V1__Master__Response__GetAgents__Agent *a)
{
    return (a->agent_info != NULL && HIDES(v, a->agent_info, resources)) ||
           HIDES(v, a, total_resources) || HIDES(v, a, allocated_resources) ||
           HIDES(v, a, offered_resources);
}

static void filter_agents(const struct acl_approver *v,
                          Mesos__V1__Master__Response__GetAgents *ga)
{
    if (ga == NULL)
        return;
    for (size_t i = 0; i < ga->n_agents; i++)
        master_role_view_agent_pb(v, ga->agents[i]);
    for (size_t i = 0; i < ga->n_recovered_agents; i++)
        KEEP(v, ga->recovered_agents[i], resources);
}

/* Whether v lets its reader see every resource of rs (n). */
static bool all_viewable(const struct acl_approver *v,
                         Mesos__V1__Resource *const *rs, size_t n, size_t skip)
{
    for (size_t i = 0; i < n; i++)
        if (!resource_pb_viewable(v, rs[i], skip))
            return false;
    return true;
}

static bool one_viewable(const struct acl_approver *v,
                         const Mesos__V1__Resource *r)
{
    return r == NULL || resource_pb_viewable(v, r, 0);
}

/* Mesos shows an operation to a reader who may see every resource it
 * consumes (protobuf::getConsumedResources): what a RESERVE reserves
 * before its new reservation (or its source), the resources an
 * UNRESERVE, CREATE or DESTROY names, a volume and what grows it, a disk
 * operation's source. Any other operation is hidden. */
static bool operation_viewable(const struct acl_approver *v,
                               const Mesos__V1__Operation *op)
{
    const Mesos__V1__Offer__Operation *o = op->info;
    if (o == NULL)
        return false;
    switch (o->type) {
    case MESOS__V1__OFFER__OPERATION__TYPE__RESERVE:
        if (o->reserve == NULL)
            return false;
        if (o->reserve->n_source > 0)
            return all_viewable(v, o->reserve->source, o->reserve->n_source, 0);
        return all_viewable(v, o->reserve->resources, o->reserve->n_resources,
                            1);
    case MESOS__V1__OFFER__OPERATION__TYPE__UNRESERVE:
        return o->unreserve != NULL &&
               all_viewable(v, o->unreserve->resources,
                            o->unreserve->n_resources, 0);
    case MESOS__V1__OFFER__OPERATION__TYPE__CREATE:
        return o->create != NULL &&
               all_viewable(v, o->create->volumes, o->create->n_volumes, 0);
    case MESOS__V1__OFFER__OPERATION__TYPE__DESTROY:
        return o->destroy != NULL &&
               all_viewable(v, o->destroy->volumes, o->destroy->n_volumes, 0);
    case MESOS__V1__OFFER__OPERATION__TYPE__GROW_VOLUME:
        return o->grow_volume != NULL &&
               one_viewable(v, o->grow_volume->volume) &&
               one_viewable(v, o->grow_volume->addition);
    case MESOS__V1__OFFER__OPERATION__TYPE__SHRINK_VOLUME:
        return o->shrink_volume != NULL &&
               one_viewable(v, o->shrink_volume->volume);
    case MESOS__V1__OFFER__OPERATION__TYPE__CREATE_DISK:
        return o->create_disk != NULL &&
               one_viewable(v, o->create_disk->source);
    case MESOS__V1__OFFER__OPERATION__TYPE__DESTROY_DISK:
        return o->destroy_disk != NULL &&
               one_viewable(v, o->destroy_disk->source);
    default:
        return false;
    }
}

static void filter_operations(const struct acl_approver *v,
                              Mesos__V1__Master__Response__GetOperations *go)
{
    if (go == NULL)
        return;
    size_t k = 0;
    for (size_t i = 0; i < go->n_operations; i++) {
        if (operation_viewable(v, go->operations[i]))
            go->operations[k++] = go->operations[i];
        else
            protobuf_c_message_free_unpacked(&go->operations[i]->base, NULL);
    }
    go->n_operations = k;
}

static void filter_weights(const struct acl_approver *v,
                           Mesos__V1__Master__Response__GetWeights *gw)
{
    if (gw == NULL)
        return;
    size_t k = 0;
    for (size_t i = 0; i < gw->n_weight_infos; i++) {
        Mesos__V1__WeightInfo *w = gw->weight_infos[i];
        if (master_role_view_role(v, w->role))
            gw->weight_infos[k++] = w;
        else
            protobuf_c_message_free_unpacked(&w->base, NULL);
    }
    gw->n_weight_infos = k;
}

/* Keep the QuotaInfos and QuotaConfigs of s whose role v (a get_quotas
 * approver) lets its reader see. */
static void filter_quota(const struct acl_approver *v,
                         Mesos__V1__Quota__QuotaStatus *s)
{
    if (s == NULL)
        return;
    size_t k = 0;
    for (size_t i = 0; i < s->n_infos; i++) {
        if (master_role_view_role(v, s->infos[i]->role))
            s->infos[k++] = s->infos[i];
        else
            protobuf_c_message_free_unpacked(&s->infos[i]->base, NULL);
    }
    s->n_infos = k;
    k = 0;
    for (size_t i = 0; i < s->n_configs; i++) {
        if (master_role_view_role(v, s->configs[i]->role))
            s->configs[k++] = s->configs[i];
        else
            protobuf_c_message_free_unpacked(&s->configs[i]->base, NULL);
    }
    s->n_configs = k;
}

void master_role_view_response(const struct master *m, const char *who,
                               Mesos__V1__Master__Response *r)
{
    if (r == NULL || !master_authz_has_acls(m))
        return;
    struct acl_approver *v = master_role_viewer(m, who, ACL_VIEW_ROLES);
    if (v != NULL) {
        if (r->get_state != NULL)
            filter_agents(v, r->get_state->get_agents);
        filter_agents(v, r->get_agents);
        filter_operations(v, r->get_operations);
        filter_weights(v, r->get_weights);
        acl_approver_free(v);
    }
    if (r->get_quota != NULL) {
        v = master_role_viewer(m, who, ACL_GET_QUOTAS);
        filter_quota(v, r->get_quota->status);
        acl_approver_free(v);
    }
}

void master_role_view_weights(const struct master *m,
                              const struct http_request *req,
                              Mesos__V1__Master__Response__GetWeights *gw)
{
    struct acl_approver *v = master_role_viewer_of(m, req, ACL_VIEW_ROLES);
    filter_weights(v, gw);
    acl_approver_free(v);
}

void master_role_view_quota(const struct master *m,
                            const struct http_request *req,
                            Mesos__V1__Quota__QuotaStatus *s)
{
    struct acl_approver *v = master_role_viewer_of(m, req, ACL_GET_QUOTAS);
    filter_quota(v, s);
    acl_approver_free(v);
}

/* ---- Operator events
 * ----------------------------------------------------------
 */

/* The framework an event carries resources of (FRAMEWORK_ADDED,
 * FRAMEWORK_UPDATED), or NULL. */
static Mesos__V1__Master__Response__GetFrameworks__Framework *
event_framework(const Mesos__V1__Master__Event *ev)
{
    if (ev->framework_added != NULL)
        return ev->framework_added->framework;
    if (ev->framework_updated != NULL)
        return ev->framework_updated->framework;
    return NULL;
}

static Mesos__V1__Master__Response__GetAgents__Agent *
event_agent(const Mesos__V1__Master__Event *ev)
{
    return ev->agent_added != NULL ? ev->agent_added->agent : NULL;
}

Mesos__V1__Master__Event *
master_role_view_event(const struct acl_approver *v,
                       const Mesos__V1__Master__Event *ev)
{
    if (v == NULL)
        return NULL;
    const Mesos__V1__Master__Response__GetAgents__Agent *a = event_agent(ev);
    const Mesos__V1__Master__Response__GetFrameworks__Framework *f =
        event_framework(ev);
    bool hides = (a != NULL && agent_hides(v, a)) ||
                 (f != NULL && (HIDES(v, f, allocated_resources) ||
                                HIDES(v, f, offered_resources)));
    if (!hides)
        return NULL;
    Mesos__V1__Master__Event *own =
        jpb_copy(&mesos__v1__master__event__descriptor, &ev->base);
    master_role_view_agent_pb(v, event_agent(own));
    Mesos__V1__Master__Response__GetFrameworks__Framework *of =
        event_framework(own);
    if (of != NULL) {
        KEEP(v, of, allocated_resources);
        KEEP(v, of, offered_resources);
    }
    return own;
}
