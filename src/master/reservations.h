/*
 * Dynamic reservations and persistent volumes: RESERVE, UNRESERVE,
 * CREATE, DESTROY, GROW_VOLUME and SHRINK_VOLUME from frameworks (ACCEPT)
 * and operators, and agents' checkpointed resources.
 */
#ifndef OFFERD_MASTER_RESERVATIONS_H
#define OFFERD_MASTER_RESERVATIONS_H

#include "master/master_types.h"

enum master_resv_op {
    MASTER_RESV_RESERVE = 0,
    MASTER_RESV_UNRESERVE = 1,
    MASTER_RESV_CREATE = 2,
    MASTER_RESV_DESTROY = 3,
    MASTER_RESV_GROW = 4,   /* GROW_VOLUME: master_resv_resize */
    MASTER_RESV_SHRINK = 5, /* SHRINK_VOLUME: master_resv_resize */
};
/* The conversion an operation makes of res on ag (from -> to, without
 * allocation roles; both replaced), validated as Mesos does; fw is NULL
 * for an operator, alloc_role the role fw's resources are allocated to.
 * Returns 0, -1 (invalid, reason in err; also for GROW and SHRINK, which
 * master_resv_resize converts) or -2 (conflicts with the agent's state: a
 * volume in use). */
int master_resv_convert(struct agent *ag, const struct framework *fw,
                        const char *alloc_role, enum master_resv_op op,
                        const res_list *res, res_list *from, res_list *to,
                        char *err, size_t errlen);
/* The conversion a GROW_VOLUME (op MASTER_RESV_GROW: volume and addition
 * set, subtract ignored) or SHRINK_VOLUME (MASTER_RESV_SHRINK: volume and
 * subtract set, addition ignored) makes, validated as Mesos does: volume a
 * persistent read-write volume, neither shared, nor on a MOUNT (or other
 * atomic) disk, nor from a resource provider; addition more than zero of
 * plain disk with the volume's reservations and disk source; subtract more
 * than zero and less than the volume's size. GROW: from = volume +
 * addition, to = the volume with the sum's size. SHRINK: from = volume,
 * to = the volume less subtract + the freed part as disk with the volume's
 * reservations (no persistence). Allocation roles are dropped from both
 * (replaced, on success only). Whether the agent holds them is the
 * caller's question. Returns 0, or -1 with a one-line reason in err. A
 * NULL volume, addition or subtract that the op needs is invalid too. */
int master_resv_resize(enum master_resv_op op,
                       const Mesos__V1__Resource *volume,
                       const Mesos__V1__Resource *addition,
                       const Mesos__V1__Value__Scalar *subtract, res_list *from,
                       res_list *to, char *err, size_t errlen);
/* A RESERVE/UNRESERVE/CREATE/DESTROY/GROW_VOLUME/SHRINK_VOLUME (or
 * unsupported) operation of an ACCEPT, applied to remaining (the offers'
 * resources left, with allocation role `role`). An operation with an id gets
 * feedback (operations.h): a refused one changes nothing and is reported with
 * OPERATION_ERROR, an applied one with OPERATION_FINISHED once durable
 * (OPERATION_FAILED, and undone, when the registry refuses it). Without an id,
 * no feedback. GROW_VOLUME and SHRINK_VOLUME take their resources from
 * remaining but, as in Mesos, leave what they make out of it (no later
 * operation of the ACCEPT may use a resized volume): that goes back to the
 * allocator at once, without a filter. */
void master_resv_accept_op(struct master *m, struct framework *fw,
                           struct agent *ag, const char *role,
                           const Mesos__V1__Offer__Operation *op,
                           res_list *remaining);
/* An operator's operation on agent_id; answers req (202 once durable, 400,
 * 409, 503). kind is RESERVE to DESTROY. */
void master_resv_operator(struct master *m, struct http_request *req,
                          enum master_resv_op kind, const char *agent_id,
                          const res_list *res);
/* An operator's GROW_VOLUME or SHRINK_VOLUME (kind MASTER_RESV_GROW or
 * MASTER_RESV_SHRINK, arguments as master_resv_resize's) on agent_id
 * (NULL: a 400); answers req as master_resv_operator does: 202 once
 * durable, 400 for an invalid operation or agent, 409 when the agent does
 * not have the volume (and addition) free, even after rescinding offers,
 * 503 when the registry refuses the change (undone). */
void master_resv_operator_resize(struct master *m, struct http_request *req,
                                 enum master_resv_op kind, const char *agent_id,
                                 const Mesos__V1__Resource *volume,
                                 const Mesos__V1__Resource *addition,
                                 const Mesos__V1__Value__Scalar *subtract);
/* Register /reserve, /unreserve, /create-volumes, /destroy-volumes. */
int master_resv_endpoints_register(struct master *m);
/* The checkpointed part of a total (dynamic reservations and volumes). */
void master_agent_ckpt_of(const res_list *total, res_list *out);
/* Send ag its checkpointed resources (CHECKPOINT_RESOURCES). */
void master_agent_send_ckpt(struct master *m, struct agent *ag);

#endif
