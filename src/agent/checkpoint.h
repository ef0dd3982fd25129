/*
 * Checkpointing: what the agent writes to its work_dir so that it can
 * re-register with the same id after a restart, and (a later change) recover
 * its tasks. Every file is replaced atomically and durably (write a
 * temporary file, fsync, rename, fsync the directory) on every change.
 *
 * Layout under <work_dir>/meta/:
 *
 *   agent_id                          the id the master gave, text
 *   frameworks/<framework_id>/
 *     framework_info                  mesos.v1.FrameworkInfo, protobuf
 *     tasks/<task_id>/
 *       task_info                     mesos.v1.TaskInfo as launched
 *       sandbox                       the run's sandbox directory, text
 *       task                          mesos.v1.Task: latest state, latest
 *                                     status, status_update_state/uuid
 *       updates                       the task's unacknowledged updates,
 *                                     oldest first: RecordIO records, each
 *                                     an offerd.agent.Call.Update (protobuf)
 *       kill                          a kill in progress (text: grace period
 *                                     ns, SIGKILL due time as wall-clock ns,
 *                                     1 when it came before the task ran,
 *                                     and, for an eviction or a kill with a
 *                                     reason, the TaskStatus.Reason number)
 *   resources/
 *     checkpointed                    the checkpointed resources (dynamic
 *                                     reservations and persistent volumes)
 *                                     and their version, as the master sent
 *                                     them: an offerd.agent.Event.
 *                                     CheckpointResources (protobuf)
 *     removing                        the persistent volumes whose
 *                                     directories await removal (still used
 *                                     by a task, or a removal cut short)
 *                                     and, while a list is applied, those it
 *                                     makes: an offerd.agent.Event.
 *                                     CheckpointResources whose version is
 *                                     0 (see volumes.h)
 *   trash/                            directories being removed (task and
 *                                     framework checkpoints, volumes)
 *
 * A task's directory goes when the task is terminal and its terminal update
 * acknowledged; a framework's when its last task goes. A directory is first
 * renamed into trash/ (atomically), then removed, so that a crash part-way
 * never leaves half of a task's files looking like a task. Ids are used as
 * path components, so callers pass only ids that agent_ckpt_id_is_safe
 * accepts.
 *
 * A task's state is written after its pending updates: every new state
 * comes with a new update, so a reader takes the newest pending update's
 * state as the task's latest (see agent_ckpt_read), and a crash between the
 * two writes loses nothing.
 */
#ifndef OFFERD_AGENT_CHECKPOINT_H
#define OFFERD_AGENT_CHECKPOINT_H

#include "mesos/v1/mesos.pb-c.h"
#include "offerd/agent.pb-c.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest checkpoint file read back. */
#define AGENT_CKPT_MAX_FILE ((size_t)64 << 20)

struct agent_ckpt;

/* True when id can name a directory: 1 to 255 printable ASCII characters,
 * no '/' or '\\', not "." or "..". */
bool agent_ckpt_id_is_safe(const char *id);

/* A checkpointer under <work_dir>/meta (created). Returns NULL with a
 * reason in err if the directory cannot be made. */
struct agent_ckpt *agent_ckpt_new(const char *work_dir, char *err,
                                  size_t errlen);
void agent_ckpt_free(struct agent_ckpt *ck);

/* The meta directory (borrowed). */
const char *agent_ckpt_dir(const struct agent_ckpt *ck);

/* Write / read the agent id. load returns 1 and fills out (outlen bytes),
 * 0 when none was saved, -1 on error (reason in err). */
int agent_ckpt_save_agent_id(struct agent_ckpt *ck, const char *id, char *err,
                             size_t errlen);
int agent_ckpt_load_agent_id(struct agent_ckpt *ck, char *out, size_t outlen,
                             char *err, size_t errlen);

/* Write a framework's FrameworkInfo. */
int agent_ckpt_save_framework(struct agent_ckpt *ck, const char *framework_id,
                              const Mesos__V1__FrameworkInfo *info, char *err,
                              size_t errlen);

/* Write a task's TaskInfo and sandbox path (once, at launch). */
int agent_ckpt_save_task_info(struct agent_ckpt *ck, const char *framework_id,
                              const Mesos__V1__TaskInfo *info,
                              const char *sandbox, char *err, size_t errlen);

/* Write a task's latest state (a mesos.v1.Task). */
int agent_ckpt_save_task(struct agent_ckpt *ck, const char *framework_id,
                         const Mesos__V1__Task *task, char *err, size_t errlen);

/* Replace a task's pending updates with the n given, oldest first (n == 0
 * writes an empty file). */
int agent_ckpt_save_updates(struct agent_ckpt *ck, const char *framework_id,
                            const char *task_id,
                            const Offerd__Agent__Call__Update *const *v,
                            size_t n, char *err, size_t errlen);

/* A kill in progress, as checkpointed. */
struct agent_ckpt_kill {
    int64_t grace_ns;         /* grace period between SIGTERM and SIGKILL */
    int64_t deadline_wall_ns; /* when SIGKILL is due (wall clock, ns) */
    bool during_launch;       /* the kill came before the task ran */
    bool has_reason;          /* an eviction or a KILL_TASK with a reason: */
    int reason;               /* its mesos.v1.TaskStatus.Reason */
};

/* Write a task's kill in progress (before the task is signalled, so that a
 * restarted agent resumes it). */
int agent_ckpt_save_kill(struct agent_ckpt *ck, const char *framework_id,
                         const char *task_id, const struct agent_ckpt_kill *k,
                         char *err, size_t errlen);

/* Remove a task's directory; then the framework's too when it has no task
 * left. */
int agent_ckpt_remove_task(struct agent_ckpt *ck, const char *framework_id,
                           const char *task_id);

/* Remove a framework's directory and everything under it. */
int agent_ckpt_remove_framework(struct agent_ckpt *ck,
                                const char *framework_id);

/* Remove path and everything under it: move it into trash/ with one
 * atomic rename, so that a crash part-way never leaves half of it under its
 * own name, then remove it there (agent_ckpt_read empties trash/ of what a
 * crash left). Where it cannot be moved (another file system, e.g. a
 * volume on a PATH disk) it is removed in place. A missing path is fine.
 * Returns 0, or -1 if something stayed. */
int agent_ckpt_trash(struct agent_ckpt *ck, const char *path);

/* Remove every checkpoint: the agent id, every framework and task, the
 * checkpointed resources (the meta directory itself stays; volume
 * directories, which are not under it, stay too). Returns 0, or -1 if
 * something stayed. */
int agent_ckpt_remove_all(struct agent_ckpt *ck);

/* ---- Checkpointed resources ---- */

/* The files under meta/resources/. */
enum agent_ckpt_res_file {
    AGENT_CKPT_RES_CHECKPOINTED, /* the list and its version */
    AGENT_CKPT_RES_REMOVING,     /* volumes awaiting removal */
};

/* Replace one of the resources files with a CheckpointResources holding
 * the n resources of v (borrowed) and version. Returns 0, or -1 with a
 * reason in err (the old file is intact). */
int agent_ckpt_save_resources(struct agent_ckpt *ck,
                              enum agent_ckpt_res_file which,
                              Mesos__V1__Resource *const *v, size_t n,
                              uint64_t version, char *err, size_t errlen);

/* Read one of the resources files back. Returns 1 with the message in *out
 * (OUT; release with jpb_free), 0 when the file does not exist, -1 when it
 * cannot be read or is not a valid CheckpointResources (bigger than
 * AGENT_CKPT_MAX_FILE, truncated, garbage), with a reason in err. */
int agent_ckpt_load_resources(struct agent_ckpt *ck,
                              enum agent_ckpt_res_file which,
                              Offerd__Agent__Event__CheckpointResources **out,
                              char *err, size_t errlen);

/* ---- Reading everything back (agent recovery) ---- */

/* A task as found under meta/frameworks/<framework_id>/tasks/<task_id>/.
 * Every pointer is owned by the state it belongs to. */
struct agent_ckpt_task {
    char *framework_id; /* the directory names */
    char *task_id;
    Mesos__V1__TaskInfo *info;  /* NULL: task_info missing or unreadable */
    char *sandbox;              /* NULL: sandbox missing or unreadable */
    Mesos__V1__Task *task;      /* NULL: task missing or unreadable */
    bool has_task_file;         /* the task file exists (even unreadable) */
    bool has_state;             /* state is known: */
    Mesos__V1__TaskState state; /* the newest pending update's state, else
                                   the task file's */
    Offerd__Agent__Call__Update **updates; /* readable pending updates,
                                              oldest first */
    size_t nupdates;
    bool has_kill; /* a kill was in progress: */
    struct agent_ckpt_kill kill;
};

/* A framework directory. */
struct agent_ckpt_framework {
    char *id;                       /* the directory name */
    Mesos__V1__FrameworkInfo *info; /* NULL: missing or unreadable */
};

/* Everything agent_ckpt_read found. */
struct agent_ckpt_state {
    struct agent_ckpt_framework *frameworks; /* sorted by id */
    size_t nframeworks;
    struct agent_ckpt_task *tasks; /* sorted by framework id, task id */
    size_t ntasks;
    size_t problems; /* files or entries skipped as unreadable or corrupt */
};

/* Read every framework and task checkpoint (after emptying trash/). Never
 * fails: whatever cannot be read or decoded (a directory name that is not
 * a safe id, a file that is not a valid message, a task_info or task of
 * another task than its directory names, a bad RecordIO record, an update
 * of another task or without a 16-byte uuid, a malformed kill or sandbox
 * file) is logged at WARNING, counted in problems and left out, and the
 * rest is read. Files larger than AGENT_CKPT_MAX_FILE count as unreadable.
 * Fills *out (OUT); release it with agent_ckpt_state_clear. */
void agent_ckpt_read(struct agent_ckpt *ck, struct agent_ckpt_state *out);

/* Free what agent_ckpt_read filled in (and zero it). */
void agent_ckpt_state_clear(struct agent_ckpt_state *s);

#endif
