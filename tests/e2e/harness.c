/*
 * End-to-end harness: processes (spawn, readiness, stop, cleanup on every
 * path) and a small blocking HTTP/1.1 client over plain sockets.
 */
#include "harness.h"
#include "harness_cgroups.h"
#include "harness_tls.h"

#include "common/netport.h"
#include "mesos/v1/mesos.pb-c.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- Time and waiting ---- */

int64_t e2e_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void e2e_sleep_ms(int ms)
{
    if (ms <= 0)
        return;
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* The next wait before checking again: E2E_POLL_MS, or what is left until
 * the deadline; 0 once it has passed. */
static int poll_step(int64_t deadline)
{
    int64_t left = deadline - e2e_now_ms();
    if (left <= 0)
        return 0;
    return left < E2E_POLL_MS ? (int)left : E2E_POLL_MS;
}

bool e2e_poll_until(bool (*cond)(void *arg), void *arg, int timeout_ms)
{
    int64_t deadline = e2e_now_ms() + timeout_ms;
    for (;;) {
        if (cond(arg))
            return true;
        int step = poll_step(deadline);
        if (step == 0)
            return false;
        e2e_sleep_ms(step);
    }
}

static void loop_run(struct event_base *base, int ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    event_base_loopexit(base, &tv);
    event_base_dispatch(base);
}

bool e2e_loop_until(struct event_base *base, bool (*cond)(void *arg), void *arg,
                    int timeout_ms)
{
    int64_t deadline = e2e_now_ms() + timeout_ms;
    for (;;) {
        if (cond(arg))
            return true;
        int step = poll_step(deadline);
        if (step == 0)
            return false;
        loop_run(base, step);
    }
}

void e2e_loop_for(struct event_base *base, int ms)
{
    int64_t deadline = e2e_now_ms() + ms;
    int step;
    while ((step = poll_step(deadline)) > 0)
        loop_run(base, step);
}

/* ---- The run directory: one per test binary ---- */

/* Every process directory of this run lives under run_dir. A test that
 * fails exits part-way (Check's fork mode _exits the test child, skipping
 * atexit handlers and the fixture teardown), so whatever is left under
 * run_dir when the suite ends belongs to a failed test: e2e_main prints its
 * log and removes it. */
static char run_dir[64];

static int keep_dirs(void)
{
    const char *k = getenv("OFFERD_E2E_KEEP");
    return k != NULL && strcmp(k, "1") == 0;
}

static void remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (d != NULL) {
            struct dirent *de;
            while ((de = readdir(d)) != NULL) {
                if (strcmp(de->d_name, ".") == 0 ||
                    strcmp(de->d_name, "..") == 0)
                    continue;
                char sub[4096];
                int n = snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
                if (n > 0 && (size_t)n < sizeof(sub))
                    remove_tree(sub);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

static void dump_log_file(const char *log_path, pid_t pid, size_t max_bytes)
{
    FILE *f = fopen(log_path, "rb");
    if (f == NULL)
        return;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    long from = size > (long)max_bytes ? size - (long)max_bytes : 0;
    fseek(f, from, SEEK_SET);
    fprintf(stderr, "----- log of pid %d (%s)%s -----\n", (int)pid, log_path,
            from > 0 ? ", tail" : "");
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        fwrite(buf, 1, n, stderr);
    fprintf(stderr, "----- end of log -----\n");
    fclose(f);
}

/* Kill, report and remove what failed tests left under run_dir. */
static void reap_leftovers(void)
{
    DIR *d = opendir(run_dir);
    if (d == NULL)
        return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' || strcmp(de->d_name, "tls") == 0)
            continue; /* "tls": harness_tls.h's certificates */
        char sub[512], path[600];
        snprintf(sub, sizeof(sub), "%s/%s", run_dir, de->d_name);
        int pid = 0;
        snprintf(path, sizeof(path), "%s/pid", sub);
        FILE *f = fopen(path, "r");
        if (f != NULL) {
            if (fscanf(f, "%d", &pid) != 1)
                pid = 0;
            fclose(f);
        }
        /* Normally already dead (PR_SET_PDEATHSIG); with CK_FORK=no the
         * runner itself is the parent. Only our own children are reaped. */
        if (pid > 0 && waitpid(pid, NULL, WNOHANG) == 0) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
        }
        fprintf(stderr, "harness: %s was left by a failed test\n", sub);
        snprintf(path, sizeof(path), "%s/log", sub);
        dump_log_file(path, pid, 8192);
    }
    closedir(d);
}

int e2e_main(Suite *(*suite_fn)(void))
{
    snprintf(run_dir, sizeof(run_dir), "/tmp/offerd-e2e-XXXXXX");
    if (mkdtemp(run_dir) == NULL) {
        perror("mkdtemp");
        return EXIT_FAILURE;
    }
    if (e2e_tls_setup(run_dir) != 0)
        return EXIT_FAILURE;
    SRunner *sr = srunner_create(suite_fn());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    reap_leftovers();
    /* Tasks and supervisors of agents a failed test left behind. */
    if (e2e_kill_under(run_dir) > 0)
        fprintf(stderr, "harness: killed processes left under %s\n", run_dir);
    if (keep_dirs())
        fprintf(stderr, "harness: kept %s\n", run_dir);
    else
        remove_tree(run_dir);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* ---- Processes ---- */

/* Fork and exec bin with argv; the child's stdout and stderr go to out_fd.
 * Returns the pid or -1. */
static pid_t fork_exec(const char *bin, char *const *argv, int out_fd,
                       const char *cwd)
{
    pid_t parent = getpid();
    /* Block signals across fork so none reaches the child before it has
     * dropped the test's handlers (see below). */
    sigset_t all, saved;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &saved);
    pid_t pid = fork();
    if (pid != 0)
        sigprocmask(SIG_SETMASK, &saved, NULL);
    if (pid < 0) {
        perror("fork");
        return -1;
    }
    if (pid == 0) {
        /* Until exec, this child runs the test's signal handlers (Check's
         * SIGTERM handler kills the whole test process group): restore the
         * defaults first. */
        for (int sig = 1; sig < NSIG; sig++)
            if (sig != SIGKILL && sig != SIGSTOP)
                signal(sig, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        /* Die with the test process, whatever kills it. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, 0);
        dup2(out_fd, 1);
        dup2(out_fd, 2);
        if (cwd != NULL && chdir(cwd) != 0)
            _exit(127);
        execv(bin, argv);
        fprintf(stderr, "exec %s: %s\n", bin, strerror(errno));
        _exit(127);
    }
    return pid;
}

static int spawn_in_dir(struct e2e_proc *p, const char *bin,
                        const char *const *args);

int e2e_spawn(struct e2e_proc *p, const char *bin, const char *const *args)
{
    memset(p, 0, sizeof(*p));
    snprintf(p->dir, sizeof(p->dir), "%s/proc-XXXXXX",
             run_dir[0] ? run_dir : "/tmp");
    if (mkdtemp(p->dir) == NULL) {
        perror("mkdtemp");
        p->dir[0] = '\0';
        return -1;
    }
    snprintf(p->work_dir, sizeof(p->work_dir), "%s/work", p->dir);
    snprintf(p->log_path, sizeof(p->log_path), "%s/log", p->dir);
    if (keep_dirs())
        fprintf(stderr, "harness: %s\n", p->dir);

    return spawn_in_dir(p, bin, args);
}

/* Start bin in p's existing directory (its log appended to). */
static int spawn_in_dir(struct e2e_proc *p, const char *bin,
                        const char *const *args)
{
    int fd = open(p->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        perror(p->log_path);
        return -1;
    }
    char *argv[64];
    int argc = 0;
    argv[argc++] = (char *)bin;
    for (; args != NULL && *args != NULL && argc < 63; args++)
        argv[argc++] = (char *)*args;
    argv[argc] = NULL;
    pid_t pid = fork_exec(bin, argv, fd, p->dir);
    close(fd);
    if (pid < 0)
        return -1;
    p->pid = pid;
    char pid_path[320];
    snprintf(pid_path, sizeof(pid_path), "%s/pid", p->dir);
    FILE *f = fopen(pid_path, "w");
    if (f != NULL) {
        fprintf(f, "%d\n", (int)pid);
        fclose(f);
    }
    return 0;
}

int e2e_proc_running(struct e2e_proc *p)
{
    if (p->pid <= 0)
        return 0;
    int status;
    pid_t r = waitpid(p->pid, &status, WNOHANG);
    if (r == p->pid) {
        p->exit_status = status;
        p->pid = 0;
        return 0;
    }
    return 1;
}

int e2e_wait_healthy(struct e2e_proc *p, int timeout_ms)
{
    int64_t deadline = e2e_now_ms() + timeout_ms;
    while (e2e_now_ms() < deadline) {
        if (!e2e_proc_running(p))
            return -1;
        struct e2e_response r;
        int left = (int)(deadline - e2e_now_ms());
        if (left <= 0)
            break;
        if (e2e_http(p->port, "GET", "/health", NULL, NULL, 0,
                     left < 1000 ? left : 1000, &r) == 0) {
            int ok = r.status == 200;
            e2e_response_free(&r);
            if (ok)
                return 0;
        }
        e2e_sleep_ms(50);
    }
    return -1;
}

int e2e_log_count(const struct e2e_proc *p, const char *needle)
{
    FILE *f = fopen(p->log_path, "rb");
    size_t nlen = strlen(needle);
    if (f == NULL || nlen == 0 || nlen >= 4096) {
        if (f != NULL)
            fclose(f);
        return 0;
    }
    /* Read in blocks, keeping the last nlen - 1 bytes of each in front of
     * the next so that a match across two blocks is found once. */
    char buf[65536 + 4096];
    size_t keep = 0;
    int count = 0;
    for (;;) {
        size_t n = fread(buf + keep, 1, sizeof(buf) - keep - 1, f);
        if (n == 0)
            break;
        size_t len = keep + n;
        buf[len] = '\0';
        const char *at = buf;
        const char *hit;
        /* The log may hold NUL bytes: memmem, not strstr. */
        while ((hit = memmem(at, len - (size_t)(at - buf), needle, nlen)) !=
               NULL) {
            count++;
            at = hit + nlen;
        }
        size_t from = len >= nlen - 1 ? len - (nlen - 1) : 0;
        if ((size_t)(at - buf) > from)
            from = (size_t)(at - buf);
        keep = len - from;
        memmove(buf, buf + from, keep);
    }
    fclose(f);
    return count;
}

struct log_wait {
    const struct e2e_proc *p;
    const char *needle;
    int count;
};

static bool log_has(void *arg)
{
    const struct log_wait *w = arg;
    return e2e_log_count(w->p, w->needle) >= w->count;
}

bool e2e_wait_log(const struct e2e_proc *p, const char *needle, int count,
                  int timeout_ms)
{
    struct log_wait w = {p, needle, count};
    return e2e_poll_until(log_has, &w, timeout_ms);
}

/* A daemon's command line (argv[0] excluded): the harness's flags, then
 * the test's (a later flag wins). */
struct cmdline {
    const char *args[64];
    char a_master[64], a_port[32];
};

/* The master's command line (master_port 0), or an agent's. */
static void cmdline_make(struct cmdline *c, uint16_t master_port, uint16_t port,
                         const char *const *extra_args)
{
    int n = 0;
    /* An agent given its own --master (zk://..., e2e_ha) keeps it. */
    bool own_master = false;
    for (const char *const *a = extra_args; a != NULL && *a != NULL; a++)
        own_master = own_master || strncmp(*a, "--master=", 9) == 0;
    if (master_port != 0 && !own_master) {
        snprintf(c->a_master, sizeof(c->a_master), "--master=127.0.0.1:%u",
                 (unsigned)master_port);
        c->args[n++] = c->a_master;
    }
    snprintf(c->a_port, sizeof(c->a_port), "--port=%u", (unsigned)port);
    c->args[n++] = "--ip=127.0.0.1";
    c->args[n++] = c->a_port;
    /* Relative to the temporary directory the daemon runs in, so it is
     * p->work_dir. */
    c->args[n++] = "--work_dir=work";
    if (master_port != 0) {
        c->args[n++] = "--registration_backoff_factor=20ms";
        c->args[n++] = "--registration_backoff_max=200ms";
        /* The tests' frameworks name made-up users ("e2e"): tasks run as
         * the agent's user unless the test gives --switch_user itself (a
         * flag may not be given twice). */
        bool own = false;
        for (const char *const *a = extra_args; a != NULL && *a != NULL; a++)
            own = own || strncmp(*a, "--switch_user", 13) == 0;
        if (!own)
            c->args[n++] = "--switch_user=false";
    }
    for (; extra_args != NULL && *extra_args != NULL && n < 63; extra_args++)
        c->args[n++] = *extra_args;
    c->args[n] = NULL;
}

/* A master started with --zk is healthy as a standby already: it has
 * joined its group once it leads, or knows who does (its /state names the
 * leader). */
static bool zk_master_settled(void *arg)
{
    const struct e2e_proc *p = arg;
    if (e2e_metric(p->port, "master/elected") == 1)
        return true;
    json_t *st = e2e_get_json(p->port, "/state");
    bool knows = st != NULL && json_object_get(st, "leader") != NULL;
    json_decref(st);
    return knows;
}

static bool has_zk_flag(const char *const *args)
{
    for (; args != NULL && *args != NULL; args++)
        if (strncmp(*args, "--zk=", 5) == 0)
            return true;
    return false;
}

/* Start the master (master_port 0) or an agent on a free port and wait
 * until healthy (a master with --zk: also until it leads or knows the
 * leader, at most 20 s); a daemon that exits because another process took the
 * port meanwhile (its log says so) is started again on another. */
static int start_daemon(struct e2e_proc *p, uint16_t master_port,
                        const char *const *extra_args)
{
    const char *bin = master_port != 0 ? OFFERD_AGENT_BIN : OFFERD_BIN;
    const char *what = master_port != 0 ? "agent" : "master";
    const char *bind_error = master_port != 0 ? "listen" : "cannot listen on";
    for (int attempt = 0; attempt < 5; attempt++) {
        uint16_t port = netport_free_loopback();
        if (port == 0)
            continue;
        struct cmdline c;
        cmdline_make(&c, master_port, port, extra_args);
        if (e2e_spawn(p, bin, c.args) != 0) {
            e2e_proc_cleanup(p);
            return -1;
        }
        p->port = port;
        if (e2e_wait_healthy(p, 20000) == 0) {
            if (master_port == 0 && has_zk_flag(extra_args) &&
                !e2e_poll_until(zk_master_settled, p, 20000)) {
                fprintf(stderr, "harness: master with --zk found no leader\n");
                e2e_proc_dump_log(p, 8192);
                e2e_proc_cleanup(p);
                return -1;
            }
            return 0;
        }
        bool bind_race =
            !e2e_proc_running(p) && e2e_log_count(p, bind_error) > 0;
        if (!bind_race) {
            fprintf(stderr, "harness: %s did not become healthy\n", what);
            e2e_proc_dump_log(p, 8192);
            e2e_proc_cleanup(p);
            return -1;
        }
        e2e_proc_cleanup(p); /* port taken meanwhile: try another */
    }
    fprintf(stderr, "harness: no free port after 5 attempts\n");
    return -1;
}

/* Start a stopped daemon again in its directory, on its port. */
static int restart_daemon(struct e2e_proc *p, uint16_t master_port,
                          const char *const *extra_args)
{
    if (p->pid > 0 || p->dir[0] == '\0')
        return -1;
    struct cmdline c;
    cmdline_make(&c, master_port, p->port, extra_args);
    if (spawn_in_dir(p, master_port != 0 ? OFFERD_AGENT_BIN : OFFERD_BIN,
                     c.args) != 0)
        return -1;
    if (e2e_wait_healthy(p, 20000) != 0) {
        fprintf(stderr, "harness: restarted %s did not become healthy\n",
                master_port != 0 ? "agent" : "master");
        e2e_proc_dump_log(p, 8192);
        return -1;
    }
    return 0;
}

int e2e_start_master(struct e2e_proc *p, const char *const *extra_args)
{
    return start_daemon(p, 0, extra_args);
}

int e2e_start_agent(struct e2e_proc *p, uint16_t master_port,
                    const char *const *extra_args)
{
    return start_daemon(p, master_port, extra_args);
}

int e2e_restart_master(struct e2e_proc *p, const char *const *extra_args)
{
    return restart_daemon(p, 0, extra_args);
}

int e2e_restart_agent(struct e2e_proc *p, uint16_t master_port,
                      const char *const *extra_args)
{
    return restart_daemon(p, master_port, extra_args);
}

struct agents_wait {
    uint16_t port;
    int n;
};

static bool agents_active(void *arg)
{
    const struct agents_wait *w = arg;
    return e2e_metric(w->port, "master/slaves_active") == (double)w->n;
}

int e2e_wait_agents(const struct e2e_proc *master, int n, int timeout_ms)
{
    struct agents_wait w = {master->port, n};
    return e2e_poll_until(agents_active, &w, timeout_ms) ? 0 : -1;
}

/* Signal (sig > 0) or only count (sig == 0) the processes whose working
 * directory lies under dir. */
static int procs_under(const char *dir, int sig)
{
    size_t plen = strlen(dir);
    if (plen == 0)
        return 0;
    DIR *d = opendir("/proc");
    if (d == NULL)
        return 0;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(de->d_name, &end, 10);
        if (*end != '\0' || pid <= 1 || pid == (long)getpid())
            continue;
        char link[64], cwd[PATH_MAX];
        snprintf(link, sizeof(link), "/proc/%ld/cwd", pid);
        ssize_t len = readlink(link, cwd, sizeof(cwd) - 1);
        if (len <= 0)
            continue;
        cwd[len] = '\0';
        if (strncmp(cwd, dir, plen) == 0 &&
            (cwd[plen] == '/' || cwd[plen] == '\0')) {
            if (sig > 0)
                kill((pid_t)pid, sig);
            n++;
        }
    }
    closedir(d);
    return n;
}

int e2e_kill_under(const char *dir)
{
    return procs_under(dir, SIGKILL);
}

bool e2e_wait_none_under(const char *dir, int timeout_ms)
{
    int64_t deadline = e2e_now_ms() + timeout_ms;
    for (;;) {
        if (procs_under(dir, 0) == 0)
            return true;
        if (e2e_now_ms() >= deadline)
            return false;
        e2e_sleep_ms(20);
    }
}

int e2e_proc_stop(struct e2e_proc *p, int sig, int timeout_ms)
{
    if (p->pid > 0) {
        kill(p->pid, sig);
        int64_t deadline = e2e_now_ms() + timeout_ms;
        while (e2e_proc_running(p) && e2e_now_ms() < deadline)
            e2e_sleep_ms(10);
        if (p->pid > 0) {
            kill(p->pid, SIGKILL);
            int status;
            if (waitpid(p->pid, &status, 0) == p->pid)
                p->exit_status = status;
            p->pid = 0;
            return -1;
        }
    }
    if (WIFEXITED(p->exit_status))
        return WEXITSTATUS(p->exit_status);
    return -1;
}

void e2e_proc_cleanup(struct e2e_proc *p)
{
    if (p->pid > 0) {
        kill(p->pid, SIGKILL);
        waitpid(p->pid, &p->exit_status, 0);
        p->pid = 0;
    }
    if (p->dir[0] != '\0') {
        e2e_kill_under(p->dir);
        e2e_remove_agent_cgroups(p->work_dir);
        if (keep_dirs())
            fprintf(stderr, "kept %s\n", p->dir);
        else
            remove_tree(p->dir);
    }
    p->dir[0] = '\0';
}

void e2e_proc_dump_log(const struct e2e_proc *p, size_t max_bytes)
{
    dump_log_file(p->log_path, p->pid, max_bytes);
}

int e2e_run(const char *bin, const char *const *args, char *out, size_t outlen,
            int timeout_ms)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    char *argv[64];
    int argc = 0;
    argv[argc++] = (char *)bin;
    for (; args != NULL && *args != NULL && argc < 63; args++)
        argv[argc++] = (char *)*args;
    argv[argc] = NULL;
    pid_t pid = fork_exec(bin, argv, fds[1], NULL);
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return -1;
    }
    size_t have = 0;
    int64_t deadline = e2e_now_ms() + timeout_ms;
    for (;;) {
        int left = (int)(deadline - e2e_now_ms());
        if (left <= 0)
            break;
        struct pollfd pfd = {fds[0], POLLIN, 0};
        if (poll(&pfd, 1, left) <= 0)
            break;
        char buf[4096];
        ssize_t n = read(fds[0], buf, sizeof(buf));
        if (n <= 0)
            break;
        size_t take = (size_t)n;
        if (outlen > 0 && have + take > outlen - 1)
            take = outlen - 1 - have;
        memcpy(out + have, buf, take);
        have += take;
    }
    close(fds[0]);
    if (outlen > 0)
        out[have] = '\0';
    int status = 0;
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (e2e_now_ms() >= deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return -1;
        }
        e2e_sleep_ms(10);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* ---- Reading the daemons' endpoints ---- */

json_t *e2e_get_json(uint16_t port, const char *path)
{
    struct e2e_response r;
    if (e2e_http(port, "GET", path, NULL, NULL, 0, 5000, &r) != 0)
        return NULL;
    json_t *j =
        r.status == 200 ? json_loadb(r.body, r.body_len, 0, NULL) : NULL;
    e2e_response_free(&r);
    return j;
}

double e2e_metric(uint16_t master_port, const char *name)
{
    json_t *j = e2e_get_json(master_port, "/metrics/snapshot");
    if (j == NULL)
        return -1;
    json_t *v = json_object_get(j, name);
    double d = json_is_number(v) ? json_number_value(v) : -1;
    json_decref(j);
    return d;
}

bool e2e_agent_sandbox(uint16_t agent_port, const char *task_id, char *out,
                       size_t outlen)
{
    json_t *j = e2e_get_json(agent_port, "/state");
    ck_assert_msg(j != NULL, "the agent's /state cannot be read");
    bool found = false;
    size_t i, k;
    json_t *f, *e;
    json_array_foreach(json_object_get(j, "frameworks"), i, f)
    {
        json_array_foreach(json_object_get(f, "executors"), k, e)
        {
            const char *id = json_string_value(json_object_get(e, "id"));
            const char *dir =
                json_string_value(json_object_get(e, "directory"));
            if (id != NULL && dir != NULL && strcmp(id, task_id) == 0) {
                snprintf(out, outlen, "%s", dir);
                found = true;
            }
        }
    }
    json_decref(j);
    return found;
}

pid_t e2e_read_pid_file(const char *dir, const char *name)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    int pid = 0;
    if (fscanf(f, "%d", &pid) != 1)
        pid = 0;
    fclose(f);
    return (pid_t)pid;
}

bool e2e_pid_alive(pid_t pid)
{
    return pid > 0 && kill(pid, 0) == 0;
}

bool e2e_file_exists(const char *dir, const char *name)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    struct stat st;
    return stat(path, &st) == 0;
}

/* ---- HTTP client ---- */

struct reader {
    int fd;
    char *buf;
    size_t len, cap;
    int64_t deadline;
};

static int connect_loopback(uint16_t port, int64_t deadline)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        if (errno != EINPROGRESS) {
            close(fd);
            return -1;
        }
        int left = (int)(deadline - e2e_now_ms());
        struct pollfd p = {fd, POLLOUT, 0};
        int err = 0;
        socklen_t el = sizeof(err);
        if (left <= 0 || poll(&p, 1, left) <= 0 ||
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0 || err) {
            close(fd);
            return -1;
        }
    }
    if (e2e_io_start(fd, deadline) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Read more bytes into r. Returns bytes read, 0 at EOF, -1 on timeout or
 * error. */
static int fill(struct reader *r)
{
    if (r->cap - r->len < 4096) {
        r->cap = r->cap ? r->cap * 2 : 8192;
        r->buf = realloc(r->buf, r->cap + 1);
        if (r->buf == NULL)
            abort();
    }
    for (;;) {
        ssize_t n = e2e_io_recv(r->fd, r->buf + r->len, r->cap - r->len);
        if (n > 0) {
            r->len += (size_t)n;
            r->buf[r->len] = '\0';
            return (int)n;
        }
        if (n == 0)
            return 0;
        if (errno == ECONNRESET)
            return 0;
        if (errno != EAGAIN && errno != EINTR)
            return -1;
        int left = (int)(r->deadline - e2e_now_ms());
        if (left <= 0)
            return -1;
        struct pollfd p = {r->fd, POLLIN, 0};
        if (poll(&p, 1, left) <= 0)
            return -1;
    }
}

static void consume(struct reader *r, size_t n)
{
    memmove(r->buf, r->buf + n, r->len - n);
    r->len -= n;
    if (r->buf != NULL)
        r->buf[r->len] = '\0';
}

/* Send the request; stop sending the body early if a response arrives. */
static int send_request(int fd, uint16_t port, const char *method,
                        const char *path, const char *const *headers,
                        const void *body, size_t body_len, int close_conn,
                        int64_t deadline)
{
    size_t hcap = 1024 + strlen(path);
    for (const char *const *h = headers; h != NULL && *h != NULL; h++)
        hcap += strlen(*h) + 2;
    char *head = malloc(hcap);
    if (head == NULL)
        abort();
    int n = snprintf(head, hcap,
                     "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n%s"
                     "Content-Length: %zu\r\n",
                     method, path, (unsigned)port,
                     close_conn ? "Connection: close\r\n" : "", body_len);
    size_t used = (size_t)n;
    for (const char *const *h = headers; h != NULL && *h != NULL; h++) {
        n = snprintf(head + used, hcap - used, "%s\r\n", *h);
        used += (size_t)n;
    }
    n = snprintf(head + used, hcap - used, "\r\n");
    used += (size_t)n;

    const char *parts[2] = {head, body};
    size_t lens[2] = {used, body_len};
    int rc = 0;
    for (int i = 0; i < 2 && rc == 0; i++) {
        size_t off = 0;
        while (off < lens[i]) {
            int left = (int)(deadline - e2e_now_ms());
            if (left <= 0) {
                rc = -1;
                break;
            }
            struct pollfd p = {fd, POLLOUT | POLLIN, 0};
            if (poll(&p, 1, left) <= 0) {
                rc = -1;
                break;
            }
            /* Under TLS, readable may be a record that is no answer. */
            if (i == 1 && (p.revents & (POLLIN | POLLHUP)) && !e2e_tls_on())
                goto out; /* answered before the body was sent */
            if (!(p.revents & POLLOUT))
                continue;
            size_t piece = lens[i] - off < 65536 ? lens[i] - off : 65536;
            ssize_t w = e2e_io_send(fd, parts[i] + off, piece);
            if (w < 0) {
                if (errno == EAGAIN || errno == EINTR)
                    continue;
                if (i == 1)
                    goto out; /* the server closed: read what it said */
                rc = -1;
                break;
            }
            off += (size_t)w;
        }
    }
out:
    free(head);
    return rc;
}

/* Read and parse the status line and headers into resp. */
static int read_head(struct reader *r, struct e2e_response *resp)
{
    char *end;
    while ((end = r->buf ? strstr(r->buf, "\r\n\r\n") : NULL) == NULL) {
        if (r->len > (1 << 20) || fill(r) <= 0)
            return -1;
    }
    size_t head_len = (size_t)(end - r->buf) + 4;
    int major, minor, status;
    if (sscanf(r->buf, "HTTP/%d.%d %d", &major, &minor, &status) != 3)
        return -1;
    resp->status = status;
    char *line = strstr(r->buf, "\r\n") + 2;
    while (line < end) {
        char *eol = strstr(line, "\r\n");
        char *colon = memchr(line, ':', (size_t)(eol - line));
        if (colon != NULL) {
            char *v = colon + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            resp->headers = realloc(resp->headers, (resp->nheaders + 1) *
                                                       sizeof(*resp->headers));
            if (resp->headers == NULL)
                abort();
            struct e2e_header *h = &resp->headers[resp->nheaders++];
            h->name = strndup(line, (size_t)(colon - line));
            h->value = strndup(v, (size_t)(eol - v));
        }
        line = eol + 2;
    }
    consume(r, head_len);
    return 0;
}

/* Read one chunk: 1 and the data, 0 after the terminating chunk, -1. */
static int read_chunk(struct reader *r, char **data, size_t *len)
{
    char *eol;
    while ((eol = r->buf ? strstr(r->buf, "\r\n") : NULL) == NULL) {
        if (r->len > 1024 || fill(r) <= 0)
            return -1;
    }
    char *endp;
    unsigned long size = strtoul(r->buf, &endp, 16);
    if (endp == r->buf || size > (64UL << 20))
        return -1;
    consume(r, (size_t)(eol - r->buf) + 2);
    if (size == 0) {
        /* Trailers up to an empty line. */
        for (;;) {
            while ((eol = r->buf ? strstr(r->buf, "\r\n") : NULL) == NULL)
                if (fill(r) <= 0)
                    return 0;
            int empty = eol == r->buf;
            consume(r, (size_t)(eol - r->buf) + 2);
            if (empty)
                return 0;
        }
    }
    while (r->len < size + 2)
        if (fill(r) <= 0)
            return -1;
    *data = malloc(size + 1);
    if (*data == NULL)
        abort();
    memcpy(*data, r->buf, size);
    (*data)[size] = '\0';
    *len = size;
    consume(r, size + 2);
    return 1;
}

static void append(struct e2e_response *resp, const char *p, size_t n)
{
    resp->body = realloc(resp->body, resp->body_len + n + 1);
    if (resp->body == NULL)
        abort();
    memcpy(resp->body + resp->body_len, p, n);
    resp->body_len += n;
    resp->body[resp->body_len] = '\0';
}

int e2e_http(uint16_t port, const char *method, const char *path,
             const char *const *headers, const void *body, size_t body_len,
             int timeout_ms, struct e2e_response *resp)
{
    memset(resp, 0, sizeof(*resp));
    int64_t deadline = e2e_now_ms() + timeout_ms;
    int fd = connect_loopback(port, deadline);
    if (fd < 0)
        return -1;
    struct reader r = {fd, NULL, 0, 0, deadline};
    int rc = -1;
    if (send_request(fd, port, method, path, headers, body, body_len, 1,
                     deadline) != 0)
        goto out;
    if (read_head(&r, resp) != 0)
        goto out;
    append(resp, "", 0);
    if (strcmp(method, "HEAD") == 0 || resp->status == 204 ||
        resp->status == 304) {
        rc = 0;
        goto out;
    }
    const char *te = e2e_response_header(resp, "Transfer-Encoding");
    const char *cl = e2e_response_header(resp, "Content-Length");
    if (te != NULL && strcasecmp(te, "chunked") == 0) {
        for (;;) {
            char *data;
            size_t len;
            int c = read_chunk(&r, &data, &len);
            if (c < 0)
                goto out;
            if (c == 0)
                break;
            append(resp, data, len);
            free(data);
        }
    } else if (cl != NULL) {
        size_t want = strtoul(cl, NULL, 10);
        while (r.len < want)
            if (fill(&r) <= 0)
                goto out;
        append(resp, r.buf, want);
    } else {
        int n;
        while ((n = fill(&r)) > 0)
            ;
        if (n < 0)
            goto out;
        append(resp, r.buf ? r.buf : "", r.len);
    }
    rc = 0;
out:
    free(r.buf);
    e2e_io_close(fd);
    if (rc != 0)
        e2e_response_free(resp);
    return rc;
}

const char *e2e_response_header(const struct e2e_response *r, const char *name)
{
    for (size_t i = 0; i < r->nheaders; i++)
        if (strcasecmp(r->headers[i].name, name) == 0)
            return r->headers[i].value;
    return NULL;
}

void e2e_response_free(struct e2e_response *r)
{
    for (size_t i = 0; i < r->nheaders; i++) {
        free(r->headers[i].name);
        free(r->headers[i].value);
    }
    free(r->headers);
    free(r->body);
    memset(r, 0, sizeof(*r));
}

int e2e_stream_open(uint16_t port, const char *method, const char *path,
                    const char *const *headers, const void *body,
                    size_t body_len, int timeout_ms, struct e2e_stream *s)
{
    memset(s, 0, sizeof(*s));
    int64_t deadline = e2e_now_ms() + timeout_ms;
    s->fd = connect_loopback(port, deadline);
    if (s->fd < 0)
        return -1;
    struct reader r = {s->fd, NULL, 0, 0, deadline};
    if (send_request(s->fd, port, method, path, headers, body, body_len, 0,
                     deadline) != 0 ||
        read_head(&r, &s->head) != 0) {
        free(r.buf);
        e2e_stream_close(s);
        return -1;
    }
    s->buf = r.buf;
    s->len = r.len;
    s->cap = r.cap;
    const char *te = e2e_response_header(&s->head, "Transfer-Encoding");
    s->chunked = te != NULL && strcasecmp(te, "chunked") == 0;
    return 0;
}

int e2e_stream_next(struct e2e_stream *s, int timeout_ms, char **data,
                    size_t *len)
{
    struct reader r = {s->fd, s->buf, s->len, s->cap,
                       e2e_now_ms() + timeout_ms};
    int rc;
    if (s->chunked) {
        rc = read_chunk(&r, data, len);
    } else {
        rc = r.len > 0 ? 1 : fill(&r);
        if (rc > 0) {
            *data = malloc(r.len + 1);
            if (*data == NULL)
                abort();
            memcpy(*data, r.buf, r.len);
            (*data)[r.len] = '\0';
            *len = r.len;
            consume(&r, r.len);
            rc = 1;
        }
    }
    s->buf = r.buf;
    s->len = r.len;
    s->cap = r.cap;
    return rc;
}

void e2e_stream_close(struct e2e_stream *s)
{
    if (s->fd >= 0)
        e2e_io_close(s->fd);
    s->fd = -1;
    free(s->buf);
    s->buf = NULL;
    s->len = s->cap = 0;
    e2e_response_free(&s->head);
}

/* ---- Clusters --------------------------------------------------------- */

struct event_base *e2e_cluster_start(struct e2e_proc *master,
                                     const char *const *margs,
                                     struct e2e_proc *agents, int n,
                                     const char *const *const *aargs)
{
    ck_assert_int_eq(e2e_start_master(master, margs), 0);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(e2e_start_agent(&agents[i], master->port, aargs[i]),
                         0);
    ck_assert_msg(e2e_wait_agents(master, n, 20000) == 0,
                  "%d agents did not register", n);
    struct event_base *base = event_base_new();
    ck_assert_ptr_nonnull(base);
    return base;
}

void e2e_cluster_stop(struct e2e_proc *master, struct e2e_proc *agents, int n,
                      struct event_base **base)
{
    if (*base != NULL) {
        event_base_free(*base);
        *base = NULL;
    }
    for (int i = 0; i < n; i++)
        e2e_proc_cleanup(&agents[i]);
    e2e_proc_cleanup(master);
}

void e2e_stop_master_agent(struct e2e_proc *master, struct e2e_proc *agent)
{
    ck_assert_int_eq(e2e_proc_stop(agent, SIGTERM, 10000), 0);
    ck_assert_int_eq(e2e_proc_stop(master, SIGTERM, 10000), 0);
    e2e_proc_cleanup(agent);
    e2e_proc_cleanup(master);
}
