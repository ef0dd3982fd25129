/*
 * Administrative endpoints (see admin_endpoints.h): teardown by operators,
 * the leader redirect, the registry's content, host statistics and the
 * temporary log level toggle. Paths, parameters, status codes and reasons
 * follow Mesos's src/master/http.cpp, src/master/registrar.cpp and
 * libprocess's logging.cpp and system.hpp.
 */
#include "master/admin_endpoints.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_pb.h"
#include "common/log.h"
#include "common/log_toggle.h"
#include "common/mem.h"
#include "master/frameworks.h"
#include "master/send.h"
#include "master/system_endpoints.h"
#include "offerd/registry.pb-c.h"

/* What the endpoints keep between requests. */
struct admin_state {
    struct master *m;
    /* /logging/toggle and SET_LOGGING_LEVEL: the verbosity above the
     * --logging_level and the timer that puts it back. */
    struct log_toggle *toggle;
};

/* ---- /teardown ----------------------------------------------------------- */

void master_teardown_framework(struct master *m, struct http_request *req,
                               const char *id)
{
    struct framework *fw = master_framework_find(m, id);
    /* A framework whose first SUBSCRIBE is still being recorded has no
     * info yet: not a framework the master can tear down. */
    if (fw == NULL || fw->info == NULL) {
        http_reply_error(req, 400, "No framework found with specified ID");
        return;
    }
    master_framework_remove(m, fw, "torn down by an operator");
    http_reply(req, 200, NULL, NULL, 0);
}

static void handle_teardown(struct http_request *req, void *arg)
{
    struct master *m = arg;
    size_t len;
    const char *body = (const char *)http_request_body(req, &len);
    char *id = http_form_value(body, len, "frameworkId");
    if (id == NULL || id[0] == '\0')
        http_reply_error(
            req, 400,
            "Missing 'frameworkId' query parameter in the request body");
    else
        master_teardown_framework(m, req, id);
    free(id);
}

/* ---- /redirect ----------------------------------------------------------- */

/* This master is the leader: Mesos's leader redirects /redirect to its own
 * base URL, protocol-relative. (A path below /redirect/ is a 404, which the
 * router answers: routes are exact.) */
static void handle_redirect(struct http_request *req, void *arg)
{
    struct master *m = arg;
    char loc[512];
    snprintf(loc, sizeof(loc), "//%s:%u", m->flags->hostname,
             (unsigned)m->port);
    http_reply_header(req, "Location", loc);
    http_reply(req, 307, NULL, NULL, 0);
}

/* ---- /registrar(1)/registry ---------------------------------------------- */

/* {"value": id} */
static json_t *id_json(const char *id)
{
    json_t *o = json_object();
    json_object_set_new(o, "value", json_string(id));
    return o;
}

static json_t *agent_entry(const Mesos__V1__AgentInfo *info,
                           const Mesos__V1__DrainInfo *drain, bool deactivated)
{
    json_t *o = json_object();
    json_object_set_new(o, "info", jpb_to_json(&info->base));
    if (drain != NULL)
        json_object_set_new(o, "drain_info", jpb_to_json(&drain->base));
    json_object_set_new(o, "deactivated", json_boolean(deactivated));
    return o;
}

/* {"slaves": [{"id": {"value": id}}]} of the ids of map (timestamps are
 * not kept in memory). */
static json_t *ids_entries(struct hmap *map)
{
    json_t *arr = json_array();
    const char *key;
    size_t pos = 0;
    while (hmap_next(map, &pos, &key, NULL)) {
        json_t *e = json_object();
        json_object_set_new(e, "id", id_json(key));
        json_array_append_new(arr, e);
    }
    json_t *o = json_object();
    json_object_set_new(o, "slaves", arr);
    return o;
}

static json_t *machine_entry(const struct machine *mc)
{
    json_t *id = json_object();
    if (mc->hostname[0] != '\0')
        json_object_set_new(id, "hostname", json_string(mc->hostname));
    if (mc->ip[0] != '\0')
        json_object_set_new(id, "ip", json_string(mc->ip));
    json_t *info = json_object();
    json_object_set_new(info, "id", id);
    const ProtobufCEnumValue *mode = protobuf_c_enum_descriptor_get_value(
        &mesos__v1__machine_info__mode__descriptor, mc->mode);
    if (mode != NULL)
        json_object_set_new(info, "mode", json_string(mode->name));
    json_t *un = json_object();
    json_t *start = json_object();
    json_object_set_new(start, "nanoseconds",
                        json_integer((json_int_t)mc->unav.start_ns));
    json_object_set_new(un, "start", start);
    if (mc->unav.duration_ns >= 0) {
        json_t *d = json_object();
        json_object_set_new(d, "nanoseconds",
                            json_integer((json_int_t)mc->unav.duration_ns));
        json_object_set_new(un, "duration", d);
    }
    json_object_set_new(info, "unavailability", un);
    json_t *o = json_object();
    json_object_set_new(o, "info", info);
    return o;
}

json_t *master_registry_json(struct master *m)
{
    json_t *o = json_object();
    Mesos__V1__MasterInfo mi;
    Mesos__V1__Address addr;
    master_fill_info(m, &mi, &addr);
    json_t *master = json_object();
    json_object_set_new(master, "info", jpb_to_json(&mi.base));
    json_object_set_new(o, "master", master);

    /* Admitted agents: registered ones, and those known from before a
     * restart that have not re-registered yet. */
    json_t *agents = json_array();
    size_t pos = 0;
    void *val;
    while (hmap_next(m->agents, &pos, NULL, &val)) {
        const struct agent *ag = val;
        json_array_append_new(
            agents, agent_entry(ag->info, ag->drain, ag->deactivated));
    }
    pos = 0;
    while (hmap_next(m->recovered_agents, &pos, NULL, &val)) {
        const Offerd__Registry__Agent *ra = val;
        json_array_append_new(
            agents, agent_entry(ra->info, ra->drain_info, ra->deactivated));
    }
    json_t *slaves = json_object();
    json_object_set_new(slaves, "slaves", agents);
    json_object_set_new(o, "slaves", slaves);
    json_object_set_new(o, "unreachable", ids_entries(m->unreachable_agents));
    json_object_set_new(o, "gone", ids_entries(m->gone_agents));

    json_t *machines = json_array();
    pos = 0;
    while (hmap_next(m->machines, &pos, NULL, &val))
        json_array_append_new(machines, machine_entry(val));
    json_t *mo = json_object();
    json_object_set_new(mo, "machines", machines);
    json_object_set_new(o, "machines", mo);
    json_t *schedules = json_array();
    if (m->schedule != NULL)
        json_array_append_new(schedules, jpb_to_json(&m->schedule->base));
    json_object_set_new(o, "schedules", schedules);
    return o;
}

static void handle_registry(struct http_request *req, void *arg)
{
    json_t *j = master_registry_json(arg);
    http_reply_json_jsonp(req, 200, j);
    json_decref(j);
}

/* ---- /system/stats.json -------------------------------------------------- */

/* master_system_metrics's readings under Mesos's /system/stats.json keys:
 * "system/load_1min" is "avg_load_1min", the counts are integers. */
static void put_system_stat(void *arg, const char *name, double v)
{
    json_t *o = arg;
    const char *key = strncmp(name, "system/", 7) == 0 ? name + 7 : name;
    if (strncmp(key, "load_", 5) == 0) {
        char avg[32];
        snprintf(avg, sizeof(avg), "avg_%s", key);
        json_object_set_new(o, avg, json_real(v));
    } else {
        json_object_set_new(o, key, json_integer((json_int_t)v));
    }
}

static void handle_system_stats(struct http_request *req, void *arg)
{
    (void)arg;
    json_t *o = json_object();
    master_system_metrics(put_system_stat, o);
    http_reply_json_jsonp(req, 200, o);
    json_decref(o);
}

/* ---- /logging/toggle, SET_LOGGING_LEVEL -------------------------------- */

struct log_toggle *master_log_toggle(struct master *m)
{
    return m->admin->toggle;
}

/* ---- Registration -------------------------------------------------------- */

int master_admin_endpoints_register(struct master *m)
{
    struct admin_state *a = xcalloc(1, sizeof(*a));
    a->m = m;
    a->toggle = log_toggle_new(m->base, m->flags->log_level);
    m->admin = a;
    const struct {
        const char *path;
        unsigned methods;
        http_handler_fn fn;
    } routes[] = {
        {"/teardown", HTTP_POST, handle_teardown},
        {"/master/teardown", HTTP_POST, handle_teardown},
        {"/redirect", HTTP_GET | HTTP_POST, handle_redirect},
        {"/master/redirect", HTTP_GET | HTTP_POST, handle_redirect},
        {"/registrar(1)/registry", HTTP_GET, handle_registry},
        {"/system/stats.json", HTTP_GET, handle_system_stats},
    };
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
        if (http_server_route(m->http, routes[i].path, routes[i].methods,
                              routes[i].fn, m) != 0)
            return -1;
    return http_server_route(m->http, "/logging/toggle", HTTP_GET | HTTP_POST,
                             log_toggle_handle, a->toggle);
}

void master_admin_free(struct master *m)
{
    struct admin_state *a = m->admin;
    if (a == NULL)
        return;
    log_toggle_free(a->toggle);
    free(a);
    m->admin = NULL;
}
