/*
 * offerctl_table: the human output of offerctl: tables with aligned
 * columns, and values in human units.
 */
#ifndef OFFERD_CLI_OFFERCTL_TABLE_H
#define OFFERD_CLI_OFFERCTL_TABLE_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

struct octl_table;

/* A table whose header row is the ncols names (copied). */
struct octl_table *octl_table_new(size_t ncols, const char *const *names);

/* Free the table; NULL is ignored. */
void octl_table_free(struct octl_table *t);

/* Set column col of the row being built (copied; NULL prints "-"). */
void octl_table_set(struct octl_table *t, size_t col, const char *text);

/* Same with a printf format. */
void octl_table_setf(struct octl_table *t, size_t col, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* End the row being built (cells not set print "-"). */
void octl_table_end_row(struct octl_table *t);

/* Rows added so far (the header not counted). */
size_t octl_table_rows(const struct octl_table *t);

/* Print the header and the rows, each column padded to its widest cell
 * and two spaces apart (the last column unpadded), one row per line. */
void octl_table_print(const struct octl_table *t, FILE *out);

/* A size given in megabytes (Mesos's unit of mem and disk), in the largest
 * of MB, GB, TB that keeps it at least 1, with at most one decimal:
 * "512MB", "1.5GB", "0MB". Returns out. */
char *octl_fmt_mb(double mb, char *out, size_t outlen);

/* A number with at most three decimals and no trailing zeros ("2",
 * "0.5"). Returns out. */
char *octl_fmt_num(double v, char *out, size_t outlen);

/* A duration in nanoseconds in the largest whole unit (as offerd's flags
 * write them: "2hrs", "90secs"). Returns out. */
char *octl_fmt_duration(long long ns, char *out, size_t outlen);

/* A time in nanoseconds since the epoch as UTC "2026-12-01 15:04:05".
 * Returns out. */
char *octl_fmt_time(long long ns, char *out, size_t outlen);

/* The sum of the scalar resources named `name` in a JSON array of
 * mesos.v1.Resource (0 when there are none or arr is not an array). */
double octl_res_sum(const json_t *arr, const char *name);

#endif
