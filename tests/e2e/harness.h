/*
 * End-to-end test harness: start the real offerd binaries on loopback ports
 * chosen at run time, each in its own temporary work_dir, talk HTTP/1.1 to
 * them over plain sockets, and stop and reap them on every path.
 *
 * Process rules:
 *  - A test binary ends with E2E_CHECK_MAIN(suite_fn) (not
 *    OFFERD_CHECK_MAIN): it makes one run directory (mkdtemp under /tmp),
 *    runs the suite, and removes the directory at the end.
 *  - Each daemon runs in its own directory inside it, holding its work_dir,
 *    its pid and its log file (stdout and stderr); e2e_proc_cleanup removes
 *    it.
 *  - A daemon never outlives its test: it is started with
 *    prctl(PR_SET_PDEATHSIG, SIGKILL), so it dies with the test process even
 *    when an assertion ends the test part-way (Check's fork mode _exits the
 *    test child, skipping teardown and atexit handlers). Whatever a failed
 *    test left in the run directory is killed if still alive, its log tail
 *    printed to stderr, and removed when the suite ends.
 *  - Readiness is GET /health answering 200 (polled), never a sleep.
 *
 * Set OFFERD_E2E_KEEP=1 in the environment to keep the run directory for
 * inspection (its path is printed).
 *
 * Every function with a timeout bounds its total time by it.
 */
#ifndef OFFERD_TESTS_E2E_HARNESS_H
#define OFFERD_TESTS_E2E_HARNESS_H

#include <check.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/task_state.h"

/* Path of the master binary (set by tests/e2e/CMakeLists.txt). */
#ifndef OFFERD_BIN
#define OFFERD_BIN "offerd"
#endif

/* A daemon started by the harness. */
struct e2e_proc {
    pid_t pid;          /* 0 once reaped */
    int exit_status;    /* wait status once reaped (see <sys/wait.h>) */
    uint16_t port;      /* port passed with --port */
    char dir[256];      /* temporary directory of this process */
    char work_dir[300]; /* dir/work, passed with --work_dir */
    char log_path[300]; /* dir/log: its stdout and stderr */
};

/* Run suite_fn's suite as described above; returns main's exit code. */
int e2e_main(Suite *(*suite_fn)(void));

#define E2E_CHECK_MAIN(suite_fn)                                               \
    int main(void)                                                             \
    {                                                                          \
        return e2e_main(suite_fn);                                             \
    }

/* A binary of one test case: the suite suite_name (a string), whose one
 * case, case_name, runs test with a limit of timeout_secs, run by
 * E2E_CHECK_MAIN. */
#define E2E_ONE_TEST_MAIN(suite_name, case_name, test, timeout_secs)           \
    static Suite *e2e_one_test_suite(void)                                     \
    {                                                                          \
        Suite *s = suite_create(suite_name);                                   \
        TCase *tc = tcase_create(case_name);                                   \
        tcase_set_timeout(tc, timeout_secs);                                   \
        tcase_add_test(tc, test);                                              \
        suite_add_tcase(s, tc);                                                \
        return s;                                                              \
    }                                                                          \
    E2E_CHECK_MAIN(e2e_one_test_suite)

/* Start bin with args (NULL-terminated, argv[0] excluded) in a fresh
 * temporary directory, stdout and stderr to its log, without waiting for
 * readiness. Returns 0, or -1 (with a message on stderr). */
int e2e_spawn(struct e2e_proc *p, const char *bin, const char *const *args);

/* Start the master: OFFERD_BIN with --ip=127.0.0.1, a free --port and
 * --work_dir in its temporary directory, then extra_args (may be NULL), and
 * wait until GET /health answers 200 (with --zk=: and until it leads or its
 * /state names the leader). If the daemon exits early (e.g. the
 * port was taken meanwhile) it is retried on another port, a few times.
 * Returns 0, or -1 with the log printed to stderr. */
int e2e_start_master(struct e2e_proc *p, const char *const *extra_args);

/* Start the master again after it stopped (e2e_proc_stop), in the same
 * directory, work_dir and port, with extra_args; wait until healthy.
 * Returns 0, or -1 with the log printed. */
int e2e_restart_master(struct e2e_proc *p, const char *const *extra_args);

/* Path of the agent binary (set by tests/e2e/CMakeLists.txt). */
#ifndef OFFERD_AGENT_BIN
#define OFFERD_AGENT_BIN "offerd-agent"
#endif

/* Start an agent: OFFERD_AGENT_BIN with --master=127.0.0.1:master_port
 * (unless extra_args give --master),
 * --ip=127.0.0.1, a free --port, --work_dir in its temporary directory,
 * fast registration retries and --switch_user=false (unless extra_args
 * give --switch_user), then extra_args (may be
 * NULL; a later flag wins, so --resources etc. may be overridden), and wait
 * until its GET /health answers 200. Registration with the master is not
 * awaited (see e2e_wait_agents). Returns 0, or -1 with the log printed. */
int e2e_start_agent(struct e2e_proc *p, uint16_t master_port,
                    const char *const *extra_args);

/* Start an agent again after it stopped (e2e_proc_stop with any signal,
 * e.g. SIGKILL as a crash), in the same directory, work_dir and port, with
 * e2e_start_agent's flags and extra_args, and wait until healthy (not until
 * registered). The tasks it left run on under its work_dir for the new
 * agent to recover. Returns 0, or -1 with the log printed. */
int e2e_restart_agent(struct e2e_proc *p, uint16_t master_port,
                      const char *const *extra_args);

/* Poll the master's /metrics/snapshot until master/slaves_active is n or
 * timeout_ms pass. Returns 0, or -1. */
int e2e_wait_agents(const struct e2e_proc *master, int n, int timeout_ms);

/* A small cluster for a test case: start the master with margs, then n
 * agents, agent i with aargs[i] (each list NULL-terminated, as for
 * e2e_start_agent), wait up to 20 s until all are active, and return a new
 * event base for the case's frameworks. Fails the test on any error. */
struct event_base *e2e_cluster_start(struct e2e_proc *master,
                                     const char *const *margs,
                                     struct e2e_proc *agents, int n,
                                     const char *const *const *aargs);

/* Undo e2e_cluster_start: free *base (when not NULL; set to NULL), clean
 * up the n agents and then the master (e2e_proc_cleanup). */
void e2e_cluster_stop(struct e2e_proc *master, struct e2e_proc *agents, int n,
                      struct event_base **base);

/* Stop the agent, then the master, each with SIGTERM and up to 10 s,
 * asserting both exit 0, and clean both up: the end of a case that ran
 * one of each. */
void e2e_stop_master_agent(struct e2e_proc *master, struct e2e_proc *agent);

/* SIGKILL every process whose working directory lies under dir (the tasks
 * and supervisors an agent started in its sandboxes outlive a killed
 * agent). Returns how many were signalled. */
int e2e_kill_under(const char *dir);

/* Wait up to timeout_ms until no process has its working directory under
 * dir (a killed task's supervisor exits a moment after its update).
 * Returns true when none is left. */
bool e2e_wait_none_under(const char *dir, int timeout_ms);

/* Poll GET /health every 50 ms until 200 or timeout_ms pass, or the process
 * exits. Returns 0 when healthy, -1 otherwise. */
int e2e_wait_healthy(struct e2e_proc *p, int timeout_ms);

/* True while the process has not exited (reaps it if it has). */
int e2e_proc_running(struct e2e_proc *p);

/* Send sig, wait up to timeout_ms for the process to exit, then SIGKILL it
 * and reap. Returns its exit code (0-255) if it exited by itself, or -1 if it
 * was killed by a signal (including the SIGKILL after the timeout). */
int e2e_proc_stop(struct e2e_proc *p, int sig, int timeout_ms);

/* Stop the process if running (SIGKILL), reap it, kill whatever still runs
 * with its working directory under the process's directory (an agent's
 * tasks), and remove the directory. Safe to call twice. */
void e2e_proc_cleanup(struct e2e_proc *p);

/* Write the last max_bytes of the process's log to stderr. */
void e2e_proc_dump_log(const struct e2e_proc *p, size_t max_bytes);

/* Run bin with args to completion (at most timeout_ms, then SIGKILL),
 * capturing stdout and stderr together into out (NUL-terminated,
 * truncated to outlen - 1). Returns the exit code, or -1 if it did not exit
 * normally. */
int e2e_run(const char *bin, const char *const *args, char *out, size_t outlen,
            int timeout_ms);

/* ---- Waiting ----
 *
 * A test never sleeps and then asserts: it polls the condition it is about
 * to assert until it holds or a deadline passes (e2e_poll_until, or
 * e2e_loop_until when an event loop of the test must run meanwhile; the
 * fake master of harness_agent_master.h has hfm_pump_until), then asserts.
 * The one exception is a window that proves an absence ("no further update
 * within 300 ms"): nothing can be awaited instead, so the test holds for
 * the window (e2e_sleep_ms, e2e_loop_for, hfm_pump) and a comment says
 * that this is what the window is for. */

/* Interval between two checks of a polled condition (ms). */
#define E2E_POLL_MS 20

/* Milliseconds on the monotonic clock. */
int64_t e2e_now_ms(void);

/* Sleep ms milliseconds (restarted on EINTR). */
void e2e_sleep_ms(int ms);

/* Check cond(arg) every E2E_POLL_MS until it holds or timeout_ms pass (it
 * is checked once more at the deadline). Returns true if it held. */
bool e2e_poll_until(bool (*cond)(void *arg), void *arg, int timeout_ms);

struct event_base;

/* Like e2e_poll_until, running base between two checks instead of
 * sleeping (a libofferd framework of the test lives on it). */
bool e2e_loop_until(struct event_base *base, bool (*cond)(void *arg), void *arg,
                    int timeout_ms);

/* Run base for ms milliseconds, whatever happens: only for a window that
 * proves an absence, or for a test that feeds work at a pace. */
void e2e_loop_for(struct event_base *base, int ms);

/* How many times needle occurs in the process's log (the whole file). */
int e2e_log_count(const struct e2e_proc *p, const char *needle);

/* Poll the process's log until needle occurs at least count times or
 * timeout_ms pass. Returns true if it did. */
bool e2e_wait_log(const struct e2e_proc *p, const char *needle, int count,
                  int timeout_ms);

/* ---- Reading the daemons' endpoints ---- */

/* GET path on 127.0.0.1:port and parse the body: the JSON (caller
 * json_decref's), or NULL when the request fails, the status is not 200 or
 * the body is not JSON. (harness_api.h's api_get_json asserts instead.) */
json_t *e2e_get_json(uint16_t port, const char *path);

/* A number of the master's /metrics/snapshot, or -1 when it cannot be read
 * (e.g. the master is down). */
double e2e_metric(uint16_t master_port, const char *name);

/* The sandbox directory of task_id's executor in the agent's /state (the
 * command executor's id is the task's), copied into out. Returns false
 * when the agent holds no such executor. Fails the test when /state cannot
 * be read. */
bool e2e_agent_sandbox(uint16_t agent_port, const char *task_id, char *out,
                       size_t outlen);

/* The pid in the file dir/name, or 0 when missing or unreadable. */
pid_t e2e_read_pid_file(const char *dir, const char *name);

/* True while a process with that pid exists (pid > 0). */
bool e2e_pid_alive(pid_t pid);

/* True when dir/name exists. */
bool e2e_file_exists(const char *dir, const char *name);

/* ---- Blocking HTTP/1.1 client ---- */

struct e2e_header {
    char *name;
    char *value;
};

struct e2e_response {
    int status; /* 0 when no valid response arrived */
    struct e2e_header *headers;
    size_t nheaders;
    char *body; /* NUL-terminated (not counted in body_len) */
    size_t body_len;
};

/* Send one request to 127.0.0.1:port ("Connection: close"; Host and
 * Content-Length added) and read the whole response (Content-Length,
 * chunked or until EOF). headers is a NULL-terminated list of "Name: value"
 * strings (may be NULL). A response that arrives while the body is still
 * being sent (e.g. 413) is read and returned. Returns 0 and fills resp
 * (free with e2e_response_free), or -1 on connection failure, timeout or a
 * malformed response. */
int e2e_http(uint16_t port, const char *method, const char *path,
             const char *const *headers, const void *body, size_t body_len,
             int timeout_ms, struct e2e_response *resp);

/* Value of a response header (case-insensitive), or NULL. Borrowed. */
const char *e2e_response_header(const struct e2e_response *r, const char *name);

/* Free what e2e_http filled in. */
void e2e_response_free(struct e2e_response *r);

/* ---- Reading a chunked stream incrementally ---- */

struct e2e_stream {
    int fd;
    struct e2e_response head; /* status and headers (no body) */
    char *buf;                /* bytes read but not yet consumed */
    size_t len, cap;
    int chunked; /* Transfer-Encoding: chunked */
};

/* Send a request and read its status line and headers, leaving the body to
 * e2e_stream_next. Returns 0, or -1 on failure (s is then cleaned up). */
int e2e_stream_open(uint16_t port, const char *method, const char *path,
                    const char *const *headers, const void *body,
                    size_t body_len, int timeout_ms, struct e2e_stream *s);

/* Read the next HTTP chunk (or, for a body that is not chunked, whatever
 * bytes arrive next). Returns 1 with a malloc'd NUL-terminated copy in *data
 * and its length in *len (both OUT; caller frees), 0 at the end of the
 * stream (terminating chunk or EOF), -1 on timeout or error. */
int e2e_stream_next(struct e2e_stream *s, int timeout_ms, char **data,
                    size_t *len);

/* Close the connection and free the stream's buffers. */
void e2e_stream_close(struct e2e_stream *s);

#endif
