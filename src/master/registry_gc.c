/*
 * The registry's garbage collection of unreachable and gone agents
 * (registry_gc.h). A collection picks its agents from the master's maps,
 * deletes their records in one registry batch and, once that is durable,
 * forgets those whose mark is still the one it picked: an agent that came
 * back meanwhile, or was marked again, keeps what the later write says (the
 * registry applies batches in order, so that write lands after the
 * deletion).
 */
#include "master/registry_gc.h"

#include <event2/event.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/hmap.h"
#include "common/log.h"
#include "common/mem.h"
#include "master/agents.h"
#include "master/persist.h"
#include "master/registry.h"

void master_agent_mark_put(struct hmap *marks, const char *id, double time)
{
    struct agent_mark *mk = xcalloc(1, sizeof(*mk));
    mk->time = time;
    free(hmap_put(marks, id, mk));
}

bool master_agent_mark_del(struct hmap *marks, const char *id)
{
    void *mk = hmap_del(marks, id);
    free(mk);
    return mk != NULL;
}

/* ---- Picking --------------------------------------------------------------
 */

/* An agent a collection forgets: its id and the mark it had. */
struct pick {
    char *id;
    double time;
};

static int pick_cmp(const void *a, const void *b)
{
    const struct pick *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return strcmp(x->id, y->id);
}

/* The agents of marks to forget, as Mesos picks them: oldest first, every
 * one beyond max_count, then every one older than max_age_secs. Returns
 * the picks (*n of them, caller frees) or NULL when none. */
static struct pick *pick_marks(const struct hmap *marks, int64_t max_count,
                               double max_age_secs, double now, size_t *n)
{
    *n = 0;
    size_t count = hmap_count(marks);
    if (count == 0)
        return NULL;
    struct pick *all = xcalloc(count, sizeof(*all));
    size_t pos = 0, k = 0;
    const char *key;
    void *val;
    while (hmap_next(marks, &pos, &key, &val) && k < count) {
        all[k].id = (char *)key;
        all[k].time = ((const struct agent_mark *)val)->time;
        k++;
    }
    qsort(all, k, sizeof(*all), pick_cmp);
    size_t taken = 0;
    for (size_t i = 0; i < k; i++) {
        bool over_count = (int64_t)(k - taken) > max_count;
        if (over_count || now - all[i].time > max_age_secs) {
            all[taken].id = xstrdup(all[i].id);
            all[taken].time = all[i].time;
            taken++;
        }
    }
    if (taken == 0) {
        free(all);
        return NULL;
    }
    *n = taken;
    return all;
}

static void picks_free(struct pick *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(p[i].id);
    free(p);
}

/* ---- Writing and forgetting -----------------------------------------------
 */

struct gc_write {
    struct pick *unreachable, *gone;
    size_t nunreachable, ngone;
};

static void gc_write_free(struct gc_write *w)
{
    picks_free(w->unreachable, w->nunreachable);
    picks_free(w->gone, w->ngone);
    free(w);
}

/* Forget in marks the picks whose mark is unchanged; how many. */
static size_t forget(struct master *m, struct hmap *marks, const struct pick *p,
                     size_t n, bool unreachable)
{
    size_t done = 0;
    for (size_t i = 0; i < n; i++) {
        const struct agent_mark *mk = hmap_get(marks, p[i].id);
        if (mk == NULL || mk->time != p[i].time) {
            log_warn("registry gc: agent %s left the %s list meanwhile; "
                     "kept",
                     p[i].id, unreachable ? "unreachable" : "gone");
            continue;
        }
        master_agent_mark_del(marks, p[i].id);
        if (unreachable)
            master_agent_forget_unreachable_tasks(m, p[i].id, false);
        done++;
    }
    return done;
}

static void gc_written(struct master *m, bool ok, const char *err, void *arg)
{
    struct gc_write *w = arg;
    m->registry_gc_writing = false;
    if (!ok) {
        log_warn("registry gc: not recorded (tried again in "
                 "--registry_gc_interval): %s",
                 err != NULL ? err : "registry write failed");
        gc_write_free(w);
        return;
    }
    size_t u =
        forget(m, m->unreachable_agents, w->unreachable, w->nunreachable, true);
    size_t g = forget(m, m->gone_agents, w->gone, w->ngone, false);
    log_info("registry gc: forgot %zu unreachable and %zu gone agents", u, g);
    gc_write_free(w);
}

size_t master_registry_gc(struct master *m, double now)
{
    if (m->registry_gc_writing)
        return 0; /* the last one is still being written */
    const struct master_flags *f = m->flags;
    double max_age = (double)f->registry_max_agent_age / CLOCK_NS_PER_SEC;
    struct gc_write *w = xcalloc(1, sizeof(*w));
    w->unreachable =
        pick_marks(m->unreachable_agents, f->registry_max_agent_count, max_age,
                   now, &w->nunreachable);
    w->gone = pick_marks(m->gone_agents, f->registry_max_agent_count, max_age,
                         now, &w->ngone);
    size_t total = w->nunreachable + w->ngone;
    if (total == 0) {
        gc_write_free(w);
        return 0;
    }
    struct registry_batch *b = registry_batch_new();
    char err[256] = "";
    int rc = 0;
    for (size_t i = 0; i < w->nunreachable && rc == 0; i++)
        rc = registry_batch_delete(b, REGISTRY_KIND_UNREACHABLE,
                                   w->unreachable[i].id, err, sizeof(err));
    for (size_t i = 0; i < w->ngone && rc == 0; i++)
        rc = registry_batch_delete(b, REGISTRY_KIND_GONE, w->gone[i].id, err,
                                   sizeof(err));
    if (rc != 0) {
        log_warn("registry gc: %s", err);
        registry_batch_free(b);
        gc_write_free(w);
        return 0;
    }
    log_info("registry gc: forgetting %zu unreachable and %zu gone agents",
             w->nunreachable, w->ngone);
    m->registry_gc_writing = true;
    master_persist_batch(m, b, gc_written, w);
    return total;
}

static void on_gc_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct master *m = arg;
    master_registry_gc(m, clock_wall_secs());
}

void master_registry_gc_start(struct master *m)
{
    int64_t ns = m->flags->registry_gc_interval;
    m->registry_gc_timer = event_new(m->base, -1, EV_PERSIST, on_gc_timer, m);
    struct timeval tv = {.tv_sec = (time_t)(ns / CLOCK_NS_PER_SEC),
                         .tv_usec =
                             (suseconds_t)(ns % CLOCK_NS_PER_SEC / 1000)};
    evtimer_add(m->registry_gc_timer, &tv);
}
