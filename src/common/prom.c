/*
 * Prometheus text exposition and histograms (prom.h).
 */
#include "common/prom.h"

#include "common/hmap.h"
#include "common/mem.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const double PROM_BOUNDS_LATENCY[] = {0.0005, 0.001, 0.0025, 0.005, 0.01,
                                      0.025,  0.05,  0.1,    0.25,  0.5,
                                      1,      2.5,   5,      10};
const size_t PROM_BOUNDS_LATENCY_N =
    sizeof(PROM_BOUNDS_LATENCY) / sizeof(PROM_BOUNDS_LATENCY[0]);
const double PROM_BOUNDS_WAIT[] = {0.01, 0.05, 0.1, 0.25, 0.5, 1,   2.5,
                                   5,    10,   30,  60,   120, 300, 600};
const size_t PROM_BOUNDS_WAIT_N =
    sizeof(PROM_BOUNDS_WAIT) / sizeof(PROM_BOUNDS_WAIT[0]);

void prom_hist_init(struct prom_hist *h, const double *bounds, size_t n)
{
    memset(h, 0, sizeof(*h));
    h->bounds = bounds;
    h->nbounds = n < PROM_HIST_MAX_BOUNDS ? n : PROM_HIST_MAX_BOUNDS;
}

void prom_hist_observe(struct prom_hist *h, double v)
{
    if (isnan(v))
        return;
    size_t i = 0;
    while (i < h->nbounds && v > h->bounds[i])
        i++;
    h->buckets[i]++;
    h->count++;
    h->sum += v;
}

static bool name_char(char c, bool first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           c == ':' || (!first && c >= '0' && c <= '9');
}

bool prom_name_valid(const char *name)
{
    if (name == NULL || name[0] == '\0')
        return false;
    for (size_t i = 0; name[i] != '\0'; i++)
        if (!name_char(name[i], i == 0))
            return false;
    return true;
}

int prom_name(const char *prefix, const char *key, const char *suffix,
              char *out, size_t cap)
{
    const char *parts[3] = {prefix, key, suffix};
    size_t n = 0;
    for (size_t p = 0; p < 3; p++) {
        for (const char *s = parts[p]; s != NULL && *s != '\0'; s++) {
            if (n + 1 >= cap) {
                if (cap > 0)
                    out[0] = '\0';
                return -1;
            }
            out[n] = name_char(*s, n == 0) ? *s : '_';
            n++;
        }
    }
    if (cap == 0)
        return -1;
    out[n] = '\0';
    return 0;
}

bool prom_key_in(const char *const *table, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(table[i]);
        if (len > 0 && table[i][len - 1] == '*') {
            if (strncmp(table[i], key, len - 1) == 0)
                return true;
        } else if (strcmp(table[i], key) == 0) {
            return true;
        }
    }
    return false;
}

struct prom_writer {
    char *buf;
    size_t len, cap;
    struct hmap *names; /* families started, name -> the writer (unused) */
};

struct prom_writer *prom_writer_new(void)
{
    struct prom_writer *w = xcalloc(1, sizeof(*w));
    w->cap = 4096;
    w->buf = xmalloc(w->cap);
    w->buf[0] = '\0';
    w->names = hmap_new();
    return w;
}

void prom_writer_free(struct prom_writer *w)
{
    if (w == NULL)
        return;
    hmap_free(w->names, NULL);
    free(w->buf);
    free(w);
}

static void put(struct prom_writer *w, const char *s, size_t n)
{
    if (w->len + n + 1 > w->cap) {
        while (w->len + n + 1 > w->cap)
            w->cap *= 2;
        w->buf = xrealloc(w->buf, w->cap);
    }
    memcpy(w->buf + w->len, s, n);
    w->len += n;
    w->buf[w->len] = '\0';
}

static void puts_(struct prom_writer *w, const char *s)
{
    put(w, s, strlen(s));
}

/* s escaped: backslash and newline always, '"' too in label values. */
static void put_escaped(struct prom_writer *w, const char *s, bool quote)
{
    for (; *s != '\0'; s++) {
        if (*s == '\\')
            puts_(w, "\\\\");
        else if (*s == '\n')
            puts_(w, "\\n");
        else if (quote && *s == '"')
            puts_(w, "\\\"");
        else
            put(w, s, 1);
    }
}

/* A float as the format wants it: shortest of %.15g and %.17g that reads
 * back the same, and NaN, +Inf, -Inf by name. */
static void put_value(struct prom_writer *w, double v)
{
    char s[40];
    if (isnan(v)) {
        puts_(w, "NaN");
        return;
    }
    if (isinf(v)) {
        puts_(w, v > 0 ? "+Inf" : "-Inf");
        return;
    }
    snprintf(s, sizeof(s), "%.15g", v);
    if (strtod(s, NULL) != v)
        snprintf(s, sizeof(s), "%.17g", v);
    puts_(w, s);
}

int prom_family(struct prom_writer *w, const char *name, const char *help,
                enum prom_type type)
{
    static const char *const types[] = {"counter", "gauge", "histogram"};
    if (!prom_name_valid(name) || hmap_get(w->names, name) != NULL)
        return -1;
    hmap_put(w->names, name, w);
    puts_(w, "# HELP ");
    puts_(w, name);
    puts_(w, " ");
    put_escaped(w, help != NULL ? help : "", false);
    puts_(w, "\n# TYPE ");
    puts_(w, name);
    puts_(w, " ");
    puts_(w, types[type]);
    puts_(w, "\n");
    return 0;
}

/* name{label="value",le="bound"} value: each part optional. */
static void line(struct prom_writer *w, const char *name, const char *suffix,
                 const char *label, const char *label_value, const char *le,
                 double v)
{
    puts_(w, name);
    if (suffix != NULL)
        puts_(w, suffix);
    if (label != NULL || le != NULL) {
        puts_(w, "{");
        if (label != NULL) {
            puts_(w, label);
            puts_(w, "=\"");
            put_escaped(w, label_value != NULL ? label_value : "", true);
            puts_(w, "\"");
        }
        if (le != NULL) {
            puts_(w, label != NULL ? ",le=\"" : "le=\"");
            puts_(w, le);
            puts_(w, "\"");
        }
        puts_(w, "}");
    }
    puts_(w, " ");
    put_value(w, v);
    puts_(w, "\n");
}

void prom_sample(struct prom_writer *w, const char *name, const char *label,
                 const char *label_value, double value)
{
    line(w, name, NULL, label, label_value, NULL, value);
}

void prom_hist_write(struct prom_writer *w, const char *name, const char *label,
                     const char *label_value, const struct prom_hist *h)
{
    uint64_t cum = 0;
    for (size_t i = 0; i <= h->nbounds; i++) {
        char le[40];
        cum += h->buckets[i];
        if (i == h->nbounds) {
            snprintf(le, sizeof(le), "+Inf");
        } else {
            snprintf(le, sizeof(le), "%.15g", h->bounds[i]);
            if (strtod(le, NULL) != h->bounds[i])
                snprintf(le, sizeof(le), "%.17g", h->bounds[i]);
        }
        line(w, name, "_bucket", label, label_value, le, (double)cum);
    }
    line(w, name, "_sum", label, label_value, NULL, h->sum);
    line(w, name, "_count", label, label_value, NULL, (double)h->count);
}

void prom_snapshot_key(struct prom_writer *w, const char *prefix,
                       const char *const *counters, size_t ncounters,
                       const char *key, double value)
{
    bool counter = prom_key_in(counters, ncounters, key);
    char name[256], help[320];
    if (prom_name(prefix, key, counter ? "_total" : NULL, name, sizeof(name)) !=
        0)
        return;
    snprintf(help, sizeof(help), "/metrics/snapshot key %s", key);
    if (prom_family(w, name, help, counter ? PROM_COUNTER : PROM_GAUGE) == 0)
        prom_sample(w, name, NULL, NULL, value);
}

const char *prom_writer_text(const struct prom_writer *w, size_t *len)
{
    if (len != NULL)
        *len = w->len;
    return w->buf;
}
