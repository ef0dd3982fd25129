/*
 * UUIDs from the kernel's random source, and Mesos-style derived ids.
 */
#include "common/ids.h"

#include "common/log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

void id_random_bytes(void *out, size_t n)
{
    uint8_t *p = out;
    size_t got = 0;
    while (got < n) {
        ssize_t k = getrandom(p + got, n - got, 0);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            log_error("getrandom: %s", strerror(errno));
            abort();
        }
        got += (size_t)k;
    }
}

void id_uuid_v4_bytes(uint8_t out[16])
{
    id_random_bytes(out, 16);
    out[6] = (uint8_t)((out[6] & 0x0f) | 0x40); /* version 4 */
    out[8] = (uint8_t)((out[8] & 0x3f) | 0x80); /* RFC 4122 variant */
}

void id_uuid_format(const uint8_t uuid[16], char out[ID_UUID_SIZE])
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    for (size_t i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out[o++] = '-';
        out[o++] = hex[uuid[i] >> 4];
        out[o++] = hex[uuid[i] & 0x0f];
    }
    out[o] = '\0';
}

void id_uuid_v4(char out[ID_UUID_SIZE])
{
    uint8_t b[16];
    id_uuid_v4_bytes(b);
    id_uuid_format(b, out);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int id_uuid_parse(const char *text, uint8_t out[16])
{
    uint8_t b[16];
    size_t bi = 0;
    if (strlen(text) != ID_UUID_LEN)
        return -1;
    for (size_t i = 0; i < ID_UUID_LEN;) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (text[i] != '-')
                return -1;
            i++;
            continue;
        }
        int hi = hexval(text[i]), lo = hexval(text[i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        b[bi++] = (uint8_t)(hi << 4 | lo);
        i += 2;
    }
    memcpy(out, b, sizeof(b));
    return 0;
}

int id_derive(enum id_kind kind, const char *base, uint64_t n, char *out,
              size_t outlen)
{
    int w;
    switch (kind) {
    case ID_FRAMEWORK:
        w = snprintf(out, outlen, "%s-%04" PRIu64, base, n);
        break;
    case ID_AGENT:
        w = snprintf(out, outlen, "%s-S%" PRIu64, base, n);
        break;
    case ID_OFFER:
        w = snprintf(out, outlen, "%s-O%" PRIu64, base, n);
        break;
    default:
        w = -1;
        break;
    }
    if (w < 0 || (size_t)w >= outlen) {
        if (outlen > 0)
            out[0] = '\0';
        return -1;
    }
    return 0;
}

int id_counter_of(enum id_kind kind, const char *base, const char *id,
                  uint64_t *n)
{
    size_t blen = strlen(base);
    if (strncmp(id, base, blen) != 0 || id[blen] != '-')
        return -1;
    const char *p = id + blen + 1;
    if (kind == ID_AGENT || kind == ID_OFFER) {
        if (*p != (kind == ID_AGENT ? 'S' : 'O'))
            return -1;
        p++;
    } else if (kind == ID_FRAMEWORK) {
        if (strlen(p) < 4)
            return -1;
    } else {
        return -1;
    }
    if (*p == '\0')
        return -1;
    uint64_t v = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *n = v;
    return 0;
}
