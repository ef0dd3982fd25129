/*
 * Dynamic reservations and persistent volumes: RESERVE, UNRESERVE,
 * CREATE, DESTROY from frameworks (ACCEPT) and operators, and agents'
 * checkpointed resources.
 */
#ifndef OFFERD_MASTER_RESERVATIONS_H
#define OFFERD_MASTER_RESERVATIONS_H

#include "master/master_types.h"

enum master_resv_op {
    MASTER_RESV_RESERVE = 0,
    MASTER_RESV_UNRESERVE = 1,
    MASTER_RESV_CREATE = 2,
    MASTER_RESV_DESTROY = 3,
};
/* The conversion an operation makes of res on ag (from -> to, without
 * allocation roles; both replaced), validated as Mesos does; fw is NULL
 * for an operator, alloc_role the role fw's resources are allocated to.
 * Returns 0, -1 (invalid, reason in err) or -2 (conflicts with the agent's
 * state: a volume in use). */
int master_resv_convert(struct agent *ag, const struct framework *fw,
                        const char *alloc_role, enum master_resv_op op,
                        const res_list *res, res_list *from, res_list *to,
                        char *err, size_t errlen);
/* A RESERVE/UNRESERVE/CREATE/DESTROY (or unsupported) operation of an
 * ACCEPT, applied to remaining (the offers' resources left, with allocation
 * role `role`). An operation with an id gets feedback (operations.h): a
 * refused one changes nothing and is reported with OPERATION_ERROR, an
 * applied one with OPERATION_FINISHED once durable (OPERATION_FAILED, and
 * undone, when the registry refuses it). Without an id, no feedback. */
void master_resv_accept_op(struct master *m, struct framework *fw,
                           struct agent *ag, const char *role,
                           const Mesos__V1__Offer__Operation *op,
                           res_list *remaining);
/* An operator's operation on agent_id; answers req (202 once durable, 400,
 * 409, 503). */
void master_resv_operator(struct master *m, struct http_request *req,
                          enum master_resv_op kind, const char *agent_id,
                          const res_list *res);
/* Register /reserve, /unreserve, /create-volumes, /destroy-volumes. */
int master_resv_endpoints_register(struct master *m);
/* The checkpointed part of a total (dynamic reservations and volumes). */
void master_agent_ckpt_of(const res_list *total, res_list *out);
/* Send ag its checkpointed resources (CHECKPOINT_RESOURCES). */
void master_agent_send_ckpt(struct master *m, struct agent *ag);

#endif
