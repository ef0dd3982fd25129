/*
 * /health, /flags and /state of the agent.
 */
#include "agent/endpoints.h"

#include "common/flags.h"
#include "common/http.h"
#include "common/mem.h"

#include <stdlib.h>

struct agent_endpoints {
    agent_state_fn fn;
    void *arg;
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
    json_t *j = r->fn(r->arg);
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

void agent_endpoints_free(struct agent_endpoints *e)
{
    free(e);
}
