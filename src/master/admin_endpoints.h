/*
 * The master's administrative endpoints, as Mesos's master and libprocess
 * serve them:
 *   POST /teardown (also /master/teardown)   body frameworkId=<id>: remove
 *                                            the framework; 200, or 400
 *   GET  /redirect (also /master/redirect)   307 to this master (the leader)
 *   GET  /registrar(1)/registry              the registry as JSON
 *   GET  /system/stats.json                  load, cpus, memory of the host
 *   GET  /logging/toggle                     ?level=N&duration=D: more log
 *                                            detail for a while
 * and the operator API's TEARDOWN call (master_teardown_framework).
 */
#ifndef OFFERD_MASTER_ADMIN_ENDPOINTS_H
#define OFFERD_MASTER_ADMIN_ENDPOINTS_H

#include <jansson.h>

#include "master/master_types.h"

/* Register the routes above and set up their state (m->admin). Returns 0,
 * or -1 if a path is already routed. */
int master_admin_endpoints_register(struct master *m);

/* Free what master_admin_endpoints_register set up (m->admin; NULL is
 * fine) and put the log level back if /logging/toggle changed it. */
void master_admin_free(struct master *m);

/* The master's log verbosity toggle (common/log_toggle.h), shared by
 * /logging/toggle and the operator API's SET_LOGGING_LEVEL and
 * GET_LOGGING_LEVEL. Borrowed; valid until master_admin_free. */
struct log_toggle *master_log_toggle(struct master *m);

/* An operator tears down framework id: remove it (its tasks are killed, it
 * joins the completed frameworks) and reply 200 on req, or 400 "No framework
 * found with specified ID" when no subscribed (or recovered) framework has
 * that id, as Mesos answers both /teardown and the TEARDOWN call. */
void master_teardown_framework(struct master *m, struct http_request *req,
                               const char *id);

/* The registry's content in the JSON shape of Mesos's Registry message
 * (master, slaves, unreachable, gone, machines, schedules), built from the
 * master's view of it (new reference). */
json_t *master_registry_json(struct master *m);

#endif
