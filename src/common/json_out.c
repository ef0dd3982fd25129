/*
 * JSON text written straight into a buffer, as jansson would dump the same
 * values (see json_out.h for the rules copied from jansson 2.14's dump.c
 * and value.c; tests/unit/test_json_out.c compares the two).
 */
#include "common/json_out.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"

void jout_init(struct jout *w)
{
    memset(w, 0, sizeof(*w));
}

void jout_free(struct jout *w)
{
    free(w->buf);
    jout_init(w);
}

void jout_reset(struct jout *w)
{
    w->len = 0;
    w->comma = false;
}

static void grow(struct jout *w, size_t n)
{
    size_t cap = w->cap ? w->cap : 4096;
    while (cap < w->len + n)
        cap *= 2;
    w->buf = xrealloc(w->buf, cap);
    w->cap = cap;
}

void jout_raw(struct jout *w, const char *s, size_t n)
{
    if (w->len + n > w->cap)
        grow(w, n);
    memcpy(w->buf + w->len, s, n);
    w->len += n;
}

void jout_raws(struct jout *w, const char *s)
{
    jout_raw(w, s, strlen(s));
}

static void put1(struct jout *w, char c)
{
    if (w->len + 1 > w->cap)
        grow(w, 1);
    w->buf[w->len++] = c;
}

void jout_mark(struct jout *w, bool comma)
{
    w->comma = comma;
}

/* The comma a key or value needs. */
static void sep(struct jout *w)
{
    if (w->comma)
        put1(w, ',');
}

void jout_obj_begin(struct jout *w)
{
    sep(w);
    put1(w, '{');
    w->comma = false;
}

void jout_obj_end(struct jout *w)
{
    put1(w, '}');
    w->comma = true;
}

void jout_arr_begin(struct jout *w)
{
    sep(w);
    put1(w, '[');
    w->comma = false;
}

void jout_arr_end(struct jout *w)
{
    put1(w, ']');
    w->comma = true;
}

bool jout_utf8_valid(const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t len;
        uint32_t cp;
        if (c >= 0xC2 && c <= 0xDF) {
            len = 2;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            len = 3;
            cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            len = 4;
            cp = c & 0x07;
        } else {
            return false;
        }
        if (i + len > n)
            return false;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return false;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        /* Overlong forms, surrogates, beyond U+10FFFF. */
        if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
            cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += len;
    }
    return true;
}

/* s (n bytes, valid UTF-8) quoted and escaped. */
static void put_string(struct jout *w, const char *s, size_t n)
{
    /* At most 6 bytes out per byte in, plus the quotes. */
    if (w->len + 6 * n + 2 > w->cap)
        grow(w, 6 * n + 2);
    char *o = w->buf + w->len;
    *o++ = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') {
            *o++ = (char)c;
            continue;
        }
        *o++ = '\\';
        switch (c) {
        case '"':
        case '\\':
            *o++ = (char)c;
            break;
        case '\b':
            *o++ = 'b';
            break;
        case '\f':
            *o++ = 'f';
            break;
        case '\n':
            *o++ = 'n';
            break;
        case '\r':
            *o++ = 'r';
            break;
        case '\t':
            *o++ = 't';
            break;
        default: {
            static const char hex[] = "0123456789ABCDEF";
            *o++ = 'u';
            *o++ = '0';
            *o++ = '0';
            *o++ = hex[c >> 4];
            *o++ = hex[c & 15];
            break;
        }
        }
    }
    *o++ = '"';
    w->len = (size_t)(o - w->buf);
}

#define BYTES_OF(b) (0x0101010101010101ull * (uint64_t)(b))

/* Non-zero when a byte of x is below 0x20, 0x80 or above, '"' or '\\'
 * (any byte put_plain may not copy as it is). The "has a zero byte" test
 * (x - 0x01..01) & ~x & 0x80..80 can flag a byte above a true hit, never
 * a word without one, so "any" is exact. */
static uint64_t word_needs_check(uint64_t x)
{
    uint64_t high = BYTES_OF(0x80);
    uint64_t q = x ^ BYTES_OF('"'), b = x ^ BYTES_OF('\\');
    uint64_t below = (x - BYTES_OF(0x20)) & ~x;
    uint64_t quote = (q - BYTES_OF(1)) & ~q;
    uint64_t bslash = (b - BYTES_OF(1)) & ~b;
    return ((below | quote | bslash) & high) | (x & high);
}

/*
 * The common case of a string (an id, a name, a key): n bytes of ASCII
 * that need no escape (0x20 to 0x7F but '"' and '\\'), quoted, with the closing
 * text tail (tail_n bytes: ':' after a key, none after a value) in one
 * reservation and one copy. Returns false, having written nothing, when s holds
 * another byte; the caller then validates and escapes (non-ASCII text needs no
 * escape either, but it needs the UTF-8 check).
 */
static bool put_plain(struct jout *w, const char *s, size_t n, const char *tail,
                      size_t tail_n)
{
    size_t need = n + 3 + tail_n; /* ',' '"' ... '"' tail */
    if (w->len + need > w->cap)
        grow(w, need);
    char *o = w->buf + w->len;
    if (w->comma)
        *o++ = ',';
    *o++ = '"';
    memcpy(o, s, n);
    /* Eight bytes at a time (read back from our own copy, so never past
     * the end of s), then the rest one by one. */
    uint64_t bad = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, o + i, 8);
        bad |= word_needs_check(x);
    }
    for (; i < n; i++) {
        unsigned c = (unsigned char)o[i];
        bad |= !((c - 0x20u < 0x60u) & (c != '"') & (c != '\\'));
    }
    if (bad)
        return false; /* w->len unchanged: what was copied is dropped */
    o += n;
    *o++ = '"';
    memcpy(o, tail, tail_n);
    w->len = (size_t)(o + tail_n - w->buf);
    return true;
}

void jout_key(struct jout *w, const char *key)
{
    size_t n = strlen(key);
    if (!put_plain(w, key, n, ":", 1)) {
        sep(w);
        put_string(w, key, n);
        put1(w, ':');
    }
    w->comma = false;
}

/* The value s (n bytes) after the comma it needs; false, with nothing
 * written, when it is not valid UTF-8. */
static bool put_value_string(struct jout *w, const char *s, size_t n)
{
    if (!put_plain(w, s, n, "", 0)) {
        if (!jout_utf8_valid(s, n))
            return false;
        sep(w);
        put_string(w, s, n);
    }
    w->comma = true;
    return true;
}

bool jout_str(struct jout *w, const char *s)
{
    if (s == NULL)
        return false;
    return put_value_string(w, s, strlen(s));
}

/* v in decimal into b (at least 21 bytes, not NUL-terminated); returns
 * the length. */
static size_t int_text(int64_t v, char *b)
{
    char t[20];
    size_t n = 0, len = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        t[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    if (v < 0)
        b[len++] = '-';
    while (n > 0)
        b[len++] = t[--n];
    return len;
}

void jout_int(struct jout *w, int64_t v)
{
    char b[24];
    size_t n = int_text(v, b);
    sep(w);
    jout_raw(w, b, n);
    w->comma = true;
}

void jout_bool(struct jout *w, bool v)
{
    sep(w);
    if (v)
        jout_raw(w, "true", 4);
    else
        jout_raw(w, "false", 5);
    w->comma = true;
}

/* real_text's general case: snprintf, then jansson's edits. */
static size_t real_text_printf(double v, char *b)
{
    int n = snprintf(b, 32, "%.17g", v);
    if (n < 0 || n >= 32)
        return 0;
    size_t len = (size_t)n;
    if (strchr(b, '.') == NULL && strchr(b, 'e') == NULL) {
        memcpy(b + len, ".0", 3);
        len += 2;
    }
    char *e = strchr(b, 'e');
    if (e != NULL) {
        char *start = e + 1, *end = e + 2;
        if (*start == '-')
            start++;
        while (*end == '0')
            end++;
        if (end != start) {
            memmove(start, end, len - (size_t)(end - b) + 1);
            len -= (size_t)(end - start);
        }
    }
    return len;
}

/* 10^k for k <= 20, as 128-bit integers. */
static unsigned __int128 pow10_128(int k)
{
    unsigned __int128 p = 1;
    while (k-- > 0)
        p *= 10;
    return p;
}

/*
 * printf's "%.17g" of v, 1e-4 <= v < 1e16, exactly, into b: v is
 * m * 2^-shift (m < 2^53), so v * 10^d is a 128-bit integer divided by a
 * power of two, rounded half to even as glibc rounds the exact value; the
 * exponent X (digits before the point, less one) is the one the rounded
 * 17 digits have, as %g picks it. Returns the length, or 0 for the values
 * it does not do (left to snprintf).
 */
static size_t g17_fast(double v, char *b)
{
    if (!(v >= 1e-4 && v < 1e16))
        return 0;
    int exp2;
    double frac = frexp(v, &exp2); /* v = frac * 2^exp2, 0.5 <= frac < 1 */
    uint64_t m = (uint64_t)ldexp(frac, 53);
    int shift = 53 - exp2; /* v = m / 2^shift */
    if (shift <= 0 || shift > 100)
        return 0;
    int x = (int)floor(log10(v));
    unsigned __int128 q = 0;
    for (int tries = 0; tries < 3; tries++) {
        int d = 16 - x; /* digits after the point */
        if (d < 0 || d > 20)
            return 0;
        unsigned __int128 n = (unsigned __int128)m * pow10_128(d);
        q = n >> shift;
        unsigned __int128 rem = n - (q << shift);
        unsigned __int128 half = (unsigned __int128)1 << (shift - 1);
        if (rem > half || (rem == half && (q & 1)))
            q++;
        if (q < (unsigned __int128)10000000000000000ULL)
            x--;
        else if (q >= (unsigned __int128)100000000000000000ULL)
            x++;
        else
            goto digits;
    }
    return 0;
digits:
    if (x < -4 || x >= 17)
        return 0;
    char dig[17];
    uint64_t u = (uint64_t)q;
    for (int i = 16; i >= 0; i--) {
        dig[i] = (char)('0' + u % 10);
        u /= 10;
    }
    int last = 16; /* the last significant digit, trailing zeros dropped */
    while (last > 0 && dig[last] == '0')
        last--;
    size_t len = 0;
    if (x >= 0) {
        for (int i = 0; i <= x; i++)
            b[len++] = dig[i];
        if (last > x) {
            b[len++] = '.';
            for (int i = x + 1; i <= last; i++)
                b[len++] = dig[i];
        } else {
            b[len++] = '.'; /* jansson's ".0" for an integral text */
            b[len++] = '0';
        }
    } else {
        b[len++] = '0';
        b[len++] = '.';
        for (int i = 0; i < -x - 1; i++)
            b[len++] = '0';
        for (int i = 0; i <= last; i++)
            b[len++] = dig[i];
    }
    b[len] = '\0';
    return len;
}

/* v as jansson's jsonp_dtostr writes it (precision 17) into b (32 bytes);
 * returns the length. */
static size_t real_text(double v, char *b)
{
    /* Integers below 2^53 print as themselves with ".0": the common case
     * (resource quantities), without printf. "-0" goes the long way. */
    if (v >= -9007199254740992.0 && v <= 9007199254740992.0 &&
        v == (double)(int64_t)v && !(v == 0 && signbit(v))) {
        size_t n = int_text((int64_t)v, b);
        memcpy(b + n, ".0", 3);
        return n + 2;
    }
    /* Timestamps and fractions: the exact digits without printf. */
    if (v > 0) {
        size_t n = g17_fast(v, b);
        if (n > 0)
            return n;
    } else if (v < 0) {
        size_t n = g17_fast(-v, b + 1);
        if (n > 0) {
            b[0] = '-';
            return n + 1;
        }
    }
    return real_text_printf(v, b);
}

bool jout_real(struct jout *w, double v)
{
    if (!isfinite(v))
        return false;
    if (v >= -9007199254740992.0 && v <= 9007199254740992.0 &&
        v == (double)(int64_t)v && !(v == 0 && signbit(v))) {
        /* An integer: quicker written than looked up. */
        char b[32];
        size_t n = real_text(v, b);
        sep(w);
        jout_raw(w, b, n);
        w->comma = true;
        return true;
    }
    uint64_t bits;
    memcpy(&bits, &v, sizeof(bits));
    size_t slot =
        (size_t)((bits ^ (bits >> 29) ^ (bits >> 41)) % JOUT_REAL_CACHE);
    if (w->reals[slot].len == 0 || w->reals[slot].bits != bits) {
        char b[32];
        size_t n = real_text(v, b);
        if (n == 0 || n >= sizeof(w->reals[slot].text))
            return false;
        memcpy(w->reals[slot].text, b, n);
        w->reals[slot].len = (uint8_t)n;
        w->reals[slot].bits = bits;
    }
    sep(w);
    jout_raw(w, w->reals[slot].text, w->reals[slot].len);
    w->comma = true;
    return true;
}

static int dump_cb(const char *buf, size_t size, void *data)
{
    jout_raw(data, buf, size);
    return 0;
}

bool jout_json(struct jout *w, const json_t *j)
{
    if (j == NULL)
        return false;
    sep(w);
    json_dump_callback(j, dump_cb, w, JSON_COMPACT | JSON_ENCODE_ANY);
    w->comma = true;
    return true;
}

void jout_kstr(struct jout *w, const char *key, const char *s)
{
    if (s == NULL)
        return;
    size_t n = strlen(s);
    size_t at = w->len;
    bool comma = w->comma;
    jout_key(w, key);
    if (!put_value_string(w, s, n)) {
        /* Not valid UTF-8: the key goes too. */
        w->len = at;
        w->comma = comma;
    }
}

void jout_kreal(struct jout *w, const char *key, double v)
{
    if (!isfinite(v))
        return;
    jout_key(w, key);
    jout_real(w, v);
}

void jout_kint(struct jout *w, const char *key, int64_t v)
{
    jout_key(w, key);
    jout_int(w, v);
}

void jout_kbool(struct jout *w, const char *key, bool v)
{
    jout_key(w, key);
    jout_bool(w, v);
}

void jout_kjson(struct jout *w, const char *key, const json_t *j)
{
    if (j == NULL)
        return;
    jout_key(w, key);
    jout_json(w, j);
}

void jout_kjson_new(struct jout *w, const char *key, json_t *j)
{
    jout_kjson(w, key, j);
    json_decref(j);
}
