/*
 * json_pb: the generic protobuf-c <-> JSON converter and the bounded protobuf
 * decoder (contract in json_pb.h).
 *
 * Everything is driven by protobuf-c's descriptors: a field's label, type,
 * offset and quantifier_offset say where its value lives in the C struct and
 * how to tell whether it is set, exactly as protobuf-c's own pack/unpack read
 * them. Messages built here are laid out as protobuf_c_message_unpack lays
 * them out (each message, string, bytes buffer and repeated array malloc'd on
 * its own), so protobuf_c_message_free_unpacked releases either kind, also
 * when a conversion stops half-way: every pointer is stored in its message
 * before anything that can fail, and repeated counts cover only initialised
 * (zeroed or filled) elements.
 *
 * Protobuf input is walked once by scan_message() before protobuf-c sees it,
 * because protobuf_c_message_unpack recurses into nested messages without a
 * limit. The scan checks every tag, varint and length against the bytes left,
 * each known field's wire type against its declared type, nesting depth,
 * required fields and strings, so that it can name the field path of any
 * problem; protobuf-c then only builds the structs.
 */
#define JPB_PRIVATE
#include "common/json_pb.h"

#include "common/errbuf.h"
#include "common/log.h"
#include "common/mem.h"

#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Shared helpers                                                           */

/* Field paths for error messages ("a.b[2].c"); longer paths are cut. */
#define PATH_MAX_LEN 512

struct path {
    char buf[PATH_MAX_LEN];
    size_t len; /* strlen(buf) */
};

/* Append ".name" (or "name" at the root); returns the length to pop back to. */
static size_t path_push_name(struct path *p, const char *name)
{
    size_t old = p->len;
    int n = snprintf(p->buf + p->len, sizeof(p->buf) - p->len, "%s%s",
                     p->len > 0 ? "." : "", name);
    if (n < 0 || (size_t)n >= sizeof(p->buf) - p->len)
        p->len = sizeof(p->buf) - 1; /* cut, still NUL-terminated */
    else
        p->len += (size_t)n;
    return old;
}

static size_t path_push_index(struct path *p, size_t index)
{
    size_t old = p->len;
    int n = snprintf(p->buf + p->len, sizeof(p->buf) - p->len, "[%zu]", index);
    if (n < 0 || (size_t)n >= sizeof(p->buf) - p->len)
        p->len = sizeof(p->buf) - 1;
    else
        p->len += (size_t)n;
    return old;
}

/* Append ["key"] (a map key). */
static size_t path_push_key(struct path *p, const char *key)
{
    size_t old = p->len;
    int n = snprintf(p->buf + p->len, sizeof(p->buf) - p->len, "[\"%s\"]", key);
    if (n < 0 || (size_t)n >= sizeof(p->buf) - p->len)
        p->len = sizeof(p->buf) - 1;
    else
        p->len += (size_t)n;
    return old;
}

static void path_pop(struct path *p, size_t old)
{
    p->len = old;
    p->buf[old] = '\0';
}

/* Which fields of one message occurrence were seen: a bit per field of its
 * descriptor, on the stack for up to 256 fields. Used in place only (bits
 * may point into the struct). */
struct field_set {
    uint8_t stack[32];
    uint8_t *bits;
};

static void fields_init(struct field_set *s,
                        const ProtobufCMessageDescriptor *desc)
{
    size_t n = (desc->n_fields + 7) / 8;
    if (n > sizeof(s->stack)) {
        s->bits = xcalloc(n, 1);
    } else {
        memset(s->stack, 0, n);
        s->bits = s->stack;
    }
}

/* Mark f (a field of desc) seen; returns whether it was seen before. */
static bool fields_mark(struct field_set *s,
                        const ProtobufCMessageDescriptor *desc,
                        const ProtobufCFieldDescriptor *f)
{
    size_t i = (size_t)(f - desc->fields);
    uint8_t bit = (uint8_t)(1u << (i % 8));
    bool again = (s->bits[i / 8] & bit) != 0;
    s->bits[i / 8] |= bit;
    return again;
}

/* The first required field of desc not seen, or NULL. */
static const ProtobufCFieldDescriptor *
fields_missing_required(const struct field_set *s,
                        const ProtobufCMessageDescriptor *desc)
{
    for (unsigned i = 0; i < desc->n_fields; i++)
        if (desc->fields[i].label == PROTOBUF_C_LABEL_REQUIRED &&
            !(s->bits[i / 8] & (1u << (i % 8))))
            return &desc->fields[i];
    return NULL;
}

static void fields_fini(struct field_set *s)
{
    if (s->bits != s->stack)
        free(s->bits);
}

/* Write "path: reason" (or just the reason at the root) into err. */
static void set_error(char *err, size_t errlen, const char *path,
                      const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));

static void set_error(char *err, size_t errlen, const char *path,
                      const char *fmt, va_list ap)
{
    if (err == NULL || errlen == 0)
        return;
    size_t used = 0;
    if (path != NULL && path[0] != '\0') {
        errbuf_set(err, errlen, "%s: ", path);
        used = strlen(err);
    }
    errbuf_vset(err + used, errlen - used, fmt, ap);
}

static void set_error_f(char *err, size_t errlen, const char *path,
                        const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void set_error_f(char *err, size_t errlen, const char *path,
                        const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_error(err, errlen, path, fmt, ap);
    va_end(ap);
}

/* .proto spelling of each ProtobufCType, for error messages. */
static const char *const type_names[] = {
    "int32",  "sint32",  "sfixed32", "int64",   "sint64",  "sfixed64",
    "uint32", "fixed32", "uint64",   "fixed64", "float",   "double",
    "bool",   "enum",    "string",   "bytes",   "message",
};

static const char *type_name(ProtobufCType t)
{
    if ((size_t)t < sizeof(type_names) / sizeof(type_names[0]))
        return type_names[t];
    return "unknown";
}

/* Size of one element of a repeated field of type t, as protobuf-c stores
 * it. */
static size_t elt_size(ProtobufCType t)
{
    switch (t) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_FLOAT:
    case PROTOBUF_C_TYPE_ENUM:
        return 4;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE:
        return 8;
    case PROTOBUF_C_TYPE_BOOL:
        return sizeof(protobuf_c_boolean);
    case PROTOBUF_C_TYPE_STRING:
        return sizeof(char *);
    case PROTOBUF_C_TYPE_BYTES:
        return sizeof(ProtobufCBinaryData);
    case PROTOBUF_C_TYPE_MESSAGE:
        return sizeof(ProtobufCMessage *);
    }
    return 0;
}

#define MEMBER_PTR(msg, off)  ((void *)((char *)(msg) + (off)))
#define CMEMBER_PTR(msg, off) ((const void *)((const char *)(msg) + (off)))

/* Whether repeated message field f of message type parent is a protobuf
 * map with string keys. protoc-c 1.4 compiles `map<string, V> x` into a
 * repeated nested message `<X>Entry { optional string key = 1; optional V
 * value = 2; }` without marking it, so the entry is recognised by that
 * shape: such fields are JSON objects keyed by `key`. Maps with other key
 * types stay arrays of {"key": ..., "value": ...} objects. */
static bool is_string_map(const ProtobufCMessageDescriptor *parent,
                          const ProtobufCFieldDescriptor *f)
{
    if (f->label != PROTOBUF_C_LABEL_REPEATED ||
        f->type != PROTOBUF_C_TYPE_MESSAGE)
        return false;
    const ProtobufCMessageDescriptor *d = f->descriptor;
    if (d->n_fields != 2 || d->fields[0].id != 1 || d->fields[1].id != 2 ||
        strcmp(d->fields[0].name, "key") != 0 ||
        strcmp(d->fields[1].name, "value") != 0 ||
        d->fields[0].type != PROTOBUF_C_TYPE_STRING ||
        d->fields[0].label != PROTOBUF_C_LABEL_OPTIONAL ||
        d->fields[1].label != PROTOBUF_C_LABEL_OPTIONAL)
        return false;
    size_t sn = strlen(d->short_name), pn = strlen(parent->name);
    return sn > 5 && strcmp(d->short_name + sn - 5, "Entry") == 0 &&
           strncmp(d->name, parent->name, pn) == 0 && d->name[pn] == '.' &&
           strcmp(d->name + pn + 1, d->short_name) == 0;
}

/* Length of the valid UTF-8 sequence at s (1 to 4), or 0 when the bytes
 * there are not one (overlong forms, surrogates and values above U+10FFFF
 * are refused, as jansson refuses them). */
static size_t utf8_seq_len(const uint8_t *s, size_t n)
{
    uint8_t c = s[0];
    if (c < 0x80)
        return 1;
    size_t need;
    uint8_t lo = 0x80, hi = 0xBF; /* range of the second byte */
    if (c >= 0xC2 && c <= 0xDF) {
        need = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 3;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    } else {
        return 0;
    }
    if (n < need || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < need; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    return need;
}

static bool utf8_valid(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t k = utf8_seq_len(s + i, n - i);
        if (k == 0)
            return false;
        i += k;
    }
    return true;
}

/* ---- base64 (RFC 4648, standard alphabet, padded) ---- */

static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static size_t b64_encoded_len(size_t n)
{
    return (n + 2) / 3 * 4;
}

/* Encode n bytes into out, which has room for b64_encoded_len(n) bytes. */
static void b64_encode(const uint8_t *in, size_t n, char *out)
{
    size_t i = 0, o = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v =
            (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        out[o++] = b64_alphabet[v >> 18];
        out[o++] = b64_alphabet[(v >> 12) & 63];
        out[o++] = b64_alphabet[(v >> 6) & 63];
        out[o++] = b64_alphabet[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)in[i] << 16;
        out[o++] = b64_alphabet[v >> 18];
        out[o++] = b64_alphabet[(v >> 12) & 63];
        out[o++] = '=';
        out[o++] = '=';
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
        out[o++] = b64_alphabet[v >> 18];
        out[o++] = b64_alphabet[(v >> 12) & 63];
        out[o++] = b64_alphabet[(v >> 6) & 63];
        out[o++] = '=';
    }
}

static int b64_value(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

/* Decode base64 as Mesos (stout) reads it: the standard alphabet, ASCII
 * whitespace skipped, the '=' padding optional (when present it must be
 * right), unused low bits ignored. A lone sixth-bit group (length 1 mod 4)
 * or anything after the padding is refused. Returns 0 and a malloc'd buffer
 * (NULL when empty), or -1. */
static int b64_decode(const char *s, size_t n, uint8_t **out, size_t *outlen)
{
    uint8_t *buf = NULL;
    size_t o = 0, chars = 0, pad = 0;
    uint32_t acc = 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n')
            continue;
        if (ch == '=') {
            pad++;
            continue;
        }
        int v = b64_value(ch);
        if (v < 0 || pad > 0)
            goto bad;
        if (buf == NULL)
            buf = xmalloc(n / 4 * 3 + 3);
        acc = acc << 6 | (uint32_t)v;
        if (++chars % 4 == 0) {
            buf[o++] = (uint8_t)(acc >> 16);
            buf[o++] = (uint8_t)(acc >> 8);
            buf[o++] = (uint8_t)acc;
            acc = 0;
        }
    }
    switch (chars % 4) {
    case 1:
        goto bad;
    case 2:
        buf[o++] = (uint8_t)(acc >> 4);
        break;
    case 3:
        buf[o++] = (uint8_t)(acc >> 10);
        buf[o++] = (uint8_t)(acc >> 2);
        break;
    }
    if (pad > 2 || (pad > 0 && (chars + pad) % 4 != 0))
        goto bad;
    if (o == 0) {
        free(buf);
        buf = NULL;
    }
    *out = buf;
    *outlen = o;
    return 0;
bad:
    free(buf);
    return -1;
}

char *jpb_base64_encode(const uint8_t *in, size_t n)
{
    char *out = xmalloc(b64_encoded_len(n) + 1);
    b64_encode(in, n, out);
    out[b64_encoded_len(n)] = '\0';
    return out;
}

int jpb_base64_decode(const char *s, size_t n, uint8_t **out, size_t *outlen)
{
    return b64_decode(s, n, out, outlen);
}

/* Shortest decimal text that reads back (strtod, then to float when
 * is_float) as the same value; integral values get ".0" so that they stay
 * JSON reals. Only for finite values. */
static bool reads_back(double d, bool is_float, int p, char *buf, size_t size)
{
    snprintf(buf, size, "%.*g", p, d);
    double back = strtod(buf, NULL);
    return is_float ? (float)back == (float)d : back == d;
}

static void format_real(double d, bool is_float, char *buf, size_t size)
{
    /* If p digits read back, so do p + 1 (the nearest decimal of p + 1
     * digits is at least as near as that of p), so the shortest is found
     * by bisection: for a double, 16 digits first, then 15 or 17. A
     * status update's timestamp needs 16 or 17; printf and strtod of a
     * double cost about a microsecond each. */
    int lo = is_float ? 6 : 15, hi = is_float ? 9 : 17;
    char best[64]; /* hi's text, once hi is known to read back */
    bool found = false;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (reads_back(d, is_float, mid, buf, size)) {
            hi = mid;
            size_t n = strlen(buf);
            found = n < sizeof(best);
            if (found)
                memcpy(best, buf, n + 1);
        } else {
            lo = mid + 1;
        }
    }
    if (found)
        memcpy(buf, best, strlen(best) + 1); /* it came from buf */
    else if (!reads_back(d, is_float, hi, buf, size))
        snprintf(buf, size, "%.17g", d);
    if (strpbrk(buf, ".eE") == NULL) {
        size_t n = strlen(buf);
        if (n + 2 < size)
            memcpy(buf + n, ".0", 3);
    }
}

/* ------------------------------------------------------------------------ */
/* JSON -> message                                                          */

struct jctx {
    struct path path;
    char *err;
    size_t errlen;
};

static int jfail(struct jctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int jfail(struct jctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_error(c->err, c->errlen, c->path.buf, fmt, ap);
    va_end(ap);
    return -1;
}

const char *jpb_json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "object";
    case JSON_ARRAY:
        return "array";
    case JSON_STRING:
        return "string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "boolean";
    case JSON_NULL:
        return "null";
    }
    return "value";
}

static ProtobufCMessage *new_message(const ProtobufCMessageDescriptor *desc)
{
    ProtobufCMessage *m = xmalloc(desc->sizeof_message);
    protobuf_c_message_init(desc, m);
    return m;
}

/* Parse a decimal integer string (optional '-', then digits) into a sign and
 * magnitude; 0, or -1 if it is not one. *overflow is set when the magnitude
 * exceeds UINT64_MAX. */
static int parse_decimal(const char *s, size_t n, bool *neg, uint64_t *mag,
                         bool *overflow)
{
    size_t i = 0;
    *neg = false;
    *overflow = false;
    *mag = 0;
    if (i < n && s[i] == '-') {
        *neg = true;
        i++;
    }
    if (i == n)
        return -1;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        unsigned d = (unsigned)(s[i] - '0');
        if (*mag > (UINT64_MAX - d) / 10)
            *overflow = true;
        else
            *mag = *mag * 10 + d;
    }
    return 0;
}

/* A JSON integer value for an integer field of type t: a JSON integer, a
 * real with an integral value, or (64-bit types) a decimal string. Signed
 * results in *sv, unsigned in *uv, range-checked against [min, max] (signed)
 * or [0, umax] (unsigned). */
static int json_get_integer(struct jctx *c, const json_t *v, ProtobufCType t,
                            bool is_signed, int64_t min, int64_t max,
                            uint64_t umax, int64_t *sv, uint64_t *uv)
{
    const char *tn = type_name(t);
    bool wide = t == PROTOBUF_C_TYPE_INT64 || t == PROTOBUF_C_TYPE_SINT64 ||
                t == PROTOBUF_C_TYPE_SFIXED64 || t == PROTOBUF_C_TYPE_UINT64 ||
                t == PROTOBUF_C_TYPE_FIXED64;
    bool neg;
    uint64_t mag;
    char shown[48];

    if (json_is_integer(v)) {
        json_int_t i = json_integer_value(v);
        snprintf(shown, sizeof(shown), "%" JSON_INTEGER_FORMAT, i);
        neg = i < 0;
        mag = neg ? (uint64_t)(-(i + 1)) + 1 : (uint64_t)i;
    } else if (json_is_real(v)) {
        double d = json_real_value(v);
        format_real(d, false, shown, sizeof(shown));
        if (!isfinite(d) || d != trunc(d))
            return jfail(c, "value %s is not an integer", shown);
        if (d <= -18446744073709551616.0 || d >= 18446744073709551616.0)
            return jfail(c, "value %s out of range for %s", shown, tn);
        neg = d < 0;
        mag = (uint64_t)(neg ? -d : d);
    } else if (json_is_string(v) && wide) {
        const char *s = json_string_value(v);
        size_t n = json_string_length(v);
        bool overflow;
        if (parse_decimal(s, n, &neg, &mag, &overflow) != 0)
            return jfail(c, "invalid integer \"%.40s\"", s);
        snprintf(shown, sizeof(shown), "%.40s", s);
        if (overflow)
            return jfail(c, "value %s out of range for %s", shown, tn);
    } else {
        return jfail(c, "expected an integer, got %s", jpb_json_kind(v));
    }

    if (is_signed) {
        int64_t r;
        if (neg) {
            if (mag > (uint64_t)INT64_MAX + 1)
                return jfail(c, "value %s out of range for %s", shown, tn);
            r = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
        } else {
            if (mag > (uint64_t)INT64_MAX)
                return jfail(c, "value %s out of range for %s", shown, tn);
            r = (int64_t)mag;
        }
        if (r < min || r > max)
            return jfail(c, "value %s out of range for %s", shown, tn);
        *sv = r;
    } else {
        if ((neg && mag != 0) || mag > umax)
            return jfail(c, "value %s out of range for %s", shown, tn);
        *uv = mag;
    }
    return 0;
}

/* A float or double: any JSON number, or "NaN", "Infinity", "-Infinity". */
static int json_get_real(struct jctx *c, const json_t *v, ProtobufCType t,
                         double *out)
{
    if (json_is_integer(v)) {
        *out = (double)json_integer_value(v);
    } else if (json_is_real(v)) {
        *out = json_real_value(v);
    } else if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if (strcmp(s, "NaN") == 0)
            *out = NAN;
        else if (strcmp(s, "Infinity") == 0)
            *out = INFINITY;
        else if (strcmp(s, "-Infinity") == 0)
            *out = -INFINITY;
        else
            return jfail(c, "expected a number, got string");
        if (strlen(s) != json_string_length(v))
            return jfail(c, "expected a number, got string");
        return 0;
    } else {
        return jfail(c, "expected a number, got %s", jpb_json_kind(v));
    }
    /* Doubles that round to FLT_MAX are still floats; from the midpoint
     * between FLT_MAX and 2^128 on they are not. */
    if (t == PROTOBUF_C_TYPE_FLOAT && fabs(*out) >= 0x1.ffffffp+127) {
        char shown[40];
        format_real(*out, false, shown, sizeof(shown));
        return jfail(c, "value %s out of range for float", shown);
    }
    return 0;
}

static int json_get_enum(struct jctx *c, const json_t *v,
                         const ProtobufCEnumDescriptor *ed, int *out)
{
    const ProtobufCEnumValue *ev;
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        ev = strlen(s) == json_string_length(v)
                 ? protobuf_c_enum_descriptor_get_value_by_name(ed, s)
                 : NULL;
        if (ev == NULL)
            return jfail(c, "unknown enum value \"%.64s\"", s);
    } else if (json_is_integer(v)) {
        json_int_t i = json_integer_value(v);
        ev = i >= INT_MIN && i <= INT_MAX
                 ? protobuf_c_enum_descriptor_get_value(ed, (int)i)
                 : NULL;
        if (ev == NULL)
            return jfail(c, "unknown enum value %" JSON_INTEGER_FORMAT, i);
    } else {
        return jfail(c, "expected an enum name or number, got %s",
                     jpb_json_kind(v));
    }
    *out = ev->value;
    return 0;
}

static int fill_message(struct jctx *c, const ProtobufCMessageDescriptor *desc,
                        ProtobufCMessage *msg, const json_t *obj, int depth);

/* Convert one JSON value v into the storage of one value of field f at slot
 * (a struct member or a repeated array element). On failure slot holds
 * nothing that free_unpacked would mis-free. */
static int set_value(struct jctx *c, const ProtobufCFieldDescriptor *f,
                     const json_t *v, void *slot, int depth)
{
    int64_t sv = 0;
    uint64_t uv = 0;
    double d = 0;

    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
        if (json_get_integer(c, v, f->type, true, INT32_MIN, INT32_MAX, 0, &sv,
                             &uv) != 0)
            return -1;
        *(int32_t *)slot = (int32_t)sv;
        return 0;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
        if (json_get_integer(c, v, f->type, true, INT64_MIN, INT64_MAX, 0, &sv,
                             &uv) != 0)
            return -1;
        *(int64_t *)slot = sv;
        return 0;
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
        if (json_get_integer(c, v, f->type, false, 0, 0, UINT32_MAX, &sv,
                             &uv) != 0)
            return -1;
        *(uint32_t *)slot = (uint32_t)uv;
        return 0;
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        if (json_get_integer(c, v, f->type, false, 0, 0, UINT64_MAX, &sv,
                             &uv) != 0)
            return -1;
        *(uint64_t *)slot = uv;
        return 0;
    case PROTOBUF_C_TYPE_FLOAT:
        if (json_get_real(c, v, f->type, &d) != 0)
            return -1;
        *(float *)slot = (float)d;
        return 0;
    case PROTOBUF_C_TYPE_DOUBLE:
        if (json_get_real(c, v, f->type, &d) != 0)
            return -1;
        *(double *)slot = d;
        return 0;
    case PROTOBUF_C_TYPE_BOOL:
        if (!json_is_boolean(v))
            return jfail(c, "expected a boolean, got %s", jpb_json_kind(v));
        *(protobuf_c_boolean *)slot = json_is_true(v) ? 1 : 0;
        return 0;
    case PROTOBUF_C_TYPE_ENUM: {
        int e = 0;
        if (json_get_enum(c, v, f->descriptor, &e) != 0)
            return -1;
        *(int *)slot = e;
        return 0;
    }
    case PROTOBUF_C_TYPE_STRING: {
        if (!json_is_string(v))
            return jfail(c, "expected a string, got %s", jpb_json_kind(v));
        const char *s = json_string_value(v);
        size_t n = json_string_length(v);
        if (strlen(s) != n)
            return jfail(c, "string contains a NUL character");
        *(char **)slot = xstrndup(s, n);
        return 0;
    }
    case PROTOBUF_C_TYPE_BYTES: {
        if (!json_is_string(v))
            return jfail(c, "expected a base64 string, got %s",
                         jpb_json_kind(v));
        ProtobufCBinaryData bd;
        if (b64_decode(json_string_value(v), json_string_length(v), &bd.data,
                       &bd.len) != 0)
            return jfail(c, "invalid base64");
        *(ProtobufCBinaryData *)slot = bd;
        return 0;
    }
    case PROTOBUF_C_TYPE_MESSAGE: {
        if (!json_is_object(v))
            return jfail(c, "expected an object, got %s", jpb_json_kind(v));
        if (depth + 1 > JPB_MAX_DEPTH)
            return jfail(c, "message nesting deeper than %d", JPB_MAX_DEPTH);
        const ProtobufCMessageDescriptor *sd = f->descriptor;
        ProtobufCMessage *sub = new_message(sd);
        *(ProtobufCMessage **)slot = sub; /* owned by the parent from now */
        return fill_message(c, sd, sub, v, depth + 1);
    }
    }
    return jfail(c, "unsupported field type %d", (int)f->type);
}

/* A string-keyed map field from a JSON object: one entry message per key,
 * in the object's order. A null value leaves the entry's value unset. */
static int set_map(struct jctx *c, ProtobufCMessage *msg,
                   const ProtobufCFieldDescriptor *f, const json_t *v,
                   int depth)
{
    if (!json_is_object(v))
        return jfail(c, "expected an object, got %s", jpb_json_kind(v));
    size_t n = json_object_size(v);
    if (n == 0)
        return 0;
    if (depth + 1 > JPB_MAX_DEPTH)
        return jfail(c, "message nesting deeper than %d", JPB_MAX_DEPTH);
    const ProtobufCMessageDescriptor *ed = f->descriptor;
    const ProtobufCFieldDescriptor *kf = &ed->fields[0], *vf = &ed->fields[1];
    ProtobufCMessage **arr = xcalloc(n, sizeof(*arr));
    size_t *count = MEMBER_PTR(msg, f->quantifier_offset);
    *(ProtobufCMessage ***)MEMBER_PTR(msg, f->offset) = arr;
    *count = 0;

    const char *key;
    size_t key_len;
    json_t *val;
    json_object_keylen_foreach((json_t *)v, key, key_len, val)
    {
        if (*count == n)
            break; /* cannot happen: the object is not changing */
        ProtobufCMessage *entry = new_message(ed);
        arr[(*count)++] = entry;
        size_t mark = path_push_key(&c->path, key);
        if (strlen(key) != key_len)
            return jfail(c, "map key contains a NUL character");
        *(char **)MEMBER_PTR(entry, kf->offset) = xstrndup(key, key_len);
        if (!json_is_null(val)) {
            if (set_value(c, vf, val, MEMBER_PTR(entry, vf->offset),
                          depth + 1) != 0)
                return -1;
            if (vf->quantifier_offset != 0)
                *(protobuf_c_boolean *)MEMBER_PTR(entry,
                                                  vf->quantifier_offset) = 1;
        }
        path_pop(&c->path, mark);
    }
    return 0;
}

static int set_field(struct jctx *c, ProtobufCMessage *msg,
                     const ProtobufCFieldDescriptor *f, const json_t *v,
                     int depth)
{
    void *member = MEMBER_PTR(msg, f->offset);

    if (f->label == PROTOBUF_C_LABEL_REPEATED &&
        is_string_map(msg->descriptor, f))
        return set_map(c, msg, f, v, depth);
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
        if (!json_is_array(v))
            return jfail(c, "expected an array, got %s", jpb_json_kind(v));
        size_t n = json_array_size(v);
        if (n == 0)
            return 0;
        size_t siz = elt_size(f->type);
        char *arr = xcalloc(n, siz);
        size_t *count = MEMBER_PTR(msg, f->quantifier_offset);
        *(void **)member = arr;
        *count = 0;
        for (size_t i = 0; i < n; i++) {
            const json_t *e = json_array_get(v, i);
            /* Counted before filling: a zeroed element frees cleanly. */
            (*count)++;
            size_t mark = path_push_index(&c->path, i);
            if (json_is_null(e))
                return jfail(c, "null is not allowed in a repeated field");
            if (set_value(c, f, e, arr + i * siz, depth) != 0)
                return -1;
            path_pop(&c->path, mark);
        }
        return 0;
    }

    if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
        uint32_t *which = MEMBER_PTR(msg, f->quantifier_offset);
        if (*which != 0) {
            const ProtobufCFieldDescriptor *other =
                protobuf_c_message_descriptor_get_field(msg->descriptor,
                                                        *which);
            return jfail(c, "another field of its oneof is already set (%s)",
                         other != NULL ? other->name : "?");
        }
        /* Cleared before it is marked, so a failed conversion leaves
         * nothing for free_unpacked to mis-free. */
        memset(member, 0, elt_size(f->type));
        *which = f->id;
        return set_value(c, f, v, member, depth);
    }

    if (set_value(c, f, v, member, depth) != 0)
        return -1;
    if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->quantifier_offset != 0)
        *(protobuf_c_boolean *)MEMBER_PTR(msg, f->quantifier_offset) = 1;
    return 0;
}

/* Fill msg (initialised, of type desc, depth levels deep) from the JSON
 * object obj. */
static int fill_message(struct jctx *c, const ProtobufCMessageDescriptor *desc,
                        ProtobufCMessage *msg, const json_t *obj, int depth)
{
    struct field_set seen; /* for the required-field check */
    fields_init(&seen, desc);

    int rc = -1;
    const char *key;
    size_t key_len;
    json_t *v;
    json_object_keylen_foreach((json_t *)obj, key, key_len, v)
    {
        if (json_is_null(v) || strlen(key) != key_len)
            continue;
        const ProtobufCFieldDescriptor *f =
            protobuf_c_message_descriptor_get_field_by_name(desc, key);
        if (f == NULL)
            continue; /* unknown keys are ignored, as Mesos does */
        size_t mark = path_push_name(&c->path, f->name);
        if (set_field(c, msg, f, v, depth) != 0)
            goto out;
        path_pop(&c->path, mark);
        fields_mark(&seen, desc, f);
    }
    const ProtobufCFieldDescriptor *missing =
        fields_missing_required(&seen, desc);
    if (missing != NULL) {
        path_push_name(&c->path, missing->name);
        jfail(c, "required field missing");
        goto out;
    }
    rc = 0;
out:
    fields_fini(&seen);
    return rc;
}

ProtobufCMessage *jpb_from_json(const ProtobufCMessageDescriptor *desc,
                                const json_t *json, char *err, size_t errlen)
{
    struct jctx c = {.err = err, .errlen = errlen};
    if (json == NULL || !json_is_object(json)) {
        jfail(&c, "expected an object, got %s",
              json == NULL ? "nothing" : jpb_json_kind(json));
        return NULL;
    }
    ProtobufCMessage *msg = new_message(desc);
    if (fill_message(&c, desc, msg, json, 1) != 0) {
        jpb_free(msg);
        return NULL;
    }
    return msg;
}

/* ------------------------------------------------------------------------ */
/* JSON text -> message without a tree                                      */

/* jpb_from_json_text first reads the text straight into the message, with
 * no jansson tree in between: building the tree (a hash table per object,
 * a node per value) and walking it cost most of the decoding of a JSON
 * framework's calls (docs/performance.md, "Per request"). This reader
 * covers the calls clients send: ASCII strings with the short escapes,
 * plain numbers, objects and arrays. It gives up, and the text is read
 * again by jansson and jpb_from_json, on anything it is not sure to read
 * exactly as they would: a \u escape or a byte above 0x7f (jansson checks
 * UTF-8), an integer field given a fraction, an exponent or more than 18
 * digits, a number in a string, a map field, a null in an array, a
 * duplicate key, a missing required field, nesting past 32 levels in an
 * unknown field, and every error. So the result, and every error message,
 * is the general path's; only the cost of the common case changes
 * (test_json_pb compares the two on a table of inputs). */

enum {
    FAST_MAX_KEYS = 64,       /* keys of one object it checks for duplicates */
    FAST_MAX_NAME = 128,      /* longest key or enum name it looks up */
    FAST_MAX_SKIP_DEPTH = 32, /* nesting of an unknown field's value */
};

struct fast {
    const char *p, *end;
};

/* The keys of one object so far, to refuse duplicates as
 * JSON_REJECT_DUPLICATES does (keys are compared raw: escaped ones are
 * given up on). */
struct fast_keys {
    const char *k[FAST_MAX_KEYS];
    size_t n[FAST_MAX_KEYS];
    size_t count;
};

static bool fast_key_new(struct fast_keys *ks, const char *k, size_t n)
{
    if (ks->count == FAST_MAX_KEYS)
        return false;
    for (size_t i = 0; i < ks->count; i++)
        if (ks->n[i] == n && memcmp(ks->k[i], k, n) == 0)
            return false;
    ks->k[ks->count] = k;
    ks->n[ks->count++] = n;
    return true;
}

static void fast_ws(struct fast *x)
{
    while (x->p < x->end &&
           (*x->p == ' ' || *x->p == '\t' || *x->p == '\n' || *x->p == '\r'))
        x->p++;
}

/* The next byte after white space, or -1 at the end. */
static int fast_peek(struct fast *x)
{
    fast_ws(x);
    return x->p < x->end ? (unsigned char)*x->p : -1;
}

static bool fast_eat(struct fast *x, char ch)
{
    if (fast_peek(x) != (unsigned char)ch)
        return false;
    x->p++;
    return true;
}

static bool fast_lit(struct fast *x, const char *lit, size_t n)
{
    if ((size_t)(x->end - x->p) < n || memcmp(x->p, lit, n) != 0)
        return false;
    x->p += n;
    return true;
}

/* A string at x->p (the opening quote): its raw bytes between the quotes
 * in *s, *n (OUT), and whether it holds an escape (OUT). Only printable
 * ASCII and the escapes \" \\ \/ \b \f \n \r \t. */
static bool fast_string(struct fast *x, const char **s, size_t *n,
                        bool *escaped)
{
    if (x->p >= x->end || *x->p != '"')
        return false;
    const char *q = ++x->p;
    bool esc = false;
    while (q < x->end && *q != '"') {
        unsigned char ch = (unsigned char)*q;
        if (ch < 0x20 || ch >= 0x80)
            return false;
        if (ch == '\\') {
            if (q + 1 >= x->end || strchr("\"\\/bfnrt", q[1]) == NULL ||
                q[1] == '\0')
                return false;
            esc = true;
            q += 2;
            continue;
        }
        q++;
    }
    if (q >= x->end)
        return false;
    *s = x->p;
    *n = (size_t)(q - x->p);
    *escaped = esc;
    x->p = q + 1;
    return true;
}

/* A copy of a string's raw bytes with its escapes replaced (malloc'd,
 * NUL-terminated). */
static char *fast_unescape(const char *s, size_t n)
{
    char *out = xmalloc(n + 1), *o = out;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\') {
            *o++ = s[i];
            continue;
        }
        switch (s[++i]) {
        case 'b':
            *o++ = '\b';
            break;
        case 'f':
            *o++ = '\f';
            break;
        case 'n':
            *o++ = '\n';
            break;
        case 'r':
            *o++ = '\r';
            break;
        case 't':
            *o++ = '\t';
            break;
        default: /* " \ / */
            *o++ = s[i];
            break;
        }
    }
    *o = '\0';
    return out;
}

/* A number as JSON writes it: its text in *s, *n (OUT), and whether it is
 * an integer (no fraction, no exponent) (OUT). */
static bool fast_number(struct fast *x, const char **s, size_t *n,
                        bool *integer)
{
    const char *q = x->p, *e = x->end;
    bool in = true;
    if (q < e && *q == '-')
        q++;
    if (q < e && *q == '0') {
        q++;
    } else if (q < e && *q >= '1' && *q <= '9') {
        while (q < e && *q >= '0' && *q <= '9')
            q++;
    } else {
        return false;
    }
    if (q < e && *q == '.') {
        in = false;
        q++;
        if (q >= e || *q < '0' || *q > '9')
            return false;
        while (q < e && *q >= '0' && *q <= '9')
            q++;
    }
    if (q < e && (*q == 'e' || *q == 'E')) {
        in = false;
        q++;
        if (q < e && (*q == '+' || *q == '-'))
            q++;
        if (q >= e || *q < '0' || *q > '9')
            return false;
        while (q < e && *q >= '0' && *q <= '9')
            q++;
    }
    *s = x->p;
    *n = (size_t)(q - x->p);
    *integer = in;
    x->p = q;
    return true;
}

/* An integer of at most 18 digits (so that it is exact in an int64_t and
 * within jansson's json_int_t). */
static bool fast_int(struct fast *x, int64_t *v)
{
    const char *s;
    size_t n;
    bool integer;
    if (!fast_number(x, &s, &n, &integer) || !integer)
        return false;
    bool neg = s[0] == '-';
    size_t i = neg ? 1 : 0;
    if (n - i > 18)
        return false;
    int64_t r = 0;
    for (; i < n; i++)
        r = r * 10 + (s[i] - '0');
    *v = neg ? -r : r;
    return true;
}

/* Any number, as jansson reads it into a double field: an integer through
 * json_int_t, anything else with strtod (overflow refused). */
static bool fast_real(struct fast *x, double *d)
{
    const char *save = x->p;
    int64_t v;
    if (fast_int(x, &v)) {
        *d = (double)v;
        return true;
    }
    x->p = save;
    const char *s;
    size_t n;
    bool integer;
    char buf[64];
    if (!fast_number(x, &s, &n, &integer) || integer || n >= sizeof(buf))
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    *d = strtod(buf, NULL);
    return isfinite(*d);
}

static bool fast_skip(struct fast *x, int depth);

/* The members of an object or the elements of an array at x->p (after
 * white space), for a value that is skipped. */
static bool fast_skip_container(struct fast *x, int depth)
{
    bool object = *x->p == '{';
    char close = object ? '}' : ']';
    struct fast_keys keys = {.count = 0};
    x->p++;
    if (fast_eat(x, close))
        return true;
    for (;;) {
        if (object) {
            const char *k;
            size_t kn;
            bool esc;
            if (fast_peek(x) != '"' || !fast_string(x, &k, &kn, &esc) || esc ||
                !fast_key_new(&keys, k, kn) || !fast_eat(x, ':'))
                return false;
        }
        if (!fast_skip(x, depth + 1))
            return false;
        if (fast_eat(x, close))
            return true;
        if (!fast_eat(x, ','))
            return false;
    }
}

/* Any JSON value (of a field this message does not have). */
static bool fast_skip(struct fast *x, int depth)
{
    const char *s;
    size_t n;
    bool flag;
    if (depth > FAST_MAX_SKIP_DEPTH)
        return false;
    switch (fast_peek(x)) {
    case '{':
    case '[':
        return fast_skip_container(x, depth);
    case '"':
        return fast_string(x, &s, &n, &flag);
    case 't':
        return fast_lit(x, "true", 4);
    case 'f':
        return fast_lit(x, "false", 5);
    case 'n':
        return fast_lit(x, "null", 4);
    default:
        return fast_number(x, &s, &n, &flag);
    }
}

/* A short string without escapes as a NUL-terminated name in buf. */
static bool fast_name(struct fast *x, char *buf, size_t size)
{
    const char *s;
    size_t n;
    bool esc;
    if (fast_peek(x) != '"' || !fast_string(x, &s, &n, &esc) || esc ||
        n >= size)
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return true;
}

static bool fast_message(struct fast *x, const ProtobufCMessageDescriptor *desc,
                         ProtobufCMessage *msg, int depth);

/* One value of field f into slot, as set_value converts it. */
static bool fast_value(struct fast *x, const ProtobufCFieldDescriptor *f,
                       void *slot, int depth)
{
    int64_t v;
    double d;
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
        if (!fast_int(x, &v) || v < INT32_MIN || v > INT32_MAX)
            return false;
        *(int32_t *)slot = (int32_t)v;
        return true;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
        if (!fast_int(x, &v))
            return false;
        *(int64_t *)slot = v;
        return true;
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
        if (!fast_int(x, &v) || v < 0 || v > UINT32_MAX)
            return false;
        *(uint32_t *)slot = (uint32_t)v;
        return true;
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        if (!fast_int(x, &v) || v < 0)
            return false;
        *(uint64_t *)slot = (uint64_t)v;
        return true;
    case PROTOBUF_C_TYPE_FLOAT:
        if (!fast_real(x, &d) || fabs(d) >= 0x1.ffffffp+127)
            return false;
        *(float *)slot = (float)d;
        return true;
    case PROTOBUF_C_TYPE_DOUBLE:
        if (!fast_real(x, &d))
            return false;
        *(double *)slot = d;
        return true;
    case PROTOBUF_C_TYPE_BOOL:
        if (fast_lit(x, "true", 4))
            *(protobuf_c_boolean *)slot = 1;
        else if (fast_lit(x, "false", 5))
            *(protobuf_c_boolean *)slot = 0;
        else
            return false;
        return true;
    case PROTOBUF_C_TYPE_ENUM: {
        const ProtobufCEnumValue *ev;
        char name[FAST_MAX_NAME];
        if (*x->p == '"') {
            if (!fast_name(x, name, sizeof(name)))
                return false;
            ev = protobuf_c_enum_descriptor_get_value_by_name(f->descriptor,
                                                              name);
        } else {
            if (!fast_int(x, &v) || v < INT_MIN || v > INT_MAX)
                return false;
            ev = protobuf_c_enum_descriptor_get_value(f->descriptor, (int)v);
        }
        if (ev == NULL)
            return false;
        *(int *)slot = ev->value;
        return true;
    }
    case PROTOBUF_C_TYPE_STRING: {
        const char *s;
        size_t n;
        bool esc;
        if (!fast_string(x, &s, &n, &esc))
            return false;
        *(char **)slot = esc ? fast_unescape(s, n) : xstrndup(s, n);
        return true;
    }
    case PROTOBUF_C_TYPE_BYTES: {
        const char *s;
        size_t n;
        bool esc;
        ProtobufCBinaryData bd;
        if (!fast_string(x, &s, &n, &esc) || esc ||
            b64_decode(s, n, &bd.data, &bd.len) != 0)
            return false;
        *(ProtobufCBinaryData *)slot = bd;
        return true;
    }
    case PROTOBUF_C_TYPE_MESSAGE: {
        if (*x->p != '{' || depth + 1 > JPB_MAX_DEPTH)
            return false;
        ProtobufCMessage *sub = new_message(f->descriptor);
        *(ProtobufCMessage **)slot = sub; /* owned by the parent from now */
        return fast_message(x, f->descriptor, sub, depth + 1);
    }
    }
    return false;
}

/* Field f of msg from the value at x->p (after white space, not null), as
 * set_field sets it. */
static bool fast_field(struct fast *x, ProtobufCMessage *msg,
                       const ProtobufCFieldDescriptor *f, int depth)
{
    void *member = MEMBER_PTR(msg, f->offset);
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
        if (is_string_map(msg->descriptor, f) || *x->p != '[')
            return false;
        x->p++;
        if (fast_eat(x, ']'))
            return true;
        size_t siz = elt_size(f->type), cap = 0;
        size_t *count = MEMBER_PTR(msg, f->quantifier_offset);
        *count = 0;
        for (;;) {
            int ch = fast_peek(x);
            if (ch < 0 || ch == 'n')
                return false;
            if (*count == cap) {
                cap = cap ? 2 * cap : 4;
                char *arr = xrealloc(*(void **)member, cap * siz);
                memset(arr + *count * siz, 0, (cap - *count) * siz);
                *(void **)member = arr;
            }
            /* Counted before filling: a zeroed element frees cleanly. */
            char *slot = *(char **)member + (*count)++ * siz;
            if (!fast_value(x, f, slot, depth))
                return false;
            if (fast_eat(x, ']'))
                return true;
            if (!fast_eat(x, ','))
                return false;
        }
    }
    if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
        uint32_t *which = MEMBER_PTR(msg, f->quantifier_offset);
        if (*which != 0)
            return false;
        memset(member, 0, elt_size(f->type));
        *which = f->id;
        return fast_value(x, f, member, depth);
    }
    if (!fast_value(x, f, member, depth))
        return false;
    if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->quantifier_offset != 0)
        *(protobuf_c_boolean *)MEMBER_PTR(msg, f->quantifier_offset) = 1;
    return true;
}

/* msg (initialised, of type desc) from the object at x->p, as
 * fill_message fills it. */
static bool fast_message(struct fast *x, const ProtobufCMessageDescriptor *desc,
                         ProtobufCMessage *msg, int depth)
{
    struct fast_keys keys = {.count = 0};
    struct field_set seen;
    bool ok = false;
    fields_init(&seen, desc);
    x->p++; /* '{' */
    if (fast_eat(x, '}'))
        goto end;
    for (;;) {
        const char *k;
        size_t kn;
        bool esc;
        char name[FAST_MAX_NAME];
        if (fast_peek(x) != '"' || !fast_string(x, &k, &kn, &esc) || esc ||
            kn >= sizeof(name) || !fast_key_new(&keys, k, kn) ||
            !fast_eat(x, ':') || fast_peek(x) < 0)
            goto out;
        memcpy(name, k, kn);
        name[kn] = '\0';
        const ProtobufCFieldDescriptor *f =
            protobuf_c_message_descriptor_get_field_by_name(desc, name);
        if (*x->p == 'n') {
            if (!fast_lit(x, "null", 4))
                goto out; /* a null field is left unset */
        } else if (f == NULL) {
            if (!fast_skip(x, depth))
                goto out; /* unknown keys are ignored, as Mesos does */
        } else {
            if (!fast_field(x, msg, f, depth))
                goto out;
            fields_mark(&seen, desc, f);
        }
        if (fast_eat(x, '}'))
            break;
        if (!fast_eat(x, ','))
            goto out;
    }
end:
    ok = fields_missing_required(&seen, desc) == NULL;
out:
    fields_fini(&seen);
    return ok;
}

ProtobufCMessage *
jpb_fast_from_json_text(const ProtobufCMessageDescriptor *desc,
                        const char *text, size_t len)
{
    if (text == NULL)
        return NULL;
    struct fast x = {text, text + len};
    if (fast_peek(&x) != '{')
        return NULL;
    ProtobufCMessage *msg = new_message(desc);
    if (!fast_message(&x, desc, msg, 1) || fast_peek(&x) >= 0) {
        jpb_free(msg);
        return NULL;
    }
    return msg;
}

ProtobufCMessage *jpb_from_json_text(const ProtobufCMessageDescriptor *desc,
                                     const char *text, size_t len, char *err,
                                     size_t errlen)
{
    ProtobufCMessage *fast = jpb_fast_from_json_text(desc, text, len);
    if (fast != NULL)
        return fast;
    json_error_t je;
    json_t *j = json_loadb(text != NULL ? text : "", text != NULL ? len : 0,
                           JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
    if (j == NULL) {
        set_error_f(err, errlen, NULL, "invalid JSON at line %d, column %d: %s",
                    je.line, je.column, je.text);
        return NULL;
    }
    ProtobufCMessage *msg = jpb_from_json(desc, j, err, errlen);
    json_decref(j);
    return msg;
}

/* ------------------------------------------------------------------------ */
/* Message -> JSON (a json_t tree or compact text)                          */

struct out {
    bool text;
    /* text mode */
    char *buf;
    size_t len, cap;
    /* tree mode */
    json_t *root;
    json_t **stack; /* open containers, innermost last */
    size_t depth, stack_cap;
    const char *key; /* pending object key */
    char *key_buf;   /* a cleaned-up map key, when one was needed */
};

static json_t *must(json_t *v)
{
    if (v == NULL) {
        fprintf(stderr, "offerd: out of memory building JSON\n");
        abort();
    }
    return v;
}

static void buf_reserve(struct out *o, size_t n)
{
    if (o->cap - o->len >= n)
        return;
    size_t cap = o->cap ? o->cap : 256;
    while (cap - o->len < n)
        cap *= 2;
    o->buf = xrealloc(o->buf, cap);
    o->cap = cap;
}

static void buf_put(struct out *o, const char *s, size_t n)
{
    buf_reserve(o, n);
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

static void buf_putc(struct out *o, char ch)
{
    buf_reserve(o, 1);
    o->buf[o->len++] = ch;
}

/* A comma before every value or key that is not first in its container. */
static void text_sep(struct out *o)
{
    if (o->len == 0)
        return;
    char last = o->buf[o->len - 1];
    if (last != '{' && last != '[' && last != ':')
        buf_putc(o, ',');
}

static void tree_add(struct out *o, json_t *v)
{
    if (o->depth == 0) {
        o->root = v;
        return;
    }
    json_t *top = o->stack[o->depth - 1];
    if (json_is_object(top))
        json_object_set_new_nocheck(top, o->key, v);
    else
        json_array_append_new(top, v);
}

static void out_open(struct out *o, bool object)
{
    if (o->text) {
        text_sep(o);
        buf_putc(o, object ? '{' : '[');
        return;
    }
    json_t *v = must(object ? json_object() : json_array());
    tree_add(o, v);
    if (o->depth == o->stack_cap) {
        o->stack_cap = o->stack_cap ? o->stack_cap * 2 : 16;
        o->stack = xreallocarray(o->stack, o->stack_cap, sizeof(*o->stack));
    }
    o->stack[o->depth++] = v;
}

static void out_close(struct out *o, bool object)
{
    if (o->text)
        buf_putc(o, object ? '}' : ']');
    else
        o->depth--;
}

/* Write s as a JSON string literal; bytes that are not UTF-8 become
 * U+FFFD. */
static void text_string(struct out *o, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    /* The characters JSON escapes with a letter (or themselves). */
    static const char short_escape['\\' + 1] = {
        ['"'] = '"',  ['\\'] = '\\', ['\b'] = 'b', ['\f'] = 'f',
        ['\n'] = 'n', ['\r'] = 'r',  ['\t'] = 't',
    };
    const uint8_t *u = (const uint8_t *)s;
    buf_reserve(o, n + 2);
    buf_putc(o, '"');
    size_t i = 0;
    while (i < n) {
        uint8_t ch = u[i];
        if (ch >= 0x80) {
            size_t k = utf8_seq_len(u + i, n - i);
            if (k == 0) {
                buf_put(o, "\xEF\xBF\xBD", 3);
                i++;
            } else {
                buf_put(o, s + i, k);
                i += k;
            }
            continue;
        }
        if (ch < sizeof(short_escape) && short_escape[ch] != 0) {
            char esc[2] = {'\\', short_escape[ch]};
            buf_put(o, esc, 2);
        } else if (ch < 0x20) {
            char esc[6] = {'\\', 'u', '0', '0', hex[ch >> 4], hex[ch & 15]};
            buf_put(o, esc, 6);
        } else {
            buf_putc(o, (char)ch);
        }
        i++;
    }
    buf_putc(o, '"');
}

static void out_key(struct out *o, const char *name)
{
    if (o->text) {
        text_sep(o);
        text_string(o, name, strlen(name));
        buf_putc(o, ':');
    } else {
        o->key = name;
    }
}

/* A copy of s (n bytes) with each byte that is not part of valid UTF-8
 * replaced by U+FFFD; NUL-terminated, its length in *outlen. */
static char *utf8_clean(const char *s, size_t n, size_t *outlen)
{
    char *fixed = xmalloc(n * 3 + 1);
    size_t len = 0, i = 0;
    while (i < n) {
        size_t k = utf8_seq_len((const uint8_t *)s + i, n - i);
        if (k == 0) {
            memcpy(fixed + len, "\xEF\xBF\xBD", 3);
            len += 3;
            i++;
        } else {
            memcpy(fixed + len, s + i, k);
            len += k;
            i += k;
        }
    }
    fixed[len] = '\0';
    *outlen = len;
    return fixed;
}

/* A key that is data (a map key), not a field name: in a tree it must be
 * valid UTF-8, so it is cleaned like a string value. */
static void out_map_key(struct out *o, const char *key)
{
    if (o->text) {
        out_key(o, key);
        return;
    }
    size_t n = strlen(key);
    if (utf8_valid((const uint8_t *)key, n)) {
        o->key = key;
        return;
    }
    free(o->key_buf);
    o->key_buf = utf8_clean(key, n, &n);
    o->key = o->key_buf;
}

static void out_string(struct out *o, const char *s, size_t n)
{
    if (o->text) {
        text_sep(o);
        text_string(o, s, n);
        return;
    }
    if (utf8_valid((const uint8_t *)s, n)) {
        tree_add(o, must(json_stringn_nocheck(s, n)));
        return;
    }
    /* Replace what is not UTF-8, as the text writer does. */
    size_t len;
    char *fixed = utf8_clean(s, n, &len);
    tree_add(o, must(json_stringn_nocheck(fixed, len)));
    free(fixed);
}

static void out_int(struct out *o, int64_t v)
{
    if (o->text) {
        char tmp[24];
        int n = snprintf(tmp, sizeof(tmp), "%" PRId64, v);
        text_sep(o);
        buf_put(o, tmp, (size_t)n);
    } else {
        tree_add(o, must(json_integer((json_int_t)v)));
    }
}

/* uint64 values above INT64_MAX do not fit a jansson integer: they are
 * written as decimal strings, which the decoder accepts for 64-bit fields. */
static void out_uint(struct out *o, uint64_t v)
{
    if (v <= (uint64_t)INT64_MAX) {
        out_int(o, (int64_t)v);
        return;
    }
    char tmp[24];
    int n = snprintf(tmp, sizeof(tmp), "%" PRIu64, v);
    out_string(o, tmp, (size_t)n);
}

/* NaN and the infinities have no JSON number: they are written as the
 * strings "NaN", "Infinity" and "-Infinity" (proto3's JSON mapping), which
 * the decoder accepts for float and double fields. */
static void out_real(struct out *o, double d, bool is_float)
{
    if (isnan(d)) {
        out_string(o, "NaN", 3);
        return;
    }
    if (isinf(d)) {
        if (d > 0)
            out_string(o, "Infinity", 8);
        else
            out_string(o, "-Infinity", 9);
        return;
    }
    char tmp[40];
    if (o->text) {
        format_real(d, is_float, tmp, sizeof(tmp));
        text_sep(o);
        buf_put(o, tmp, strlen(tmp));
    } else if (is_float) {
        /* The double the text form reads back as, so both forms agree. */
        format_real(d, true, tmp, sizeof(tmp));
        tree_add(o, must(json_real(strtod(tmp, NULL))));
    } else {
        tree_add(o, must(json_real(d)));
    }
}

static void out_bool(struct out *o, bool b)
{
    if (o->text) {
        text_sep(o);
        if (b)
            buf_put(o, "true", 4);
        else
            buf_put(o, "false", 5);
    } else {
        tree_add(o, must(json_boolean(b)));
    }
}

static void out_null(struct out *o)
{
    if (o->text) {
        text_sep(o);
        buf_put(o, "null", 4);
    } else {
        tree_add(o, must(json_null()));
    }
}

static void out_bytes(struct out *o, const ProtobufCBinaryData *bd)
{
    size_t n = b64_encoded_len(bd->len);
    if (o->text) {
        text_sep(o);
        buf_reserve(o, n + 2);
        o->buf[o->len++] = '"';
        if (bd->len > 0)
            b64_encode(bd->data, bd->len, o->buf + o->len);
        o->len += n;
        o->buf[o->len++] = '"';
        return;
    }
    char *tmp = xmalloc(n + 1);
    if (bd->len > 0)
        b64_encode(bd->data, bd->len, tmp);
    tree_add(o, must(json_stringn_nocheck(tmp, n)));
    free(tmp);
}

/* Whether a non-repeated field counts as set, by protobuf-c's own rules
 * (those its pack uses). */
static bool field_is_set(const ProtobufCMessage *m,
                         const ProtobufCFieldDescriptor *f)
{
    const void *member = CMEMBER_PTR(m, f->offset);
    bool pointer =
        f->type == PROTOBUF_C_TYPE_STRING || f->type == PROTOBUF_C_TYPE_MESSAGE;

    if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
        if (*(const uint32_t *)CMEMBER_PTR(m, f->quantifier_offset) != f->id)
            return false;
        return !pointer || *(const void *const *)member != NULL;
    }
    switch (f->label) {
    case PROTOBUF_C_LABEL_REQUIRED:
        return !pointer || *(const void *const *)member != NULL;
    case PROTOBUF_C_LABEL_OPTIONAL:
        if (pointer) {
            const void *p = *(const void *const *)member;
            return p != NULL && p != f->default_value;
        }
        if (f->quantifier_offset != 0)
            return *(const protobuf_c_boolean *)CMEMBER_PTR(
                       m, f->quantifier_offset) != 0;
        return true;
    case PROTOBUF_C_LABEL_NONE: { /* proto3: set when not zero */
        if (f->type == PROTOBUF_C_TYPE_STRING) {
            const char *s = *(const char *const *)member;
            return s != NULL && s[0] != '\0';
        }
        if (f->type == PROTOBUF_C_TYPE_MESSAGE)
            return *(const void *const *)member != NULL;
        if (f->type == PROTOBUF_C_TYPE_BYTES)
            return ((const ProtobufCBinaryData *)member)->len > 0;
        static const uint8_t zero[8];
        return memcmp(member, zero, elt_size(f->type)) != 0;
    }
    case PROTOBUF_C_LABEL_REPEATED:
        break;
    }
    return false;
}

static void emit_message(struct out *o, const ProtobufCMessage *m);

struct map_key {
    const char *key;
    size_t index;
};

static void emit_value(struct out *o, const ProtobufCFieldDescriptor *f,
                       const void *p)
{
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
        out_int(o, *(const int32_t *)p);
        return;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
        out_int(o, *(const int64_t *)p);
        return;
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
        out_int(o, *(const uint32_t *)p);
        return;
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        out_uint(o, *(const uint64_t *)p);
        return;
    case PROTOBUF_C_TYPE_FLOAT:
        out_real(o, *(const float *)p, true);
        return;
    case PROTOBUF_C_TYPE_DOUBLE:
        out_real(o, *(const double *)p, false);
        return;
    case PROTOBUF_C_TYPE_BOOL:
        out_bool(o, *(const protobuf_c_boolean *)p != 0);
        return;
    case PROTOBUF_C_TYPE_ENUM: {
        int v = *(const int *)p;
        const ProtobufCEnumValue *ev =
            protobuf_c_enum_descriptor_get_value(f->descriptor, v);
        if (ev != NULL)
            out_string(o, ev->name, strlen(ev->name));
        else
            out_int(o, v); /* only in messages built in code */
        return;
    }
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = *(const char *const *)p;
        if (s == NULL)
            s = "";
        out_string(o, s, strlen(s));
        return;
    }
    case PROTOBUF_C_TYPE_BYTES:
        out_bytes(o, p);
        return;
    case PROTOBUF_C_TYPE_MESSAGE: {
        const ProtobufCMessage *sub = *(const ProtobufCMessage *const *)p;
        if (sub != NULL)
            emit_message(o, sub);
        else
            out_null(o);
        return;
    }
    }
    out_null(o);
}

static int cmp_entries(const void *a, const void *b)
{
    const struct map_key *x = a, *y = b;
    int r = strcmp(x->key, y->key);
    if (r != 0)
        return r;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* A string-keyed map as a JSON object. When a key repeats (possible in
 * protobuf input) the last entry wins, as protobuf parsers merge maps; an
 * unset value is written as null. */
static void emit_map(struct out *o, const ProtobufCFieldDescriptor *f,
                     const ProtobufCMessage *const *arr, size_t n)
{
    const ProtobufCMessageDescriptor *ed = f->descriptor;
    const ProtobufCFieldDescriptor *kf = &ed->fields[0], *vf = &ed->fields[1];
    bool *skip = NULL;
    if (n > 1) {
        /* Sorting finds repeated keys in n log n, not n^2. */
        struct map_key *keys = xcalloc(n, sizeof(*keys));
        for (size_t k = 0; k < n; k++) {
            const char *key =
                arr[k] != NULL
                    ? *(const char *const *)CMEMBER_PTR(arr[k], kf->offset)
                    : NULL;
            keys[k].key = key != NULL ? key : "";
            keys[k].index = k;
        }
        qsort(keys, n, sizeof(*keys), cmp_entries);
        skip = xcalloc(n, sizeof(*skip));
        for (size_t k = 0; k + 1 < n; k++)
            if (strcmp(keys[k].key, keys[k + 1].key) == 0)
                skip[keys[k].index] = true;
        free(keys);
    }
    out_open(o, true);
    for (size_t k = 0; k < n; k++) {
        if (arr[k] == NULL || (skip != NULL && skip[k]))
            continue;
        const char *key = *(const char *const *)CMEMBER_PTR(arr[k], kf->offset);
        out_map_key(o, key != NULL ? key : "");
        if (field_is_set(arr[k], vf))
            emit_value(o, vf, CMEMBER_PTR(arr[k], vf->offset));
        else
            out_null(o);
    }
    out_close(o, true);
    free(skip);
}

static void emit_message(struct out *o, const ProtobufCMessage *m)
{
    const ProtobufCMessageDescriptor *desc = m->descriptor;
    out_open(o, true);
    for (unsigned i = 0; i < desc->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &desc->fields[i];
        const void *member = CMEMBER_PTR(m, f->offset);
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(const size_t *)CMEMBER_PTR(m, f->quantifier_offset);
            const char *arr = *(const char *const *)member;
            if (n == 0 || arr == NULL)
                continue;
            if (is_string_map(desc, f)) {
                out_key(o, f->name);
                emit_map(o, f, (const ProtobufCMessage *const *)arr, n);
                continue;
            }
            size_t siz = elt_size(f->type);
            out_key(o, f->name);
            out_open(o, false);
            for (size_t k = 0; k < n; k++)
                emit_value(o, f, arr + k * siz);
            out_close(o, false);
        } else if (field_is_set(m, f)) {
            out_key(o, f->name);
            emit_value(o, f, member);
        }
    }
    out_close(o, true);
}

json_t *jpb_to_json(const ProtobufCMessage *msg)
{
    if (msg == NULL)
        return NULL;
    struct out o = {.text = false};
    emit_message(&o, msg);
    free(o.stack);
    free(o.key_buf);
    return o.root;
}

char *jpb_to_json_text(const ProtobufCMessage *msg, size_t *len)
{
    if (msg == NULL)
        return NULL;
    struct out o = {.text = true};
    emit_message(&o, msg);
    buf_putc(&o, '\0');
    if (len != NULL)
        *len = o.len - 1;
    return o.buf;
}

/* ------------------------------------------------------------------------ */
/* Protobuf wire format                                                     */

/* The scan's error: a reason, and the field path built from the innermost
 * field outwards as the recursion unwinds. */
struct pbctx {
    char reason[256];
    char path[PATH_MAX_LEN];
    size_t elem;    /* index of the failing element in a packed run */
    bool bad_enums; /* an optional/repeated enum holds an undefined value */
};

static int pfail(struct pbctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int pfail(struct pbctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    errbuf_vset(c->reason, sizeof(c->reason), fmt, ap);
    va_end(ap);
    c->path[0] = '\0';
    return -1;
}

/* Put "name" or "name[index]" in front of the path (cutting its tail if the
 * whole would not fit). */
static void path_prepend(struct pbctx *c, const char *name, bool indexed,
                         size_t index)
{
    char comp[160];
    int n = indexed ? snprintf(comp, sizeof(comp), "%s[%zu]", name, index)
                    : snprintf(comp, sizeof(comp), "%s", name);
    if (n < 0)
        return;
    size_t clen = (size_t)n < sizeof(comp) ? (size_t)n : sizeof(comp) - 1;
    size_t plen = strlen(c->path);
    size_t sep = plen > 0 ? 1 : 0;
    if (clen + sep + plen > sizeof(c->path) - 1)
        plen = sizeof(c->path) - 1 - clen - sep;
    memmove(c->path + clen + sep, c->path, plen);
    c->path[clen + sep + plen] = '\0';
    memcpy(c->path, comp, clen);
    if (sep)
        c->path[clen] = '.';
}

enum varint_rc {
    VARINT_OK = 0,
    VARINT_TRUNCATED = -1, /* the input ended inside it */
    VARINT_INVALID = -2,   /* longer than max_bytes */
};

/* Read a varint of at most max_bytes bytes at *pos (< len). */
static enum varint_rc read_varint(const uint8_t *buf, size_t len, size_t *pos,
                                  size_t max_bytes, uint64_t *out)
{
    uint64_t v = 0;
    for (size_t i = 0; i < max_bytes; i++) {
        if (*pos + i >= len)
            return VARINT_TRUNCATED;
        uint8_t b = buf[*pos + i];
        if (i < 10)
            v |= (uint64_t)(b & 0x7F) << (7 * i);
        if ((b & 0x80) == 0) {
            *pos += i + 1;
            *out = v;
            return VARINT_OK;
        }
    }
    return VARINT_INVALID;
}

static bool is_packable(ProtobufCType t)
{
    return t != PROTOBUF_C_TYPE_STRING && t != PROTOBUF_C_TYPE_BYTES &&
           t != PROTOBUF_C_TYPE_MESSAGE;
}

static ProtobufCWireType wire_type_of(ProtobufCType t)
{
    switch (t) {
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE:
        return PROTOBUF_C_WIRE_TYPE_64BIT;
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_FLOAT:
        return PROTOBUF_C_WIRE_TYPE_32BIT;
    case PROTOBUF_C_TYPE_STRING:
    case PROTOBUF_C_TYPE_BYTES:
    case PROTOBUF_C_TYPE_MESSAGE:
        return PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED;
    default:
        return PROTOBUF_C_WIRE_TYPE_VARINT;
    }
}

/* Read a tag; 0, or -1 with the reason set. */
static int read_tag(struct pbctx *c, const uint8_t *buf, size_t len,
                    size_t *pos, uint32_t *id, unsigned *wire)
{
    uint64_t tag;
    /* protobuf-c reads tags of at most 5 bytes; field numbers stop at
     * 2^29 - 1. */
    enum varint_rc rc = read_varint(buf, len, pos, 5, &tag);
    if (rc == VARINT_TRUNCATED)
        return pfail(c, "truncated field tag");
    if (rc != VARINT_OK || (tag >> 3) == 0 || (tag >> 3) > 0x1FFFFFFF)
        return pfail(c, "invalid field tag");
    *id = (uint32_t)(tag >> 3);
    *wire = (unsigned)(tag & 7);
    return 0;
}

/* Read a length prefix (at most 5 bytes, at most INT_MAX, as protobuf-c)
 * and check that many bytes remain. */
static int read_length(struct pbctx *c, const uint8_t *buf, size_t len,
                       size_t *pos, size_t *out)
{
    uint64_t v;
    enum varint_rc rc = read_varint(buf, len, pos, 5, &v);
    if (rc == VARINT_TRUNCATED)
        return pfail(c, "truncated length");
    if (rc != VARINT_OK || v > INT_MAX)
        return pfail(c, "invalid length");
    if (v > len - *pos)
        return pfail(c, "truncated: length %" PRIu64 " but %zu bytes left", v,
                     len - *pos);
    *out = (size_t)v;
    return 0;
}

/* Skip one value of the given wire type (of an unknown field). */
static int skip_value(struct pbctx *c, const uint8_t *buf, size_t len,
                      size_t *pos, uint32_t id, unsigned wire)
{
    uint64_t v;
    size_t n;
    switch (wire) {
    case PROTOBUF_C_WIRE_TYPE_VARINT: {
        enum varint_rc rc = read_varint(buf, len, pos, 10, &v);
        if (rc == VARINT_TRUNCATED)
            return pfail(c, "field %" PRIu32 ": truncated varint", id);
        if (rc != VARINT_OK)
            return pfail(c, "field %" PRIu32 ": invalid varint", id);
        return 0;
    }
    case PROTOBUF_C_WIRE_TYPE_64BIT:
    case PROTOBUF_C_WIRE_TYPE_32BIT:
        n = wire == PROTOBUF_C_WIRE_TYPE_64BIT ? 8 : 4;
        if (len - *pos < n)
            return pfail(c, "field %" PRIu32 ": truncated", id);
        *pos += n;
        return 0;
    case PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED:
        if (read_length(c, buf, len, pos, &n) != 0) {
            char tmp[sizeof(c->reason)];
            memcpy(tmp, c->reason, sizeof(tmp));
            return pfail(c, "field %" PRIu32 ": %s", id, tmp);
        }
        *pos += n;
        return 0;
    default:
        return pfail(c, "field %" PRIu32 ": unsupported wire type %u", id,
                     wire);
    }
}

static bool enum_defined(const ProtobufCFieldDescriptor *f, uint64_t raw)
{
    /* protobuf-c keeps the low 32 bits of an enum varint. */
    int v = (int)(int32_t)(uint32_t)raw;
    return protobuf_c_enum_descriptor_get_value(f->descriptor, v) != NULL;
}

/* Check the payload of a packed repeated field. */
static int scan_packed(struct pbctx *c, const ProtobufCFieldDescriptor *f,
                       const uint8_t *p, size_t n)
{
    ProtobufCWireType w = wire_type_of(f->type);
    if (w == PROTOBUF_C_WIRE_TYPE_64BIT || w == PROTOBUF_C_WIRE_TYPE_32BIT) {
        size_t siz = w == PROTOBUF_C_WIRE_TYPE_64BIT ? 8 : 4;
        if (n % siz != 0)
            return pfail(c, "packed length %zu is not a multiple of %zu", n,
                         siz);
        return 0;
    }
    size_t pos = 0, k = 0;
    while (pos < n) {
        c->elem = k;
        if (f->type == PROTOBUF_C_TYPE_BOOL) {
            /* protobuf-c reads packed bools one byte each. */
            if (p[pos] > 1)
                return pfail(c, "invalid packed bool");
            pos++;
            k++;
            continue;
        }
        uint64_t v;
        enum varint_rc rc = read_varint(p, n, &pos, 10, &v);
        if (rc == VARINT_TRUNCATED)
            return pfail(c, "truncated varint");
        if (rc != VARINT_OK)
            return pfail(c, "invalid varint");
        if (f->type == PROTOBUF_C_TYPE_ENUM && !enum_defined(f, v))
            c->bad_enums = true;
        k++;
    }
    return 0;
}

static int scan_message(struct pbctx *c, const ProtobufCMessageDescriptor *desc,
                        const uint8_t *buf, size_t len, int depth);

/* Check one occurrence of known field f whose tag ended at *pos. */
static int scan_field(struct pbctx *c, const ProtobufCFieldDescriptor *f,
                      unsigned wire, const uint8_t *buf, size_t len,
                      size_t *pos, int depth)
{
    c->elem = 0;
    if (f->label == PROTOBUF_C_LABEL_REPEATED &&
        wire == PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED && is_packable(f->type)) {
        size_t n;
        if (read_length(c, buf, len, pos, &n) != 0)
            return -1;
        const uint8_t *p = buf + *pos;
        *pos += n;
        return scan_packed(c, f, p, n);
    }
    if (wire != wire_type_of(f->type))
        return pfail(c, "wire type %u is invalid for field type %s", wire,
                     type_name(f->type));

    uint64_t v;
    size_t n;
    switch (wire) {
    case PROTOBUF_C_WIRE_TYPE_VARINT: {
        enum varint_rc rc = read_varint(buf, len, pos, 10, &v);
        if (rc == VARINT_TRUNCATED)
            return pfail(c, "truncated varint");
        if (rc != VARINT_OK)
            return pfail(c, "invalid varint");
        if (f->type == PROTOBUF_C_TYPE_ENUM && !enum_defined(f, v)) {
            if (f->label == PROTOBUF_C_LABEL_REQUIRED)
                return pfail(c, "unknown enum value %d",
                             (int)(int32_t)(uint32_t)v);
            c->bad_enums = true;
        }
        return 0;
    }
    case PROTOBUF_C_WIRE_TYPE_64BIT:
    case PROTOBUF_C_WIRE_TYPE_32BIT:
        n = wire == PROTOBUF_C_WIRE_TYPE_64BIT ? 8 : 4;
        if (len - *pos < n)
            return pfail(c, "truncated");
        *pos += n;
        return 0;
    default: /* length-delimited */
        if (read_length(c, buf, len, pos, &n) != 0)
            return -1;
        const uint8_t *p = buf + *pos;
        *pos += n;
        if (f->type == PROTOBUF_C_TYPE_STRING) {
            if (memchr(p, 0, n) != NULL)
                return pfail(c, "string contains a NUL character");
            if (!utf8_valid(p, n))
                return pfail(c, "string is not valid UTF-8");
        } else if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
            return scan_message(c, f->descriptor, p, n, depth + 1);
        }
        return 0;
    }
}

/* How many values of field f precede offset end in buf (already scanned). */
static size_t count_before(const ProtobufCMessageDescriptor *desc,
                           const ProtobufCFieldDescriptor *f,
                           const uint8_t *buf, size_t end)
{
    struct pbctx scratch;
    size_t pos = 0, count = 0;
    while (pos < end) {
        uint32_t id = 0; /* set by read_tag; GCC -O3 cannot see it */
        unsigned wire = 0;
        if (read_tag(&scratch, buf, end, &pos, &id, &wire) != 0)
            break;
        const ProtobufCFieldDescriptor *g =
            protobuf_c_message_descriptor_get_field(desc, id);
        if (g == f && wire == PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED &&
            is_packable(f->type)) {
            size_t n;
            if (read_length(&scratch, buf, end, &pos, &n) != 0)
                break;
            ProtobufCWireType w = wire_type_of(f->type);
            if (w == PROTOBUF_C_WIRE_TYPE_64BIT)
                count += n / 8;
            else if (w == PROTOBUF_C_WIRE_TYPE_32BIT)
                count += n / 4;
            else if (f->type == PROTOBUF_C_TYPE_BOOL)
                count += n;
            else
                for (size_t i = 0; i < n; i++)
                    count += (buf[pos + i] & 0x80) == 0;
            pos += n;
            continue;
        }
        if (g == f)
            count++;
        if (skip_value(&scratch, buf, end, &pos, id, wire) != 0)
            break;
    }
    return count;
}

/* Walk one message's bytes: bounds, wire types, depth, strings, required
 * fields (of this occurrence, as protobuf-c checks them). */
static int scan_message(struct pbctx *c, const ProtobufCMessageDescriptor *desc,
                        const uint8_t *buf, size_t len, int depth)
{
    if (depth > JPB_MAX_DEPTH)
        return pfail(c, "message nesting deeper than %d", JPB_MAX_DEPTH);

    struct field_set seen;
    fields_init(&seen, desc);

    int rc = -1;
    size_t pos = 0;
    while (pos < len) {
        size_t start = pos;
        uint32_t id = 0; /* set by read_tag; GCC -O3 cannot see it */
        unsigned wire = 0;
        if (read_tag(c, buf, len, &pos, &id, &wire) != 0)
            goto out;
        const ProtobufCFieldDescriptor *f =
            protobuf_c_message_descriptor_get_field(desc, id);
        if (f == NULL) {
            if (skip_value(c, buf, len, &pos, id, wire) != 0)
                goto out;
            continue;
        }
        bool again = fields_mark(&seen, desc, f);
        /* protobuf-c merges a repeated occurrence of a singular message
         * field into the earlier one, copying every repeated field inside
         * each time: n occurrences cost n^2. No encoder writes one twice, so
         * a second occurrence is refused. */
        if (again && f->type == PROTOBUF_C_TYPE_MESSAGE &&
            f->label != PROTOBUF_C_LABEL_REPEATED &&
            !(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)) {
            pfail(c, "message field given more than once");
            path_prepend(c, f->name, false, 0);
            goto out;
        }
        if (scan_field(c, f, wire, buf, len, &pos, depth) != 0) {
            bool repeated = f->label == PROTOBUF_C_LABEL_REPEATED;
            size_t index = 0;
            if (repeated)
                index = count_before(desc, f, buf, start) + c->elem;
            path_prepend(c, f->name, repeated, index);
            goto out;
        }
    }
    const ProtobufCFieldDescriptor *missing =
        fields_missing_required(&seen, desc);
    if (missing != NULL) {
        pfail(c, "required field missing");
        path_prepend(c, missing->name, false, 0);
        goto out;
    }
    rc = 0;
out:
    fields_fini(&seen);
    return rc;
}

/* Unset optional and repeated enum values that the enum does not define, as
 * proto2 parsers do (they keep them as unknown fields): a peer with newer
 * .proto files can send values offerd does not know. */
static void drop_unknown_enums(ProtobufCMessage *m)
{
    const ProtobufCMessageDescriptor *desc = m->descriptor;
    for (unsigned i = 0; i < desc->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &desc->fields[i];
        void *member = MEMBER_PTR(m, f->offset);
        if (f->type != PROTOBUF_C_TYPE_ENUM &&
            f->type != PROTOBUF_C_TYPE_MESSAGE)
            continue;
        if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
            uint32_t *which = MEMBER_PTR(m, f->quantifier_offset);
            if (*which != f->id)
                continue;
        }
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t *n = MEMBER_PTR(m, f->quantifier_offset);
            if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
                ProtobufCMessage **arr = *(ProtobufCMessage ***)member;
                for (size_t k = 0; k < *n; k++)
                    drop_unknown_enums(arr[k]);
                continue;
            }
            int *arr = *(int **)member;
            size_t keep = 0;
            for (size_t k = 0; k < *n; k++)
                if (protobuf_c_enum_descriptor_get_value(f->descriptor,
                                                         arr[k]) != NULL)
                    arr[keep++] = arr[k];
            *n = keep;
            continue;
        }
        if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
            ProtobufCMessage *sub = *(ProtobufCMessage **)member;
            if (sub != NULL)
                drop_unknown_enums(sub);
            continue;
        }
        int *v = member;
        if (protobuf_c_enum_descriptor_get_value(f->descriptor, *v) != NULL)
            continue;
        /* Required enums were refused by the scan. */
        *v = f->default_value != NULL ? *(const int *)f->default_value : 0;
        if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
            *(uint32_t *)MEMBER_PTR(m, f->quantifier_offset) = 0;
        else if (f->quantifier_offset != 0)
            *(protobuf_c_boolean *)MEMBER_PTR(m, f->quantifier_offset) = 0;
    }
}

ProtobufCMessage *jpb_from_pb(const ProtobufCMessageDescriptor *desc,
                              const uint8_t *buf, size_t len, char *err,
                              size_t errlen)
{
    static const uint8_t empty[1];
    struct pbctx c;
    c.reason[0] = '\0';
    c.path[0] = '\0';
    c.bad_enums = false;
    if (buf == NULL) {
        buf = empty;
        len = 0;
    }
    if (scan_message(&c, desc, buf, len, 1) != 0) {
        set_error_f(err, errlen, c.path, "%s", c.reason);
        return NULL;
    }
    ProtobufCMessage *msg = protobuf_c_message_unpack(desc, NULL, len, buf);
    if (msg == NULL) {
        set_error_f(err, errlen, NULL, "invalid protobuf %s message",
                    desc->name);
        return NULL;
    }
    if (c.bad_enums)
        drop_unknown_enums(msg);
    return msg;
}

uint8_t *jpb_to_pb(const ProtobufCMessage *msg, size_t *len)
{
    size_t n = protobuf_c_message_get_packed_size(msg);
    uint8_t *buf = xmalloc(n);
    size_t packed = protobuf_c_message_pack(msg, buf);
    if (len != NULL)
        *len = packed;
    return buf;
}

ProtobufCMessage *jpb_decode(const ProtobufCMessageDescriptor *desc,
                             enum jpb_format format, const uint8_t *buf,
                             size_t len, char *err, size_t errlen)
{
    switch (format) {
    case JPB_JSON:
        return jpb_from_json_text(desc, (const char *)buf, len, err, errlen);
    case JPB_PROTOBUF:
        return jpb_from_pb(desc, buf, len, err, errlen);
    }
    set_error_f(err, errlen, NULL, "unsupported format %d", (int)format);
    return NULL;
}

uint8_t *jpb_encode(const ProtobufCMessage *msg, enum jpb_format format,
                    size_t *len)
{
    switch (format) {
    case JPB_JSON:
        return (uint8_t *)jpb_to_json_text(msg, len);
    case JPB_PROTOBUF:
        return jpb_to_pb(msg, len);
    }
    return NULL;
}

void *jpb_copy(const ProtobufCMessageDescriptor *desc,
               const ProtobufCMessage *msg)
{
    if (msg == NULL)
        return NULL;
    if (msg->descriptor != desc) {
        log_error("jpb_copy: a message of type %s given as %s",
                  msg->descriptor->name, desc->name);
        abort();
    }
    size_t len;
    uint8_t *buf = jpb_to_pb(msg, &len);
    char err[256];
    ProtobufCMessage *copy = jpb_from_pb(desc, buf, len, err, sizeof(err));
    free(buf);
    if (copy == NULL) {
        log_error("jpb_copy: cannot copy a message of type %s: %s", desc->name,
                  err);
        abort();
    }
    return copy;
}

void jpb_free(ProtobufCMessage *msg)
{
    if (msg != NULL)
        protobuf_c_message_free_unpacked(msg, NULL);
}

int jpb_array_from_json_text(const ProtobufCMessageDescriptor *desc,
                             const char *text, size_t len, size_t max,
                             ProtobufCMessage ***out, size_t *n, char *err,
                             size_t errlen)
{
    json_error_t je;
    json_t *arr = json_loadb(text, len, 0, &je);
    if (arr == NULL) {
        errbuf_set(err, errlen, "invalid JSON at line %d, column %d: %s",
                   je.line, je.column, je.text);
        return -1;
    }
    if (!json_is_array(arr)) {
        json_decref(arr);
        errbuf_set(err, errlen, "expected a JSON array");
        return -1;
    }
    size_t count = json_array_size(arr);
    if (count > max) {
        json_decref(arr);
        errbuf_set(err, errlen, "more than %zu elements", max);
        return -1;
    }
    ProtobufCMessage **v = xcalloc(count ? count : 1, sizeof(*v));
    char why[512];
    for (size_t i = 0; i < count; i++) {
        v[i] = jpb_from_json(desc, json_array_get(arr, i), why, sizeof(why));
        if (v[i] == NULL) {
            errbuf_set(err, errlen, "[%zu]: %s", i, why);
            jpb_array_free(v, i);
            json_decref(arr);
            return -1;
        }
    }
    json_decref(arr);
    *out = v;
    *n = count;
    return 0;
}

void jpb_array_free(ProtobufCMessage **v, size_t n)
{
    if (v == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        jpb_free(v[i]);
    free(v);
}
