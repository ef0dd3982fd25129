/*
 * Removing an agent's leftover cgroups (see harness_cgroups.h).
 */
#include "harness_cgroups.h"

#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Kill what dir/cgroup.procs lists, then rmdir dir; retried while busy. */
static void kill_and_remove(const char *dir)
{
    for (int i = 0; i < 50; i++) {
        char p[PATH_MAX + 32];
        snprintf(p, sizeof(p), "%s/cgroup.procs", dir);
        FILE *f = fopen(p, "r");
        int pid;
        while (f != NULL && fscanf(f, "%d", &pid) == 1)
            if (pid > 0)
                kill(pid, SIGKILL);
        if (f != NULL)
            fclose(f);
        if (rmdir(dir) == 0 || errno == ENOENT)
            return;
        e2e_sleep_ms(20);
    }
}

/* Remove <mnt>/<any root>/<id>. */
static void remove_in_mount(const char *mnt, const char *id)
{
    DIR *d = opendir(mnt);
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || e->d_type != DT_DIR)
            continue;
        char dir[PATH_MAX];
        int n = snprintf(dir, sizeof(dir), "%s/%s/%s", mnt, e->d_name, id);
        struct stat st;
        if (n > 0 && (size_t)n < sizeof(dir) && stat(dir, &st) == 0)
            kill_and_remove(dir);
    }
    closedir(d);
}

void e2e_remove_agent_cgroups(const char *work_dir)
{
    char mdir[PATH_MAX];
    snprintf(mdir, sizeof(mdir), "%s/meta/cgroups", work_dir);
    DIR *d = opendir(mdir);
    if (d == NULL)
        return;
    FILE *mi = fopen("/proc/self/mountinfo", "r");
    char mounts[16][256];
    int nm = 0;
    char line[1024];
    while (mi != NULL && nm < 16 && fgets(line, sizeof(line), mi) != NULL) {
        const char *dash = strstr(line, " - ");
        char mnt[256], fstype[32];
        if (dash != NULL && sscanf(line, "%*s %*s %*s %*s %255s", mnt) == 1 &&
            sscanf(dash + 3, "%31s", fstype) == 1 &&
            (strcmp(fstype, "cgroup") == 0 || strcmp(fstype, "cgroup2") == 0))
            snprintf(mounts[nm++], sizeof(mounts[0]), "%s", mnt);
    }
    if (mi != NULL)
        fclose(mi);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        for (int i = 0; i < nm; i++)
            remove_in_mount(mounts[i], e->d_name);
    }
    closedir(d);
}
