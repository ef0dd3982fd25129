/*
 * Resolving and becoming a task's user (see run_as.h).
 */
#include "agent/run_as.h"

#include <errno.h>
#include <ftw.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int agent_run_as_lookup(const char *name, struct agent_run_as *out, char *err,
                        size_t errlen)
{
    struct passwd pw, *res = NULL;
    char buf[8192];
    int rc = getpwnam_r(name, &pw, buf, sizeof(buf), &res);
    if (res == NULL) {
        if (rc == 0 || rc == ENOENT || rc == ESRCH || rc == EBADF ||
            rc == EPERM)
            snprintf(err, errlen,
                     "Failed to chown directory to '%s': No such user '%s'",
                     name, name);
        else
            snprintf(err, errlen,
                     "Failed to chown directory to '%s': Failed to get user "
                     "information for '%s': %s",
                     name, name, strerror(rc));
        return -1;
    }
    if (strlen(name) >= sizeof(out->name)) {
        snprintf(err, errlen, "user name '%.64s...' is too long", name);
        return -1;
    }
    struct agent_run_as u;
    memset(&u, 0, sizeof(u));
    memcpy(u.name, name, strlen(name) + 1);
    u.uid = pw.pw_uid;
    u.gid = pw.pw_gid;
    int n = AGENT_RUN_AS_MAX_GROUPS;
    if (getgrouplist(name, pw.pw_gid, u.groups, &n) < 0) {
        snprintf(err, errlen,
                 "user '%s' is in more than %d groups, which this agent does "
                 "not support",
                 name, AGENT_RUN_AS_MAX_GROUPS);
        return -1;
    }
    u.ngroups = (size_t)n;
    *out = u;
    return 0;
}

int agent_run_as_pick(bool switch_user, const char *cmd_user,
                      const char *fw_user, struct agent_run_as *out,
                      bool *picked, char *err, size_t errlen)
{
    *picked = false;
    if (!switch_user)
        return 0;
    const char *name = cmd_user != NULL && cmd_user[0] != '\0' ? cmd_user
                       : fw_user != NULL && fw_user[0] != '\0' ? fw_user
                                                               : NULL;
    if (name == NULL)
        return 0;
    if (agent_run_as_lookup(name, out, err, errlen) != 0)
        return -1;
    *picked = true;
    return 0;
}

/* nftw has no user argument: the user being given the tree. The caller is
 * a single-threaded forked child. */
static const struct agent_run_as *chown_to;

static int chown_one(const char *path, const struct stat *st, int flag,
                     struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return lchown(path, chown_to->uid, chown_to->gid) == 0 ? 0 : -1;
}

int agent_run_as_chown_tree(const char *path, const struct agent_run_as *u)
{
    if (geteuid() != 0 && geteuid() == u->uid)
        return 0; /* an unprivileged agent running a task as itself */
    chown_to = u;
    int rc = nftw(path, chown_one, 32, FTW_PHYS);
    chown_to = NULL;
    return rc == 0 ? 0 : -1;
}

int agent_run_as_become(const struct agent_run_as *u)
{
    if (geteuid() != 0 && geteuid() == u->uid && getegid() == u->gid)
        return 0; /* already that user: setgroups would need privilege */
    if (setgroups(u->ngroups, u->groups) != 0)
        return -1;
    if (setgid(u->gid) != 0)
        return -1;
    if (setuid(u->uid) != 0)
        return -1;
    return 0;
}
