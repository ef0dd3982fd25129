/*
 * prom: Prometheus text exposition (format 0.0.4) and a fixed-bucket
 * histogram, for the master's and the agent's GET /metrics.
 *
 * A histogram is a plain struct with its buckets inline: prom_hist_observe
 * only adds, never allocates, so the loop (and the registry's worker, under
 * its own lock) can observe on every request. Bounds are in seconds and
 * borrowed from a static table (PROM_BOUNDS_* below).
 *
 * The writer builds one reply in memory: a family header (# HELP, # TYPE)
 * once per name, then its samples. Names are checked against
 * [a-zA-Z_:][a-zA-Z0-9_:]*; prom_name maps a Mesos snapshot key
 * ("master/tasks_running") to one ("offerd_master_tasks_running"). A name
 * written twice (two keys that map to the same name) is skipped the second
 * time, so the exposition never has a duplicate family.
 */
#ifndef OFFERD_COMMON_PROM_H
#define OFFERD_COMMON_PROM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The exposition's Content-Type. */
#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Most buckets a histogram can have, +Inf not counted. */
#define PROM_HIST_MAX_BOUNDS 16

/* Bounds for request-like latencies (0.5 ms .. 10 s) and for waits on
 * people or programs (10 ms .. 10 min), in seconds. */
extern const double PROM_BOUNDS_LATENCY[];
extern const size_t PROM_BOUNDS_LATENCY_N;
extern const double PROM_BOUNDS_WAIT[];
extern const size_t PROM_BOUNDS_WAIT_N;

struct prom_hist {
    const double *bounds; /* upper bounds, ascending, seconds; borrowed */
    size_t nbounds;       /* <= PROM_HIST_MAX_BOUNDS */
    uint64_t buckets[PROM_HIST_MAX_BOUNDS + 1]; /* per bucket, not cumulative;
                                                   [nbounds] is +Inf */
    uint64_t count;                             /* observations */
    double sum;                                 /* of observed values */
};

/* Empty h over bounds (n of them, at most PROM_HIST_MAX_BOUNDS: more are
 * ignored). bounds must outlive h. */
void prom_hist_init(struct prom_hist *h, const double *bounds, size_t n);

/* Count v (seconds) in the first bucket whose bound is >= v. A NaN is
 * ignored. Never allocates. */
void prom_hist_observe(struct prom_hist *h, double v);

/* Map a snapshot key to a metric name into out (cap bytes): prefix, the key
 * with every character outside [a-zA-Z0-9_:] as '_', then suffix (either
 * may be NULL). Returns 0, or -1 if it does not fit (out then holds ""). */
int prom_name(const char *prefix, const char *key, const char *suffix,
              char *out, size_t cap);

/* Whether name is a valid metric name. */
bool prom_name_valid(const char *name);

/* Whether key is in table: an entry matches exactly, or, when it ends in
 * '*', as a prefix. */
bool prom_key_in(const char *const *table, size_t n, const char *key);

enum prom_type { PROM_COUNTER, PROM_GAUGE, PROM_HISTOGRAM };

struct prom_writer;

/* A new, empty writer. Free with prom_writer_free. */
struct prom_writer *prom_writer_new(void);
void prom_writer_free(struct prom_writer *w);

/* Start family name: its # HELP (help escaped) and # TYPE lines. Returns
 * 0, or -1 (nothing written) if name is invalid or was already started;
 * the samples of a refused family must then be left out. */
int prom_family(struct prom_writer *w, const char *name, const char *help,
                enum prom_type type);

/* One sample of the current family: name, an optional label (label NULL
 * for none; the value escaped), value. */
void prom_sample(struct prom_writer *w, const char *name, const char *label,
                 const char *label_value, double value);

/* One histogram series: name_bucket{le=...} cumulative lines, name_sum and
 * name_count, each with the optional label too. */
void prom_hist_write(struct prom_writer *w, const char *name, const char *label,
                     const char *label_value, const struct prom_hist *h);

/* One snapshot key as its own family: a counter named prefix + key +
 * "_total" when key is in counters (prom_key_in), else a gauge named
 * prefix + key, with a HELP that names the key. A key whose name does not
 * fit, or maps to a name already written, is left out. */
void prom_snapshot_key(struct prom_writer *w, const char *prefix,
                       const char *const *counters, size_t ncounters,
                       const char *key, double value);

/* The text written so far (NUL-terminated) and its length; owned by w. */
const char *prom_writer_text(const struct prom_writer *w, size_t *len);

#endif
