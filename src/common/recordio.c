/*
 * RecordIO framing: encoder and incremental decoder. The decoder is a small
 * state machine (length line, then record bytes) whose state lives in the
 * decoder, so parsing resumes wherever the previous slice stopped.
 */
#include "common/recordio.h"

#include "common/errbuf.h"
#include "common/mem.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum rio_state {
    ST_LENGTH, /* reading the decimal length line */
    ST_DATA,   /* gathering the record bytes */
    ST_ERROR,  /* malformed input seen; terminal */
};

struct rio_decoder {
    enum rio_state state;
    size_t max_record; /* refuse records longer than this */
    unsigned digits;   /* digits seen in the current length line */
    uint64_t length;   /* value of the length line so far, <= max_record */
    uint8_t *buf;      /* gathers a record that spans slices */
    size_t cap;        /* allocated bytes of buf */
    size_t have;       /* bytes of the current record in buf */
    char error[128];   /* one-line reason once in ST_ERROR */
};

size_t rio_frame_size(size_t len)
{
    uint8_t header[RIO_HEADER_MAX];
    return rio_encode_header(len, header, sizeof(header)) + len;
}

size_t rio_encode_header(size_t len, uint8_t *out, size_t cap)
{
    char tmp[RIO_HEADER_MAX + 1];
    int n = snprintf(tmp, sizeof(tmp), "%zu\n", len);
    if (n <= 0 || (size_t)n >= sizeof(tmp) || (size_t)n > cap)
        return 0;
    memcpy(out, tmp, (size_t)n);
    return (size_t)n;
}

size_t rio_encode(const uint8_t *record, size_t len, uint8_t *out, size_t cap)
{
    uint8_t header[RIO_HEADER_MAX];
    size_t h = rio_encode_header(len, header, sizeof(header));
    if (h == 0 || cap < h || cap - h < len)
        return 0;
    memcpy(out, header, h);
    if (len > 0)
        memcpy(out + h, record, len);
    return h + len;
}

uint8_t *rio_frame(const uint8_t *record, size_t len, size_t *frame_len)
{
    size_t size = rio_frame_size(len);
    uint8_t *out = xmalloc(size);
    size_t n = rio_encode(record, len, out, size);
    *frame_len = n;
    return out;
}

struct rio_decoder *rio_decoder_new(size_t max_record)
{
    struct rio_decoder *d = xcalloc(1, sizeof(*d));
    d->state = ST_LENGTH;
    d->max_record =
        max_record > RIO_MAX_RECORD_LIMIT ? RIO_MAX_RECORD_LIMIT : max_record;
    return d;
}

void rio_decoder_free(struct rio_decoder *d)
{
    if (d == NULL)
        return;
    free(d->buf);
    free(d);
}

/* Enter the terminal error state with a one-line reason. */
static enum rio_result fail(struct rio_decoder *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static enum rio_result fail(struct rio_decoder *d, const char *fmt, ...)
{
    va_list ap;
    d->state = ST_ERROR;
    va_start(ap, fmt);
    errbuf_vset(d->error, sizeof(d->error), fmt, ap);
    va_end(ap);
    return RIO_ERROR;
}

static void describe_byte(uint8_t c, char *out, size_t outlen)
{
    if (c >= 0x21 && c < 0x7f)
        snprintf(out, outlen, "'%c'", c);
    else
        snprintf(out, outlen, "0x%02x", c);
}

enum rio_result rio_decoder_feed(struct rio_decoder *d, const uint8_t *buf,
                                 size_t len, size_t *consumed,
                                 const uint8_t **record, size_t *record_len)
{
    size_t i = 0;

    if (d->state == ST_ERROR) {
        *consumed = 0;
        return RIO_ERROR;
    }
    while (i < len) {
        if (d->state == ST_LENGTH) {
            uint8_t c = buf[i];
            if (c == '\n') {
                if (d->digits == 0) {
                    *consumed = i;
                    return fail(d, "recordio: empty length line");
                }
                i++;
                d->state = ST_DATA;
                d->have = 0;
                if (d->length == 0) {
                    d->state = ST_LENGTH;
                    d->digits = 0;
                    *consumed = i;
                    /* Any non-NULL pointer will do for an empty record. */
                    *record = (const uint8_t *)d;
                    *record_len = 0;
                    return RIO_RECORD;
                }
                continue;
            }
            if (c < '0' || c > '9') {
                char what[8];
                describe_byte(c, what, sizeof(what));
                *consumed = i;
                return fail(d, "recordio: unexpected byte %s in length line",
                            what);
            }
            if (d->digits >= RIO_MAX_LENGTH_DIGITS) {
                *consumed = i;
                return fail(d, "recordio: length line longer than %d digits",
                            RIO_MAX_LENGTH_DIGITS);
            }
            d->digits++;
            /* length <= max_record <= 2^40 here, so this cannot overflow. */
            d->length = d->length * 10 + (uint64_t)(c - '0');
            if (d->length > d->max_record) {
                *consumed = i;
                return fail(d,
                            "recordio: record length exceeds the limit of "
                            "%zu bytes",
                            d->max_record);
            }
            i++;
            continue;
        }

        /* ST_DATA: d->length bytes, d->have of them already gathered. */
        size_t need = (size_t)d->length - d->have;
        size_t avail = len - i;
        if (d->have == 0 && avail >= need) {
            /* The whole record is in this slice: hand it out in place. */
            *record = buf + i;
            *record_len = need;
            i += need;
        } else {
            size_t take = avail < need ? avail : need;
            if (d->cap < (size_t)d->length) {
                d->buf = xrealloc(d->buf, (size_t)d->length);
                d->cap = (size_t)d->length;
            }
            memcpy(d->buf + d->have, buf + i, take);
            d->have += take;
            i += take;
            if (d->have < (size_t)d->length)
                break;
            *record = d->buf;
            *record_len = d->have;
        }
        d->state = ST_LENGTH;
        d->digits = 0;
        d->length = 0;
        d->have = 0;
        *consumed = i;
        return RIO_RECORD;
    }
    *consumed = i;
    return RIO_NEED_MORE;
}

const char *rio_decoder_error(const struct rio_decoder *d)
{
    return d->state == ST_ERROR ? d->error : NULL;
}

int rio_decoder_is_idle(const struct rio_decoder *d)
{
    return d->state == ST_LENGTH && d->digits == 0;
}
