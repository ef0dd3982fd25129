/*
 * resources_pb: mesos.v1.Resource <-> struct resource, both reservation
 * formats, and JSON resource arrays (see resources_pb.h).
 *
 * Input checks follow Mesos's Resources::validate (src/common/resources.cpp)
 * for the parts of a Resource message the native model cannot represent
 * (which value field is set, the two reservation formats and how they may be
 * combined); everything else is left to res_validate.
 */
#include "common/resources_pb.h"

#include "common/errbuf.h"
#include "common/json_pb.h"
#include "common/mem.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QUOTE_MAX 64

static bool str_eq(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    return strcmp(a, b) == 0;
}

/* `role` is set when it is not NULL and not protobuf-c's shared default
 * ("*" given explicitly is set: Mesos's has_role() tells them apart). */
static bool pb_has_role(const Mesos__V1__Resource *pb)
{
    return pb->role != NULL &&
           pb->role != mesos__v1__resource__role__default_value;
}

/* ---- pb -> native -------------------------------------------------------- */

static int labels_from_pb(const Mesos__V1__Labels *pb, struct res_label **out,
                          uint32_t *nout, const char *name, char *err,
                          size_t errlen)
{
    *out = NULL;
    *nout = 0;
    if (pb == NULL || pb->n_labels == 0)
        return 0;
    if (pb->n_labels > RES_PB_MAX_LABELS) {
        errbuf_set(err, errlen, "%s: more than %d reservation labels", name,
                   RES_PB_MAX_LABELS);
        return -1;
    }
    for (size_t i = 0; i < pb->n_labels; i++) {
        if (pb->labels[i] == NULL || pb->labels[i]->key == NULL) {
            errbuf_set(err, errlen, "%s: reservation label %zu has no key",
                       name, i);
            return -1;
        }
    }
    struct res_label *v = xcalloc(pb->n_labels, sizeof(*v));
    for (size_t i = 0; i < pb->n_labels; i++) {
        v[i].key = xstrdup(pb->labels[i]->key);
        v[i].value = xstrdup(pb->labels[i]->value);
    }
    *out = v;
    *nout = (uint32_t)pb->n_labels;
    return 0;
}

static void labels_free(struct res_label *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        free(v[i].key);
        free(v[i].value);
    }
    free(v);
}

static int push_resv_from_pb(struct resource *r, enum res_resv_type type,
                             const char *role,
                             const Mesos__V1__Resource__ReservationInfo *pb,
                             const char *name, char *err, size_t errlen)
{
    struct res_label *labels = NULL;
    uint32_t nlabels = 0;
    if (pb != NULL &&
        labels_from_pb(pb->labels, &labels, &nlabels, name, err, errlen) < 0)
        return -1;
    res_push_reservation(r, type, role, pb ? pb->principal : NULL, labels,
                         nlabels);
    labels_free(labels, nlabels);
    return 0;
}

static bool labels_pb_eq(const Mesos__V1__Labels *a, const Mesos__V1__Labels *b)
{
    size_t na = a ? a->n_labels : 0, nb = b ? b->n_labels : 0;
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++) {
        bool found = false;
        for (size_t j = 0; j < nb && !found; j++)
            found = str_eq(a->labels[i]->key, b->labels[j]->key) &&
                    str_eq(a->labels[i]->value, b->labels[j]->value);
        if (!found)
            return false;
    }
    return true;
}

static int range_cmp(const void *pa, const void *pb)
{
    const struct res_range *a = pa, *b = pb;
    if (a->begin != b->begin)
        return a->begin < b->begin ? -1 : 1;
    return a->end < b->end ? -1 : a->end > b->end;
}

static int value_from_pb(const Mesos__V1__Resource *pb, struct resource *r,
                         const char *name, char *err, size_t errlen)
{
    switch (pb->type) {
    case MESOS__V1__VALUE__TYPE__SCALAR: {
        if (pb->scalar == NULL || pb->ranges != NULL || pb->set != NULL) {
            errbuf_set(err, errlen,
                       "%s: a SCALAR resource needs the scalar field and no "
                       "other value",
                       name);
            return -1;
        }
        double d = pb->scalar->value;
        int64_t milli;
        if (res_scalar_from_double(d, &milli) < 0) {
            errbuf_set(err, errlen, "%s: scalar value %s", name,
                       isnan(d)   ? "is not a number"
                       : isinf(d) ? "is infinite"
                       : d < 0    ? "is negative"
                                  : "is too large");
            return -1;
        }
        if (milli == 0 && d != 0) {
            errbuf_set(err, errlen, "%s: scalar value %g rounds to zero", name,
                       d);
            return -1;
        }
        r->type = RES_SCALAR;
        r->scalar = milli;
        return 0;
    }
    case MESOS__V1__VALUE__TYPE__RANGES: {
        if (pb->ranges == NULL || pb->scalar != NULL || pb->set != NULL) {
            errbuf_set(err, errlen,
                       "%s: a RANGES resource needs the ranges field and no "
                       "other value",
                       name);
            return -1;
        }
        size_t n = pb->ranges->n_range;
        if (n > UINT32_MAX) {
            errbuf_set(err, errlen, "%s: too many ranges", name);
            return -1;
        }
        struct res_range *v = n ? xcalloc(n, sizeof(*v)) : NULL;
        for (size_t i = 0; i < n; i++) {
            const Mesos__V1__Value__Range *g = pb->ranges->range[i];
            if (g == NULL || g->begin > g->end) {
                errbuf_set(err, errlen, "%s: range %zu has begin > end", name,
                           i);
                free(v);
                return -1;
            }
            v[i].begin = g->begin;
            v[i].end = g->end;
        }
        /* Mesos refuses overlapping ranges but takes touching ones. */
        if (n > 1) {
            struct res_range *sorted = xmemdup(v, n * sizeof(*v));
            qsort(sorted, n, sizeof(*sorted), range_cmp);
            bool overlap = false;
            for (size_t i = 1; i < n && !overlap; i++)
                overlap = sorted[i].begin <= sorted[i - 1].end;
            free(sorted);
            if (overlap) {
                errbuf_set(err, errlen, "%s: overlapping ranges", name);
                free(v);
                return -1;
            }
        }
        uint32_t m = res_ranges_normalize(v, (uint32_t)n);
        r->type = RES_RANGES;
        r->ranges = m ? v : NULL;
        r->nranges = m;
        if (m == 0)
            free(v);
        return 0;
    }
    case MESOS__V1__VALUE__TYPE__SET: {
        if (pb->set == NULL || pb->scalar != NULL || pb->ranges != NULL) {
            errbuf_set(err, errlen,
                       "%s: a SET resource needs the set field and no other "
                       "value",
                       name);
            return -1;
        }
        size_t n = pb->set->n_item;
        if (n > UINT32_MAX) {
            errbuf_set(err, errlen, "%s: too many set items", name);
            return -1;
        }
        for (size_t i = 0; i < n; i++) {
            if (pb->set->item[i] == NULL) {
                errbuf_set(err, errlen, "%s: set item %zu missing", name, i);
                return -1;
            }
        }
        struct resource tmp;
        res_init_set(&tmp, name, (const char *const *)pb->set->item,
                     (uint32_t)n);
        if (tmp.nitems != n) {
            errbuf_set(err, errlen, "%s: duplicate set items", name);
            res_clear(&tmp);
            return -1;
        }
        r->type = RES_SET;
        r->items = tmp.items;
        r->nitems = tmp.nitems;
        tmp.items = NULL;
        tmp.nitems = 0;
        res_clear(&tmp);
        return 0;
    }
    case MESOS__V1__VALUE__TYPE__TEXT:
        errbuf_set(err, errlen, "%s: TEXT resources are not supported", name);
        return -1;
    default:
        break;
    }
    errbuf_set(err, errlen, "%s: unknown resource type %d", name,
               (int)pb->type);
    return -1;
}

static int reservations_from_pb(const Mesos__V1__Resource *pb,
                                const char *default_role, struct resource *r,
                                const char *name, char *err, size_t errlen)
{
    bool has_role = pb_has_role(pb);
    const Mesos__V1__Resource__ReservationInfo *legacy = pb->reservation;

    if (pb->n_reservations > 0) {
        if (pb->n_reservations > RES_PB_MAX_RESERVATIONS) {
            errbuf_set(err, errlen, "%s: more than %d reservations", name,
                       RES_PB_MAX_RESERVATIONS);
            return -1;
        }
        for (size_t i = 0; i < pb->n_reservations; i++) {
            const Mesos__V1__Resource__ReservationInfo *v = pb->reservations[i];
            if (v == NULL || !v->has_type ||
                (v->type !=
                     MESOS__V1__RESOURCE__RESERVATION_INFO__TYPE__STATIC &&
                 v->type !=
                     MESOS__V1__RESOURCE__RESERVATION_INFO__TYPE__DYNAMIC)) {
                errbuf_set(err, errlen,
                           "%s: reservations[%zu] needs type STATIC or DYNAMIC",
                           name, i);
                return -1;
            }
            if (v->role == NULL) {
                errbuf_set(err, errlen, "%s: reservations[%zu] needs a role",
                           name, i);
                return -1;
            }
        }
        /* Both formats at once: only Mesos's "endpoint" format, where the
         * legacy fields repeat a single reservation exactly. */
        if ((has_role || legacy != NULL) && pb->n_reservations > 1) {
            errbuf_set(err, errlen,
                       "%s: 'role' and 'reservation' must not be set with "
                       "refined 'reservations'",
                       name);
            return -1;
        }
        if (has_role || legacy != NULL) {
            const Mesos__V1__Resource__ReservationInfo *v = pb->reservations[0];
            bool dynamic =
                v->type == MESOS__V1__RESOURCE__RESERVATION_INFO__TYPE__DYNAMIC;
            bool same =
                has_role && str_eq(pb->role, v->role) &&
                (dynamic ? legacy != NULL && !legacy->has_type &&
                               legacy->role == NULL &&
                               str_eq(legacy->principal, v->principal) &&
                               labels_pb_eq(legacy->labels, v->labels)
                         : legacy == NULL);
            if (!same) {
                errbuf_set(err, errlen,
                           "%s: both 'reservations' and 'role'/'reservation' "
                           "are set and they disagree",
                           name);
                return -1;
            }
        }
        for (size_t i = 0; i < pb->n_reservations; i++) {
            const Mesos__V1__Resource__ReservationInfo *v = pb->reservations[i];
            enum res_resv_type type =
                v->type == MESOS__V1__RESOURCE__RESERVATION_INFO__TYPE__STATIC
                    ? RES_RESV_STATIC
                    : RES_RESV_DYNAMIC;
            if (push_resv_from_pb(r, type, v->role, v, name, err, errlen) < 0)
                return -1;
        }
        return 0;
    }

    /* Pre-refinement format. */
    const char *role = has_role ? pb->role : default_role ? default_role : "*";
    char why[256];
    if (res_role_validate(role, why, sizeof(why)) < 0) {
        errbuf_set(err, errlen, "%s: %s", name, why);
        return -1;
    }
    if (legacy != NULL) {
        if (legacy->has_type || legacy->role != NULL) {
            errbuf_set(err, errlen,
                       "%s: 'reservation' must not set type or role (use "
                       "'reservations')",
                       name);
            return -1;
        }
        if (strcmp(role, "*") == 0) {
            errbuf_set(err, errlen,
                       "%s: role \"*\" cannot be dynamically reserved", name);
            return -1;
        }
        return push_resv_from_pb(r, RES_RESV_DYNAMIC, role, legacy, name, err,
                                 errlen);
    }
    if (strcmp(role, "*") != 0)
        res_push_reservation(r, RES_RESV_STATIC, role, NULL, NULL, 0);
    return 0;
}

static int disk_from_pb(const Mesos__V1__Resource__DiskInfo *pb,
                        struct resource *r, const char *name, char *err,
                        size_t errlen)
{
    struct res_disk *d = xcalloc(1, sizeof(*d));
    r->disk = d; /* owned by r from here on, freed with it on failure */
    if (pb->persistence != NULL) {
        if (pb->persistence->id == NULL) {
            errbuf_set(err, errlen, "%s: persistence without an id", name);
            return -1;
        }
        d->persistence_id = xstrdup(pb->persistence->id);
        d->persistence_principal = xstrdup(pb->persistence->principal);
    }
    if (pb->volume != NULL) {
        d->has_volume = true;
        d->volume_mode = (enum res_volume_mode)pb->volume->mode;
        d->container_path = xstrdup(pb->volume->container_path);
        d->host_path = xstrdup(pb->volume->host_path);
    }
    if (pb->source != NULL) {
        const Mesos__V1__Resource__DiskInfo__Source *s = pb->source;
        switch (s->type) {
        case MESOS__V1__RESOURCE__DISK_INFO__SOURCE__TYPE__PATH:
            d->source = RES_DISK_SOURCE_PATH;
            break;
        case MESOS__V1__RESOURCE__DISK_INFO__SOURCE__TYPE__MOUNT:
            d->source = RES_DISK_SOURCE_MOUNT;
            break;
        case MESOS__V1__RESOURCE__DISK_INFO__SOURCE__TYPE__BLOCK:
            d->source = RES_DISK_SOURCE_BLOCK;
            break;
        case MESOS__V1__RESOURCE__DISK_INFO__SOURCE__TYPE__RAW:
            d->source = RES_DISK_SOURCE_RAW;
            break;
        default:
            errbuf_set(err, errlen, "%s: unsupported disk source type %d", name,
                       (int)s->type);
            return -1;
        }
        if (d->source == RES_DISK_SOURCE_PATH) {
            if (s->mount != NULL) {
                errbuf_set(err, errlen, "%s: PATH disk source with a mount",
                           name);
                return -1;
            }
        } else if (d->source == RES_DISK_SOURCE_MOUNT) {
            if (s->path != NULL) {
                errbuf_set(err, errlen, "%s: MOUNT disk source with a path",
                           name);
                return -1;
            }
        } else if (s->path != NULL || s->mount != NULL) {
            errbuf_set(err, errlen, "%s: %s disk source with a path or mount",
                       name,
                       d->source == RES_DISK_SOURCE_BLOCK ? "BLOCK" : "RAW");
            return -1;
        }
        const char *root = s->path    ? s->path->root
                           : s->mount ? s->mount->root
                                      : NULL;
        d->source_root = xstrdup(root);
        d->source_id = xstrdup(s->id);
        d->source_profile = xstrdup(s->profile);
    }
    return 0;
}

static int from_pb(const Mesos__V1__Resource *pb, const char *default_role,
                   struct resource *out, char *err, size_t errlen)
{
    if (pb == NULL) {
        errbuf_set(err, errlen, "missing resource");
        return -1;
    }
    if (pb->name == NULL || pb->name[0] == '\0') {
        errbuf_set(err, errlen, "empty resource name");
        return -1;
    }
    char name[QUOTE_MAX + 1];
    int w = snprintf(name, sizeof(name), "%s", pb->name);
    if (w < 0)
        name[0] = '\0';

    struct resource r;
    res_init_scalar(&r, pb->name, 0);
    if (value_from_pb(pb, &r, name, err, errlen) < 0)
        goto fail;
    if (reservations_from_pb(pb, default_role, &r, name, err, errlen) < 0)
        goto fail;
    if (pb->allocation_info != NULL)
        r.alloc_role = xstrdup(pb->allocation_info->role);
    if (pb->provider_id != NULL)
        r.provider_id =
            xstrdup(pb->provider_id->value ? pb->provider_id->value : "");
    if (pb->disk != NULL && disk_from_pb(pb->disk, &r, name, err, errlen) < 0)
        goto fail;
    r.revocable = pb->revocable != NULL;
    if (pb->shared != NULL) {
        r.shared = true;
        r.shared_count = 1;
    }
    if (res_validate(&r, err, errlen) < 0)
        goto fail;
    *out = r;
    return 0;
fail:
    res_clear(&r);
    return -1;
}

int res_from_pb(const Mesos__V1__Resource *pb, struct resource *out, char *err,
                size_t errlen)
{
    return from_pb(pb, NULL, out, err, errlen);
}

int res_list_from_pb(Mesos__V1__Resource *const *v, size_t n, res_list *out,
                     char *err, size_t errlen)
{
    if (n > RES_PB_MAX_RESOURCES) {
        errbuf_set(err, errlen, "more than %d resources", RES_PB_MAX_RESOURCES);
        return -1;
    }
    res_list acc = RES_LIST_INIT;
    char why[512];
    for (size_t i = 0; i < n; i++) {
        struct resource r;
        if (res_from_pb(v[i], &r, why, sizeof(why)) < 0) {
            errbuf_set(err, errlen, "resource %zu: %s", i, why);
            res_list_clear(&acc);
            return -1;
        }
        res_list_add(&acc, &r);
        res_clear(&r);
    }
    /* Each entry was within bounds; their sum must be too (4,095 entries
     * of 1e12 cpus each passed one by one and overflowed the cluster's
     * totals). Merging saturates, so the check sees any excess. */
    for (uint32_t i = 0; i < acc.n; i++) {
        if (acc.v[i].type == RES_SCALAR &&
            acc.v[i].scalar > RES_SCALAR_MAX_UNITS * RES_SCALE) {
            errbuf_set(err, errlen, "%s: total above %lld", acc.v[i].name,
                       (long long)RES_SCALAR_MAX_UNITS);
            res_list_clear(&acc);
            return -1;
        }
    }
    res_list_add_all(out, &acc);
    res_list_clear(&acc);
    return 0;
}

/* ---- native -> pb -------------------------------------------------------- */

static Mesos__V1__Labels *labels_to_pb(const struct res_label *v, uint32_t n)
{
    if (n == 0)
        return NULL;
    Mesos__V1__Labels *pb = xmalloc(sizeof(*pb));
    mesos__v1__labels__init(pb);
    pb->labels = xcalloc(n, sizeof(*pb->labels));
    pb->n_labels = n;
    for (uint32_t i = 0; i < n; i++) {
        Mesos__V1__Label *l = xmalloc(sizeof(*l));
        mesos__v1__label__init(l);
        l->key = xstrdup(v[i].key ? v[i].key : "");
        l->value = xstrdup(v[i].value);
        pb->labels[i] = l;
    }
    return pb;
}

/* A ReservationInfo; `legacy` leaves out type and role, as the pre-refinement
 * `reservation` field must. */
static Mesos__V1__Resource__ReservationInfo *
resv_to_pb(const struct res_reservation *v, bool legacy)
{
    Mesos__V1__Resource__ReservationInfo *pb = xmalloc(sizeof(*pb));
    mesos__v1__resource__reservation_info__init(pb);
    if (!legacy) {
        pb->has_type = true;
        pb->type = v->type == RES_RESV_STATIC
                       ? MESOS__V1__RESOURCE__RESERVATION_INFO__TYPE__STATIC
                       : MESOS__V1__RESOURCE__RESERVATION_INFO__TYPE__DYNAMIC;
        pb->role = xstrdup(v->role ? v->role : "");
    }
    pb->principal = xstrdup(v->principal);
    pb->labels = labels_to_pb(v->labels, v->nlabels);
    return pb;
}

static Mesos__V1__Resource__DiskInfo *disk_to_pb(const struct res_disk *d)
{
    Mesos__V1__Resource__DiskInfo *pb = xmalloc(sizeof(*pb));
    mesos__v1__resource__disk_info__init(pb);
    if (d->persistence_id != NULL) {
        Mesos__V1__Resource__DiskInfo__Persistence *p = xmalloc(sizeof(*p));
        mesos__v1__resource__disk_info__persistence__init(p);
        p->id = xstrdup(d->persistence_id);
        p->principal = xstrdup(d->persistence_principal);
        pb->persistence = p;
    }
    if (d->has_volume) {
        Mesos__V1__Volume *v = xmalloc(sizeof(*v));
        mesos__v1__volume__init(v);
        v->mode = d->volume_mode == RES_VOLUME_RO ? MESOS__V1__VOLUME__MODE__RO
                                                  : MESOS__V1__VOLUME__MODE__RW;
        v->container_path = xstrdup(d->container_path ? d->container_path : "");
        v->host_path = xstrdup(d->host_path);
        pb->volume = v;
    }
    if (d->source != RES_DISK_SOURCE_NONE) {
        Mesos__V1__Resource__DiskInfo__Source *s = xmalloc(sizeof(*s));
        mesos__v1__resource__disk_info__source__init(s);
        switch (d->source) {
        case RES_DISK_SOURCE_PATH:
            s->type = MESOS__V1__RESOURCE__DISK_INFO__SOURCE__TYPE__PATH;
            if (d->source_root != NULL) {
                s->path = xmalloc(sizeof(*s->path));
                mesos__v1__resource__disk_info__source__path__init(s->path);
                s->path->root = xstrdup(d->source_root);
            }
            break;
        case RES_DISK_SOURCE_MOUNT:
            s->type = MESOS__V1__RESOURCE__DISK_INFO__SOURCE__TYPE__MOUNT;
            if (d->source_root != NULL) {
                s->mount = xmalloc(sizeof(*s->mount));
                mesos__v1__resource__disk_info__source__mount__init(s->mount);
                s->mount->root = xstrdup(d->source_root);
            }
            break;
        case RES_DISK_SOURCE_BLOCK:
            s->type = MESOS__V1__RESOURCE__DISK_INFO__SOURCE__TYPE__BLOCK;
            break;
        case RES_DISK_SOURCE_RAW:
            s->type = MESOS__V1__RESOURCE__DISK_INFO__SOURCE__TYPE__RAW;
            break;
        case RES_DISK_SOURCE_NONE:
            break;
        }
        s->id = xstrdup(d->source_id);
        s->profile = xstrdup(d->source_profile);
        pb->source = s;
    }
    return pb;
}

Mesos__V1__Resource *res_to_pb(const struct resource *r, bool refinement)
{
    Mesos__V1__Resource *pb = xmalloc(sizeof(*pb));
    mesos__v1__resource__init(pb);
    pb->role = NULL; /* unset, rather than protobuf-c's shared default */
    pb->name = xstrdup(r->name ? r->name : "");

    switch (r->type) {
    case RES_SCALAR:
        pb->type = MESOS__V1__VALUE__TYPE__SCALAR;
        pb->scalar = xmalloc(sizeof(*pb->scalar));
        mesos__v1__value__scalar__init(pb->scalar);
        pb->scalar->value = res_scalar_to_double(r->scalar);
        break;
    case RES_RANGES:
        pb->type = MESOS__V1__VALUE__TYPE__RANGES;
        pb->ranges = xmalloc(sizeof(*pb->ranges));
        mesos__v1__value__ranges__init(pb->ranges);
        if (r->nranges > 0) {
            pb->ranges->range = xcalloc(r->nranges, sizeof(*pb->ranges->range));
            pb->ranges->n_range = r->nranges;
        }
        for (uint32_t i = 0; i < r->nranges; i++) {
            Mesos__V1__Value__Range *g = xmalloc(sizeof(*g));
            mesos__v1__value__range__init(g);
            g->begin = r->ranges[i].begin;
            g->end = r->ranges[i].end;
            pb->ranges->range[i] = g;
        }
        break;
    case RES_SET:
        pb->type = MESOS__V1__VALUE__TYPE__SET;
        pb->set = xmalloc(sizeof(*pb->set));
        mesos__v1__value__set__init(pb->set);
        if (r->nitems > 0) {
            pb->set->item = xcalloc(r->nitems, sizeof(*pb->set->item));
            pb->set->n_item = r->nitems;
        }
        for (uint32_t i = 0; i < r->nitems; i++)
            pb->set->item[i] = xstrdup(r->items[i]);
        break;
    }

    if (refinement || r->nresv > 1) {
        if (r->nresv > 0) {
            pb->reservations = xcalloc(r->nresv, sizeof(*pb->reservations));
            pb->n_reservations = r->nresv;
        }
        for (uint32_t i = 0; i < r->nresv; i++)
            pb->reservations[i] = resv_to_pb(&r->resv[i], false);
    } else if (r->nresv == 0) {
        pb->role = xstrdup("*");
    } else {
        pb->role = xstrdup(r->resv[0].role ? r->resv[0].role : "");
        if (r->resv[0].type == RES_RESV_DYNAMIC)
            pb->reservation = resv_to_pb(&r->resv[0], true);
    }

    if (r->alloc_role != NULL) {
        pb->allocation_info = xmalloc(sizeof(*pb->allocation_info));
        mesos__v1__resource__allocation_info__init(pb->allocation_info);
        pb->allocation_info->role = xstrdup(r->alloc_role);
    }
    if (r->provider_id != NULL) {
        pb->provider_id = xmalloc(sizeof(*pb->provider_id));
        mesos__v1__resource_provider_id__init(pb->provider_id);
        pb->provider_id->value = xstrdup(r->provider_id);
    }
    if (r->disk != NULL)
        pb->disk = disk_to_pb(r->disk);
    if (r->revocable) {
        pb->revocable = xmalloc(sizeof(*pb->revocable));
        mesos__v1__resource__revocable_info__init(pb->revocable);
    }
    if (r->shared) {
        pb->shared = xmalloc(sizeof(*pb->shared));
        mesos__v1__resource__shared_info__init(pb->shared);
    }
    return pb;
}

Mesos__V1__Resource **res_list_to_pb(const res_list *l, bool refinement,
                                     size_t *n)
{
    Mesos__V1__Resource **v = xcalloc(l->n ? l->n : 1, sizeof(*v));
    for (uint32_t i = 0; i < l->n; i++)
        v[i] = res_to_pb(&l->v[i], refinement);
    *n = l->n;
    return v;
}

void res_pb_array_free(Mesos__V1__Resource **v, size_t n)
{
    if (v == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        if (v[i] != NULL)
            protobuf_c_message_free_unpacked(&v[i]->base, NULL);
    free(v);
}

json_t *res_list_to_json(const res_list *l)
{
    size_t n;
    Mesos__V1__Resource **v = res_list_to_pb(l, true, &n);
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, jpb_to_json(&v[i]->base));
    res_pb_array_free(v, n);
    return arr;
}

/* ---- JSON ---------------------------------------------------------------- */

static int from_json(const char *text, const char *default_role, res_list *out,
                     char *err, size_t errlen)
{
    if (text == NULL) {
        errbuf_set(err, errlen, "no resources JSON");
        return -1;
    }
    json_error_t jerr;
    json_t *root = json_loads(text, 0, &jerr);
    if (root == NULL) {
        errbuf_set(err, errlen, "resources JSON: %s at line %d column %d",
                   jerr.text, jerr.line, jerr.column);
        return -1;
    }
    if (!json_is_array(root)) {
        errbuf_set(err, errlen, "resources JSON must be an array");
        json_decref(root);
        return -1;
    }
    size_t n = json_array_size(root);
    if (n > RES_PB_MAX_RESOURCES) {
        errbuf_set(err, errlen, "more than %d resources", RES_PB_MAX_RESOURCES);
        json_decref(root);
        return -1;
    }
    res_list acc = RES_LIST_INIT;
    char why[512];
    for (size_t i = 0; i < n; i++) {
        const json_t *elem = json_array_get(root, i);
        if (!json_is_object(elem)) {
            errbuf_set(err, errlen, "resource %zu: not a JSON object", i);
            goto fail;
        }
        ProtobufCMessage *msg = jpb_from_json(&mesos__v1__resource__descriptor,
                                              elem, why, sizeof(why));
        if (msg == NULL) {
            errbuf_set(err, errlen, "resource %zu: %s", i, why);
            goto fail;
        }
        struct resource r;
        int rc = from_pb((const Mesos__V1__Resource *)msg, default_role, &r,
                         why, sizeof(why));
        jpb_free(msg);
        if (rc < 0) {
            errbuf_set(err, errlen, "resource %zu: %s", i, why);
            goto fail;
        }
        res_list_add(&acc, &r);
        res_clear(&r);
    }
    json_decref(root);
    res_list_add_all(out, &acc);
    res_list_clear(&acc);
    return 0;
fail:
    json_decref(root);
    res_list_clear(&acc);
    return -1;
}

int res_list_from_json(const char *text, res_list *out, char *err,
                       size_t errlen)
{
    return from_json(text, NULL, out, err, errlen);
}

/* Mesos's validateCommandLineResources: what operators may not write in
 * --resources. */
static int check_command_line(const res_list *l, char *err, size_t errlen)
{
    for (uint32_t i = 0; i < l->n; i++) {
        const struct resource *r = &l->v[i];
        if (res_is_persistent_volume(r)) {
            errbuf_set(err, errlen,
                       "%.*s: persistent volumes cannot be specified at the "
                       "command line",
                       QUOTE_MAX, r->name);
            return -1;
        }
        if (res_is_revocable(r)) {
            errbuf_set(err, errlen,
                       "%.*s: revocable resources cannot be specified at the "
                       "command line",
                       QUOTE_MAX, r->name);
            return -1;
        }
        if (res_is_dynamically_reserved(r)) {
            errbuf_set(err, errlen,
                       "%.*s: dynamic reservations cannot be specified at the "
                       "command line",
                       QUOTE_MAX, r->name);
            return -1;
        }
        for (uint32_t j = 0; j < i; j++) {
            if (strcmp(l->v[j].name, r->name) == 0 && l->v[j].type != r->type) {
                errbuf_set(err, errlen,
                           "%.*s: resources with the same name but different "
                           "types",
                           QUOTE_MAX, r->name);
                return -1;
            }
        }
    }
    return 0;
}

int res_list_parse(const char *text, const char *default_role, res_list *out,
                   char *err, size_t errlen)
{
    if (text == NULL) {
        errbuf_set(err, errlen, "no resources text");
        return -1;
    }
    const char *p = text;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    if (*p != '[')
        return res_parse_text(text, default_role, out, err, errlen);

    char why[256];
    if (default_role != NULL &&
        res_role_validate(default_role, why, sizeof(why)) < 0) {
        errbuf_set(err, errlen, "default role: %s", why);
        return -1;
    }
    res_list acc = RES_LIST_INIT;
    if (from_json(text, default_role, &acc, err, errlen) < 0)
        return -1;
    if (check_command_line(&acc, err, errlen) < 0) {
        res_list_clear(&acc);
        return -1;
    }
    res_list_add_all(out, &acc);
    res_list_clear(&acc);
    return 0;
}
