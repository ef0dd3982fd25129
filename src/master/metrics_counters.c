/*
 * Counts behind /metrics/snapshot kept current as agents, frameworks and
 * offers change (see metrics_counters.h). An agent or framework counts
 * only while it is in its master map, so a flag changed on one that has
 * left it (or not yet entered it) changes no count.
 */
#include "master/metrics_counters.h"

#include "allocator/alloc.h"
#include "common/hmap.h"

#include <string.h>

static bool agent_indexed(const struct master *m, const struct agent *ag)
{
    return hmap_get(m->agents, ag->id) == ag;
}

static bool framework_indexed(const struct master *m,
                              const struct framework *fw)
{
    return hmap_get(m->frameworks, fw->id) == fw;
}

/* *count += 1 when a flag turns on, -= 1 when it turns off. */
static void count_flip(uint32_t *count, bool was, bool now)
{
    if (was != now)
        *count += now ? 1u : (uint32_t)-1;
}

void master_mc_agent_set_connected(struct master *m, struct agent *ag,
                                   bool connected)
{
    if (agent_indexed(m, ag))
        count_flip(&m->mc.agents_connected, ag->connected, connected);
    ag->connected = connected;
}

void master_mc_agent_unindexed(struct master *m, const struct agent *ag)
{
    count_flip(&m->mc.agents_connected, ag->connected, false);
}

void master_mc_framework_set_active(struct master *m, struct framework *fw,
                                    bool active)
{
    if (framework_indexed(m, fw))
        count_flip(&m->mc.frameworks_active, fw->active, active);
    fw->active = active;
}

void master_mc_framework_set_stream(struct master *m, struct framework *fw,
                                    struct http_stream *stream)
{
    if (framework_indexed(m, fw))
        count_flip(&m->mc.frameworks_connected, fw->stream != NULL,
                   stream != NULL);
    fw->stream = stream;
}

void master_mc_framework_unindexed(struct master *m, const struct framework *fw)
{
    count_flip(&m->mc.frameworks_active, fw->active, false);
    count_flip(&m->mc.frameworks_connected, fw->stream != NULL, false);
}

/* Add sign * l's scalars named in master_live_names to sums. */
static void scalars_add(const res_list *l, int sign,
                        int64_t sums[MASTER_LIVE_NAMES])
{
    for (uint32_t i = 0; i < l->n; i++) {
        const struct resource *r = &l->v[i];
        int k = r->type == RES_SCALAR ? master_live_name_index(r->name) : -1;
        if (k >= 0)
            sums[k] += sign * r->scalar;
    }
}

void master_mc_offer_added(struct master *m, const struct offer *o)
{
    scalars_add(&o->resources, 1, m->mc.offered);
}

void master_mc_offer_removed(struct master *m, const struct offer *o)
{
    scalars_add(&o->resources, -1, m->mc.offered);
}

void master_mc_view(const struct master *m, struct master_mc_view *out)
{
    memset(out, 0, sizeof(*out));
    out->agents = (uint32_t)hmap_count(m->agents);
    out->agents_connected = m->mc.agents_connected;
    out->frameworks = (uint32_t)hmap_count(m->frameworks);
    out->frameworks_active = m->mc.frameworks_active;
    out->frameworks_connected = m->mc.frameworks_connected;
    out->offers = (uint32_t)hmap_count(m->offers);
    for (int k = 0; k < MASTER_LIVE_NAMES; k++) {
        alloc_total_scalar(m->alloc, master_live_names[k], &out->total[0][k],
                           &out->total[1][k]);
        out->offered[k] = m->mc.offered[k];
    }
}

/* Add l's scalars named in master_live_names to by_kind ([0] regular,
 * [1] revocable). */
static void scalars_add_by_kind(const res_list *l,
                                int64_t by_kind[2][MASTER_LIVE_NAMES])
{
    for (uint32_t i = 0; i < l->n; i++) {
        const struct resource *r = &l->v[i];
        int k = r->type == RES_SCALAR ? master_live_name_index(r->name) : -1;
        if (k >= 0)
            by_kind[r->revocable ? 1 : 0][k] += r->scalar;
    }
}

void master_mc_recount(const struct master *m, struct master_mc_view *out)
{
    memset(out, 0, sizeof(*out));
    size_t pos = 0;
    void *val;
    while (hmap_next(m->agents, &pos, NULL, &val)) {
        const struct agent *ag = val;
        out->agents++;
        out->agents_connected += ag->connected;
        if (ag->alloc != NULL)
            scalars_add_by_kind(alloc_agent_total(ag->alloc), out->total);
    }
    pos = 0;
    while (hmap_next(m->frameworks, &pos, NULL, &val)) {
        const struct framework *fw = val;
        out->frameworks++;
        out->frameworks_active += fw->active;
        out->frameworks_connected += fw->stream != NULL;
    }
    pos = 0;
    while (hmap_next(m->offers, &pos, NULL, &val)) {
        out->offers++;
        scalars_add(&((const struct offer *)val)->resources, 1, out->offered);
    }
}
