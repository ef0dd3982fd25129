/*
 * The operator API's event stream (mesos.v1.master.Call SUBSCRIBE): its
 * subscribers and the events they are sent. A subscriber gets SUBSCRIBED
 * (the whole state, as GET_STATE, and the heartbeat interval) first, then
 * TASK_ADDED, TASK_UPDATED, AGENT_ADDED, AGENT_REMOVED, FRAMEWORK_ADDED,
 * FRAMEWORK_UPDATED and FRAMEWORK_REMOVED as they happen, and a HEARTBEAT
 * every MASTER_HEARTBEAT_SECS, each as one RecordIO record in the encoding
 * its SUBSCRIBE accepted.
 *
 * The owners of the entities call the master_opev_* hooks when a change is
 * applied; a hook costs one comparison when nobody subscribed. A subscriber
 * that stops reading is dropped once its stream's queue passes the cap
 * (master_options.operator_stream_cap), with a log line and the metric
 * master/operator_event_stream_subscribers_dropped; the master never waits
 * for it.
 */
#ifndef OFFERD_MASTER_OPERATOR_EVENTS_H
#define OFFERD_MASTER_OPERATOR_EVENTS_H

#include "master/master_types.h"

/* Most operator subscribers at once (Mesos's default of
 * --max_operator_event_stream_subscribers); past it the oldest is dropped
 * to make room, as Mesos does. */
#define MASTER_MAX_OPERATOR_SUBSCRIBERS 1000

/* Answer SUBSCRIBE (req, consumed) with a stream in enc and send
 * SUBSCRIBED and a first HEARTBEAT on it (Mesos's order), dropping the
 * oldest subscriber when there are MASTER_MAX_OPERATOR_SUBSCRIBERS
 * already. */
void master_opev_subscribe(struct master *m, struct http_request *req,
                           enum http_encoding enc);

/* TASK_ADDED: t was launched or adopted. */
void master_opev_task_added(struct master *m, const struct task *t);
/* TASK_UPDATED: t took status (borrowed); t->state is its latest state. */
void master_opev_task_updated(struct master *m, const struct task *t,
                              const Mesos__V1__TaskStatus *status);
/* AGENT_ADDED: ag was admitted (registered, or back after a master restart
 * or from unreachable). */
void master_opev_agent_added(struct master *m, const struct agent *ag);
/* AGENT_REMOVED: the agent is being removed. */
void master_opev_agent_removed(struct master *m, const char *agent_id);
/* FRAMEWORK_ADDED (added) or FRAMEWORK_UPDATED: fw subscribed for the
 * first time, or re-subscribed or was updated (UPDATE_FRAMEWORK). As in
 * Mesos, a disconnection is no event. */
void master_opev_framework(struct master *m, const struct framework *fw,
                           bool added);
/* fw is about to be removed: TASK_UPDATED (TASK_KILLED, as Mesos reports
 * them) for each of its tasks not terminal yet, then FRAMEWORK_REMOVED. */
void master_opev_framework_removing(struct master *m,
                                    const struct framework *fw);
/* HEARTBEAT to every subscriber. */
void master_opev_heartbeat(struct master *m);
/* End every subscriber's stream and free them (master_free). */
void master_opev_free_all(struct master *m);

#endif
