/*
 * Offer helpers, Marathon-style constraints and task placements; the
 * contract is include/offerd/placement.h.
 *
 * Constraints compare text: the offer's value for a field (its hostname, or
 * an attribute rendered by offerd_offer_attr_format) against the constant
 * of the constraint or against the values recorded for the placed tasks.
 * Placements keep those rendered values, so evaluating a constraint never
 * needs the offers the tasks were launched on. Evaluation is linear in the
 * number of placed tasks per constraint (GROUP_BY counts with a hash map).
 */
#include "offerd/placement.h"

#include "common/hmap.h"
#include "common/mem.h"
#include "mesos/v1/mesos.pb-c.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Largest integer argument of GROUP_BY and MAX_PER. */
#define INT_ARG_MAX 1000000

/* ---- Offer helpers ---- */

const Mesos__V1__Attribute *offerd_offer_attribute(const Mesos__V1__Offer *o,
                                                   const char *name)
{
    if (o == NULL || name == NULL)
        return NULL;
    for (size_t i = 0; i < o->n_attributes; i++) {
        const Mesos__V1__Attribute *a = o->attributes[i];
        if (a != NULL && a->name != NULL && strcmp(a->name, name) == 0)
            return a;
    }
    return NULL;
}

const char *offerd_offer_attr_text(const Mesos__V1__Offer *o, const char *name)
{
    const Mesos__V1__Attribute *a = offerd_offer_attribute(o, name);
    if (a == NULL || a->type != MESOS__V1__VALUE__TYPE__TEXT || a->text == NULL)
        return NULL;
    return a->text->value;
}

int offerd_offer_attr_scalar(const Mesos__V1__Offer *o, const char *name,
                             double *out)
{
    const Mesos__V1__Attribute *a = offerd_offer_attribute(o, name);
    if (a == NULL || a->type != MESOS__V1__VALUE__TYPE__SCALAR ||
        a->scalar == NULL)
        return -1;
    *out = a->scalar->value;
    return 0;
}

Mesos__V1__Value__Range *const *
offerd_offer_attr_ranges(const Mesos__V1__Offer *o, const char *name, size_t *n)
{
    *n = 0;
    const Mesos__V1__Attribute *a = offerd_offer_attribute(o, name);
    if (a == NULL || a->type != MESOS__V1__VALUE__TYPE__RANGES ||
        a->ranges == NULL)
        return NULL;
    *n = a->ranges->n_range;
    return a->ranges->range;
}

char *const *offerd_offer_attr_set(const Mesos__V1__Offer *o, const char *name,
                                   size_t *n)
{
    *n = 0;
    const Mesos__V1__Attribute *a = offerd_offer_attribute(o, name);
    if (a == NULL || a->type != MESOS__V1__VALUE__TYPE__SET || a->set == NULL)
        return NULL;
    *n = a->set->n_item;
    return a->set->item;
}

bool offerd_offer_attr_contains(const Mesos__V1__Offer *o, const char *name,
                                uint64_t v)
{
    size_t n;
    Mesos__V1__Value__Range *const *r = offerd_offer_attr_ranges(o, name, &n);
    for (size_t i = 0; r != NULL && i < n; i++)
        if (r[i] != NULL && r[i]->begin <= v && v <= r[i]->end)
            return true;
    char *const *items = offerd_offer_attr_set(o, name, &n);
    if (items == NULL)
        return false;
    char text[32];
    snprintf(text, sizeof(text), "%llu", (unsigned long long)v);
    for (size_t i = 0; i < n; i++)
        if (items[i] != NULL && strcmp(items[i], text) == 0)
            return true;
    return false;
}

/* Appends to a fixed buffer; remembers overflow. */
struct out {
    char *buf;
    size_t len, used;
    bool overflow;
};

static void put(struct out *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void put(struct out *w, const char *fmt, ...)
{
    if (w->overflow)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(w->buf + w->used, w->len - w->used, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= w->len - w->used) {
        w->overflow = true;
        return;
    }
    w->used += (size_t)k;
}

/* A scalar with up to three decimals, no trailing zeros ("2", "0.5"). */
static int format_scalar(double v, char *buf, size_t len)
{
    if (!isfinite(v) || fabs(v) > 1e15)
        return -1;
    int k = snprintf(buf, len, "%.3f", v);
    if (k < 0 || (size_t)k >= len)
        return -1;
    char *dot = strchr(buf, '.');
    if (dot != NULL) {
        char *end = buf + k - 1;
        while (end > dot && *end == '0')
            *end-- = '\0';
        if (end == dot)
            *end = '\0';
    }
    if (strcmp(buf, "-0") == 0)
        snprintf(buf, len, "0");
    return 0;
}

static int format_attribute(const Mesos__V1__Attribute *a, char *buf,
                            size_t len)
{
    struct out w = {buf, len, 0, false};
    switch (a->type) {
    case MESOS__V1__VALUE__TYPE__TEXT:
        if (a->text == NULL || a->text->value == NULL)
            return -1;
        put(&w, "%s", a->text->value);
        break;
    case MESOS__V1__VALUE__TYPE__SCALAR:
        if (a->scalar == NULL)
            return -1;
        return format_scalar(a->scalar->value, buf, len);
    case MESOS__V1__VALUE__TYPE__RANGES:
        if (a->ranges == NULL)
            return -1;
        put(&w, "[");
        for (size_t i = 0; i < a->ranges->n_range; i++) {
            const Mesos__V1__Value__Range *r = a->ranges->range[i];
            if (r == NULL)
                return -1;
            put(&w, "%s%llu-%llu", i > 0 ? "," : "",
                (unsigned long long)r->begin, (unsigned long long)r->end);
        }
        put(&w, "]");
        break;
    case MESOS__V1__VALUE__TYPE__SET:
        if (a->set == NULL)
            return -1;
        put(&w, "{");
        for (size_t i = 0; i < a->set->n_item; i++) {
            if (a->set->item[i] == NULL)
                return -1;
            put(&w, "%s%s", i > 0 ? "," : "", a->set->item[i]);
        }
        put(&w, "}");
        break;
    default:
        return -1;
    }
    return w.overflow ? -1 : 0;
}

int offerd_offer_attr_format(const Mesos__V1__Offer *o, const char *name,
                             char *buf, size_t len)
{
    if (buf == NULL || len == 0)
        return -1;
    const Mesos__V1__Attribute *a = offerd_offer_attribute(o, name);
    if (a == NULL || format_attribute(a, buf, len) != 0) {
        buf[0] = '\0';
        return -1;
    }
    return 0;
}

const char *offerd_offer_hostname(const Mesos__V1__Offer *o)
{
    return o != NULL ? o->hostname : NULL;
}

static bool is_ip(const char *s)
{
    unsigned char tmp[sizeof(struct in6_addr)];
    return s != NULL && (inet_pton(AF_INET, s, tmp) == 1 ||
                         inet_pton(AF_INET6, s, tmp) == 1);
}

int offerd_offer_ip(const Mesos__V1__Offer *o, const char *attr, char *buf,
                    size_t len)
{
    if (buf == NULL || len == 0)
        return -1;
    buf[0] = '\0';
    if (o == NULL)
        return -1;
    const char *ip = NULL;
    if (attr != NULL && is_ip(offerd_offer_attr_text(o, attr)))
        ip = offerd_offer_attr_text(o, attr);
    else if (o->url != NULL && o->url->address != NULL &&
             is_ip(o->url->address->ip))
        ip = o->url->address->ip;
    if (ip == NULL)
        return -1;
    int k = snprintf(buf, len, "%s", ip);
    if (k < 0 || (size_t)k >= len) {
        buf[0] = '\0';
        return -1;
    }
    return 0;
}

/* ---- Constraints ---- */

struct constraint {
    char *field;
    enum offerd_constraint_op op;
    char *value; /* NULL when none */
    long n;      /* GROUP_BY (default 1), MAX_PER */
    regex_t re;  /* LIKE, UNLIKE */
    bool has_re;
};

struct offerd_constraints {
    struct constraint *v;
    size_t n;
};

static const char *const op_names[] = {
    [OFFERD_CONSTRAINT_UNIQUE] = "UNIQUE",
    [OFFERD_CONSTRAINT_CLUSTER] = "CLUSTER",
    [OFFERD_CONSTRAINT_IS] = "IS",
    [OFFERD_CONSTRAINT_GROUP_BY] = "GROUP_BY",
    [OFFERD_CONSTRAINT_LIKE] = "LIKE",
    [OFFERD_CONSTRAINT_UNLIKE] = "UNLIKE",
    [OFFERD_CONSTRAINT_MAX_PER] = "MAX_PER",
};

#define NOPS (sizeof(op_names) / sizeof(op_names[0]))

static void constraint_clear(struct constraint *c)
{
    free(c->field);
    free(c->value);
    if (c->has_re)
        regfree(&c->re);
    memset(c, 0, sizeof(*c));
}

void offerd_constraints_free(struct offerd_constraints *c)
{
    if (c == NULL)
        return;
    for (size_t i = 0; i < c->n; i++)
        constraint_clear(&c->v[i]);
    free(c->v);
    free(c);
}

size_t offerd_constraints_count(const struct offerd_constraints *c)
{
    return c != NULL ? c->n : 0;
}

int offerd_constraints_get(const struct offerd_constraints *c, size_t i,
                           const char **field, enum offerd_constraint_op *op,
                           const char **value)
{
    if (c == NULL || i >= c->n)
        return -1;
    if (field != NULL)
        *field = c->v[i].field;
    if (op != NULL)
        *op = c->v[i].op;
    if (value != NULL)
        *value = c->v[i].value;
    return 0;
}

/* A positive integer no larger than INT_ARG_MAX, the whole of s. */
static int parse_count(const char *s, long *out)
{
    if (s == NULL || !isdigit((unsigned char)s[0]))
        return -1;
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < 1 || v > INT_ARG_MAX)
        return -1;
    *out = v;
    return 0;
}

/*
 * Check and fill one constraint from its parts (value NULL or "" when
 * none). The strings are copied. Returns 0, or -1 with a reason (without
 * the index: the caller adds it).
 */
static int constraint_make(struct constraint *c, const char *field,
                           const char *op, const char *value, char *err,
                           size_t errlen)
{
    memset(c, 0, sizeof(*c));
    if (field == NULL || field[0] == '\0') {
        snprintf(err, errlen, "empty field");
        return -1;
    }
    if (strlen(field) > OFFERD_CONSTRAINT_FIELD_MAX) {
        snprintf(err, errlen, "field longer than %d bytes",
                 OFFERD_CONSTRAINT_FIELD_MAX);
        return -1;
    }
    if (value != NULL && value[0] == '\0')
        value = NULL;
    if (value != NULL && strlen(value) > OFFERD_CONSTRAINT_VALUE_MAX) {
        snprintf(err, errlen, "value longer than %d bytes",
                 OFFERD_CONSTRAINT_VALUE_MAX);
        return -1;
    }
    size_t k = 0;
    while (k < NOPS && (op == NULL || strcasecmp(op, op_names[k]) != 0))
        k++;
    if (k == NOPS) {
        snprintf(err, errlen,
                 "unknown operator '%.64s' (UNIQUE, CLUSTER, IS, GROUP_BY, "
                 "LIKE, UNLIKE or MAX_PER)",
                 op != NULL ? op : "");
        return -1;
    }
    c->op = (enum offerd_constraint_op)k;
    switch (c->op) {
    case OFFERD_CONSTRAINT_UNIQUE:
        if (value != NULL) {
            snprintf(err, errlen, "UNIQUE takes no value");
            return -1;
        }
        break;
    case OFFERD_CONSTRAINT_CLUSTER:
        break;
    case OFFERD_CONSTRAINT_IS:
    case OFFERD_CONSTRAINT_LIKE:
    case OFFERD_CONSTRAINT_UNLIKE:
        if (value == NULL) {
            snprintf(err, errlen, "%s needs a value", op_names[k]);
            return -1;
        }
        break;
    case OFFERD_CONSTRAINT_GROUP_BY:
        c->n = 1;
        if (value != NULL && parse_count(value, &c->n) != 0) {
            snprintf(err, errlen,
                     "GROUP_BY takes a positive integer, not '%.64s'", value);
            return -1;
        }
        break;
    case OFFERD_CONSTRAINT_MAX_PER:
        if (value == NULL || parse_count(value, &c->n) != 0) {
            snprintf(err, errlen,
                     "MAX_PER needs a positive integer, not "
                     "'%.64s'",
                     value != NULL ? value : "");
            return -1;
        }
        break;
    }
    if (c->op == OFFERD_CONSTRAINT_LIKE || c->op == OFFERD_CONSTRAINT_UNLIKE) {
        /* Marathon matches the whole value (Java's String.matches). */
        char *anchored = xasprintf("^(%s)$", value);
        int rc = regcomp(&c->re, anchored, REG_EXTENDED | REG_NOSUB);
        free(anchored);
        if (rc != 0) {
            char why[128];
            regerror(rc, &c->re, why, sizeof(why));
            snprintf(err, errlen, "bad regex '%.64s': %s", value, why);
            return -1;
        }
        c->has_re = true;
    }
    c->field = xstrdup(field);
    c->value = xstrdup(value);
    return 0;
}

/* Append a constraint built from parts; on failure err names index i. */
static int add_parts(struct offerd_constraints *c, const char *field,
                     const char *op, const char *value, char *err,
                     size_t errlen)
{
    if (c->n >= OFFERD_CONSTRAINTS_MAX) {
        snprintf(err, errlen, "more than %d constraints",
                 OFFERD_CONSTRAINTS_MAX);
        return -1;
    }
    char why[256];
    struct constraint one;
    if (constraint_make(&one, field, op, value, why, sizeof(why)) != 0) {
        constraint_clear(&one);
        snprintf(err, errlen, "constraint %zu: %s", c->n, why);
        return -1;
    }
    c->v = xreallocarray(c->v, c->n + 1, sizeof(*c->v));
    c->v[c->n++] = one;
    return 0;
}

static int parse_json(struct offerd_constraints *c, const char *text, char *err,
                      size_t errlen)
{
    json_error_t je;
    json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    if (root == NULL) {
        snprintf(err, errlen, "invalid JSON at line %d, column %d: %s", je.line,
                 je.column, je.text);
        return -1;
    }
    int rc = -1;
    if (!json_is_array(root)) {
        snprintf(err, errlen, "expected an array of constraints");
        goto out;
    }
    size_t i;
    json_t *item;
    json_array_foreach(root, i, item)
    {
        size_t n = json_array_size(item);
        if (!json_is_array(item) || n < 2 || n > 3) {
            snprintf(err, errlen,
                     "constraint %zu: expected [field, operator] or [field, "
                     "operator, value]",
                     i);
            goto out;
        }
        const char *field = json_string_value(json_array_get(item, 0));
        const char *op = json_string_value(json_array_get(item, 1));
        json_t *jv = json_array_get(item, 2);
        char num[32];
        const char *value = NULL;
        if (jv != NULL && json_is_string(jv)) {
            value = json_string_value(jv);
        } else if (jv != NULL && json_is_integer(jv)) {
            snprintf(num, sizeof(num), "%lld",
                     (long long)json_integer_value(jv));
            value = num;
        } else if (jv != NULL) {
            snprintf(err, errlen,
                     "constraint %zu: the value must be a string or an "
                     "integer",
                     i);
            goto out;
        }
        if (field == NULL || op == NULL) {
            snprintf(err, errlen,
                     "constraint %zu: field and operator must be strings", i);
            goto out;
        }
        if (add_parts(c, field, op, value, err, errlen) != 0)
            goto out;
    }
    rc = 0;
out:
    json_decref(root);
    return rc;
}

/* Copy s[0..n) without surrounding blanks. */
static char *trimmed(const char *s, size_t n)
{
    while (n > 0 && isspace((unsigned char)s[0])) {
        s++;
        n--;
    }
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    return xstrndup(s, n);
}

static int parse_text(struct offerd_constraints *c, const char *text, char *err,
                      size_t errlen)
{
    const char *p = text;
    while (*p != '\0') {
        size_t len = strcspn(p, ";");
        char *entry = trimmed(p, len);
        p += len;
        if (*p == ';')
            p++;
        if (entry[0] == '\0') {
            free(entry);
            continue;
        }
        char *op = strchr(entry, ':');
        if (op == NULL) {
            snprintf(err, errlen,
                     "constraint %zu: expected field:OPERATOR[:value], got "
                     "'%.64s'",
                     c->n, entry);
            free(entry);
            return -1;
        }
        *op++ = '\0';
        char *value = strchr(op, ':');
        if (value != NULL)
            *value++ = '\0';
        char *f = trimmed(entry, strlen(entry));
        char *o = trimmed(op, strlen(op));
        int rc = add_parts(c, f, o, value, err, errlen);
        free(f);
        free(o);
        free(entry);
        if (rc != 0)
            return -1;
    }
    return 0;
}

struct offerd_constraints *offerd_constraints_parse(const char *text, char *err,
                                                    size_t errlen)
{
    if (text == NULL) {
        snprintf(err, errlen, "no constraints given");
        return NULL;
    }
    struct offerd_constraints *c = xcalloc(1, sizeof(*c));
    const char *p = text;
    while (isspace((unsigned char)*p))
        p++;
    int rc = *p == '[' ? parse_json(c, p, err, errlen)
                       : parse_text(c, p, err, errlen);
    if (rc != 0) {
        offerd_constraints_free(c);
        return NULL;
    }
    return c;
}

int offerd_constraints_format(const struct offerd_constraints *c, char *buf,
                              size_t len)
{
    if (buf == NULL || len == 0)
        return -1;
    buf[0] = '\0';
    struct out w = {buf, len, 0, false};
    for (size_t i = 0; c != NULL && i < c->n; i++) {
        const struct constraint *k = &c->v[i];
        put(&w, "%s%s:%s", i > 0 ? ";" : "", k->field, op_names[k->op]);
        if (k->value != NULL)
            put(&w, ":%s", k->value);
    }
    return w.overflow ? -1 : 0;
}

/* ---- Placements ---- */

struct placed {
    char *task_id;
    char *agent_id;
    char *hostname; /* NULL when the offer had none */
    char **names;   /* attribute names ... */
    char **values;  /* ... and rendered values (NULL: not renderable) */
    size_t nattrs;
    size_t index; /* in offerd_placements.v */
};

struct offerd_placements {
    struct placed **v;
    size_t n, cap;
    struct hmap *by_task; /* task id -> struct placed */
};

struct offerd_placements *offerd_placements_new(void)
{
    struct offerd_placements *p = xcalloc(1, sizeof(*p));
    p->by_task = hmap_new();
    return p;
}

static void placed_free(struct placed *t)
{
    free(t->task_id);
    free(t->agent_id);
    free(t->hostname);
    for (size_t i = 0; i < t->nattrs; i++) {
        free(t->names[i]);
        free(t->values[i]);
    }
    free(t->names);
    free(t->values);
    free(t);
}

void offerd_placements_free(struct offerd_placements *p)
{
    if (p == NULL)
        return;
    for (size_t i = 0; i < p->n; i++)
        placed_free(p->v[i]);
    free(p->v);
    hmap_free(p->by_task, NULL);
    free(p);
}

int offerd_placements_remove(struct offerd_placements *p, const char *task_id)
{
    if (p == NULL || task_id == NULL)
        return -1;
    struct placed *t = hmap_del(p->by_task, task_id);
    if (t == NULL)
        return -1;
    size_t i = t->index;
    p->v[i] = p->v[--p->n];
    p->v[i]->index = i;
    placed_free(t);
    return 0;
}

int offerd_placements_add(struct offerd_placements *p, const char *task_id,
                          const Mesos__V1__Offer *o)
{
    if (p == NULL || task_id == NULL || o == NULL)
        return -1;
    offerd_placements_remove(p, task_id);
    struct placed *t = xcalloc(1, sizeof(*t));
    t->task_id = xstrdup(task_id);
    t->agent_id = xstrdup(o->agent_id != NULL ? o->agent_id->value : NULL);
    t->hostname = xstrdup(o->hostname);
    t->names = xcalloc(o->n_attributes, sizeof(*t->names));
    t->values = xcalloc(o->n_attributes, sizeof(*t->values));
    char buf[OFFERD_ATTR_TEXT_MAX + 1];
    for (size_t i = 0; i < o->n_attributes; i++) {
        const Mesos__V1__Attribute *a = o->attributes[i];
        if (a == NULL || a->name == NULL)
            continue;
        t->names[t->nattrs] = xstrdup(a->name);
        t->values[t->nattrs] =
            format_attribute(a, buf, sizeof(buf)) == 0 ? xstrdup(buf) : NULL;
        t->nattrs++;
    }
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 16;
        p->v = xreallocarray(p->v, p->cap, sizeof(*p->v));
    }
    t->index = p->n;
    p->v[p->n++] = t;
    hmap_put(p->by_task, task_id, t);
    return 0;
}

size_t offerd_placements_count(const struct offerd_placements *p)
{
    return p != NULL ? p->n : 0;
}

const char *offerd_placements_agent(const struct offerd_placements *p,
                                    const char *task_id)
{
    if (p == NULL || task_id == NULL)
        return NULL;
    const struct placed *t = hmap_get(p->by_task, task_id);
    return t != NULL ? t->agent_id : NULL;
}

static bool is_hostname_field(const char *field)
{
    return strcmp(field, "hostname") == 0 || strcmp(field, "@hostname") == 0;
}

/* The value of field for a placed task, or NULL when its agent lacked it.
 * (The first attribute of a name counts, as offerd_offer_attribute.) */
static const char *placed_value(const struct placed *t, const char *field)
{
    if (is_hostname_field(field))
        return t->hostname;
    for (size_t i = 0; i < t->nattrs; i++)
        if (strcmp(t->names[i], field) == 0)
            return t->values[i];
    return NULL;
}

size_t offerd_placements_count_value(const struct offerd_placements *p,
                                     const char *field, const char *value)
{
    if (p == NULL || field == NULL || value == NULL)
        return 0;
    size_t n = 0;
    for (size_t i = 0; i < p->n; i++) {
        const char *v = placed_value(p->v[i], field);
        n += v != NULL && strcmp(v, value) == 0;
    }
    return n;
}

/* ---- Matching ---- */

/* The offer's value for field into buf, or NULL when it has none. */
static const char *offer_value(const Mesos__V1__Offer *o, const char *field,
                               char *buf, size_t len)
{
    if (is_hostname_field(field))
        return o->hostname;
    return offerd_offer_attr_format(o, field, buf, len) == 0 ? buf : NULL;
}

/* Marathon's GROUP_BY: see the header. */
static bool group_by_ok(const struct constraint *c, const char *v,
                        const struct offerd_placements *p)
{
    size_t mine = offerd_placements_count_value(p, c->field, v);
    if (mine == 0)
        return true;
    /* Count tasks per value; tasks on agents without the field form one
     * more group, as Marathon's groupBy over an Option does. */
    struct hmap *groups = hmap_new();
    size_t *counts = xcalloc(p->n + 1, sizeof(*counts));
    size_t ngroups = 0, missing = 0;
    for (size_t i = 0; i < p->n; i++) {
        const char *pv = placed_value(p->v[i], c->field);
        if (pv == NULL) {
            missing++;
            continue;
        }
        size_t *slot = hmap_get(groups, pv);
        if (slot == NULL) {
            slot = &counts[ngroups++];
            hmap_put(groups, pv, slot);
        }
        (*slot)++;
    }
    size_t min = missing > 0 ? missing : SIZE_MAX;
    for (size_t i = 0; i < ngroups; i++)
        if (counts[i] < min)
            min = counts[i];
    size_t total_groups = ngroups + (missing > 0);
    hmap_free(groups, NULL);
    free(counts);
    return total_groups >= (size_t)c->n && mine == min;
}

static bool match_one(const struct constraint *c, const Mesos__V1__Offer *o,
                      const struct offerd_placements *p)
{
    char buf[OFFERD_ATTR_TEXT_MAX + 1];
    const char *v = offer_value(o, c->field, buf, sizeof(buf));
    if (v == NULL)
        return c->op == OFFERD_CONSTRAINT_UNLIKE;
    size_t nplaced = p != NULL ? p->n : 0;
    switch (c->op) {
    case OFFERD_CONSTRAINT_UNIQUE:
        return offerd_placements_count_value(p, c->field, v) == 0;
    case OFFERD_CONSTRAINT_CLUSTER:
        if (c->value != NULL)
            return strcmp(v, c->value) == 0;
        return offerd_placements_count_value(p, c->field, v) == nplaced;
    case OFFERD_CONSTRAINT_IS:
        return strcmp(v, c->value) == 0;
    case OFFERD_CONSTRAINT_GROUP_BY:
        return nplaced == 0 || group_by_ok(c, v, p);
    case OFFERD_CONSTRAINT_LIKE:
        return regexec(&c->re, v, 0, NULL, 0) == 0;
    case OFFERD_CONSTRAINT_UNLIKE:
        return regexec(&c->re, v, 0, NULL, 0) != 0;
    case OFFERD_CONSTRAINT_MAX_PER:
        return offerd_placements_count_value(p, c->field, v) < (size_t)c->n;
    }
    return false;
}

bool offerd_constraints_match(const struct offerd_constraints *c,
                              const Mesos__V1__Offer *o,
                              const struct offerd_placements *p)
{
    if (c == NULL)
        return true;
    if (o == NULL)
        return c->n == 0;
    for (size_t i = 0; i < c->n; i++)
        if (!match_one(&c->v[i], o, p))
            return false;
    return true;
}
