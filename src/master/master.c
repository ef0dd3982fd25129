/*
 * The master's lifecycle and the glue between its parts: creating and
 * freeing the state, the periodic timers (allocation cycles, agent pings,
 * framework heartbeats), sending events on framework and agent streams, and
 * running the allocator (its offers become Offer messages in offers.c).
 */
#include "master/authz.h"
#include "master/master.h"

#include <arpa/inet.h>
#include <event2/event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/domain.h"
#include "common/json_pb.h"
#include "common/log.h"
#include "common/mem.h"
#include "master/admin_endpoints.h"
#include "master/files.h"
#include "master/files_proxy.h"
#include "master/agents.h"
#include "master/changes.h"
#include "master/frameworks.h"
#include "master/limits.h"
#include "master/maintenance.h"
#include "master/offers.h"
#include "master/operator_api.h"
#include "master/operator_events.h"
#include "master/persist.h"
#include "master/ping_spread.h"
#include "master/operations.h"
#include "master/quota.h"
#include "master/registry.h"
#include "master/registry_gc.h"
#include "master/reservations.h"
#include "master/scheduler_api.h"
#include "master/send.h"
#include "master/slack.h"
#include "master/state_endpoints.h"
#include "master/state_stream.h"
#include "master/system_endpoints.h"
#include "master/webui.h"

/* ---- Small shared helpers -------------------------------------------------
 */

/* ---- Allocation cycles --------------------------------------------------- */

/* A cycle (allocator, offers built and sent) longer than this is logged
 * as a WARNING: the loop served nobody else meanwhile. */
#define MASTER_SLOW_CYCLE_MS 100.0

static void run_cycle(struct master *m)
{
    int64_t t0 = clock_monotonic_ns();
    master_slack_update(m);
    m->in_cycle = true;
    alloc_run(m->alloc, t0);
    m->in_cycle = false;
    master_inverse_offers_sweep(m);
    m->metrics.allocation_runs++;
    m->metrics.allocation_run_ms =
        (double)(clock_monotonic_ns() - t0) / (double)CLOCK_NS_PER_MS;
    prom_hist_observe(&m->metrics.allocation_cycle,
                      m->metrics.allocation_run_ms / 1e3);
    master_offers_flush(m);
    double ms = (double)(clock_monotonic_ns() - t0) / (double)CLOCK_NS_PER_MS;
    if (ms > MASTER_SLOW_CYCLE_MS)
        log_warn("allocation cycle took %.1f ms (allocator %.1f ms, the rest "
                 "offers sent): %zu agents, %zu frameworks, %zu outstanding "
                 "offers",
                 ms, m->metrics.allocation_run_ms, hmap_count(m->agents),
                 hmap_count(m->frameworks), hmap_count(m->offers));
}

static void on_reregister_timeout(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    master_agents_reregister_timeout(arg);
}

static void on_alloc_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct master *m = arg;
    alloc_candidates_all(m->alloc);
    run_cycle(m);
}

static void on_alloc_soon(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct master *m = arg;
    m->alloc_soon_pending = false;
    if (alloc_has_candidates(m->alloc))
        run_cycle(m);
}

void master_allocate_soon(struct master *m)
{
    if (m->alloc_soon_pending || m->alloc_soon == NULL)
        return;
    m->alloc_soon_pending = true;
    struct timeval zero = {0, 0};
    evtimer_add(m->alloc_soon, &zero);
}

void master_event_queue_counts(const struct master *m, double *messages,
                               double *dispatches, double *http_requests)
{
    *messages = event_base_get_num_events(m->base, EVENT_BASE_COUNT_ACTIVE);
    double n = m->alloc_soon_pending ? 1 : 0;
    if (m->registry != NULL) {
        struct registry_stats st;
        registry_get_stats(m->registry, &st);
        n += (double)st.awaiting;
    }
    *dispatches = n;
    *http_requests =
        m->http != NULL ? (double)http_server_pending_requests(m->http) : 0;
}

/* ---- Heartbeats and pings ------------------------------------------------ */

static void on_heartbeat(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct master *m = arg;
    Mesos__V1__Scheduler__Event ev = MESOS__V1__SCHEDULER__EVENT__INIT;
    ev.has_type = true;
    ev.type = MESOS__V1__SCHEDULER__EVENT__TYPE__HEARTBEAT;
    size_t pos = 0;
    void *val;
    while (hmap_next(m->frameworks, &pos, NULL, &val)) {
        struct framework *fw = val;
        if (fw->stream != NULL)
            master_send_to_framework(fw, &ev);
    }
    master_opev_heartbeat(m);
}

static void on_ping(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    master_agents_ping_due(arg, clock_monotonic_ns());
}

/* ---- Creation and teardown ------------------------------------------------
 */

static struct timeval tv_of_ns(int64_t ns)
{
    struct timeval tv = {(time_t)(ns / CLOCK_NS_PER_SEC),
                         (suseconds_t)((ns % CLOCK_NS_PER_SEC) / 1000)};
    return tv;
}

uint16_t master_port(const struct master *m)
{
    return m->port;
}

static struct alloc *make_allocator(struct master *m, char *err, size_t errlen)
{
    struct alloc_options o;
    alloc_options_default(&o);
    o.allocation_interval_ns = m->flags->allocation_interval;
    o.filter_gpu_resources = m->flags->filter_gpu_resources;
    /* Checked by master_flags_parse: "drf" or "random". */
    o.role_sorter = strcmp(m->flags->role_sorter, "random") == 0
                        ? ALLOC_SORTER_RANDOM
                        : ALLOC_SORTER_DRF;
    o.framework_sorter = strcmp(m->flags->framework_sorter, "random") == 0
                             ? ALLOC_SORTER_RANDOM
                             : ALLOC_SORTER_DRF;
    o.seed = (uint64_t)clock_monotonic_ns() | 1;
    o.on_offer = master_offer_from_alloc;
    o.on_inverse_offer = master_inverse_offer_from_alloc;
    o.cb_arg = m;
    o.region = domain_region(m->domain); /* copied by alloc_new */
    struct alloc_quantities *min = NULL;
    uint32_t nmin = 0;
    if (m->flags->min_allocatable_resources != NULL &&
        m->flags->min_allocatable_resources[0] != '\0') {
        if (alloc_parse_min_allocatable(m->flags->min_allocatable_resources,
                                        &min, &nmin, err, errlen) != 0)
            return NULL;
        o.min_allocatable = min;
        o.n_min_allocatable = nmin;
    }
    struct alloc *a = alloc_new(&o);
    alloc_quantities_free(min, nmin);
    return a;
}

struct master *master_new(struct event_base *base,
                          const struct master_flags *flags, char *err,
                          size_t errlen)
{
    return master_new_with(base, flags, NULL, err, errlen);
}

struct master *master_new_with(struct event_base *base,
                               const struct master_flags *flags,
                               const struct master_options *opts, char *err,
                               size_t errlen)
{
    struct master *m = xcalloc(1, sizeof(*m));
    m->base = base;
    m->flags = flags;
    if (opts != NULL)
        m->opts = *opts;
    if (opts != NULL && opts->id != NULL && strlen(opts->id) < sizeof(m->id))
        memcpy(m->id, opts->id, strlen(opts->id) + 1);
    else
        id_uuid_v4(m->id);
    m->start_time = clock_wall_secs();
    m->start_mono = clock_monotonic_ns();
    m->frameworks = hmap_new();
    m->agents = hmap_new();
    m->offers = hmap_new();
    m->completed = hmap_new();
    m->recovered_agents = hmap_new();
    m->gone_agents = hmap_new();
    m->unreachable_agents = hmap_new();
    m->machines = hmap_new();
    m->inverse_offers = hmap_new();
    prom_hist_init(&m->metrics.allocation_cycle, PROM_BOUNDS_LATENCY,
                   PROM_BOUNDS_LATENCY_N);
    prom_hist_init(&m->metrics.offer_answer, PROM_BOUNDS_WAIT,
                   PROM_BOUNDS_WAIT_N);

    if (flags->domain != NULL && flags->domain[0] != '\0') {
        char why[256];
        m->domain = domain_load(flags->domain, why, sizeof(why));
        if (m->domain == NULL) {
            snprintf(err, errlen, "--domain: %s", why);
            goto fail;
        }
    }
    m->alloc = make_allocator(m, err, errlen);
    if (m->alloc == NULL)
        goto fail;
    m->limits = master_limits_new(flags, err, errlen);
    if (m->limits == NULL)
        goto fail;
    master_quota_init(m);
    master_ops_init(m);
    if (master_persist_open(m, err, errlen) != 0)
        goto fail;
    master_quota_weights_flag(m);

    if (master_authz_init(m, err, errlen) != 0)
        goto fail;
    struct http_server_options ho = {0};
    ho.max_conns = (size_t)flags->max_connections;
    ho.idle_timeout_ns = flags->http_idle_timeout;
    ho.min_body_rate = flags->http_min_body_rate;
    ho.max_buffered = (size_t)flags->max_buffered_request_bytes;
    m->http = http_server_new(base, &ho);
    m->webui = master_webui_new(flags->webui_dir);
    http_server_set_gate(m->http, master_authz_gate, m);
    if (master_system_endpoints_register(m->http, master_flags_object(flags)) !=
            0 ||
        http_server_route(m->http, "/api/v1/scheduler", HTTP_POST,
                          master_scheduler_api, m) != 0 ||
        http_server_route(m->http, "/master/api/v1/scheduler", HTTP_POST,
                          master_scheduler_api, m) != 0 ||
        http_server_route(m->http, "/api/v1/agent", HTTP_POST, master_agent_api,
                          m) != 0 ||
        http_server_route(m->http, "/api/v1", HTTP_POST, master_operator_api,
                          m) != 0 ||
        http_server_route(m->http, "/master/api/v1", HTTP_POST,
                          master_operator_api, m) != 0 ||
        master_maintenance_endpoints_register(m) != 0 ||
        master_resv_endpoints_register(m) != 0 ||
        master_quota_endpoints_register(m) != 0 ||
        master_state_endpoints_register(m) != 0 ||
        master_metrics_endpoint_register(m) != 0 ||
        master_admin_endpoints_register(m) != 0 ||
        master_files_register(m) != 0 || master_files_proxy_register(m) != 0 ||
        master_webui_route(m->webui, m->http) != 0) {
        snprintf(err, errlen, "cannot register the endpoints");
        goto fail;
    }
    uint16_t bound = flags->port;
    if (!m->opts.no_listen && http_server_bind(m->http, flags->ip, flags->port,
                                               &bound, err, errlen) != 0)
        goto fail;
    m->port = bound;
    /* Advertise a concrete address: the bound one, or loopback when bound
     * to the wildcard (frameworks and agents on this machine reach it). */
    m->ip =
        xstrdup(strcmp(flags->ip, "0.0.0.0") == 0 ? "127.0.0.1" : flags->ip);

    m->alloc_timer = event_new(base, -1, EV_PERSIST, on_alloc_timer, m);
    m->alloc_soon = evtimer_new(base, on_alloc_soon, m);
    m->ping_timer = event_new(base, -1, EV_PERSIST, on_ping, m);
    m->heartbeat_timer = event_new(base, -1, EV_PERSIST, on_heartbeat, m);
    struct timeval tv = tv_of_ns(flags->allocation_interval);
    evtimer_add(m->alloc_timer, &tv);
    tv = tv_of_ns(master_ping_tick_ns(flags->agent_ping_timeout));
    evtimer_add(m->ping_timer, &tv);
    tv = tv_of_ns((int64_t)MASTER_HEARTBEAT_SECS * CLOCK_NS_PER_SEC);
    evtimer_add(m->heartbeat_timer, &tv);
    master_registry_gc_start(m);
    if (hmap_count(m->recovered_agents) > 0) {
        m->reregister_timer = evtimer_new(base, on_reregister_timeout, m);
        tv = tv_of_ns(flags->agent_reregister_timeout);
        evtimer_add(m->reregister_timer, &tv);
    }
    if (m->opts.no_listen)
        log_info("master %s started (listening nowhere)", m->id);
    else
        log_info("master %s listening on %s:%u", m->id, flags->ip,
                 (unsigned)m->port);
    return m;

fail:
    master_free(m);
    return NULL;
}

static void free_framework(void *p)
{
    master_framework_free(p);
}

static void free_agent(void *p)
{
    master_agent_free(p);
}

void master_free(struct master *m)
{
    if (m == NULL)
        return;
    if (m->alloc_timer)
        event_free(m->alloc_timer);
    if (m->alloc_soon)
        event_free(m->alloc_soon);
    if (m->ping_timer)
        event_free(m->ping_timer);
    if (m->heartbeat_timer)
        event_free(m->heartbeat_timer);
    /* Pending registry writes complete now, while the state they refer to
     * is whole. */
    master_changes_stop(m);
    master_persist_close(m);
    master_maintenance_free(m);
    master_quota_free(m);
    master_ops_free(m);
    master_authz_free(m);
    /* Offers first: they point at frameworks and agents. */
    master_offers_free_all(m);
    /* Tasks are owned by their framework's map; agents only index them. */
    hmap_free(m->frameworks, free_framework);
    hmap_free(m->completed, free_framework);
    hmap_free(m->agents, free_agent);
    for (uint32_t i = 0; i < m->ncompleted; i++)
        free(m->completed_order[i]);
    free(m->completed_order);
    free(m->cycle_fws);
    hmap_free(m->recovered_agents, master_persist_free_recovered);
    hmap_free(m->gone_agents, free);
    hmap_free(m->unreachable_agents, free);
    if (m->domain != NULL)
        jpb_free(&m->domain->base);
    if (m->reregister_timer != NULL)
        event_free(m->reregister_timer);
    if (m->registry_gc_timer != NULL)
        event_free(m->registry_gc_timer);
    master_opev_free_all(m);
    http_server_free(m->http);
    /* After the server: its readers' connections are gone, so a body cut
     * short does not end as if it were whole. */
    master_state_streams_free(m);
    master_admin_free(m);
    master_files_free(m);
    master_files_proxy_free(m);
    master_webui_free(m->webui);
    alloc_free(m->alloc);
    master_limits_free(m->limits);
    free(m->ip);
    free(m);
}
