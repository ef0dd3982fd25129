/*
 * Durable changes: the master's use of its registry (registry.h). Each change
 * (an agent admitted, a framework subscribed or removed, an agent
 * unreachable; maintenance.c builds its own batches) is committed and fsynced
 * by the registry's worker before its done callback runs on the loop; the
 * callers reply or send events only then. At start the registry's content is
 * recovered into the master: frameworks come back inactive, awaiting
 * re-subscription within their failover timeout, admitted agents are
 * remembered until they re-register, and weights and quota go back into the
 * allocator (quota.c).
 *
 * --registry=in_memory keeps nothing across restarts but completes
 * asynchronously all the same, so that the callers' paths are the same.
 */
#include "master/persist.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/master_detect.h"
#include "common/mem.h"
#include "common/resources_pb.h"
#include "master/frameworks.h"
#include "master/maintenance.h"
#include "master/quota.h"
#include "master/registry.h"
#include "master/registry_gc.h"
#include "master/registry_private.h"
#include "master/registry_zk.h"

struct pending {
    struct master *m;
    master_persist_fn done;
    void *arg;
    char *err; /* for a change refused before it reached the registry */
};

static void complete_later(evutil_socket_t fd, short what, void *p)
{
    (void)fd;
    (void)what;
    struct pending *pd = p;
    pd->done(pd->m, pd->err == NULL, pd->err, pd->arg);
    free(pd->err);
    free(pd);
}

/* Finish a change on the next loop turn (in memory, or refused). */
static void later(struct master *m, master_persist_fn done, void *arg,
                  const char *err)
{
    struct pending *pd = xcalloc(1, sizeof(*pd));
    pd->m = m;
    pd->done = done;
    pd->arg = arg;
    pd->err = err != NULL ? xstrdup(err) : NULL;
    struct timeval zero = {0, 0};
    if (event_base_once(m->base, -1, EV_TIMEOUT, complete_later, pd, &zero) !=
        0) {
        log_error("cannot schedule a registry completion");
        abort();
    }
}

static void registry_done(bool ok, const char *err, void *p)
{
    struct pending *pd = p;
    pd->done(pd->m, ok, err, pd->arg);
    free(pd);
}

void master_persist_batch(struct master *m, struct registry_batch *batch,
                          master_persist_fn done, void *arg)
{
    if (m->registry == NULL) {
        registry_batch_free(batch);
        later(m, done, arg, NULL);
        return;
    }
    struct pending *pd = xcalloc(1, sizeof(*pd));
    pd->m = m;
    pd->done = done;
    pd->arg = arg;
    registry_apply(m->registry, batch, registry_done, pd);
}

/* A put that the registry refused (too large, malformed): the change fails
 * without touching the store. */
static void refuse(struct master *m, struct registry_batch *batch,
                   master_persist_fn done, void *arg, const char *err)
{
    registry_batch_free(batch);
    later(m, done, arg, err);
}

static Mesos__V1__TimeInfo time_of(double secs)
{
    Mesos__V1__TimeInfo t = MESOS__V1__TIME_INFO__INIT;
    t.nanoseconds = (int64_t)(secs * 1e9);
    return t;
}

/* ---- Recovery --------------------------------------------------------------
 */

/* A recorded mark's time in wall seconds (0 when absent: an old record,
 * the first a collection forgets). */
static double mark_time(const Mesos__V1__TimeInfo *t)
{
    return t != NULL ? (double)t->nanoseconds / 1e9 : 0;
}

static void recover(struct master *m, Offerd__Registry__Registry *state)
{
    for (size_t i = 0; i < state->n_frameworks; i++) {
        const Offerd__Registry__Framework *f = state->frameworks[i];
        if (f->info->id == NULL)
            continue;
        struct framework *fw = master_framework_placeholder(m, f->info);
        if (f->registered_time != NULL)
            fw->registered_time = (double)f->registered_time->nanoseconds / 1e9;
        log_info("recovered framework %s (%s): awaiting re-subscription",
                 fw->id, f->info->name);
    }
    /* Gone wins: a record of an agent written while it was being marked
     * gone (an unreachable one, say) does not bring it back. */
    for (size_t i = 0; i < state->n_gone_agents; i++)
        master_agent_mark_put(m->gone_agents, state->gone_agents[i]->id->value,
                              mark_time(state->gone_agents[i]->timestamp));
    for (size_t i = 0; i < state->n_agents; i++) {
        Offerd__Registry__Agent *a = state->agents[i];
        if (a->info->id == NULL ||
            hmap_get(m->gone_agents, a->info->id->value) != NULL)
            continue;
        /* Kept whole; the slot is cleared so that freeing the state leaves
         * it alone. */
        hmap_put(m->recovered_agents, a->info->id->value, a);
        state->agents[i] = NULL;
    }
    for (size_t i = 0; i < state->n_unreachable_agents; i++) {
        const char *id = state->unreachable_agents[i]->id->value;
        if (hmap_get(m->gone_agents, id) == NULL)
            master_agent_mark_put(
                m->unreachable_agents, id,
                mark_time(state->unreachable_agents[i]->timestamp));
    }
    master_maintenance_recover(m, state->schedule, state->machines,
                               state->n_machines);
    master_quota_recover(m, state);
    if (state->n_agents > 0 || state->n_frameworks > 0)
        log_info("registry: recovered %zu agents and %zu frameworks",
                 hmap_count(m->recovered_agents), state->n_frameworks);
}

int master_persist_open(struct master *m, char *err, size_t errlen)
{
    struct registry_options ro;
    registry_options_init(&ro);
    ro.backend = m->opts.registry_backend;
    if (ro.backend == NULL && strcmp(m->flags->registry, "in_memory") == 0) {
        log_warn("registry: in memory; nothing survives a restart");
        return 0;
    }
    const char *where = m->opts.registry_where != NULL ? m->opts.registry_where
                                                       : m->flags->work_dir;
    char zk_url[MASTER_DETECT_MAX_SPEC + 1];
    if (ro.backend == NULL && strcmp(m->flags->registry, "zk") == 0) {
        /* --zk may be file:///path holding the URL, as for the election. */
        if (master_detect_resolve_spec(m->flags->zk, zk_url, sizeof(zk_url),
                                       err, errlen) != 0)
            return -1;
        if (strncmp(zk_url, "zk://", 5) != 0) {
            snprintf(err, errlen,
                     "--registry=zk: --zk names '%.64s', not a zk:// URL",
                     zk_url);
            return -1;
        }
        ro.backend = &registry_zk_backend;
        registry_zk_set_session_timeout_ms(
            (int)(m->flags->zk_session_timeout / 1000000));
        where = zk_url;
    }
    Offerd__Registry__Registry *state = NULL;
    m->registry = registry_open(m->base, where, &ro, &state, err, errlen);
    if (m->registry == NULL)
        return -1;
    recover(m, state);
    registry_state_free(state);
    /* A seam for end-to-end tests of the failure paths: make the first n
     * registry writes fail. Not a user setting; documented in
     * docs/registry.md. */
    const char *fail = getenv("OFFERD_TEST_REGISTRY_FAILURES");
    if (fail != NULL && atoi(fail) > 0) {
        log_warn("registry: the next %d writes will fail (testing)",
                 atoi(fail));
        registry_test_fail_next(m->registry, (unsigned)atoi(fail));
    }
    return 0;
}

void master_persist_close(struct master *m)
{
    /* Runs every outstanding completion before it returns: the master's
     * state must still be whole. */
    registry_close(m->registry);
    m->registry = NULL;
}

void master_persist_free_recovered(void *p)
{
    if (p != NULL)
        protobuf_c_message_free_unpacked(p, NULL);
}

/* ---- Changes ----------------------------------------------------------------
 */

/* Put an agent record into a new batch. */
static struct registry_batch *
agent_batch(const Mesos__V1__AgentInfo *info, double registered_time,
            bool deactivated, const Mesos__V1__DrainInfo *drain,
            const res_list *ckpt, uint64_t ckpt_version, char *err,
            size_t errlen)
{
    Offerd__Registry__Agent a = OFFERD__REGISTRY__AGENT__INIT;
    a.info = (Mesos__V1__AgentInfo *)info;
    a.has_deactivated = deactivated;
    a.deactivated = deactivated;
    a.drain_info = (Mesos__V1__DrainInfo *)drain;
    Mesos__V1__TimeInfo t = time_of(registered_time);
    a.registered_time = &t;
    size_t n = 0;
    Mesos__V1__Resource **pb = NULL;
    if (ckpt != NULL && ckpt->n > 0) {
        pb = res_list_to_pb(ckpt, true, &n);
        a.checkpointed_resources = pb;
        a.n_checkpointed_resources = n;
    }
    a.has_checkpointed_resources_version = ckpt_version > 0;
    a.checkpointed_resources_version = ckpt_version;
    struct registry_batch *b = registry_batch_new();
    int rc = registry_batch_put(b, REGISTRY_KIND_AGENT, &a.base, err, errlen);
    res_pb_array_free(pb, n);
    if (rc != 0) {
        registry_batch_free(b);
        return NULL;
    }
    return b;
}

void master_persist_agent_info(struct master *m,
                               const Mesos__V1__AgentInfo *info,
                               bool deactivated,
                               const Mesos__V1__DrainInfo *drain,
                               const res_list *ckpt, uint64_t ckpt_version,
                               master_persist_fn done, void *arg)
{
    char err[256];
    struct registry_batch *b =
        agent_batch(info, clock_wall_secs(), deactivated, drain, ckpt,
                    ckpt_version, err, sizeof(err));
    if (b == NULL) {
        refuse(m, registry_batch_new(), done, arg, err);
        return;
    }
    /* An agent admitted again is no longer unreachable. */
    registry_batch_delete(b, REGISTRY_KIND_UNREACHABLE, info->id->value, err,
                          sizeof(err));
    master_persist_batch(m, b, done, arg);
}

struct registry_batch *
master_agent_record_batch(const struct agent *ag, bool deactivated,
                          const Mesos__V1__DrainInfo *drain, char *err,
                          size_t errlen)
{
    return agent_batch(ag->info, ag->registered_time, deactivated, drain,
                       &ag->ckpt, ag->ckpt_version, err, errlen);
}

void master_persist_agent(struct master *m, const struct agent *ag,
                          master_persist_fn done, void *arg)
{
    char err[256];
    struct registry_batch *b = master_agent_record_batch(
        ag, ag->deactivated, ag->drain, err, sizeof(err));
    if (b == NULL) {
        refuse(m, registry_batch_new(), done, arg, err);
        return;
    }
    master_persist_batch(m, b, done, arg);
}

void master_persist_framework(struct master *m,
                              const Mesos__V1__FrameworkInfo *info,
                              double registered_time, master_persist_fn done,
                              void *arg)
{
    Offerd__Registry__Framework f = OFFERD__REGISTRY__FRAMEWORK__INIT;
    f.info = (Mesos__V1__FrameworkInfo *)info;
    Mesos__V1__TimeInfo t = time_of(registered_time);
    f.registered_time = &t;
    struct registry_batch *b = registry_batch_new();
    char err[256];
    if (registry_batch_put(b, REGISTRY_KIND_FRAMEWORK, &f.base, err,
                           sizeof(err)) != 0) {
        refuse(m, b, done, arg, err);
        return;
    }
    master_persist_batch(m, b, done, arg);
}

void master_persist_framework_removed(struct master *m, const char *id,
                                      master_persist_fn done, void *arg)
{
    struct registry_batch *b = registry_batch_new();
    char err[256];
    if (registry_batch_delete(b, REGISTRY_KIND_FRAMEWORK, id, err,
                              sizeof(err)) != 0) {
        refuse(m, b, done, arg, err);
        return;
    }
    master_persist_batch(m, b, done, arg);
}

void master_persist_agent_unreachable(struct master *m, const char *id,
                                      master_persist_fn done, void *arg)
{
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = (char *)id;
    Mesos__V1__TimeInfo t = time_of(clock_wall_secs());
    Offerd__Registry__UnreachableAgent u =
        OFFERD__REGISTRY__UNREACHABLE_AGENT__INIT;
    u.id = &aid;
    u.timestamp = &t;
    struct registry_batch *b = registry_batch_new();
    char err[256];
    if (registry_batch_delete(b, REGISTRY_KIND_AGENT, id, err, sizeof(err)) !=
            0 ||
        registry_batch_put(b, REGISTRY_KIND_UNREACHABLE, &u.base, err,
                           sizeof(err)) != 0) {
        refuse(m, b, done, arg, err);
        return;
    }
    master_persist_batch(m, b, done, arg);
}
