/*
 * /health, /flags, /state, /metrics/snapshot and /metrics of the agent.
 */
#include "agent/endpoints.h"

#include "agent/auth_agent.h"
#include "agent/operator_api.h"
#include "agent/viewer.h"
#include "common/flags.h"
#include "common/http.h"
#include "common/mem.h"
#include "common/prom.h"

#include <stdlib.h>
#include <string.h>

struct agent_endpoints {
    agent_state_fn fn;
    void *arg;
    agent_view_fn view; /* for the metrics, once registered */
    void *view_arg;
    struct http_server *srv;       /* whose latencies /metrics shows */
    const struct agent_auth *auth; /* filters /state under --acls */
};

static void handle_health(struct http_request *req, void *arg)
{
    (void)arg;
    http_reply(req, 200, NULL, NULL, 0);
}

static void handle_flags(struct http_request *req, void *arg)
{
    json_t *j = flags_to_json(arg);
    http_reply_json(req, 200, j);
    json_decref(j);
}

static void handle_state(struct http_request *req, void *arg)
{
    const struct agent_endpoints *r = arg;
    struct agent_viewer w;
    json_t *j;
    if (r->view != NULL && agent_auth_viewer(r->auth, req, &w)) {
        struct agent_state_view v;
        memset(&v, 0, sizeof(v));
        r->view(r->view_arg, &v);
        v.viewer = &w;
        j = agent_state_json(&v);
        agent_viewer_fini(&w);
    } else {
        j = r->fn(r->arg);
    }
    http_reply_json(req, 200, j);
    json_decref(j);
}

struct agent_endpoints *agent_endpoints_register(struct http_server *srv,
                                                 const struct flags *flags,
                                                 agent_state_fn state,
                                                 void *arg)
{
    struct agent_endpoints *e = xcalloc(1, sizeof(*e));
    e->fn = state;
    e->arg = arg;
    static const char *const prefixes[] = {"", "/slave(1)"};
    for (size_t i = 0; i < 2; i++) {
        char *health = xasprintf("%s/health", prefixes[i]);
        char *fl = xasprintf("%s/flags", prefixes[i]);
        char *st = xasprintf("%s/state", prefixes[i]);
        int rc =
            http_server_route(srv, health, HTTP_GET, handle_health, NULL) |
            http_server_route(srv, fl, HTTP_GET, handle_flags, (void *)flags) |
            http_server_route(srv, st, HTTP_GET, handle_state, e);
        free(health);
        free(fl);
        free(st);
        if (rc != 0) {
            free(e);
            return NULL;
        }
    }
    return e;
}

/* ---- Metrics ---- */

/* The snapshot keys that are Prometheus counters: none, the agent keeps no
 * counters (agent_metrics_collect); every key is a gauge. */
static const char *const *const agent_counters = NULL;
static const size_t agent_ncounters = 0;

static void snapshot_key(void *arg, const char *key, double v)
{
    prom_snapshot_key(arg, "offerd_", agent_counters, agent_ncounters, key, v);
}

struct prom_writer *agent_metrics_prometheus(const struct agent_state_view *v,
                                             const struct http_server *srv)
{
    struct prom_writer *w = prom_writer_new();
    agent_metrics_collect(v, snapshot_key, w);
    http_server_write_latency(srv, w, "offerd_http_request_duration_seconds",
                              "Time from a request's arrival to its reply "
                              "(or its stream's start), by endpoint");
    return w;
}

static void metric_json(void *arg, const char *key, double v)
{
    json_object_set_new(arg, key, json_real(v));
}

static void handle_snapshot(struct http_request *req, void *arg)
{
    const struct agent_endpoints *e = arg;
    struct agent_state_view v;
    e->view(e->view_arg, &v);
    json_t *j = json_object();
    agent_metrics_collect(&v, metric_json, j);
    http_reply_json(req, 200, j);
    json_decref(j);
}

static void handle_prometheus(struct http_request *req, void *arg)
{
    const struct agent_endpoints *e = arg;
    struct agent_state_view v;
    e->view(e->view_arg, &v);
    struct prom_writer *w = agent_metrics_prometheus(&v, e->srv);
    size_t len;
    const char *text = prom_writer_text(w, &len);
    http_reply(req, 200, PROM_CONTENT_TYPE, text, len);
    prom_writer_free(w);
}

int agent_endpoints_metrics(struct agent_endpoints *e, struct http_server *srv,
                            agent_view_fn view, void *arg)
{
    e->view = view;
    e->view_arg = arg;
    e->srv = srv;
    static const char *const prefixes[] = {"", "/slave(1)"};
    for (size_t i = 0; i < 2; i++) {
        char *snap = xasprintf("%s/metrics/snapshot", prefixes[i]);
        char *prom = xasprintf("%s/metrics", prefixes[i]);
        int rc = http_server_route(srv, snap, HTTP_GET, handle_snapshot, e) |
                 http_server_route(srv, prom, HTTP_GET, handle_prometheus, e);
        free(snap);
        free(prom);
        if (rc != 0)
            return -1;
    }
    return 0;
}

void agent_endpoints_set_auth(struct agent_endpoints *e,
                              const struct agent_auth *auth)
{
    e->auth = auth;
}

void agent_endpoints_free(struct agent_endpoints *e)
{
    free(e);
}
