/*
 * The status update manager: reliable, ordered delivery of task status
 * updates to the master, as Mesos's agent does it.
 *
 * Per task (a framework id and a task id) it keeps the updates not yet
 * acknowledged, oldest first. Only the oldest one of each task is sent;
 * while it is not acknowledged it is sent again after an interval that
 * starts at retry_min and doubles with each resend up to retry_max. The
 * ACKNOWLEDGE for its uuid drops it and sends the task's next one at once.
 * While the manager is offline (no registered master stream) nothing is
 * sent; going online sends every task's oldest update at once.
 *
 * Pure code: time is passed in (monotonic ns), sending is a callback, and
 * the owner arms one timer at agent_um_next_deadline and calls
 * agent_um_tick when it fires. Nothing here blocks or allocates per byte of
 * input.
 */
#ifndef OFFERD_AGENT_UPDATE_MANAGER_H
#define OFFERD_AGENT_UPDATE_MANAGER_H

#include "mesos/v1/mesos.pb-c.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct agent_um;

/* Send one update: its framework, the status (borrowed for the call) and
 * the task's latest state (the newest update queued for it). */
typedef void (*agent_um_send_fn)(const char *framework_id,
                                 const Mesos__V1__TaskStatus *status,
                                 Mesos__V1__TaskState latest_state, void *arg);

/* Visit one pending update (borrowed for the call). */
typedef void (*agent_um_visit_fn)(const char *framework_id,
                                  const Mesos__V1__TaskStatus *status,
                                  void *arg);

/* A new manager, offline, with no updates. retry_min_ns > 0 and
 * retry_max_ns >= retry_min_ns. send and arg are kept. */
struct agent_um *agent_um_new(int64_t retry_min_ns, int64_t retry_max_ns,
                              agent_um_send_fn send, void *arg);

/* Free the manager and every update it holds; NULL is ignored. */
void agent_um_free(struct agent_um *um);

/* Queue status (ownership taken; its task_id and a 16-byte uuid must be
 * set) for framework_id, after the task's pending updates. When it is the
 * task's only pending update and the manager is online, it is sent now. */
void agent_um_add(struct agent_um *um, const char *framework_id,
                  Mesos__V1__TaskStatus *status, int64_t now);

/* Outcome of agent_um_ack. */
enum agent_um_ack_result {
    AGENT_UM_ACKED = 0,       /* the oldest update was dropped */
    AGENT_UM_ACK_UNKNOWN = 1, /* no pending update for that task */
    AGENT_UM_ACK_MISMATCH = 2 /* uuid is not the oldest update's: ignored */
};

/* Acknowledge the update uuid (uuid_len bytes) of a task. On AGENT_UM_ACKED
 * the update is dropped and, when online, the task's next one is sent now;
 * *acked_state (OUT, may be NULL) is the state of the acknowledged update. */
enum agent_um_ack_result agent_um_ack(struct agent_um *um,
                                      const char *framework_id,
                                      const char *task_id, const uint8_t *uuid,
                                      size_t uuid_len, int64_t now,
                                      Mesos__V1__TaskState *acked_state);

/* Go online (send every task's oldest update now, with fresh intervals) or
 * offline (send nothing until online again). */
void agent_um_set_online(struct agent_um *um, bool online, int64_t now);

/* True while online. */
bool agent_um_is_online(const struct agent_um *um);

/* When online, send again each oldest update whose resend time has come
 * (now >= its deadline) and double its interval (up to retry_max). */
void agent_um_tick(struct agent_um *um, int64_t now);

/* The earliest resend time, or -1 when offline or nothing is pending. */
int64_t agent_um_next_deadline(const struct agent_um *um);

/* When online, send a task's oldest update now and restart its interval
 * (e.g. for a RECONCILE). Returns false when the task has none pending. */
bool agent_um_resend(struct agent_um *um, const char *framework_id,
                     const char *task_id, int64_t now);

/* Number of pending updates of a task (0 when unknown). */
size_t agent_um_count(const struct agent_um *um, const char *framework_id,
                      const char *task_id);

/* Number of tasks with pending updates. */
size_t agent_um_task_count(const struct agent_um *um);

/* Visit a task's pending updates, oldest first. */
void agent_um_foreach_task(const struct agent_um *um, const char *framework_id,
                           const char *task_id, agent_um_visit_fn fn,
                           void *arg);

/* Visit every pending update in the order they were added. */
void agent_um_foreach(const struct agent_um *um, agent_um_visit_fn fn,
                      void *arg);

/* Drop every pending update of a task. */
void agent_um_drop_task(struct agent_um *um, const char *framework_id,
                        const char *task_id);

#endif
