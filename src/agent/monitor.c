/*
 * /monitor/statistics (see monitor.h).
 */
#include "agent/monitor.h"

#include "agent/auth_agent.h"
#include "agent/isolator.h"
#include "agent/tasks.h"
#include "agent/usage.h"
#include "agent/viewer.h"
#include "common/clock.h"
#include "common/http.h"
#include "common/json_pb.h"
#include "common/mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double task_scalar(const struct agent_task *t, const char *name)
{
    double sum = 0;
    for (size_t i = 0; i < t->info->n_resources; i++) {
        const Mesos__V1__Resource *r = t->info->resources[i];
        if (r->name != NULL && strcmp(r->name, name) == 0 && r->scalar != NULL)
            sum += r->scalar->value;
    }
    return sum;
}

/* ResourceStatistics JSON of a task without a cgroup, from /proc. */
static json_t *proc_statistics(const struct agent_task *t,
                               const char *proc_root, double now)
{
    struct agent_usage u;
    pid_t leader = t->task_pid;
    if (agent_usage_scan(proc_root, &leader, 1, &u) != 0 || u.nprocs == 0)
        return NULL;
    long tck = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
    json_t *s = json_object();
    json_object_set_new(s, "timestamp", json_real(now));
    json_object_set_new(s, "processes", json_integer((json_int_t)u.nprocs));
    if (tck > 0) {
        json_object_set_new(s, "cpus_user_time_secs",
                            json_real((double)u.user_ticks / (double)tck));
        json_object_set_new(s, "cpus_system_time_secs",
                            json_real((double)u.system_ticks / (double)tck));
    }
    if (page > 0)
        json_object_set_new(
            s, "mem_rss_bytes",
            json_integer((json_int_t)(u.rss_pages * (uint64_t)page)));
    json_object_set_new(s, "cpus_limit", json_real(task_scalar(t, "cpus")));
    json_object_set_new(
        s, "mem_limit_bytes",
        json_integer((json_int_t)(task_scalar(t, "mem") * 1048576.0)));
    return s;
}

json_t *agent_monitor_json(const struct agent_state_view *v,
                           const char *proc_root, double now)
{
    json_t *arr = json_array();
    size_t pos = 0;
    const struct agent_task *t;
    while ((t = agent_tasks_next(v->tasks, &pos)) != NULL) {
        if (t->phase != AGENT_TASK_RUNNING || t->task_pid <= 0 ||
            !agent_view_task_executor(v, t))
            continue;
        json_t *stats = NULL;
        Mesos__V1__ResourceStatistics *rs =
            v->iso != NULL ? agent_iso_statistics(v->iso, t, now) : NULL;
        if (rs != NULL) {
            stats = jpb_to_json(&rs->base);
            jpb_free(&rs->base);
        } else {
            stats = proc_statistics(t, proc_root, now);
        }
        if (stats == NULL)
            continue;
        json_t *e = json_object();
        json_object_set_new(e, "executor_id", json_string(t->task_id));
        char *name = xasprintf("Command Executor (Task: %s)", t->task_id);
        json_object_set_new(e, "executor_name", json_string(name));
        free(name);
        json_object_set_new(e, "framework_id", json_string(t->framework_id));
        json_object_set_new(e, "source", json_string(t->task_id));
        json_object_set_new(e, "statistics", stats);
        json_array_append_new(arr, e);
    }
    return arr;
}

struct monitor {
    agent_view_fn view;
    void *arg;
    const struct agent_auth *auth; /* filters under --acls (viewer.h) */
};

static void handle_statistics(struct http_request *req, void *arg)
{
    const struct monitor *m = arg;
    struct agent_state_view v;
    memset(&v, 0, sizeof(v));
    m->view(m->arg, &v);
    struct agent_viewer w;
    if (agent_auth_viewer(m->auth, req, &w))
        v.viewer = &w;
    json_t *j = agent_monitor_json(&v, "/proc", clock_wall_secs());
    if (v.viewer != NULL)
        agent_viewer_fini(&w);
    http_reply_json(req, 200, j);
    json_decref(j);
}

int agent_monitor_register(struct http_server *srv, agent_view_fn view,
                           void *arg, const struct agent_auth *auth)
{
    /* Lives as long as the process: the server holds it by pointer. */
    static struct monitor m;
    m.view = view;
    m.arg = arg;
    m.auth = auth;
    static const char *const paths[] = {
        "/monitor/statistics", "/monitor/statistics.json",
        "/slave(1)/monitor/statistics", "/slave(1)/monitor/statistics.json"};
    int rc = 0;
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
        rc |= http_server_route(srv, paths[i], HTTP_GET, handle_statistics, &m);
    return rc;
}
