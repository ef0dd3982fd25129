/*
 * Tests of the agent's checkpoint files (agent/checkpoint.h, common/fs.h):
 * atomic replacement, bounded reads, id safety, the layout, and the
 * RecordIO file of pending updates.
 */
#include "agent/checkpoint.h"
#include "common/fs.h"
#include "agent/status.h"
#include "check_main.h"
#include "common/json_pb.h"
#include "common/recordio.h"

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[PATH_MAX];

static void setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/offerd-ckpt-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
    ck_assert_int_eq(fs_remove_tree(dir), 0);
    struct stat st;
    ck_assert_int_ne(stat(dir, &st), 0);
}

static int exists(const char *rel)
{
    char p[PATH_MAX + 256];
    snprintf(p, sizeof(p), "%s/%s", dir, rel);
    struct stat st;
    return stat(p, &st) == 0;
}

START_TEST(test_write_atomic_replaces)
{
    char p[PATH_MAX + 16];
    snprintf(p, sizeof(p), "%s/f", dir);
    ck_assert_int_eq(fs_write_atomic(p, "first", 5), 0);
    ck_assert_int_eq(fs_write_atomic(p, "second!", 7), 0);
    uint8_t *data;
    size_t len;
    ck_assert_int_eq(fs_read(p, 100, &data, &len), 1);
    ck_assert_uint_eq(len, 7);
    ck_assert_str_eq((char *)data, "second!");
    free(data);
    /* No temporary file is left. */
    ck_assert(!exists("f.tmp"));
    /* Into a missing directory: fails, errno set. */
    snprintf(p, sizeof(p), "%s/no/f", dir);
    ck_assert_int_eq(fs_write_atomic(p, "x", 1), -1);
    ck_assert_int_eq(errno, ENOENT);
}
END_TEST

START_TEST(test_read_bounds)
{
    char p[PATH_MAX + 16];
    snprintf(p, sizeof(p), "%s/f", dir);
    char big[10000];
    memset(big, 'x', sizeof(big));
    ck_assert_int_eq(fs_write_atomic(p, big, sizeof(big)), 0);
    uint8_t *data = NULL;
    size_t len = 0;
    ck_assert_int_eq(fs_read(p, sizeof(big), &data, &len), 1);
    ck_assert_uint_eq(len, sizeof(big));
    free(data);
    ck_assert_int_eq(fs_read(p, sizeof(big) - 1, &data, &len), -1);
    ck_assert_int_eq(errno, EFBIG);
    snprintf(p, sizeof(p), "%s/missing", dir);
    ck_assert_int_eq(fs_read(p, 100, &data, &len), 0);
    /* An empty file reads as empty. */
    snprintf(p, sizeof(p), "%s/empty", dir);
    ck_assert_int_eq(fs_write_atomic(p, "", 0), 0);
    ck_assert_int_eq(fs_read(p, 100, &data, &len), 1);
    ck_assert_uint_eq(len, 0);
    free(data);
}
END_TEST

START_TEST(test_mkdirs)
{
    char p[PATH_MAX + 16], err[256];
    snprintf(p, sizeof(p), "%s/a/b/c", dir);
    ck_assert_int_eq(fs_mkdirs(p, err, sizeof(err)), 0);
    ck_assert_int_eq(fs_mkdirs(p, err, sizeof(err)), 0);
    ck_assert(exists("a/b/c"));
    snprintf(p, sizeof(p), "%s/file", dir);
    ck_assert_int_eq(fs_write_atomic(p, "x", 1), 0);
    snprintf(p, sizeof(p), "%s/file/sub", dir);
    ck_assert_int_eq(fs_mkdirs(p, err, sizeof(err)), -1);
}
END_TEST

START_TEST(test_id_safety)
{
    static const struct {
        const char *id;
        bool safe;
    } cases[] = {
        {"task-1", true}, {"a.b_c:d", true}, {"..x", true},
        {"", false},      {".", false},      {"..", false},
        {"a/b", false},   {"a\\b", false},   {"a b", false},
        {"tab\t", false}, {"\x7f", false},   {"caf\xc3\xa9", false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        ck_assert_msg(agent_ckpt_id_is_safe(cases[i].id) == cases[i].safe,
                      "'%s'", cases[i].id);
    char longid[300];
    memset(longid, 'a', sizeof(longid) - 1);
    longid[sizeof(longid) - 1] = '\0';
    ck_assert(!agent_ckpt_id_is_safe(longid));
    longid[255] = '\0';
    ck_assert(agent_ckpt_id_is_safe(longid));
}
END_TEST

START_TEST(test_agent_id)
{
    char err[512], id[128];
    struct agent_ckpt *ck = agent_ckpt_new(dir, err, sizeof(err));
    ck_assert_ptr_nonnull(ck);
    ck_assert_int_eq(
        agent_ckpt_load_agent_id(ck, id, sizeof(id), err, sizeof(err)), 0);
    ck_assert_int_eq(agent_ckpt_save_agent_id(ck, "M-S7", err, sizeof(err)), 0);
    ck_assert_int_eq(
        agent_ckpt_load_agent_id(ck, id, sizeof(id), err, sizeof(err)), 1);
    ck_assert_str_eq(id, "M-S7");
    ck_assert(exists("meta/agent_id"));
    /* A new checkpointer over the same work_dir reads it back. */
    agent_ckpt_free(ck);
    ck = agent_ckpt_new(dir, err, sizeof(err));
    ck_assert_int_eq(
        agent_ckpt_load_agent_id(ck, id, sizeof(id), err, sizeof(err)), 1);
    ck_assert_str_eq(id, "M-S7");
    /* Too small a buffer is an error, not a truncation. */
    ck_assert_int_eq(agent_ckpt_load_agent_id(ck, id, 3, err, sizeof(err)), -1);
    agent_ckpt_free(ck);
}
END_TEST

static Mesos__V1__TaskInfo *task_info(const char *id)
{
    static Mesos__V1__TaskID tid;
    static Mesos__V1__AgentID aid;
    static Mesos__V1__TaskInfo ti;
    mesos__v1__task_id__init(&tid);
    tid.value = (char *)id;
    mesos__v1__agent_id__init(&aid);
    aid.value = "M-S7";
    mesos__v1__task_info__init(&ti);
    ti.name = "n";
    ti.task_id = &tid;
    ti.agent_id = &aid;
    return &ti;
}

START_TEST(test_task_layout_and_removal)
{
    char err[512];
    struct agent_ckpt *ck = agent_ckpt_new(dir, err, sizeof(err));
    Mesos__V1__FrameworkInfo fi = MESOS__V1__FRAMEWORK_INFO__INIT;
    fi.user = "u";
    fi.name = "f";
    ck_assert_int_eq(agent_ckpt_save_framework(ck, "fw", &fi, err, sizeof(err)),
                     0);
    ck_assert_int_eq(agent_ckpt_save_task_info(ck, "fw", task_info("t1"),
                                               "/sb/t1", err, sizeof(err)),
                     0);
    ck_assert_int_eq(agent_ckpt_save_task_info(ck, "fw", task_info("t2"),
                                               "/sb/t2", err, sizeof(err)),
                     0);
    ck_assert(exists("meta/frameworks/fw/framework_info"));
    ck_assert(exists("meta/frameworks/fw/tasks/t1/task_info"));
    ck_assert(exists("meta/frameworks/fw/tasks/t1/sandbox"));

    /* The TaskInfo reads back. */
    char p[PATH_MAX + 64];
    snprintf(p, sizeof(p), "%s/meta/frameworks/fw/tasks/t1/task_info", dir);
    uint8_t *data;
    size_t len;
    ck_assert_int_eq(fs_read(p, 1 << 20, &data, &len), 1);
    ProtobufCMessage *m = jpb_from_pb(&mesos__v1__task_info__descriptor, data,
                                      len, err, sizeof(err));
    ck_assert_msg(m != NULL, "%s", err);
    ck_assert_str_eq(((Mesos__V1__TaskInfo *)m)->task_id->value, "t1");
    jpb_free(m);
    free(data);

    /* Unsafe ids are refused. */
    ck_assert_int_eq(agent_ckpt_save_task_info(ck, "fw", task_info("../x"),
                                               "/sb", err, sizeof(err)),
                     -1);
    ck_assert_int_eq(agent_ckpt_save_framework(ck, "..", &fi, err, sizeof(err)),
                     -1);

    /* Removing one task keeps the framework; the last removes it. */
    ck_assert_int_eq(agent_ckpt_remove_task(ck, "fw", "t1"), 0);
    ck_assert(!exists("meta/frameworks/fw/tasks/t1"));
    ck_assert(exists("meta/frameworks/fw/framework_info"));
    ck_assert_int_eq(agent_ckpt_remove_task(ck, "fw", "t2"), 0);
    ck_assert(!exists("meta/frameworks/fw"));
    agent_ckpt_free(ck);
}
END_TEST

/* Write text to meta/frameworks/fw/tasks/t1/<name>, or remove that file
 * when text is NULL. */
static void put_task_file(const char *name, const char *text)
{
    char p[PATH_MAX + 256];
    snprintf(p, sizeof(p), "%s/meta/frameworks/fw/tasks/t1/%s", dir, name);
    if (text == NULL)
        ck_assert(unlink(p) == 0 || errno == ENOENT);
    else
        ck_assert_int_eq(fs_write_atomic(p, text, strlen(text)), 0);
}

/* The sandbox and kill files read back, and malformed ones are skipped and
 * counted as problems. */
START_TEST(test_sandbox_and_kill_files)
{
    static const struct {
        const char *sandbox; /* NULL: the file is removed */
        const char *kill;    /* NULL: the file is removed */
        const char *want_sandbox;
        bool want_kill;
        int64_t grace;
        bool has_reason;
        int reason;
        size_t problems;
    } cases[] = {
        {"/sb/t1", "5 100 0\n", "/sb/t1", true, 5, false, 0, 0},
        {"/sb/t1\n\n", "5 100 1 7\n", "/sb/t1", true, 5, true, 7, 0},
        {NULL, NULL, NULL, false, 0, false, 0, 0},
        {"", "5 100\n", NULL, false, 0, false, 0, 2},
        {"relative/path", "-1 100 0\n", NULL, false, 0, false, 0, 2},
        {"/a\nb", "5 100 2\n", NULL, false, 0, false, 0, 2},
        {"/sb/t1", "5 100 0", "/sb/t1", false, 0, false, 0, 1},
        {"/sb/t1", "5 100 0 -3\n", "/sb/t1", false, 0, false, 0, 1},
        {"/sb/t1", "5 100 0\nx", "/sb/t1", false, 0, false, 0, 1},
    };
    char err[512];
    struct agent_ckpt *ck = agent_ckpt_new(dir, err, sizeof(err));
    ck_assert_ptr_nonnull(ck);
    ck_assert_int_eq(agent_ckpt_save_task_info(ck, "fw", task_info("t1"),
                                               "/sb/t1", err, sizeof(err)),
                     0);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        put_task_file("sandbox", cases[i].sandbox);
        put_task_file("kill", cases[i].kill);
        struct agent_ckpt_state st;
        agent_ckpt_read(ck, &st);
        ck_assert_uint_eq(st.ntasks, 1);
        const struct agent_ckpt_task *t = &st.tasks[0];
        if (cases[i].want_sandbox != NULL)
            ck_assert_str_eq(t->sandbox, cases[i].want_sandbox);
        else
            ck_assert_ptr_null(t->sandbox);
        ck_assert_msg(t->has_kill == cases[i].want_kill, "case %zu", i);
        if (cases[i].want_kill) {
            ck_assert_int_eq(t->kill.grace_ns, cases[i].grace);
            ck_assert_int_eq(t->kill.deadline_wall_ns, 100);
            ck_assert(t->kill.has_reason == cases[i].has_reason);
            ck_assert_int_eq(t->kill.reason, cases[i].reason);
        }
        ck_assert_msg(st.problems == cases[i].problems,
                      "case %zu: %zu problems", i, st.problems);
        agent_ckpt_state_clear(&st);
    }
    agent_ckpt_free(ck);
}
END_TEST

START_TEST(test_updates_file)
{
    char err[512];
    struct agent_ckpt *ck = agent_ckpt_new(dir, err, sizeof(err));
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = "fw";
    Offerd__Agent__Call__Update u[2];
    const Offerd__Agent__Call__Update *pv[2];
    Mesos__V1__TaskStatus *st[2];
    for (int i = 0; i < 2; i++) {
        struct agent_status_spec spec = {
            .task_id = "t",
            .state = i == 0 ? MESOS__V1__TASK_STATE__TASK_STARTING
                            : MESOS__V1__TASK_STATE__TASK_RUNNING,
            .source = MESOS__V1__TASK_STATUS__SOURCE__SOURCE_EXECUTOR,
            .timestamp = 1,
        };
        st[i] = agent_status_new(&spec);
        offerd__agent__call__update__init(&u[i]);
        u[i].framework_id = &fid;
        u[i].status = st[i];
        pv[i] = &u[i];
    }
    ck_assert_int_eq(
        agent_ckpt_save_updates(ck, "fw", "t", pv, 2, err, sizeof(err)), 0);
    char p[PATH_MAX + 64];
    snprintf(p, sizeof(p), "%s/meta/frameworks/fw/tasks/t/updates", dir);
    uint8_t *data;
    size_t len;
    ck_assert_int_eq(fs_read(p, 1 << 20, &data, &len), 1);
    /* Two RecordIO records, oldest first. */
    struct rio_decoder *d = rio_decoder_new(1 << 20);
    size_t off = 0;
    for (int i = 0; i < 2; i++) {
        size_t used;
        const uint8_t *rec;
        size_t rlen;
        ck_assert_int_eq(
            rio_decoder_feed(d, data + off, len - off, &used, &rec, &rlen),
            RIO_RECORD);
        off += used;
        ProtobufCMessage *m =
            jpb_from_pb(&offerd__agent__call__update__descriptor, rec, rlen,
                        err, sizeof(err));
        ck_assert_msg(m != NULL, "%s", err);
        const Offerd__Agent__Call__Update *back =
            (const Offerd__Agent__Call__Update *)m;
        ck_assert_int_eq(back->status->state, st[i]->state);
        ck_assert(memcmp(back->status->uuid.data, st[i]->uuid.data, 16) == 0);
        jpb_free(m);
    }
    ck_assert_uint_eq(off, len);
    rio_decoder_free(d);
    free(data);
    /* None left: an empty file. */
    ck_assert_int_eq(
        agent_ckpt_save_updates(ck, "fw", "t", NULL, 0, err, sizeof(err)), 0);
    ck_assert_int_eq(fs_read(p, 1 << 20, &data, &len), 1);
    ck_assert_uint_eq(len, 0);
    free(data);
    for (int i = 0; i < 2; i++)
        jpb_free(&st[i]->base);
    agent_ckpt_free(ck);
}
END_TEST

START_TEST(test_remove_tree_leaves_symlink_targets)
{
    char p[PATH_MAX + 64], t[PATH_MAX + 64], err[256];
    snprintf(p, sizeof(p), "%s/tree/sub", dir);
    ck_assert_int_eq(fs_mkdirs(p, err, sizeof(err)), 0);
    snprintf(t, sizeof(t), "%s/keep", dir);
    ck_assert_int_eq(fs_write_atomic(t, "k", 1), 0);
    snprintf(p, sizeof(p), "%s/tree/sub/link", dir);
    ck_assert_int_eq(symlink(t, p), 0);
    snprintf(p, sizeof(p), "%s/tree", dir);
    ck_assert_int_eq(fs_remove_tree(p), 0);
    ck_assert(!exists("tree"));
    ck_assert(exists("keep"));
    ck_assert_int_eq(fs_remove_tree(p), 0); /* already gone */
}
END_TEST

static Suite *agent_checkpoint_suite(void)
{
    Suite *s = suite_create("agent_checkpoint");
    TCase *tc = tcase_create("checkpoint");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_write_atomic_replaces);
    tcase_add_test(tc, test_read_bounds);
    tcase_add_test(tc, test_mkdirs);
    tcase_add_test(tc, test_id_safety);
    tcase_add_test(tc, test_agent_id);
    tcase_add_test(tc, test_task_layout_and_removal);
    tcase_add_test(tc, test_sandbox_and_kill_files);
    tcase_add_test(tc, test_updates_file);
    tcase_add_test(tc, test_remove_tree_leaves_symlink_targets);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(agent_checkpoint_suite)
