/*
 * The proxy of agents' /files endpoints (files_proxy.h). A request is
 * deferred while the agent is asked; the requests in flight are kept in a
 * list so that the master can cancel them when it stops.
 */
#include "master/files_proxy.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/http.h"
#include "common/http_client.h"
#include "common/log.h"
#include "common/mem.h"
#include "master/agents.h"

struct proxy_req {
    struct proxy_req *prev, *next;
    struct files_proxy *p;
    struct http_request *req;  /* deferred until the agent answers */
    struct http_client_req *c; /* the request to the agent */
    char *agent;               /* "<id> at <ip>:<port>", for errors */
    bool download;             /* /files/download: served as an attachment */
};

struct files_proxy {
    struct master *m;
    struct proxy_req *head;
    size_t n;
};

static void unlink_req(struct proxy_req *r)
{
    if (r->prev != NULL)
        r->prev->next = r->next;
    else
        r->p->head = r->next;
    if (r->next != NULL)
        r->next->prev = r->prev;
    r->p->n--;
}

static void free_req(struct proxy_req *r)
{
    free(r->agent);
    free(r);
}

static void on_done(const struct http_client_response *resp, void *arg)
{
    struct proxy_req *r = arg;
    unlink_req(r);
    int status = http_client_status(resp);
    if (status == 0) {
        log_info("files proxy: agent %s: %s", r->agent,
                 http_client_error(resp));
        http_reply_error(r->req, 502, "agent %s did not answer: %s", r->agent,
                         http_client_error(resp));
        free_req(r);
        return;
    }
    /* The bytes come from the agent but are served from the master's
     * origin: a downloaded file is never rendered by the browser (a
     * sandbox's .html could otherwise script the UI), and no reply is
     * sniffed into another type. */
    const char *type = http_client_header(resp, "Content-Type");
    http_reply_header(r->req, "X-Content-Type-Options", "nosniff");
    if (r->download && status == 200) {
        type = "application/octet-stream";
        /* The agent's names the file (files.c quotes it safely); an
         * "attachment" of any form is all that matters here. */
        const char *disp = http_client_header(resp, "Content-Disposition");
        http_reply_header(r->req, "Content-Disposition",
                          disp != NULL && strncmp(disp, "attachment", 10) == 0
                              ? disp
                              : "attachment");
    }
    size_t len;
    const uint8_t *body = http_client_body(resp, &len);
    http_reply(r->req, status, type, body, len);
    free_req(r);
}

/* Append "&name=<value percent-encoded>" (or "?..." first) to out when the
 * request has the parameter. Returns 0, or -1 when it is too long. */
static int add_param(struct http_request *req, const char *name, char *out,
                     size_t n)
{
    const char *v = http_request_query(req, name);
    if (v == NULL)
        return 0;
    if (strlen(v) > FILES_PROXY_MAX_PARAM)
        return -1;
    size_t k = strlen(out);
    int w =
        snprintf(out + k, n - k, "%c%s=", strchr(out, '?') ? '&' : '?', name);
    if (w < 0 || (size_t)w >= n - k)
        return -1;
    k += (size_t)w;
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *s = (const unsigned char *)v; *s != '\0'; s++) {
        bool plain = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                     (*s >= '0' && *s <= '9') || strchr("-._~/", *s) != NULL;
        if (k + 4 >= n)
            return -1;
        if (plain) {
            out[k++] = (char)*s;
        } else {
            out[k++] = '%';
            out[k++] = hex[*s >> 4];
            out[k++] = hex[*s & 15];
        }
    }
    out[k] = '\0';
    return 0;
}

static void handle(struct http_request *req, void *arg)
{
    struct files_proxy *p = arg;
    const char *path = http_request_path(req) + strlen("/agent/");
    const char *slash = strchr(path, '/');
    static const char *const ops[] = {"/files/browse", "/files/read",
                                      "/files/download"};
    const char *op = NULL;
    for (size_t i = 0; slash != NULL && i < sizeof(ops) / sizeof(ops[0]); i++)
        if (strcmp(slash, ops[i]) == 0)
            op = ops[i];
    if (slash == NULL || slash == path || op == NULL) {
        http_reply_error(req, 404,
                         "expected /agent/<agent_id>/files/{browse,read,"
                         "download}");
        return;
    }
    char id[256];
    size_t idlen = (size_t)(slash - path);
    if (idlen >= sizeof(id)) {
        http_reply_error(req, 404, "no such agent");
        return;
    }
    memcpy(id, path, idlen);
    id[idlen] = '\0';
    struct agent *ag = master_agent_find(p->m, id);
    if (ag == NULL || ag->ip == NULL) {
        http_reply_error(req, 404, "no such agent: %s", id);
        return;
    }
    char target[3 * 3 * FILES_PROXY_MAX_PARAM + 128];
    snprintf(target, sizeof(target), "%s", op);
    if (add_param(req, "path", target, sizeof(target)) != 0 ||
        add_param(req, "offset", target, sizeof(target)) != 0 ||
        add_param(req, "length", target, sizeof(target)) != 0) {
        http_reply_error(req, 400, "a parameter is longer than %d bytes",
                         FILES_PROXY_MAX_PARAM);
        return;
    }
    if (p->n >= FILES_PROXY_MAX_PENDING) {
        http_reply_error(req, 503, "too many agent files requests in flight");
        return;
    }
    struct proxy_req *r = xmalloc(sizeof(*r));
    memset(r, 0, sizeof(*r));
    r->p = p;
    r->req = req;
    r->download = strcmp(op, "/files/download") == 0;
    r->agent = xasprintf("%s at %s:%u", id, ag->ip, (unsigned)ag->port);
    r->next = p->head;
    if (p->head != NULL)
        p->head->prev = r;
    p->head = r;
    p->n++;
    /* The caller's credentials go on to the agent, whose own
     * authentication and access_sandboxes rules then apply (the master's
     * gate has already checked its side, authz.c). */
    const char *authz = http_request_header(req, "Authorization");
    struct http_header fwd = {"Authorization", authz};
    struct http_client_options o = {
        .host = ag->ip,
        .port = ag->port,
        .method = HTTP_GET,
        .path = target,
        .headers = authz != NULL ? &fwd : NULL,
        .nheaders = authz != NULL ? 1 : 0,
        .timeout_ms = FILES_PROXY_TIMEOUT_MS,
        .max_body = FILES_PROXY_MAX_BODY,
    };
    /* done may run later only: the request stays deferred until then. */
    r->c = http_client_request(p->m->base, &o, on_done, r);
}

int master_files_proxy_register(struct master *m)
{
    struct files_proxy *p = xmalloc(sizeof(*p));
    memset(p, 0, sizeof(*p));
    p->m = m;
    m->files_proxy = p;
    return http_server_route_prefix(m->http, "/agent/", HTTP_GET, handle, p);
}

void master_files_proxy_free(struct master *m)
{
    struct files_proxy *p = m->files_proxy;
    if (p == NULL)
        return;
    while (p->head != NULL) {
        struct proxy_req *r = p->head;
        unlink_req(r);
        http_client_cancel(r->c);
        http_reply_error(r->req, 503, "the master is stopping");
        free_req(r);
    }
    free(p);
    m->files_proxy = NULL;
}
