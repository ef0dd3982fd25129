/*
 * Tests of agent recovery from crafted checkpoints: reading meta/ back
 * (agent/checkpoint.h, agent_ckpt_read) with every kind of damage, the
 * decision for each task (agent/recovery.h) against real processes (a real
 * supervisor, a stand-in that has not exec'd yet, dead and reused pids),
 * and the /proc identity check (agent/supervisor.h).
 */
#include "agent/checkpoint.h"
#include "agent/recovery.h"
#include "agent/status.h"
#include "agent/supervisor.h"
#include "check_main.h"
#include "common/fs.h"
#include "common/json_pb.h"
#include "common/recordio.h"

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static char dir[PATH_MAX];
static struct agent_ckpt *ck;
static pid_t children[8];
static size_t nchildren;

static void setup(void)
{
    char tmpl[] = "/tmp/offerd-rec-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    /* /proc shows working directories without symlinks. */
    ck_assert_ptr_nonnull(realpath(tmpl, dir));
    char err[256];
    ck = agent_ckpt_new(dir, err, sizeof(err));
    ck_assert_msg(ck != NULL, "%s", err);
    nchildren = 0;
}

static void teardown(void)
{
    for (size_t i = 0; i < nchildren; i++) {
        kill(-children[i], SIGKILL);
        kill(children[i], SIGKILL);
        waitpid(children[i], NULL, 0);
    }
    agent_ckpt_free(ck);
    ck_assert_int_eq(fs_remove_tree(dir), 0);
}

static void keep_child(pid_t pid)
{
    ck_assert_uint_lt(nchildren, sizeof(children) / sizeof(children[0]));
    children[nchildren++] = pid;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static bool exists(const char *rel)
{
    char p[PATH_MAX + 256];
    snprintf(p, sizeof(p), "%s/%s", dir, rel);
    struct stat st;
    return stat(p, &st) == 0;
}

static void write_rel(const char *rel, const void *data, size_t len)
{
    char p[PATH_MAX + 256], err[256];
    snprintf(p, sizeof(p), "%s/%s", dir, rel);
    char *slash = strrchr(p, '/');
    *slash = '\0';
    ck_assert_int_eq(fs_mkdirs(p, err, sizeof(err)), 0);
    *slash = '/';
    ck_assert_int_eq(fs_write_atomic(p, data, len), 0);
}

static void write_text(const char *rel, const char *text)
{
    write_rel(rel, text, strlen(text));
}

/* A sandbox directory for a task (absolute path in out). */
static void make_sandbox(const char *task_id, char *out, size_t outlen)
{
    char err[256];
    int n = snprintf(out, outlen, "%s/sandboxes/fw/%s/run", dir, task_id);
    ck_assert(n > 0 && (size_t)n < outlen);
    ck_assert_int_eq(fs_mkdirs(out, err, sizeof(err)), 0);
}

static void save_framework(const char *fw)
{
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = (char *)fw;
    Mesos__V1__FrameworkInfo fi = MESOS__V1__FRAMEWORK_INFO__INIT;
    fi.user = "u";
    fi.name = "f";
    fi.id = &fid;
    char err[256];
    ck_assert_int_eq(agent_ckpt_save_framework(ck, fw, &fi, err, sizeof(err)),
                     0);
}

static void save_task_info(const char *fw, const char *task_id,
                           const char *sandbox)
{
    Mesos__V1__TaskID tid = MESOS__V1__TASK_ID__INIT;
    tid.value = (char *)task_id;
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = "M-S1";
    Mesos__V1__TaskInfo ti = MESOS__V1__TASK_INFO__INIT;
    ti.name = "name";
    ti.task_id = &tid;
    ti.agent_id = &aid;
    char err[256];
    ck_assert_int_eq(agent_ckpt_save_task_info(ck, fw, &ti,
                                               sandbox ? sandbox : "/nowhere",
                                               err, sizeof(err)),
                     0);
    if (sandbox == NULL) {
        char p[PATH_MAX + 256];
        int n = snprintf(p, sizeof(p), "%s/meta/frameworks/%s/tasks/%s/sandbox",
                         dir, fw, task_id);
        ck_assert(n > 0 && (size_t)n < sizeof(p));
        ck_assert_int_eq(unlink(p), 0);
    }
}

static void save_task_state(const char *fw, const char *task_id,
                            Mesos__V1__TaskState state)
{
    Mesos__V1__TaskID tid = MESOS__V1__TASK_ID__INIT;
    tid.value = (char *)task_id;
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = (char *)fw;
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = "M-S1";
    Mesos__V1__Task t = MESOS__V1__TASK__INIT;
    t.name = "name";
    t.task_id = &tid;
    t.framework_id = &fid;
    t.agent_id = &aid;
    t.state = state;
    char err[256];
    ck_assert_int_eq(agent_ckpt_save_task(ck, fw, &t, err, sizeof(err)), 0);
}

/* Save n updates of the given states (statuses returned in st, owned). */
static void save_updates(const char *fw, const char *task_id,
                         const Mesos__V1__TaskState *states, size_t n,
                         Mesos__V1__TaskStatus **st)
{
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = (char *)fw;
    Offerd__Agent__Call__Update u[8];
    const Offerd__Agent__Call__Update *pv[8];
    ck_assert_uint_le(n, 8);
    for (size_t i = 0; i < n; i++) {
        struct agent_status_spec spec = {
            .task_id = task_id,
            .state = states[i],
            .source = MESOS__V1__TASK_STATUS__SOURCE__SOURCE_EXECUTOR,
            .timestamp = 1000 + (double)i,
        };
        st[i] = agent_status_new(&spec);
        offerd__agent__call__update__init(&u[i]);
        u[i].framework_id = &fid;
        u[i].status = st[i];
        pv[i] = &u[i];
    }
    char err[256];
    ck_assert_int_eq(
        agent_ckpt_save_updates(ck, fw, task_id, pv, n, err, sizeof(err)), 0);
}

static void free_statuses(Mesos__V1__TaskStatus **st, size_t n)
{
    for (size_t i = 0; i < n; i++)
        jpb_free(&st[i]->base);
}

static const struct agent_ckpt_task *find(const struct agent_ckpt_state *s,
                                          const char *task_id)
{
    for (size_t i = 0; i < s->ntasks; i++)
        if (strcmp(s->tasks[i].task_id, task_id) == 0)
            return &s->tasks[i];
    return NULL;
}

/* Read the checkpoint and plan task_id. */
static void plan_of(const char *task_id, struct agent_rec_plan *p)
{
    struct agent_ckpt_state s;
    agent_ckpt_read(ck, &s);
    const struct agent_ckpt_task *t = find(&s, task_id);
    ck_assert_msg(t != NULL, "task %s not read", task_id);
    agent_rec_plan(t, p);
    agent_ckpt_state_clear(&s);
}

/* A process that stands in for a supervisor (or a task): its own session,
 * working directory cwd, writes its pid to cwd/pid_file when given, then
 * waits to be killed. */
static pid_t stand_in(const char *cwd, const char *pid_file)
{
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(p[0]);
        if (setsid() < 0 || chdir(cwd) != 0)
            _exit(1);
        if (pid_file != NULL) {
            char buf[32];
            int n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
            if (fs_write_atomic(pid_file, buf, (size_t)n) != 0)
                _exit(1);
        }
        if (write(p[1], "x", 1) != 1)
            _exit(1);
        for (;;)
            pause();
    }
    close(p[1]);
    char c;
    ck_assert_int_eq(read(p[0], &c, 1), 1);
    close(p[0]);
    keep_child(pid);
    return pid;
}

/* The pid of a process that has exited and been reaped. */
static pid_t dead_pid(void)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0)
        _exit(0);
    ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
    return pid;
}

static void write_pid_file(const char *sandbox, const char *file, pid_t pid)
{
    char p[PATH_MAX + 64], buf[32];
    snprintf(p, sizeof(p), "%s/%s", sandbox, file);
    int n = snprintf(buf, sizeof(buf), "%d\n", (int)pid);
    ck_assert_int_eq(fs_write_atomic(p, buf, (size_t)n), 0);
}

/* ---- agent_proc_runs_in ---- */

START_TEST(test_proc_runs_in)
{
    char sb[PATH_MAX], other[PATH_MAX];
    make_sandbox("a", sb, sizeof(sb));
    make_sandbox("b", other, sizeof(other));
    pid_t p = stand_in(sb, NULL);
    ck_assert(agent_proc_runs_in(p, sb));
    ck_assert(!agent_proc_runs_in(p, other));
    ck_assert(!agent_proc_runs_in(0, sb));
    ck_assert(!agent_proc_runs_in(-1, sb));
    ck_assert(!agent_proc_runs_in(dead_pid(), sb));

    /* Not a session leader (a task's child, say): no. */
    pid_t q = fork();
    ck_assert_int_ge(q, 0);
    if (q == 0) {
        if (chdir(sb) != 0)
            _exit(1);
        for (;;)
            pause();
    }
    keep_child(q);
    char cwd[PATH_MAX], link[64];
    snprintf(link, sizeof(link), "/proc/%d/cwd", (int)q);
    bool there = false;
    for (int i = 0; i < 100 && !there; i++) {
        ssize_t n = readlink(link, cwd, sizeof(cwd) - 1);
        if (n > 0) {
            cwd[n] = '\0';
            there = strcmp(cwd, sb) == 0;
        }
        if (!there)
            sleep_ms(10);
    }
    ck_assert(there);
    ck_assert(!agent_proc_runs_in(q, sb));

    /* A zombie (exited, not reaped yet): no. */
    kill(p, SIGKILL);
    sleep_ms(100);
    ck_assert(!agent_proc_runs_in(p, sb));
}
END_TEST

/* ---- Reading back ---- */

START_TEST(test_read_nothing)
{
    write_text("meta/trash/1-1/leftover", "x");
    struct agent_ckpt_state s;
    agent_ckpt_read(ck, &s);
    ck_assert_uint_eq(s.ntasks, 0);
    ck_assert_uint_eq(s.nframeworks, 0);
    ck_assert_uint_eq(s.problems, 0);
    ck_assert(!exists("meta/trash"));
    agent_ckpt_state_clear(&s);
}
END_TEST

START_TEST(test_read_round_trip)
{
    char sb[PATH_MAX];
    make_sandbox("t1", sb, sizeof(sb));
    save_framework("fw");
    save_task_info("fw", "t1", sb);
    save_task_state("fw", "t1", MESOS__V1__TASK_STATE__TASK_RUNNING);
    static const Mesos__V1__TaskState states[] = {
        MESOS__V1__TASK_STATE__TASK_RUNNING,
        MESOS__V1__TASK_STATE__TASK_KILLED};
    Mesos__V1__TaskStatus *st[2];
    save_updates("fw", "t1", states, 2, st);
    struct agent_ckpt_kill k = {3000000000LL, 1700000000123456789LL, true,
                                false, 0};
    char err[256];
    ck_assert_int_eq(agent_ckpt_save_kill(ck, "fw", "t1", &k, err, sizeof(err)),
                     0);

    struct agent_ckpt_state s;
    agent_ckpt_read(ck, &s);
    ck_assert_uint_eq(s.problems, 0);
    ck_assert_uint_eq(s.nframeworks, 1);
    ck_assert_str_eq(s.frameworks[0].id, "fw");
    ck_assert_ptr_nonnull(s.frameworks[0].info);
    ck_assert_str_eq(s.frameworks[0].info->name, "f");
    ck_assert_uint_eq(s.ntasks, 1);
    const struct agent_ckpt_task *t = &s.tasks[0];
    ck_assert_str_eq(t->framework_id, "fw");
    ck_assert_str_eq(t->task_id, "t1");
    ck_assert_ptr_nonnull(t->info);
    ck_assert_str_eq(t->info->task_id->value, "t1");
    ck_assert_str_eq(t->sandbox, sb);
    ck_assert_ptr_nonnull(t->task);
    ck_assert(t->has_task_file);
    /* The newest pending update's state wins over the task file's (it is
     * written first: a crash between the two leaves the task file behind). */
    ck_assert(t->has_state);
    ck_assert_int_eq(t->state, MESOS__V1__TASK_STATE__TASK_KILLED);
    ck_assert_uint_eq(t->nupdates, 2);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(t->updates[i]->status->state, states[i]);
        ck_assert(memcmp(t->updates[i]->status->uuid.data, st[i]->uuid.data,
                         16) == 0);
        ck_assert_str_eq(t->updates[i]->framework_id->value, "fw");
    }
    ck_assert(t->has_kill);
    ck_assert_int_eq(t->kill.grace_ns, k.grace_ns);
    ck_assert_int_eq(t->kill.deadline_wall_ns, k.deadline_wall_ns);
    ck_assert(t->kill.during_launch);
    agent_ckpt_state_clear(&s);
    ck_assert_ptr_null(s.tasks);
    free_statuses(st, 2);
}
END_TEST

START_TEST(test_read_sorted)
{
    save_framework("fw-b");
    save_framework("fw-a");
    save_task_info("fw-b", "z", NULL);
    save_task_info("fw-b", "a", NULL);
    save_task_info("fw-a", "m", NULL);
    struct agent_ckpt_state s;
    agent_ckpt_read(ck, &s);
    ck_assert_uint_eq(s.ntasks, 3);
    ck_assert_str_eq(s.frameworks[0].id, "fw-a");
    ck_assert_str_eq(s.tasks[0].task_id, "m");
    ck_assert_str_eq(s.tasks[1].task_id, "a");
    ck_assert_str_eq(s.tasks[2].task_id, "z");
    agent_ckpt_state_clear(&s);
}
END_TEST

/* Each kind of damage is skipped and counted; the rest is read. */
START_TEST(test_read_corrupt_files)
{
    save_framework("fw");
    /* A FrameworkInfo that is not protobuf. */
    write_text("meta/frameworks/bad-fi/framework_info", "\xff\xff\xff");
    /* A FrameworkInfo of another framework. */
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = "elsewhere";
    Mesos__V1__FrameworkInfo fi = MESOS__V1__FRAMEWORK_INFO__INIT;
    fi.user = "u";
    fi.name = "f";
    fi.id = &fid;
    size_t len;
    uint8_t *pb = jpb_to_pb(&fi.base, &len);
    write_rel("meta/frameworks/other-fi/framework_info", pb, len);
    free(pb);
    /* Directory names that are not ids, a file where a task should be. */
    write_text("meta/frameworks/bad name/framework_info", "");
    write_text("meta/frameworks/fw/tasks/a file", "x");
    /* Garbage task_info and task, sandbox not absolute, kill malformed. */
    write_text("meta/frameworks/fw/tasks/g/task_info", "garbage");
    write_text("meta/frameworks/fw/tasks/g/task", "garbage");
    write_text("meta/frameworks/fw/tasks/g/sandbox", "relative/path\n");
    write_text("meta/frameworks/fw/tasks/g/kill", "12 x 1\n");
    /* A task_info and a task file of another task. */
    save_task_info("fw", "other", NULL);
    char from[PATH_MAX + 64], to[PATH_MAX + 64], hdir[PATH_MAX + 64];
    char err[256];
    snprintf(from, sizeof(from), "%s/meta/frameworks/fw/tasks/other/task_info",
             dir);
    snprintf(to, sizeof(to), "%s/meta/frameworks/fw/tasks/h/task_info", dir);
    snprintf(hdir, sizeof(hdir), "%s/meta/frameworks/fw/tasks/h", dir);
    ck_assert_int_eq(fs_mkdirs(hdir, err, sizeof(err)), 0);
    ck_assert_int_eq(rename(from, to), 0);
    save_task_state("fw", "other", MESOS__V1__TASK_STATE__TASK_RUNNING);
    snprintf(from, sizeof(from), "%s/meta/frameworks/fw/tasks/other/task", dir);
    snprintf(to, sizeof(to), "%s/meta/frameworks/fw/tasks/h/task", dir);
    ck_assert_int_eq(rename(from, to), 0);

    /* Updates: a good record, a record that is not an Update, one of
     * another task, one without a uuid, a good one, then a cut record. */
    static const Mesos__V1__TaskState states[] = {
        MESOS__V1__TASK_STATE__TASK_STARTING,
        MESOS__V1__TASK_STATE__TASK_RUNNING};
    Mesos__V1__TaskStatus *st[2];
    save_updates("fw", "u", states, 2, st);
    Mesos__V1__FrameworkID ufid = MESOS__V1__FRAMEWORK_ID__INIT;
    ufid.value = "fw";
    Offerd__Agent__Call__Update up = OFFERD__AGENT__CALL__UPDATE__INIT;
    up.framework_id = &ufid;
    up.status = st[0];
    uint8_t *good0 = jpb_to_pb(&up.base, &len);
    size_t l0 = len;
    up.status = st[1];
    uint8_t *good1 = jpb_to_pb(&up.base, &len);
    size_t l1 = len;
    struct agent_status_spec spec = {
        .task_id = "not-u",
        .state = MESOS__V1__TASK_STATE__TASK_RUNNING,
        .source = MESOS__V1__TASK_STATUS__SOURCE__SOURCE_EXECUTOR,
        .timestamp = 1,
    };
    Mesos__V1__TaskStatus *alien = agent_status_new(&spec);
    up.status = alien;
    uint8_t *other = jpb_to_pb(&up.base, &len);
    size_t lo = len;
    spec.task_id = "u";
    Mesos__V1__TaskStatus *nouuid = agent_status_new(&spec);
    nouuid->has_uuid = 0;
    up.status = nouuid;
    uint8_t *nou = jpb_to_pb(&up.base, &len);
    size_t ln = len;
    const struct {
        const uint8_t *p;
        size_t n;
    } recs[] = {{good0, l0},
                {(const uint8_t *)"\x0a\x01", 2},
                {other, lo},
                {nou, ln},
                {good1, l1}};
    uint8_t *all = NULL;
    size_t total = 0;
    for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); i++) {
        size_t fl;
        uint8_t *f = rio_frame(recs[i].p, recs[i].n, &fl);
        all = realloc(all, total + fl);
        memcpy(all + total, f, fl);
        total += fl;
        free(f);
    }
    all = realloc(all, total + 6);
    memcpy(all + total, "100\nab", 6); /* cut short */
    total += 6;
    write_rel("meta/frameworks/fw/tasks/u/updates", all, total);
    free(all);
    free(good0);
    free(good1);
    free(other);
    free(nou);
    jpb_free(&alien->base);
    jpb_free(&nouuid->base);

    struct agent_ckpt_state s;
    agent_ckpt_read(ck, &s);
    /* bad-fi, other-fi, "bad name"; g: task_info, task, sandbox, kill;
     * h: task_info, task; u: 3 records and the cut end. */
    ck_assert_uint_eq(s.problems, 3 + 4 + 2 + 4);
    ck_assert_uint_eq(s.nframeworks, 3); /* fw, bad-fi, other-fi */
    for (size_t i = 0; i < s.nframeworks; i++)
        if (strcmp(s.frameworks[i].id, "fw") != 0)
            ck_assert_ptr_null(s.frameworks[i].info);
    const struct agent_ckpt_task *g = find(&s, "g");
    ck_assert_ptr_nonnull(g);
    ck_assert_ptr_null(g->info);
    ck_assert_ptr_null(g->task);
    ck_assert(g->has_task_file);
    ck_assert(!g->has_state);
    ck_assert_ptr_null(g->sandbox);
    ck_assert(!g->has_kill);
    const struct agent_ckpt_task *h = find(&s, "h");
    ck_assert_ptr_null(h->info);
    ck_assert_ptr_null(h->task);
    const struct agent_ckpt_task *u = find(&s, "u");
    ck_assert_uint_eq(u->nupdates, 2);
    ck_assert(memcmp(u->updates[0]->status->uuid.data, st[0]->uuid.data, 16) ==
              0);
    ck_assert(memcmp(u->updates[1]->status->uuid.data, st[1]->uuid.data, 16) ==
              0);
    ck_assert_int_eq(u->state, MESOS__V1__TASK_STATE__TASK_RUNNING);
    ck_assert_ptr_null(find(&s, "a file"));
    agent_ckpt_state_clear(&s);
    free_statuses(st, 2);
}
END_TEST

START_TEST(test_kill_file)
{
    static const struct {
        const char *text;
        bool ok;
    } cases[] = {
        {"5 10 0\n", true},   {"0 -3 1\n", true}, {"5 10 2\n", false},
        {"-1 10 0\n", false}, {"5 10 0", false},  {"5 10\n", false},
        {"5 10 0\nx", false}, {"", false},        {"five 10 0\n", false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        save_task_info("fw", "k", NULL);
        write_text("meta/frameworks/fw/tasks/k/kill", cases[i].text);
        struct agent_ckpt_state s;
        agent_ckpt_read(ck, &s);
        ck_assert_msg(find(&s, "k")->has_kill == cases[i].ok, "'%s'",
                      cases[i].text);
        ck_assert_uint_eq(s.problems, cases[i].ok ? 0 : 1);
        agent_ckpt_state_clear(&s);
    }
}
END_TEST

START_TEST(test_remove_leaves_no_trash)
{
    save_framework("fw");
    save_task_info("fw", "t1", NULL);
    save_task_info("fw", "t2", NULL);
    ck_assert_int_eq(agent_ckpt_remove_task(ck, "fw", "t1"), 0);
    ck_assert(!exists("meta/frameworks/fw/tasks/t1"));
    ck_assert(exists("meta/frameworks/fw/tasks/t2"));
    ck_assert_int_eq(agent_ckpt_remove_task(ck, "fw", "t2"), 0);
    ck_assert(!exists("meta/frameworks/fw"));
    /* Nothing is left in trash/. */
    char p[PATH_MAX + 32];
    snprintf(p, sizeof(p), "%s/meta/trash", dir);
    ck_assert_int_eq(rmdir(p), 0);

    char err[256];
    ck_assert_int_eq(agent_ckpt_save_agent_id(ck, "M-S1", err, sizeof(err)), 0);
    save_task_info("fw", "t3", NULL);
    ck_assert_int_eq(agent_ckpt_remove_all(ck), 0);
    ck_assert(!exists("meta/agent_id"));
    ck_assert(!exists("meta/frameworks"));
    ck_assert(!exists("meta/trash"));
    ck_assert(exists("meta"));
}
END_TEST

/* ---- Plans ---- */

/* A real supervisor runs the task: re-attach to both. */
START_TEST(test_plan_running_supervisor)
{
    char sb[PATH_MAX];
    make_sandbox("run", sb, sizeof(sb));
    save_framework("fw");
    save_task_info("fw", "run", sb);
    save_task_state("fw", "run", MESOS__V1__TASK_STATE__TASK_RUNNING);
    char *argv[] = {"sleep", "30", NULL};
    struct agent_launch l = {
        .sandbox = sb, .file = "sleep", .argv = argv, .envp = environ};
    pid_t sup;
    int fd;
    char err[256];
    ck_assert_int_eq(agent_supervisor_start(&l, &sup, &fd, err, sizeof(err)),
                     0);
    keep_child(sup);
    pid_t task = 0;
    for (int i = 0; i < 250 && task == 0; i++) {
        if (agent_supervisor_read_pid(sb, AGENT_TASK_PID_FILE, &task) != 1)
            task = 0;
        if (task == 0)
            sleep_ms(20);
    }
    ck_assert_int_gt(task, 0);
    keep_child(task); /* its group goes at teardown */

    struct agent_rec_plan p;
    plan_of("run", &p);
    ck_assert_str_eq(agent_rec_action_name(p.action), "ATTACH");
    ck_assert_int_eq(p.sup_pid, sup);
    ck_assert_int_eq(p.task_pid, task);
    close(fd);
}
END_TEST

/* A supervisor that has not exec'd the task yet: re-attach, no task pid. */
START_TEST(test_plan_supervisor_still_launching)
{
    char sb[PATH_MAX];
    make_sandbox("l", sb, sizeof(sb));
    save_task_info("fw", "l", sb);
    save_task_state("fw", "l", MESOS__V1__TASK_STATE__TASK_STARTING);
    pid_t sup = stand_in(sb, AGENT_SUP_PID_FILE);
    struct agent_rec_plan p;
    plan_of("l", &p);
    ck_assert_int_eq(p.action, AGENT_REC_ATTACH);
    ck_assert_int_eq(p.sup_pid, sup);
    ck_assert_int_eq(p.task_pid, 0);
}
END_TEST

/* The supervisor is gone and left the task's exit status. */
START_TEST(test_plan_ended_with_status)
{
    char sb[PATH_MAX];
    make_sandbox("e", sb, sizeof(sb));
    save_task_info("fw", "e", sb);
    save_task_state("fw", "e", MESOS__V1__TASK_STATE__TASK_RUNNING);
    write_pid_file(sb, AGENT_SUP_PID_FILE, dead_pid());
    write_pid_file(sb, AGENT_TASK_PID_FILE, dead_pid());
    write_pid_file(sb, AGENT_EXIT_STATUS_FILE, 3 << 8);
    struct agent_rec_plan p;
    plan_of("e", &p);
    ck_assert_int_eq(p.action, AGENT_REC_ENDED);
    ck_assert(p.has_status);
    ck_assert(WIFEXITED(p.wait_status));
    ck_assert_int_eq(WEXITSTATUS(p.wait_status), 3);
    ck_assert_int_eq(p.task_pid, 0);
}
END_TEST

/* Gone without a status file (or an unreadable one). */
START_TEST(test_plan_ended_without_status)
{
    char sb[PATH_MAX];
    make_sandbox("n", sb, sizeof(sb));
    save_task_info("fw", "n", sb);
    save_task_state("fw", "n", MESOS__V1__TASK_STATE__TASK_RUNNING);
    write_pid_file(sb, AGENT_SUP_PID_FILE, dead_pid());
    struct agent_rec_plan p;
    plan_of("n", &p);
    ck_assert_int_eq(p.action, AGENT_REC_ENDED);
    ck_assert(!p.has_status);
    ck_assert_ptr_nonnull(strstr(p.message, "without recording"));

    char path[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/%s", sb, AGENT_EXIT_STATUS_FILE);
    ck_assert_int_eq(fs_write_atomic(path, "nonsense", 8), 0);
    plan_of("n", &p);
    ck_assert_int_eq(p.action, AGENT_REC_ENDED);
    ck_assert(!p.has_status);
    ck_assert_ptr_nonnull(strstr(p.message, "unreadable"));
}
END_TEST

/* The recorded supervisor pid now names another process (elsewhere): the
 * supervisor is gone; a task that outlived it is named for killing. */
START_TEST(test_plan_pid_reused_and_orphan_task)
{
    char sb[PATH_MAX], elsewhere[PATH_MAX];
    make_sandbox("r", sb, sizeof(sb));
    make_sandbox("x", elsewhere, sizeof(elsewhere));
    save_task_info("fw", "r", sb);
    save_task_state("fw", "r", MESOS__V1__TASK_STATE__TASK_RUNNING);
    pid_t stranger = stand_in(elsewhere, NULL);
    write_pid_file(sb, AGENT_SUP_PID_FILE, stranger);
    pid_t orphan = stand_in(sb, AGENT_TASK_PID_FILE);
    struct agent_rec_plan p;
    plan_of("r", &p);
    ck_assert_int_eq(p.action, AGENT_REC_ENDED);
    ck_assert_int_eq(p.sup_pid, 0);
    ck_assert_int_eq(p.task_pid, orphan);
    ck_assert(!p.has_status);
}
END_TEST

/* Half-written checkpoints: the launch was cut short. */
START_TEST(test_plan_half_written)
{
    char sb[PATH_MAX];
    make_sandbox("h", sb, sizeof(sb));
    /* task_info (and sandbox) but no state: INTERRUPTED; a live
     * supervisor of it is named for killing. */
    save_framework("fw");
    save_task_info("fw", "h", sb);
    struct agent_rec_plan p;
    plan_of("h", &p);
    ck_assert_int_eq(p.action, AGENT_REC_INTERRUPTED);
    ck_assert_int_eq(p.sup_pid, 0);
    ck_assert_ptr_nonnull(strstr(p.message, "restarted"));
    pid_t sup = stand_in(sb, AGENT_SUP_PID_FILE);
    plan_of("h", &p);
    ck_assert_int_eq(p.action, AGENT_REC_INTERRUPTED);
    ck_assert_int_eq(p.sup_pid, sup);

    /* Only the directory. */
    char d[PATH_MAX + 64], err[256];
    snprintf(d, sizeof(d), "%s/meta/frameworks/fw/tasks/empty", dir);
    ck_assert_int_eq(fs_mkdirs(d, err, sizeof(err)), 0);
    plan_of("empty", &p);
    ck_assert_int_eq(p.action, AGENT_REC_INTERRUPTED);

    /* task_info and a first update, no task file yet (updates are written
     * first): the update's state counts, the processes decide. */
    static const Mesos__V1__TaskState starting[] = {
        MESOS__V1__TASK_STATE__TASK_STARTING};
    Mesos__V1__TaskStatus *st[1];
    save_updates("fw", "h", starting, 1, st);
    plan_of("h", &p);
    ck_assert_int_eq(p.action, AGENT_REC_ATTACH);
    ck_assert_int_eq(p.sup_pid, sup);
    free_statuses(st, 1);
}
END_TEST

/* Decisions that need no process: a table. */
START_TEST(test_plan_table)
{
    static const Mesos__V1__TaskState fin[] = {
        MESOS__V1__TASK_STATE__TASK_FINISHED};
    static const Mesos__V1__TaskState lost[] = {
        MESOS__V1__TASK_STATE__TASK_LOST};
    Mesos__V1__TaskStatus *st[1];
    /* Terminal with its update pending: hold it. */
    save_task_info("fw", "t", NULL);
    save_task_state("fw", "t", MESOS__V1__TASK_STATE__TASK_FINISHED);
    save_updates("fw", "t", fin, 1, st);
    free_statuses(st, 1);
    /* Terminal, all acknowledged (crash before its removal): forget. */
    save_task_info("fw", "f", NULL);
    save_task_state("fw", "f", MESOS__V1__TASK_STATE__TASK_FAILED);
    save_updates("fw", "f", NULL, 0, st);
    /* Only the update of a task it never ran: resend. */
    save_updates("fw", "o", lost, 1, st);
    free_statuses(st, 1);
    /* Unreadable task file, no sandbox: ended, no status. */
    write_text("meta/frameworks/fw/tasks/c/task", "garbage");
    /* A live state without a sandbox: ended, no status. */
    save_task_info("fw", "s", NULL);
    save_task_state("fw", "s", MESOS__V1__TASK_STATE__TASK_RUNNING);

    static const struct {
        const char *task;
        enum agent_rec_action want;
    } cases[] = {
        {"t", AGENT_REC_TERMINAL},     {"f", AGENT_REC_FORGET},
        {"o", AGENT_REC_UPDATES_ONLY}, {"c", AGENT_REC_ENDED},
        {"s", AGENT_REC_ENDED},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct agent_rec_plan p;
        plan_of(cases[i].task, &p);
        ck_assert_msg(p.action == cases[i].want, "%s: %s, want %s",
                      cases[i].task, agent_rec_action_name(p.action),
                      agent_rec_action_name(cases[i].want));
        if (p.action == AGENT_REC_ENDED)
            ck_assert(!p.has_status && p.message[0] != '\0');
    }
}
END_TEST

static Suite *agent_recovery_suite(void)
{
    Suite *s = suite_create("agent_recovery");
    TCase *tc = tcase_create("recovery");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_proc_runs_in);
    tcase_add_test(tc, test_read_nothing);
    tcase_add_test(tc, test_read_round_trip);
    tcase_add_test(tc, test_read_sorted);
    tcase_add_test(tc, test_read_corrupt_files);
    tcase_add_test(tc, test_kill_file);
    tcase_add_test(tc, test_remove_leaves_no_trash);
    tcase_add_test(tc, test_plan_running_supervisor);
    tcase_add_test(tc, test_plan_supervisor_still_launching);
    tcase_add_test(tc, test_plan_ended_with_status);
    tcase_add_test(tc, test_plan_ended_without_status);
    tcase_add_test(tc, test_plan_pid_reused_and_orphan_task);
    tcase_add_test(tc, test_plan_half_written);
    tcase_add_test(tc, test_plan_table);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(agent_recovery_suite)
