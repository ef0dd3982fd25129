/*
 * The isolation flags (see isolation_flags.h).
 */
#include "agent/isolation_flags.h"

#include <stdio.h>
#include <string.h>

void agent_iso_flag_defs(struct agent_iso_flags *f, struct flag_def *out)
{
    memset(f, 0, sizeof(*f));
    const struct flag_def defs[AGENT_ISO_FLAGS_ROWS] = {
        {"isolation", FLAG_STRING, NULL,
         "How tasks are held to their resources: cgroups = each task in its "
         "own cgroup (v1 or v2, detected) with a memory limit, cpu "
         "shares/weight and, as asked, a CFS quota and a pids limit; posix "
         "= nothing enforced (usage read from /proc). Mesos's list form "
         "(\"cgroups/cpu,cgroups/mem\", \"posix/cpu,posix/mem\") is "
         "accepted. Defaults to cgroups when the agent can create cgroups, "
         "else posix (docs/isolation.md).",
         &f->isolation},
        {"cgroups_root", FLAG_STRING, "offerd",
         "Name of the cgroup, in each hierarchy, under which the tasks' "
         "cgroups are made (<root>/<container id>).",
         &f->cgroups_root},
        {"cgroups_enable_cfs", FLAG_BOOL, "false",
         "Cap each task's CPU time at its cpus with a CFS quota (cpu.max or "
         "cpu.cfs_quota_us, period 100ms), not only weigh it.",
         &f->cgroups_enable_cfs},
        {"cgroups_limit_swap", FLAG_BOOL, "false",
         "Let tasks swap, up to as much again as their memory limit. By "
         "default tasks get no swap at all.",
         &f->cgroups_limit_swap},
        {"cgroups_limit_pids", FLAG_INT, "0",
         "offerd's own: the most processes and threads a task may have at "
         "once (pids.max); 0 means no limit. Holds a fork bomb inside its "
         "task.",
         &f->cgroups_limit_pids},
        {"enforce_container_disk_quota", FLAG_BOOL, "false",
         "Kill a task whose sandbox holds more than its disk resource "
         "(measured as du does, every --container_disk_watch_interval), "
         "reported TASK_FAILED with REASON_CONTAINER_LIMITATION_DISK.",
         &f->enforce_container_disk_quota},
        {"container_disk_watch_interval", FLAG_DURATION, "15secs",
         "How often each sandbox's disk usage is measured.",
         &f->container_disk_watch_interval_ns},
    };
    memcpy(out, defs, sizeof(defs));
}

static bool has_prefix(const char *s, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);
    return len > n && strncmp(s, prefix, n) == 0;
}

int agent_iso_parse_isolation(const char *text, enum agent_isolation *out,
                              char *err, size_t errlen)
{
    if (strcmp(text, "posix") == 0) {
        *out = AGENT_ISOLATION_POSIX;
        return 0;
    }
    if (strcmp(text, "cgroups") == 0) {
        *out = AGENT_ISOLATION_CGROUPS;
        return 0;
    }
    bool cgroups = false, any = false;
    const char *p = text;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        if (has_prefix(p, len, "cgroups/")) {
            cgroups = true;
        } else if (!has_prefix(p, len, "posix/") &&
                   !has_prefix(p, len, "disk/") &&
                   !has_prefix(p, len, "filesystem/")) {
            snprintf(err, errlen,
                     "--isolation: '%.*s' is not posix, cgroups or an "
                     "isolator (cgroups/..., posix/..., disk/..., "
                     "filesystem/...)",
                     (int)(len > 64 ? 64 : len), p);
            return -1;
        }
        any = true;
        if (end == NULL)
            break;
        p = end + 1;
    }
    if (!any) {
        snprintf(err, errlen, "--isolation: empty");
        return -1;
    }
    *out = cgroups ? AGENT_ISOLATION_CGROUPS : AGENT_ISOLATION_POSIX;
    return 0;
}

int agent_iso_flags_check(struct agent_iso_flags *f, char *err, size_t errlen)
{
    f->mode = AGENT_ISOLATION_AUTO;
    if (f->isolation != NULL &&
        agent_iso_parse_isolation(f->isolation, &f->mode, err, errlen) != 0)
        return -1;
    const char *r = f->cgroups_root;
    if (r == NULL || r[0] == '\0' || r[0] == '/' || strstr(r, "..") != NULL ||
        strlen(r) >= 128) {
        snprintf(err, errlen,
                 "--cgroups_root: '%s' must be a relative path without '..' "
                 "(under 128 characters)",
                 r != NULL ? r : "");
        return -1;
    }
    if (f->cgroups_limit_pids < 0) {
        snprintf(err, errlen, "--cgroups_limit_pids: must be 0 or more");
        return -1;
    }
    if (f->container_disk_watch_interval_ns <= 0) {
        snprintf(err, errlen,
                 "--container_disk_watch_interval: must be above 0");
        return -1;
    }
    return 0;
}
