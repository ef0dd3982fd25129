/*
 * A fake master for end-to-end tests of offerd-agent, run in-process: a
 * common/http server on a free loopback port, on its own event loop that
 * the test drives (hfm_pump), implementing just enough of the master side
 * of docs/agent-protocol.md: SUBSCRIBE answered with a RecordIO stream, a
 * Mesos-Stream-Id and REGISTERED; every call recorded; events sent on the
 * stream when the test says so. (The same scheme as the fake master inside
 * e2e_agent.c, as a reusable module.)
 *
 * One fake master per test process (a static instance): hfm_start in the
 * test's setup, hfm_stop in its teardown. Failures are Check assertions.
 */
#ifndef OFFERD_TESTS_E2E_HARNESS_AGENT_MASTER_H
#define OFFERD_TESTS_E2E_HARNESS_AGENT_MASTER_H

#include "mesos/v1/mesos.pb-c.h"
#include "offerd/agent.pb-c.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The agent id REGISTERED gives. */
#define HFM_AGENT_ID "fake-master-S0"

/* The fake master's state; tests read it (and set the flags). */
struct hfm {
    uint16_t port;               /* where it listens */
    int subscribes;              /* SUBSCRIBE calls answered */
    bool auto_ack;               /* ACKNOWLEDGE every UPDATE as it arrives */
    Offerd__Agent__Call **calls; /* every call, in arrival order */
    size_t ncalls;
};

extern struct hfm hfm;

/* Start listening on 127.0.0.1 (a free port). */
void hfm_start(void);

/* Close the stream, stop, free every recorded call. */
void hfm_stop(void);

/* Run the fake master's loop for about ms milliseconds. */
void hfm_pump(int ms);

/* True while the agent's stream is open. */
bool hfm_has_stream(void);

/* Close the agent's stream (the agent subscribes again). */
void hfm_close_stream(void);

/* Wait (pumping) until at least count SUBSCRIBEs were answered and a
 * stream is open; fails the test after timeout_ms. */
void hfm_wait_subscribed(int count, int timeout_ms);

/* The index of the first call at index >= *from of this type (and, for
 * UPDATE, task_id and state when given: NULL / -1 match any), waiting up
 * to timeout_ms; *from moves past it. Returns -1 on timeout. */
long hfm_wait_call(size_t *from, Offerd__Agent__Call__Type type,
                   const char *task_id, int state, int timeout_ms);

/* The UPDATE statuses of a task from index from, in order (at most max). */
size_t hfm_updates_of(const char *task_id, size_t from,
                      const Mesos__V1__TaskStatus **out, size_t max);

/* Send an event on the agent's stream (fails the test without one). */
void hfm_send(const Offerd__Agent__Event *ev);

/* A command task to launch. */
struct hfm_task {
    const char *framework_id;
    const char *task_id;
    const char *shell;     /* shell command */
    const char *resources; /* Mesos text, e.g. "cpus:1;mem:64"; NULL: none */
    bool revocable;        /* every resource revocable */
    int grace_ms;          /* kill policy grace period; < 0: none */
    bool killing_capable;  /* framework has TASK_KILLING_STATE */
};

/* RUN_TASK for t. */
void hfm_run_task(const struct hfm_task *t);

/* KILL_TASK; reason < 0: none. */
void hfm_kill(const char *framework_id, const char *task_id, int reason);

#endif
