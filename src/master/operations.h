/*
 * Offer operation feedback (Mesos 1.6+, docs/scheduler-http-api.md in
 * apache/mesos): the RESERVE, UNRESERVE, CREATE and DESTROY operations a
 * framework's ACCEPT carries with an `id` get UPDATE_OPERATION_STATUS
 * events; operations without an id get none.
 *
 * A refused operation gets OPERATION_ERROR once, without a uuid, and is not
 * kept. An applied one is kept here as OPERATION_PENDING until its change
 * is durable (the registry write of the agent's checkpointed resources);
 * then it gets OPERATION_FINISHED, or OPERATION_FAILED when the write
 * failed, with a status uuid: that terminal update is re-sent until the
 * framework acknowledges it (ACKNOWLEDGE_OPERATION_STATUS), after which the
 * operation is forgotten. RECONCILE_OPERATIONS answers the latest states as
 * events; GET_OPERATIONS lists the operations kept.
 */
#ifndef OFFERD_MASTER_OPERATIONS_H
#define OFFERD_MASTER_OPERATIONS_H

#include <stddef.h>
#include <stdint.h>

#include "master/master_types.h"
#include "mesos/v1/master.pb-c.h"

/* Most operations the master keeps (pending, or terminal and not yet
 * acknowledged), over all frameworks: an operation beyond it is refused
 * with OPERATION_ERROR. */
#define MASTER_MAX_OPERATIONS 100000
/* Longest operation id kept (Mesos sets no bound; the master keeps ids,
 * so it bounds them): a longer or empty one is refused with
 * OPERATION_ERROR. */
#define MASTER_MAX_OPERATION_ID 1024

/* First and last interval between re-sends of an unacknowledged terminal
 * update, in seconds (Mesos's status update retry bounds). */
#define MASTER_OP_RETRY_MIN_SECS 10
#define MASTER_OP_RETRY_MAX_SECS 600

/* Create m's (empty) table of operations. */
void master_ops_init(struct master *m);
/* Free the table and every operation in it (timers included). */
void master_ops_free(struct master *m);
/* Set the first interval between re-sends, in milliseconds (tests make it
 * short; MASTER_OP_RETRY_MIN_SECS by default). */
void master_ops_set_retry_ms(struct master *m, long ms);

/* Forget every operation of the framework fw_id (removed: nobody will
 * acknowledge them). A change still being written completes as usual. */
void master_ops_forget_framework(struct master *m, const char *fw_id);

/* Tell the frameworks of the operations kept on agent_id (with an id,
 * frameworks connected) that they are now `state` (OPERATION_UNREACHABLE
 * or OPERATION_GONE_BY_OPERATOR) with message, without a uuid: not
 * retried, not acknowledged (Mesos's sendBulkOperationFeedback, when an
 * agent is marked unreachable or gone). Changes nothing kept. */
void master_ops_agent_feedback(struct master *m, const char *agent_id,
                               Mesos__V1__OperationState state,
                               const char *message);

/* The agent agent_id is removed: forget every operation kept on it (its
 * retries stop; a change still being written completes unreported) and
 * count each as `state` in the metrics, a pending one moving out of
 * OPERATION_PENDING, as Mesos's __removeSlave does (OPERATION_UNREACHABLE
 * for an unreachable agent, OPERATION_GONE_BY_OPERATOR otherwise). */
void master_ops_forget_agent(struct master *m, const char *agent_id,
                             Mesos__V1__OperationState state);

/* Count an operation of type moving from state `from` to `to` in Mesos's
 * master/operations/ metrics (from: -1 for a new operation, -2 for one
 * counted already whose state `to` adds to, not replaces). Terminal
 * states count for good (lifetime totals); OPERATION_PENDING is the number
 * pending now; total counts every operation. Applied and refused
 * operations are counted, with or without an id, from frameworks and
 * operators, as Mesos counts them. */
void master_ops_count(struct master *m, Mesos__V1__Offer__Operation__Type type,
                      int from, Mesos__V1__OperationState to);
/* Report those metrics through fn (state_endpoints.h's master_metric_fn:
 * fn(arg, name, value)). */
void master_ops_metrics(const struct master *m,
                        void (*fn)(void *arg, const char *name, double value),
                        void *arg);

/* Tell fw that op was refused (OPERATION_ERROR with message, no uuid, as
 * Mesos's drop()), when op has an id; nothing otherwise. Keeps nothing;
 * counts the error either way. */
void master_op_error(struct framework *fw,
                     const Mesos__V1__Offer__Operation *op,
                     const char *message);

/* Whether op (which has an id) of fw may be kept: 0, or -1 with the reason
 * in err (the id is empty or too long, names an operation still kept, or
 * the table is full).
 * Changes nothing. */
int master_op_check(const struct master *m, const struct framework *fw,
                    const Mesos__V1__Offer__Operation *op, char *err,
                    size_t errlen);

/* Keep op (checked by master_op_check) of fw on ag as OPERATION_PENDING.
 * Returns the operation's key, a new string the caller frees, to name it
 * in master_op_done. */
char *master_op_add(struct master *m, const struct framework *fw,
                    const struct agent *ag,
                    const Mesos__V1__Offer__Operation *op);

/* The operation named key became terminal: state (OPERATION_FINISHED or
 * OPERATION_FAILED) with message (may be NULL). Sends the update with a new
 * uuid to its framework and re-sends it until acknowledged. Nothing when
 * the operation is no longer kept. */
void master_op_done(struct master *m, const char *key,
                    Mesos__V1__OperationState state, const char *message);

/* ACKNOWLEDGE_OPERATION_STATUS of fw. An acknowledgement of a known
 * operation's terminal status (matching uuid and agent) forgets the
 * operation; anything else is ignored, as Mesos does. Returns 0 when the
 * acknowledgement was valid, -1 otherwise (counted either way). */
int master_op_acknowledge(struct master *m, struct framework *fw,
                          const char *agent_id, const char *operation_id,
                          const uint8_t *uuid, size_t uuid_len);

/* RECONCILE_OPERATIONS of fw: send fw an UPDATE_OPERATION_STATUS (no
 * uuid) for each operation asked about, or for every operation of fw kept
 * when n is 0. Unknown ones are answered as Mesos does (OPERATION_UNKNOWN,
 * _RECOVERING, _UNREACHABLE or _GONE_BY_OPERATOR by what is known of the
 * agent). */
void master_op_reconcile(
    struct master *m, struct framework *fw,
    Mesos__V1__Scheduler__Call__ReconcileOperations__Operation *const *ops,
    size_t n);

/* The operations kept, as mesos.v1.Operation messages for GET_OPERATIONS:
 * a new array of n (OUT) new messages, each freed with jpb_free, the array
 * with free. */
Mesos__V1__Operation **master_op_list(const struct master *m, size_t *n);

#endif
