/*
 * A fake master for end-to-end tests of offerd-agent, run in-process: a
 * common/http server on a free loopback port, on its own event loop that
 * the test drives (hfm_pump), implementing just enough of the master side
 * of docs/agent-protocol.md: SUBSCRIBE answered with a RecordIO stream, a
 * Mesos-Stream-Id and REGISTERED; every call recorded; events sent on the
 * stream when the test says so.
 *
 * One fake master per test process (a static instance): hfm_start in the
 * test's setup, hfm_stop in its teardown. Failures are Check assertions.
 * Waiting follows harness.h: hfm_pump_until and hfm_wait_* poll a
 * condition while the fake master's loop runs; hfm_pump alone is for
 * windows that prove an absence.
 */
#ifndef OFFERD_TESTS_E2E_HARNESS_AGENT_MASTER_H
#define OFFERD_TESTS_E2E_HARNESS_AGENT_MASTER_H

#include "mesos/v1/mesos.pb-c.h"
#include "offerd/agent.pb-c.h"

#include <sys/types.h>

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
    bool refuse_calls;           /* answer every call but SUBSCRIBE 403 */
    double ping_timeout;         /* REGISTERED.ping_timeout_seconds; 0: unset */
    Offerd__Agent__Call **calls; /* every call, in arrival order */
    size_t ncalls;
};

extern struct hfm hfm;

/* Start listening on 127.0.0.1 (a free port). */
void hfm_start(void);

/* Close the stream, stop, free every recorded call. */
void hfm_stop(void);

/* Run the fake master's loop for about ms milliseconds, whatever happens:
 * only for a window that proves an absence, or to pace what a test sends. */
void hfm_pump(int ms);

/* Run the fake master's loop until cond(arg) holds or timeout_ms pass (it
 * is checked every E2E_POLL_MS, and once more at the deadline). Returns
 * true if it held. */
bool hfm_pump_until(bool (*cond)(void *arg), void *arg, int timeout_ms);

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

/* ACKNOWLEDGE st (an update of framework_id's task) on the stream. */
void hfm_ack(const char *framework_id, const Mesos__V1__TaskStatus *st);

/* A command task to launch. Fields left zero take the default named. */
struct hfm_task {
    const char *framework_id;
    const char *task_id;
    const char *shell;     /* shell command; NULL: run program with argv */
    const char *program;   /* without shell: CommandInfo.value, the path */
    char *const *argv;     /* without shell: arguments, argv[0] included,
                              NULL-terminated */
    const char *env_name;  /* one environment variable; NULL: none */
    const char *env_value; /* its value */
    const char *resources; /* Mesos text, e.g. "cpus:1;mem:64"; NULL: none */
    const char *resources_json; /* instead: a JSON array of Resource
                                   (reservations, volumes), sent as given */
    bool revocable;             /* every resource (of resources) revocable */
    int grace_ms;         /* kill policy grace period; 0: no kill policy */
    bool killing_capable; /* framework has TASK_KILLING_STATE */
};

/* RUN_TASK for t. */
void hfm_run_task(const struct hfm_task *t);

/* KILL_TASK; reason < 0: none. */
void hfm_kill(const char *framework_id, const char *task_id, int reason);

/* The name of st's reason ("REASON_..."), "(none)" when unset. */
const char *hfm_reason_name(const Mesos__V1__TaskStatus *st);

/* Resource messages of a JSON array of mesos.v1.Resource (fails the test
 * on bad JSON); *n gets how many. Free with hfm_resources_free. */
Mesos__V1__Resource **hfm_resources_from_json(const char *json, size_t *n);
void hfm_resources_free(Mesos__V1__Resource **v, size_t n);

struct e2e_proc;

/* Start offerd-agent against this fake master into *agent: on a free
 * loopback port (another is tried when the port is taken meanwhile), with
 * work_dir, fast registration backoff, cpus:2;mem:1024;disk:4096,
 * --switch_user=false, then the
 * extra flags (NULL-terminated; may be NULL). Waits until it answers
 * /health. Returns 0, or -1 (its log printed) when it does not start. */
int hfm_spawn_agent(struct e2e_proc *agent, const char *work_dir,
                    const char *const *extra);

/* As hfm_spawn_agent, on port when it is not 0 (a restarted agent that
 * its executors must find where they left it); a taken port fails. */
int hfm_spawn_agent_on(struct e2e_proc *agent, const char *work_dir,
                       uint16_t port, const char *const *extra);

/* Stop an agent of this fake master as a test's teardown does: SIGUSR1
 * (kill every task, then exit) while the fake master keeps answering, so
 * that the last updates go through; SIGKILL after 15 s. Returns its exit
 * code (0: clean, and no leak under the sanitizers), -1 when killed; the
 * log is printed unless 0. Nothing to do (0) when it is not running. */
int hfm_stop_agent(struct e2e_proc *agent);

#endif
