/*
 * Operator changes, one at a time; see changes.h.
 */
#include "master/changes.h"

#include "common/log.h"
#include "master/persist.h"

static void pump(struct master *m)
{
    struct master_changes *q = &m->changes;
    if (q->pumping)
        return; /* the loop below is running further up the stack */
    q->pumping = true;
    while (!q->stopped && q->running == NULL && q->head != NULL) {
        struct master_change *c = q->head;
        q->head = c->next;
        if (q->head == NULL)
            q->tail = NULL;
        c->next = NULL;
        q->running = c;
        c->run(m, c);
    }
    q->pumping = false;
}

void master_change_submit(struct master *m, struct master_change *c)
{
    struct master_changes *q = &m->changes;
    if (q->stopped) {
        http_reply_error(c->req, 503, "the master is shutting down");
        c->free(c);
        return;
    }
    c->next = NULL;
    if (q->tail != NULL)
        q->tail->next = c;
    else
        q->head = c;
    q->tail = c;
    pump(m);
}

void master_change_end(struct master *m, struct master_change *c, int status,
                       const char *reason)
{
    struct master_changes *q = &m->changes;
    if (status == 200)
        http_reply(c->req, 200, NULL, NULL, 0);
    else
        http_reply_error(c->req, status, "%s", reason);
    if (q->running == c)
        q->running = NULL;
    c->free(c);
    pump(m);
}

void master_changes_stop(struct master *m)
{
    struct master_changes *q = &m->changes;
    q->stopped = true;
    while (q->head != NULL) {
        struct master_change *c = q->head;
        q->head = c->next;
        http_reply_error(c->req, 503, "the master is shutting down");
        c->free(c);
    }
    q->tail = NULL;
}

/* A write in flight: the change and what to do once it is durable. */
static void write_done(struct master *m, bool ok, const char *err, void *arg)
{
    struct master_change *c = arg;
    if (!ok) {
        log_warn("%s not recorded: %s", c->what, err);
        master_change_end(m, c, 503, err);
        return;
    }
    c->applied(m, c);
}

void master_change_write(struct master *m, struct master_change *c,
                         struct registry_batch *b,
                         master_change_applied_fn applied, const char *what)
{
    c->applied = applied;
    c->what = what;
    master_persist_batch(m, b, write_done, c);
}
