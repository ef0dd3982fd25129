/*
 * A workload framework for the end-to-end failure tests (master kill -9,
 * chaos proxy), on libofferd and run on the test's own event loop while the
 * test waits (e2e_loop_until of harness.h). Unlike harness_fw.h it keeps
 * up to WL_MAX_TASKS tasks and behaves as a careful framework does after
 * failures (docs/reconciliation.md):
 *
 *  - it is PARTITION_AWARE (optionally), has a failover timeout and
 *    acknowledges every update that carries a uuid (libofferd's
 *    auto-acknowledgement), so the agents can forget ended tasks;
 *  - it launches queued shell tasks on the offers it gets and remembers the
 *    agent each went to;
 *  - after every (re-)subscription, and whenever a task goes
 *    TASK_UNREACHABLE, it reconciles its non-terminal tasks explicitly
 *    (with their agent ids), retrying with backoff (0.5 s doubling to 4 s)
 *    for as long as a task is not terminal;
 *  - it records, per task, the distinct updates (by uuid), the first
 *    terminal state heard and any different terminal state after it.
 *
 * A reconciliation answer (from the master, REASON_RECONCILIATION, no uuid)
 * that arrives after the task's first terminal state and names another
 * state is counted apart (stale_answers), not as a conflict: the framework
 * only reconciles tasks it holds non-terminal, so such an answer is to a
 * RECONCILE sent before the terminal update arrived, processed by the
 * master after the acknowledgement made it forget the task (Mesos has the
 * same race; frameworks ignore such answers).
 *
 * The outcome checks (wl_check_*) assert with Check. Everything lives in
 * struct wl, which the test owns (static storage: it is large).
 */
#ifndef OFFERD_TESTS_E2E_HARNESS_WL_H
#define OFFERD_TESTS_E2E_HARNESS_WL_H

#include "offerd/scheduler.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event;
struct event_base;
struct hmap;

#define WL_MAX_TASKS   1024
#define WL_MAX_UUIDS   8 /* distinct uuids remembered per task */
#define WL_MAX_AGENTS  8
#define WL_EXIT_KILLED -1 /* a task that runs until it is killed */

/* One task of the workload. */
struct wl_task {
    char id[48];
    char command[320];
    int exit_code;      /* what the command exits with, or WL_EXIT_KILLED */
    char agent_id[128]; /* the agent of the offer it was launched on */
    bool launched;      /* sent in an ACCEPT */
    bool kill_sent;

    int state;          /* latest state believed, -1 before any */
    int first_terminal; /* the first terminal state heard, -1: none */
    int conflicts;      /* later terminal states that differ (not stale) */
    int conflict_state; /* the first of those */
    int regressions;    /* non-terminal updates with a new uuid after it */
    int stale_answers;  /* late reconciliation answers (see above) */
    int nupdates;       /* UPDATE events, duplicates included */
    uint8_t uuids[WL_MAX_UUIDS][16];
    int nuuids;               /* distinct uuids (at most WL_MAX_UUIDS kept) */
    char terminal_msg[160];   /* message of the terminal update with uuid */
    int terminal_reason;      /* its reason, -1 when unset */
    bool terminal_from_agent; /* a terminal update with uuid arrived */
    int unreachable;          /* TASK_UNREACHABLE updates */
    int reregistered;         /* updates with REASON_AGENT_REREGISTERED */

    int64_t rec_due_ms; /* next explicit reconciliation, 0: none */
    int rec_backoff_ms;
};

/* One answer of an implicit reconciliation (wl_implicit_reconcile). */
struct wl_answer {
    char task_id[48];
    char agent_id[128];
    int state;
};

/* A task an agent's /state shows (wl_agent_tasks). */
struct wl_agent_task {
    char task_id[48];
    char framework_id[128];
    char agent_id[128];
    char state[32];
    bool completed; /* in completed_tasks (terminal, not yet acknowledged) */
};

struct wl {
    /* Set before wl_start (zero: defaults). */
    const char *name;     /* FrameworkInfo.name; "e2e-workload" */
    bool partition_aware; /* the PARTITION_AWARE capability */
    const char *task_res; /* each task's resources; "cpus:0.1;mem:16" */
    /* Hooks (may be NULL), run from the loop: after an ACCEPT was handed
     * to libofferd (not yet on the wire), and after a task's first
     * terminal update arrived (its acknowledgement follows). */
    void (*on_accept)(struct wl *w, void *arg);
    void (*on_terminal)(struct wl *w, struct wl_task *t, void *arg);
    void *hook_arg;

    /* State, read by tests. */
    struct offerd_sched *s;
    struct event_base *base;
    char id[128];
    bool subscribed;
    int subscriptions; /* SUBSCRIBED events */
    int errors;        /* ERROR events */
    int call_failures; /* calls without a 2xx (master down, ...) */
    int unknown_updates;
    char unknown_id[48]; /* the first update for a task not of this run */
    int reconcile_calls;
    struct wl_task tasks[WL_MAX_TASKS];
    int ntasks;

    /* Implicit reconciliation capture (wl_implicit_reconcile). */
    bool capturing;
    char sentinel[48];
    bool sentinel_seen;
    struct wl_answer answers[WL_MAX_TASKS];
    int nanswers;

    /* Private. */
    int queue[WL_MAX_TASKS]; /* task indexes waiting for an offer */
    int nqueue;
    int64_t last_revive_ms;
    struct hmap *by_id; /* task id -> index + 1 */
    struct event *tick;
    int nsentinels;
};

/* The seed of a randomized test: OFFERD_E2E_SEED from the environment
 * when set (to replay a run), else one made from the time and the pid.
 * Printed to stderr with how to replay it. */
uint64_t wl_seed(const char *test_name);

/* The next number of a splitmix64 sequence in *state. */
uint64_t wl_rand(uint64_t *state);

/* A number in [lo, hi] from *state. */
int wl_rand_between(uint64_t *state, int lo, int hi);

/* Run w's loop until the agents (ports) hold exactly want_live live tasks
 * of w's framework and no ended one (every terminal update acknowledged),
 * and w has no call in flight, or timeout_ms pass. True when reached. */
bool wl_wait_quiet(struct wl *w, const uint16_t *agent_ports, int nagents,
                   int want_live, int timeout_ms);

/* Create w's client on base against the master at 127.0.0.1:master_port,
 * start its reconciliation timer and wait (up to 20 s) until subscribed. */
void wl_start(struct wl *w, struct event_base *base, uint16_t master_port);

/* Close the client and subscribe again with the framework's id to the
 * master at 127.0.0.1:master_port (a new leading master); wait (up to
 * 20 s) until subscribed. */
void wl_move(struct wl *w, uint16_t master_port);
/* Close the client (no TEARDOWN) and stop the timer. */
void wl_free(struct wl *w);

/* Add a task running command (sh -c) that exits with exit_code
 * (WL_EXIT_KILLED: runs until killed) and queue it for the next offer.
 * Returns its index. */
int wl_add(struct wl *w, const char *id, const char *command, int exit_code);

/* The task with that id, or NULL. */
struct wl_task *wl_find(struct wl *w, const char *id);

/* Tasks waiting for an offer. */
int wl_queued(const struct wl *w);

/* Launched tasks that have a terminal state (the first one heard). */
int wl_terminal_count(const struct wl *w);

/* Ask the master to kill a task (once). */
void wl_kill(struct wl *w, struct wl_task *t);

/* Implicit reconciliation: send RECONCILE without tasks, wait for its 202,
 * then an explicit one of an unknown sentinel task on agent_id (a
 * registered agent, so the master answers it at once); every answer that
 * arrives before the sentinel's is captured in w->answers. Asserts that
 * the sentinel answer comes within timeout_ms. */
void wl_implicit_reconcile(struct wl *w, const char *agent_id, int timeout_ms);

/* The tasks an agent's /state shows (live and completed), at most max in
 * out; returns how many there are, or -1 when /state could not be read. */
int wl_agent_tasks(uint16_t agent_port, struct wl_agent_task *out, int max);

/* The agent's id as its /state shows it, in out (empty when unknown). */
void wl_agent_id(uint16_t agent_port, char *out, size_t outlen);

/* Assert that the agents (ports), the master (an implicit reconciliation)
 * and the framework agree on every task of the framework: the same set of
 * tasks, each in the same state on the same agent, every task known to
 * the framework, and exactly `want_live` live tasks. agent_id: a
 * registered agent for the sentinel. */
void wl_check_agreement(struct wl *w, const uint16_t *agent_ports, int nagents,
                        const char *agent_id, int want_live);

/* Print the launched tasks without a terminal state (not those that run
 * until killed) to stderr; returns how many there are, and in *unreachable
 * (may be NULL) how many of them are TASK_UNREACHABLE. */
int wl_dump_unfinished(const struct wl *w, int *unreachable);

/* Assert every launched task's outcome: it reached a terminal state, heard
 * no other terminal state and no update out of order, and that state is
 * the truth: a task whose command started (its marker file
 * <marker_dir>/<task id> exists) FINISHED when it exits 0, FAILED with
 * "Command exited with status N" otherwise, KILLED when it ran until
 * killed; a task that never started is TASK_LOST, TASK_DROPPED or
 * TASK_GONE. Also: no update for a task the framework does not know.
 * Prints a summary line to stderr. */
void wl_check_outcomes(const struct wl *w, const char *marker_dir);

/* ---- The scenario of the failure tests ----
 * What the master failover and chaos tests share: their agents, their
 * tasks (each writes a marker file <marker_dir>/<task id> first, so that
 * wl_check_outcomes knows which started) and their closing checks. */

struct e2e_proc;

/* Start agent number i (--hostname=agent<i>, 2 cpus, 512 MB, status
 * update retries every 0.5 to 2 s) against the master at master_port (or
 * a proxy of it), and wait until healthy; fails the test otherwise. */
void wl_start_agent(struct e2e_proc *agent, int i, uint16_t master_port);

/* Make <master's directory>/markers and write its path into out. */
void wl_make_marker_dir(const struct e2e_proc *master, char *out,
                        size_t outlen);

/* Add n tasks long-0 .. long-<n-1> that run until killed; they are the
 * first n tasks of w when added first. */
void wl_add_long(struct wl *w, int n, const char *marker_dir);

/* Add short task <prefix>-<i> (3 digits): it sleeps 0.1 s to max_tenths
 * tenths of a second, then exits 0 mostly, else with one of a few failure
 * codes (drawn from *rng). */
void wl_add_short(struct wl *w, uint64_t *rng, const char *prefix, int i,
                  int max_tenths, const char *marker_dir);

/* Run w's loop until its first n tasks are TASK_RUNNING; true if in time. */
bool wl_wait_first_running(struct wl *w, int n, int timeout_ms);

/* Run w's loop until no task is queued and want tasks are terminal; true
 * if in time. */
bool wl_wait_terminal(struct wl *w, int want, int timeout_ms);

/* Run w's loop until w is subscribed and the master at master_port counts
 * n active agents (its metrics are read every 200 ms at most); true if in
 * time. */
bool wl_wait_recovered(struct wl *w, uint16_t master_port, int n,
                       int timeout_ms);

/* The closing checks, once every short task ended and w's first nlong
 * tasks (wl_add_long) still run: the agents, the master and w agree on
 * the live tasks; the long tasks are killed; then nothing is left
 * anywhere, they agree again, every task's outcome is its truth
 * (wl_check_outcomes) and w got no ERROR. */
void wl_finish(struct wl *w, const uint16_t *agent_ports, int nagents,
               int nlong, const char *marker_dir);

#endif
