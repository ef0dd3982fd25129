/*
 * --attributes parsing and conversions.
 */
#include "agent/attributes.h"

#include "common/json_pb.h"
#include "common/mem.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void agent_attrs_clear(struct agent_attrs *a)
{
    for (size_t i = 0; i < a->n; i++) {
        free(a->v[i].name);
        free(a->v[i].ranges);
        free(a->v[i].text);
    }
    free(a->v);
    a->v = NULL;
    a->n = 0;
}

/* True when every opening bracket of kind open has its close, in order. */
static int brackets_match(const char *s, char open, char close)
{
    long depth = 0;
    for (; *s; s++) {
        if (*s == open)
            depth++;
        else if (*s == close && --depth < 0)
            return 0;
    }
    return depth == 0;
}

static int range_cmp(const void *a, const void *b)
{
    const struct agent_attr_range *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* Parse a decimal uint64 that is the whole of s. */
static int parse_u64(const char *s, uint64_t *out)
{
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end != '\0' || errno != 0)
        return -1;
    *out = v;
    return 0;
}

/* "[1-4,8-9]" (spaces already removed) into a->ranges. */
static int parse_ranges(const char *v, struct agent_attr *a, char *err,
                        size_t errlen)
{
    /* Tokens separated by any of "[]-,". */
    char *copy = xstrdup(v);
    char *tokens[2 * AGENT_ATTR_MAX_RANGE];
    size_t ntok = 0;
    int rc = -1;
    for (char *save = NULL, *t = strtok_r(copy, "[]-,\n", &save); t != NULL;
         t = strtok_r(NULL, "[]-,\n", &save)) {
        if (ntok == sizeof(tokens) / sizeof(tokens[0])) {
            snprintf(err, errlen, "more than %d ranges", AGENT_ATTR_MAX_RANGE);
            goto out;
        }
        tokens[ntok++] = t;
    }
    if (ntok == 0 || ntok % 2 != 0) {
        snprintf(err, errlen, "expecting one or more ranges in '%s'", v);
        goto out;
    }
    a->nranges = ntok / 2;
    a->ranges = xcalloc(a->nranges, sizeof(*a->ranges));
    for (size_t i = 0; i < a->nranges; i++) {
        uint64_t b, e;
        if (parse_u64(tokens[2 * i], &b) != 0 ||
            parse_u64(tokens[2 * i + 1], &e) != 0) {
            snprintf(err, errlen, "expecting non-negative integers in '%s'", v);
            goto out;
        }
        if (b > e) {
            snprintf(err, errlen, "range %llu-%llu ends before it begins",
                     (unsigned long long)b, (unsigned long long)e);
            goto out;
        }
        a->ranges[i].begin = b;
        a->ranges[i].end = e;
    }
    /* Sort and coalesce overlapping or touching ranges, as Mesos does. */
    qsort(a->ranges, a->nranges, sizeof(*a->ranges), range_cmp);
    size_t w = 0;
    for (size_t i = 1; i < a->nranges; i++) {
        struct agent_attr_range *last = &a->ranges[w];
        if (last->end == UINT64_MAX || a->ranges[i].begin <= last->end + 1) {
            if (a->ranges[i].end > last->end)
                last->end = a->ranges[i].end;
        } else {
            a->ranges[++w] = a->ranges[i];
        }
    }
    a->nranges = w + 1;
    rc = 0;
out:
    free(copy);
    return rc;
}

/* Whole string is a finite decimal number (no hex, inf or nan). */
static int parse_scalar(const char *v, double *out)
{
    for (const char *p = v; *p; p++)
        if (!isdigit((unsigned char)*p) && !strchr("+-.eE", *p))
            return -1;
    errno = 0;
    char *end;
    double d = strtod(v, &end);
    if (end == v || *end != '\0' || errno != 0 || !isfinite(d))
        return -1;
    *out = d;
    return 0;
}

/* Parse one value (spaces removed) into a. */
static int parse_value(const char *v, struct agent_attr *a, char *err,
                       size_t errlen)
{
    if (v[0] == '\0') {
        snprintf(err, errlen, "empty value");
        return -1;
    }
    if (!brackets_match(v, '{', '}') || !brackets_match(v, '[', ']') ||
        !brackets_match(v, '(', ')')) {
        snprintf(err, errlen, "mismatched brackets in '%s'", v);
        return -1;
    }
    const char *sq = strchr(v, '[');
    if (sq == v) {
        a->type = AGENT_ATTR_RANGES;
        return parse_ranges(v, a, err, errlen);
    }
    if (sq != NULL) {
        snprintf(err, errlen, "unexpected '[' in '%s'", v);
        return -1;
    }
    const char *cb = strchr(v, '{');
    if (cb == v) {
        snprintf(err, errlen, "sets are not supported for attributes ('%s')",
                 v);
        return -1;
    }
    if (cb != NULL) {
        snprintf(err, errlen, "unexpected '{' in '%s'", v);
        return -1;
    }
    if (parse_scalar(v, &a->scalar) == 0) {
        a->type = AGENT_ATTR_SCALAR;
        return 0;
    }
    a->type = AGENT_ATTR_TEXT;
    a->text = xstrdup(v);
    return 0;
}

int agent_attrs_parse(const char *text, struct agent_attrs *out, char *err,
                      size_t errlen)
{
    out->v = NULL;
    out->n = 0;
    if (text == NULL)
        return 0;
    char *copy = xstrdup(text);
    char reason[256];
    int rc = -1;
    for (char *save = NULL, *entry = strtok_r(copy, ";\n", &save);
         entry != NULL; entry = strtok_r(NULL, ";\n", &save)) {
        /* Skip entries made of blanks only. */
        const char *p = entry;
        while (isspace((unsigned char)*p))
            p++;
        if (*p == '\0')
            continue;
        char *colon = strchr(entry, ':');
        if (colon == NULL) {
            snprintf(err, errlen, "--attributes: '%s' is not NAME:VALUE",
                     entry);
            goto out;
        }
        *colon = '\0';
        /* The name, trimmed. */
        char *name = entry;
        while (isspace((unsigned char)*name))
            name++;
        char *ne = name + strlen(name);
        while (ne > name && isspace((unsigned char)ne[-1]))
            *--ne = '\0';
        /* The value with every space removed, as Mesos does. */
        char *value = colon + 1, *w = value;
        for (char *r = value; *r; r++)
            if (*r != ' ' && *r != '\t')
                *w++ = *r;
        *w = '\0';
        if (name[0] == '\0' || value[0] == '\0') {
            snprintf(err, errlen,
                     "--attributes: '%s:%s' has an empty name or value", name,
                     value);
            goto out;
        }
        if (out->n == AGENT_ATTR_MAX) {
            snprintf(err, errlen, "--attributes: more than %d attributes",
                     AGENT_ATTR_MAX);
            goto out;
        }
        out->v = xreallocarray(out->v, out->n + 1, sizeof(*out->v));
        struct agent_attr *a = &out->v[out->n++];
        memset(a, 0, sizeof(*a));
        a->name = xstrdup(name);
        if (parse_value(value, a, reason, sizeof(reason)) != 0) {
            snprintf(err, errlen, "--attributes: %s: %s", name, reason);
            goto out;
        }
    }
    rc = 0;
out:
    free(copy);
    if (rc != 0)
        agent_attrs_clear(out);
    return rc;
}

static Mesos__V1__Value__Ranges *ranges_pb(const struct agent_attr *a)
{
    Mesos__V1__Value__Ranges *rs = xmalloc(sizeof(*rs));
    mesos__v1__value__ranges__init(rs);
    rs->n_range = a->nranges;
    rs->range = xcalloc(a->nranges ? a->nranges : 1, sizeof(*rs->range));
    for (size_t i = 0; i < a->nranges; i++) {
        Mesos__V1__Value__Range *r = xmalloc(sizeof(*r));
        mesos__v1__value__range__init(r);
        r->begin = a->ranges[i].begin;
        r->end = a->ranges[i].end;
        rs->range[i] = r;
    }
    return rs;
}

Mesos__V1__Attribute **agent_attrs_to_pb(const struct agent_attrs *a, size_t *n)
{
    Mesos__V1__Attribute **v = xcalloc(a->n ? a->n : 1, sizeof(*v));
    for (size_t i = 0; i < a->n; i++) {
        const struct agent_attr *x = &a->v[i];
        Mesos__V1__Attribute *m = xmalloc(sizeof(*m));
        mesos__v1__attribute__init(m);
        m->name = xstrdup(x->name);
        switch (x->type) {
        case AGENT_ATTR_SCALAR:
            m->type = MESOS__V1__VALUE__TYPE__SCALAR;
            m->scalar = xmalloc(sizeof(*m->scalar));
            mesos__v1__value__scalar__init(m->scalar);
            m->scalar->value = x->scalar;
            break;
        case AGENT_ATTR_RANGES:
            m->type = MESOS__V1__VALUE__TYPE__RANGES;
            m->ranges = ranges_pb(x);
            break;
        case AGENT_ATTR_TEXT:
            m->type = MESOS__V1__VALUE__TYPE__TEXT;
            m->text = xmalloc(sizeof(*m->text));
            mesos__v1__value__text__init(m->text);
            m->text->value = xstrdup(x->text);
            break;
        }
        v[i] = m;
    }
    *n = a->n;
    return v;
}

void agent_attrs_pb_free(Mesos__V1__Attribute **v, size_t n)
{
    if (v == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        jpb_free(&v[i]->base);
    free(v);
}

/* "[1-4, 8-9]" as Mesos prints ranges. */
static char *ranges_text(const struct agent_attr *a)
{
    size_t cap = 3 + a->nranges * 44, len = 0;
    char *s = xmalloc(cap);
    s[len++] = '[';
    for (size_t i = 0; i < a->nranges; i++) {
        int n = snprintf(s + len, cap - len, "%s%llu-%llu", i ? ", " : "",
                         (unsigned long long)a->ranges[i].begin,
                         (unsigned long long)a->ranges[i].end);
        if (n > 0)
            len += (size_t)n;
    }
    s[len++] = ']';
    s[len] = '\0';
    return s;
}

json_t *agent_attrs_to_json(const struct agent_attrs *a)
{
    json_t *o = json_object();
    for (size_t i = 0; i < a->n; i++) {
        const struct agent_attr *x = &a->v[i];
        json_t *v = NULL;
        switch (x->type) {
        case AGENT_ATTR_SCALAR:
            v = json_real(x->scalar);
            break;
        case AGENT_ATTR_RANGES: {
            char *s = ranges_text(x);
            v = json_string(s);
            free(s);
            break;
        }
        case AGENT_ATTR_TEXT:
            v = json_string(x->text);
            break;
        }
        if (v != NULL)
            json_object_set_new(o, x->name, v);
    }
    return o;
}
