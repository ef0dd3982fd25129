/*
 * The per-task supervisor: the process between the agent and a task.
 *
 * agent_supervisor_start forks a supervisor, which
 *   1. restores default signal handling, calls setsid() (a session of its
 *      own, so it does not die with the agent's terminal or process group:
 *      tasks are meant to outlive an agent restart), closes every inherited
 *      descriptor but its report pipe, and enters the sandbox;
 *   2. records its pid in <sandbox>/.offerd.supervisor.pid; fetches the
 *      command's URIs into the sandbox (fetcher.h) and, when the task runs
 *      as another user, gives it the sandbox tree (run_as.h); a failure
 *      there is written to <sandbox>/.offerd.launch_error and reported as
 *      "E <errno>";
 *   3. forks the task, which joins its cgroups (isolator.h) if any, calls
 *      setsid() too (its process group id is
 *      its pid, so the agent kills the task's whole group), takes stdout and
 *      stderr from the sandbox files, becomes the task's user (if any) and
 *      execs the command;
 *   4. on a successful exec records the task pid in <sandbox>/.offerd.task.pid
 *      and reports "R <pid>\n" on the pipe; if the exec (or the set-up
 *      before it) fails, reports "E <errno>\n";
 *   5. waits for the task, SIGKILLs whatever is left of its process group
 *      (as Mesos destroys a container when its executor exits), writes the
 *      task's wait status to <sandbox>/.offerd.exit_status atomically
 *      (write, fsync, rename) and exits 0.
 * Every file is written atomically, so a reader never sees half of one.
 *
 * The agent learns of the exit when the supervisor (its child) exits: it
 * reaps it on SIGCHLD and reads the status file. A supervisor whose agent
 * died keeps running (reparented) and leaves the status file for the next
 * agent to find: that agent finds the supervisor through its pid file
 * (agent_supervisor_probe), watches it until it exits and then reads the
 * status file the same way.
 */
#ifndef OFFERD_AGENT_SUPERVISOR_H
#define OFFERD_AGENT_SUPERVISOR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* File names inside a sandbox. */
#define AGENT_SUP_PID_FILE      ".offerd.supervisor.pid"
#define AGENT_TASK_PID_FILE     ".offerd.task.pid"
#define AGENT_EXIT_STATUS_FILE  ".offerd.exit_status"
#define AGENT_LAUNCH_ERROR_FILE ".offerd.launch_error"

struct agent_run_as;
struct agent_fetch_plan;

/* What to run. Every pointer is borrowed for the call. */
struct agent_launch {
    const char *sandbox; /* absolute path of the run directory */
    const char *file;    /* program: "/bin/sh", or the argv form's value
                            (looked up in PATH when it has no '/') */
    char *const *argv;   /* NULL-terminated */
    char *const *envp;   /* the task's whole environment, NULL-terminated */
    const char *const *cgroup_procs; /* cgroup.procs files the task joins
                                        (writes "0" to) before it execs;
                                        failing to is a launch failure */
    size_t ncgroup_procs;
    const struct agent_run_as *run_as;    /* NULL: the agent's own user */
    const struct agent_fetch_plan *fetch; /* NULL: nothing to fetch */
};

/* Fork the supervisor as described above. Returns 0 with its pid in
 * *sup_pid and the read end of its report pipe in *report_fd (non-blocking,
 * close-on-exec; the caller owns it), or -1 with a reason in err (nothing
 * left behind). */
int agent_supervisor_start(const struct agent_launch *l, pid_t *sup_pid,
                           int *report_fd, char *err, size_t errlen);

/* What a report line said. */
struct agent_sup_report {
    bool running;   /* "R": the task runs as pid */
    pid_t pid;      /* running only */
    int exec_errno; /* !running: why the launch failed */
};

/* Parse one report line (without its newline). Returns 0, or -1 when it is
 * neither form. */
int agent_supervisor_parse_report(const char *line,
                                  struct agent_sup_report *out);

/* Read the one-line reason a launch failed for from
 * <sandbox>/.offerd.launch_error into buf (NUL-terminated, truncated to
 * len). Returns 1, 0 when there is none, -1 when unreadable. */
int agent_supervisor_read_launch_error(const char *sandbox, char *buf,
                                       size_t len);

/* Read the task's wait status from <sandbox>/.offerd.exit_status. Returns 1
 * and *wait_status, 0 when the file is absent, -1 when unreadable or
 * malformed. */
int agent_supervisor_read_exit(const char *sandbox, int *wait_status);

/* Read a pid file (AGENT_SUP_PID_FILE or AGENT_TASK_PID_FILE) of a sandbox.
 * Returns 1 and *pid, 0 when absent, -1 when malformed. */
int agent_supervisor_read_pid(const char *sandbox, const char *file,
                              pid_t *pid);

/* True when pid is a live process (not a zombie) that leads its own
 * session (its session id is its pid, as a supervisor's and a task's are,
 * both having called setsid) and whose working directory is sandbox (an
 * absolute path without symlinks). A restarted agent uses it to tell the
 * supervisor or task it launched from an unrelated process that reuses a
 * recorded pid. Reads /proc/<pid>/stat and /proc/<pid>/cwd; false when
 * either cannot be read. */
bool agent_proc_runs_in(pid_t pid, const char *sandbox);

/* What a restarted agent finds of a task's supervisor. */
struct agent_sup_probe {
    bool sup_alive;  /* the supervisor of the sandbox still runs */
    pid_t sup_pid;   /* from AGENT_SUP_PID_FILE, 0 when absent or malformed */
    pid_t task_pid;  /* from AGENT_TASK_PID_FILE (the exec succeeded), 0
                        when absent or malformed */
    bool task_alive; /* task_pid still runs in the sandbox (with or without
                        its supervisor) */
};

/* Look at a sandbox's pid files and the processes they name (checked with
 * agent_proc_runs_in). Fills *out; never fails. */
void agent_supervisor_probe(const char *sandbox, struct agent_sup_probe *out);

#endif
