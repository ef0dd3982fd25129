/*
 * Tests for common/resources_pb: round trips through mesos.v1.Resource in
 * both reservation formats (in memory and through the wire encoding), the
 * legacy and combined formats, every rejection of a malformed message, and
 * JSON resource arrays.
 */
#include "common/resources_pb.h"

#include "check_main.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------ */

static void make_volume(struct resource *r, const char *id, const char *role)
{
    res_init_scalar(r, "disk", 2048000);
    res_push_reservation(r, RES_RESV_DYNAMIC, role, "ops", NULL, 0);
    r->disk = calloc(1, sizeof(*r->disk));
    r->disk->persistence_id = strdup(id);
    r->disk->persistence_principal = strdup("ops");
    r->disk->has_volume = true;
    r->disk->volume_mode = RES_VOLUME_RO;
    r->disk->container_path = strdup("data");
    r->disk->host_path = strdup("/srv/data");
}

/* A table of valid resources of every shape, built by index. */
#define SHAPES 12
static void make_shape(int i, struct resource *r)
{
    static const struct res_label labels[] = {{"k1", "v1"}, {"k2", NULL}};
    static const struct res_range ports[] = {{31000, 32000}, {5, 9}};
    static const char *zones[] = {"b", "a"};
    switch (i) {
    case 0:
        res_init_scalar(r, "cpus", 1500);
        break;
    case 1:
        res_init_scalar(r, "mem", 1024000);
        res_push_reservation(r, RES_RESV_STATIC, "eng", NULL, NULL, 0);
        break;
    case 2:
        res_init_ranges(r, "ports", ports, 2);
        res_push_reservation(r, RES_RESV_DYNAMIC, "eng", "ops", labels, 2);
        break;
    case 3:
        res_init_set(r, "zones", zones, 2);
        break;
    case 4:
        res_init_scalar(r, "cpus", 1);
        res_push_reservation(r, RES_RESV_STATIC, "eng", NULL, NULL, 0);
        res_push_reservation(r, RES_RESV_DYNAMIC, "eng/web", "p", labels, 1);
        break;
    case 5:
        make_volume(r, "v1", "eng");
        break;
    case 6:
        make_volume(r, "v2", "eng");
        r->shared = true;
        r->shared_count = 1;
        break;
    case 7:
        res_init_scalar(r, "cpus", 250);
        r->revocable = true;
        r->alloc_role = strdup("eng/web");
        break;
    case 8:
        res_init_scalar(r, "disk", 100000);
        r->disk = calloc(1, sizeof(*r->disk));
        r->disk->source = RES_DISK_SOURCE_MOUNT;
        r->disk->source_root = strdup("/mnt/d1");
        r->provider_id = strdup("rp-1");
        break;
    case 9:
        res_init_scalar(r, "disk", 100000);
        r->disk = calloc(1, sizeof(*r->disk));
        r->disk->source = RES_DISK_SOURCE_RAW;
        r->disk->source_id = strdup("vol-9");
        r->disk->source_profile = strdup("fast");
        break;
    case 10:
        res_init_scalar(r, "gpus", RES_SCALAR_MAX_UNITS * RES_SCALE);
        res_push_reservation(r, RES_RESV_DYNAMIC, "a", NULL, NULL, 0);
        res_push_reservation(r, RES_RESV_DYNAMIC, "a/b", NULL, NULL, 0);
        res_push_reservation(r, RES_RESV_DYNAMIC, "a/b/c", "x", NULL, 0);
        break;
    default: {
        struct res_range all = {0, UINT64_MAX};
        res_init_ranges(r, "ephemeral_ports", &all, 1);
        res_push_reservation(r, RES_RESV_STATIC, "eng", NULL, NULL, 0);
        r->alloc_role = strdup("eng");
        break;
    }
    }
}

/* Deep equality of two native resources, volume and principal included. */
static void assert_same(const struct resource *a, const struct resource *b,
                        const char *what)
{
    char *ra = res_render(a), *rb = res_render(b);
    ck_assert_msg(res_same_identity(a, b), "%s: identity %s vs %s", what, ra,
                  rb);
    ck_assert_msg(strcmp(ra, rb) == 0, "%s: %s vs %s", what, ra, rb);
    free(ra);
    free(rb);
    ck_assert_int_eq(a->scalar, b->scalar);
    ck_assert_uint_eq(a->nranges, b->nranges);
    ck_assert_uint_eq(a->nitems, b->nitems);
    ck_assert_int_eq(a->shared, b->shared);
    ck_assert_uint_eq(a->shared_count, b->shared_count);
    if (a->disk) {
        const struct res_disk *x = a->disk, *y = b->disk;
        ck_assert_int_eq(x->has_volume, y->has_volume);
        ck_assert_int_eq(x->volume_mode, y->volume_mode);
        ck_assert_pstr_eq(x->container_path, y->container_path);
        ck_assert_pstr_eq(x->host_path, y->host_path);
        ck_assert_pstr_eq(x->persistence_principal, y->persistence_principal);
    }
}

static Mesos__V1__Resource *new_pb(const char *name, double scalar)
{
    Mesos__V1__Resource *pb = calloc(1, sizeof(*pb));
    mesos__v1__resource__init(pb);
    pb->name = strdup(name);
    pb->type = MESOS__V1__VALUE__TYPE__SCALAR;
    pb->scalar = calloc(1, sizeof(*pb->scalar));
    mesos__v1__value__scalar__init(pb->scalar);
    pb->scalar->value = scalar;
    return pb;
}

static void free_pb(Mesos__V1__Resource *pb)
{
    protobuf_c_message_free_unpacked(&pb->base, NULL);
}

static Mesos__V1__Resource__ReservationInfo *
new_resv(int type, const char *role, const char *principal)
{
    Mesos__V1__Resource__ReservationInfo *v = calloc(1, sizeof(*v));
    mesos__v1__resource__reservation_info__init(v);
    if (type) {
        v->has_type = true;
        v->type = (Mesos__V1__Resource__ReservationInfo__Type)type;
    }
    v->role = role ? strdup(role) : NULL;
    v->principal = principal ? strdup(principal) : NULL;
    return v;
}

static void push_resv(Mesos__V1__Resource *pb,
                      Mesos__V1__Resource__ReservationInfo *v)
{
    pb->reservations = realloc(pb->reservations, (pb->n_reservations + 1) *
                                                     sizeof(*pb->reservations));
    pb->reservations[pb->n_reservations++] = v;
}

static void set_role(Mesos__V1__Resource *pb, const char *role)
{
    pb->role = strdup(role);
}

#define STATIC_  MESOS__V1__RESOURCE__RESERVATION_INFO__TYPE__STATIC
#define DYNAMIC_ MESOS__V1__RESOURCE__RESERVATION_INFO__TYPE__DYNAMIC

static void expect_error(Mesos__V1__Resource *pb, const char *reason)
{
    struct resource r;
    memset(&r, 0x5a, sizeof(r));
    char err[512] = "";
    ck_assert_msg(res_from_pb(pb, &r, err, sizeof(err)) == -1,
                  "accepted, wanted '%s'", reason);
    ck_assert_msg(strstr(err, reason) != NULL, "reason '%s' lacks '%s'", err,
                  reason);
    ck_assert_msg(strchr(err, '\n') == NULL, "reason not one line: %s", err);
    unsigned char *p = (unsigned char *)&r;
    for (size_t i = 0; i < sizeof(r); i++)
        ck_assert_msg(p[i] == 0x5a, "output written on failure");
}

static struct resource expect_ok(const Mesos__V1__Resource *pb)
{
    struct resource r;
    char err[512] = "";
    ck_assert_msg(res_from_pb(pb, &r, err, sizeof(err)) == 0, "refused: %s",
                  err);
    return r;
}

/* ---- round trips -------------------------------------------------------- */

START_TEST(round_trip_both_formats)
{
    for (int i = 0; i < SHAPES; i++) {
        struct resource r;
        make_shape(i, &r);
        char err[256];
        ck_assert_msg(res_validate(&r, err, sizeof(err)) == 0, "shape %d: %s",
                      i, err);
        for (int refine = 0; refine < 2; refine++) {
            Mesos__V1__Resource *pb = res_to_pb(&r, refine);
            struct resource back = expect_ok(pb);
            char what[64];
            snprintf(what, sizeof(what), "shape %d refinement %d", i, refine);
            assert_same(&r, &back, what);
            res_clear(&back);
            free_pb(pb);
        }
        res_clear(&r);
    }
}
END_TEST

START_TEST(round_trip_through_wire)
{
    for (int i = 0; i < SHAPES; i++) {
        struct resource r;
        make_shape(i, &r);
        for (int refine = 0; refine < 2; refine++) {
            Mesos__V1__Resource *pb = res_to_pb(&r, refine);
            size_t len = protobuf_c_message_get_packed_size(&pb->base);
            uint8_t *buf = malloc(len ? len : 1);
            ck_assert_uint_eq(protobuf_c_message_pack(&pb->base, buf), len);
            Mesos__V1__Resource *un =
                mesos__v1__resource__unpack(NULL, len, buf);
            ck_assert_ptr_nonnull(un);
            struct resource back = expect_ok(un);
            char what[64];
            snprintf(what, sizeof(what), "wire shape %d refinement %d", i,
                     refine);
            assert_same(&r, &back, what);
            res_clear(&back);
            mesos__v1__resource__free_unpacked(un, NULL);
            free(buf);
            free_pb(pb);
        }
        res_clear(&r);
    }
}
END_TEST

START_TEST(list_round_trip)
{
    res_list l = RES_LIST_INIT;
    for (int i = 0; i < SHAPES; i++) {
        struct resource r;
        make_shape(i, &r);
        res_list_add(&l, &r);
        res_clear(&r);
    }
    for (int refine = 0; refine < 2; refine++) {
        size_t n = 99;
        Mesos__V1__Resource **v = res_list_to_pb(&l, refine, &n);
        ck_assert_uint_eq(n, l.n);
        res_list back = RES_LIST_INIT;
        char err[256];
        ck_assert_int_eq(res_list_from_pb(v, n, &back, err, sizeof(err)), 0);
        ck_assert(res_list_equal(&l, &back));
        res_list_clear(&back);
        res_pb_array_free(v, n);
    }
    res_list empty = RES_LIST_INIT;
    size_t n = 99;
    Mesos__V1__Resource **v = res_list_to_pb(&empty, true, &n);
    ck_assert_ptr_nonnull(v);
    ck_assert_uint_eq(n, 0);
    res_pb_array_free(v, n);
    res_pb_array_free(NULL, 0);
    res_list_clear(&l);
}
END_TEST

/* ---- output formats -------------------------------------------------------
 */

START_TEST(legacy_output_format)
{
    struct resource r;
    make_shape(0, &r); /* unreserved */
    Mesos__V1__Resource *pb = res_to_pb(&r, false);
    ck_assert_str_eq(pb->role, "*");
    ck_assert_uint_eq(pb->n_reservations, 0);
    ck_assert_ptr_null(pb->reservation);
    ck_assert(fabs(pb->scalar->value - 1.5) < 1e-12);
    free_pb(pb);
    pb = res_to_pb(&r, true);
    ck_assert_ptr_null(pb->role);
    ck_assert_uint_eq(pb->n_reservations, 0);
    free_pb(pb);
    res_clear(&r);

    make_shape(1, &r); /* static */
    pb = res_to_pb(&r, false);
    ck_assert_str_eq(pb->role, "eng");
    ck_assert_ptr_null(pb->reservation);
    ck_assert_uint_eq(pb->n_reservations, 0);
    free_pb(pb);
    pb = res_to_pb(&r, true);
    ck_assert_ptr_null(pb->role);
    ck_assert_uint_eq(pb->n_reservations, 1);
    ck_assert(pb->reservations[0]->has_type);
    ck_assert_int_eq(pb->reservations[0]->type, STATIC_);
    ck_assert_str_eq(pb->reservations[0]->role, "eng");
    free_pb(pb);
    res_clear(&r);

    make_shape(2, &r); /* dynamic with principal and labels */
    pb = res_to_pb(&r, false);
    ck_assert_str_eq(pb->role, "eng");
    ck_assert_ptr_nonnull(pb->reservation);
    ck_assert(!pb->reservation->has_type);
    ck_assert_ptr_null(pb->reservation->role);
    ck_assert_str_eq(pb->reservation->principal, "ops");
    ck_assert_uint_eq(pb->reservation->labels->n_labels, 2);
    ck_assert_str_eq(pb->reservation->labels->labels[0]->key, "k1");
    ck_assert_ptr_null(pb->reservation->labels->labels[1]->value);
    ck_assert_uint_eq(pb->n_reservations, 0);
    free_pb(pb);
    res_clear(&r);

    make_shape(4, &r); /* refined: post-refinement either way */
    pb = res_to_pb(&r, false);
    ck_assert_ptr_null(pb->role);
    ck_assert_ptr_null(pb->reservation);
    ck_assert_uint_eq(pb->n_reservations, 2);
    ck_assert_str_eq(pb->reservations[1]->role, "eng/web");
    free_pb(pb);
    res_clear(&r);
}
END_TEST

START_TEST(unset_role_is_not_packed)
{
    struct resource r;
    make_shape(4, &r);
    Mesos__V1__Resource *pb = res_to_pb(&r, true);
    size_t len = protobuf_c_message_get_packed_size(&pb->base);
    uint8_t *buf = malloc(len);
    protobuf_c_message_pack(&pb->base, buf);
    Mesos__V1__Resource *un = mesos__v1__resource__unpack(NULL, len, buf);
    /* field 6 absent on the wire: the default comes back, not "*" set */
    ck_assert_ptr_eq(un->role, mesos__v1__resource__role__default_value);
    mesos__v1__resource__free_unpacked(un, NULL);
    free(buf);
    free_pb(pb);
    res_clear(&r);
}
END_TEST

/* ---- legacy and combined input ------------------------------------------- */

START_TEST(legacy_input_table)
{
    /* role unset: unreserved */
    Mesos__V1__Resource *pb = new_pb("cpus", 2);
    struct resource r = expect_ok(pb);
    ck_assert(res_is_unreserved(&r));
    ck_assert_int_eq(r.scalar, 2000);
    res_clear(&r);

    /* role "*": unreserved */
    set_role(pb, "*");
    r = expect_ok(pb);
    ck_assert(res_is_unreserved(&r));
    res_clear(&r);
    free_pb(pb);

    /* role R: STATIC R */
    pb = new_pb("cpus", 2);
    set_role(pb, "eng/web");
    r = expect_ok(pb);
    ck_assert_uint_eq(r.nresv, 1);
    ck_assert_int_eq(r.resv[0].type, RES_RESV_STATIC);
    ck_assert_str_eq(r.resv[0].role, "eng/web");
    res_clear(&r);

    /* role R + reservation: DYNAMIC R with principal and labels */
    pb->reservation = new_resv(0, NULL, "ops");
    pb->reservation->labels = calloc(1, sizeof(Mesos__V1__Labels));
    mesos__v1__labels__init(pb->reservation->labels);
    pb->reservation->labels->n_labels = 1;
    pb->reservation->labels->labels = calloc(1, sizeof(Mesos__V1__Label *));
    pb->reservation->labels->labels[0] = calloc(1, sizeof(Mesos__V1__Label));
    mesos__v1__label__init(pb->reservation->labels->labels[0]);
    pb->reservation->labels->labels[0]->key = strdup("purpose");
    pb->reservation->labels->labels[0]->value = strdup("db");
    r = expect_ok(pb);
    ck_assert_uint_eq(r.nresv, 1);
    ck_assert_int_eq(r.resv[0].type, RES_RESV_DYNAMIC);
    ck_assert_str_eq(r.resv[0].role, "eng/web");
    ck_assert_str_eq(r.resv[0].principal, "ops");
    ck_assert_uint_eq(r.resv[0].nlabels, 1);
    ck_assert_str_eq(r.resv[0].labels[0].key, "purpose");
    ck_assert_str_eq(r.resv[0].labels[0].value, "db");
    res_clear(&r);
    free_pb(pb);
}
END_TEST

START_TEST(legacy_input_errors)
{
    Mesos__V1__Resource *pb = new_pb("cpus", 1);
    pb->reservation = new_resv(0, NULL, "ops");
    expect_error(pb, "role \"*\" cannot be dynamically reserved");
    set_role(pb, "*");
    expect_error(pb, "role \"*\" cannot be dynamically reserved");
    free(pb->role);
    set_role(pb, "eng");
    pb->reservation->has_type = true;
    pb->reservation->type = DYNAMIC_;
    expect_error(pb, "must not set type or role");
    pb->reservation->has_type = false;
    pb->reservation->role = strdup("eng");
    expect_error(pb, "must not set type or role");
    free_pb(pb);

    pb = new_pb("cpus", 1);
    set_role(pb, "a//b");
    expect_error(pb, "adjacent slashes");
    free_pb(pb);
}
END_TEST

START_TEST(combined_formats)
{
    /* Mesos's endpoint format: consistent legacy fields are accepted */
    Mesos__V1__Resource *pb = new_pb("cpus", 1);
    push_resv(pb, new_resv(STATIC_, "eng", NULL));
    set_role(pb, "eng");
    struct resource r = expect_ok(pb);
    ck_assert_uint_eq(r.nresv, 1);
    ck_assert_int_eq(r.resv[0].type, RES_RESV_STATIC);
    res_clear(&r);

    /* static plus a legacy reservation */
    pb->reservation = new_resv(0, NULL, NULL);
    expect_error(pb, "disagree");
    free_pb(pb);

    /* role disagrees */
    pb = new_pb("cpus", 1);
    push_resv(pb, new_resv(STATIC_, "eng", NULL));
    set_role(pb, "ops");
    expect_error(pb, "disagree");
    free(pb->role);
    set_role(pb, "*");
    expect_error(pb, "disagree");
    free_pb(pb);

    /* dynamic: role and reservation both, principal equal */
    pb = new_pb("cpus", 1);
    push_resv(pb, new_resv(DYNAMIC_, "eng", "ops"));
    set_role(pb, "eng");
    expect_error(pb, "disagree"); /* role without reservation */
    pb->reservation = new_resv(0, NULL, "ops");
    r = expect_ok(pb);
    ck_assert_int_eq(r.resv[0].type, RES_RESV_DYNAMIC);
    ck_assert_str_eq(r.resv[0].principal, "ops");
    res_clear(&r);
    free(pb->reservation->principal);
    pb->reservation->principal = strdup("other");
    expect_error(pb, "disagree");
    free(pb->role);
    pb->role = NULL;
    expect_error(pb, "disagree"); /* reservation without role */
    free_pb(pb);

    /* refined reservations never combine */
    pb = new_pb("cpus", 1);
    push_resv(pb, new_resv(STATIC_, "eng", NULL));
    push_resv(pb, new_resv(DYNAMIC_, "eng/web", NULL));
    r = expect_ok(pb);
    ck_assert_uint_eq(r.nresv, 2);
    res_clear(&r);
    set_role(pb, "eng/web");
    expect_error(pb, "must not be set with refined");
    free_pb(pb);
}
END_TEST

START_TEST(reservations_errors)
{
    Mesos__V1__Resource *pb = new_pb("cpus", 1);
    push_resv(pb, new_resv(0, "eng", NULL));
    expect_error(pb, "needs type STATIC or DYNAMIC");
    pb->reservations[0]->has_type = true;
    pb->reservations[0]->type =
        MESOS__V1__RESOURCE__RESERVATION_INFO__TYPE__UNKNOWN;
    expect_error(pb, "needs type STATIC or DYNAMIC");
    pb->reservations[0]->type = STATIC_;
    free(pb->reservations[0]->role);
    pb->reservations[0]->role = NULL;
    expect_error(pb, "needs a role");
    pb->reservations[0]->role = strdup("*");
    expect_error(pb, "role \"*\" cannot be reserved");
    free(pb->reservations[0]->role);
    pb->reservations[0]->role = strdup("eng");
    push_resv(pb, new_resv(STATIC_, "eng/web", NULL));
    expect_error(pb, "cannot be STATIC");
    pb->reservations[1]->type = DYNAMIC_;
    free(pb->reservations[1]->role);
    pb->reservations[1]->role = strdup("ops");
    expect_error(pb, "is not a refinement");
    free_pb(pb);
}
END_TEST

/* ---- values ----------------------------------------------------------------
 */

START_TEST(value_type_mismatch)
{
    Mesos__V1__Resource *pb = new_pb("cpus", 1);
    pb->type = MESOS__V1__VALUE__TYPE__RANGES;
    expect_error(pb, "RANGES resource needs the ranges field");
    pb->type = MESOS__V1__VALUE__TYPE__SET;
    expect_error(pb, "SET resource needs the set field");
    pb->type = MESOS__V1__VALUE__TYPE__TEXT;
    expect_error(pb, "TEXT resources are not supported");
    pb->type = (Mesos__V1__Value__Type)7;
    expect_error(pb, "unknown resource type 7");
    pb->type = MESOS__V1__VALUE__TYPE__SCALAR;
    pb->set = calloc(1, sizeof(*pb->set));
    mesos__v1__value__set__init(pb->set);
    expect_error(pb, "SCALAR resource needs the scalar field and no other");
    protobuf_c_message_free_unpacked(&pb->scalar->base, NULL);
    pb->scalar = NULL;
    pb->type = MESOS__V1__VALUE__TYPE__SET;
    struct resource r = expect_ok(pb); /* an empty set is valid, and empty */
    ck_assert(res_is_empty(&r));
    res_clear(&r);
    pb->type = MESOS__V1__VALUE__TYPE__SCALAR;
    expect_error(pb, "SCALAR resource needs the scalar field");
    free_pb(pb);

    pb = new_pb("", 1);
    expect_error(pb, "empty resource name");
    free_pb(pb);
}
END_TEST

START_TEST(scalar_values_table)
{
    static const struct {
        double d;
        const char *reason; /* NULL: accepted */
        int64_t milli;
    } cases[] = {
        {0.0 / 0.0, "not a number", 0},
        {1.0 / 0.0, "infinite", 0},
        {-1.0 / 0.0, "infinite", 0},
        {-0.5, "negative", 0},
        {1e13, "too large", 0},
        {0.0001, "rounds to zero", 0},
        {0.0005, NULL, 1},
        {0, NULL, 0},
        {0.1 + 0.2, NULL, 300},
        {4096.123456, NULL, 4096123},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        Mesos__V1__Resource *pb = new_pb("mem", cases[i].d);
        if (cases[i].reason) {
            expect_error(pb, cases[i].reason);
        } else {
            struct resource r = expect_ok(pb);
            ck_assert_msg(r.scalar == cases[i].milli, "case %zu: %lld", i,
                          (long long)r.scalar);
            res_clear(&r);
        }
        free_pb(pb);
    }
}
END_TEST

static Mesos__V1__Resource *new_ranges_pb(const uint64_t (*v)[2], size_t n)
{
    Mesos__V1__Resource *pb = new_pb("ports", 0);
    protobuf_c_message_free_unpacked(&pb->scalar->base, NULL);
    pb->scalar = NULL;
    pb->type = MESOS__V1__VALUE__TYPE__RANGES;
    pb->ranges = calloc(1, sizeof(*pb->ranges));
    mesos__v1__value__ranges__init(pb->ranges);
    pb->ranges->n_range = n;
    pb->ranges->range = calloc(n ? n : 1, sizeof(*pb->ranges->range));
    for (size_t i = 0; i < n; i++) {
        Mesos__V1__Value__Range *g = calloc(1, sizeof(*g));
        mesos__v1__value__range__init(g);
        g->begin = v[i][0];
        g->end = v[i][1];
        pb->ranges->range[i] = g;
    }
    return pb;
}

START_TEST(ranges_and_sets_input)
{
    const uint64_t touching[][2] = {{11, 20}, {1, 10}, {30, 30}};
    Mesos__V1__Resource *pb = new_ranges_pb(touching, 3);
    struct resource r = expect_ok(pb);
    ck_assert_uint_eq(r.nranges, 2);
    ck_assert_uint_eq(r.ranges[0].begin, 1);
    ck_assert_uint_eq(r.ranges[0].end, 20);
    res_clear(&r);
    free_pb(pb);

    const uint64_t overlap[][2] = {{30, 40}, {1, 10}, {10, 12}};
    pb = new_ranges_pb(overlap, 3);
    expect_error(pb, "overlapping ranges");
    free_pb(pb);

    const uint64_t huge[][2] = {{0, UINT64_MAX / 2},
                                {UINT64_MAX / 2 + 1, UINT64_MAX}};
    pb = new_ranges_pb(huge, 2);
    r = expect_ok(pb);
    ck_assert_uint_eq(r.nranges, 1);
    res_clear(&r);
    free_pb(pb);

    const uint64_t inverted[][2] = {{5, 3}};
    pb = new_ranges_pb(inverted, 1);
    expect_error(pb, "begin > end");
    free_pb(pb);

    pb = new_pb("zones", 0);
    protobuf_c_message_free_unpacked(&pb->scalar->base, NULL);
    pb->scalar = NULL;
    pb->type = MESOS__V1__VALUE__TYPE__SET;
    pb->set = calloc(1, sizeof(*pb->set));
    mesos__v1__value__set__init(pb->set);
    pb->set->n_item = 3;
    pb->set->item = calloc(3, sizeof(char *));
    pb->set->item[0] = strdup("b");
    pb->set->item[1] = strdup("a");
    pb->set->item[2] = strdup("b");
    expect_error(pb, "duplicate set items");
    free(pb->set->item[2]);
    pb->set->item[2] = strdup("c");
    r = expect_ok(pb);
    ck_assert_uint_eq(r.nitems, 3);
    ck_assert_str_eq(r.items[0], "a");
    res_clear(&r);
    free_pb(pb);
}
END_TEST

/* ---- disk, shared, revocable --------------------------------------------- */

START_TEST(disk_and_flags_errors)
{
    struct resource v;
    make_volume(&v, "v1", "eng");
    Mesos__V1__Resource *pb = res_to_pb(&v, true);
    res_clear(&v);
    struct resource r = expect_ok(pb);
    res_clear(&r);

    /* persistence without volume */
    Mesos__V1__Volume *vol = pb->disk->volume;
    pb->disk->volume = NULL;
    expect_error(pb, "without a volume");
    pb->disk->volume = vol;

    /* unknown and malformed sources */
    pb->disk->source = calloc(1, sizeof(*pb->disk->source));
    mesos__v1__resource__disk_info__source__init(pb->disk->source);
    expect_error(pb, "unsupported disk source type 0");
    pb->disk->source->type =
        MESOS__V1__RESOURCE__DISK_INFO__SOURCE__TYPE__BLOCK;
    pb->disk->source->path = calloc(1, sizeof(*pb->disk->source->path));
    mesos__v1__resource__disk_info__source__path__init(pb->disk->source->path);
    expect_error(pb, "BLOCK disk source with a path or mount");
    pb->disk->source->type =
        MESOS__V1__RESOURCE__DISK_INFO__SOURCE__TYPE__MOUNT;
    expect_error(pb, "MOUNT disk source with a path");

    /* revocable with reservation and disk */
    pb->disk->source->type = MESOS__V1__RESOURCE__DISK_INFO__SOURCE__TYPE__PATH;
    pb->revocable = calloc(1, sizeof(*pb->revocable));
    mesos__v1__resource__revocable_info__init(pb->revocable);
    expect_error(pb, "revocable resources cannot be reserved");
    free_pb(pb);

    /* persistence without reservation */
    make_volume(&v, "v1", "eng");
    pb = res_to_pb(&v, true);
    res_clear(&v);
    protobuf_c_message_free_unpacked(&pb->reservations[0]->base, NULL);
    pb->n_reservations = 0;
    expect_error(pb, "is not reserved");
    free_pb(pb);

    /* shared only on persistent volumes; disk info only on disk */
    pb = new_pb("cpus", 1);
    pb->shared = calloc(1, sizeof(*pb->shared));
    mesos__v1__resource__shared_info__init(pb->shared);
    expect_error(pb, "only persistent volumes can be shared");
    protobuf_c_message_free_unpacked(&pb->shared->base, NULL);
    pb->shared = NULL;
    pb->disk = calloc(1, sizeof(*pb->disk));
    mesos__v1__resource__disk_info__init(pb->disk);
    expect_error(pb, "not named disk");
    free_pb(pb);
}
END_TEST

START_TEST(list_from_pb_all_or_nothing)
{
    Mesos__V1__Resource *v[3];
    v[0] = new_pb("cpus", 1);
    v[1] = new_pb("cpus", 2);
    v[2] = new_pb("mem", -1);
    res_list l = RES_LIST_INIT;
    struct resource keep;
    res_init_scalar(&keep, "disk", 5);
    res_list_add(&l, &keep);
    res_clear(&keep);
    char err[256] = "";
    ck_assert_int_eq(res_list_from_pb(v, 3, &l, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "resource 2: mem: scalar value is negative") !=
                      NULL,
                  "%s", err);
    ck_assert_uint_eq(l.n, 1);

    v[2]->scalar->value = 0; /* empty: dropped */
    ck_assert_int_eq(res_list_from_pb(v, 3, &l, err, sizeof(err)), 0);
    ck_assert_uint_eq(l.n, 2);
    ck_assert_int_eq(res_list_scalar(&l, "cpus"), 3000);
    ck_assert_int_eq(res_list_scalar(&l, "mem"), 0);

    ck_assert_int_eq(
        res_list_from_pb(v, RES_PB_MAX_RESOURCES + 1, &l, err, sizeof(err)),
        -1);
    ck_assert_ptr_nonnull(strstr(err, "more than"));

    /* Each entry within bounds, their sum not: refused, l unchanged. */
    v[0]->scalar->value = 1e12;
    v[1]->scalar->value = 1e12;
    ck_assert_int_eq(res_list_from_pb(v, 2, &l, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "cpus: total above 1000000000000") != NULL, "%s",
                  err);
    ck_assert_int_eq(res_list_scalar(&l, "cpus"), 3000);
    for (int i = 0; i < 3; i++)
        free_pb(v[i]);
    res_list_clear(&l);
}
END_TEST

/* ---- JSON -------------------------------------------------------------------
 */

START_TEST(json_array_both_formats)
{
    const char *text =
        "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":2.5}},"
        " {\"name\":\"mem\",\"type\":\"SCALAR\",\"scalar\":{\"value\":512},"
        "  \"role\":\"eng\",\"reservation\":{\"principal\":\"ops\"}},"
        " {\"name\":\"ports\",\"type\":\"RANGES\","
        "  \"ranges\":{\"range\":[{\"begin\":31000,\"end\":32000}]},"
        "  \"reservations\":[{\"type\":\"STATIC\",\"role\":\"eng\"},"
        "   {\"type\":\"DYNAMIC\",\"role\":\"eng/web\",\"principal\":\"p\","
        "    \"labels\":{\"labels\":[{\"key\":\"k\",\"value\":\"v\"}]}}]},"
        " {\"name\":\"zones\",\"type\":\"SET\",\"set\":{\"item\":[\"a\"]},"
        "  \"role\":\"*\"}]";
    res_list l = RES_LIST_INIT;
    char err[256] = "";
    ck_assert_msg(res_list_from_json(text, &l, err, sizeof(err)) == 0, "%s",
                  err);
    ck_assert_uint_eq(l.n, 4);
    ck_assert_int_eq(res_list_scalar(&l, "cpus"), 2500);
    const struct resource *mem = &l.v[1];
    ck_assert(res_is_dynamically_reserved(mem));
    ck_assert_str_eq(mem->resv[0].principal, "ops");
    const struct resource *ports = &l.v[2];
    ck_assert_uint_eq(ports->nresv, 2);
    ck_assert_str_eq(res_reservation_role(ports), "eng/web");
    ck_assert_str_eq(ports->resv[1].labels[0].value, "v");
    ck_assert(res_is_unreserved(&l.v[3]));
    res_list_clear(&l);
}
END_TEST

START_TEST(json_errors)
{
    static const struct {
        const char *text;
        const char *reason;
    } cases[] = {
        {"{\"name\":\"cpus\"}", "must be an array"},
        {"[{\"name\":\"cpus\",", "resources JSON"},
        {"[1]", "resource 0: not a JSON object"},
        {"[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1}},"
         " {\"name\":\"mem\",\"type\":\"SCALAR\",\"scalar\":{\"value\":\"x\"}}"
         "]",
         "resource 1: "},
        {"[{\"name\":\"mem\",\"type\":\"SCALAR\",\"scalar\":{\"value\":-1}}]",
         "resource 0: mem: scalar value is negative"},
        {"[{\"name\":\"mem\",\"type\":\"BOGUS\",\"scalar\":{\"value\":1}}]",
         "resource 0: "},
        {"[{\"name\":\"mem\",\"type\":\"RANGES\",\"scalar\":{\"value\":1}}]",
         "RANGES resource needs the ranges field"},
        {"[{\"name\":\"mem\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1},"
         "\"role\":\"eng\",\"reservations\":[{\"type\":\"STATIC\","
         "\"role\":\"ops\"}]}]",
         "disagree"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        res_list l = RES_LIST_INIT;
        char err[512] = "";
        ck_assert_msg(res_list_from_json(cases[i].text, &l, err, sizeof(err)) ==
                          -1,
                      "case %zu accepted", i);
        ck_assert_msg(strstr(err, cases[i].reason) != NULL,
                      "case %zu: '%s' lacks '%s'", i, err, cases[i].reason);
        ck_assert_msg(strchr(err, '\n') == NULL, "case %zu: not one line", i);
        ck_assert_uint_eq(l.n, 0);
    }
}
END_TEST

START_TEST(json_too_many)
{
    size_t n = RES_PB_MAX_RESOURCES + 1, one = strlen("{},");
    char *text = malloc(n * one + 3);
    char *p = text;
    *p++ = '[';
    for (size_t i = 0; i < n; i++) {
        memcpy(p, "{},", one);
        p += one;
    }
    p[-1] = ']';
    *p = '\0';
    res_list l = RES_LIST_INIT;
    char err[256];
    ck_assert_int_eq(res_list_from_json(text, &l, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "more than"));
    free(text);
}
END_TEST

START_TEST(parse_dispatches_and_restricts)
{
    res_list l = RES_LIST_INIT;
    char err[256] = "";
    ck_assert_int_eq(
        res_list_parse("cpus:2;mem:10", "eng", &l, err, sizeof(err)), 0);
    ck_assert_uint_eq(l.n, 2);
    ck_assert_str_eq(res_reservation_role(&l.v[0]), "eng");
    res_list_clear(&l);

    const char *json =
        "  [{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":2}},"
        "   {\"name\":\"mem\",\"type\":\"SCALAR\",\"scalar\":{\"value\":3},"
        "    \"role\":\"*\"}]";
    ck_assert_msg(res_list_parse(json, "eng", &l, err, sizeof(err)) == 0, "%s",
                  err);
    ck_assert_str_eq(res_reservation_role(&l.v[0]), "eng");
    ck_assert(res_is_unreserved(&l.v[1]));
    res_list_clear(&l);

    static const struct {
        const char *text;
        const char *reason;
    } bad[] = {
        {"[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1},"
         "\"role\":\"eng\",\"reservation\":{}}]",
         "dynamic reservations"},
        {"[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1},"
         "\"revocable\":{}}]",
         "revocable"},
        {"[{\"name\":\"disk\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1},"
         "\"role\":\"eng\",\"disk\":{\"persistence\":{\"id\":\"v\"},"
         "\"volume\":{\"mode\":\"RW\",\"container_path\":\"d\"}}}]",
         "persistent volumes"},
        {"[{\"name\":\"x\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1}},"
         " {\"name\":\"x\",\"type\":\"SET\",\"set\":{\"item\":[\"a\"]}}]",
         "different types"},
        {"cpus:1;cpus:{a}", "different types"},
        {"cpus", "missing ':'"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_msg(res_list_parse(bad[i].text, NULL, &l, err, sizeof(err)) ==
                          -1,
                      "case %zu accepted", i);
        ck_assert_msg(strstr(err, bad[i].reason) != NULL,
                      "case %zu: '%s' lacks '%s'", i, err, bad[i].reason);
        ck_assert_uint_eq(l.n, 0);
    }
    /* the same dynamic reservation is fine for /reserve */
    ck_assert_int_eq(res_list_from_json(bad[0].text, &l, err, sizeof(err)), 0);
    ck_assert(res_is_dynamically_reserved(&l.v[0]));
    res_list_clear(&l);
}
END_TEST

static Suite *resources_pb_suite(void)
{
    Suite *s = suite_create("resources_pb");
    TCase *conv = tcase_create("convert");
    tcase_add_test(conv, round_trip_both_formats);
    tcase_add_test(conv, round_trip_through_wire);
    tcase_add_test(conv, list_round_trip);
    tcase_add_test(conv, legacy_output_format);
    tcase_add_test(conv, unset_role_is_not_packed);
    tcase_add_test(conv, legacy_input_table);
    tcase_add_test(conv, legacy_input_errors);
    tcase_add_test(conv, combined_formats);
    tcase_add_test(conv, reservations_errors);
    tcase_add_test(conv, value_type_mismatch);
    tcase_add_test(conv, scalar_values_table);
    tcase_add_test(conv, ranges_and_sets_input);
    tcase_add_test(conv, disk_and_flags_errors);
    tcase_add_test(conv, list_from_pb_all_or_nothing);
    suite_add_tcase(s, conv);

    TCase *json = tcase_create("json");
    tcase_add_test(json, json_array_both_formats);
    tcase_add_test(json, json_errors);
    tcase_add_test(json, json_too_many);
    tcase_add_test(json, parse_dispatches_and_restricts);
    suite_add_tcase(s, json);
    return s;
}

OFFERD_CHECK_MAIN(resources_pb_suite)
