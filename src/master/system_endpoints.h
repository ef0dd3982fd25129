/*
 * The master's system endpoints, as Mesos serves them:
 *   GET /health  (and /master/health)  200 with an empty body
 *   GET /version                        {"version", "build_date",
 *                                        "build_time", "build_user",
 *                                        "git_sha", "git_branch", "git_tag"
 *                                        when the build knew them}
 *   GET /flags   (and /master/flags)    {"flags": {"name": "value", ...}}
 *   GET /metrics                        Prometheus text (docs/metrics.md):
 *                                        every /metrics/snapshot key, and
 *                                        histograms of allocation cycles,
 *                                        offer answers, HTTP requests per
 *                                        endpoint and registry writes
 */
#ifndef OFFERD_MASTER_SYSTEM_ENDPOINTS_H
#define OFFERD_MASTER_SYSTEM_ENDPOINTS_H

#include <jansson.h>
#include <stdbool.h>

struct http_server;
struct flags;
struct master;

/* Register the routes on srv. flags is borrowed and must outlive srv's
 * use. Returns 0, or -1 if a path is already routed. */
int master_system_endpoints_register(struct http_server *srv,
                                     const struct flags *flags);

/* Register GET /metrics on m's server. Returns 0, or -1 if it is already
 * routed. */
int master_metrics_endpoint_register(struct master *m);

/* The /metrics text into a new writer (common/prom.h; free it with
 * prom_writer_free): what GET /metrics answers. */
struct prom_writer *master_metrics_prometheus(struct master *m);

/* Whether /metrics shows the snapshot key as a counter (else a gauge). */
bool master_metric_is_counter(const char *key);

/* The /version document (new reference). */
json_t *master_version_json(void);

/* Hand fn Mesos's system metrics of this host, read now: cpus_total
 * (online), load_1min, load_5min, load_15min, mem_total_bytes and
 * mem_free_bytes (as /system/stats.json); a value the host does not give
 * is left out. */
void master_system_metrics(void (*fn)(void *arg, const char *name, double v),
                           void *arg);

#endif
