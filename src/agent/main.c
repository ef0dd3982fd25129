/*
 * offerd-agent: parse flags, prepare the work_dir, work out the machine's
 * resources, serve the agent's HTTP endpoints and run the agent on one
 * libevent loop. Signals arrive as loop events: SIGTERM and SIGINT stop the
 * agent and leave its tasks running (a later agent is meant to recover
 * them); SIGUSR1 kills every task first, as Mesos's "shut down and kill
 * everything". Both exit 0.
 */
#include "agent/auth_agent.h"
#include "agent/executor_auth.h"
#include "agent/agent.h"
#include "agent/attributes.h"
#include "agent/endpoints.h"
#include "agent/monitor.h"
#include "agent/flags_agent.h"
#include "agent/operator_api.h"
#include "agent/resources_detect.h"
#include "common/domain.h"
#include "common/json_pb.h"
#include "common/files.h"
#include "common/flags.h"
#include "common/fs.h"
#include "common/http.h"
#include "common/log.h"
#include "common/log_toggle.h"
#include "common/mainloop.h"
#include "common/mem.h"
#include "common/resources.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

struct sig_ctx {
    struct event_base *base;
    struct agent *agent;
};

static void on_usr1(evutil_socket_t sig, short what, void *arg)
{
    struct sig_ctx *c = arg;
    (void)what;
    if (c->agent != NULL)
        agent_shutdown(c->agent, "received SIGUSR1");
    else
        event_base_loopexit(c->base, NULL);
    (void)sig;
}

static json_t *state_of(void *arg)
{
    return agent_state(arg);
}

static void view_of(void *arg, struct agent_state_view *out)
{
    agent_state_view_of(arg, out);
}

/* Descriptors 0-2 must be open so that no pipe or socket lands on them
 * (the supervisor relies on it). */
static void ensure_std_fds(void)
{
    for (int fd = 0; fd < 3; fd++) {
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
            int n = open("/dev/null", O_RDWR);
            if (n >= 0 && n != fd) {
                dup2(n, fd);
                close(n);
            }
        }
    }
}

int main(int argc, char **argv)
{
    struct agent_flags af;
    char err[PATH_MAX + 512];
    int rc = 1;

    ensure_std_fds();
    agent_flags_init(&af);
    enum flags_result fr =
        agent_flags_parse(&af, argc, argv, environ, err, sizeof(err));
    if (fr != FLAGS_OK) {
        rc = flags_report(agent_flags_object(&af), fr, err);
        agent_flags_fini(&af);
        return rc;
    }
    log_set_level(af.log_level);
    tls_flags_export(agent_flags_object(&af), &af.tls);

    struct mainloop *ml = NULL;
    struct event_base *base = NULL;
    struct http_server *srv = NULL;
    struct agent *agent = NULL;
    struct files *files = NULL;
    struct log_toggle *toggle = NULL;
    struct agent_endpoints *endpoints = NULL;
    struct agent_opapi *opapi = NULL;
    struct agent_auth *auth = NULL;
    struct agent_exec_auth *exec_auth = NULL;
    struct event *ev_usr1 = NULL;
    res_list resources = RES_LIST_INIT;
    struct agent_attrs attrs = {0};
    Mesos__V1__DomainInfo *domain = NULL;
    char work_dir[PATH_MAX], sandboxes[PATH_MAX + 16], root[PATH_MAX];
    struct sig_ctx sc = {0};

    if (agent_attrs_parse(af.attributes, &attrs, err, sizeof(err)) != 0) {
        fprintf(stderr, "offerd-agent: %s\n", err);
        goto out;
    }
    if (af.domain != NULL && af.domain[0] != '\0' &&
        (domain = domain_load(af.domain, err, sizeof(err))) == NULL) {
        fprintf(stderr, "offerd-agent: --domain: %s\n", err);
        goto out;
    }
    if (fs_mkdirs(af.work_dir, err, sizeof(err)) != 0) {
        log_error("--work_dir: %s", err);
        goto out;
    }
    if (realpath(af.work_dir, work_dir) == NULL) {
        log_error("--work_dir: %s: %s", af.work_dir, strerror(errno));
        goto out;
    }
    snprintf(sandboxes, sizeof(sandboxes), "%s/sandboxes", work_dir);
    if (fs_mkdirs(sandboxes, err, sizeof(err)) != 0 ||
        realpath(sandboxes, root) == NULL) {
        log_error("cannot make the sandboxes directory %s", sandboxes);
        goto out;
    }
    struct agent_machine machine;
    if (agent_machine_probe(work_dir, &machine, err, sizeof(err)) != 0) {
        log_error("%s", err);
        goto out;
    }
    if (agent_resources_build(af.resources, af.default_role, &machine,
                              &resources, err, sizeof(err)) != 0) {
        fprintf(stderr, "offerd-agent: --resources: %s\n", err);
        goto out;
    }
    ml = mainloop_new("stopping (tasks keep running)");
    if (ml == NULL)
        goto out;
    base = mainloop_base(ml);
    sc.base = base;
    ev_usr1 = evsignal_new(base, SIGUSR1, on_usr1, &sc);
    if (ev_usr1 == NULL || evsignal_add(ev_usr1, NULL) != 0) {
        log_error("cannot watch signals");
        goto out;
    }

    auth = agent_auth_new(&af, err, sizeof(err));
    if (auth == NULL) {
        fprintf(stderr, "offerd-agent: %s\n", err);
        goto out;
    }
    if (af.executor_secret_key != NULL) {
        exec_auth = agent_exec_auth_new(af.executor_secret_key,
                                        af.authenticate_http_executors, err,
                                        sizeof(err));
        if (exec_auth == NULL) {
            fprintf(stderr, "offerd-agent: %s\n", err);
            goto out;
        }
    }
    srv = http_server_new(base, NULL);
    http_server_set_gate(srv, agent_auth_gate, auth);
    uint16_t bound = 0;
    if (http_server_bind(srv, af.ip, af.port, &bound, err, sizeof(err)) != 0) {
        log_error("%s", err);
        goto out;
    }
    struct agent_config cfg = {
        .flags = &af,
        .work_dir = work_dir,
        .port = bound,
        .resources = &resources,
        .attributes = &attrs,
        .domain = domain,
        .master_authorization = agent_auth_master_header(auth),
        .exec_auth = exec_auth,
    };
    agent = agent_new(base, &cfg, err, sizeof(err));
    if (agent == NULL) {
        log_error("%s", err);
        goto out;
    }
    sc.agent = agent;
    /* /files serves the sandboxes under their own path, and paths relative
     * to the sandboxes root. */
    files = files_new();
    files_set_base(files, root);
    agent_auth_set_files(auth, files);
    if (files_attach(files, root, root, err, sizeof(err)) != 0) {
        log_error("cannot serve /files: %s", err);
        goto out;
    }
    /* Custom executors' sandboxes, in Mesos's layout (executors.h), under
     * their own absolute path. */
    char slaves[PATH_MAX + 16];
    snprintf(slaves, sizeof(slaves), "%s/slaves", work_dir);
    if (fs_mkdirs(slaves, err, sizeof(err)) != 0 ||
        files_attach(files, slaves, slaves, err, sizeof(err)) != 0) {
        log_error("cannot serve /files: %s", err);
        goto out;
    }
    endpoints =
        agent_endpoints_register(srv, agent_flags_object(&af), state_of, agent);
    if (endpoints != NULL)
        agent_endpoints_set_auth(endpoints, auth);
    toggle = log_toggle_new(base, af.log_level);
    struct agent_opapi_config oc = {files, "/proc", view_of,
                                    agent, toggle,  auth};
    opapi = agent_opapi_new(&oc);
    if (files_route(files, srv) != 0 || endpoints == NULL ||
        agent_endpoints_metrics(endpoints, srv, view_of, agent) != 0 ||
        agent_opapi_register(opapi, srv) != 0 ||
        agent_monitor_register(srv, view_of, agent, auth) != 0 ||
        agent_routes(agent, srv) != 0 ||
        http_server_route(srv, "/logging/toggle", HTTP_GET | HTTP_POST,
                          log_toggle_handle, toggle) != 0) {
        log_error("cannot register the endpoints");
        goto out;
    }
    char *rendered = res_list_render(&resources);
    log_info("offerd-agent %s listening on %s:%u (hostname %s, work_dir %s, "
             "master %s, resources %s)",
             OFFERD_VERSION, af.ip, (unsigned)bound, af.hostname, work_dir,
             af.master, rendered);
    free(rendered);
    agent_start(agent);

    if (mainloop_run(ml) != 0)
        goto out;
    log_info("stopped");
    rc = 0;

out:
    http_server_free(srv);
    agent_free(agent);
    files_free(files);
    agent_endpoints_free(endpoints);
    agent_opapi_free(opapi);
    log_toggle_free(toggle);
    agent_auth_free(auth);
    agent_exec_auth_free(exec_auth);
    if (ev_usr1 != NULL)
        event_free(ev_usr1);
    mainloop_free(ml);
    res_list_clear(&resources);
    agent_attrs_clear(&attrs);
    if (domain != NULL)
        jpb_free(&domain->base);
    agent_flags_fini(&af);
    return rc;
}
