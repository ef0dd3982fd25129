/*
 * Tests of the virtual file tree (common/files.h): path confinement and
 * entry rendering over a temporary sandboxes tree with symlinks that lead
 * in and out, attached as the agent attaches it; a file attached alone, as
 * the master attaches its log.
 */
#include "common/files.h"
#include "check_main.h"

#include <check.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static char top[PATH_MAX];  /* temporary directory */
static char root[PATH_MAX]; /* top/sandboxes, canonical */
static struct files *tree;  /* root attached as root, the base */

static void mk(const char *rel, int dir)
{
    char p[PATH_MAX + 64];
    snprintf(p, sizeof(p), "%s/%s", top, rel);
    if (dir) {
        ck_assert_int_eq(mkdir(p, 0755), 0);
    } else {
        int fd = open(p, O_WRONLY | O_CREAT, 0644);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, "hello", 5), 5);
        close(fd);
    }
}

/* A UNIX socket bound at top/rel; open() on it fails with ENXIO. */
static void mk_socket(const char *rel)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int n = snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", top, rel);
    ck_assert(n > 0 && (size_t)n < sizeof(sa.sun_path));
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    ck_assert_int_ge(s, 0);
    ck_assert_int_eq(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
    close(s); /* the socket file stays */
}

static void setup(void)
{
    char tmpl[] = "/tmp/offerd-files-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    ck_assert_ptr_nonnull(realpath(tmpl, top));
    mk("sandboxes", 1);
    mk("sandboxes/fw", 1);
    mk("sandboxes/fw/t", 1);
    mk("sandboxes/fw/t/run", 1);
    mk("sandboxes/fw/t/run/stdout", 0);
    mk("secret", 0);
    mk("sandboxes-evil", 1);
    mk("sandboxes-evil/x", 0);
    char p[PATH_MAX + 64], target[PATH_MAX + 64];
    snprintf(p, sizeof(p), "%s/sandboxes/fw/t/run/out", top);
    snprintf(target, sizeof(target), "%s/secret", top);
    ck_assert_int_eq(symlink(target, p), 0);
    snprintf(p, sizeof(p), "%s/sandboxes/fw/t/run/in", top);
    ck_assert_int_eq(symlink("stdout", p), 0);
    snprintf(p, sizeof(p), "%s/sandboxes/fw/t/run/up", top);
    ck_assert_int_eq(symlink("../../../..", p), 0);
    snprintf(p, sizeof(p), "%s/sandboxes/fw/t/run/fifo", top);
    ck_assert_int_eq(mkfifo(p, 0644), 0);
    mk_socket("sandboxes/fw/t/run/sock");
    snprintf(p, sizeof(p), "%s/sandboxes", top);
    ck_assert_ptr_nonnull(realpath(p, root));
    tree = files_new();
    files_set_base(tree, root);
    char err[PATH_MAX + 64];
    ck_assert_int_eq(files_attach(tree, root, root, err, sizeof(err)), 0);
}

static void teardown(void)
{
    files_free(tree);
    char cmd[PATH_MAX + 32];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_confinement_table)
{
    static const struct {
        const char *path; /* "@" stands for the root */
        enum files_result want;
        const char *suffix; /* of the resolved path when OK */
    } cases[] = {
        {"fw/t/run/stdout", FILES_OK, "/fw/t/run/stdout"},
        {"@/fw/t/run/stdout", FILES_OK, "/fw/t/run/stdout"},
        {"fw//t/./run/../run/stdout", FILES_OK, "/fw/t/run/stdout"},
        {"fw", FILES_OK, "/fw"},
        {".", FILES_OK, "/sandboxes"},
        {"@", FILES_OK, "/sandboxes"},
        {"fw/t/run/in", FILES_OK, "/fw/t/run/stdout"},
        {"fw/t/run/missing", FILES_NOT_FOUND, NULL},
        {"nope", FILES_NOT_FOUND, NULL},
        {"..", FILES_FORBIDDEN, NULL},
        {"../secret", FILES_FORBIDDEN, NULL},
        {"../nonexistent", FILES_FORBIDDEN, NULL},
        {"fw/../../secret", FILES_FORBIDDEN, NULL},
        {"fw/t/run/../../../../secret", FILES_FORBIDDEN, NULL},
        {"@/../secret", FILES_FORBIDDEN, NULL},
        {"@/fw/../../secret", FILES_FORBIDDEN, NULL},
        {"fw/t/run/out", FILES_FORBIDDEN, NULL},
        {"fw/t/run/up", FILES_FORBIDDEN, NULL},
        {"fw/t/run/up/secret", FILES_FORBIDDEN, NULL},
        {"/etc/passwd", FILES_NOT_FOUND, NULL},
        {"/", FILES_NOT_FOUND, NULL},
        {"@-evil/x", FILES_NOT_FOUND, NULL},
        {"../sandboxes-evil/x", FILES_FORBIDDEN, NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char path[PATH_MAX + 64];
        if (cases[i].path[0] == '@')
            snprintf(path, sizeof(path), "%s%s", root, cases[i].path + 1);
        else
            snprintf(path, sizeof(path), "%s", cases[i].path);
        char out[PATH_MAX], err[PATH_MAX + 64] = "";
        enum files_result r = files_resolve(tree, path, out, err, sizeof(err));
        ck_assert_msg(r == cases[i].want, "%s: %d (%s)", cases[i].path, (int)r,
                      err);
        if (r == FILES_OK) {
            size_t ol = strlen(out), sl = strlen(cases[i].suffix);
            ck_assert_msg(ol >= sl &&
                              strcmp(out + ol - sl, cases[i].suffix) == 0,
                          "%s -> %s", cases[i].path, out);
            ck_assert(strncmp(out, root, strlen(root)) == 0);
        } else {
            ck_assert(err[0] != '\0');
        }
    }
}
END_TEST

START_TEST(test_text_json)
{
    static const struct {
        const char *in;
        size_t len;
        const char *out;
    } cases[] = {
        {"plain\n", 6, "plain\n"},
        {"caf\xc3\xa9", 5, "caf\xc3\xa9"},
        {"\xff", 1, "\xef\xbf\xbd"},
        {"a\xc3", 2, "a\xef\xbf\xbd"},               /* cut sequence */
        {"\xc0\xaf", 2, "\xef\xbf\xbd\xef\xbf\xbd"}, /* overlong */
        {"\xed\xa0\x80", 3,
         "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}, /* surrogate */
        {"\xf0\x9f\x98\x80", 4, "\xf0\x9f\x98\x80"},
        {"", 0, ""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *j = files_text_json((const uint8_t *)cases[i].in, cases[i].len);
        ck_assert_ptr_nonnull(j);
        ck_assert_msg(strcmp(json_string_value(j), cases[i].out) == 0,
                      "case %zu", i);
        json_decref(j);
    }
    /* A NUL byte stays (as \u0000 in JSON). */
    json_t *j = files_text_json((const uint8_t *)"a\0b", 3);
    ck_assert_uint_eq(json_string_length(j), 3);
    json_decref(j);
}
END_TEST

START_TEST(test_entry_json)
{
    struct stat st;
    memset(&st, 0, sizeof(st));
    st.st_mode = S_IFDIR | 0750;
    st.st_size = 4096;
    st.st_mtime = 1348258116;
    st.st_nlink = 5;
    st.st_uid = 0;
    st.st_gid = 0;
    json_t *j = files_entry_json("fw/t/run", &st);
    ck_assert_str_eq(json_string_value(json_object_get(j, "path")), "fw/t/run");
    ck_assert_str_eq(json_string_value(json_object_get(j, "mode")),
                     "drwxr-x---");
    ck_assert_int_eq(json_integer_value(json_object_get(j, "size")), 4096);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "mtime")),
                     1348258116);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "nlink")), 5);
    ck_assert_str_eq(json_string_value(json_object_get(j, "uid")), "root");
    json_decref(j);
    st.st_mode = S_IFREG | 0644;
    st.st_uid = 4000321; /* no such user: the number */
    j = files_entry_json("x", &st);
    ck_assert_str_eq(json_string_value(json_object_get(j, "mode")),
                     "-rw-r--r--");
    ck_assert_str_eq(json_string_value(json_object_get(j, "uid")), "4000321");
    json_decref(j);
}
END_TEST

START_TEST(test_read_table)
{
    /* stdout holds "hello" (5 bytes). */
    static const struct {
        const char *path;
        int64_t offset, length;
        int status;
        const char *data; /* when 200 */
    } cases[] = {
        {"fw/t/run/stdout", 0, -1, 200, "hello"},
        {"fw/t/run/stdout", 1, 3, 200, "ell"},
        {"fw/t/run/stdout", 3, 100, 200, "lo"},
        {"fw/t/run/stdout", 5, -1, 200, ""},
        {"fw/t/run/stdout", 99, 1, 200, ""},
        {"fw/t/run/stdout", -1, -1, 200, ""},
        {"fw/t/run/stdout", 0, 0, 200, ""},
        {"fw/t/run/in", 0, -1, 200, "hello"},
        {"fw/t/run", 0, -1, 400, NULL},
        {"fw/t/run/out", 0, -1, 403, NULL},
        {"../secret", 0, -1, 403, NULL},
        {"fw/t/run/missing", 0, -1, 404, NULL},
        {"fw/t/run/fifo", 0, -1, 400, NULL},
        {"fw/t/run/sock", 0, -1, 400, NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint8_t *data = NULL;
        size_t len = 0;
        int64_t size = -7;
        char err[PATH_MAX + 64] = "";
        int status =
            files_read(tree, cases[i].path, cases[i].offset, cases[i].length,
                       &data, &len, &size, err, sizeof(err));
        ck_assert_msg(status == cases[i].status, "case %zu: %d %s", i, status,
                      err);
        if (status == 200) {
            ck_assert_int_eq(size, 5);
            ck_assert_uint_eq(len, strlen(cases[i].data));
            ck_assert(len == 0 || memcmp(data, cases[i].data, len) == 0);
        } else {
            ck_assert(err[0] != '\0');
        }
        free(data);
    }
}
END_TEST

/* /files/download reads the whole file, with files_read's refusals. */
START_TEST(test_download)
{
    static const struct {
        const char *path;
        int status;
    } cases[] = {
        {"fw/t/run/stdout", 200}, {"fw/t/run/in", 200},
        {"fw/t/run", 400},        {"fw/t/run/fifo", 400},
        {"fw/t/run/sock", 400},   {"fw/t/run/out", 403},
        {"../secret", 403},       {"fw/t/run/missing", 404},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint8_t *data = NULL;
        size_t len = 0;
        char err[PATH_MAX + 64] = "";
        int status =
            files_download(tree, cases[i].path, &data, &len, err, sizeof(err));
        ck_assert_msg(status == cases[i].status, "case %zu: %d %s", i, status,
                      err);
        if (status == 200)
            ck_assert(len == 5 && memcmp(data, "hello", 5) == 0);
        else
            ck_assert(err[0] != '\0' && data == NULL);
        free(data);
    }
}
END_TEST

static void collect(const char *vpath, const struct stat *st, void *arg)
{
    (void)st;
    char *out = arg; /* 1024 bytes */
    size_t n = strlen(out);
    snprintf(out + n, 1024 - n, "%s;", vpath);
}

START_TEST(test_list)
{
    char out[1024] = "", err[PATH_MAX + 64];
    ck_assert_int_eq(
        files_list(tree, "fw/t/run/", collect, out, err, sizeof(err)), 200);
    /* Listed (browse shows them, as Mesos does); only reading is refused. */
    ck_assert_str_eq(out, "fw/t/run/fifo;fw/t/run/in;fw/t/run/out;"
                          "fw/t/run/sock;fw/t/run/stdout;fw/t/run/up;");
    out[0] = '\0';
    ck_assert_int_eq(
        files_list(tree, "fw/t/run/stdout", collect, out, err, sizeof(err)),
        200);
    ck_assert_str_eq(out, "");
    ck_assert_int_eq(files_list(tree, "..", collect, out, err, sizeof(err)),
                     403);
    ck_assert_int_eq(files_list(tree, "nope", collect, out, err, sizeof(err)),
                     404);
    ck_assert_str_eq(out, "");
}
END_TEST

/* A file attached alone (the master's log as /master/log): only the file
 * itself resolves, with or without a trailing '/' and relative to the
 * default base "/"; a listing of it is empty; /files/debug's map shows it;
 * once the file is gone it is not found. */
START_TEST(test_attached_file)
{
    struct files *f = files_new();
    char err[PATH_MAX + 64], out[PATH_MAX];
    char log[PATH_MAX + 64];
    snprintf(log, sizeof(log), "%s/sandboxes/fw/t/run/stdout", top);
    ck_assert_int_eq(
        files_attach(f, "/nonexistent/x.log", "/master/log", err, sizeof(err)),
        -1);
    ck_assert(strstr(err, "/nonexistent/x.log") != NULL);
    ck_assert_int_eq(files_attach(f, log, "relative", err, sizeof(err)), -1);
    ck_assert_int_eq(files_attach(f, log, "/master/log/", err, sizeof(err)), 0);
    static const struct {
        const char *path;
        enum files_result want;
    } cases[] = {
        {"/master/log", FILES_OK},
        {"/master/log/", FILES_OK},
        {"//master//log", FILES_OK},
        {"master/log", FILES_OK},
        {"/master/log/x", FILES_NOT_FOUND},
        {"/master/log/..", FILES_NOT_FOUND},
        {"/master", FILES_NOT_FOUND},
        {"/", FILES_NOT_FOUND},
        {"/master/logs", FILES_NOT_FOUND},
        {"/master/../master/log", FILES_NOT_FOUND},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        enum files_result r =
            files_resolve(f, cases[i].path, out, err, sizeof(err));
        ck_assert_msg(r == cases[i].want, "%s: %d (%s)", cases[i].path, (int)r,
                      err);
        if (r == FILES_OK)
            ck_assert_str_eq(out, log);
    }
    char listed[1024] = "";
    ck_assert_int_eq(
        files_list(f, "/master/log", collect, listed, err, sizeof(err)), 200);
    ck_assert_str_eq(listed, "");
    uint8_t *data = NULL;
    size_t len = 0;
    int64_t size = 0;
    ck_assert_int_eq(files_read(f, "/master/log", 1, 3, &data, &len, &size, err,
                                sizeof(err)),
                     200);
    ck_assert_uint_eq(len, 3);
    ck_assert(memcmp(data, "ell", 3) == 0);
    ck_assert_int_eq(size, 5);
    free(data);
    json_t *dbg = files_debug_json(f);
    ck_assert_str_eq(json_string_value(json_object_get(dbg, "/master/log")),
                     log);
    ck_assert_uint_eq(json_object_size(dbg), 1);
    json_decref(dbg);
    /* Attaching the same virtual path again replaces it. */
    char other[PATH_MAX + 64];
    snprintf(other, sizeof(other), "%s/secret", top);
    ck_assert_int_eq(files_attach(f, other, "/master/log", err, sizeof(err)),
                     0);
    ck_assert_int_eq(files_resolve(f, "/master/log", out, err, sizeof(err)),
                     FILES_OK);
    ck_assert_str_eq(out, other);
    ck_assert_int_eq(unlink(other), 0);
    ck_assert_int_eq(files_resolve(f, "/master/log", out, err, sizeof(err)),
                     FILES_NOT_FOUND);
    ck_assert_int_eq(files_read(f, "/master/log", 0, -1, &data, &len, &size,
                                err, sizeof(err)),
                     404);
    files_free(f);
}
END_TEST

/* A directory attached under another virtual path: the rest of the path is
 * joined to the real directory, confined to it. */
START_TEST(test_attached_directory_elsewhere)
{
    struct files *f = files_new();
    char err[PATH_MAX + 64], out[PATH_MAX];
    ck_assert_int_eq(files_attach(f, root, "/sandboxes", err, sizeof(err)), 0);
    ck_assert_int_eq(
        files_resolve(f, "/sandboxes/fw/t/run/stdout", out, err, sizeof(err)),
        FILES_OK);
    ck_assert(strncmp(out, root, strlen(root)) == 0);
    ck_assert_int_eq(
        files_resolve(f, "/sandboxes/../secret", out, err, sizeof(err)),
        FILES_FORBIDDEN);
    ck_assert_int_eq(
        files_resolve(f, "/sandboxes/fw/t/run/out", out, err, sizeof(err)),
        FILES_FORBIDDEN);
    ck_assert_int_eq(files_resolve(f, root, out, err, sizeof(err)),
                     FILES_NOT_FOUND);
    files_free(f);
}
END_TEST

/* FileInfo as LIST_FILES answers it. */
START_TEST(test_info_pb)
{
    struct stat st;
    memset(&st, 0, sizeof(st));
    st.st_mode = S_IFREG | 0640;
    st.st_size = 1234;
    st.st_nlink = 2;
    st.st_mtim.tv_sec = 7;
    st.st_mtim.tv_nsec = 5;
    st.st_uid = 4000321;
    st.st_gid = 4000321;
    Mesos__V1__FileInfo *fi = files_info_pb("/master/log", &st);
    ck_assert_str_eq(fi->path, "/master/log");
    ck_assert_uint_eq(fi->size, 1234);
    ck_assert_int_eq(fi->nlink, 2);
    ck_assert_uint_eq(fi->mode, S_IFREG | 0640);
    ck_assert_int_eq(fi->mtime->nanoseconds, 7000000005);
    ck_assert_str_eq(fi->uid, "4000321");
    ck_assert_str_eq(fi->gid, "4000321");
    protobuf_c_message_free_unpacked(&fi->base, NULL);
}
END_TEST

static Suite *files_suite(void)
{
    Suite *s = suite_create("files");
    TCase *tc = tcase_create("files");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_confinement_table);
    tcase_add_test(tc, test_text_json);
    tcase_add_test(tc, test_entry_json);
    tcase_add_test(tc, test_read_table);
    tcase_add_test(tc, test_download);
    tcase_add_test(tc, test_list);
    tcase_add_test(tc, test_attached_file);
    tcase_add_test(tc, test_attached_directory_elsewhere);
    tcase_add_test(tc, test_info_pb);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(files_suite)
