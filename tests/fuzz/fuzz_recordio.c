/*
 * Fuzz target for the RecordIO decoder: decode the input in one slice, then
 * again in slices whose sizes come from a generator seeded by the input
 * itself, and require the same records and the same final outcome. Also
 * re-encode every record and check the frame decodes back to it.
 */
#include "common/recordio.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Small limit so the fuzzer reaches the oversize path easily. */
#define FUZZ_MAX_RECORD 4096

struct outcome {
    size_t nrec;
    uint64_t hash; /* of every record's length and bytes, in order */
    enum rio_result last;
};

static uint64_t mix(uint64_t h, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

static void check_reencode(const uint8_t *rec, size_t len)
{
    size_t flen;
    uint8_t *frame = rio_frame(rec, len, &flen);
    struct rio_decoder *d = rio_decoder_new(len);
    size_t used;
    const uint8_t *out;
    size_t olen;
    if (rio_decoder_feed(d, frame, flen, &used, &out, &olen) != RIO_RECORD ||
        used != flen || olen != len || (len > 0 && memcmp(out, rec, len) != 0))
        abort();
    rio_decoder_free(d);
    free(frame);
}

/* Feed one slice, collecting records; returns 1 once in error. */
static int feed(struct rio_decoder *d, const uint8_t *p, size_t n,
                struct outcome *o, int reencode)
{
    for (;;) {
        size_t used;
        const uint8_t *rec;
        size_t rlen;
        enum rio_result r = rio_decoder_feed(d, p, n, &used, &rec, &rlen);
        if (used > n)
            abort();
        p += used;
        n -= used;
        o->last = r;
        if (r == RIO_ERROR) {
            const char *why = rio_decoder_error(d);
            if (why == NULL || strchr(why, '\n') != NULL)
                abort();
            return 1;
        }
        if (r == RIO_NEED_MORE) {
            if (n != 0)
                abort();
            return 0;
        }
        if (rlen > FUZZ_MAX_RECORD || rec == NULL)
            abort();
        uint64_t l = rlen;
        o->hash = mix(o->hash, (const uint8_t *)&l, sizeof(l));
        o->hash = mix(o->hash, rec, rlen);
        o->nrec++;
        if (reencode)
            check_reencode(rec, rlen);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct outcome whole = {0, 0xcbf29ce484222325ULL, RIO_NEED_MORE};
    struct outcome sliced = whole;

    struct rio_decoder *d = rio_decoder_new(FUZZ_MAX_RECORD);
    feed(d, data, size, &whole, 1);
    int whole_idle = rio_decoder_is_idle(d);
    rio_decoder_free(d);

    /* Slice sizes from an xorshift generator seeded by the input. */
    uint64_t state = mix(0x9e3779b97f4a7c15ULL, data, size) | 1;
    d = rio_decoder_new(FUZZ_MAX_RECORD);
    size_t pos = 0;
    while (pos < size) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        size_t piece = (size_t)(state % 17); /* 0..16, empty slices too */
        if (piece > size - pos)
            piece = size - pos;
        if (feed(d, data + pos, piece, &sliced, 0))
            break;
        pos += piece;
    }
    int sliced_idle = rio_decoder_is_idle(d);
    rio_decoder_free(d);

    if (whole.nrec != sliced.nrec || whole.hash != sliced.hash ||
        whole.last != sliced.last || whole_idle != sliced_idle)
        abort();
    return 0;
}
