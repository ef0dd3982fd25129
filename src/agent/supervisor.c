/*
 * The per-task supervisor process (see supervisor.h for the protocol).
 *
 * Everything after fork() runs in a copy of the single-threaded agent: it
 * makes only plain system calls, formats numbers with snprintf into stack
 * buffers, and ends with _exit, so that neither the agent's atexit
 * handlers nor its sanitizer leak check run in the copy.
 */
#include "agent/supervisor.h"

#include "agent/fetcher.h"
#include "agent/run_as.h"
#include "common/fs.h"
#include "common/mem.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The supervisor's end of the report pipe, after re-numbering. */
#define REPORT_FD 3

static void write_all(int fd, const char *s, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, s, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return; /* the agent is gone: nobody to tell */
        }
        s += w;
        len -= (size_t)w;
    }
}

static void write_number_file(const char *name, long value)
{
    char buf[32];
    int n = snprintf(buf, sizeof(buf), "%ld\n", value);
    if (n > 0)
        (void)fs_write_atomic(name, buf, (size_t)n);
}

static void report(const char *tag, long value)
{
    char buf[48];
    int n = snprintf(buf, sizeof(buf), "%s %ld\n", tag, value);
    if (n > 0)
        write_all(REPORT_FD, buf, (size_t)n);
}

/* In the task: set up and exec; on failure send errno on err_fd. */
static void __attribute__((noreturn))
run_task(const struct agent_launch *l, int err_fd)
{
    int e = 0;
    /* Inside the task's cgroups before anything of it runs. */
    for (size_t i = 0; i < l->ncgroup_procs; i++) {
        int fd = open(l->cgroup_procs[i], O_WRONLY | O_CLOEXEC);
        if (fd < 0)
            goto fail;
        ssize_t w = write(fd, "0", 1);
        int we = errno;
        close(fd);
        errno = we;
        if (w != 1)
            goto fail;
    }
    if (setsid() < 0)
        goto fail;
    int in = open("/dev/null", O_RDONLY);
    int out = open("stdout", O_WRONLY | O_APPEND | O_CREAT, 0644);
    int er = open("stderr", O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (in < 0 || out < 0 || er < 0)
        goto fail;
    if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(er, 2) < 0)
        goto fail;
    if (in > 2)
        close(in);
    if (out > 2)
        close(out);
    if (er > 2)
        close(er);
    if (l->run_as != NULL && agent_run_as_become(l->run_as) != 0)
        goto fail;
    execvpe(l->file, l->argv, l->envp);
fail:
    e = errno;
    write_all(err_fd, (const char *)&e, sizeof(e));
    _exit(127);
}

/* Record why the launch failed, report it and end. */
static void __attribute__((noreturn)) launch_error(const char *why, int e)
{
    size_t n = strlen(why);
    (void)fs_write_atomic(AGENT_LAUNCH_ERROR_FILE, why, n);
    report("E", e != 0 ? e : EIO);
    _exit(1);
}

/* Fetch the URIs, then give the sandbox to the task's user. The fetcher's
 * log goes to the sandbox's stderr, as Mesos's does. */
static void prepare_sandbox(const struct agent_launch *l)
{
    char why[1536];
    if (l->fetch != NULL) {
        int logfd =
            open("stderr", O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        int rc = agent_fetch_run(l->fetch, l->sandbox, logfd, why, sizeof(why));
        if (logfd >= 0)
            close(logfd);
        if (rc != 0)
            launch_error(why, EIO);
    }
    if (l->run_as != NULL && agent_run_as_chown_tree(l->sandbox, l->run_as)) {
        int e = errno;
        snprintf(why, sizeof(why),
                 "Failed to chown the sandbox '%s' to user '%s': %s",
                 l->sandbox, l->run_as->name, strerror(e));
        launch_error(why, e);
    }
}

static void __attribute__((noreturn)) supervise(const struct agent_launch *l)
{
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            signal(sig, SIG_DFL);
    /* Writes to a vanished agent must not kill the supervisor. */
    signal(SIGPIPE, SIG_IGN);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);

    (void)setsid();
    close_range(REPORT_FD + 1, ~0U, 0);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) {
        dup2(devnull, 0);
        if (devnull != 0)
            close(devnull);
    }
    if (chdir(l->sandbox) != 0) {
        report("E", errno);
        _exit(1);
    }
    write_number_file(AGENT_SUP_PID_FILE, (long)getpid());
    prepare_sandbox(l);

    int errpipe[2];
    if (pipe2(errpipe, O_CLOEXEC) != 0) {
        report("E", errno);
        _exit(1);
    }
    pid_t task = fork();
    if (task < 0) {
        report("E", errno);
        _exit(1);
    }
    if (task == 0) {
        close(errpipe[0]);
        run_task(l, errpipe[1]);
    }
    close(errpipe[1]);
    int e = 0;
    ssize_t r;
    do {
        r = read(errpipe[0], &e, sizeof(e));
    } while (r < 0 && errno == EINTR);
    close(errpipe[0]);
    if (r == (ssize_t)sizeof(e)) {
        report("E", e);
    } else {
        write_number_file(AGENT_TASK_PID_FILE, (long)task);
        report("R", (long)task);
    }

    int status = 0;
    while (waitpid(task, &status, 0) < 0) {
        if (errno != EINTR) {
            status = 0;
            break;
        }
    }
    /* Leftovers of the task's group (background children) go with it. */
    kill(-task, SIGKILL);
    write_number_file(AGENT_EXIT_STATUS_FILE, (long)status);
    _exit(0);
}

int agent_supervisor_start(const struct agent_launch *l, pid_t *sup_pid,
                           int *report_fd, char *err, size_t errlen)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        close(p[0]);
        /* Put the report pipe on REPORT_FD, blocking, close-on-exec (so the
         * task does not inherit it). */
        int fd = p[1];
        if (fd != REPORT_FD) {
            if (dup3(fd, REPORT_FD, O_CLOEXEC) < 0)
                _exit(1);
            close(fd);
        }
        int fl = fcntl(REPORT_FD, F_GETFL);
        if (fl >= 0)
            fcntl(REPORT_FD, F_SETFL, fl & ~O_NONBLOCK);
        supervise(l);
    }
    close(p[1]);
    *sup_pid = pid;
    *report_fd = p[0];
    return 0;
}

int agent_supervisor_parse_report(const char *line,
                                  struct agent_sup_report *out)
{
    char tag;
    long v;
    char extra;
    if (sscanf(line, "%c %ld%c", &tag, &v, &extra) != 2)
        return -1;
    memset(out, 0, sizeof(*out));
    if (tag == 'R' && v > 0 && v <= INT_MAX) {
        out->running = true;
        out->pid = (pid_t)v;
        return 0;
    }
    if (tag == 'E' && v >= 0 && v <= INT_MAX) {
        out->exec_errno = (int)v;
        return 0;
    }
    return -1;
}

static int read_long(const char *sandbox, const char *file, long *out)
{
    char *path = xasprintf("%s/%s", sandbox, file);
    uint8_t *data = NULL;
    size_t len = 0;
    int rc = fs_read(path, 64, &data, &len);
    free(path);
    if (rc != 1)
        return rc;
    char *end;
    errno = 0;
    long v = strtol((const char *)data, &end, 10);
    if (end == (char *)data || errno != 0 || (*end != '\n' && *end != '\0'))
        rc = -1;
    else
        *out = v;
    free(data);
    return rc;
}

int agent_supervisor_read_launch_error(const char *sandbox, char *buf,
                                       size_t len)
{
    char *path = xasprintf("%s/%s", sandbox, AGENT_LAUNCH_ERROR_FILE);
    uint8_t *data = NULL;
    size_t n = 0;
    int rc = fs_read(path, 4096, &data, &n);
    free(path);
    if (rc == 1 && len > 0) {
        size_t k = n < len - 1 ? n : len - 1;
        memcpy(buf, data, k);
        buf[k] = '\0';
    }
    free(data);
    return rc;
}

int agent_supervisor_read_exit(const char *sandbox, int *wait_status)
{
    long v = 0;
    int rc = read_long(sandbox, AGENT_EXIT_STATUS_FILE, &v);
    if (rc == 1) {
        if (v < INT_MIN || v > INT_MAX)
            return -1;
        *wait_status = (int)v;
    }
    return rc;
}

int agent_supervisor_read_pid(const char *sandbox, const char *file, pid_t *pid)
{
    long v = 0;
    int rc = read_long(sandbox, file, &v);
    if (rc == 1) {
        if (v <= 0 || v > INT_MAX)
            return -1;
        *pid = (pid_t)v;
    }
    return rc;
}

/* State letter and session id of pid from /proc/<pid>/stat. The command
 * name (field 2) may hold spaces and parentheses: fields are read after
 * its last ')'. Returns 0, or -1 when unreadable. */
static int proc_stat(pid_t pid, char *state, long *sid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    uint8_t *data = NULL;
    size_t len = 0;
    if (fs_read(path, 4096, &data, &len) != 1) {
        free(data);
        return -1;
    }
    int rc = -1;
    char *close_paren = strrchr((char *)data, ')');
    char st;
    long ppid, pgrp, session;
    if (close_paren != NULL && sscanf(close_paren + 1, " %c %ld %ld %ld", &st,
                                      &ppid, &pgrp, &session) == 4) {
        *state = st;
        *sid = session;
        rc = 0;
    }
    free(data);
    return rc;
}

bool agent_proc_runs_in(pid_t pid, const char *sandbox)
{
    if (pid <= 0)
        return false;
    char state;
    long sid;
    if (proc_stat(pid, &state, &sid) != 0 || state == 'Z' || state == 'X' ||
        sid != (long)pid)
        return false;
    char link[64], cwd[PATH_MAX];
    snprintf(link, sizeof(link), "/proc/%d/cwd", (int)pid);
    ssize_t n = readlink(link, cwd, sizeof(cwd) - 1);
    if (n <= 0)
        return false;
    cwd[n] = '\0';
    return strcmp(cwd, sandbox) == 0;
}

void agent_supervisor_probe(const char *sandbox, struct agent_sup_probe *out)
{
    memset(out, 0, sizeof(*out));
    pid_t pid;
    if (agent_supervisor_read_pid(sandbox, AGENT_SUP_PID_FILE, &pid) == 1) {
        out->sup_pid = pid;
        out->sup_alive = agent_proc_runs_in(pid, sandbox);
    }
    if (agent_supervisor_read_pid(sandbox, AGENT_TASK_PID_FILE, &pid) == 1) {
        out->task_pid = pid;
        out->task_alive = agent_proc_runs_in(pid, sandbox);
    }
}
