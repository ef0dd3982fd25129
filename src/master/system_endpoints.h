/*
 * The master's system endpoints, as Mesos serves them:
 *   GET /health  (and /master/health)  200 with an empty body
 *   GET /version                        {"version", "build_date",
 *                                        "build_time", "git_sha" when known}
 *   GET /flags   (and /master/flags)    {"flags": {"name": "value", ...}}
 */
#ifndef OFFERD_MASTER_SYSTEM_ENDPOINTS_H
#define OFFERD_MASTER_SYSTEM_ENDPOINTS_H

#include <jansson.h>

struct http_server;
struct flags;

/* Register the routes on srv. flags is borrowed and must outlive srv's
 * use. Returns 0, or -1 if a path is already routed. */
int master_system_endpoints_register(struct http_server *srv,
                                     const struct flags *flags);

/* The /version document (new reference). */
json_t *master_version_json(void);

#endif
