/*
 * Tests of the fetcher (agent/fetcher.h): URI names and sources, archive
 * kinds, the cache's keys and LRU eviction, and whole fetches of local
 * files into a sandbox (copies, executables, output files, extraction,
 * cache hits, failures). Downloads over HTTP are covered end to end
 * (tests/e2e/e2e_fetcher.c).
 */
#include "agent/fetcher.h"
#include "agent/flags_launch.h"
#include "check_main.h"
#include "common/fs.h"
#include "common/mem.h"

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

START_TEST(test_uri_basename)
{
    static const struct {
        const char *uri, *name; /* name NULL: refused */
    } cases[] = {
        {"http://host/a/b/app.tar.gz", "app.tar.gz"},
        {"https://h:8080/x?y=1", "x?y=1"},
        {"file:///opt/pkg/tool", "tool"},
        {"/opt/pkg/tool", "tool"},
        {"/opt/pkg/dir/", "dir"},
        {"rel/path.txt", "path.txt"},
        {"plain", "plain"},
        {"http://host", NULL},
        {"http://host/", NULL},
        {"/a/it's", NULL},
        {"C:\\x", NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char err[256] = "";
        char *n = agent_fetch_uri_basename(cases[i].uri, err, sizeof(err));
        if (cases[i].name == NULL) {
            ck_assert_msg(n == NULL, "%s accepted", cases[i].uri);
            ck_assert(err[0] != '\0');
        } else {
            ck_assert_msg(n != NULL, "%s: %s", cases[i].uri, err);
            ck_assert_str_eq(n, cases[i].name);
        }
        free(n);
    }
}
END_TEST

START_TEST(test_output_file_checks)
{
    static const struct {
        const char *path;
        int ok;
    } cases[] = {
        {"out.txt", 1},   {"conf/app.conf", 1},
        {"a/./b", 1},     {"..x/y", 1},
        {"", 0},          {"/etc/passwd", 0},
        {"../escape", 0}, {"a/../../b", 0},
        {"a/..", 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char err[256] = "";
        int rc = agent_fetch_check_output_file(cases[i].path, err, sizeof(err));
        ck_assert_msg((rc == 0) == cases[i].ok, "%s: %s", cases[i].path, err);
    }
}
END_TEST

START_TEST(test_source_of)
{
    static const struct {
        const char *uri, *home;
        int rc;
        enum agent_fetch_source src;
        const char *path;
    } cases[] = {
        {"http://h/x", NULL, 0, AGENT_FETCH_NET, NULL},
        {"https://h/x", NULL, 0, AGENT_FETCH_NET, NULL},
        {"ftp://h/x", NULL, 0, AGENT_FETCH_NET, NULL},
        {"ftps://h/x", NULL, 0, AGENT_FETCH_NET, NULL},
        {"/abs/x", NULL, 0, AGENT_FETCH_LOCAL, "/abs/x"},
        {"file:///abs/x", NULL, 0, AGENT_FETCH_LOCAL, "/abs/x"},
        {"file://localhost/abs/x", NULL, 0, AGENT_FETCH_LOCAL, "/abs/x"},
        {"rel/x", "/home/fw", 0, AGENT_FETCH_LOCAL, "/home/fw/rel/x"},
        {"rel/x", NULL, -1, 0, NULL},
        {"file://rel/x", "/home", -1, 0, NULL},
        {"hdfs://nn/x", NULL, -1, 0, NULL},
        {"s3://bucket/x", NULL, -1, 0, NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char err[256] = "";
        enum agent_fetch_source src = AGENT_FETCH_NET;
        char *path = NULL;
        int rc = agent_fetch_source_of(cases[i].uri, cases[i].home, &src, &path,
                                       err, sizeof(err));
        ck_assert_msg(rc == cases[i].rc, "%s: %d %s", cases[i].uri, rc, err);
        if (rc == 0) {
            ck_assert_int_eq(src, cases[i].src);
            if (cases[i].path != NULL)
                ck_assert_str_eq(path, cases[i].path);
        }
        free(path);
    }
    char err[256];
    enum agent_fetch_source src;
    char *path = NULL;
    agent_fetch_source_of("rel/x", NULL, &src, &path, err, sizeof(err));
    ck_assert_ptr_nonnull(strstr(err, "framework home was not specified"));
}
END_TEST

START_TEST(test_archive_kind)
{
    static const struct {
        const char *name;
        enum agent_fetch_archive kind;
    } cases[] = {
        {"a.tar", AGENT_ARCHIVE_ARCHIVE},     {"a.tgz", AGENT_ARCHIVE_ARCHIVE},
        {"a.tar.gz", AGENT_ARCHIVE_ARCHIVE},  {"a.tbz2", AGENT_ARCHIVE_ARCHIVE},
        {"a.tar.bz2", AGENT_ARCHIVE_ARCHIVE}, {"a.txz", AGENT_ARCHIVE_ARCHIVE},
        {"a.tar.xz", AGENT_ARCHIVE_ARCHIVE},  {"a.zip", AGENT_ARCHIVE_ARCHIVE},
        {"a.gz", AGENT_ARCHIVE_GZIP},         {"a.txt", AGENT_ARCHIVE_NONE},
        {"a.xz", AGENT_ARCHIVE_NONE},         {"tar", AGENT_ARCHIVE_NONE},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        ck_assert_msg(agent_fetch_archive_kind(cases[i].name) == cases[i].kind,
                      "%s", cases[i].name);
}
END_TEST

START_TEST(test_cache_key)
{
    char a[AGENT_FETCH_KEY_SIZE], b[AGENT_FETCH_KEY_SIZE],
        c[AGENT_FETCH_KEY_SIZE], d[AGENT_FETCH_KEY_SIZE];
    agent_fetch_cache_key("alice", "http://h/x", a);
    agent_fetch_cache_key("alice", "http://h/x", b);
    agent_fetch_cache_key("bob", "http://h/x", c);
    agent_fetch_cache_key("alice", "http://h/y", d);
    ck_assert_str_eq(a, b);
    ck_assert_str_ne(a, c);
    ck_assert_str_ne(a, d);
    ck_assert_uint_eq(strlen(a), AGENT_FETCH_KEY_SIZE - 1);
    ck_assert_int_eq(a[0], 'c');
}
END_TEST

/* A scratch directory, removed by the test's process at exit. */
static char *scratch(void)
{
    char tmpl[] = "/tmp/offerd-fetcher-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    return xstrdup(tmpl);
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char *p = xasprintf("%s/%s", dir, name);
    ck_assert_int_eq(fs_write_atomic(p, text, strlen(text)), 0);
    free(p);
}

/* A cache entry of size bytes whose last use was `age` seconds ago. */
static void make_entry(const char *dir, const char *key, size_t size, int age)
{
    char *p = xasprintf("%s/%s", dir, key);
    char *data = xcalloc(1, size + 1);
    memset(data, 'x', size);
    ck_assert_int_eq(fs_write_atomic(p, data, size), 0);
    struct timespec ts[2];
    clock_gettime(CLOCK_REALTIME, &ts[0]);
    ts[0].tv_sec -= age;
    ts[1] = ts[0];
    ck_assert_int_eq(utimensat(AT_FDCWD, p, ts, 0), 0);
    free(data);
    free(p);
}

static bool exists(const char *dir, const char *name)
{
    char *p = xasprintf("%s/%s", dir, name);
    struct stat st;
    bool r = stat(p, &st) == 0;
    free(p);
    return r;
}

START_TEST(test_cache_lru_eviction)
{
    char *dir = scratch();
    char k[3][AGENT_FETCH_KEY_SIZE];
    agent_fetch_cache_key(NULL, "old", k[0]);
    agent_fetch_cache_key(NULL, "mid", k[1]);
    agent_fetch_cache_key(NULL, "new", k[2]);
    make_entry(dir, k[0], 100, 300);
    make_entry(dir, k[1], 100, 200);
    make_entry(dir, k[2], 100, 100);
    write_file(dir, "unrelated", "not an entry, never counted or removed");

    /* Fits already: nothing goes. */
    ck_assert_int_eq(agent_fetch_cache_make_room(dir, 400, 100), 0);
    ck_assert(exists(dir, k[0]) && exists(dir, k[1]) && exists(dir, k[2]));
    /* Larger than the whole cache: refused, nothing evicted. */
    ck_assert_int_eq(agent_fetch_cache_make_room(dir, 250, 251), -1);
    ck_assert(exists(dir, k[0]) && exists(dir, k[1]) && exists(dir, k[2]));
    /* 300 held + 100 incoming in 250: the two least recently used go. */
    ck_assert_int_eq(agent_fetch_cache_make_room(dir, 250, 100), 0);
    ck_assert(!exists(dir, k[0]) && !exists(dir, k[1]) && exists(dir, k[2]));
    ck_assert(exists(dir, "unrelated"));
    fs_remove_tree(dir);
    free(dir);
}
END_TEST

START_TEST(test_cache_skips_entries_in_use)
{
    char *dir = scratch();
    char k[2][AGENT_FETCH_KEY_SIZE];
    agent_fetch_cache_key(NULL, "old", k[0]);
    agent_fetch_cache_key(NULL, "new", k[1]);
    make_entry(dir, k[0], 100, 300);
    make_entry(dir, k[1], 100, 100);
    /* Someone copies the oldest out: its lock is held. */
    char *lock = xasprintf("%s/%s.lock", dir, k[0]);
    int fd = open(lock, O_RDWR | O_CREAT, 0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(flock(fd, LOCK_EX), 0);
    ck_assert_int_eq(agent_fetch_cache_make_room(dir, 200, 100), 0);
    ck_assert(exists(dir, k[0]) && !exists(dir, k[1]));
    /* Nothing else to evict: no room. */
    ck_assert_int_eq(agent_fetch_cache_make_room(dir, 150, 100), -1);
    ck_assert(exists(dir, k[0]));
    close(fd);
    free(lock);
    fs_remove_tree(dir);
    free(dir);
}
END_TEST

/* Lock files do not pile up: an evicted entry's lock goes with it, and a
 * lock whose entry is gone is removed unless someone holds it. */
START_TEST(test_cache_lock_files_removed)
{
    char *dir = scratch();
    char k[4][AGENT_FETCH_KEY_SIZE];
    agent_fetch_cache_key(NULL, "old", k[0]);
    agent_fetch_cache_key(NULL, "new", k[1]);
    agent_fetch_cache_key(NULL, "gone", k[2]);
    agent_fetch_cache_key(NULL, "held", k[3]);
    make_entry(dir, k[0], 100, 300);
    make_entry(dir, k[1], 100, 100);
    char name[4 * AGENT_FETCH_KEY_SIZE + 8];
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof(name), "%s.lock", k[i]);
        write_file(dir, name, "");
    }
    /* Someone waits on the lock of an entry not fetched yet. */
    char *held = xasprintf("%s/%s.lock", dir, k[3]);
    int fd = open(held, O_RDWR);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(flock(fd, LOCK_EX), 0);

    ck_assert_int_eq(agent_fetch_cache_make_room(dir, 150, 50), 0);
    ck_assert(!exists(dir, k[0]) && exists(dir, k[1]));
    snprintf(name, sizeof(name), "%s.lock", k[0]);
    ck_assert(!exists(dir, name)); /* evicted with its entry */
    snprintf(name, sizeof(name), "%s.lock", k[1]);
    ck_assert(exists(dir, name)); /* its entry is still there */
    snprintf(name, sizeof(name), "%s.lock", k[2]);
    ck_assert(!exists(dir, name)); /* an orphan */
    snprintf(name, sizeof(name), "%s.lock", k[3]);
    ck_assert(exists(dir, name)); /* held: kept */
    close(fd);
    free(held);
    fs_remove_tree(dir);
    free(dir);
}
END_TEST

/* A fetch setup: a source directory, a sandbox, a cache directory. */
struct setup {
    char *root, *src, *sandbox, *cache;
    struct agent_launch_flags lf;
};

static void setup_make(struct setup *s)
{
    char err[256];
    s->root = scratch();
    s->src = xasprintf("%s/src", s->root);
    s->sandbox = xasprintf("%s/sandbox", s->root);
    s->cache = xasprintf("%s/cache", s->root);
    ck_assert_int_eq(fs_mkdirs(s->src, err, sizeof(err)), 0);
    ck_assert_int_eq(fs_mkdirs(s->sandbox, err, sizeof(err)), 0);
    memset(&s->lf, 0, sizeof(s->lf));
    s->lf.fetcher_cache_size = 1 << 20;
    s->lf.fetcher_stall_timeout_ns = 5000000000LL;
}

static void setup_free(struct setup *s)
{
    fs_remove_tree(s->root);
    free(s->root);
    free(s->src);
    free(s->sandbox);
    free(s->cache);
}

/* Run one URI's fetch into s->sandbox; the fetcher's log in *log. */
static int fetch1(struct setup *s, Mesos__V1__CommandInfo__URI *u, char *err,
                  size_t errlen, char **log)
{
    Mesos__V1__CommandInfo__URI *uv[] = {u};
    Mesos__V1__CommandInfo cmd = MESOS__V1__COMMAND_INFO__INIT;
    cmd.n_uris = 1;
    cmd.uris = uv;
    struct agent_fetch_plan *p = NULL;
    if (agent_fetch_plan_build(&cmd, &s->lf, s->cache, "someone", &p, err,
                               errlen) != 0)
        return -2;
    ck_assert_ptr_nonnull(p);
    char *logpath = xasprintf("%s/fetch.log", s->root);
    int fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ck_assert_int_ge(fd, 0);
    int rc = agent_fetch_run(p, s->sandbox, fd, err, errlen);
    close(fd);
    uint8_t *data = NULL;
    size_t len = 0;
    ck_assert_int_eq(fs_read(logpath, 1 << 20, &data, &len), 1);
    *log = (char *)data;
    free(logpath);
    agent_fetch_plan_free(p);
    return rc;
}

static mode_t mode_of(const char *dir, const char *name)
{
    char *p = xasprintf("%s/%s", dir, name);
    struct stat st;
    ck_assert_msg(stat(p, &st) == 0, "%s missing", p);
    free(p);
    return st.st_mode & 0777;
}

static char *read_text(const char *dir, const char *name)
{
    char *p = xasprintf("%s/%s", dir, name);
    uint8_t *data = NULL;
    size_t len = 0;
    ck_assert_int_eq(fs_read(p, 1 << 20, &data, &len), 1);
    free(p);
    return (char *)data;
}

START_TEST(test_fetch_copy_executable_output_file)
{
    struct setup s;
    setup_make(&s);
    write_file(s.src, "tool", "#!/bin/sh\necho hi\n");
    write_file(s.src, "conf.txt", "k=v\n");
    char err[1024] = "", *log = NULL;
    Mesos__V1__CommandInfo__URI u = MESOS__V1__COMMAND_INFO__URI__INIT;
    char *uri = xasprintf("file://%s/tool", s.src);
    u.value = uri;
    u.has_executable = 1;
    u.executable = 1;
    ck_assert_msg(fetch1(&s, &u, err, sizeof(err), &log) == 0, "%s", err);
    ck_assert_int_eq(mode_of(s.sandbox, "tool"), 0755);
    ck_assert_ptr_nonnull(strstr(log, "directly into the sandbox"));
    free(log);
    free(uri);

    Mesos__V1__CommandInfo__URI u2 = MESOS__V1__COMMAND_INFO__URI__INIT;
    uri = xasprintf("%s/conf.txt", s.src);
    u2.value = uri;
    u2.output_file = "etc/app/app.conf";
    ck_assert_msg(fetch1(&s, &u2, err, sizeof(err), &log) == 0, "%s", err);
    char *text = read_text(s.sandbox, "etc/app/app.conf");
    ck_assert_str_eq(text, "k=v\n");
    /* extract (the default) of a non-archive leaves it as it is. */
    ck_assert_ptr_nonnull(strstr(log, "does not seem to be an archive"));
    free(text);
    free(log);
    free(uri);
    setup_free(&s);
}
END_TEST

START_TEST(test_fetch_extracts_archives)
{
    struct setup s;
    setup_make(&s);
    char *cmd = xasprintf(
        "cd %s && mkdir -p app/bin && printf 'echo ok\\n' > app/bin/run.sh && "
        "chmod 755 app/bin/run.sh && tar czf app.tar.gz app && "
        "tar cJf app.tar.xz app && tar cjf app.tbz2 app && "
        "printf 'gz\\n' > single.txt && "
        "gzip -k single.txt && rm -rf app",
        s.src);
    ck_assert_int_eq(system(cmd), 0);
    free(cmd);
    static const char *const names[] = {"app.tar.gz", "app.tar.xz", "app.tbz2"};
    for (size_t i = 0; i < 3; i++) {
        char err[1024] = "", *log = NULL;
        Mesos__V1__CommandInfo__URI u = MESOS__V1__COMMAND_INFO__URI__INIT;
        char *uri = xasprintf("%s/%s", s.src, names[i]);
        u.value = uri;
        ck_assert_msg(fetch1(&s, &u, err, sizeof(err), &log) == 0, "%s: %s",
                      names[i], err);
        ck_assert_int_eq(mode_of(s.sandbox, "app/bin/run.sh"), 0755);
        ck_assert_ptr_nonnull(strstr(log, "Extracted"));
        char *rm = xasprintf("rm -rf %s/app", s.sandbox);
        ck_assert_int_eq(system(rm), 0);
        free(rm);
        free(log);
        free(uri);
    }
    /* A lone .gz is decompressed next to it. */
    char err[1024] = "", *log = NULL;
    Mesos__V1__CommandInfo__URI u = MESOS__V1__COMMAND_INFO__URI__INIT;
    char *uri = xasprintf("%s/single.txt.gz", s.src);
    u.value = uri;
    ck_assert_msg(fetch1(&s, &u, err, sizeof(err), &log) == 0, "%s", err);
    char *text = read_text(s.sandbox, "single.txt");
    ck_assert_str_eq(text, "gz\n");
    free(text);
    free(log);
    free(uri);
    setup_free(&s);
}
END_TEST

START_TEST(test_fetch_refuses_archive_escaping_sandbox)
{
    struct setup s;
    setup_make(&s);
    /* An archive holding an absolute name, and one holding "..". */
    char *cmd = xasprintf("cd %s && printf x > victim && "
                          "tar -cPf abs.tar %s/victim && "
                          "mkdir d && cd d && tar -cPf ../dots.tar ../victim",
                          s.src, s.src);
    ck_assert_int_eq(system(cmd), 0);
    free(cmd);
    static const char *const names[] = {"abs.tar", "dots.tar"};
    for (size_t i = 0; i < 2; i++) {
        char err[1024] = "", *log = NULL;
        Mesos__V1__CommandInfo__URI u = MESOS__V1__COMMAND_INFO__URI__INIT;
        char *uri = xasprintf("%s/%s", s.src, names[i]);
        u.value = uri;
        ck_assert_int_eq(fetch1(&s, &u, err, sizeof(err), &log), -1);
        ck_assert_msg(strstr(err, "Failed to extract archive") != NULL, "%s",
                      err);
        free(log);
        free(uri);
    }
    ck_assert(!exists(s.root, "victim"));
    setup_free(&s);
}
END_TEST

START_TEST(test_fetch_cache_hit)
{
    struct setup s;
    setup_make(&s);
    write_file(s.src, "blob.txt", "cached contents\n");
    char err[1024] = "", *log = NULL;
    Mesos__V1__CommandInfo__URI u = MESOS__V1__COMMAND_INFO__URI__INIT;
    char *uri = xasprintf("file://%s/blob.txt", s.src);
    u.value = uri;
    u.has_cache = 1;
    u.cache = 1;
    ck_assert_msg(fetch1(&s, &u, err, sizeof(err), &log) == 0, "%s", err);
    ck_assert_ptr_nonnull(strstr(log, "into the cache"));
    free(log);
    /* The source is gone; the second fetch of the same user and URI is
     * served from the cache. */
    char *src = xasprintf("%s/blob.txt", s.src);
    ck_assert_int_eq(unlink(src), 0);
    char *sb1 = xasprintf("%s/blob.txt", s.sandbox);
    ck_assert_int_eq(unlink(sb1), 0);
    ck_assert_msg(fetch1(&s, &u, err, sizeof(err), &log) == 0, "%s", err);
    ck_assert_ptr_nonnull(strstr(log, "from cache"));
    char *text = read_text(s.sandbox, "blob.txt");
    ck_assert_str_eq(text, "cached contents\n");
    char key[AGENT_FETCH_KEY_SIZE];
    agent_fetch_cache_key("someone", uri, key);
    ck_assert(exists(s.cache, key));
    free(text);
    free(log);
    free(sb1);
    free(src);
    free(uri);
    setup_free(&s);
}
END_TEST

START_TEST(test_fetch_too_big_for_cache_goes_direct)
{
    struct setup s;
    setup_make(&s);
    s.lf.fetcher_cache_size = 4;
    write_file(s.src, "big.txt", "more than four bytes\n");
    char err[1024] = "", *log = NULL;
    Mesos__V1__CommandInfo__URI u = MESOS__V1__COMMAND_INFO__URI__INIT;
    char *uri = xasprintf("%s/big.txt", s.src);
    u.value = uri;
    u.has_cache = 1;
    u.cache = 1;
    ck_assert_msg(fetch1(&s, &u, err, sizeof(err), &log) == 0, "%s", err);
    ck_assert_ptr_nonnull(strstr(log, "does not fit in the fetcher cache"));
    char key[AGENT_FETCH_KEY_SIZE];
    agent_fetch_cache_key("someone", uri, key);
    ck_assert(!exists(s.cache, key));
    char *text = read_text(s.sandbox, "big.txt");
    ck_assert_str_eq(text, "more than four bytes\n");
    free(text);
    free(log);
    free(uri);
    setup_free(&s);
}
END_TEST

START_TEST(test_fetch_failures)
{
    struct setup s;
    setup_make(&s);
    char err[1024] = "", *log = NULL;
    Mesos__V1__CommandInfo__URI u = MESOS__V1__COMMAND_INFO__URI__INIT;
    u.value = "/nonexistent/offerd/x.tar.gz";
    ck_assert_int_eq(fetch1(&s, &u, err, sizeof(err), &log), -1);
    ck_assert_msg(
        strncmp(err, "Failed to fetch '/nonexistent/offerd/x.tar.gz': ", 48) ==
            0,
        "%s", err);
    ck_assert_ptr_nonnull(strstr(err, "No such file"));
    /* The log (the sandbox's stderr) says it too. */
    ck_assert_ptr_nonnull(strstr(log, err));
    free(log);
    log = NULL;
    u.value = "relative/x";
    ck_assert_int_eq(fetch1(&s, &u, err, sizeof(err), &log), -1);
    ck_assert_ptr_nonnull(strstr(err, "framework home was not specified"));
    free(log);
    log = NULL;
    /* Refused when the plan is built. */
    static const struct {
        const char *uri, *out, *why;
    } bad[] = {
        {"http://host", NULL, "Malformed URI"},
        {"/a/it's", NULL, "Illegal characters"},
        {"/a/x", "/etc/x", "within the sandbox"},
        {"/a/x", "../x", "within the sandbox"},
        {"/a/x", "", "empty"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        Mesos__V1__CommandInfo__URI b = MESOS__V1__COMMAND_INFO__URI__INIT;
        b.value = (char *)bad[i].uri;
        b.output_file = (char *)bad[i].out;
        ck_assert_int_eq(fetch1(&s, &b, err, sizeof(err), &log), -2);
        ck_assert_msg(strstr(err, bad[i].why) != NULL, "%s", err);
    }
    setup_free(&s);
}
END_TEST

static Suite *agent_fetcher_suite(void)
{
    Suite *s = suite_create("agent_fetcher");
    TCase *tc = tcase_create("fetcher");
    tcase_add_test(tc, test_uri_basename);
    tcase_add_test(tc, test_output_file_checks);
    tcase_add_test(tc, test_source_of);
    tcase_add_test(tc, test_archive_kind);
    tcase_add_test(tc, test_cache_key);
    tcase_add_test(tc, test_cache_lru_eviction);
    tcase_add_test(tc, test_cache_skips_entries_in_use);
    tcase_add_test(tc, test_cache_lock_files_removed);
    tcase_add_test(tc, test_fetch_copy_executable_output_file);
    tcase_add_test(tc, test_fetch_extracts_archives);
    tcase_add_test(tc, test_fetch_refuses_archive_escaping_sandbox);
    tcase_add_test(tc, test_fetch_cache_hit);
    tcase_add_test(tc, test_fetch_too_big_for_cache_goes_direct);
    tcase_add_test(tc, test_fetch_failures);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(agent_fetcher_suite)
