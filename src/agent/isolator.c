/*
 * The isolator (see isolator.h).
 */
#include "agent/isolator.h"

#include "agent/disk_quota.h"
#include "agent/tasks.h"
#include "agent/usage.h"
#include "common/clock.h"
#include "common/fs.h"
#include "common/hmap.h"
#include "common/json_pb.h"
#include "common/log.h"
#include "common/mem.h"

#include <dirent.h>
#include <errno.h>
#include <event2/event.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Ticks a busy cgroup's removal is retried before it is left (its marker
 * stays, so the next agent start tries again). */
#define REMOVE_TRIES 80

/* What the isolator knows of one task (by run id). */
struct container {
    char *run_id;
    struct agent_cgroup *cg; /* NULL: posix */
    const char *procs[AGENT_CG_NCTL];
    size_t nprocs;
    struct agent_iso_limitation lim; /* the first limit it went over */
    bool has_disk;                   /* disk_used was measured */
    uint64_t disk_used;              /* bytes */
    int64_t disk_next_ns;            /* next measurement (monotonic) */
};

/* A cgroup being removed. */
struct removal {
    struct agent_cgroup *cg;
    int tries;
};

struct agent_iso {
    struct event_base *base;
    struct agent_iso_flags flags;
    struct agent_cg_hier hier;
    bool cgroups;
    char *root;       /* --cgroups_root */
    char *marker_dir; /* <work_dir>/meta/cgroups */
    struct agent_tasks *tasks;
    struct hmap *containers; /* run id -> struct container */
    struct removal *removals;
    size_t nremovals, capremovals;
    struct event *timer;
};

static void container_free(void *p)
{
    struct container *c = p;
    agent_cg_free(c->cg);
    free(c->run_id);
    free(c);
}

static double task_scalar(const struct agent_task *t, const char *name,
                          bool *revocable)
{
    double sum = 0;
    for (size_t i = 0; i < t->info->n_resources; i++) {
        const Mesos__V1__Resource *r = t->info->resources[i];
        if (r->name == NULL || strcmp(r->name, name) != 0 || r->scalar == NULL)
            continue;
        sum += r->scalar->value;
        if (revocable != NULL && r->revocable != NULL)
            *revocable = true;
    }
    return sum;
}

static bool task_is_live(const struct agent_task *t)
{
    return t->phase == AGENT_TASK_LAUNCHING || t->phase == AGENT_TASK_RUNNING;
}

/* ---- Markers: the cgroups this agent made ---- */

static void marker_set(const struct agent_iso *iso, const char *id, bool on)
{
    char *p = xasprintf("%s/%s", iso->marker_dir, id);
    if (on) {
        if (fs_write_atomic(p, "", 0) != 0)
            log_warn("isolation: cannot write %s: %s", p, strerror(errno));
    } else {
        (void)unlink(p);
    }
    free(p);
}

/* ---- Removal ---- */

static void schedule_removal(struct agent_iso *iso, struct agent_cgroup *cg)
{
    (void)agent_cg_kill_all(cg);
    int rc = agent_cg_remove(cg);
    if (rc == 0) {
        log_info("isolation: removed cgroup %s/%s", iso->root, agent_cg_id(cg));
        marker_set(iso, agent_cg_id(cg), false);
        agent_cg_free(cg);
        return;
    }
    if (iso->nremovals == iso->capremovals) {
        iso->capremovals = iso->capremovals ? iso->capremovals * 2 : 4;
        iso->removals = xreallocarray(iso->removals, iso->capremovals,
                                      sizeof(*iso->removals));
    }
    iso->removals[iso->nremovals].cg = cg;
    iso->removals[iso->nremovals].tries = 0;
    iso->nremovals++;
}

static void retry_removals(struct agent_iso *iso)
{
    size_t k = 0;
    for (size_t i = 0; i < iso->nremovals; i++) {
        struct removal *r = &iso->removals[i];
        (void)agent_cg_kill_all(r->cg);
        int rc = agent_cg_remove(r->cg);
        if (rc == 0) {
            log_info("isolation: removed cgroup %s/%s", iso->root,
                     agent_cg_id(r->cg));
            marker_set(iso, agent_cg_id(r->cg), false);
            agent_cg_free(r->cg);
        } else if (++r->tries >= REMOVE_TRIES) {
            log_warn("isolation: cgroup %s/%s is still busy: left for the "
                     "next start",
                     iso->root, agent_cg_id(r->cg));
            agent_cg_free(r->cg);
        } else {
            iso->removals[k++] = *r;
        }
    }
    iso->nremovals = k;
}

/* ---- Limits ---- */

void agent_iso_limits_for(const struct agent_iso_flags *f, double cpus,
                          double mem_mb, bool revocable,
                          struct agent_cg_limits *out)
{
    memset(out, 0, sizeof(*out));
    if (cpus > 0) {
        double shares = cpus * AGENT_CG_SHARES_PER_CPU;
        out->cpu_shares = revocable || shares < AGENT_CG_MIN_SHARES
                              ? AGENT_CG_MIN_SHARES
                              : (uint64_t)shares;
        if (out->cpu_shares > 262144)
            out->cpu_shares = 262144;
        if (f->cgroups_enable_cfs) {
            double q = cpus * AGENT_CG_CFS_PERIOD_US;
            out->cfs_period_us = AGENT_CG_CFS_PERIOD_US;
            out->cfs_quota_us = q < AGENT_CG_MIN_CFS_QUOTA_US
                                    ? AGENT_CG_MIN_CFS_QUOTA_US
                                    : (uint64_t)q;
        }
    }
    if (mem_mb > 0) {
        uint64_t b = (uint64_t)(mem_mb * 1024.0 * 1024.0);
        out->mem_bytes = b < AGENT_CG_MIN_MEMORY ? AGENT_CG_MIN_MEMORY : b;
        out->swap_off = !f->cgroups_limit_swap;
        out->swap_bytes = f->cgroups_limit_swap ? out->mem_bytes : 0;
    }
    if (f->cgroups_limit_pids > 0)
        out->pids_max = (uint64_t)f->cgroups_limit_pids;
}

/* ---- Limitations ---- */

static void memory_limitation(const struct agent_cg_stats *s,
                              struct agent_iso_limitation *lim)
{
    char req[32], used[32];
    agent_cg_format_bytes(s->mem_limit, req, sizeof(req));
    agent_cg_format_bytes(s->mem_peak > 0 ? s->mem_peak : s->mem_current, used,
                          sizeof(used));
    lim->limited = true;
    lim->reason =
        MESOS__V1__TASK_STATUS__REASON__REASON_CONTAINER_LIMITATION_MEMORY;
    snprintf(lim->message, sizeof(lim->message),
             "Memory limit exceeded: Requested: %s Maximum Used: %s", req,
             used);
}

/* Kill every process of t (its cgroup, or its process group). */
static void kill_task_processes(struct container *c, const struct agent_task *t)
{
    if (c->cg != NULL)
        (void)agent_cg_kill_all(c->cg);
    if (t->task_pid > 0)
        (void)kill(-t->task_pid, SIGKILL);
}

static void check_task(struct agent_iso *iso, const struct agent_task *t,
                       struct container *c, int64_t now)
{
    if (c->lim.limited) {
        /* Until its processes are gone (one may have been forking, or
         * the task's pid not yet known, at the first kill). */
        kill_task_processes(c, t);
        return;
    }
    if (c->cg != NULL) {
        struct agent_cg_stats s;
        if (agent_cg_stats(c->cg, &s) == 0 && s.oom_kills > 0) {
            memory_limitation(&s, &c->lim);
            log_warn("task %s of framework %s: %s", t->task_id, t->framework_id,
                     c->lim.message);
            kill_task_processes(c, t);
            return;
        }
    }
    /* Measured once it runs: a kill needs its pid without a cgroup. */
    if (t->sandbox == NULL || t->phase != AGENT_TASK_RUNNING ||
        t->task_pid <= 0 || now < c->disk_next_ns ||
        (!iso->flags.enforce_container_disk_quota && c->cg == NULL))
        return;
    c->disk_next_ns = now + iso->flags.container_disk_watch_interval_ns;
    uint64_t used;
    if (agent_disk_usage(t->sandbox, &used) != 0)
        return;
    c->has_disk = true;
    c->disk_used = used;
    if (!iso->flags.enforce_container_disk_quota)
        return;
    double disk_mb = task_scalar(t, "disk", NULL);
    uint64_t quota = (uint64_t)(disk_mb * 1024.0 * 1024.0);
    if (agent_disk_over_quota(used, quota, c->lim.message,
                              sizeof(c->lim.message))) {
        c->lim.limited = true;
        c->lim.reason =
            MESOS__V1__TASK_STATUS__REASON__REASON_CONTAINER_LIMITATION_DISK;
        log_warn("task %s of framework %s: %s", t->task_id, t->framework_id,
                 c->lim.message);
        kill_task_processes(c, t);
    }
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    struct agent_iso *iso = arg;
    (void)fd;
    (void)what;
    int64_t now = clock_monotonic_ns();
    size_t pos = 0;
    struct agent_task *t;
    while ((t = agent_tasks_next(iso->tasks, &pos)) != NULL) {
        if (!task_is_live(t) || t->run_id[0] == '\0')
            continue;
        struct container *c = hmap_get(iso->containers, t->run_id);
        if (c == NULL && iso->flags.enforce_container_disk_quota) {
            c = xcalloc(1, sizeof(*c));
            c->run_id = xstrdup(t->run_id);
            hmap_put(iso->containers, t->run_id, c);
        }
        if (c != NULL)
            check_task(iso, t, c, now);
    }
    retry_removals(iso);
}

/* ---- Life ---- */

struct agent_iso *agent_iso_new(struct event_base *base,
                                const struct agent_iso_flags *flags,
                                const struct agent_cg_hier *hier,
                                const char *work_dir, struct agent_tasks *tasks,
                                char *err, size_t errlen)
{
    struct agent_iso *iso = xcalloc(1, sizeof(*iso));
    iso->base = base;
    iso->flags = *flags;
    iso->root =
        xstrdup(flags->cgroups_root != NULL ? flags->cgroups_root : "offerd");
    iso->flags.cgroups_root = iso->root;
    iso->flags.isolation = NULL;
    iso->tasks = tasks;
    iso->containers = hmap_new();
    iso->marker_dir = xasprintf("%s/meta/cgroups", work_dir);
    if (hier != NULL)
        iso->hier = *hier;
    else
        agent_cg_detect(&iso->hier);
    char why[512] = "";
    bool can = false;
    if (flags->mode != AGENT_ISOLATION_POSIX)
        can =
            agent_cg_prepare_root(&iso->hier, iso->root, why, sizeof(why)) == 0;
    if (flags->mode == AGENT_ISOLATION_CGROUPS && !can) {
        snprintf(err, errlen, "--isolation=cgroups: %s", why);
        agent_iso_free(iso);
        return NULL;
    }
    iso->cgroups = can;
    if (can) {
        char e[256];
        if (fs_mkdirs(iso->marker_dir, e, sizeof(e)) != 0) {
            snprintf(err, errlen, "isolation: %s", e);
            agent_iso_free(iso);
            return NULL;
        }
        log_info(
            "isolation: cgroups %s under '%s' (memory %s, cpu %s, pids "
            "%s, freezer %s)%s%s",
            agent_cg_version_name(iso->hier.version), iso->root,
            iso->hier.mount[AGENT_CG_MEMORY], iso->hier.mount[AGENT_CG_CPU],
            iso->hier.mount[AGENT_CG_PIDS][0] ? iso->hier.mount[AGENT_CG_PIDS]
                                              : "-",
            iso->hier.mount[AGENT_CG_FREEZER][0]
                ? iso->hier.mount[AGENT_CG_FREEZER]
                : "-",
            flags->cgroups_enable_cfs ? ", CFS quota" : "",
            flags->cgroups_limit_swap ? ", swap limited" : ", no swap");
    } else if (flags->mode == AGENT_ISOLATION_POSIX) {
        log_info("isolation: posix (--isolation): nothing enforced");
    } else {
        log_info("isolation: posix: cgroups unusable (%s)", why);
    }
    if (flags->enforce_container_disk_quota)
        log_info("isolation: disk quota enforced every %.3gs",
                 (double)flags->container_disk_watch_interval_ns / 1e9);
    iso->timer = event_new(base, -1, EV_PERSIST, on_tick, iso);
    return iso;
}

void agent_iso_free(struct agent_iso *iso)
{
    if (iso == NULL)
        return;
    if (iso->timer != NULL)
        event_free(iso->timer);
    for (size_t i = 0; i < iso->nremovals; i++)
        agent_cg_free(iso->removals[i].cg);
    free(iso->removals);
    hmap_free(iso->containers, container_free);
    free(iso->marker_dir);
    free(iso->root);
    free(iso);
}

bool agent_iso_uses_cgroups(const struct agent_iso *iso)
{
    return iso->cgroups;
}

void agent_iso_start(struct agent_iso *iso)
{
    if (!iso->cgroups && !iso->flags.enforce_container_disk_quota)
        return;
    struct timeval tv = {0, AGENT_ISO_TICK_MS * 1000};
    event_add(iso->timer, &tv);
}

int agent_iso_prepare(struct agent_iso *iso, const struct agent_task *t,
                      struct agent_launch *l, char *err, size_t errlen)
{
    if (!iso->cgroups || t->run_id[0] == '\0')
        return 0;
    struct agent_cgroup *cg = agent_cg_open(&iso->hier, iso->root, t->run_id);
    if (cg == NULL) {
        snprintf(err, errlen, "cannot name a cgroup for run %s", t->run_id);
        return -1;
    }
    bool revocable = false;
    double cpus = task_scalar(t, "cpus", &revocable);
    double mem = task_scalar(t, "mem", &revocable);
    struct agent_cg_limits lim;
    agent_iso_limits_for(&iso->flags, cpus, mem, revocable, &lim);
    marker_set(iso, t->run_id, true);
    if (agent_cg_create(cg, err, errlen) != 0 ||
        agent_cg_set_limits(cg, &lim, err, errlen) != 0) {
        (void)agent_cg_remove(cg);
        marker_set(iso, t->run_id, false);
        agent_cg_free(cg);
        return -1;
    }
    struct container *c = hmap_get(iso->containers, t->run_id);
    if (c == NULL) {
        c = xcalloc(1, sizeof(*c));
        c->run_id = xstrdup(t->run_id);
        hmap_put(iso->containers, t->run_id, c);
    }
    agent_cg_free(c->cg);
    c->cg = cg;
    c->nprocs = agent_cg_procs_files(cg, c->procs, AGENT_CG_NCTL);
    l->cgroup_procs = c->procs;
    l->ncgroup_procs = c->nprocs;
    log_info("task %s of framework %s: cgroup %s/%s (cpu shares %" PRIu64
             ", cfs quota %" PRIu64 "us, memory %" PRIu64
             " bytes, pids %" PRIu64 ")",
             t->task_id, t->framework_id, iso->root, t->run_id, lim.cpu_shares,
             lim.cfs_quota_us, lim.mem_bytes, lim.pids_max);
    return 0;
}

void agent_iso_ended(struct agent_iso *iso, const struct agent_task *t,
                     struct agent_iso_limitation *out)
{
    memset(out, 0, sizeof(*out));
    if (t->run_id[0] == '\0')
        return;
    struct container *c = hmap_del(iso->containers, t->run_id);
    struct agent_cgroup *cg = c != NULL ? c->cg : NULL;
    if (c != NULL) {
        *out = c->lim;
        c->cg = NULL;
        container_free(c);
    }
    if (cg == NULL && iso->hier.version != AGENT_CG_NONE) {
        /* Ended while the agent was down, or not re-attached yet. */
        cg = agent_cg_open(&iso->hier, iso->root, t->run_id);
        if (cg != NULL && !agent_cg_exists(cg)) {
            agent_cg_free(cg);
            cg = NULL;
        }
    }
    if (cg == NULL)
        return;
    struct agent_cg_stats s;
    if (!out->limited && agent_cg_stats(cg, &s) == 0 && s.oom_kills > 0) {
        memory_limitation(&s, out);
        log_warn("task %s of framework %s: %s", t->task_id, t->framework_id,
                 out->message);
    }
    schedule_removal(iso, cg);
}

void agent_iso_recover(struct agent_iso *iso)
{
    if (iso->hier.version == AGENT_CG_NONE)
        return;
    size_t pos = 0;
    struct agent_task *t;
    while ((t = agent_tasks_next(iso->tasks, &pos)) != NULL) {
        if (!task_is_live(t) || t->run_id[0] == '\0' ||
            hmap_get(iso->containers, t->run_id) != NULL)
            continue;
        struct agent_cgroup *cg =
            agent_cg_open(&iso->hier, iso->root, t->run_id);
        if (cg == NULL || !agent_cg_exists(cg)) {
            agent_cg_free(cg);
            continue;
        }
        struct container *c = xcalloc(1, sizeof(*c));
        c->run_id = xstrdup(t->run_id);
        c->cg = cg;
        c->nprocs = agent_cg_procs_files(cg, c->procs, AGENT_CG_NCTL);
        hmap_put(iso->containers, t->run_id, c);
        log_info("task %s of framework %s: re-attached cgroup %s/%s",
                 t->task_id, t->framework_id, iso->root, t->run_id);
    }
    /* This agent's cgroups of tasks it no longer has. */
    DIR *d = opendir(iso->marker_dir);
    if (d == NULL)
        return;
    struct dirent *e;
    char **gone = NULL;
    size_t n = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || hmap_get(iso->containers, e->d_name) != NULL)
            continue;
        gone = xreallocarray(gone, n + 1, sizeof(*gone));
        gone[n++] = xstrdup(e->d_name);
    }
    closedir(d);
    for (size_t i = 0; i < n; i++) {
        struct agent_cgroup *cg = agent_cg_open(&iso->hier, iso->root, gone[i]);
        if (cg == NULL || !agent_cg_exists(cg)) {
            agent_cg_free(cg);
            marker_set(iso, gone[i], false);
        } else {
            log_info("isolation: removing cgroup %s/%s of a task that is "
                     "gone",
                     iso->root, gone[i]);
            schedule_removal(iso, cg);
        }
        free(gone[i]);
    }
    free(gone);
}

Mesos__V1__ResourceStatistics *agent_iso_statistics(const struct agent_iso *iso,
                                                    const struct agent_task *t,
                                                    double now)
{
    if (t->run_id[0] == '\0')
        return NULL;
    const struct container *c = hmap_get(iso->containers, t->run_id);
    struct agent_cg_stats s;
    bool cg = c != NULL && c->cg != NULL && agent_cg_stats(c->cg, &s) == 0;
    if (!cg && (c == NULL || !c->has_disk))
        return NULL;
    Mesos__V1__ResourceStatistics *r = xmalloc(sizeof(*r));
    protobuf_c_message_init(&mesos__v1__resource_statistics__descriptor, r);
    r->timestamp = now;
    r->has_cpus_limit = true;
    r->cpus_limit = task_scalar(t, "cpus", NULL);
    r->has_mem_limit_bytes = true;
    r->mem_limit_bytes =
        (uint64_t)(task_scalar(t, "mem", NULL) * 1024.0 * 1024.0);
    if (cg) {
        r->has_processes = true;
        r->processes = s.nprocs;
        if (s.has_pids) {
            r->has_threads = true;
            r->threads = (uint32_t)s.pids_current;
        }
        if (s.has_cpu) {
            r->has_cpus_user_time_secs = true;
            r->cpus_user_time_secs = (double)s.cpu_user_ns / 1e9;
            r->has_cpus_system_time_secs = true;
            r->cpus_system_time_secs = (double)s.cpu_system_ns / 1e9;
        }
        if (s.has_throttle) {
            r->has_cpus_nr_periods = true;
            r->cpus_nr_periods = (uint32_t)s.nr_periods;
            r->has_cpus_nr_throttled = true;
            r->cpus_nr_throttled = (uint32_t)s.nr_throttled;
            r->has_cpus_throttled_time_secs = true;
            r->cpus_throttled_time_secs = (double)s.throttled_ns / 1e9;
        }
        if (s.has_mem) {
            r->has_mem_total_bytes = true;
            r->mem_total_bytes = s.mem_current;
            r->has_mem_rss_bytes = true;
            r->mem_rss_bytes = s.mem_anon;
            r->has_mem_anon_bytes = true;
            r->mem_anon_bytes = s.mem_anon;
            r->has_mem_file_bytes = true;
            r->mem_file_bytes = s.mem_file;
            r->has_mem_cache_bytes = true;
            r->mem_cache_bytes = s.mem_file;
            r->has_mem_swap_bytes = true;
            r->mem_swap_bytes = s.mem_swap;
            if (s.mem_limit > 0)
                r->mem_limit_bytes = s.mem_limit;
        }
    }
    if (c != NULL && c->has_disk) {
        r->has_disk_used_bytes = true;
        r->disk_used_bytes = c->disk_used;
        double disk = task_scalar(t, "disk", NULL);
        if (disk > 0) {
            r->has_disk_limit_bytes = true;
            r->disk_limit_bytes = (uint64_t)(disk * 1024.0 * 1024.0);
        }
    }
    return r;
}

int agent_iso_usage(const struct agent_iso *iso, const struct agent_task *t,
                    long clk_tck, long page_size, struct agent_usage *out)
{
    if (iso == NULL || t->run_id[0] == '\0' || clk_tck <= 0 || page_size <= 0)
        return -1;
    const struct container *c = hmap_get(iso->containers, t->run_id);
    struct agent_cg_stats s;
    if (c == NULL || c->cg == NULL || agent_cg_stats(c->cg, &s) != 0 ||
        !s.has_cpu || !s.has_mem)
        return -1;
    memset(out, 0, sizeof(*out));
    uint64_t ns_per_tick = 1000000000ULL / (uint64_t)clk_tck;
    out->nprocs = s.nprocs;
    out->user_ticks = s.cpu_user_ns / ns_per_tick;
    out->system_ticks = s.cpu_system_ns / ns_per_tick;
    out->cpu_ticks = s.cpu_usage_ns / ns_per_tick;
    out->rss_pages = s.mem_anon / (uint64_t)page_size;
    return 0;
}
