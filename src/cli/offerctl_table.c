/*
 * offerctl_table: aligned tables and human units for offerctl's output;
 * see offerctl_table.h.
 */
#include "cli/offerctl_table.h"

#include "common/mem.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct octl_table {
    size_t ncols;
    char **cells; /* (rows + 1) * ncols, row 0 the header; NULL: "-" */
    size_t rows;  /* rows ended, the header included */
    size_t cap;   /* rows the cells array holds */
};

static void ensure_row(struct octl_table *t)
{
    if (t->rows + 1 <= t->cap)
        return;
    size_t ncap = t->cap ? t->cap * 2 : 8;
    t->cells = xrealloc(t->cells, ncap * t->ncols * sizeof(char *));
    memset(t->cells + t->cap * t->ncols, 0,
           (ncap - t->cap) * t->ncols * sizeof(char *));
    t->cap = ncap;
}

struct octl_table *octl_table_new(size_t ncols, const char *const *names)
{
    struct octl_table *t = xcalloc(1, sizeof(*t));
    t->ncols = ncols;
    ensure_row(t);
    for (size_t i = 0; i < ncols; i++)
        octl_table_set(t, i, names[i]);
    octl_table_end_row(t);
    return t;
}

void octl_table_free(struct octl_table *t)
{
    if (t == NULL)
        return;
    for (size_t i = 0; i < t->cap * t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
    free(t);
}

void octl_table_set(struct octl_table *t, size_t col, const char *text)
{
    if (col >= t->ncols)
        return;
    ensure_row(t);
    char **cell = &t->cells[t->rows * t->ncols + col];
    free(*cell);
    *cell = text ? xstrdup(text) : NULL;
}

void octl_table_setf(struct octl_table *t, size_t col, const char *fmt, ...)
{
    char *text;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&text, fmt, ap) < 0)
        text = NULL; /* out of memory or a bad format: an empty cell */
    va_end(ap);
    octl_table_set(t, col, text != NULL ? text : "");
    free(text);
}

void octl_table_end_row(struct octl_table *t)
{
    ensure_row(t);
    t->rows++;
}

size_t octl_table_rows(const struct octl_table *t)
{
    return t->rows - 1;
}

static const char *cell(const struct octl_table *t, size_t r, size_t c)
{
    const char *s = t->cells[r * t->ncols + c];
    return s ? s : "-";
}

void octl_table_print(const struct octl_table *t, FILE *out)
{
    size_t *w = xcalloc(t->ncols ? t->ncols : 1, sizeof(size_t));
    for (size_t r = 0; r < t->rows; r++)
        for (size_t c = 0; c < t->ncols; c++) {
            size_t l = strlen(cell(t, r, c));
            if (l > w[c])
                w[c] = l;
        }
    for (size_t r = 0; r < t->rows; r++) {
        for (size_t c = 0; c < t->ncols; c++) {
            const char *s = cell(t, r, c);
            if (c + 1 == t->ncols)
                fputs(s, out);
            else
                fprintf(out, "%-*s  ", (int)w[c], s);
        }
        fputc('\n', out);
    }
    free(w);
}

char *octl_fmt_num(double v, char *out, size_t outlen)
{
    if (!isfinite(v)) {
        snprintf(out, outlen, "%g", v);
        return out;
    }
    snprintf(out, outlen, "%.3f", v);
    char *dot = strchr(out, '.');
    if (dot != NULL) {
        char *e = out + strlen(out) - 1;
        while (e > dot && *e == '0')
            *e-- = '\0';
        if (e == dot)
            *e = '\0';
    }
    if (strcmp(out, "-0") == 0)
        snprintf(out, outlen, "0");
    return out;
}

char *octl_fmt_mb(double mb, char *out, size_t outlen)
{
    static const char *const units[] = {"MB", "GB", "TB", "PB"};
    size_t u = 0;
    while (fabs(mb) >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
        mb /= 1024;
        u++;
    }
    char num[64];
    double rounded = round(mb * 10) / 10;
    octl_fmt_num(rounded, num, sizeof(num));
    snprintf(out, outlen, "%s%s", num, units[u]);
    return out;
}

char *octl_fmt_duration(long long ns, char *out, size_t outlen)
{
    static const struct {
        const char *name;
        long long ns;
    } units[] = {
        {"weeks", 7LL * 86400 * 1000000000},
        {"days", 86400LL * 1000000000},
        {"hrs", 3600LL * 1000000000},
        {"mins", 60LL * 1000000000},
        {"secs", 1000000000LL},
        {"ms", 1000000LL},
        {"us", 1000LL},
    };
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (ns != 0 && ns % units[i].ns == 0) {
            snprintf(out, outlen, "%lld%s", ns / units[i].ns, units[i].name);
            return out;
        }
    snprintf(out, outlen, "%lldns", ns);
    return out;
}

char *octl_fmt_time(long long ns, char *out, size_t outlen)
{
    time_t secs = (time_t)(ns / 1000000000LL);
    struct tm tm;
    if (gmtime_r(&secs, &tm) == NULL ||
        strftime(out, outlen, "%Y-%m-%d %H:%M:%S", &tm) == 0)
        snprintf(out, outlen, "%lld", ns);
    return out;
}

double octl_res_sum(const json_t *arr, const char *name)
{
    double sum = 0;
    size_t i;
    const json_t *r;
    if (!json_is_array(arr))
        return 0;
    json_array_foreach(arr, i, r)
    {
        const char *n = json_string_value(json_object_get(r, "name"));
        const json_t *v =
            json_object_get(json_object_get(r, "scalar"), "value");
        if (n != NULL && strcmp(n, name) == 0 && json_is_number(v))
            sum += json_number_value(v);
    }
    return sum;
}
