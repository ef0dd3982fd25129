/*
 * The master's proxy of its agents' /files endpoints, for the web UI's
 * sandbox browser (a page served by the master cannot fetch from an
 * agent's own origin):
 *
 *   GET /agent/<agent_id>/files/browse?path=P
 *   GET /agent/<agent_id>/files/read?path=P&offset=N&length=N
 *   GET /agent/<agent_id>/files/download?path=P
 *
 * Each is forwarded to the registered agent's address with the master's
 * HTTP client (only the parameters above are passed on), and the agent's
 * answer (status, Content-Type, body) is relayed with
 * "X-Content-Type-Options: nosniff"; a download is always
 * application/octet-stream with "Content-Disposition: attachment", so a
 * sandbox file is never rendered in the master's origin.
 * An unknown agent is 404, another path under /agent/ 404, a parameter
 * longer than FILES_PROXY_MAX_PARAM 400; an agent that does not answer
 * within FILES_PROXY_TIMEOUT_MS, refuses the connection or sends more than
 * FILES_PROXY_MAX_BODY bytes is 502; more than FILES_PROXY_MAX_PENDING
 * requests in flight is 503.
 */
#ifndef OFFERD_MASTER_FILES_PROXY_H
#define OFFERD_MASTER_FILES_PROXY_H

#include "master/master_types.h"

#define FILES_PROXY_TIMEOUT_MS  10000
#define FILES_PROXY_MAX_BODY    ((size_t)16 << 20)
#define FILES_PROXY_MAX_PARAM   4096
#define FILES_PROXY_MAX_PENDING 64

/* Route GET /agent/ to the proxy and set m->files_proxy. Returns 0, or -1
 * when the route is taken. */
int master_files_proxy_register(struct master *m);

/* Cancel the requests in flight (their clients get nothing more: call it
 * after http_server_free) and free m->files_proxy. */
void master_files_proxy_free(struct master *m);

#endif
