/*
 * Tests of common/hmap: basic operations, and random puts and deletes
 * checked against a plain array model (deletion by backward shift is the
 * part that breaks quietly).
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "common/hmap.h"

START_TEST(test_put_get_del)
{
    struct hmap *m = hmap_new();
    int a = 1, b = 2, c = 3;
    ck_assert_ptr_null(hmap_get(m, "x"));
    ck_assert_ptr_null(hmap_put(m, "x", &a));
    ck_assert_ptr_null(hmap_put(m, "y", &b));
    ck_assert_ptr_eq(hmap_get(m, "x"), &a);
    ck_assert_ptr_eq(hmap_put(m, "x", &c), &a); /* replaced */
    ck_assert_ptr_eq(hmap_get(m, "x"), &c);
    ck_assert_uint_eq(hmap_count(m), 2);
    ck_assert_ptr_eq(hmap_del(m, "x"), &c);
    ck_assert_ptr_null(hmap_del(m, "x"));
    ck_assert_ptr_null(hmap_get(m, "x"));
    ck_assert_ptr_eq(hmap_get(m, "y"), &b);
    ck_assert_uint_eq(hmap_count(m), 1);
    ck_assert_ptr_null(hmap_get(m, ""));
    ck_assert_ptr_null(hmap_put(m, "", &a)); /* the empty key is a key */
    ck_assert_ptr_eq(hmap_get(m, ""), &a);
    hmap_free(m, NULL);
}
END_TEST

START_TEST(test_iteration_visits_each_once)
{
    struct hmap *m = hmap_new();
    char key[32];
    int vals[500];
    for (int i = 0; i < 500; i++) {
        vals[i] = i;
        snprintf(key, sizeof(key), "k%d", i);
        hmap_put(m, key, &vals[i]);
    }
    int seen[500] = {0};
    size_t pos = 0;
    const char *k;
    void *v;
    int n = 0;
    while (hmap_next(m, &pos, &k, &v)) {
        int i = *(int *)v;
        snprintf(key, sizeof(key), "k%d", i);
        ck_assert_str_eq(k, key);
        seen[i]++;
        n++;
    }
    ck_assert_int_eq(n, 500);
    for (int i = 0; i < 500; i++)
        ck_assert_int_eq(seen[i], 1);
    hmap_free(m, NULL);
}
END_TEST

static int freed;
static void count_free(void *v)
{
    (void)v;
    freed++;
}

START_TEST(test_free_calls_value_free)
{
    struct hmap *m = hmap_new();
    int x;
    hmap_put(m, "a", &x);
    hmap_put(m, "b", &x);
    freed = 0;
    hmap_free(m, count_free);
    ck_assert_int_eq(freed, 2);
    hmap_free(NULL, count_free);
}
END_TEST

/* Random operations over a small key space (many collisions and chains)
 * against a model array. */
START_TEST(test_random_against_model)
{
    enum { KEYS = 300, OPS = 200000 };
    uint64_t seed = 12345;
    struct hmap *m = hmap_new();
    void *model[KEYS] = {0};
    int tok[KEYS];
    char key[32];
    for (int op = 0; op < OPS; op++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        int k = (int)((seed >> 33) % KEYS);
        snprintf(key, sizeof(key), "agent-%d", k);
        if ((seed >> 20) % 3 == 0) {
            ck_assert_ptr_eq(hmap_del(m, key), model[k]);
            model[k] = NULL;
        } else {
            ck_assert_ptr_eq(hmap_put(m, key, &tok[k]), model[k]);
            model[k] = &tok[k];
        }
        if (op % 997 == 0) {
            size_t live = 0;
            for (int i = 0; i < KEYS; i++) {
                snprintf(key, sizeof(key), "agent-%d", i);
                ck_assert_ptr_eq(hmap_get(m, key), model[i]);
                live += model[i] != NULL;
            }
            ck_assert_uint_eq(hmap_count(m), live);
        }
    }
    hmap_free(m, NULL);
}
END_TEST

static Suite *hmap_suite(void)
{
    Suite *s = suite_create("hmap");
    TCase *tc = tcase_create("hmap");
    tcase_add_test(tc, test_put_get_del);
    tcase_add_test(tc, test_iteration_visits_each_once);
    tcase_add_test(tc, test_free_calls_value_free);
    tcase_add_test(tc, test_random_against_model);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(hmap_suite)
