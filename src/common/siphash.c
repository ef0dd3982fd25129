/*
 * SipHash-c-d, written from the paper ("SipHash: a fast short-input PRF",
 * Aumasson and Bernstein, 2012): four 64-bit words of state initialised from
 * the key, each 8-byte little-endian message word mixed in by c rounds, the
 * last word carrying the length in its top byte, then d rounds.
 */
#include "common/siphash.h"

#include <pthread.h>
#include <string.h>

#include "common/ids.h"
#include "common/siphash_private.h"

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

static inline void sipround(uint64_t v[4])
{
    v[0] += v[1];
    v[1] = ROTL(v[1], 13);
    v[1] ^= v[0];
    v[0] = ROTL(v[0], 32);
    v[2] += v[3];
    v[3] = ROTL(v[3], 16);
    v[3] ^= v[2];
    v[0] += v[3];
    v[3] = ROTL(v[3], 21);
    v[3] ^= v[0];
    v[2] += v[1];
    v[1] = ROTL(v[1], 17);
    v[1] ^= v[2];
    v[2] = ROTL(v[2], 32);
}

static inline uint64_t load_le64(const uint8_t *p)
{
    uint64_t w;
    memcpy(&w, p, sizeof(w)); /* one load, at any alignment */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}

/* Inlined with constant c and d into each caller. */
static inline uint64_t sip(const struct siphash_key *key, const void *data,
                           size_t len, int c, int d)
{
    const uint8_t *p = data;
    uint64_t v[4] = {
        key->k0 ^ 0x736f6d6570736575ULL,
        key->k1 ^ 0x646f72616e646f6dULL,
        key->k0 ^ 0x6c7967656e657261ULL,
        key->k1 ^ 0x7465646279746573ULL,
    };
    size_t whole = len & ~(size_t)7;
    for (size_t i = 0; i < whole; i += 8) {
        uint64_t m = load_le64(p + i);
        v[3] ^= m;
        for (int r = 0; r < c; r++)
            sipround(v);
        v[0] ^= m;
    }
    /* The last 0-7 bytes, little-endian, under the length's low byte. */
    const uint8_t *t = p + whole;
    uint64_t b = (uint64_t)len << 56;
    switch (len & 7) {
    case 7:
        b |= (uint64_t)t[6] << 48;
        /* fall through */
    case 6:
        b |= (uint64_t)t[5] << 40;
        /* fall through */
    case 5:
        b |= (uint64_t)t[4] << 32;
        /* fall through */
    case 4:
        b |= (uint64_t)t[3] << 24;
        /* fall through */
    case 3:
        b |= (uint64_t)t[2] << 16;
        /* fall through */
    case 2:
        b |= (uint64_t)t[1] << 8;
        /* fall through */
    case 1:
        b |= (uint64_t)t[0];
        break;
    default:
        break;
    }
    v[3] ^= b;
    for (int r = 0; r < c; r++)
        sipround(v);
    v[0] ^= b;
    v[2] ^= 0xff;
    for (int r = 0; r < d; r++)
        sipround(v);
    return v[0] ^ v[1] ^ v[2] ^ v[3];
}

uint64_t siphash13(const struct siphash_key *key, const void *data, size_t len)
{
    return sip(key, data, len, 1, 3);
}

uint64_t siphash_rounds(const struct siphash_key *key, const void *data,
                        size_t len, int c, int d)
{
    return sip(key, data, len, c, d);
}

static struct siphash_key process_key;
static pthread_once_t process_key_once = PTHREAD_ONCE_INIT;

static void process_key_draw(void)
{
    uint8_t bytes[16];
    id_random_bytes(bytes, sizeof(bytes));
    process_key.k0 = load_le64(bytes);
    process_key.k1 = load_le64(bytes + 8);
}

const struct siphash_key *siphash_process_key(void)
{
    pthread_once(&process_key_once, process_key_draw);
    return &process_key;
}

void siphash_set_process_key(const struct siphash_key *key)
{
    pthread_once(&process_key_once, process_key_draw);
    process_key = *key;
}
