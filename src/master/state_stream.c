/*
 * GET /state written in slices. A reader's request becomes a chunked reply
 * (common/http's http_body_start); a production walks the master's state
 * one entity at a time (an agent, a framework's head, one of its tasks,
 * the rest of a framework, a completed framework) and writes each as JSON
 * text straight into a buffer (state_write.h, common/json_out.h: the same
 * bytes as the jansson models of state_models.h, without a tree per
 * entity; the master's own fields, once per body, still go through the
 * model). A slice runs
 * until its time budget (1 ms) or the buffer's size bound is reached, sends
 * the buffer to every reader as one chunk and returns to the loop; a timer
 * runs the next slice on the loop's next turn, after the I/O that became
 * ready meanwhile.
 *
 * The view: the sets of agents, frameworks, completed frameworks and each
 * framework's live tasks are taken (as ids) when the production reaches
 * them; an entity is written as it is when the slice reaches it, and one
 * gone by then is left out. A framework's completed tasks leave out those
 * already written among its live tasks, so a task that ends mid-body
 * appears once. docs/master-internals.md ("Large reads") argues the choice.
 *
 * Batching: one production per (caller as the ACLs see it, ?jsonp=) at a
 * time. A reader arriving while that production runs waits for the next
 * one, which every reader that waited shares, as Mesos 1.7 batches /state.
 *
 * Slow readers: a slice is put off while any reader has more than
 * max_pending bytes waiting in its connection, so the master never holds
 * more than a slice per reader; a reader that has not taken its bytes for
 * STALL_LIMIT is closed so that it does not hold the others back.
 *
 * Other bodies (the operator API's GET_STATE, operator_stream.c) ride the
 * same productions, readers, slices and batching: their production steps
 * through a struct master_body_ops instead of the phases below.
 */
#include "master/state_stream.h"

#include <event2/event.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/auth.h"
#include "common/clock.h"
#include "common/hmap.h"
#include "common/http.h"
#include "common/json_out.h"
#include "common/log.h"
#include "common/mem.h"
#include "master/authz.h"
#include "master/state_models.h"
#include "master/role_view.h"
#include "master/state_write.h"
#include "master/tasks.h"

/* A slice's time budget: the loop is held at most about this long (plus
 * one entity: a completed framework or the rest of a framework, whose
 * lists are bounded by --max_completed_tasks_per_framework). */
#define DEFAULT_BUDGET_NS ((int64_t)1000000)
/* A slice sends what it produced once it reaches this many bytes. */
#define DEFAULT_SLICE_BYTES ((size_t)256 * 1024)
/* Production pauses while a reader has more than this waiting. */
#define DEFAULT_MAX_PENDING ((size_t)1024 * 1024)
/* A state with at most this many agents, frameworks and live tasks is
 * written whole by the handler itself: it takes well under a slice, and
 * the reply is then over before the handler returns. */
#define DEFAULT_SYNC_ENTITIES 100
/* How often a paused production looks at its readers again. Short: a
 * reader drains the 1 MiB it has waiting in about a millisecond, then
 * idles until the production resumes (at 5 ms, a /state of 47 MB spent
 * about 130 ms per read paused with its reader idle). */
#define PAUSE_POLL_US 1000
/* A reader whose bytes have waited this long is closed. */
#define STALL_LIMIT_NS ((int64_t)30 * 1000000000)

enum phase {
    PH_HEAD,      /* the master's fields */
    PH_AGENTS,    /* "slaves" */
    PH_FW_START,  /* the next framework's head */
    PH_FW_TASKS,  /* its live tasks */
    PH_FW_REST,   /* its completed tasks, offers, executors, labels */
    PH_COMPLETED, /* "completed_frameworks" */
    PH_BODY,      /* another body (ops) is under way */
    PH_DONE,
};

struct reader {
    struct http_stream *st;
    struct production *prod;
    int64_t behind_since; /* monotonic ns since it has been over the bound */
    struct reader *next;
};

/* A list of ids taken at one moment: copies, one after the other in one
 * buffer (a framework's 100,000 task ids are one allocation, not 100,000),
 * with a mark per id for the ones written. */
struct ids {
    char *text;      /* the ids, each NUL-terminated */
    size_t *at;      /* where each begins in text */
    bool *written;   /* per id: written (a framework's live tasks) */
    size_t n, i;     /* count, next to visit */
    size_t len, cap; /* bytes of text used, allocated */
};

struct production {
    struct master *m;
    struct state_streams *owner;
    char *who; /* principal the ACLs filter for; NULL: anonymous/none */
    /* who's view_roles (master/role_view.h); NULL: every role. */
    struct acl_approver *roles;
    char *jsonp; /* ?jsonp= callback or NULL */
    /* Another body than /state (NULL: /state), its variant and cursor. */
    const struct master_body_ops *ops;
    int variant;
    void *cur; /* ops->start's, freed by ops->free; NULL before the first */
    struct reader *readers; /* served by this production */
    struct reader *waiting; /* arrived meanwhile: served by the next */
    struct event *timer;
    struct production *next;

    enum phase phase;
    bool comma;      /* the current top-level array has an element */
    bool task_comma; /* the framework's "tasks" has an element */
    struct ids agents, fws, completed, tasks;
    /* The framework being written. */
    char *fw_user;

    struct jout w; /* produced, not yet sent */
};

struct state_streams {
    struct production *prods;
    int64_t budget_ns;
    size_t slice_bytes, max_pending;
    size_t sync_entities; /* see DEFAULT_SYNC_ENTITIES */
    struct master_state_stream_stats stats;
};

static struct state_streams *streams_of(struct master *m)
{
    if (m->state_streams == NULL) {
        struct state_streams *s = xcalloc(1, sizeof(*s));
        s->budget_ns = DEFAULT_BUDGET_NS;
        s->slice_bytes = DEFAULT_SLICE_BYTES;
        s->max_pending = DEFAULT_MAX_PENDING;
        s->sync_entities = DEFAULT_SYNC_ENTITIES;
        m->state_streams = s;
    }
    return m->state_streams;
}

/* ---- Output ---------------------------------------------------------------
 */

static void put(struct production *p, const char *s, size_t n)
{
    jout_raw(&p->w, s, n);
}

static void puts_(struct production *p, const char *s)
{
    jout_raws(&p->w, s);
}

static int dump_cb(const char *buf, size_t size, void *data)
{
    put(data, buf, size);
    return 0;
}

/* Append j's compact text without its braces (an object's members); takes
 * j. */
static void put_members(struct production *p, json_t *j)
{
    struct jout *w = &p->w;
    size_t at = w->len;
    json_dump_callback(j, dump_cb, p, JSON_COMPACT);
    /* "{...}" -> "..." */
    if (w->len >= at + 2) {
        memmove(w->buf + at, w->buf + at + 1, w->len - at - 2);
        w->len -= 2;
    }
    json_decref(j);
}

/* ---- Filtering --------------------------------------------------------------
 */

/* Whether the reader may see element e of a framework's list named list
 * (tasks, completed_tasks, executors) or, with list NULL, the framework
 * e itself: the ACL filter of authz.c run on a one-element frame. e may
 * be a stub with only the members the filter reads (a framework's id and
 * user, a task's user, an executor's command). */
/* visible() for reader who of master m, fw_user the framework's user when
 * e is an element of one of its lists. */
static bool keeps(struct master *m, const char *who, const char *fw_user,
                  const char *list, json_t *e)
{
    if (!master_authz_has_acls(m))
        return true;
    json_t *fw;
    if (list == NULL) {
        fw = json_incref(e);
    } else {
        fw = json_object();
        if (fw_user != NULL)
            json_object_set_new(fw, "user", json_string(fw_user));
        json_t *arr = json_array();
        json_array_append(arr, e);
        json_object_set_new(fw, list, arr);
    }
    json_t *frame = json_object();
    json_t *fws = json_array();
    json_array_append_new(fws, fw);
    json_object_set_new(frame, "frameworks", fws);
    master_authz_filter_json_as(m, who, frame);
    bool kept =
        json_array_size(fws) == 1 &&
        (list == NULL ||
         json_array_size(json_object_get(json_array_get(fws, 0), list)) == 1);
    json_decref(frame);
    return kept;
}

static bool visible(struct production *p, const char *list, json_t *e)
{
    return keeps(p->m, p->who, p->fw_user, list, e);
}

/* Whether the reader may see fw. */
bool master_state_framework_visible(struct master *m, const char *who,
                                    const struct framework *fw)
{
    if (!master_authz_has_acls(m))
        return true;
    json_t *stub = json_object();
    json_object_set_new(stub, "id", json_string(fw->id));
    json_object_set_new(stub, "user", json_string(fw->info->user));
    bool kept = keeps(m, who, NULL, NULL, stub);
    json_decref(stub);
    return kept;
}

static bool visible_framework(struct production *p, const struct framework *fw)
{
    return master_state_framework_visible(p->m, p->who, fw);
}

/* Whether the reader may see a task (of the framework being written)
 * whose command's user is user (NULL: none), in list. */
static bool visible_task(struct production *p, const char *list,
                         const char *user)
{
    if (!master_authz_has_acls(p->m))
        return true;
    json_t *stub = json_object();
    if (user != NULL)
        json_object_set_new(stub, "user", json_string(user));
    bool kept = visible(p, list, stub);
    json_decref(stub);
    return kept;
}

/* ---- Producing --------------------------------------------------------------
 */

static void ids_clear(struct ids *ids)
{
    free(ids->text);
    free(ids->at);
    free(ids->written);
    memset(ids, 0, sizeof(*ids));
}

/* Make ids an empty list with room for n ids. */
static void ids_start(struct ids *ids, size_t n)
{
    ids_clear(ids);
    ids->at = xcalloc(n ? n : 1, sizeof(*ids->at));
    ids->written = xcalloc(n ? n : 1, sizeof(*ids->written));
}

/* Append a copy of id (room for it was made by ids_start). */
static void ids_push(struct ids *ids, const char *id)
{
    size_t len = strlen(id) + 1;
    if (ids->len + len > ids->cap) {
        size_t cap = ids->cap ? ids->cap : 4096;
        while (cap < ids->len + len)
            cap *= 2;
        ids->text = xrealloc(ids->text, cap);
        ids->cap = cap;
    }
    memcpy(ids->text + ids->len, id, len);
    ids->at[ids->n++] = ids->len;
    ids->len += len;
}

/* Id i of ids. */
static const char *ids_at(const struct ids *ids, size_t i)
{
    return ids->text + ids->at[i];
}

static void ids_take(struct ids *ids, const struct hmap *map)
{
    size_t n = hmap_count(map);
    ids_start(ids, n);
    size_t pos = 0;
    const char *key;
    while (ids->n < n && hmap_next(map, &pos, &key, NULL))
        ids_push(ids, key);
}

static void framework_done(struct production *p)
{
    free(p->fw_user);
    p->fw_user = NULL;
    ids_clear(&p->tasks);
    p->fws.i++;
    p->phase = PH_FW_START;
}

static void step_head(struct production *p)
{
    struct master *m = p->m;
    if (p->jsonp != NULL) {
        puts_(p, p->jsonp);
        put(p, "(", 1);
    }
    json_t *head = master_state_head_json(m);
    master_authz_filter_json_as(m, p->who, head);
    put(p, "{", 1);
    put_members(p, head);
    puts_(p, ",\"slaves\":[");
    /* The moment the body shows: which entities it lists. */
    ids_take(&p->agents, m->agents);
    ids_take(&p->fws, m->frameworks);
    ids_start(&p->completed, m->ncompleted);
    for (uint32_t i = 0; i < m->ncompleted; i++)
        ids_push(&p->completed, m->completed_order[i]);
    p->comma = false;
    p->phase = PH_AGENTS;
}

static void step_agent(struct production *p)
{
    if (p->agents.i >= p->agents.n) {
        puts_(p, "],\"frameworks\":[");
        p->comma = false;
        p->phase = PH_FW_START;
        return;
    }
    const struct agent *ag =
        hmap_get(p->m->agents, ids_at(&p->agents, p->agents.i++));
    if (ag == NULL)
        return;
    jout_mark(&p->w, p->comma);
    jout_obj_begin(&p->w);
    if (p->roles == NULL)
        master_write_agent_fields(&p->w, p->m, ag);
    else /* view_roles hides some of its resources: the filtering model */
        master_write_agent_fields_as(&p->w, p->m, ag, p->roles, false);
    jout_obj_end(&p->w);
    p->comma = true;
}

static void step_fw_start(struct production *p)
{
    if (p->fws.i >= p->fws.n) {
        puts_(p, "],\"completed_frameworks\":[");
        p->comma = false;
        p->phase = PH_COMPLETED;
        return;
    }
    const struct framework *fw =
        hmap_get(p->m->frameworks, ids_at(&p->fws, p->fws.i));
    if (fw == NULL) {
        p->fws.i++;
        return;
    }
    if (!visible_framework(p, fw)) {
        framework_done(p);
        return;
    }
    jout_mark(&p->w, p->comma);
    p->comma = true;
    p->fw_user = fw->info->user != NULL ? xstrdup(fw->info->user) : NULL;
    /* Its fields; "labels" comes after the lists (step_fw_rest). */
    jout_obj_begin(&p->w);
    master_write_framework_fields(&p->w, fw);
    puts_(p, ",\"tasks\":[");
    p->task_comma = false;
    ids_take(&p->tasks, fw->tasks);
    p->phase = PH_FW_TASKS;
}

/* The framework went while its tasks were being written: close its object
 * with empty lists. */
static void fw_gone(struct production *p)
{
    puts_(p, "],\"completed_tasks\":[],\"unreachable_tasks\":[],\"offers\":[],"
             "\"executors\":[],\"completed_executors\":[]}");
    framework_done(p);
}

static void step_fw_task(struct production *p)
{
    const struct framework *fw =
        hmap_get(p->m->frameworks, ids_at(&p->fws, p->fws.i));
    if (fw == NULL) {
        fw_gone(p);
        return;
    }
    if (p->tasks.i >= p->tasks.n) {
        p->phase = PH_FW_REST;
        return;
    }
    size_t i = p->tasks.i++;
    const struct task *t = hmap_get(fw->tasks, ids_at(&p->tasks, i));
    if (t == NULL)
        return;
    p->tasks.written[i] = true;
    if (!visible_task(p, "tasks",
                      t->info->command != NULL ? t->info->command->user : NULL))
        return;
    jout_mark(&p->w, p->task_comma);
    p->task_comma = true;
    master_write_task(&p->w, t);
}

/* The rest of fw after its live tasks, to its closing brace: its completed
 * tasks (but those marked written in live, when not NULL: they ended since
 * they were written among the live tasks), offers, executors and labels,
 * each list filtered for the reader. */
static void put_fw_rest(struct production *p, const struct framework *fw,
                        const struct ids *live)
{
    struct jout *w = &p->w;
    /* The completed tasks' ids that were written live (a small map, made
     * only when there are completed tasks). */
    struct hmap *dup = NULL;
    if (live != NULL && fw->ncompleted_tasks > 0) {
        struct hmap *done = hmap_new();
        for (uint32_t i = 0; i < fw->ncompleted_tasks; i++)
            hmap_put(done, master_task_completed_at(fw, i)->id, done);
        dup = hmap_new();
        for (size_t i = 0; i < live->n; i++)
            if (live->written[i] && hmap_get(done, ids_at(live, i)) != NULL)
                hmap_put(dup, ids_at(live, i), dup);
        hmap_free(done, NULL);
    }
    puts_(p, "],\"completed_tasks\":[");
    jout_mark(w, false);
    for (uint32_t i = 0; i < fw->ncompleted_tasks; i++) {
        const struct task_record *r = master_task_completed_at(fw, i);
        if (dup != NULL && hmap_get(dup, r->id) != NULL)
            continue;
        if (visible_task(p, "completed_tasks", r->user))
            master_write_record(w, fw, r);
    }
    puts_(p, "],\"unreachable_tasks\":[],\"offers\":[");
    jout_mark(w, false);
    size_t pos = 0;
    void *val;
    while (hmap_next(fw->offers, &pos, NULL, &val))
        master_write_offer(w, val);
    puts_(p, "],\"executors\":[");
    jout_mark(w, false);
    /* Executors (a few per agent at most) through their model. */
    pos = 0;
    while (hmap_next(fw->executors, &pos, NULL, &val)) {
        json_t *e = master_state_executor_json(val);
        if (visible(p, "executors", e))
            jout_json(w, e);
        json_decref(e);
    }
    puts_(p, "],\"completed_executors\":[]");
    jout_mark(w, true);
    master_write_framework_labels(w, fw);
    jout_obj_end(w);
    hmap_free(dup, NULL);
}

static void step_fw_rest(struct production *p)
{
    const struct framework *fw =
        hmap_get(p->m->frameworks, ids_at(&p->fws, p->fws.i));
    if (fw == NULL) {
        fw_gone(p);
        return;
    }
    put_fw_rest(p, fw, &p->tasks);
    framework_done(p);
}

static void step_completed(struct production *p)
{
    if (p->completed.i >= p->completed.n) {
        puts_(p, "],\"orphan_tasks\":[],\"unregistered_frameworks\":[]}");
        if (p->jsonp != NULL)
            put(p, ")", 1);
        p->phase = PH_DONE;
        return;
    }
    const struct framework *fw =
        hmap_get(p->m->completed, ids_at(&p->completed, p->completed.i++));
    if (fw == NULL || !visible_framework(p, fw))
        return;
    /* The whole framework in one step: its lists are bounded by
     * --max_completed_tasks_per_framework. */
    free(p->fw_user);
    p->fw_user = fw->info->user != NULL ? xstrdup(fw->info->user) : NULL;
    struct jout *w = &p->w;
    jout_mark(w, p->comma);
    p->comma = true;
    jout_obj_begin(w);
    master_write_framework_fields(w, fw);
    puts_(p, ",\"tasks\":[");
    jout_mark(w, false);
    size_t pos = 0;
    void *val;
    while (hmap_next(fw->tasks, &pos, NULL, &val)) {
        const struct task *t = val;
        if (visible_task(p, "tasks",
                         t->info->command != NULL ? t->info->command->user
                                                  : NULL))
            master_write_task(w, t);
    }
    put_fw_rest(p, fw, NULL);
    free(p->fw_user);
    p->fw_user = NULL;
}

/* One step of another body (p->ops). */
static void step_body(struct production *p)
{
    if (p->cur == NULL)
        p->cur = p->ops->start(p->m, p->who, p->variant);
    p->phase = p->ops->step(p->cur, &p->w) ? PH_DONE : PH_BODY;
}

/* Produce one entity's worth. */
static void step(struct production *p)
{
    if (p->ops != NULL) {
        step_body(p);
        return;
    }
    switch (p->phase) {
    case PH_HEAD:
        step_head(p);
        break;
    case PH_AGENTS:
        step_agent(p);
        break;
    case PH_FW_START:
        step_fw_start(p);
        break;
    case PH_FW_TASKS:
        step_fw_task(p);
        break;
    case PH_FW_REST:
        step_fw_rest(p);
        break;
    case PH_COMPLETED:
        step_completed(p);
        break;
    case PH_BODY:
    case PH_DONE:
        break;
    }
}

/* ---- Productions and readers ----------------------------------------------
 */

static void reset_cursor(struct production *p)
{
    ids_clear(&p->agents);
    ids_clear(&p->fws);
    ids_clear(&p->completed);
    ids_clear(&p->tasks);
    free(p->fw_user);
    p->fw_user = NULL;
    if (p->cur != NULL)
        p->ops->free(p->cur);
    p->cur = NULL;
    p->phase = PH_HEAD;
    p->comma = false;
    jout_reset(&p->w);
}

static void close_readers(struct reader **list)
{
    while (*list != NULL) {
        struct reader *r = *list;
        *list = r->next;
        http_stream_close(r->st);
        free(r);
    }
}

static void production_free(struct production *p)
{
    struct state_streams *s = p->owner;
    for (struct production **pp = &s->prods; *pp != NULL; pp = &(*pp)->next)
        if (*pp == p) {
            *pp = p->next;
            break;
        }
    close_readers(&p->readers);
    close_readers(&p->waiting);
    reset_cursor(p);
    event_free(p->timer);
    jout_free(&p->w);
    free(p->who);
    acl_approver_free(p->roles);
    free(p->jsonp);
    free(p);
}

static void on_reader_closed(struct http_stream *st, enum http_close_reason why,
                             void *arg)
{
    (void)why;
    struct reader *r = arg;
    struct production *p = r->prod;
    struct reader **lists[] = {&p->readers, &p->waiting};
    for (size_t k = 0; k < 2; k++)
        for (struct reader **rr = lists[k]; *rr != NULL; rr = &(*rr)->next)
            if (*rr == r) {
                *rr = r->next;
                http_stream_close(st);
                free(r);
                return;
            }
}

static void schedule(struct production *p, int usec)
{
    struct timeval tv = {0, usec};
    evtimer_add(p->timer, &tv);
}

/* Whether every reader can take more; closes readers stalled too long. */
static bool readers_ready(struct production *p, int64_t now)
{
    struct state_streams *s = p->owner;
    bool ready = true;
    for (struct reader **rr = &p->readers; *rr != NULL;) {
        struct reader *r = *rr;
        if (http_stream_pending(r->st) <= s->max_pending) {
            r->behind_since = 0;
            rr = &r->next;
            continue;
        }
        if (r->behind_since == 0)
            r->behind_since = now;
        if (now - r->behind_since > STALL_LIMIT_NS) {
            log_warn("%s to %s: closed, its bytes waited over %d s",
                     p->ops != NULL ? p->ops->name : "/state",
                     http_stream_peer(r->st),
                     (int)(STALL_LIMIT_NS / 1000000000));
            s->stats.cut++;
            *rr = r->next;
            http_stream_close(r->st);
            free(r);
            continue;
        }
        ready = false;
        rr = &r->next;
    }
    return ready;
}

static void send_out(struct production *p)
{
    struct jout *w = &p->w;
    if (w->len == 0)
        return;
    if (w->len > p->owner->stats.max_buffered)
        p->owner->stats.max_buffered = w->len;
    for (struct reader *r = p->readers; r != NULL; r = r->next)
        (void)http_stream_send(r->st, w->buf, w->len);
    w->len = 0;
    /* Keep a slice's worth, not the largest slice ever. */
    if (w->cap > 2 * p->owner->slice_bytes) {
        free(w->buf);
        w->buf = NULL;
        w->cap = 0;
    }
}

/* Run one slice (unbounded: the whole body); frees p when it has no one
 * left to serve. */
static void run_slice(struct production *p, bool unbounded)
{
    struct state_streams *s = p->owner;
    int64_t now = clock_monotonic_ns();
    if (p->readers != NULL && !readers_ready(p, now)) {
        s->stats.pauses++;
        schedule(p, PAUSE_POLL_US);
        return;
    }
    if (p->readers == NULL) {
        /* Everyone left: abandon this body, start the next if awaited. */
        if (p->phase != PH_HEAD)
            s->stats.productions++;
        reset_cursor(p);
        p->readers = p->waiting;
        p->waiting = NULL;
        if (p->readers == NULL) {
            production_free(p);
            return;
        }
    }
    s->stats.slices++;
    int64_t deadline = now + s->budget_ns;
    do {
        step(p);
    } while (p->phase != PH_DONE &&
             (unbounded ||
              (p->w.len < s->slice_bytes && clock_monotonic_ns() < deadline)));
    send_out(p);
    if (p->phase != PH_DONE) {
        schedule(p, 0);
        return;
    }
    s->stats.productions++;
    for (struct reader *r = p->readers; r != NULL; r = r->next)
        s->stats.readers++;
    close_readers(&p->readers);
    reset_cursor(p);
    if (p->waiting == NULL) {
        production_free(p);
        return;
    }
    p->readers = p->waiting;
    p->waiting = NULL;
    schedule(p, 0);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    run_slice(arg, false);
}

/* Whether m's state is small enough to be written at once. */
static bool small_state(struct master *m, size_t limit)
{
    size_t n =
        hmap_count(m->agents) + hmap_count(m->frameworks) + m->ncompleted;
    size_t pos = 0;
    void *val;
    while (n <= limit && hmap_next(m->frameworks, &pos, NULL, &val))
        n += hmap_count(((const struct framework *)val)->tasks);
    return n <= limit;
}

static bool same(const char *a, const char *b)
{
    return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

/* Serve req the body of (ops, variant) for principal who, jsonp wrapping
 * /state's (ops NULL), sharing a production under way if one of the same
 * key waits for readers. */
static void serve(struct master *m, struct http_request *req, const char *who,
                  const char *cb, const char *content_type,
                  const struct master_body_ops *ops, int variant)
{
    struct state_streams *s = streams_of(m);
    struct production *p = s->prods;
    while (p != NULL && !(same(p->who, who) && same(p->jsonp, cb) &&
                          p->ops == ops && p->variant == variant))
        p = p->next;
    bool fresh = p == NULL;
    if (fresh) {
        p = xcalloc(1, sizeof(*p));
        p->m = m;
        p->owner = s;
        p->who = who != NULL ? xstrdup(who) : NULL;
        if (ops == NULL)
            p->roles = master_role_viewer(m, who, ACL_VIEW_ROLES);
        p->jsonp = cb != NULL ? xstrdup(cb) : NULL;
        p->ops = ops;
        p->variant = variant;
        p->timer = evtimer_new(m->base, on_timer, p);
        p->next = s->prods;
        s->prods = p;
    }
    struct reader *r = xcalloc(1, sizeof(*r));
    r->prod = p;
    /* cb is the request's: copied above, before the request goes. */
    r->st = http_body_start(req, content_type, on_reader_closed, r);
    if (fresh) {
        r->next = p->readers;
        p->readers = r;
        /* The first slice at once; a small state is answered here. */
        run_slice(p, small_state(m, s->sync_entities));
    } else {
        /* A body is under way: this reader shares the next one. */
        r->next = p->waiting;
        p->waiting = r;
    }
}

void master_state_stream_handle(struct http_request *req, void *arg)
{
    struct master *m = arg;
    const char *cb = http_request_query(req, "jsonp");
    if (cb != NULL && !http_jsonp_callback_ok(cb)) {
        http_reply_error(req, 400,
                         "jsonp: the callback must be a JavaScript name");
        return;
    }
    char buf[AUTH_MAX_PRINCIPAL + 1];
    const char *who =
        master_authz_has_acls(m) ? master_authz_principal(m, req, buf) : NULL;
    serve(m, req, who, cb, cb != NULL ? "text/javascript" : HTTP_CONTENT_JSON,
          NULL, 0);
}

void master_state_stream_serve(struct master *m, struct http_request *req,
                               const char *who, const char *content_type,
                               const struct master_body_ops *ops, int variant)
{
    serve(m, req, who, NULL, content_type, ops, variant);
}

void master_state_streams_free(struct master *m)
{
    struct state_streams *s = m->state_streams;
    if (s == NULL)
        return;
    while (s->prods != NULL)
        production_free(s->prods);
    free(s);
    m->state_streams = NULL;
}

void master_state_stream_stats(const struct master *m,
                               struct master_state_stream_stats *out)
{
    memset(out, 0, sizeof(*out));
    const struct state_streams *s = m->state_streams;
    if (s == NULL)
        return;
    *out = s->stats;
    for (const struct production *p = s->prods; p != NULL; p = p->next)
        out->active++;
}

void master_state_stream_tune(struct master *m, int64_t budget_ns,
                              size_t slice_bytes, size_t max_pending)
{
    struct state_streams *s = streams_of(m);
    s->budget_ns = budget_ns;
    if (slice_bytes > 0)
        s->slice_bytes = slice_bytes;
    if (max_pending > 0)
        s->max_pending = max_pending;
    s->sync_entities = 0;
}
