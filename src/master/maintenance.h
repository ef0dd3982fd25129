/*
 * Maintenance: machines, the schedule, inverse offers, agent draining and
 * deactivation. The owner of struct machine and struct inverse_offer.
 */
#ifndef OFFERD_MASTER_MAINTENANCE_H
#define OFFERD_MASTER_MAINTENANCE_H

#include "master/master_types.h"

/* Register /maintenance/schedule, /maintenance/status, /machine/down,
 * /machine/up (and their /master/ aliases). */
int master_maintenance_endpoints_register(struct master *m);
/* Free the maintenance state. */
void master_maintenance_free(struct master *m);
/* Recover the schedule and machines from the registry's state. */
void master_maintenance_recover(struct master *m,
                                const Mesos__V1__Maintenance__Schedule *sched,
                                Mesos__V1__MachineInfo *const *machines,
                                size_t n);
/* The machine an agent (hostname, ip) belongs to, or NULL (UP). */
struct machine *master_machine_of(struct master *m, const char *hostname,
                                  const char *ip);
/* The allocator's inverse offer callback (alloc_inverse_offer_fn). */
void master_inverse_offer_from_alloc(void *arg, void *framework_udata,
                                     void *agent_udata,
                                     const struct alloc_unavailability *unav);
/* A framework's ACCEPT_INVERSE_OFFERS / DECLINE_INVERSE_OFFERS. */
void master_inverse_offers_answer(struct master *m, struct framework *fw,
                                  Mesos__V1__OfferID *const *ids, size_t n,
                                  enum alloc_io_status status,
                                  const Mesos__V1__Filters *filters);
/* Forget the inverse offers of fw / on ag (rescind: tell the framework). */
void master_inverse_offers_of_framework(struct master *m, struct framework *fw,
                                        bool rescind);
void master_inverse_offers_on_agent(struct master *m, struct agent *ag,
                                    bool rescind);
/* After a cycle: rescind inverse offers whose framework holds nothing on
 * the agent any more. */
void master_inverse_offers_sweep(struct master *m);
/* A task of ag was forgotten: a draining agent may now be drained. */
void master_agent_drain_check_soon(struct master *m, struct agent *ag);
/* The JSON of ag's operator state for /state: adds "deactivated" and, when
 * set, "drain_info" to obj. */
void master_agent_state_json(const struct agent *ag, json_t *obj);
/* Operator calls, shared by the legacy endpoints and /api/v1. Each replies
 * on req (200 with an empty body on success). */
void master_maint_update_schedule(struct master *m, struct http_request *req,
                                  const Mesos__V1__Maintenance__Schedule *s);
void master_maint_machines(struct master *m, struct http_request *req,
                           bool down, Mesos__V1__MachineID *const *ids,
                           size_t n);
void master_maint_drain_agent(struct master *m, struct http_request *req,
                              const char *agent_id,
                              const Mesos__V1__DurationInfo *max_grace,
                              bool mark_gone);
void master_maint_set_agent_active(struct master *m, struct http_request *req,
                                   const char *agent_id, bool active);
/* The schedule (never NULL; borrowed) and the cluster status (new message,
 * free with protobuf_c_message_free_unpacked). */
const Mesos__V1__Maintenance__Schedule *
master_maint_schedule(const struct master *m);
Mesos__V1__Maintenance__ClusterStatus *
master_maint_status(const struct master *m);

#endif
