/*
 * Resource estimator and QoS controller rounds (see oversub.h).
 */
#include "agent/oversub.h"

#include "agent/estimator.h"
#include "agent/qos.h"
#include "agent/supervisor.h"
#include "agent/isolator.h"
#include "agent/usage.h"
#include "common/clock.h"
#include "common/fs.h"
#include "common/hmap.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/resources_pb.h"
#include "common/task_state.h"

#include <event2/event.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Largest --oversubscribed_resources file read. */
#define FIXED_FILE_MAX (1 << 20)

/* What the module remembers of a task between rounds. */
struct task_track {
    bool seen;        /* seen this round (unseen ones are dropped) */
    uint64_t seq;     /* order of first sight */
    int64_t start_ns; /* launch time (wall ns): the supervisor's pid file
                         mtime, else when first seen */
    bool start_exact; /* start_ns is the pid file's mtime */
    bool has_prev;    /* prev_ticks / prev_ns hold a sample */
    uint64_t prev_ticks;
    int64_t prev_ns;  /* monotonic */
    bool has_cpus;    /* cpus_used holds a value */
    double cpus_used; /* smoothed cores */
    bool has_mem;     /* mem_used holds a value */
    double mem_used;  /* smoothed MB */
    bool warned;      /* its resources could not be read (logged once) */
};

/* One live task of a round. */
struct live {
    struct agent_task *t;
    struct task_track *tr;
    res_list revocable;
    int64_t cpus, mem; /* non-revocable, milli-units */
};

struct agent_oversub {
    struct event_base *base;
    struct agent_oversub_config cfg;
    const struct agent_flags *flags;
    struct agent_tasks *table;
    struct agent_oversub_cbs cbs;
    struct event *timer;
    bool running;

    const char *fixed_path; /* fixed estimator from a file: its path */
    res_list fixed;         /* fixed estimator: the last good reading */
    char fixed_err[1024];   /* the file's last problem, "" when read */

    struct hmap *tracks; /* "fw\ntask" -> struct task_track */
    uint64_t next_seq;
    unsigned rounds; /* rounds run */
    bool warmed_up;  /* usage: the first estimate was made */

    bool has_estimate; /* estimate holds the current estimate */
    res_list estimate;
    bool dirty;       /* estimate not sent since it changed */
    double threshold; /* load threshold in force */
    long clk_tck;
    long page_size;
};

static const char FILE_PREFIX[] = "file://";

static void on_timer(evutil_socket_t fd, short what, void *arg);

static bool is_revocable(const struct resource *r, const void *arg)
{
    (void)arg;
    return res_is_revocable(r);
}

static bool is_regular(const struct resource *r, const void *arg)
{
    (void)arg;
    return !res_is_revocable(r);
}

/* Read the fixed estimate from its file. */
static int read_fixed_file(const char *path, res_list *out, char *err,
                           size_t errlen)
{
    uint8_t *data = NULL;
    size_t len = 0;
    int rc = fs_read(path, FIXED_FILE_MAX, &data, &len);
    if (rc != 1) {
        snprintf(err, errlen, "--oversubscribed_resources: cannot read %s",
                 path);
        free(data);
        return -1;
    }
    /* Trailing newlines and spaces are not part of the value. */
    while (len > 0 && (data[len - 1] == '\n' || data[len - 1] == ' ' ||
                       data[len - 1] == '\r' || data[len - 1] == '\t'))
        data[--len] = '\0';
    char perr[512];
    rc = agent_est_parse_fixed((const char *)data, out, perr, sizeof(perr));
    if (rc != 0)
        snprintf(err, errlen, "--oversubscribed_resources: %s: %s", path, perr);
    free(data);
    return rc;
}

struct agent_oversub *agent_oversub_new(struct event_base *base,
                                        const struct agent_oversub_config *cfg,
                                        struct agent_tasks *table,
                                        const struct agent_oversub_cbs *cbs,
                                        char *err, size_t errlen)
{
    struct agent_oversub *o = xcalloc(1, sizeof(*o));
    o->base = base;
    o->cfg = *cfg;
    o->flags = cfg->flags;
    o->table = table;
    o->cbs = *cbs;
    o->tracks = hmap_new();
    o->clk_tck = sysconf(_SC_CLK_TCK);
    if (o->clk_tck <= 0)
        o->clk_tck = 100;
    o->page_size = sysconf(_SC_PAGESIZE);
    if (o->page_size <= 0)
        o->page_size = 4096;
    o->threshold = o->flags->qos_load_threshold;
    if (!(o->threshold > 0)) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        o->threshold = n > 0 ? (double)n : 1.0;
    }
    if (o->flags->estimator == AGENT_ESTIMATOR_FIXED) {
        const char *v = o->flags->oversubscribed_resources;
        char perr[512];
        int rc;
        if (strncmp(v, FILE_PREFIX, sizeof(FILE_PREFIX) - 1) == 0) {
            o->fixed_path = v + sizeof(FILE_PREFIX) - 1;
            rc = read_fixed_file(o->fixed_path, &o->fixed, err, errlen);
        } else {
            rc = agent_est_parse_fixed(v, &o->fixed, perr, sizeof(perr));
            if (rc != 0)
                snprintf(err, errlen, "--oversubscribed_resources: %s", perr);
        }
        if (rc != 0) {
            agent_oversub_free(o);
            return NULL;
        }
    }
    o->timer = event_new(base, -1, EV_PERSIST, on_timer, o);
    return o;
}

/* ---- Tasks of a round ---- */

static void track_free(void *p)
{
    free(p);
}

static char *track_key(const struct agent_task *t)
{
    return xasprintf("%s\n%s", t->framework_id, t->task_id);
}

/* The launch time of t: its supervisor pid file's mtime. */
static bool pid_file_mtime(const struct agent_task *t, int64_t *ns)
{
    if (t->sandbox == NULL)
        return false;
    char path[PATH_MAX];
    int n =
        snprintf(path, sizeof(path), "%s/%s", t->sandbox, AGENT_SUP_PID_FILE);
    struct stat st;
    if (n < 0 || (size_t)n >= sizeof(path) || stat(path, &st) != 0)
        return false;
    *ns = (int64_t)st.st_mtim.tv_sec * CLOCK_NS_PER_SEC + st.st_mtim.tv_nsec;
    return true;
}

static bool task_is_live(const struct agent_task *t)
{
    return (t->phase == AGENT_TASK_LAUNCHING ||
            t->phase == AGENT_TASK_RUNNING) &&
           !task_state_is_terminal(t->state);
}

/* Every live task with its resources; marks their tracks seen. Returns the
 * count; *out is a new array (free with free_lives). */
static size_t gather(struct agent_oversub *o, struct live **out)
{
    size_t cap = agent_tasks_count(o->table), n = 0, pos = 0;
    struct live *v = xcalloc(cap ? cap : 1, sizeof(*v));
    int64_t wall = clock_wall_ns();
    struct agent_task *t;
    while ((t = agent_tasks_next(o->table, &pos)) != NULL && n < cap) {
        if (!task_is_live(t))
            continue;
        char *key = track_key(t);
        struct task_track *tr = hmap_get(o->tracks, key);
        if (tr == NULL) {
            tr = xcalloc(1, sizeof(*tr));
            tr->seq = o->next_seq++;
            tr->start_ns = wall;
            hmap_put(o->tracks, key, tr);
        }
        free(key);
        tr->seen = true;
        if (!tr->start_exact && pid_file_mtime(t, &tr->start_ns))
            tr->start_exact = true;

        struct live *l = &v[n++];
        l->t = t;
        l->tr = tr;
        res_list_init(&l->revocable);
        res_list all = RES_LIST_INIT;
        char err[256];
        if (res_list_from_pb(t->info->resources, t->info->n_resources, &all,
                             err, sizeof(err)) != 0) {
            if (!tr->warned)
                log_warn("oversubscription: task %s of framework %s: its "
                         "resources are unreadable (%s): taken as none",
                         t->task_id, t->framework_id, err);
            tr->warned = true;
        }
        res_list_filter(&all, is_revocable, NULL, &l->revocable);
        res_list regular = RES_LIST_INIT;
        res_list_filter(&all, is_regular, NULL, &regular);
        l->cpus = res_list_scalar(&regular, "cpus");
        l->mem = res_list_scalar(&regular, "mem");
        res_list_clear(&regular);
        res_list_clear(&all);
    }
    *out = v;
    return n;
}

static void free_lives(struct live *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        res_list_clear(&v[i].revocable);
    free(v);
}

/* Forget the tracks of tasks not seen this round; clear the marks. */
static void sweep_tracks(struct agent_oversub *o)
{
    size_t pos = 0, ndead = 0, cap = 0;
    const char *key;
    void *val;
    char **dead = NULL;
    while (hmap_next(o->tracks, &pos, &key, &val)) {
        struct task_track *tr = val;
        if (tr->seen) {
            tr->seen = false;
            continue;
        }
        if (ndead == cap) {
            cap = cap ? cap * 2 : 8;
            dead = xreallocarray(dead, cap, sizeof(*dead));
        }
        dead[ndead++] = xstrdup(key);
    }
    for (size_t i = 0; i < ndead; i++) {
        free(hmap_del(o->tracks, dead[i]));
        free(dead[i]);
    }
    free(dead);
}

/* ---- Estimators ---- */

/* Sample the tasks' processes and update their smoothed use. */
static void sample_usage(struct agent_oversub *o, struct live *v, size_t n)
{
    pid_t *leaders = xcalloc(n ? n : 1, sizeof(*leaders));
    struct agent_usage *u = xcalloc(n ? n : 1, sizeof(*u));
    size_t *which = xcalloc(n ? n : 1, sizeof(*which));
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].t->phase != AGENT_TASK_RUNNING || v[i].t->task_pid <= 0)
            continue;
        leaders[m] = v[i].t->task_pid;
        which[m++] = i;
    }
    int64_t now = clock_monotonic_ns();
    if (m > 0 && agent_usage_scan(o->cfg.proc_root, leaders, m, u) != 0) {
        log_warn("oversubscription: cannot read %s: no usage sample",
                 o->cfg.proc_root);
        m = 0;
    }
    for (size_t k = 0; k < m; k++) {
        struct task_track *tr = v[which[k]].tr;
        /* The task's cgroup, where it has one, counts every process. */
        struct agent_usage cu;
        if (agent_iso_usage(o->cfg.iso, v[which[k]].t, (long)o->clk_tck,
                            (long)o->page_size, &cu) == 0)
            u[k] = cu;
        if (u[k].nprocs == 0)
            continue; /* gone between the table and the scan */
        double mem =
            (double)u[k].rss_pages * (double)o->page_size / (1024.0 * 1024.0);
        tr->mem_used = tr->has_mem
                           ? agent_est_ewma(tr->mem_used, mem, AGENT_EST_ALPHA)
                           : mem;
        tr->has_mem = true;
        if (tr->has_prev && now > tr->prev_ns &&
            u[k].cpu_ticks >= tr->prev_ticks) {
            double cores = (double)(u[k].cpu_ticks - tr->prev_ticks) /
                           (double)o->clk_tck /
                           ((double)(now - tr->prev_ns) / CLOCK_NS_PER_SEC);
            tr->cpus_used = tr->has_cpus ? agent_est_ewma(tr->cpus_used, cores,
                                                          AGENT_EST_ALPHA)
                                         : cores;
            tr->has_cpus = true;
        }
        /* A drop in the total (a member's time left with it) gives no rate
         * this round; the next one starts from here. */
        tr->has_prev = true;
        tr->prev_ticks = u[k].cpu_ticks;
        tr->prev_ns = now;
    }
    free(leaders);
    free(u);
    free(which);
}

/* The usage estimate of this round into *est; false when it is not ready
 * (warming up). */
static bool estimate_usage(struct agent_oversub *o, struct live *v, size_t n,
                           res_list *est)
{
    sample_usage(o, v, n);
    struct agent_est_task *e = xcalloc(n ? n : 1, sizeof(*e));
    size_t m = 0;
    bool all_measured = true;
    for (size_t i = 0; i < n; i++) {
        const struct task_track *tr = v[i].tr;
        if (v[i].cpus <= 0 && v[i].mem <= 0)
            continue; /* holds no regular cpus or mem */
        if (!tr->has_cpus || !tr->has_mem) {
            all_measured = false;
            continue;
        }
        e[m].cpus = v[i].cpus;
        e[m].mem = v[i].mem;
        e[m].cpus_used = tr->cpus_used;
        e[m].mem_used = tr->mem_used;
        m++;
    }
    if (!o->warmed_up && !all_measured &&
        o->rounds < AGENT_OVERSUB_WARMUP_ROUNDS) {
        free(e);
        return false;
    }
    o->warmed_up = true;
    int64_t cpus, mem;
    agent_est_slack(e, m, o->flags->oversubscription_margin, &cpus, &mem);
    free(e);
    agent_est_list(cpus, mem, est);
    return true;
}

/* The fixed estimate: the last good reading of the file, or the flag. */
static void estimate_fixed(struct agent_oversub *o, res_list *est)
{
    if (o->fixed_path != NULL) {
        res_list fresh = RES_LIST_INIT;
        char err[1024];
        if (read_fixed_file(o->fixed_path, &fresh, err, sizeof(err)) == 0) {
            res_list_clear(&o->fixed);
            o->fixed = fresh;
            if (o->fixed_err[0] != '\0')
                log_info("--oversubscribed_resources: %s is readable again",
                         o->fixed_path);
            o->fixed_err[0] = '\0';
        } else {
            /* Once per problem, not every round. */
            if (strcmp(err, o->fixed_err) != 0)
                log_warn("%s: keeping the previous estimate", err);
            snprintf(o->fixed_err, sizeof(o->fixed_err), "%s", err);
            res_list_clear(&fresh);
        }
    }
    res_list_copy(est, &o->fixed);
}

/* ---- Reporting ---- */

static void send_estimate(struct agent_oversub *o)
{
    Offerd__Agent__Call__UpdateOversubscribed uo =
        OFFERD__AGENT__CALL__UPDATE_OVERSUBSCRIBED__INIT;
    size_t n = 0;
    Mesos__V1__Resource **v = res_list_to_pb(&o->estimate, true, &n);
    uo.oversubscribed_resources = v;
    uo.n_oversubscribed_resources = n;
    Offerd__Agent__Call call = OFFERD__AGENT__CALL__INIT;
    call.type = OFFERD__AGENT__CALL__TYPE__UPDATE_OVERSUBSCRIBED;
    call.update_oversubscribed = &uo;
    if (o->cbs.send(&call, o->cbs.arg) == 0) {
        o->dirty = false;
        char *text = res_list_render(&o->estimate);
        log_debug("sent UPDATE_OVERSUBSCRIBED: %s",
                  text[0] != '\0' ? text : "(none)");
        free(text);
    }
    res_pb_array_free(v, n);
}

/* Take est as the current estimate; send it when it changed. */
static void set_estimate(struct agent_oversub *o, res_list *est)
{
    if (o->has_estimate && res_list_equal(&o->estimate, est)) {
        res_list_clear(est);
        if (o->dirty)
            send_estimate(o);
        return;
    }
    char *text = res_list_render(est);
    log_info("oversubscribed resources estimate: %s",
             text[0] != '\0' ? text : "(none)");
    free(text);
    res_list_clear(&o->estimate);
    o->estimate = *est;
    res_list_init(est);
    o->has_estimate = true;
    o->dirty = true;
    send_estimate(o);
}

/* ---- QoS ---- */

static void qos_round(struct agent_oversub *o, struct live *v, size_t n)
{
    bool use_load = true;
    double load = 0;
    if (agent_qos_read_loadavg(o->cfg.proc_root, &load) != 0) {
        log_warn("QoS: cannot read %s/loadavg: load rule skipped this round",
                 o->cfg.proc_root);
        use_load = false;
    }
    struct agent_qos_task *q = xcalloc(n ? n : 1, sizeof(*q));
    for (size_t i = 0; i < n; i++) {
        q[i].start_ns = v[i].tr->start_ns;
        q[i].seq = v[i].tr->seq;
        q[i].revocable = &v[i].revocable;
        q[i].dying = v[i].t->kill_requested;
    }
    struct agent_qos_input in = {
        .tasks = q,
        .ntasks = n,
        .estimate = o->has_estimate ? &o->estimate : NULL,
        .load_rule = use_load,
        .load = load,
        .threshold = o->threshold,
    };
    size_t *out = xcalloc(n ? n : 1, sizeof(*out));
    bool by_load = false;
    size_t k = agent_qos_decide(&in, out, &by_load);
    for (size_t i = 0; i < k; i++) {
        struct live *l = &v[out[i]];
        char *held = res_list_render(&l->revocable);
        char why[512];
        if (by_load)
            snprintf(why, sizeof(why),
                     "the load average %.2f is above %.2f (it holds %s)", load,
                     o->threshold, held);
        else
            snprintf(why, sizeof(why),
                     "the revocable resources held exceed the estimate (it "
                     "holds %s)",
                     held);
        free(held);
        log_info("QoS: evicting task %s of framework %s: %s", l->t->task_id,
                 l->t->framework_id, why);
        o->cbs.evict(l->t, why, o->cbs.arg);
    }
    free(out);
    free(q);
}

/* ---- Rounds ---- */

static void round_run(struct agent_oversub *o)
{
    if (!o->running)
        return;
    struct live *v = NULL;
    size_t n = gather(o, &v);
    res_list est = RES_LIST_INIT;
    bool have = false;
    switch (o->flags->estimator) {
    case AGENT_ESTIMATOR_FIXED:
        estimate_fixed(o, &est);
        have = true;
        break;
    case AGENT_ESTIMATOR_USAGE:
        have = estimate_usage(o, v, n, &est);
        break;
    case AGENT_ESTIMATOR_NONE:
        break;
    }
    if (have)
        set_estimate(o, &est);
    res_list_clear(&est);
    o->rounds++;
    if (o->flags->qos == AGENT_QOS_LOAD)
        qos_round(o, v, n);
    free_lives(v, n);
    sweep_tracks(o);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    round_run(arg);
}

void agent_oversub_start(struct agent_oversub *o)
{
    if (o->flags->estimator == AGENT_ESTIMATOR_NONE &&
        o->flags->qos == AGENT_QOS_NONE)
        return;
    if (o->flags->estimator != AGENT_ESTIMATOR_NONE &&
        o->flags->qos == AGENT_QOS_NONE)
        log_info("oversubscription: no QoS controller "
                 "(--qos_controller=none): revocable tasks are never evicted");
    int64_t iv = o->flags->oversubscription_interval_ns;
    struct timeval tv = {(time_t)(iv / CLOCK_NS_PER_SEC),
                         (suseconds_t)((iv % CLOCK_NS_PER_SEC) / 1000)};
    o->running = true;
    event_add(o->timer, &tv);
    round_run(o);
}

void agent_oversub_stop(struct agent_oversub *o)
{
    o->running = false;
    if (o->timer != NULL)
        event_del(o->timer);
}

void agent_oversub_registered(struct agent_oversub *o)
{
    if (o->has_estimate) {
        o->dirty = true;
        send_estimate(o);
    }
}

const res_list *agent_oversub_estimate(const struct agent_oversub *o)
{
    return o->has_estimate ? &o->estimate : NULL;
}

void agent_oversub_free(struct agent_oversub *o)
{
    if (o == NULL)
        return;
    if (o->timer != NULL)
        event_free(o->timer);
    hmap_free(o->tracks, track_free);
    res_list_clear(&o->fixed);
    res_list_clear(&o->estimate);
    free(o);
}
