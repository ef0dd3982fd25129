/*
 * Tests for common/resources: the arithmetic laws on randomized lists (fixed
 * seeds, printed on failure), then hand-written tables for parsing,
 * validation, roles, atomic and shared resources and rendering.
 */
#include "common/resources.h"

#include "check_main.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ITERATIONS 2000

/* ---- helpers ------------------------------------------------------------ */

static res_list parse_ok(const char *text, const char *role)
{
    res_list l = RES_LIST_INIT;
    char err[256] = "";
    int rc = res_parse_text(text, role, &l, err, sizeof(err));
    ck_assert_msg(rc == 0, "parse '%s' failed: %s", text, err);
    return l;
}

static const struct resource *find(const res_list *l, const char *name)
{
    for (uint32_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i].name, name) == 0)
            return &l->v[i];
    return NULL;
}

static void add_scalar(res_list *l, const char *name, int64_t milli)
{
    struct resource r;
    res_init_scalar(&r, name, milli);
    res_list_add(l, &r);
    res_clear(&r);
}

static void make_volume(struct resource *r, const char *id, int64_t milli,
                        const char *role)
{
    res_init_scalar(r, "disk", milli);
    res_push_reservation(r, RES_RESV_STATIC, role, NULL, NULL, 0);
    r->disk = calloc(1, sizeof(*r->disk));
    r->disk->persistence_id = strdup(id);
    r->disk->has_volume = true;
    r->disk->volume_mode = RES_VOLUME_RW;
    r->disk->container_path = strdup("data");
}

/* xorshift64*: a small deterministic generator. */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 2685821657736338717ULL;
}

static uint32_t rng_below(uint64_t *s, uint32_t n)
{
    return (uint32_t)(rng_next(s) % n);
}

/* What a random generator may produce. */
enum gen_flags {
    GEN_TEXT = 1,   /* only what the text form expresses */
    GEN_SHARED = 2, /* shared volumes allowed */
};

/* Fill r with a random valid resource. `side` (0 or 1) keeps ranges and set
 * items of two lists disjoint, so that (a + b) - b == a holds. */
static void gen_resource(uint64_t *s, struct resource *r, int side,
                         unsigned flags)
{
    static const char *scalars[] = {"cpus", "mem", "disk", "gpus"};
    static const char *roles[] = {"a", "b", "a/x", "eng/web"};
    uint32_t kind = rng_below(s, 10);
    if (kind < 6) {
        res_init_scalar(r, scalars[rng_below(s, 4)],
                        1 + (int64_t)rng_below(s, 200000));
    } else if (kind < 8) {
        struct res_range v[4];
        uint32_t n = 1 + rng_below(s, 4);
        for (uint32_t i = 0; i < n; i++) {
            /* blocks of 10 values, even ones for side 0 and odd ones for
             * side 1: the sides interleave and touch but never overlap */
            uint64_t block = 2 * (uint64_t)rng_below(s, 50) + (uint64_t)side;
            uint32_t off = rng_below(s, 10);
            v[i].begin = block * 10 + off;
            v[i].end = v[i].begin + rng_below(s, 10 - off);
        }
        res_init_ranges(r, kind == 6 ? "ports" : "ephemeral_ports", v, n);
    } else {
        char items[3][8];
        const char *p[3];
        uint32_t n = 1 + rng_below(s, 3);
        for (uint32_t i = 0; i < n; i++) {
            snprintf(items[i], sizeof(items[i]), "%c%u", side ? 'y' : 'x',
                     rng_below(s, 20));
            p[i] = items[i];
        }
        res_init_set(r, kind == 8 ? "zones" : "tags", p, n);
    }

    uint32_t resv = rng_below(s, 6);
    if (resv == 1 || resv == 2)
        res_push_reservation(r, RES_RESV_STATIC, roles[rng_below(s, 4)], NULL,
                             NULL, 0);
    if (flags & GEN_TEXT)
        return;
    if (resv == 3) {
        struct res_label lab = {"k", "v"};
        res_push_reservation(r, RES_RESV_DYNAMIC, "eng", "ops", &lab,
                             rng_below(s, 2));
        if (rng_below(s, 2))
            res_push_reservation(r, RES_RESV_DYNAMIC, "eng/web", NULL, NULL, 0);
    }
    if (resv == 0 && rng_below(s, 4) == 0)
        r->revocable = true;
    if (rng_below(s, 5) == 0)
        r->alloc_role = strdup(roles[rng_below(s, 4)]);
    if (r->type == RES_SCALAR && strcmp(r->name, "disk") == 0 && r->nresv &&
        rng_below(s, 3) == 0) {
        char id[16];
        snprintf(id, sizeof(id), "v%u", rng_below(s, 3));
        r->disk = calloc(1, sizeof(*r->disk));
        r->disk->persistence_id = strdup(id);
        r->disk->has_volume = true;
        r->disk->volume_mode = RES_VOLUME_RW;
        r->disk->container_path = strdup("data");
        if ((flags & GEN_SHARED) && rng_below(s, 2)) {
            r->shared = true;
            r->shared_count = 1 + rng_below(s, 3);
        }
    }
}

static void gen_list(uint64_t *s, res_list *l, int side, unsigned flags)
{
    uint32_t n = rng_below(s, 8);
    for (uint32_t i = 0; i < n; i++) {
        struct resource r;
        gen_resource(s, &r, side, flags);
        char err[256];
        ck_assert_msg(res_validate(&r, err, sizeof(err)) == 0,
                      "generator made an invalid resource: %s", err);
        res_list_add(l, &r);
        res_clear(&r);
    }
}

/* ---- laws ---------------------------------------------------------------- */

START_TEST(law_add_then_sub_is_identity)
{
    uint64_t seed = 0x5eed0001;
    uint64_t s = seed;
    for (int it = 0; it < ITERATIONS; it++) {
        res_list a = RES_LIST_INIT, b = RES_LIST_INIT, c = RES_LIST_INIT;
        gen_list(&s, &a, 0, GEN_SHARED);
        gen_list(&s, &b, 1, GEN_SHARED);
        res_list_copy(&c, &a);
        res_list_add_all(&c, &b);
        res_list_sub_all(&c, &b);
        if (!res_list_equal(&c, &a)) {
            char *ra = res_list_render(&a), *rb = res_list_render(&b),
                 *rc = res_list_render(&c);
            ck_abort_msg("seed %#llx iteration %d: (a+b)-b != a\na=%s\nb=%s\n"
                         "got=%s",
                         (unsigned long long)seed, it, ra, rb, rc);
        }
        res_list_clear(&a);
        res_list_clear(&b);
        res_list_clear(&c);
    }
}
END_TEST

START_TEST(law_sum_contains_parts)
{
    uint64_t seed = 0x5eed0002;
    uint64_t s = seed;
    for (int it = 0; it < ITERATIONS; it++) {
        res_list a = RES_LIST_INIT, b = RES_LIST_INIT, c = RES_LIST_INIT;
        gen_list(&s, &a, 0, GEN_SHARED);
        gen_list(&s, &b, rng_below(&s, 2), GEN_SHARED);
        res_list_copy(&c, &a);
        res_list_add_all(&c, &b);
        ck_assert_msg(res_list_contains(&c, &a),
                      "seed %#llx iteration %d: a+b does not contain a",
                      (unsigned long long)seed, it);
        ck_assert_msg(res_list_contains(&c, &b),
                      "seed %#llx iteration %d: a+b does not contain b",
                      (unsigned long long)seed, it);
        ck_assert_msg(res_list_contains(&a, &a),
                      "seed %#llx iteration %d: a does not contain a",
                      (unsigned long long)seed, it);
        ck_assert_msg(res_list_equal(&a, &a), "seed %#llx iteration %d: a != a",
                      (unsigned long long)seed, it);
        res_list_clear(&a);
        res_list_clear(&b);
        res_list_clear(&c);
    }
}
END_TEST

START_TEST(law_flatten_keeps_scalar_totals)
{
    static const char *names[] = {"cpus", "mem", "disk", "gpus"};
    uint64_t seed = 0x5eed0003;
    uint64_t s = seed;
    for (int it = 0; it < ITERATIONS; it++) {
        res_list a = RES_LIST_INIT, f = RES_LIST_INIT, g = RES_LIST_INIT;
        gen_list(&s, &a, 0, 0);
        res_list_flatten(&a, NULL, &f);
        res_list_flatten(&a, "r", &g);
        for (int k = 0; k < 4; k++) {
            int64_t want = res_list_scalar(&a, names[k]);
            ck_assert_msg(res_list_scalar(&f, names[k]) == want &&
                              res_list_scalar(&g, names[k]) == want,
                          "seed %#llx iteration %d: %s total changed",
                          (unsigned long long)seed, it, names[k]);
        }
        for (uint32_t i = 0; i < f.n; i++)
            ck_assert(f.v[i].nresv == 0 && f.v[i].disk == NULL &&
                      f.v[i].alloc_role == NULL);
        for (uint32_t i = 0; i < g.n; i++)
            ck_assert(res_is_reserved(&g.v[i], "r") && g.v[i].nresv == 1);
        res_list_clear(&a);
        res_list_clear(&f);
        res_list_clear(&g);
    }
}
END_TEST

START_TEST(law_equal_is_symmetric)
{
    uint64_t seed = 0x5eed0004;
    uint64_t s = seed;
    for (int it = 0; it < ITERATIONS; it++) {
        res_list a = RES_LIST_INIT, b = RES_LIST_INIT, rev = RES_LIST_INIT;
        gen_list(&s, &a, 0, GEN_SHARED);
        gen_list(&s, &b, 0, GEN_SHARED);
        ck_assert_msg(res_list_equal(&a, &b) == res_list_equal(&b, &a),
                      "seed %#llx iteration %d: equal not symmetric",
                      (unsigned long long)seed, it);
        /* the same resources added in reverse order are equal */
        for (uint32_t i = a.n; i-- > 0;)
            res_list_add(&rev, &a.v[i]);
        ck_assert_msg(res_list_equal(&a, &rev) && res_list_equal(&rev, &a),
                      "seed %#llx iteration %d: order matters",
                      (unsigned long long)seed, it);
        res_list_clear(&a);
        res_list_clear(&b);
        res_list_clear(&rev);
    }
}
END_TEST

START_TEST(law_render_parse_round_trip)
{
    uint64_t seed = 0x5eed0005;
    uint64_t s = seed;
    for (int it = 0; it < ITERATIONS; it++) {
        res_list a = RES_LIST_INIT, b = RES_LIST_INIT;
        gen_list(&s, &a, rng_below(&s, 2), GEN_TEXT);
        char *text = res_list_render(&a);
        char err[256] = "";
        int rc = res_parse_text(text, NULL, &b, err, sizeof(err));
        ck_assert_msg(rc == 0 && res_list_equal(&a, &b),
                      "seed %#llx iteration %d: '%s' did not round trip (%s)",
                      (unsigned long long)seed, it, text, err);
        char *again = res_list_render(&b);
        ck_assert_msg(strcmp(text, again) == 0,
                      "seed %#llx iteration %d: '%s' rendered as '%s'",
                      (unsigned long long)seed, it, text, again);
        free(text);
        free(again);
        res_list_clear(&a);
        res_list_clear(&b);
    }
}
END_TEST

START_TEST(law_ranges_normalize)
{
    uint64_t seed = 0x5eed0006;
    uint64_t s = seed;
    for (int it = 0; it < ITERATIONS; it++) {
        struct res_range v[16];
        uint32_t n = rng_below(&s, 16);
        bool bits[200] = {false};
        for (uint32_t i = 0; i < n; i++) {
            v[i].begin = rng_below(&s, 190);
            v[i].end = v[i].begin + rng_below(&s, 10);
            for (uint64_t x = v[i].begin; x <= v[i].end; x++)
                bits[x] = true;
        }
        uint32_t m = res_ranges_normalize(v, n);
        struct res_range w[16];
        memcpy(w, v, m * sizeof(*v));
        ck_assert_msg(res_ranges_normalize(w, m) == m &&
                          memcmp(w, v, m * sizeof(*v)) == 0,
                      "seed %#llx iteration %d: normalize not idempotent",
                      (unsigned long long)seed, it);
        uint64_t want = 0;
        for (int x = 0; x < 200; x++)
            want += bits[x];
        ck_assert_msg(res_ranges_count(v, m) == want,
                      "seed %#llx iteration %d: count changed",
                      (unsigned long long)seed, it);
        for (uint32_t i = 1; i < m; i++)
            ck_assert_msg(v[i].begin > v[i - 1].end + 1,
                          "seed %#llx iteration %d: not coalesced",
                          (unsigned long long)seed, it);
        for (int x = 0; x < 200; x++) {
            struct res_range one = {(uint64_t)x, (uint64_t)x};
            ck_assert(res_ranges_contains(v, m, &one, 1) == bits[x]);
        }
    }
}
END_TEST

/* Random ranges over [0, 200) as a resource and as a bitmap. */
static void gen_ranges_bits(uint64_t *s, struct resource *r, bool *bits)
{
    struct res_range v[12];
    uint32_t n = rng_below(s, 12);
    for (uint32_t i = 0; i < n; i++) {
        v[i].begin = rng_below(s, 190);
        v[i].end = v[i].begin + rng_below(s, 10);
        for (uint64_t x = v[i].begin; x <= v[i].end; x++)
            bits[x] = true;
    }
    res_init_ranges(r, "ports", v, n);
}

static bool list_has_port(const res_list *l, uint64_t x)
{
    if (l->n == 0)
        return false;
    struct res_range one = {x, x};
    return res_ranges_contains(l->v[0].ranges, l->v[0].nranges, &one, 1);
}

START_TEST(law_ranges_arithmetic_matches_bitmap)
{
    uint64_t seed = 0x5eed0008;
    uint64_t s = seed;
    for (int it = 0; it < ITERATIONS; it++) {
        bool a[200] = {false}, b[200] = {false};
        struct resource ra, rb;
        gen_ranges_bits(&s, &ra, a);
        gen_ranges_bits(&s, &rb, b);
        res_list sum = RES_LIST_INIT, diff = RES_LIST_INIT, la = RES_LIST_INIT,
                 lb = RES_LIST_INIT;
        res_list_add(&la, &ra);
        res_list_add(&lb, &rb);
        res_list_add(&sum, &ra);
        res_list_add(&sum, &rb);
        res_list_add(&diff, &ra);
        res_list_sub(&diff, &rb);
        bool subset = true;
        for (uint64_t x = 0; x < 200; x++) {
            ck_assert_msg(list_has_port(&sum, x) == (a[x] || b[x]),
                          "seed %#llx iteration %d: union wrong at %llu",
                          (unsigned long long)seed, it, (unsigned long long)x);
            ck_assert_msg(list_has_port(&diff, x) == (a[x] && !b[x]),
                          "seed %#llx iteration %d: difference wrong at %llu",
                          (unsigned long long)seed, it, (unsigned long long)x);
            if (b[x] && !a[x])
                subset = false;
        }
        ck_assert_msg(res_list_contains(&la, &lb) == subset,
                      "seed %#llx iteration %d: contains wrong",
                      (unsigned long long)seed, it);
        uint32_t nr = sum.n ? sum.v[0].nranges : 0;
        for (uint32_t i = 1; i < nr; i++)
            ck_assert(sum.v[0].ranges[i].begin >
                      sum.v[0].ranges[i - 1].end + 1);
        char err[128];
        ck_assert(res_list_validate(&sum, err, sizeof(err)) == 0);
        ck_assert(res_list_validate(&diff, err, sizeof(err)) == 0);
        res_clear(&ra);
        res_clear(&rb);
        res_list_clear(&sum);
        res_list_clear(&diff);
        res_list_clear(&la);
        res_list_clear(&lb);
    }
}
END_TEST

/* Random set over items "i0".."i9" as a resource and as a bitmap. */
static void gen_set_bits(uint64_t *s, struct resource *r, bool *bits)
{
    char names[10][16];
    const char *p[10];
    uint32_t n = 0;
    for (int i = 0; i < 10; i++) {
        bits[i] = rng_below(s, 2);
        if (bits[i]) {
            snprintf(names[n], sizeof(names[n]), "i%d", i);
            p[n] = names[n];
            n++;
        }
    }
    res_init_set(r, "zones", p, n);
}

static bool list_has_item(const res_list *l, int i)
{
    char name[16];
    snprintf(name, sizeof(name), "i%d", i);
    for (uint32_t k = 0; l->n && k < l->v[0].nitems; k++)
        if (strcmp(l->v[0].items[k], name) == 0)
            return true;
    return false;
}

START_TEST(law_set_arithmetic_matches_bitmap)
{
    uint64_t seed = 0x5eed0009;
    uint64_t s = seed;
    for (int it = 0; it < ITERATIONS; it++) {
        bool a[10], b[10];
        struct resource ra, rb;
        gen_set_bits(&s, &ra, a);
        gen_set_bits(&s, &rb, b);
        res_list sum = RES_LIST_INIT, diff = RES_LIST_INIT, la = RES_LIST_INIT,
                 lb = RES_LIST_INIT;
        res_list_add(&la, &ra);
        res_list_add(&lb, &rb);
        res_list_add(&sum, &ra);
        res_list_add(&sum, &rb);
        res_list_add(&diff, &ra);
        res_list_sub(&diff, &rb);
        bool subset = true;
        for (int x = 0; x < 10; x++) {
            ck_assert_msg(list_has_item(&sum, x) == (a[x] || b[x]),
                          "seed %#llx iteration %d: union wrong at i%d",
                          (unsigned long long)seed, it, x);
            ck_assert_msg(list_has_item(&diff, x) == (a[x] && !b[x]),
                          "seed %#llx iteration %d: difference wrong at i%d",
                          (unsigned long long)seed, it, x);
            if (b[x] && !a[x])
                subset = false;
        }
        ck_assert_msg(res_list_contains(&la, &lb) == subset,
                      "seed %#llx iteration %d: contains wrong",
                      (unsigned long long)seed, it);
        char err[128];
        ck_assert(res_list_validate(&sum, err, sizeof(err)) == 0);
        ck_assert(res_list_validate(&diff, err, sizeof(err)) == 0);
        res_clear(&ra);
        res_clear(&rb);
        res_list_clear(&sum);
        res_list_clear(&diff);
        res_list_clear(&la);
        res_list_clear(&lb);
    }
}
END_TEST

START_TEST(law_subtraction_saturates)
{
    uint64_t seed = 0x5eed0007;
    uint64_t s = seed;
    for (int it = 0; it < ITERATIONS; it++) {
        res_list l = RES_LIST_INIT;
        int64_t a = rng_below(&s, 10000), b = rng_below(&s, 10000);
        add_scalar(&l, "cpus", a);
        add_scalar(&l, "mem", 5);
        struct resource r;
        res_init_scalar(&r, "cpus", b);
        res_list_sub(&l, &r);
        res_clear(&r);
        int64_t want = a > b ? a - b : 0;
        ck_assert_msg(res_list_scalar(&l, "cpus") == want,
                      "seed %#llx iteration %d: %lld - %lld",
                      (unsigned long long)seed, it, (long long)a, (long long)b);
        for (uint32_t i = 0; i < l.n; i++)
            ck_assert(l.v[i].scalar > 0);
        ck_assert_int_eq(res_list_scalar(&l, "mem"), 5);
        res_list_clear(&l);
    }
}
END_TEST

START_TEST(law_tenth_added_and_removed_is_exact)
{
    int64_t tenth;
    ck_assert_int_eq(res_scalar_from_double(0.1, &tenth), 0);
    ck_assert_int_eq(tenth, 100);
    res_list l = RES_LIST_INIT;
    struct resource r;
    res_init_scalar(&r, "cpus", tenth);
    for (int i = 0; i < 10000; i++)
        res_list_add(&l, &r);
    ck_assert_uint_eq(l.n, 1);
    ck_assert_int_eq(res_list_scalar(&l, "cpus"), 1000 * RES_SCALE);
    ck_assert(res_scalar_to_double(l.v[0].scalar) == 1000.0);
    for (int i = 0; i < 10000; i++)
        res_list_sub(&l, &r);
    ck_assert(res_list_is_empty(&l));
    ck_assert_int_eq(res_list_scalar(&l, "cpus"), 0);
    res_clear(&r);
    res_list_clear(&l);
}
END_TEST

/* ---- scalars ------------------------------------------------------------ */

START_TEST(scalar_from_double_table)
{
    static const struct {
        double d;
        int rc;
        int64_t milli;
    } cases[] = {
        {0, 0, 0},          {1, 0, 1000},         {0.5, 0, 500},
        {0.0004, 0, 0},     {0.0005, 0, 1},       {1.2345, 0, 1235},
        {1e12, 0, 1e15},    {1e12 + 1, -1, 0},    {-0.001, -1, 0},
        {-1, -1, 0},        {1.0 / 0.0, -1, 0},   {-1.0 / 0.0, -1, 0},
        {0.0 / 0.0, -1, 0}, {1024.1, 0, 1024100},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t out = -7;
        int rc = res_scalar_from_double(cases[i].d, &out);
        ck_assert_msg(rc == cases[i].rc, "case %zu: rc %d", i, rc);
        if (rc == 0)
            ck_assert_msg(out == cases[i].milli, "case %zu: %lld", i,
                          (long long)out);
        else
            ck_assert_msg(out == -7, "case %zu: out written on failure", i);
    }
}
END_TEST

/* ---- parsing ------------------------------------------------------------ */

START_TEST(parse_mesos_example)
{
    res_list l = parse_ok("cpus:4;mem:1024;disk(role1):100;"
                          "ports:[31000-32000,33000-33005];gpus:0",
                          NULL);
    ck_assert_uint_eq(l.n, 4);
    ck_assert_ptr_null(find(&l, "gpus"));
    const struct resource *cpus = find(&l, "cpus");
    ck_assert_int_eq(cpus->type, RES_SCALAR);
    ck_assert_int_eq(cpus->scalar, 4000);
    ck_assert(res_is_unreserved(cpus));
    ck_assert_int_eq(find(&l, "mem")->scalar, 1024000);
    const struct resource *disk = find(&l, "disk");
    ck_assert_int_eq(disk->scalar, 100000);
    ck_assert_uint_eq(disk->nresv, 1);
    ck_assert_int_eq(disk->resv[0].type, RES_RESV_STATIC);
    ck_assert_str_eq(disk->resv[0].role, "role1");
    ck_assert_ptr_null(disk->resv[0].principal);
    const struct resource *ports = find(&l, "ports");
    ck_assert_int_eq(ports->type, RES_RANGES);
    ck_assert_uint_eq(ports->nranges, 2);
    ck_assert_uint_eq(ports->ranges[0].begin, 31000);
    ck_assert_uint_eq(ports->ranges[0].end, 32000);
    ck_assert_uint_eq(ports->ranges[1].begin, 33000);
    ck_assert_uint_eq(ports->ranges[1].end, 33005);
    res_list_clear(&l);
}
END_TEST

START_TEST(parse_whitespace_and_empty_entries)
{
    res_list l = parse_ok("  cpus : 4.5 ;; mem:1024 ; ; "
                          "ports : [ 1 - 10 , 20-30 ] ; zones:{ a , b };",
                          NULL);
    ck_assert_uint_eq(l.n, 4);
    ck_assert_int_eq(find(&l, "cpus")->scalar, 4500);
    ck_assert_uint_eq(find(&l, "ports")->nranges, 2);
    const struct resource *z = find(&l, "zones");
    ck_assert_uint_eq(z->nitems, 2);
    ck_assert_str_eq(z->items[0], "a");
    ck_assert_str_eq(z->items[1], "b");
    res_list_clear(&l);

    l = parse_ok("", NULL);
    ck_assert(res_list_is_empty(&l));
    l = parse_ok(" ; ;", NULL);
    ck_assert(res_list_is_empty(&l));
}
END_TEST

START_TEST(parse_default_role)
{
    res_list l = parse_ok("cpus:1;mem(*):2;disk(other):3", "eng");
    ck_assert_str_eq(res_reservation_role(find(&l, "cpus")), "eng");
    ck_assert(res_is_unreserved(find(&l, "mem")));
    ck_assert_str_eq(res_reservation_role(find(&l, "disk")), "other");
    res_list_clear(&l);

    l = parse_ok("cpus:1", "*");
    ck_assert(res_is_unreserved(find(&l, "cpus")));
    res_list_clear(&l);

    char err[128];
    ck_assert_int_eq(res_parse_text("cpus:1", "a//b", &l, err, sizeof(err)),
                     -1);
    ck_assert_ptr_nonnull(strstr(err, "default role"));
}
END_TEST

START_TEST(parse_merges_and_appends)
{
    res_list l = RES_LIST_INIT;
    add_scalar(&l, "cpus", 500);
    char err[128];
    ck_assert_int_eq(res_parse_text("cpus:1;cpus:2;ports:[1-5];ports:[6-9]",
                                    NULL, &l, err, sizeof(err)),
                     0);
    ck_assert_uint_eq(l.n, 2);
    ck_assert_int_eq(find(&l, "cpus")->scalar, 3500);
    const struct resource *p = find(&l, "ports");
    ck_assert_uint_eq(p->nranges, 1);
    ck_assert_uint_eq(p->ranges[0].begin, 1);
    ck_assert_uint_eq(p->ranges[0].end, 9);
    res_list_clear(&l);
}
END_TEST

START_TEST(parse_sets_and_empty_values)
{
    res_list l = parse_ok("zones:{c,a,b};tags:{};ports:[];x:{ }", NULL);
    ck_assert_uint_eq(l.n, 1);
    const struct resource *z = find(&l, "zones");
    ck_assert_int_eq(z->type, RES_SET);
    ck_assert_uint_eq(z->nitems, 3);
    ck_assert_str_eq(z->items[0], "a");
    ck_assert_str_eq(z->items[2], "c");
    res_list_clear(&l);
}
END_TEST

START_TEST(parse_errors_table)
{
    static const struct {
        const char *text;
        const char *reason; /* a substring of the reason */
    } cases[] = {
        {"cpus", "missing ':'"},
        {"cpus:1;mem", "missing ':'"},
        {"cpus:1:2", "extra ':'"},
        {"cpus:abc", "bad number"},
        {"cpus:1.2.3", "bad number"},
        {"cpus:0x10", "bad number"},
        {"cpus:nan", "bad number"},
        {"cpus:inf", "bad number"},
        {"cpus:-1", "negative"},
        {"cpus:1e13", "too large"},
        {"cpus:0.0001", "rounds to zero"},
        {"cpus:", "empty value"},
        {"ports:[1-5", "unclosed '['"},
        {"ports:[1-5,[6-7]]", "unexpected bracket"},
        {"zones:{a,b", "unclosed '{'"},
        {"cpus:1]", "unexpected bracket"},
        {"ports:[5-3]", "bad range"},
        {"ports:[1-5,3-8]", "overlapping ranges"},
        {"ports:[1-5,5-8]", "overlapping ranges"},
        {"ports:[1-5,]", "empty range"},
        {"ports:[7]", "expected begin-end"},
        {"ports:[a-5]", "bad number"},
        {"ports:[1-99999999999999999999]", "bad number"},
        {"zones:{a,a}", "duplicate set item"},
        {"zones:{a,,b}", "empty set item"},
        {":4", "empty resource name"},
        {"(role):4", "empty resource name"},
        {"disk(role1:100", "mismatched parentheses"},
        {"disk)role1(:100", "mismatched parentheses"},
        {"disk(a)b:100", "unexpected text"},
        {"disk():100", "empty role"},
        {"disk(a b):100", "whitespace"},
        {"disk(/a):100", "slash"},
        {"disk(a/):100", "slash"},
        {"disk(.):100", "'.'"},
        {"disk(-a):100", "'-'"},
        {"disk(a/*):100", "'*'"},
        {"cpus:1;cpus:[1-2]", "different types"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        res_list l = RES_LIST_INIT;
        add_scalar(&l, "keep", 1000);
        char err[256] = "";
        int rc = res_parse_text(cases[i].text, NULL, &l, err, sizeof(err));
        ck_assert_msg(rc == -1, "'%s' parsed", cases[i].text);
        ck_assert_msg(strstr(err, cases[i].reason) != NULL,
                      "'%s': reason '%s' lacks '%s'", cases[i].text, err,
                      cases[i].reason);
        ck_assert_msg(strchr(err, '\n') == NULL, "'%s': reason not one line",
                      cases[i].text);
        ck_assert_msg(l.n == 1 && l.v[0].scalar == 1000, "'%s': output changed",
                      cases[i].text);
        res_list_clear(&l);
    }
}
END_TEST

/* ---- validation ---------------------------------------------------------- */

typedef void (*mutate_fn)(struct resource *r);

static void m_negative(struct resource *r)
{
    r->scalar = -1;
}
static void m_too_large(struct resource *r)
{
    r->scalar = RES_SCALAR_MAX_UNITS * RES_SCALE + 1;
}
static void m_empty_name(struct resource *r)
{
    r->name[0] = '\0';
}
static void m_unknown_type(struct resource *r)
{
    r->type = (enum res_type)3;
}
static void m_overlap(struct resource *r)
{
    free(r->name);
    r->name = strdup("ports");
    r->type = RES_RANGES;
    r->ranges = calloc(2, sizeof(*r->ranges));
    r->ranges[0] = (struct res_range){1, 10};
    r->ranges[1] = (struct res_range){5, 20};
    r->nranges = 2;
}
static void m_overlap_unsorted(struct resource *r)
{
    m_overlap(r);
    r->ranges[0] = (struct res_range){30, 40};
    r->ranges[1] = (struct res_range){1, 35};
}
static void m_inverted(struct resource *r)
{
    m_overlap(r);
    r->ranges[0] = (struct res_range){9, 3};
    r->nranges = 1;
}
static void m_uncoalesced(struct resource *r)
{
    m_overlap(r);
    r->ranges[1] = (struct res_range){11, 20};
}
static void m_dup_items(struct resource *r)
{
    free(r->name);
    r->name = strdup("zones");
    r->type = RES_SET;
    r->items = calloc(2, sizeof(char *));
    r->items[0] = strdup("a");
    r->items[1] = strdup("a");
    r->nitems = 2;
}
static void m_revocable_reserved(struct resource *r)
{
    r->revocable = true;
    res_push_reservation(r, RES_RESV_STATIC, "eng", NULL, NULL, 0);
}
static void m_revocable_disk(struct resource *r)
{
    free(r->name);
    r->name = strdup("disk");
    r->revocable = true;
    r->disk = calloc(1, sizeof(*r->disk));
}
static void m_volume_unreserved(struct resource *r)
{
    res_clear(r);
    make_volume(r, "v1", 1000, "eng");
    free(r->resv[0].role);
    free(r->resv);
    r->resv = NULL;
    r->nresv = 0;
}
static void m_volume_without_volume(struct resource *r)
{
    res_clear(r);
    make_volume(r, "v1", 1000, "eng");
    r->disk->has_volume = false;
}
static void m_volume_without_path(struct resource *r)
{
    res_clear(r);
    make_volume(r, "v1", 1000, "eng");
    free(r->disk->container_path);
    r->disk->container_path = NULL;
}
static void m_disk_on_cpus(struct resource *r)
{
    r->disk = calloc(1, sizeof(*r->disk));
}
static void m_shared_not_volume(struct resource *r)
{
    r->shared = true;
    r->shared_count = 1;
}
static void m_shared_zero(struct resource *r)
{
    res_clear(r);
    make_volume(r, "v1", 1000, "eng");
    r->shared = true;
    r->shared_count = 0;
}
static void m_not_refinement(struct resource *r)
{
    res_push_reservation(r, RES_RESV_STATIC, "eng", NULL, NULL, 0);
    res_push_reservation(r, RES_RESV_DYNAMIC, "ops", NULL, NULL, 0);
}
static void m_same_role_refinement(struct resource *r)
{
    res_push_reservation(r, RES_RESV_STATIC, "eng", NULL, NULL, 0);
    res_push_reservation(r, RES_RESV_DYNAMIC, "eng", NULL, NULL, 0);
}
static void m_prefix_not_child(struct resource *r)
{
    res_push_reservation(r, RES_RESV_STATIC, "eng", NULL, NULL, 0);
    res_push_reservation(r, RES_RESV_DYNAMIC, "engine", NULL, NULL, 0);
}
static void m_second_static(struct resource *r)
{
    res_push_reservation(r, RES_RESV_DYNAMIC, "eng", NULL, NULL, 0);
    res_push_reservation(r, RES_RESV_STATIC, "eng/web", NULL, NULL, 0);
}
static void m_star_in_stack(struct resource *r)
{
    res_push_reservation(r, RES_RESV_STATIC, "*", NULL, NULL, 0);
}
static void m_bad_role(struct resource *r)
{
    res_push_reservation(r, RES_RESV_STATIC, "a//b", NULL, NULL, 0);
}
static void m_unknown_resv_type(struct resource *r)
{
    res_push_reservation(r, (enum res_resv_type)0, "eng", NULL, NULL, 0);
}
static void m_block_with_root(struct resource *r)
{
    free(r->name);
    r->name = strdup("disk");
    r->disk = calloc(1, sizeof(*r->disk));
    r->disk->source = RES_DISK_SOURCE_BLOCK;
    r->disk->source_root = strdup("/dev/x");
}
static void m_bad_alloc_role(struct resource *r)
{
    r->alloc_role = strdup("a b");
}

START_TEST(validate_errors_table)
{
    static const struct {
        mutate_fn fn;
        const char *reason;
    } cases[] = {
        {m_negative, "negative"},
        {m_too_large, "above"},
        {m_empty_name, "empty resource name"},
        {m_unknown_type, "unknown value type"},
        {m_overlap, "overlapping ranges"},
        {m_overlap_unsorted, "overlapping ranges"},
        {m_inverted, "begin > end"},
        {m_uncoalesced, "not sorted and coalesced"},
        {m_dup_items, "duplicate set item"},
        {m_revocable_reserved, "revocable resources cannot be reserved"},
        {m_revocable_disk, "revocable resources cannot have disk"},
        {m_volume_unreserved, "is not reserved"},
        {m_volume_without_volume, "without a volume"},
        {m_volume_without_path, "container_path"},
        {m_disk_on_cpus, "not named disk"},
        {m_shared_not_volume, "only persistent volumes can be shared"},
        {m_shared_zero, "no copies"},
        {m_not_refinement, "is not a refinement"},
        {m_same_role_refinement, "is not a refinement"},
        {m_prefix_not_child, "is not a refinement"},
        {m_second_static, "cannot be STATIC"},
        {m_star_in_stack, "role \"*\" cannot be reserved"},
        {m_bad_role, "adjacent slashes"},
        {m_unknown_resv_type, "unknown type"},
        {m_block_with_root, "cannot have a root"},
        {m_bad_alloc_role, "allocation role"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct resource r;
        res_init_scalar(&r, "cpus", 1000);
        char err[256] = "";
        ck_assert_int_eq(res_validate(&r, err, sizeof(err)), 0);
        cases[i].fn(&r);
        ck_assert_msg(res_validate(&r, err, sizeof(err)) == -1,
                      "case %zu ('%s') validated", i, cases[i].reason);
        ck_assert_msg(strstr(err, cases[i].reason) != NULL,
                      "case %zu: reason '%s' lacks '%s'", i, err,
                      cases[i].reason);
        res_clear(&r);
    }
}
END_TEST

START_TEST(validate_accepts_valid_shapes)
{
    struct resource r;
    char err[256];
    make_volume(&r, "v1", 1000, "eng");
    res_push_reservation(&r, RES_RESV_DYNAMIC, "eng/web", "p", NULL, 0);
    r.shared = true;
    r.shared_count = 2;
    ck_assert_msg(res_validate(&r, err, sizeof(err)) == 0, "%s", err);
    res_clear(&r);

    res_init_scalar(&r, "cpus", 0);
    r.revocable = true;
    r.alloc_role = strdup("eng/web");
    ck_assert_msg(res_validate(&r, err, sizeof(err)) == 0, "%s", err);
    res_clear(&r);
}
END_TEST

START_TEST(validate_list_names_index)
{
    res_list l = RES_LIST_INIT;
    add_scalar(&l, "cpus", 1);
    add_scalar(&l, "mem", 1);
    l.v[1].scalar = -5;
    char err[256];
    ck_assert_int_eq(res_list_validate(&l, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "resource 1") != NULL, "%s", err);
    l.v[1].scalar = 5;
    ck_assert_int_eq(res_list_validate(&l, err, sizeof(err)), 0);
    res_list_clear(&l);
}
END_TEST

/* ---- roles -------------------------------------------------------------- */

START_TEST(role_validate_table)
{
    static const struct {
        const char *role;
        int ok;
    } cases[] = {
        {"*", 1},     {"eng", 1},   {"eng/web", 1}, {"a/b/c", 1}, {"a-b", 1},
        {"a.b", 1},   {"..a", 1},   {"a_b:c", 1},   {"", 0},      {".", 0},
        {"..", 0},    {"a/./b", 0}, {"a/..", 0},    {"../a", 0},  {"/a", 0},
        {"a/", 0},    {"a//b", 0},  {"a b", 0},     {"a\tb", 0},  {"a\nb", 0},
        {"a\x7f", 0}, {"a\\b", 0},  {"-a", 0},      {"a/-b", 0},  {"a/*", 0},
        {"*/a", 0},   {"\x01", 0},  {"/", 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char err[128] = "";
        int rc = res_role_validate(cases[i].role, err, sizeof(err));
        ck_assert_msg((rc == 0) == cases[i].ok, "role %zu '%s': rc %d (%s)", i,
                      cases[i].role, rc, err);
        if (rc != 0)
            ck_assert_msg(err[0] != '\0', "role %zu: no reason", i);
    }
    char err[64];
    ck_assert_int_eq(res_role_validate(NULL, err, sizeof(err)), -1);
}
END_TEST

START_TEST(role_subrole_table)
{
    ck_assert(res_role_is_subrole("a", "a"));
    ck_assert(res_role_is_subrole("a/b", "a"));
    ck_assert(res_role_is_subrole("a/b/c", "a"));
    ck_assert(res_role_is_subrole("anything", "*"));
    ck_assert(!res_role_is_subrole("ab", "a"));
    ck_assert(!res_role_is_subrole("a", "a/b"));
    ck_assert(!res_role_is_subrole("*", "a"));
    ck_assert(!res_role_is_subrole("b/a", "a"));
}
END_TEST

START_TEST(allocatable_to_hierarchical_roles)
{
    struct resource r;
    res_init_scalar(&r, "cpus", 1000);
    ck_assert(res_is_allocatable_to(&r, "anyone"));
    res_push_reservation(&r, RES_RESV_STATIC, "eng", NULL, NULL, 0);
    ck_assert(res_is_allocatable_to(&r, "eng"));
    ck_assert(res_is_allocatable_to(&r, "eng/web"));
    ck_assert(res_is_allocatable_to(&r, "eng/web/x"));
    ck_assert(!res_is_allocatable_to(&r, "engine"));
    ck_assert(!res_is_allocatable_to(&r, "ops"));
    ck_assert(!res_is_allocatable_to(&r, "*"));
    res_push_reservation(&r, RES_RESV_DYNAMIC, "eng/web", "p", NULL, 0);
    ck_assert(!res_is_allocatable_to(&r, "eng"));
    ck_assert(res_is_allocatable_to(&r, "eng/web"));
    ck_assert(res_is_allocatable_to(&r, "eng/web/batch"));
    ck_assert(!res_is_allocatable_to(&r, "eng/webx"));
    res_clear(&r);
}
END_TEST

START_TEST(reservation_predicates)
{
    struct resource r;
    res_init_scalar(&r, "cpus", 1000);
    ck_assert_str_eq(res_reservation_role(&r), "*");
    ck_assert(res_is_unreserved(&r));
    ck_assert(!res_is_reserved(&r, NULL));
    ck_assert(!res_is_dynamically_reserved(&r));
    res_push_reservation(&r, RES_RESV_STATIC, "eng", NULL, NULL, 0);
    ck_assert(res_is_reserved(&r, NULL));
    ck_assert(res_is_reserved(&r, "eng"));
    ck_assert(!res_is_reserved(&r, "eng/web"));
    ck_assert(!res_is_dynamically_reserved(&r));
    res_push_reservation(&r, RES_RESV_DYNAMIC, "eng/web", NULL, NULL, 0);
    ck_assert_str_eq(res_reservation_role(&r), "eng/web");
    ck_assert(res_is_reserved(&r, "eng/web"));
    ck_assert(!res_is_reserved(&r, "eng"));
    ck_assert(res_is_dynamically_reserved(&r));
    ck_assert(!res_is_persistent_volume(&r));
    res_clear(&r);
}
END_TEST

/* ---- atomic and shared ------------------------------------------------------
 */

START_TEST(shared_volumes_are_counted)
{
    struct resource v;
    make_volume(&v, "v1", 5000, "eng");
    v.shared = true;
    v.shared_count = 1;
    res_list l = RES_LIST_INIT;
    res_list_add(&l, &v);
    res_list_add(&l, &v);
    res_list_add(&l, &v);
    ck_assert_uint_eq(l.n, 1);
    ck_assert_uint_eq(l.v[0].shared_count, 3);
    ck_assert_int_eq(l.v[0].scalar, 5000);

    /* contains compares counts */
    struct resource two;
    res_copy(&two, &v);
    two.shared_count = 2;
    ck_assert(res_list_contains_one(&l, &two));
    two.shared_count = 4;
    ck_assert(!res_list_contains_one(&l, &two));

    /* a different size is a different volume copy: not merged */
    struct resource other;
    res_copy(&other, &v);
    other.scalar = 6000;
    res_list_add(&l, &other);
    ck_assert_uint_eq(l.n, 2);

    /* subtraction takes copies away, then the entry */
    res_list_sub(&l, &v);
    ck_assert_uint_eq(l.v[0].shared_count, 2);
    two.shared_count = 2;
    res_list_sub(&l, &two);
    ck_assert_uint_eq(l.n, 1);
    ck_assert_int_eq(l.v[0].scalar, 6000);

    /* shared and non-shared never mix */
    struct resource plain;
    res_copy(&plain, &other);
    plain.shared = false;
    plain.shared_count = 0;
    ck_assert(!res_list_contains_one(&l, &plain));
    res_list_sub(&l, &plain);
    ck_assert_uint_eq(l.n, 1);

    res_clear(&v);
    res_clear(&two);
    res_clear(&other);
    res_clear(&plain);
    res_list_clear(&l);
}
END_TEST

START_TEST(atomic_volumes_not_merged)
{
    struct resource v;
    make_volume(&v, "v1", 5000, "eng");
    res_list l = RES_LIST_INIT;
    res_list_add(&l, &v);
    res_list_add(&l, &v);
    ck_assert_uint_eq(l.n, 2);
    ck_assert_int_eq(res_list_scalar(&l, "disk"), 10000);

    /* a part of a volume is neither contained nor taken away */
    struct resource part;
    res_copy(&part, &v);
    part.scalar = 1000;
    ck_assert(!res_list_contains_one(&l, &part));
    res_list_sub(&l, &part);
    ck_assert_uint_eq(l.n, 2);
    ck_assert_int_eq(res_list_scalar(&l, "disk"), 10000);

    /* the volume's use (container path) is not part of its identity */
    struct resource elsewhere;
    res_copy(&elsewhere, &v);
    free(elsewhere.disk->container_path);
    elsewhere.disk->container_path = strdup("other");
    ck_assert(res_same_identity(&v, &elsewhere));
    ck_assert(res_list_contains_one(&l, &elsewhere));

    /* a list holding two copies is contained only by lists with two */
    res_list one = RES_LIST_INIT;
    res_list_add(&one, &v);
    ck_assert(res_list_contains(&l, &one));
    ck_assert(!res_list_contains(&one, &l));
    ck_assert(!res_list_equal(&one, &l));

    res_list_sub(&l, &v);
    ck_assert_uint_eq(l.n, 1);
    ck_assert(res_list_equal(&one, &l));

    res_clear(&v);
    res_clear(&part);
    res_clear(&elsewhere);
    res_list_clear(&one);
    res_list_clear(&l);
}
END_TEST

START_TEST(mount_disks_atomic_path_disks_merge)
{
    struct resource m;
    res_init_scalar(&m, "disk", 1000);
    m.disk = calloc(1, sizeof(*m.disk));
    m.disk->source = RES_DISK_SOURCE_MOUNT;
    m.disk->source_root = strdup("/mnt/a");
    res_list l = RES_LIST_INIT;
    res_list_add(&l, &m);
    res_list_add(&l, &m);
    ck_assert_uint_eq(l.n, 2);
    struct resource half;
    res_copy(&half, &m);
    half.scalar = 500;
    ck_assert(!res_list_contains_one(&l, &half));
    res_list_clear(&l);
    res_clear(&half);

    m.disk->source = RES_DISK_SOURCE_PATH;
    res_list_add(&l, &m);
    res_list_add(&l, &m);
    ck_assert_uint_eq(l.n, 1);
    ck_assert_int_eq(l.v[0].scalar, 2000);

    /* RAW without id merges, RAW with an id does not */
    res_list_clear(&l);
    free(m.disk->source_root);
    m.disk->source_root = NULL;
    m.disk->source = RES_DISK_SOURCE_RAW;
    res_list_add(&l, &m);
    res_list_add(&l, &m);
    ck_assert_uint_eq(l.n, 1);
    res_list_clear(&l);
    m.disk->source_id = strdup("vol-1");
    res_list_add(&l, &m);
    res_list_add(&l, &m);
    ck_assert_uint_eq(l.n, 2);

    res_clear(&m);
    res_list_clear(&l);
}
END_TEST

/* ---- arithmetic tables ------------------------------------------------------
 */

START_TEST(add_merges_by_identity)
{
    res_list l = parse_ok("cpus:1;cpus(eng):2;mem:3", NULL);
    add_scalar(&l, "cpus", 500);
    ck_assert_uint_eq(l.n, 3);
    ck_assert_int_eq(res_list_scalar(&l, "cpus"), 3500);

    struct resource z;
    res_init_scalar(&z, "gpus", 0);
    res_list_add(&l, &z);
    ck_assert_uint_eq(l.n, 3); /* empty: no-op */
    res_clear(&z);

    struct resource dyn;
    res_init_scalar(&dyn, "cpus", 1000);
    res_push_reservation(&dyn, RES_RESV_DYNAMIC, "eng", "p1", NULL, 0);
    res_list_add(&l, &dyn);
    ck_assert_uint_eq(l.n, 4);
    free(dyn.resv[0].principal);
    dyn.resv[0].principal = strdup("p2");
    res_list_add(&l, &dyn);
    ck_assert_uint_eq(l.n, 5); /* a different principal: a different entry */
    res_clear(&dyn);
    res_list_clear(&l);
}
END_TEST

START_TEST(labels_compare_without_order)
{
    struct res_label ab[] = {{"a", "1"}, {"b", NULL}};
    struct res_label ba[] = {{"b", NULL}, {"a", "1"}};
    struct res_label ab2[] = {{"a", "1"}, {"b", ""}};
    struct resource x, y, z;
    res_init_scalar(&x, "cpus", 1000);
    res_init_scalar(&y, "cpus", 1000);
    res_init_scalar(&z, "cpus", 1000);
    res_push_reservation(&x, RES_RESV_DYNAMIC, "eng", NULL, ab, 2);
    res_push_reservation(&y, RES_RESV_DYNAMIC, "eng", NULL, ba, 2);
    res_push_reservation(&z, RES_RESV_DYNAMIC, "eng", NULL, ab2, 2);
    ck_assert(res_same_identity(&x, &y));
    ck_assert(!res_same_identity(&x, &z));
    res_clear(&x);
    res_clear(&y);
    res_clear(&z);
}
END_TEST

START_TEST(ranges_and_sets_arithmetic)
{
    res_list l = parse_ok("ports:[1-10,20-30];zones:{a,b,c}", NULL);
    res_list part = parse_ok("ports:[5-6,30-30];zones:{b}", NULL);
    ck_assert(res_list_contains(&l, &part));
    res_list_sub_all(&l, &part);
    char *text = res_list_render(&l);
    ck_assert_str_eq(text, "ports:[1-4,7-10,20-29];zones:{a,c}");
    free(text);
    ck_assert(!res_list_contains(&l, &part));
    res_list_add_all(&l, &part);
    text = res_list_render(&l);
    ck_assert_str_eq(text, "ports:[1-10,20-30];zones:{a,b,c}");
    free(text);
    res_list_clear(&l);
    res_list_clear(&part);
}
END_TEST

START_TEST(ranges_subtract_beyond_is_partial)
{
    res_list l = parse_ok("ports:[1-10]", NULL);
    res_list more = parse_ok("ports:[5-20]", NULL);
    ck_assert(!res_list_contains(&l, &more));
    res_list_sub_all(&l, &more);
    char *text = res_list_render(&l);
    ck_assert_str_eq(text, "ports:[1-4]");
    free(text);
    res_list_sub_all(&l, &l);
    ck_assert(res_list_is_empty(&l));
    res_list_clear(&more);
}
END_TEST

START_TEST(ranges_extremes)
{
    struct res_range all = {0, UINT64_MAX};
    ck_assert_uint_eq(res_ranges_count(&all, 1), UINT64_MAX);
    struct res_range v[] = {{10, UINT64_MAX}, {0, 9}, {5, 5}};
    ck_assert_uint_eq(res_ranges_normalize(v, 3), 1);
    ck_assert_uint_eq(v[0].begin, 0);
    ck_assert_uint_eq(v[0].end, UINT64_MAX);
    struct res_range bad[] = {{9, 3}, {1, 2}};
    ck_assert_uint_eq(res_ranges_normalize(bad, 2), 1);
    ck_assert_uint_eq(bad[0].begin, 1);

    res_list l = RES_LIST_INIT;
    struct resource r;
    struct res_range top = {UINT64_MAX - 1, UINT64_MAX};
    res_init_ranges(&r, "ports", &top, 1);
    res_list_add(&l, &r);
    res_clear(&r);
    struct res_range low = {0, UINT64_MAX - 2};
    res_init_ranges(&r, "ports", &low, 1);
    res_list_add(&l, &r);
    ck_assert_uint_eq(l.v[0].nranges, 1);
    ck_assert_uint_eq(l.v[0].ranges[0].end, UINT64_MAX);
    res_list_sub(&l, &r);
    ck_assert_uint_eq(l.v[0].ranges[0].begin, UINT64_MAX - 1);
    res_clear(&r);
    res_list_clear(&l);
}
END_TEST

START_TEST(contains_respects_reservations_and_allocation)
{
    res_list l = parse_ok("cpus:4;cpus(eng):2", NULL);
    res_list want = parse_ok("cpus(eng):1", NULL);
    ck_assert(res_list_contains(&l, &want));
    res_list_clear(&want);
    want = parse_ok("cpus(eng):3", NULL);
    ck_assert(!res_list_contains(&l, &want)); /* unreserved doesn't count */
    res_list_clear(&want);
    want = parse_ok("cpus(ops):1", NULL);
    ck_assert(!res_list_contains(&l, &want));
    res_list_clear(&want);

    /* allocated resources are another identity */
    want = parse_ok("cpus:1", NULL);
    res_list_allocate(&want, "eng");
    ck_assert(!res_list_contains(&l, &want));
    res_list_allocate(&l, "eng");
    ck_assert(res_list_contains(&l, &want));
    res_list_allocate(&l, "ops");
    ck_assert(!res_list_contains(&l, &want));
    res_list_clear(&want);

    struct resource neg;
    res_init_scalar(&neg, "cpus", -1);
    neg.alloc_role = strdup("ops");
    ck_assert(!res_list_contains_one(&l, &neg));
    res_clear(&neg);
    struct resource empty;
    res_init_scalar(&empty, "nothing", 0);
    ck_assert(res_list_contains_one(&l, &empty));
    res_clear(&empty);

    res_list_clear(&l);
}
END_TEST

START_TEST(allocate_merges_and_clears)
{
    res_list l = RES_LIST_INIT;
    struct resource r;
    res_init_scalar(&r, "cpus", 1000);
    res_list_add(&l, &r);
    r.alloc_role = strdup("a");
    res_list_add(&l, &r);
    free(r.alloc_role);
    r.alloc_role = strdup("b");
    res_list_add(&l, &r);
    res_clear(&r);
    struct res_range p = {1, 5};
    res_init_ranges(&r, "ports", &p, 1);
    r.alloc_role = strdup("a");
    res_list_add(&l, &r);
    res_clear(&r);
    p = (struct res_range){6, 9};
    res_init_ranges(&r, "ports", &p, 1);
    res_list_add(&l, &r);
    res_clear(&r);
    ck_assert_uint_eq(l.n, 5);

    res_list_allocate(&l, "c");
    ck_assert_uint_eq(l.n, 2);
    ck_assert_int_eq(find(&l, "cpus")->scalar, 3000);
    ck_assert_str_eq(find(&l, "cpus")->alloc_role, "c");
    ck_assert_uint_eq(find(&l, "ports")->nranges, 1);
    ck_assert_uint_eq(find(&l, "ports")->ranges[0].end, 9);

    res_list_allocate(&l, NULL);
    ck_assert_ptr_null(l.v[0].alloc_role);
    ck_assert_ptr_null(l.v[1].alloc_role);
    res_list_clear(&l);
}
END_TEST

static bool is_cpus(const struct resource *r, const void *arg)
{
    (void)arg;
    return strcmp(r->name, "cpus") == 0;
}

START_TEST(filter_copies_matching)
{
    res_list l = parse_ok("cpus:1;mem:2;cpus(eng):3", NULL);
    res_list out = RES_LIST_INIT;
    res_list_filter(&l, is_cpus, NULL, &out);
    ck_assert_uint_eq(out.n, 2);
    ck_assert_int_eq(res_list_scalar(&out, "cpus"), 4000);
    ck_assert_uint_eq(l.n, 3);
    res_list_clear(&l);
    res_list_clear(&out);
}
END_TEST

START_TEST(copy_and_add_self)
{
    res_list l = parse_ok("cpus:1;ports:[1-3]", NULL);
    struct resource v;
    make_volume(&v, "v1", 1000, "eng");
    res_list_add(&l, &v);
    res_clear(&v);
    res_list c = RES_LIST_INIT;
    res_list_copy(&c, &l);
    ck_assert(res_list_equal(&c, &l));
    res_list_add_all(&l, &l);
    ck_assert_int_eq(res_list_scalar(&l, "cpus"), 2000);
    ck_assert_int_eq(res_list_scalar(&l, "disk"), 2000);
    ck_assert_uint_eq(l.n, 4);
    res_list_copy(&l, &c);
    ck_assert(res_list_equal(&c, &l));
    res_list_clear(&c);
    res_list_clear(&l);
}
END_TEST

/* ---- rendering ------------------------------------------------------------
 */

START_TEST(render_format)
{
    res_list l = parse_ok("cpus:4;mem:1024.5;disk(role1):100;"
                          "ports:[31000-32000];cpus(r):0.001;zones:{b,a}",
                          NULL);
    char *text = res_list_render(&l);
    ck_assert_str_eq(text, "cpus:4;mem:1024.5;disk(role1):100;"
                           "ports:[31000-32000];cpus(r):0.001;zones:{a,b}");
    free(text);
    res_list_clear(&l);

    text = res_list_render(&l);
    ck_assert_str_eq(text, "");
    free(text);

    struct resource v;
    make_volume(&v, "v1", 10000, "eng");
    free(v.resv[0].role);
    v.resv[0].role = strdup("eng");
    v.resv[0].type = RES_RESV_DYNAMIC;
    v.resv[0].principal = strdup("ops");
    text = res_render(&v);
    ck_assert_str_eq(text, "disk(reservations: [(DYNAMIC,eng,ops)])"
                           "{persistence:v1,volume:data:rw}:10");
    free(text);
    v.shared = true;
    v.shared_count = 2;
    v.alloc_role = strdup("eng/web");
    struct res_label lab = {"k", "v"};
    res_push_reservation(&v, RES_RESV_DYNAMIC, "eng/web", NULL, &lab, 1);
    text = res_render(&v);
    ck_assert_str_eq(text, "disk(allocated: eng/web)(reservations: "
                           "[(DYNAMIC,eng,ops),(DYNAMIC,eng/web,{k: v})])"
                           "{persistence:v1,volume:data:rw}<SHARED>:10<2>");
    free(text);
    res_clear(&v);

    struct resource c;
    res_init_scalar(&c, "cpus", 1500);
    c.revocable = true;
    text = res_render(&c);
    ck_assert_str_eq(text, "cpus{REV}:1.5");
    free(text);
    res_clear(&c);
}
END_TEST

/* ---- reservations, volumes and an agent's total ------------------------- */

/* A dynamically reserved persistent volume of milli disk, reserved to role. */
static void make_dynamic_volume(struct resource *r, const char *id,
                                int64_t milli, const char *role)
{
    res_init_scalar(r, "disk", milli);
    res_push_reservation(r, RES_RESV_DYNAMIC, role, "ops", NULL, 0);
    r->disk = calloc(1, sizeof(*r->disk));
    r->disk->persistence_id = strdup(id);
    r->disk->persistence_principal = strdup("ops");
    r->disk->has_volume = true;
    r->disk->volume_mode = RES_VOLUME_RW;
    r->disk->container_path = strdup("data");
}

START_TEST(drop_volume_of_default_disk)
{
    struct resource v, want;
    make_dynamic_volume(&v, "v1", 64000, "eng");
    v.shared = true;
    v.shared_count = 1;
    res_drop_volume(&v);
    ck_assert_ptr_null(v.disk);
    ck_assert(!v.shared);
    ck_assert_uint_eq(v.shared_count, 0);
    res_init_scalar(&want, "disk", 64000);
    res_push_reservation(&want, RES_RESV_DYNAMIC, "eng", "ops", NULL, 0);
    ck_assert(res_same_identity(&v, &want));
    ck_assert_int_eq(v.scalar, want.scalar);
    res_clear(&v);
    res_clear(&want);
}
END_TEST

START_TEST(drop_volume_keeps_the_source)
{
    struct resource v;
    make_dynamic_volume(&v, "v1", 64000, "eng");
    v.disk->source = RES_DISK_SOURCE_MOUNT;
    v.disk->source_root = strdup("/mnt/d1");
    v.disk->source_id = strdup("d1");
    res_drop_volume(&v);
    ck_assert_ptr_nonnull(v.disk);
    ck_assert(!res_is_persistent_volume(&v));
    ck_assert(!v.disk->has_volume);
    ck_assert_ptr_null(v.disk->persistence_principal);
    ck_assert_ptr_null(v.disk->container_path);
    ck_assert_ptr_null(v.disk->host_path);
    ck_assert_int_eq(v.disk->source, RES_DISK_SOURCE_MOUNT);
    ck_assert_str_eq(v.disk->source_root, "/mnt/d1");
    ck_assert_str_eq(v.disk->source_id, "d1");
    res_clear(&v);
}
END_TEST

START_TEST(drop_volume_of_other_resources_changes_nothing)
{
    res_list l = parse_ok("cpus(eng):2;disk:10", NULL);
    res_list before = RES_LIST_INIT;
    res_list_copy(&before, &l);
    for (uint32_t i = 0; i < l.n; i++)
        res_drop_volume(&l.v[i]);
    ck_assert(res_list_equal(&l, &before));
    res_list_clear(&l);
    res_list_clear(&before);
}
END_TEST

START_TEST(pop_reservation_pops_the_top)
{
    struct resource r;
    res_init_scalar(&r, "cpus", 1000);
    res_push_reservation(&r, RES_RESV_STATIC, "eng", NULL, NULL, 0);
    struct res_label label = {"k", "v"};
    res_push_reservation(&r, RES_RESV_DYNAMIC, "eng/web", "ops", &label, 1);
    ck_assert_str_eq(res_reservation_role(&r), "eng/web");
    res_pop_reservation(&r);
    ck_assert_uint_eq(r.nresv, 1);
    ck_assert_str_eq(res_reservation_role(&r), "eng");
    res_pop_reservation(&r);
    ck_assert(res_is_unreserved(&r));
    res_pop_reservation(&r); /* unreserved: nothing */
    ck_assert(res_is_unreserved(&r));
    ck_assert_int_eq(r.scalar, 1000);
    res_clear(&r);
}
END_TEST

/* The checkpoint of an agent: one CPU reserved to eng, and a volume made
 * from 64 MB of disk reserved to eng; allocated as offers carry them. */
static res_list checkpointed(void)
{
    res_list ckpt = RES_LIST_INIT;
    struct resource r;
    res_init_scalar(&r, "cpus", 1000);
    res_push_reservation(&r, RES_RESV_DYNAMIC, "eng", "ops", NULL, 0);
    res_list_add(&ckpt, &r);
    res_clear(&r);
    make_dynamic_volume(&r, "v1", 64000, "eng");
    res_list_add(&ckpt, &r);
    res_clear(&r);
    res_list_allocate(&ckpt, "eng");
    return ckpt;
}

static bool unreserved_pred(const struct resource *r, const void *arg)
{
    (void)arg;
    return res_is_unreserved(r);
}

START_TEST(agent_total_replaces_the_bases)
{
    res_list stat = parse_ok("cpus:4;mem:1024;disk:1000", NULL);
    res_list ckpt = checkpointed();
    res_list total = parse_ok("gpus:1", NULL); /* replaced */
    char err[256] = "";
    ck_assert_int_eq(res_agent_total(&stat, &ckpt, &total, err, sizeof(err)),
                     0);
    /* The sums are the static ones; the reservation and the volume replace
     * what they were made of. */
    ck_assert_int_eq(res_list_scalar(&total, "cpus"), 4000);
    ck_assert_int_eq(res_list_scalar(&total, "mem"), 1024000);
    ck_assert_int_eq(res_list_scalar(&total, "disk"), 1000000);
    ck_assert_int_eq(res_list_scalar(&total, "gpus"), 0);
    ck_assert(res_list_contains(&total, &ckpt));
    res_list unreserved = RES_LIST_INIT;
    res_list_filter(&total, unreserved_pred, NULL, &unreserved);
    ck_assert_int_eq(res_list_scalar(&unreserved, "cpus"), 3000);
    ck_assert_int_eq(res_list_scalar(&unreserved, "disk"), 936000);
    res_list_clear(&unreserved);
    /* Nothing checkpointed: the static resources. */
    res_list none = RES_LIST_INIT;
    ck_assert_int_eq(res_agent_total(&stat, &none, &total, err, sizeof(err)),
                     0);
    ck_assert(res_list_equal(&total, &stat));
    res_list_clear(&stat);
    res_list_clear(&ckpt);
    res_list_clear(&total);
}
END_TEST

START_TEST(agent_total_when_the_checkpoint_does_not_fit)
{
    res_list small = parse_ok("cpus:0.5;disk:10", NULL);
    res_list ckpt = checkpointed();
    res_list total = RES_LIST_INIT;
    char err[256] = "";
    ck_assert_int_eq(res_agent_total(&small, &ckpt, &total, err, sizeof(err)),
                     -1);
    ck_assert(res_list_equal(&total, &small));
    ck_assert_str_eq(err, "the checkpointed resources do not fit the agent's "
                          "resources");
    /* A reserved static resource is not a base for an unreserved one. */
    res_list reserved = parse_ok("cpus(ops):4;disk(ops):1000", NULL);
    ck_assert_int_eq(res_agent_total(&reserved, &ckpt, &total, NULL, 0), -1);
    ck_assert(res_list_equal(&total, &reserved));
    res_list_clear(&small);
    res_list_clear(&reserved);
    res_list_clear(&ckpt);
    res_list_clear(&total);
}
END_TEST

static Suite *resources_suite(void)
{
    Suite *s = suite_create("resources");
    TCase *laws = tcase_create("laws");
    tcase_add_test(laws, law_add_then_sub_is_identity);
    tcase_add_test(laws, law_sum_contains_parts);
    tcase_add_test(laws, law_flatten_keeps_scalar_totals);
    tcase_add_test(laws, law_equal_is_symmetric);
    tcase_add_test(laws, law_render_parse_round_trip);
    tcase_add_test(laws, law_ranges_normalize);
    tcase_add_test(laws, law_ranges_arithmetic_matches_bitmap);
    tcase_add_test(laws, law_set_arithmetic_matches_bitmap);
    tcase_add_test(laws, law_subtraction_saturates);
    tcase_add_test(laws, law_tenth_added_and_removed_is_exact);
    suite_add_tcase(s, laws);

    TCase *parse = tcase_create("parse");
    tcase_add_test(parse, scalar_from_double_table);
    tcase_add_test(parse, parse_mesos_example);
    tcase_add_test(parse, parse_whitespace_and_empty_entries);
    tcase_add_test(parse, parse_default_role);
    tcase_add_test(parse, parse_merges_and_appends);
    tcase_add_test(parse, parse_sets_and_empty_values);
    tcase_add_test(parse, parse_errors_table);
    suite_add_tcase(s, parse);

    TCase *valid = tcase_create("validate");
    tcase_add_test(valid, validate_errors_table);
    tcase_add_test(valid, validate_accepts_valid_shapes);
    tcase_add_test(valid, validate_list_names_index);
    tcase_add_test(valid, role_validate_table);
    tcase_add_test(valid, role_subrole_table);
    tcase_add_test(valid, allocatable_to_hierarchical_roles);
    tcase_add_test(valid, reservation_predicates);
    suite_add_tcase(s, valid);

    TCase *arith = tcase_create("arithmetic");
    tcase_add_test(arith, shared_volumes_are_counted);
    tcase_add_test(arith, atomic_volumes_not_merged);
    tcase_add_test(arith, mount_disks_atomic_path_disks_merge);
    tcase_add_test(arith, add_merges_by_identity);
    tcase_add_test(arith, labels_compare_without_order);
    tcase_add_test(arith, ranges_and_sets_arithmetic);
    tcase_add_test(arith, ranges_subtract_beyond_is_partial);
    tcase_add_test(arith, ranges_extremes);
    tcase_add_test(arith, contains_respects_reservations_and_allocation);
    tcase_add_test(arith, allocate_merges_and_clears);
    tcase_add_test(arith, filter_copies_matching);
    tcase_add_test(arith, copy_and_add_self);
    tcase_add_test(arith, render_format);
    suite_add_tcase(s, arith);

    TCase *agent = tcase_create("agent_total");
    tcase_add_test(agent, drop_volume_of_default_disk);
    tcase_add_test(agent, drop_volume_keeps_the_source);
    tcase_add_test(agent, drop_volume_of_other_resources_changes_nothing);
    tcase_add_test(agent, pop_reservation_pops_the_top);
    tcase_add_test(agent, agent_total_replaces_the_bases);
    tcase_add_test(agent, agent_total_when_the_checkpoint_does_not_fit);
    suite_add_tcase(s, agent);
    return s;
}

OFFERD_CHECK_MAIN(resources_suite)
