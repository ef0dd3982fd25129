/*
 * Tests for common/recordio: framing, and the incremental decoder fed every
 * possible chunking of a stream.
 */
#include "common/recordio.h"

#include "check_main.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

/* Records collected from a decoder run. */
struct collected {
    size_t n;
    char recs[16][64];
    size_t lens[16];
    enum rio_result last; /* RIO_NEED_MORE or RIO_ERROR at the end */
};

/* Feed buf to d, handling every record, and record the outcome in out. */
static void feed_all(struct rio_decoder *d, const uint8_t *buf, size_t len,
                     struct collected *out)
{
    for (;;) {
        size_t used = 99999;
        const uint8_t *rec = NULL;
        size_t rlen = 99999;
        enum rio_result r = rio_decoder_feed(d, buf, len, &used, &rec, &rlen);
        ck_assert_uint_le(used, len);
        buf += used;
        len -= used;
        if (r != RIO_RECORD) {
            out->last = r;
            if (r == RIO_NEED_MORE)
                ck_assert_uint_eq(len, 0);
            return;
        }
        ck_assert_ptr_nonnull(rec);
        ck_assert_uint_lt(out->n, 16);
        ck_assert_uint_lt(rlen, 64);
        memcpy(out->recs[out->n], rec, rlen);
        out->lens[out->n] = rlen;
        out->n++;
    }
}

static const char stream3[] = "5\nhello0\n11\nhello world3\nabc";
static const char *const stream3_recs[] = {"hello", "", "hello world", "abc"};

static void check_stream3(const struct collected *c)
{
    ck_assert_uint_eq(c->n, 4);
    for (size_t i = 0; i < 4; i++) {
        ck_assert_uint_eq(c->lens[i], strlen(stream3_recs[i]));
        ck_assert(memcmp(c->recs[i], stream3_recs[i], c->lens[i]) == 0);
    }
    ck_assert_int_eq(c->last, RIO_NEED_MORE);
}

START_TEST(test_encode_header)
{
    uint8_t buf[RIO_HEADER_MAX];
    ck_assert_uint_eq(rio_encode_header(0, buf, sizeof(buf)), 2);
    ck_assert(memcmp(buf, "0\n", 2) == 0);
    ck_assert_uint_eq(rio_encode_header(12345, buf, sizeof(buf)), 6);
    ck_assert(memcmp(buf, "12345\n", 6) == 0);
    ck_assert_uint_eq(rio_encode_header(12345, buf, 5), 0);
}
END_TEST

START_TEST(test_encode_frame)
{
    uint8_t out[32];
    memset(out, 'x', sizeof(out));
    ck_assert_uint_eq(rio_frame_size(5), 7);
    ck_assert_uint_eq(rio_encode((const uint8_t *)"hello", 5, out, 7), 7);
    ck_assert(memcmp(out, "5\nhello", 7) == 0);
    /* Too small: nothing written. */
    memset(out, 'x', sizeof(out));
    ck_assert_uint_eq(rio_encode((const uint8_t *)"hello", 5, out, 6), 0);
    ck_assert_int_eq(out[0], 'x');
    /* Empty record. */
    ck_assert_uint_eq(rio_encode(NULL, 0, out, 2), 2);
    ck_assert(memcmp(out, "0\n", 2) == 0);
}
END_TEST

START_TEST(test_frame_alloc)
{
    size_t n = 0;
    uint8_t *f = rio_frame((const uint8_t *)"abcdefghij", 10, &n);
    ck_assert_uint_eq(n, 13);
    ck_assert(memcmp(f, "10\nabcdefghij", 13) == 0);
    free(f);
}
END_TEST

START_TEST(test_decode_one_shot)
{
    struct rio_decoder *d = rio_decoder_new(1024);
    struct collected c = {0};
    feed_all(d, (const uint8_t *)stream3, strlen(stream3), &c);
    check_stream3(&c);
    ck_assert(rio_decoder_is_idle(d));
    ck_assert_ptr_null(rio_decoder_error(d));
    rio_decoder_free(d);
}
END_TEST

/* Every split of the stream into two slices gives the same records. */
START_TEST(test_decode_every_split)
{
    size_t len = strlen(stream3);
    for (size_t split = 0; split <= len; split++) {
        struct rio_decoder *d = rio_decoder_new(1024);
        struct collected c = {0};
        feed_all(d, (const uint8_t *)stream3, split, &c);
        feed_all(d, (const uint8_t *)stream3 + split, len - split, &c);
        check_stream3(&c);
        rio_decoder_free(d);
    }
}
END_TEST

/* Every split into three slices, too. */
START_TEST(test_decode_every_double_split)
{
    size_t len = strlen(stream3);
    for (size_t a = 0; a <= len; a++) {
        for (size_t b = a; b <= len; b++) {
            struct rio_decoder *d = rio_decoder_new(1024);
            struct collected c = {0};
            const uint8_t *s = (const uint8_t *)stream3;
            feed_all(d, s, a, &c);
            feed_all(d, s + a, b - a, &c);
            feed_all(d, s + b, len - b, &c);
            check_stream3(&c);
            rio_decoder_free(d);
        }
    }
}
END_TEST

START_TEST(test_decode_byte_by_byte)
{
    size_t len = strlen(stream3);
    struct rio_decoder *d = rio_decoder_new(1024);
    struct collected c = {0};
    for (size_t i = 0; i < len; i++) {
        feed_all(d, (const uint8_t *)stream3 + i, 1, &c);
        if (i + 1 < len)
            ck_assert(c.last == RIO_NEED_MORE);
    }
    check_stream3(&c);
    ck_assert(rio_decoder_is_idle(d));
    rio_decoder_free(d);
}
END_TEST

START_TEST(test_decode_zero_length_records)
{
    struct rio_decoder *d = rio_decoder_new(0);
    struct collected c = {0};
    feed_all(d, (const uint8_t *)"0\n0\n0\n", 6, &c);
    ck_assert_uint_eq(c.n, 3);
    for (size_t i = 0; i < 3; i++)
        ck_assert_uint_eq(c.lens[i], 0);
    ck_assert_int_eq(c.last, RIO_NEED_MORE);
    rio_decoder_free(d);
}
END_TEST

START_TEST(test_decode_empty_feed)
{
    struct rio_decoder *d = rio_decoder_new(10);
    size_t used = 7;
    const uint8_t *rec;
    size_t rlen;
    ck_assert_int_eq(rio_decoder_feed(d, NULL, 0, &used, &rec, &rlen),
                     RIO_NEED_MORE);
    ck_assert_uint_eq(used, 0);
    ck_assert(rio_decoder_is_idle(d));
    rio_decoder_free(d);
}
END_TEST

START_TEST(test_decode_partial_not_idle)
{
    struct rio_decoder *d = rio_decoder_new(10);
    struct collected c = {0};
    feed_all(d, (const uint8_t *)"3\nab", 4, &c);
    ck_assert_uint_eq(c.n, 0);
    ck_assert(!rio_decoder_is_idle(d));
    feed_all(d, (const uint8_t *)"c", 1, &c);
    ck_assert_uint_eq(c.n, 1);
    ck_assert(rio_decoder_is_idle(d));
    rio_decoder_free(d);
}
END_TEST

START_TEST(test_decode_at_limit)
{
    struct rio_decoder *d = rio_decoder_new(5);
    struct collected c = {0};
    feed_all(d, (const uint8_t *)"5\nhello", 7, &c);
    ck_assert_uint_eq(c.n, 1);
    ck_assert_int_eq(c.last, RIO_NEED_MORE);
    rio_decoder_free(d);
}
END_TEST

START_TEST(test_decode_oversize)
{
    struct rio_decoder *d = rio_decoder_new(5);
    struct collected c = {0};
    feed_all(d, (const uint8_t *)"6\nhello!", 8, &c);
    ck_assert_uint_eq(c.n, 0);
    ck_assert_int_eq(c.last, RIO_ERROR);
    ck_assert_ptr_nonnull(strstr(rio_decoder_error(d), "limit of 5 bytes"));
    rio_decoder_free(d);
}
END_TEST

/* A huge length is refused while its digits arrive, before any newline. */
START_TEST(test_decode_oversize_early)
{
    struct rio_decoder *d = rio_decoder_new(1000);
    size_t used;
    const uint8_t *rec;
    size_t rlen;
    ck_assert_int_eq(
        rio_decoder_feed(d, (const uint8_t *)"99999", 5, &used, &rec, &rlen),
        RIO_ERROR);
    ck_assert_uint_eq(used, 3);
    rio_decoder_free(d);
}
END_TEST

/* Malformed length lines: each is an error with a reason, and records before
 * the bad line are still delivered. */
START_TEST(test_decode_garbage_lengths)
{
    static const struct {
        const char *input;
        size_t good_records;
        const char *reason_has;
    } cases[] = {
        {"\n", 0, "empty length line"},
        {"1\na\n", 1, "empty length line"},
        {"+5\nhello", 0, "'+'"},
        {"-5\nhello", 0, "'-'"},
        {" 5\nhello", 0, "0x20"},
        {"5 \nhello", 0, "0x20"},
        {"5\r\nhello", 0, "0x0d"},
        {"0x10\n", 0, "'x'"},
        {"abc", 0, "'a'"},
        {"1e3\n", 0, "'e'"},
        {"2\nhi3\nabc\x01", 2, "0x01"},
        {"5.0\nhello", 0, "'.'"},
        {"000000000000000000001\nx", 0, "longer than 20 digits"},
        {"18446744073709551616\n", 0, "exceeds the limit"},
        {"99999999999999999999999999\n", 0, "exceeds the limit"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct rio_decoder *d = rio_decoder_new(1 << 20);
        struct collected c = {0};
        size_t len = strlen(cases[i].input);
        feed_all(d, (const uint8_t *)cases[i].input, len, &c);
        ck_assert_msg(c.last == RIO_ERROR, "case %zu: no error", i);
        ck_assert_uint_eq(c.n, cases[i].good_records);
        const char *why = rio_decoder_error(d);
        ck_assert_ptr_nonnull(why);
        ck_assert_msg(strstr(why, cases[i].reason_has) != NULL,
                      "case %zu: reason \"%s\" lacks \"%s\"", i, why,
                      cases[i].reason_has);
        ck_assert_ptr_null(strchr(why, '\n'));
        rio_decoder_free(d);
    }
}
END_TEST

/* Leading zeros are digits like any other. */
START_TEST(test_decode_leading_zeros)
{
    struct rio_decoder *d = rio_decoder_new(100);
    struct collected c = {0};
    feed_all(d, (const uint8_t *)"003\nabc", 7, &c);
    ck_assert_uint_eq(c.n, 1);
    ck_assert_uint_eq(c.lens[0], 3);
    rio_decoder_free(d);
}
END_TEST

START_TEST(test_decode_error_is_sticky)
{
    struct rio_decoder *d = rio_decoder_new(100);
    struct collected c = {0};
    feed_all(d, (const uint8_t *)"x", 1, &c);
    ck_assert_int_eq(c.last, RIO_ERROR);
    const char *first = rio_decoder_error(d);
    size_t used = 5;
    const uint8_t *rec;
    size_t rlen;
    ck_assert_int_eq(
        rio_decoder_feed(d, (const uint8_t *)"3\nabc", 5, &used, &rec, &rlen),
        RIO_ERROR);
    ck_assert_uint_eq(used, 0);
    ck_assert_str_eq(rio_decoder_error(d), first);
    rio_decoder_free(d);
}
END_TEST

/* A record that arrives whole is returned in place (no copy). */
START_TEST(test_decode_zero_copy)
{
    static const uint8_t in[] = "3\nabc";
    struct rio_decoder *d = rio_decoder_new(100);
    size_t used;
    const uint8_t *rec;
    size_t rlen;
    ck_assert_int_eq(rio_decoder_feed(d, in, 5, &used, &rec, &rlen),
                     RIO_RECORD);
    ck_assert_ptr_eq(rec, in + 2);
    ck_assert_uint_eq(used, 5);
    rio_decoder_free(d);
}
END_TEST

/* Encode random records, decode the concatenation in random slices. */
START_TEST(test_decode_roundtrip_random)
{
    unsigned seed = 12345;
    srand(seed);
    for (int round = 0; round < 200; round++) {
        uint8_t stream[4096];
        size_t slen = 0, nrec = 0;
        size_t lens[32];
        uint8_t fill[32];
        while (nrec < 32) {
            size_t rl = (size_t)(rand() % 100);
            uint8_t rec[100];
            memset(rec, (int)(nrec & 0xff), rl);
            size_t w =
                rio_encode(rec, rl, stream + slen, sizeof(stream) - slen);
            if (w == 0)
                break;
            lens[nrec] = rl;
            fill[nrec] = (uint8_t)(nrec & 0xff);
            nrec++;
            slen += w;
        }
        struct rio_decoder *d = rio_decoder_new(100);
        size_t pos = 0, got = 0;
        while (pos < slen) {
            size_t piece = 1 + (size_t)(rand() % 40);
            if (piece > slen - pos)
                piece = slen - pos;
            const uint8_t *p = stream + pos;
            size_t left = piece;
            for (;;) {
                size_t used;
                const uint8_t *rec;
                size_t rlen;
                enum rio_result r =
                    rio_decoder_feed(d, p, left, &used, &rec, &rlen);
                ck_assert_msg(r != RIO_ERROR, "seed %u round %d", seed, round);
                p += used;
                left -= used;
                if (r == RIO_NEED_MORE)
                    break;
                ck_assert_uint_lt(got, nrec);
                ck_assert_uint_eq(rlen, lens[got]);
                for (size_t k = 0; k < rlen; k++)
                    ck_assert_uint_eq(rec[k], fill[got]);
                got++;
            }
            pos += piece;
        }
        ck_assert_msg(got == nrec, "seed %u round %d", seed, round);
        rio_decoder_free(d);
    }
}
END_TEST

static Suite *recordio_suite(void)
{
    Suite *s = suite_create("recordio");
    TCase *tc = tcase_create("encode");
    tcase_add_test(tc, test_encode_header);
    tcase_add_test(tc, test_encode_frame);
    tcase_add_test(tc, test_frame_alloc);
    suite_add_tcase(s, tc);
    tc = tcase_create("decode");
    tcase_add_test(tc, test_decode_one_shot);
    tcase_add_test(tc, test_decode_every_split);
    tcase_add_test(tc, test_decode_every_double_split);
    tcase_add_test(tc, test_decode_byte_by_byte);
    tcase_add_test(tc, test_decode_zero_length_records);
    tcase_add_test(tc, test_decode_empty_feed);
    tcase_add_test(tc, test_decode_partial_not_idle);
    tcase_add_test(tc, test_decode_at_limit);
    tcase_add_test(tc, test_decode_oversize);
    tcase_add_test(tc, test_decode_oversize_early);
    tcase_add_test(tc, test_decode_garbage_lengths);
    tcase_add_test(tc, test_decode_leading_zeros);
    tcase_add_test(tc, test_decode_error_is_sticky);
    tcase_add_test(tc, test_decode_zero_copy);
    tcase_add_test(tc, test_decode_roundtrip_random);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(recordio_suite)
