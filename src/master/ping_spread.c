/*
 * PINGs spread over the ping interval (see ping_spread.h). The missed-ping
 * accounting and the PING itself stay in agents.c (master_agent_ping).
 */
#include "master/ping_spread.h"

#include "common/ids.h"
#include "master/agents.h"
#include "master/master_types.h"
#include "common/mem.h"
#include "common/hmap.h"

#include <stdlib.h>

uint32_t master_ping_slot(const char *master_id, const char *agent_id,
                          uint32_t nslots)
{
    uint64_t n;
    if (nslots == 0)
        return 0;
    if (master_id != NULL &&
        id_counter_of(ID_AGENT, master_id, agent_id, &n) == 0)
        return (uint32_t)(n % nslots);
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)agent_id; *p; p++)
        h = (h ^ *p) * 16777619u;
    return h % nslots;
}

int64_t master_ping_tick_ns(int64_t interval_ns)
{
    int64_t t = interval_ns / MASTER_PING_SLOTS;
    return t < 1000000 ? 1000000 : t;
}

void master_agents_ping_tick(struct master *m)
{
    m->ping_slot = (m->ping_slot + 1) % MASTER_PING_SLOTS;
    size_t n = hmap_count(m->agents), pos = 0, k = 0;
    if (n == 0)
        return;
    /* Pinging may remove an agent: collect first, then ping. */
    struct agent **v = xcalloc(n, sizeof(*v));
    void *val;
    while (hmap_next(m->agents, &pos, NULL, &val)) {
        struct agent *ag = val;
        if (ag->ping_slot1 == 0)
            ag->ping_slot1 =
                1 + master_ping_slot(m->id, ag->id, MASTER_PING_SLOTS);
        if (ag->ping_slot1 - 1 == m->ping_slot)
            v[k++] = ag;
    }
    for (size_t i = 0; i < k; i++)
        master_agent_ping(m, v[i]);
    free(v);
}

void master_agents_ping_due(struct master *m, int64_t now_ns)
{
    int64_t tick = master_ping_tick_ns(m->flags->agent_ping_timeout);
    if (m->ping_due_ns == 0)
        m->ping_due_ns = now_ns;
    for (int n = 0; n < MASTER_PING_SLOTS && now_ns >= m->ping_due_ns; n++) {
        master_agents_ping_tick(m);
        m->ping_due_ns += tick;
    }
    /* More than an interval behind: every agent had its PING. */
    if (now_ns >= m->ping_due_ns)
        m->ping_due_ns = now_ns + tick;
}
