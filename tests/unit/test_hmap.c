/*
 * Tests of common/hmap: basic operations, random puts and deletes checked
 * against a plain array model (deletion by backward shift is the part that
 * breaks quietly), and 100,000 ids crafted to collide under the unkeyed hash
 * hmap used before SipHash, which must cost linear work now.
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "common/hmap.h"
#include "common/hmap_private.h"
#include "common/siphash_private.h"

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

/* ---- Ids crafted against the old hash ----------------------------------
 *
 * Before SipHash, hmap hashed a key with FNV-1a 64 followed by a finalizer
 * (old_hash below) and took the home slot from the low bits of the result,
 * h & (cap - 1). The finalizer folds the high half into the low bits, so
 * the home slot depends on all 64 bits of the FNV state: ids that share it
 * must share the whole state. Such ids are cheap to make all the same.
 *
 * One FNV-1a step is h = (h ^ b) * P. As b < 256, h ^ b = h + delta with
 * delta = (l ^ b) - l, where l is the low byte of h, and that low byte
 * evolves on its own (l = ((l ^ b) * P) mod 256). So n bytes take h to
 * h * P^n + sum(delta_i * P^(n - i)), and two n-byte blocks read from the
 * same state end in the same state exactly when their deltas differ by a
 * vector d with sum(d_i * P^(n - 1 - i)) = 0 mod 2^64. Those vectors form a
 * lattice; lattice reduction (LLL, done once, offline) gives the short one
 * in CRAFT_D, with entries small enough that both blocks can be spelt in
 * the id characters [A-Za-z0-9_-]. A depth-first search picks the first
 * block's characters; each of the second's is then forced (its delta is the
 * first's minus d_i) and must land in the alphabet too.
 *
 * With one such pair of blocks per position and 17 positions in a row
 * (Joux's multicollision), every one of the 2^17 ways to choose a block at
 * each position gives the same final state: 131,072 distinct 153-byte ids
 * with one old hash. The old hmap put them all in one probe chain: n
 * inserts cost n^2/2 = 5 * 10^9 probes, each with a strcmp, as the stored
 * hashes are equal too. */

#define CRAFT_BLOCK  9  /* bytes per block */
#define CRAFT_BLOCKS 17 /* 2^17 ids >= CRAFT_IDS */
#define CRAFT_IDS    100000
#define CRAFT_LEN    (CRAFT_BLOCK * CRAFT_BLOCKS)

static const uint64_t FNV_BASIS = 1469598103934665603ULL;
static const uint64_t FNV_PRIME = 1099511628211ULL;
static const int CRAFT_D[CRAFT_BLOCK] = {52, 0, 12, 32, 45, -10, -22, -49, 58};
static const char CRAFT_ALPHABET[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";

static uint64_t old_fnv1a(uint64_t h, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)p[i];
        h *= FNV_PRIME;
    }
    return h;
}

/* hash_key() of hmap.c before SipHash. */
static uint64_t old_hash(const char *s)
{
    uint64_t h = old_fnv1a(FNV_BASIS, s, strlen(s));
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

static bool in_alphabet(int c)
{
    return c > 0 && strchr(CRAFT_ALPHABET, c) != NULL;
}

/* Spell blocks a and b from position i on, the state's low bytes being la
 * (after a's first i bytes) and lb (after b's). */
static bool craft_pair(int i, unsigned la, unsigned lb, char *a, char *b)
{
    if (i == CRAFT_BLOCK)
        return true;
    for (const char *c = CRAFT_ALPHABET; *c != '\0'; c++) {
        int xa = (int)(la ^ (unsigned char)*c); /* l ^ byte */
        int xb = xa - (int)la - CRAFT_D[i] + (int)lb;
        if (xb < 0 || xb > 255 || !in_alphabet(xb ^ (int)lb))
            continue;
        a[i] = *c;
        b[i] = (char)(xb ^ (int)lb);
        if (craft_pair(i + 1, ((unsigned)xa * FNV_PRIME) & 0xff,
                       ((unsigned)xb * FNV_PRIME) & 0xff, a, b))
            return true;
    }
    return false;
}

/* Fill ids (CRAFT_IDS strings of CRAFT_LEN + 1 bytes) with ids that share
 * one FNV-1a state; checks each pair of blocks on the way. */
static void craft_ids(char *ids)
{
    uint64_t sum = 0;
    for (int i = 0; i < CRAFT_BLOCK; i++) {
        uint64_t w = 1;
        for (int k = i + 1; k < CRAFT_BLOCK; k++)
            w *= FNV_PRIME;
        sum += (uint64_t)(int64_t)CRAFT_D[i] * w;
    }
    ck_assert(sum == 0); /* CRAFT_D is in the lattice */

    char blocks[CRAFT_BLOCKS][2][CRAFT_BLOCK];
    uint64_t h = FNV_BASIS;
    for (int k = 0; k < CRAFT_BLOCKS; k++) {
        ck_assert(
            craft_pair(0, h & 0xff, h & 0xff, blocks[k][0], blocks[k][1]));
        ck_assert(memcmp(blocks[k][0], blocks[k][1], CRAFT_BLOCK) != 0);
        uint64_t ha = old_fnv1a(h, blocks[k][0], CRAFT_BLOCK);
        ck_assert(ha == old_fnv1a(h, blocks[k][1], CRAFT_BLOCK));
        h = ha;
    }
    for (uint32_t j = 0; j < CRAFT_IDS; j++) {
        char *id = ids + (size_t)j * (CRAFT_LEN + 1);
        for (int k = 0; k < CRAFT_BLOCKS; k++)
            memcpy(id + k * CRAFT_BLOCK, blocks[k][(j >> k) & 1], CRAFT_BLOCK);
        id[CRAFT_LEN] = '\0';
    }
}

START_TEST(test_crafted_collisions_cost_linear_probes)
{
    const struct siphash_key fixed = {0x0123456789abcdefULL,
                                      0xfedcba9876543210ULL};
    siphash_set_process_key(&fixed); /* the same probe count every run */
    char *ids = malloc((size_t)CRAFT_IDS * (CRAFT_LEN + 1));
    ck_assert_ptr_nonnull(ids);
    craft_ids(ids);

    /* They do collide under the old hash: one hash, so one home slot at
     * every table size. */
    uint64_t h0 = old_hash(ids);
    for (uint32_t j = 0; j < CRAFT_IDS; j++)
        ck_assert(old_hash(ids + (size_t)j * (CRAFT_LEN + 1)) == h0);

    /* At a load factor of at most 1/2, linear probing with a good hash
     * averages under 2.5 probes per insert and 1.5 per successful lookup;
     * growing re-places every entry once more per doubling. Measured here:
     * 2.3 probes per operation over both passes, 4.1 at worst just after a
     * doubling. The bound, twice that, is checked as the work goes, so that
     * a bad hash fails within the first thousand ids (the old one needs
     * about 500 probes per id there) rather than after 10^10 probes. */
    struct hmap *m = hmap_new();
    uint64_t before = hmap_probes();
    for (uint32_t op = 0; op < 2 * CRAFT_IDS; op++) {
        uint32_t j = op % CRAFT_IDS;
        const char *id = ids + (size_t)j * (CRAFT_LEN + 1);
        if (op < CRAFT_IDS)
            ck_assert_ptr_null(hmap_put(m, id, ids + j));
        else
            ck_assert_ptr_eq(hmap_get(m, id), ids + j);
        uint64_t probes = hmap_probes() - before;
        if (op % 1024 == 1023 || op == 2 * CRAFT_IDS - 1)
            ck_assert_msg(probes <= 8ULL * (op + 1), "%llu probes for %u ops",
                          (unsigned long long)probes, op + 1);
    }
    ck_assert_uint_eq(hmap_count(m), CRAFT_IDS); /* all distinct */
    hmap_free(m, NULL);
    free(ids);
}
END_TEST

/* An empty map holds no slots, before its first put and after its last
 * del (an agent's or a framework's maps are mostly empty); every call
 * works on it. */
START_TEST(test_empty_map_holds_no_slots)
{
    struct hmap *m = hmap_new();
    ck_assert_uint_eq(hmap_slot_bytes(m), 0);
    ck_assert_ptr_null(hmap_get(m, "a"));
    ck_assert_ptr_null(hmap_del(m, "a"));
    ck_assert_uint_eq(hmap_count(m), 0);
    size_t pos = 0;
    ck_assert(!hmap_next(m, &pos, NULL, NULL));
    ck_assert_uint_eq(hmap_slot_bytes(m), 0);
    int v = 1;
    ck_assert_ptr_null(hmap_put(m, "a", &v));
    ck_assert_uint_gt(hmap_slot_bytes(m), 0);
    ck_assert_ptr_eq(hmap_get(m, "a"), &v);
    ck_assert_ptr_null(hmap_put(m, "b", &v));
    ck_assert_ptr_eq(hmap_del(m, "a"), &v);
    ck_assert_uint_gt(hmap_slot_bytes(m), 0);
    ck_assert_ptr_eq(hmap_get(m, "b"), &v);
    ck_assert_ptr_eq(hmap_del(m, "b"), &v);
    ck_assert_ptr_null(hmap_get(m, "a"));
    ck_assert_uint_eq(hmap_slot_bytes(m), 0); /* empty again: none */
    ck_assert_ptr_null(hmap_put(m, "c", &v));
    ck_assert_ptr_eq(hmap_get(m, "c"), &v);
    hmap_free(m, NULL);
    hmap_free(hmap_new(), NULL); /* never used: nothing leaks */
}
END_TEST

/* A borrowing map keeps the caller's key pointers: no copy, none freed
 * (ASan and LSan would see a double free or a leak), and a replaced
 * value's key is the new one. */
START_TEST(test_borrowing_map_keeps_caller_keys)
{
    struct hmap *m = hmap_new_borrowing();
    char *k1 = strdup("task-1"), *k2 = strdup("task-1");
    int a = 1, b = 2;
    ck_assert_ptr_null(hmap_put(m, k1, &a));
    size_t pos = 0;
    const char *key = NULL;
    ck_assert(hmap_next(m, &pos, &key, NULL));
    ck_assert_ptr_eq(key, k1);
    ck_assert_ptr_eq(hmap_get(m, "task-1"), &a);
    /* Replaced under an equal key owned by the new value: k1 may go. */
    ck_assert_ptr_eq(hmap_put(m, k2, &b), &a);
    free(k1);
    pos = 0;
    ck_assert(hmap_next(m, &pos, &key, NULL));
    ck_assert_ptr_eq(key, k2);
    ck_assert_ptr_eq(hmap_get(m, "task-1"), &b);
    ck_assert_ptr_eq(hmap_del(m, "task-1"), &b);
    ck_assert_ptr_null(hmap_put(m, k2, &b));
    hmap_free(m, NULL);
    free(k2);
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
    tcase_add_test(tc, test_crafted_collisions_cost_linear_probes);
    tcase_add_test(tc, test_empty_map_holds_no_slots);
    tcase_add_test(tc, test_borrowing_map_keeps_caller_keys);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(hmap_suite)
