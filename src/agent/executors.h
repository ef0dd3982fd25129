/*
 * Custom executors on the agent: their processes, their event streams and
 * their checkpoint (docs/executors.md).
 *
 * A task whose TaskInfo carries an ExecutorInfo (or a task group whose
 * ExecutorInfo is CUSTOM) runs on that executor: the first such task
 * launches the executor's command in a sandbox of its own,
 *
 *   <work_dir>/slaves/<agent>/frameworks/<fw>/executors/<ex>/runs/<run>/
 *
 * through the task supervisor (supervisor.h: own session, stdout and stderr
 * files, pid files, exit status file), with Mesos's executor environment
 * (MESOS_AGENT_ENDPOINT, MESOS_FRAMEWORK_ID, MESOS_EXECUTOR_ID, ...). Its
 * tasks wait in a queue until it SUBSCRIBEs on POST /api/v1/executor
 * (executor_api.h); later tasks go to it as LAUNCH (LAUNCH_GROUP) events.
 *
 * The agent keeps every task in its task table (tasks.h, phase NEW: the
 * executor runs it, the table has no process for it) and does the status
 * updates; this module knows executors only, and tells its owner through
 * callbacks what the executors say (UPDATE, MESSAGE) and when one ends.
 *
 * An executor ends when its process does (seen on a poll timer, as the
 * task table's SIGCHLD handler reaps every child), when it has not
 * subscribed within the registration timeout (killed), or after a
 * shutdown: SHUTDOWN event, SIGTERM to its process group after the
 * shutdown grace period, SIGKILL after as long again.
 *
 * Checkpoint: one JSON file per executor under
 * <work_dir>/meta/executors/<fw>/<ex>.json (ExecutorInfo, FrameworkInfo,
 * sandbox); removed when the executor ends. A restarted agent re-attaches
 * to the executors whose supervisor still runs (agent_execs_recover) and
 * gives them the re-registration timeout to subscribe again.
 *
 * Everything runs on the caller's event loop.
 */
#ifndef OFFERD_AGENT_EXECUTORS_H
#define OFFERD_AGENT_EXECUTORS_H

#include "common/http.h"
#include "mesos/v1/executor.pb-c.h"
#include "mesos/v1/mesos.pb-c.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
struct agent_execs;

/* Why an executor ended, for its tasks' updates. */
struct agent_exec_end {
    bool registration_timeout; /* never subscribed in time: killed */
    bool shutdown;             /* ended after a shutdown or kill request */
    bool has_status;           /* wait_status is the executor's */
    int wait_status;
    char message[256]; /* one line for the tasks' updates */
    /* The executor as it ran, set for on_exited (borrowed, valid during
     * the callback): */
    const Mesos__V1__ExecutorInfo *info;
    const Mesos__V1__FrameworkInfo *framework;
    const char *sandbox;
};

struct agent_execs_cbs {
    /* An executor's UPDATE (validated: uuid set, source SOURCE_EXECUTOR,
     * not TASK_STAGING). status is borrowed. */
    void (*on_update)(const char *fw, const char *ex,
                      const Mesos__V1__TaskStatus *status, void *arg);
    /* An executor's MESSAGE for its framework. */
    void (*on_message)(const char *fw, const char *ex, const uint8_t *data,
                       size_t len, void *arg);
    /* The executor is gone: the owner fails its tasks that are not
     * terminal and tells the master. The executor record is freed after
     * the callback returns. */
    void (*on_exited)(const char *fw, const char *ex,
                      const struct agent_exec_end *end, void *arg);
    void *arg;
};

/* What the module needs; strings are copied. */
struct agent_launch_flags;

struct agent_execs_config {
    const char *work_dir;       /* absolute */
    const char *agent_endpoint; /* "ip:port" executors call */
    int64_t registration_timeout_ns;
    int64_t reregistration_timeout_ns;
    int64_t shutdown_grace_ns;
    int64_t heartbeat_interval_ns; /* HEARTBEAT events; 0: none */
    /* Users, URIs, environment, containerizers (task_launch.h). */
    const struct agent_launch_flags *lf;
    const char *cache_dir; /* effective --fetcher_cache_dir */
    int64_t poll_ms;       /* how often processes are checked */
    /* Executors' tokens (executor_auth.h), borrowed; NULL: none given,
     * none checked. */
    const struct agent_exec_auth *exec_auth;
};

/* Defaults of the last two fields. */
#define AGENT_EXECS_HEARTBEAT_NS (30LL * 1000000000LL)
#define AGENT_EXECS_POLL_MS      100

/* The token authority of x's config (NULL: none). */
const struct agent_exec_auth *agent_execs_auth(const struct agent_execs *x);

/* The id of the container executor ex of framework fw runs in now (its
 * run), or NULL when x has no such executor. */
const char *agent_execs_container_id(const struct agent_execs *x,
                                     const char *fw, const char *ex);

struct agent_execs *agent_execs_new(struct event_base *base,
                                    const struct agent_execs_config *cfg,
                                    const struct agent_execs_cbs *cbs);

/* Free every record and stream. Executor processes are left running (a
 * later agent re-attaches to the checkpointed ones). NULL is ignored. */
void agent_execs_free(struct agent_execs *x);

/* The agent's id and info for SUBSCRIBED and the environment (copied);
 * call once registered, before any launch. */
void agent_execs_set_agent(struct agent_execs *x,
                           const Mesos__V1__AgentInfo *info);

/* Run task (or, with task NULL, the task group) on the executor ei of
 * framework fi: launch the executor if it does not run yet, then queue the
 * work until it subscribes, or send it as LAUNCH / LAUNCH_GROUP. Returns
 * 0, or -1 with a one-line reason in err (nothing queued; the tasks fail):
 * an id that cannot name a directory, an executor of that id with another
 * command, one that is shutting down, or a launch that failed. */
int agent_execs_run(struct agent_execs *x, const Mesos__V1__FrameworkInfo *fi,
                    const Mesos__V1__ExecutorInfo *ei,
                    const Mesos__V1__TaskInfo *task,
                    const Mesos__V1__TaskGroupInfo *group, char *err,
                    size_t errlen);

/* What agent_execs_kill did. */
enum agent_execs_kill_result {
    AGENT_EXECS_KILL_NONE,     /* no such executor, or not its task */
    AGENT_EXECS_KILL_DEQUEUED, /* the task was still queued: dropped from
                                  the queue; the owner reports TASK_KILLED */
    AGENT_EXECS_KILL_SENT,     /* a KILL event went to the executor */
    AGENT_EXECS_KILL_PENDING,  /* not subscribed (re-registering): the
                                  KILL goes out when it subscribes */
};

/* Kill task_id of executor ex (kp may be NULL). */
enum agent_execs_kill_result agent_execs_kill(struct agent_execs *x,
                                              const char *fw, const char *ex,
                                              const char *task_id,
                                              const Mesos__V1__KillPolicy *kp);

/* Tell a subscribed executor that the framework acknowledged the update
 * uuid (16 bytes) of task_id. No-op otherwise. */
void agent_execs_acknowledged(struct agent_execs *x, const char *fw,
                              const char *ex, const char *task_id,
                              const uint8_t *uuid, size_t uuid_len);

/* Deliver a framework's message. Returns 0, or -1 when the executor is
 * unknown or not subscribed (the message is dropped, as Mesos does). */
int agent_execs_message(struct agent_execs *x, const char *fw, const char *ex,
                        const uint8_t *data, size_t len);

/* Shut down executor ex of fw (SHUTDOWN, then SIGTERM and SIGKILL).
 * Returns 0, or -1 when there is no such executor. */
int agent_execs_shutdown(struct agent_execs *x, const char *fw, const char *ex);

/* Shut down every executor of fw (fw NULL: every executor). */
void agent_execs_shutdown_all(struct agent_execs *x, const char *fw);

/* SIGKILL every executor's processes now. */
void agent_execs_kill_now(struct agent_execs *x);

/* Number of executors (whose processes may still run). */
size_t agent_execs_count(const struct agent_execs *x);

/* The executor's ExecutorInfo and sandbox (borrowed), or NULL. */
const Mesos__V1__ExecutorInfo *agent_execs_info(const struct agent_execs *x,
                                                const char *fw, const char *ex,
                                                const char **sandbox);

/* Iterate executors: start with *pos = 0; false when done. Out-params are
 * borrowed. */
bool agent_execs_next(const struct agent_execs *x, size_t *pos, const char **fw,
                      const Mesos__V1__ExecutorInfo **info,
                      const char **sandbox);

/* Re-attach to the checkpointed executors whose supervisor still runs
 * (the others are forgotten, their checkpoint removed); each must
 * subscribe within the re-registration timeout. Returns how many were
 * re-attached. Call before the agent subscribes. */
size_t agent_execs_recover(struct agent_execs *x);

/* ---- The executor HTTP API's entry points (executor_api.c) ---- */

/* The outcome of a call, turned into the HTTP answer by the caller. */
struct agent_execs_answer {
    int status;        /* 202, 400, 403 */
    char message[256]; /* reason for 4xx */
};

/* Find the executor of call (framework, executor) and check it may make
 * this call: 400 "Framework cannot be found" / "Executor cannot be found",
 * 403 "Executor is not subscribed" for anything but SUBSCRIBE. Returns
 * true when it may. */
bool agent_execs_check_call(const struct agent_execs *x,
                            const Mesos__V1__Executor__Call *call,
                            struct agent_execs_answer *out);

/* SUBSCRIBE (after agent_execs_check_call): start the event stream on req
 * (consumed) in encoding enc, send SUBSCRIBED and what is queued, take the
 * re-sent unacknowledged updates. A previous stream of the executor is
 * closed. */
void agent_execs_subscribe(struct agent_execs *x,
                           const Mesos__V1__Executor__Call *call,
                           struct http_request *req, enum http_encoding enc);

/* UPDATE and MESSAGE (after agent_execs_check_call): hand them to the
 * owner's callbacks. */
void agent_execs_update(struct agent_execs *x,
                        const Mesos__V1__Executor__Call *call);
void agent_execs_executor_message(struct agent_execs *x,
                                  const Mesos__V1__Executor__Call *call);

#endif
