/*
 * Running a task as a user (--switch_user): the user is looked up in the
 * agent, before the supervisor forks (getpwnam_r, getgrouplist: NSS may
 * read files, which is no work for a forked child); the child then only
 * makes plain system calls: chown the sandbox tree, setgroups, setgid,
 * setuid, as Mesos's launcher does (os::su).
 */
#ifndef OFFERD_AGENT_RUN_AS_H
#define OFFERD_AGENT_RUN_AS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Supplementary groups kept; a user in more is refused. */
#define AGENT_RUN_AS_MAX_GROUPS 256

/* A resolved user. */
struct agent_run_as {
    char name[256]; /* user name */
    uid_t uid;
    gid_t gid;      /* primary group */
    size_t ngroups; /* supplementary groups (the primary one included) */
    gid_t groups[AGENT_RUN_AS_MAX_GROUPS];
};

/* Which user a task runs as: with switch_user, cmd_user when set and not
 * empty, else fw_user when not empty; without, or when neither names one,
 * the agent's own user (*out stays untouched, returns 0 and *picked
 * false). A named user is looked up into *out (*picked true). Returns 0,
 * or -1 with Mesos's reason ("Failed to chown directory to 'U': No such
 * user 'U'") in err when the user does not exist or cannot be read. */
int agent_run_as_pick(bool switch_user, const char *cmd_user,
                      const char *fw_user, struct agent_run_as *out,
                      bool *picked, char *err, size_t errlen);

/* Look name up. Returns 0 and *out, or -1 with a reason in err. */
int agent_run_as_lookup(const char *name, struct agent_run_as *out, char *err,
                        size_t errlen);

/* Give path and everything under it (symlinks themselves, never their
 * targets) to u. For a forked child. Returns 0, or -1 with errno set. */
int agent_run_as_chown_tree(const char *path, const struct agent_run_as *u);

/* Become u: setgroups, setgid, setuid, in that order. For a forked child
 * before exec. Returns 0, or -1 with errno set. */
int agent_run_as_become(const struct agent_run_as *u);

#endif
