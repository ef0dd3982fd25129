/*
 * /health, /version, /flags and /metrics (Prometheus text).
 */
#include "master/system_endpoints.h"

#include "common/flags.h"
#include "common/http.h"
#include "common/prom.h"
#include "master/master_types.h"
#include "master/registry.h"
#include "master/state_endpoints.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#ifndef OFFERD_VERSION
#define OFFERD_VERSION "0.0.0"
#endif

static void handle_health(struct http_request *req, void *arg)
{
    (void)arg;
    http_reply(req, 200, NULL, NULL, 0);
}

static void handle_flags(struct http_request *req, void *arg)
{
    const struct flags *flags = arg;
    json_t *j = flags_to_json(flags);
    http_reply_json_jsonp(req, 200, j);
    json_decref(j);
}

static void handle_version(struct http_request *req, void *arg)
{
    (void)arg;
    json_t *j = master_version_json();
    http_reply_json_jsonp(req, 200, j);
    json_decref(j);
}

json_t *master_version_json(void)
{
    /* Build date and time of this file, from the compiler ("Nov 30 2026",
     * "10:52:27", local time of the build machine). */
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    const char *date = __DATE__, *clock = __TIME__;
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    char mon[4] = {date[0], date[1], date[2], '\0'};
    const char *m = strstr(months, mon);
    tm.tm_mon = m ? (int)(m - months) / 3 : 0;
    int year = 1970;
    if (sscanf(date + 4, "%d %d", &tm.tm_mday, &year) != 2) {
        tm.tm_mday = 1;
        year = 1970;
    }
    tm.tm_year = year - 1900;
    if (sscanf(clock, "%d:%d:%d", &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 3) {
        tm.tm_hour = 0;
        tm.tm_min = 0;
        tm.tm_sec = 0;
    }
    tm.tm_isdst = -1;
    time_t when = mktime(&tm);
    char build_date[80];
    snprintf(build_date, sizeof(build_date), "%04d-%02d-%02d %02d:%02d:%02d",
             tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
             tm.tm_min, tm.tm_sec);

    json_t *j = json_object();
    json_object_set_new(j, "version", json_string(OFFERD_VERSION));
    json_object_set_new(j, "build_date", json_string(build_date));
    json_object_set_new(j, "build_time", json_real((double)when));
#ifdef OFFERD_BUILD_USER
    json_object_set_new(j, "build_user", json_string(OFFERD_BUILD_USER));
#else
    json_object_set_new(j, "build_user", json_string(""));
#endif
#ifdef OFFERD_GIT_SHA
    json_object_set_new(j, "git_sha", json_string(OFFERD_GIT_SHA));
#endif
#ifdef OFFERD_GIT_BRANCH
    json_object_set_new(j, "git_branch", json_string(OFFERD_GIT_BRANCH));
#endif
#ifdef OFFERD_GIT_TAG
    json_object_set_new(j, "git_tag", json_string(OFFERD_GIT_TAG));
#endif
    return j;
}

void master_system_metrics(void (*fn)(void *arg, const char *name, double v),
                           void *arg)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus > 0)
        fn(arg, "system/cpus_total", (double)cpus);
    double load[3];
    if (getloadavg(load, 3) == 3) {
        fn(arg, "system/load_1min", load[0]);
        fn(arg, "system/load_5min", load[1]);
        fn(arg, "system/load_15min", load[2]);
    }
    struct sysinfo si;
    if (sysinfo(&si) == 0) {
        fn(arg, "system/mem_total_bytes",
           (double)((uint64_t)si.totalram * si.mem_unit));
        fn(arg, "system/mem_free_bytes",
           (double)((uint64_t)si.freeram * si.mem_unit));
    }
}

/* ---- /metrics ------------------------------------------------------------
 */

/* The snapshot keys that count events since the master started: Prometheus
 * counters, named with "_total". Every other key of master_metrics_collect
 * (the one list /metrics/snapshot shows) is a gauge. An entry ending in '*'
 * matches every key it starts. */
static const char *const master_counters[] = {
    "master/messages_*",
    "master/valid_*",
    "master/invalid_*",
    "master/tasks_finished",
    "master/tasks_failed",
    "master/tasks_killed",
    "master/tasks_lost",
    "master/tasks_error",
    "master/tasks_dropped",
    "master/tasks_gone",
    "master/tasks_gone_by_operator",
    "master/tasks_adopted",
    "master/tasks_preempted",
    "master/slack_evictions",
    "master/slave_registrations",
    "master/slave_reregistrations",
    "master/slave_removals",
    "master/slave_removals/*",
    "master/recovery_slave_removals",
    "master/slave_unreachable_scheduled",
    "master/slave_unreachable_completed",
    "master/slave_unreachable_canceled",
    "master/agent_task_reconciliations",
    "master/offers_declined",
    "master/offers_accepted",
    "master/offers_rescinded",
    "master/dropped_messages",
    "master/operator_event_stream_subscribers_dropped",
    "allocator/mesos/allocation_runs",
};
#define NCOUNTERS (sizeof(master_counters) / sizeof(master_counters[0]))

bool master_metric_is_counter(const char *key)
{
    return prom_key_in(master_counters, NCOUNTERS, key);
}

static void snapshot_key(void *arg, const char *key, double v)
{
    prom_snapshot_key(arg, "offerd_", master_counters, NCOUNTERS, key, v);
}

struct prom_writer *master_metrics_prometheus(struct master *m)
{
    struct prom_writer *w = prom_writer_new();
    master_metrics_collect(m, snapshot_key, w);

    const char *name = "offerd_allocator_allocation_cycle_seconds";
    if (prom_family(w, name, "Run time of each allocation cycle",
                    PROM_HISTOGRAM) == 0)
        prom_hist_write(w, name, NULL, NULL, &m->metrics.allocation_cycle);
    name = "offerd_master_offer_accept_seconds";
    if (prom_family(w, name,
                    "Time from an offer's creation to the framework's "
                    "ACCEPT or DECLINE of it",
                    PROM_HISTOGRAM) == 0)
        prom_hist_write(w, name, NULL, NULL, &m->metrics.offer_answer);
    name = "offerd_registrar_state_store_seconds";
    if (prom_family(w, name,
                    "Time of each successful registry write transaction",
                    PROM_HISTOGRAM) == 0) {
        struct prom_hist h;
        if (m->registry != NULL)
            registry_store_hist(m->registry, &h);
        else /* --registry=in_memory: nothing is written */
            prom_hist_init(&h, PROM_BOUNDS_LATENCY, PROM_BOUNDS_LATENCY_N);
        prom_hist_write(w, name, NULL, NULL, &h);
    }
    http_server_write_latency(m->http, w,
                              "offerd_http_request_duration_seconds",
                              "Time from a request's arrival to its reply "
                              "(or its stream's start), by endpoint");
    return w;
}

static void handle_metrics(struct http_request *req, void *arg)
{
    struct prom_writer *w = master_metrics_prometheus(arg);
    size_t len;
    const char *text = prom_writer_text(w, &len);
    http_reply(req, 200, PROM_CONTENT_TYPE, text, len);
    prom_writer_free(w);
}

int master_metrics_endpoint_register(struct master *m)
{
    return http_server_route(m->http, "/metrics", HTTP_GET, handle_metrics, m);
}

int master_system_endpoints_register(struct http_server *srv,
                                     const struct flags *flags)
{
    void *fl = (void *)flags; /* handlers only read it */
    if (http_server_route(srv, "/health", HTTP_GET, handle_health, NULL) ||
        http_server_route(srv, "/master/health", HTTP_GET, handle_health,
                          NULL) ||
        http_server_route(srv, "/version", HTTP_GET, handle_version, NULL) ||
        http_server_route(srv, "/flags", HTTP_GET, handle_flags, fl) ||
        http_server_route(srv, "/master/flags", HTTP_GET, handle_flags, fl))
        return -1;
    return 0;
}
