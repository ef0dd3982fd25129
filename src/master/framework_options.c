/*
 * A framework's per-role allocator options: offer_filters from its
 * FrameworkInfo and offer_constraints from its SUBSCRIBE or
 * UPDATE_FRAMEWORK, turned into the allocator's alloc_role_options (see
 * framework_options.h). Nothing here keeps state.
 */
#include "master/framework_options.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"

/* A quantity of min_allocatable_resources, at most this many units (as the
 * resource arithmetic's fixed point allows). */
#define MAX_QUANTITY 1e12

static void *own(struct fw_options *o, void *p)
{
    if (o->nowned == o->capowned) {
        o->capowned = o->capowned ? 2 * o->capowned : 8;
        o->owned = xreallocarray(o->owned, o->capowned, sizeof(*o->owned));
    }
    o->owned[o->nowned++] = p;
    return p;
}

void master_fw_options_free(struct fw_options *o)
{
    for (uint32_t i = 0; i < o->nowned; i++)
        free(o->owned[i]);
    free(o->owned);
    free(o->v);
    memset(o, 0, sizeof(*o));
}

static bool listed(const char *role, const char *const *roles, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(roles[i], role) == 0)
            return true;
    return false;
}

/* The entry of o for role, added when missing. */
static struct alloc_role_options *entry(struct fw_options *o, const char *role)
{
    for (uint32_t i = 0; i < o->n; i++)
        if (strcmp(o->v[i].role, role) == 0)
            return &o->v[i];
    struct alloc_role_options *e = &o->v[o->n++];
    memset(e, 0, sizeof(*e));
    e->role = role;
    return e;
}

static int
min_allocatable(struct fw_options *o, struct alloc_role_options *e,
                const char *role,
                const Mesos__V1__OfferFilters__MinAllocatableResources *mar,
                char *err, size_t errlen)
{
    e->has_min_allocatable = true;
    e->min_allocatable = NULL;
    e->n_min_allocatable = 0;
    if (mar->n_quantities == 0)
        return 0;
    struct alloc_quantities *alts =
        own(o, xcalloc(mar->n_quantities, sizeof(*alts)));
    for (size_t k = 0; k < mar->n_quantities; k++) {
        const Mesos__V1__OfferFilters__ResourceQuantities *rq =
            mar->quantities[k];
        size_t nq = rq != NULL ? rq->n_quantities : 0;
        struct alloc_quantity *q = own(o, xcalloc(nq ? nq : 1, sizeof(*q)));
        uint32_t used = 0;
        for (size_t j = 0; j < nq; j++) {
            const char *name = rq->quantities[j]->key;
            const Mesos__V1__Value__Scalar *v = rq->quantities[j]->value;
            double value = v != NULL ? v->value : 0.0;
            if (name == NULL || name[0] == '\0') {
                snprintf(err, errlen,
                         "framework_info.offer_filters[\"%s\"]: a resource "
                         "name is empty",
                         role);
                return -1;
            }
            if (!isfinite(value) || value < 0 || value > MAX_QUANTITY) {
                snprintf(err, errlen,
                         "framework_info.offer_filters[\"%s\"]: quantity of "
                         "'%s' must be a non-negative number",
                         role, name);
                return -1;
            }
            /* A repeated name: the last wins, as protobuf merges maps. */
            uint32_t at = used;
            for (uint32_t x = 0; x < used; x++)
                if (strcmp(q[x].name, name) == 0)
                    at = x;
            q[at].name = name;
            q[at].milli = llround(value * 1000.0);
            if (at == used)
                used++;
        }
        alts[k].v = q;
        alts[k].n = used;
    }
    e->min_allocatable = alts;
    e->n_min_allocatable = (uint32_t)mar->n_quantities;
    return 0;
}

static void constraint_of(const Mesos__V1__Scheduler__AttributeConstraint *in,
                          struct alloc_constraint *out)
{
    memset(out, 0, sizeof(*out));
    out->selector = ALLOC_SEL_ATTRIBUTE; /* attribute NULL: refused */
    out->predicate = 0;                  /* refused unless set below */
    const Mesos__V1__Scheduler__AttributeConstraint__Selector *s =
        in != NULL ? in->selector : NULL;
    if (s != NULL) {
        if (s->selector_case ==
            MESOS__V1__SCHEDULER__ATTRIBUTE_CONSTRAINT__SELECTOR__SELECTOR_ATTRIBUTE_NAME) {
            out->attribute = s->attribute_name;
        } else if (
            s->selector_case ==
            MESOS__V1__SCHEDULER__ATTRIBUTE_CONSTRAINT__SELECTOR__SELECTOR_PSEUDOATTRIBUTE_TYPE) {
            switch (s->pseudoattribute_type) {
            case MESOS__V1__SCHEDULER__ATTRIBUTE_CONSTRAINT__SELECTOR__PSEUDOATTRIBUTE_TYPE__HOSTNAME:
                out->selector = ALLOC_SEL_HOSTNAME;
                break;
            case MESOS__V1__SCHEDULER__ATTRIBUTE_CONSTRAINT__SELECTOR__PSEUDOATTRIBUTE_TYPE__REGION:
                out->selector = ALLOC_SEL_REGION;
                break;
            case MESOS__V1__SCHEDULER__ATTRIBUTE_CONSTRAINT__SELECTOR__PSEUDOATTRIBUTE_TYPE__ZONE:
                out->selector = ALLOC_SEL_ZONE;
                break;
            default:
                out->selector = (enum alloc_selector)99; /* unknown */
                break;
            }
        }
    }
    const Mesos__V1__Scheduler__AttributeConstraint__Predicate *p =
        in != NULL ? in->predicate : NULL;
    if (p == NULL)
        return;
    switch (p->predicate_case) {
    case MESOS__V1__SCHEDULER__ATTRIBUTE_CONSTRAINT__PREDICATE__PREDICATE_EXISTS:
        out->predicate = ALLOC_PRED_EXISTS;
        break;
    case MESOS__V1__SCHEDULER__ATTRIBUTE_CONSTRAINT__PREDICATE__PREDICATE_NOT_EXISTS:
        out->predicate = ALLOC_PRED_NOT_EXISTS;
        break;
    case MESOS__V1__SCHEDULER__ATTRIBUTE_CONSTRAINT__PREDICATE__PREDICATE_TEXT_EQUALS:
        out->predicate = ALLOC_PRED_TEXT_EQUALS;
        out->value = p->text_equals->value;
        break;
    case MESOS__V1__SCHEDULER__ATTRIBUTE_CONSTRAINT__PREDICATE__PREDICATE_TEXT_NOT_EQUALS:
        out->predicate = ALLOC_PRED_TEXT_NOT_EQUALS;
        out->value = p->text_not_equals->value;
        break;
    case MESOS__V1__SCHEDULER__ATTRIBUTE_CONSTRAINT__PREDICATE__PREDICATE_TEXT_MATCHES:
        out->predicate = ALLOC_PRED_TEXT_MATCHES;
        out->value = p->text_matches->regex;
        break;
    case MESOS__V1__SCHEDULER__ATTRIBUTE_CONSTRAINT__PREDICATE__PREDICATE_TEXT_NOT_MATCHES:
        out->predicate = ALLOC_PRED_TEXT_NOT_MATCHES;
        out->value = p->text_not_matches->regex;
        break;
    default:
        break;
    }
}

static int
constraints(struct fw_options *o, struct alloc_role_options *e,
            const char *role,
            const Mesos__V1__Scheduler__OfferConstraints__RoleConstraints *rc,
            char *err, size_t errlen)
{
    size_t ng = rc != NULL ? rc->n_groups : 0;
    if (ng == 0) {
        /* Mesos refuses it: no group could ever hold. */
        snprintf(err, errlen, "offer_constraints: role '%s' has no groups",
                 role);
        return -1;
    }
    struct alloc_constraint_group *groups =
        own(o, xcalloc(ng, sizeof(*groups)));
    for (size_t g = 0; g < ng; g++) {
        const Mesos__V1__Scheduler__OfferConstraints__RoleConstraints__Group
            *in = rc->groups[g];
        size_t nk = in != NULL ? in->n_attribute_constraints : 0;
        struct alloc_constraint *ks = own(o, xcalloc(nk ? nk : 1, sizeof(*ks)));
        for (size_t k = 0; k < nk; k++)
            constraint_of(in->attribute_constraints[k], &ks[k]);
        groups[g].v = ks;
        groups[g].n = (uint32_t)nk;
    }
    e->groups = groups;
    e->ngroups = (uint32_t)ng;
    return 0;
}

int master_fw_options_build(const Mesos__V1__FrameworkInfo *fi,
                            const Mesos__V1__Scheduler__OfferConstraints *oc,
                            const char *const *roles, uint32_t nroles,
                            struct fw_options *out, char *err, size_t errlen)
{
    struct fw_options o = {0};
    size_t nf = fi->n_offer_filters;
    size_t nc = oc != NULL ? oc->n_role_constraints : 0;
    o.v = xcalloc(nf + nc ? nf + nc : 1, sizeof(*o.v));
    for (size_t i = 0; i < nf; i++) {
        const Mesos__V1__FrameworkInfo__OfferFiltersEntry *f =
            fi->offer_filters[i];
        if (f->key == NULL || f->value == NULL ||
            f->value->min_allocatable_resources == NULL)
            continue;
        struct alloc_role_options *e = entry(&o, f->key);
        if (min_allocatable(&o, e, f->key, f->value->min_allocatable_resources,
                            err, errlen) != 0)
            goto fail;
    }
    for (size_t i = 0; i < nc; i++) {
        const char *role = oc->role_constraints[i]->key;
        if (role == NULL)
            role = "";
        if (!listed(role, roles, nroles)) {
            snprintf(err, errlen,
                     "offer_constraints: role_constraints for role '%s' not "
                     "contained in the set of roles",
                     role);
            goto fail;
        }
        struct alloc_role_options *e = entry(&o, role);
        if (constraints(&o, e, role, oc->role_constraints[i]->value, err,
                        errlen) != 0)
            goto fail;
    }
    *out = o;
    return 0;
fail:
    master_fw_options_free(&o);
    return -1;
}

int master_suppressed_roles_check(char *const *suppressed, size_t n,
                                  const char *const *roles, uint32_t nroles,
                                  char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++) {
        if (!listed(suppressed[i], roles, nroles)) {
            snprintf(err, errlen,
                     "suppressed_roles: role '%s' is not contained in the "
                     "set of roles",
                     suppressed[i]);
            return -1;
        }
    }
    return 0;
}
