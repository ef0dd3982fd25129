/*
 * Checkpointed resources and persistent volumes on the agent
 * (docs/agent.md, "Persistent volumes").
 *
 * The master owns the list of an agent's dynamic reservations and
 * persistent volumes and sends it whole, with a version that only grows
 * (CHECKPOINT_RESOURCES). This module holds the list the agent last
 * applied, makes it durable (checkpoint.h, meta/resources/) before the
 * agent answers, keeps one directory per persistent volume, reports the
 * list when the agent (re-)registers, and makes a volume available in a
 * task's sandbox.
 *
 * Volume directories, as Mesos's agent lays them out:
 *
 *   <work_dir>/volumes/roles/<role>/<persistence id>
 *
 * for a volume on the agent's default disk (no DiskInfo.source), and
 * <root>/volumes/roles/<role>/<persistence id> for one on a PATH disk
 * (root relative to work_dir unless absolute). <role> is the role the
 * volume is reserved to (the top of its reservation stack) with each '/'
 * of a hierarchical role written as ' ' (role names hold no whitespace, so
 * the encoding is unambiguous and the role stays one path component). Role
 * and persistence id are checked before use (res_role_validate and
 * agent_vol_id_is_safe); volumes on MOUNT, BLOCK or RAW disks are refused.
 *
 * A volume that leaves the list has its directory removed at once when no
 * task of the agent uses it (a task uses a volume while its processes may
 * run: launching or running), otherwise when the last such task ends. The
 * volumes awaiting removal are checkpointed too (meta/resources/removing),
 * so that a restart neither forgets nor loses them. That file is written
 * before the list and before any directory is made, naming also the
 * volumes about to be made: every volume directory that exists is named by
 * one of the two files, and after a crash anywhere in between, recovery
 * removes what the removal file names beyond the list. A volume that is
 * listed is never removed; a directory under volumes/ that neither file
 * names is (through meta/trash/). docs/agent.md, "Persistent volumes",
 * has the order and the rule.
 *
 * Nothing here touches the event loop; file system calls are synchronous
 * (removing a large volume blocks the loop for as long as it takes).
 */
#ifndef OFFERD_AGENT_VOLUMES_H
#define OFFERD_AGENT_VOLUMES_H

#include "common/resources.h"
#include "mesos/v1/mesos.pb-c.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct agent_ckpt;
struct agent_vols;

/* ---- Paths (pure) ---- */

/* True when a persistence id can name a directory, by Mesos's rules for
 * ids (common::validation::validateID): 1 to 255 bytes, not "." or "..",
 * no control character, no '/' or '\\'. Spaces and UTF-8 are fine. */
bool agent_vol_id_is_safe(const char *id);

/* The directory name of role: role with every '/' replaced by ' ' (newly
 * allocated). */
char *agent_vol_role_dir(const char *role);

/* The directory of persistent volume r (res_is_persistent_volume) on an
 * agent whose work_dir is work_dir (absolute), as described above. Returns
 * it (newly allocated), or NULL with a one-line reason in err: a role that
 * is not a valid reserved role or too long for a path component, a
 * persistence id that agent_vol_id_is_safe refuses, an unsupported disk
 * source, a PATH root with a ".." component, a path above PATH_MAX. */
char *agent_vol_path(const char *work_dir, const struct resource *r, char *err,
                     size_t errlen);

/* Check a volume's container path and write it normalised into out
 * (outlen bytes): relative, at most 1024 bytes, no ".." component, not
 * empty once empty and "." components are dropped ("./data//x/" is
 * "data/x"). Returns 0, or -1 with a reason in err. */
int agent_vol_container_path(const char *p, char *out, size_t outlen, char *err,
                             size_t errlen);

/* True when one of ti's resources is the persistent volume (role, id). */
bool agent_vol_task_uses(const Mesos__V1__TaskInfo *ti, const char *role,
                         const char *id);

/* ---- The agent's checkpointed resources ---- */

/* Whether a task of the agent uses the volume (role, id) now. */
typedef bool (*agent_vols_in_use_fn)(const char *role, const char *id,
                                     void *arg);

/* An empty set (version 0, no resources) for the agent with work_dir
 * (absolute; copied), checkpointing through ck (borrowed; must outlive
 * it). in_use is asked before a volume directory is removed. A test
 * setting, OFFERD_TEST_CRASH_AT in the environment, is read here (the crash
 * points in volumes.c and docs/agent.md). */
struct agent_vols *agent_vols_new(const char *work_dir, struct agent_ckpt *ck,
                                  agent_vols_in_use_fn in_use, void *arg);

/* Free the set. Directories are left alone. NULL is ignored. */
void agent_vols_free(struct agent_vols *v);

/* Read the checkpointed list, its version and the volumes awaiting removal
 * back (agent start). Never fails: a missing file means version 0 and no
 * resources; an unreadable or corrupt one is logged at ERROR and treated
 * the same, and then the removal file is not trusted either (no directory
 * is removed on its strength). Removal entries that are unreadable, or
 * name a volume that is listed, are dropped; the others await removal.
 * When both files were read and the list exists, every directory
 * <base>/volumes/roles/<role>/<id> that neither names (base: work_dir, and
 * the roots of the PATH disks the files name) awaits removal too, logged
 * at WARNING. Removes nothing itself (call agent_vols_collect once the
 * tasks are known). Returns the number of problems logged. */
size_t agent_vols_recover(struct agent_vols *v);

/* What agent_vols_apply did. */
enum agent_vols_result {
    AGENT_VOLS_APPLIED, /* durable and in effect */
    AGENT_VOLS_STALE,   /* version older than the one held: ignored */
    AGENT_VOLS_FAILED,  /* refused or failed: the previous list holds */
};

/* Apply a CHECKPOINT_RESOURCES: the n resources of res (borrowed; copied)
 * replace the list, at version. In order: refuse a version older than the
 * one held; decode the resources and build every volume's directory path
 * (a bad resource, an unsafe role or id, two volumes with one path, fail
 * it); write the removal file naming the volumes that will await removal
 * and those the old list does not hold (when that changes it); create the
 * missing volume directories (mode 0755; an existing one is kept, with its
 * data); write the list and its version; then take the new list, remove the
 * directories of the volumes no longer listed that no task uses
 * (agent_vols_collect), and write the removal file without the volumes
 * now listed. Each file is written atomically and durably. On
 * AGENT_VOLS_FAILED the directories it created are removed again, the
 * removal file is put back, the previous list and version hold, and err
 * says why; on AGENT_VOLS_STALE err says so. */
enum agent_vols_result agent_vols_apply(struct agent_vols *v,
                                        Mesos__V1__Resource *const *res,
                                        size_t n, uint64_t version, char *err,
                                        size_t errlen);

/* Remove the directory of every volume awaiting removal that no task uses
 * (asking in_use), through meta/trash/ (agent_ckpt_trash), and checkpoint
 * what is left awaiting. A directory that cannot be removed is logged and
 * stays awaiting (retried at the next call). Returns how many were
 * removed. */
size_t agent_vols_collect(struct agent_vols *v);

/* Make the persistent volumes among ti's resources available in the
 * task's sandbox: for each, a symbolic link <sandbox>/<container path>
 * (parents created) to the directory of the volume of the same role and
 * persistence id in the list. Returns 0, or -1 with a reason in err (a
 * volume this agent does not hold, a bad container path, a path that
 * exists already); links made before the failure stay in the sandbox. */
int agent_vols_attach(const struct agent_vols *v, const Mesos__V1__TaskInfo *ti,
                      const char *sandbox, char *err, size_t errlen);

/* The version of the list held (0: none applied). */
uint64_t agent_vols_version(const struct agent_vols *v);

/* The list held (borrowed, valid until the next apply or recover). */
const res_list *agent_vols_resources(const struct agent_vols *v);

/* Copies of the list as the master sent it, for SUBSCRIBE: a malloc'd
 * array (never NULL) of n (OUT) messages; release each with jpb_free and
 * the array with free, or hand them to a message freed with jpb_free. */
Mesos__V1__Resource **agent_vols_resources_pb(const struct agent_vols *v,
                                              size_t *n);

/* The directory of the listed volume (role, id), or NULL (borrowed). */
const char *agent_vols_find(const struct agent_vols *v, const char *role,
                            const char *id);

/* How many volumes await removal (directories found without a record
 * included). */
size_t agent_vols_removing(const struct agent_vols *v);

#endif
