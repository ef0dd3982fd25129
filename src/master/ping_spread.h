/*
 * Spreading the master's PINGs over --agent_ping_timeout instead of one
 * burst to every agent at once (docs/performance.md, "No idle stalls").
 * The interval is cut into MASTER_PING_SLOTS ticks; each agent belongs to
 * one slot and is pinged at that slot's tick, so each agent still gets
 * one PING per interval and a tick pings about 1/MASTER_PING_SLOTS of the
 * agents.
 */
#ifndef OFFERD_MASTER_PING_SPREAD_H
#define OFFERD_MASTER_PING_SPREAD_H

#include <stdint.h>

struct master;

/* Ticks per --agent_ping_timeout. */
#define MASTER_PING_SLOTS 64

/* The slot of agent_id among nslots: the counter of an id this master
 * derived (<master id>-S<n>: n modulo nslots, so consecutive agents take
 * consecutive slots), else a hash of the id. Pure. */
uint32_t master_ping_slot(const char *master_id, const char *agent_id,
                          uint32_t nslots);

/* Time between two ticks for a ping interval (ns), at least 1 ms. */
int64_t master_ping_tick_ns(int64_t interval_ns);

/* One tick: advance to the next slot and ping its agents (tests call it
 * to play the clock). */
void master_agents_ping_tick(struct master *m);

/* The timer's callback at monotonic time now_ns: run every tick due since
 * the last call (the ping timer fires late, or not at all for a while,
 * when the loop or the machine is busy: counting its firings as ticks
 * would stretch the interval), but at most one interval's worth, so an
 * agent gets at most one PING per call. */
void master_agents_ping_due(struct master *m, int64_t now_ns);

#endif
