/*
 * The web UI's file server (master/webui.h) and the proxy of agents' /files
 * endpoints (master/files_proxy.h), driven through the master's routes with
 * fake requests (master_fixture.h). The UI directory is a temporary one
 * made per test; the "agent" the proxy reaches is an http_server on
 * loopback run by the test's own loop.
 */
#include <check.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <unistd.h>

#include "check_main.h"
#include "common/http.h"
#include "common/http_fake.h"
#include "master/agents.h"
#include "master/files_proxy.h"
#include "master/webui.h"
#include "master_fixture.h"

MFX_STANDARD_FIXTURE

static char dir[PATH_MAX];     /* the UI directory */
static char outside[PATH_MAX]; /* a file beside it */
static char dirflag[PATH_MAX + 16];

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void setup_ui(void)
{
    char tmpl[] = "/tmp/offerd-webui-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    snprintf(outside, sizeof(outside), "%s/secret.txt", tmpl);
    write_file(outside, "secret");
    snprintf(dir, sizeof(dir), "%s/ui", tmpl);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    char p[PATH_MAX + 64];
    snprintf(p, sizeof(p), "%s/index.html", dir);
    write_file(p, "<!doctype html><title>offerd</title>");
    snprintf(p, sizeof(p), "%s/static", dir);
    ck_assert_int_eq(mkdir(p, 0755), 0);
    snprintf(p, sizeof(p), "%s/static/app.js", dir);
    write_file(p, "export const x = 1;\n");
    snprintf(p, sizeof(p), "%s/static/.hidden", dir);
    write_file(p, "hidden");
    snprintf(p, sizeof(p), "%s/static/sub", dir);
    ck_assert_int_eq(mkdir(p, 0755), 0);
    snprintf(p, sizeof(p), "%s/static/fifo", dir);
    ck_assert_int_eq(mkfifo(p, 0644), 0);
    snprintf(p, sizeof(p), "%s/static/leak.txt", dir);
    ck_assert_int_eq(symlink(outside, p), 0);
    snprintf(p, sizeof(p), "%s/static/inside.js", dir);
    ck_assert_int_eq(symlink("app.js", p), 0);
    snprintf(dirflag, sizeof(dirflag), "--webui_dir=%s", dir);
    const char *extra[] = {dirflag, NULL};
    mfx_start(&X, extra);
}

static void teardown_ui(void)
{
    teardown();
    char cmd[PATH_MAX + 32];
    char *slash = strrchr(outside, '/');
    *slash = '\0';
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", outside);
    ck_assert_int_eq(system(cmd), 0);
}

/* A request through the master's routes, replied to (the loop runs until
 * then). Free with http_fake_free. */
static bool replied(void *arg)
{
    return http_fake_replied(arg);
}

static struct http_fake *req(enum http_method method, const char *target,
                             const char *hname, const char *hvalue)
{
    struct http_fake *f = http_fake_new(X.base, method, target);
    if (hname != NULL)
        http_fake_add_header(f, hname, hvalue);
    http_fake_dispatch_server(f, X.m->http);
    ck_assert(mfx_run_until(&X, replied, f));
    return f;
}

static int status_of(const char *target)
{
    struct http_fake *f = req(HTTP_GET, target, NULL, NULL);
    int s = http_fake_status(f);
    http_fake_free(f);
    return s;
}

/* ---- Static files ------------------------------------------------------ */

START_TEST(test_index_at_root)
{
    struct http_fake *f = req(HTTP_GET, "/", NULL, NULL);
    ck_assert_int_eq(http_fake_status(f), 200);
    ck_assert_str_eq(http_fake_content_type(f), "text/html; charset=utf-8");
    ck_assert_str_eq(mfx_body(f), "<!doctype html><title>offerd</title>");
    ck_assert_ptr_nonnull(http_fake_reply_header(f, "ETag"));
    ck_assert_ptr_nonnull(http_fake_reply_header(f, "Last-Modified"));
    ck_assert_str_eq(http_fake_reply_header(f, "Cache-Control"), "no-cache");
    http_fake_free(f);
}
END_TEST

START_TEST(test_static_file_and_type)
{
    struct http_fake *f = req(HTTP_GET, "/static/app.js", NULL, NULL);
    ck_assert_int_eq(http_fake_status(f), 200);
    ck_assert_str_eq(http_fake_content_type(f),
                     "text/javascript; charset=utf-8");
    ck_assert_str_eq(mfx_body(f), "export const x = 1;\n");
    http_fake_free(f);
    /* A symbolic link that stays inside the directory is followed. */
    ck_assert_int_eq(status_of("/static/inside.js"), 200);
    /* Percent escapes of plain characters are decoded. */
    ck_assert_int_eq(status_of("/static/app%2Ejs"), 200);
}
END_TEST

START_TEST(test_head)
{
    struct http_fake *f = req(HTTP_HEAD, "/static/app.js", NULL, NULL);
    ck_assert_int_eq(http_fake_status(f), 200);
    ck_assert_ptr_nonnull(http_fake_reply_header(f, "ETag"));
    http_fake_free(f);
}
END_TEST

START_TEST(test_conditional_get)
{
    struct http_fake *f = req(HTTP_GET, "/static/app.js", NULL, NULL);
    char etag[128], lastmod[128];
    snprintf(etag, sizeof(etag), "%s", http_fake_reply_header(f, "ETag"));
    snprintf(lastmod, sizeof(lastmod), "%s",
             http_fake_reply_header(f, "Last-Modified"));
    http_fake_free(f);

    f = req(HTTP_GET, "/static/app.js", "If-None-Match", etag);
    ck_assert_int_eq(http_fake_status(f), 304);
    size_t len;
    http_fake_body(f, &len);
    ck_assert_uint_eq(len, 0);
    http_fake_free(f);

    f = req(HTTP_GET, "/static/app.js", "If-None-Match", "\"other\"");
    ck_assert_int_eq(http_fake_status(f), 200);
    http_fake_free(f);

    f = req(HTTP_GET, "/static/app.js", "If-Modified-Since", lastmod);
    ck_assert_int_eq(http_fake_status(f), 304);
    http_fake_free(f);
}
END_TEST

START_TEST(test_methods)
{
    struct http_fake *f = req(HTTP_POST, "/", NULL, NULL);
    ck_assert_int_eq(http_fake_status(f), 405);
    http_fake_free(f);
    f = req(HTTP_DELETE, "/static/app.js", NULL, NULL);
    ck_assert_int_eq(http_fake_status(f), 405);
    http_fake_free(f);
}
END_TEST

/* Paths that must never be served, and what each is answered. */
static const struct {
    const char *target;
    int status;
} refused[] = {
    {"/static/../secret.txt", 403},     /* traversal, as sent */
    {"/static/%2e%2e/secret.txt", 403}, /* traversal, escaped */
    {"/static/..%2fsecret.txt", 403},   /* escaped slash */
    {"/static/sub/../../secret.txt", 403},
    {"/static/.hidden", 403},             /* hidden file */
    {"/static//app.js", 403},             /* empty segment */
    {"/static/a%5c..%5csecret.txt", 403}, /* backslashes */
    {"/static/leak.txt", 403},            /* symlink out of the dir */
    {"/static/sub", 403},                 /* a directory */
    {"/static/", 403},                    /* the directory itself */
    {"/static/fifo", 403},                /* a FIFO: must not block */
    {"/static/app.js%00.png", 400},       /* escaped NUL */
    {"/static/app%zz", 400},              /* malformed escape */
    {"/static/app%2", 400},               /* truncated escape */
    {"/static/missing.js", 404},
    {"/static/sub/missing.js", 404},
};

START_TEST(test_refused_paths)
{
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        struct http_fake *f = req(HTTP_GET, refused[i].target, NULL, NULL);
        ck_assert_msg(http_fake_status(f) == refused[i].status,
                      "%s: %d, expected %d", refused[i].target,
                      http_fake_status(f), refused[i].status);
        ck_assert_str_eq(http_fake_content_type(f), HTTP_CONTENT_TEXT);
        ck_assert_ptr_null(strstr(mfx_body(f), "secret\n"));
        http_fake_free(f);
    }
}
END_TEST

START_TEST(test_missing_dir)
{
    mfx_start(&X, (const char *[]){"--webui_dir=/nonexistent/offerd-ui", NULL});
    struct http_fake *f = req(HTTP_GET, "/", NULL, NULL);
    ck_assert_int_eq(http_fake_status(f), 404);
    ck_assert_ptr_nonnull(strstr(mfx_body(f), "not installed"));
    http_fake_free(f);
    /* Other endpoints are unaffected. */
    ck_assert_int_eq(status_of("/health"), 200);
}
END_TEST

START_TEST(test_content_types)
{
    static const char *const table[][2] = {
        {"a.html", "text/html; charset=utf-8"},
        {"a.CSS", "text/css; charset=utf-8"},
        {"x/y.mjs", "text/javascript; charset=utf-8"},
        {"a.png", "image/png"},
        {"a.svg", "image/svg+xml"},
        {"LICENSE", "application/octet-stream"},
        {"dir.d/file", "application/octet-stream"},
    };
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
        ck_assert_str_eq(master_webui_content_type(table[i][0]), table[i][1]);
}
END_TEST

START_TEST(test_default_dir)
{
    /* Without --webui_dir the flag takes the installed or the source
     * tree's copy; this build's source tree has one. */
    mfx_start(&X, NULL);
    ck_assert_str_eq(X.flags.webui_dir, master_webui_default_dir());
    struct stat st;
    ck_assert_int_eq(stat(X.flags.webui_dir, &st), 0);
    ck_assert_int_eq(status_of("/"), 200);
}
END_TEST

/* ---- The agent files proxy -------------------------------------------- */

static struct http_server *fake_agent;
static uint16_t fake_agent_port;

static void agent_read(struct http_request *r, void *arg)
{
    char body[512];
    const char *off = http_request_query(r, "offset");
    const char *len = http_request_query(r, "length");
    snprintf(body, sizeof(body), "{\"path\":\"%s\",\"offset\":%s,\"len\":%s}",
             http_request_query(r, "path"), off ? off : "null",
             len ? len : "null");
    http_reply(r, 200, HTTP_CONTENT_JSON, body, strlen(body));
}

static void agent_browse(struct http_request *r, void *arg)
{
    http_reply_error(r, 404, "no such path");
}

/* /files/download answering a page that would run script if rendered. */
static void agent_download(struct http_request *r, void *arg)
{
    const char *html = "<script>alert(1)</script>";
    http_reply(r, 200, "text/html", html, strlen(html));
}

static void start_fake_agent(void)
{
    fake_agent = http_server_new(X.base, NULL);
    char err[256];
    ck_assert_int_eq(http_server_route(fake_agent, "/files/read", HTTP_GET,
                                       agent_read, NULL),
                     0);
    ck_assert_int_eq(http_server_route(fake_agent, "/files/browse", HTTP_GET,
                                       agent_browse, NULL),
                     0);
    ck_assert_int_eq(http_server_route(fake_agent, "/files/download", HTTP_GET,
                                       agent_download, NULL),
                     0);
    ck_assert_int_eq(http_server_bind(fake_agent, "127.0.0.1", 0,
                                      &fake_agent_port, err, sizeof(err)),
                     0);
}

/* Point AG's address at ip:port. */
static void agent_address(const char *ip, uint16_t port)
{
    struct agent *ag = master_agent_find(X.m, AG.id);
    ck_assert_ptr_nonnull(ag);
    free(ag->ip);
    ag->ip = strdup(ip);
    ag->port = port;
}

/* A loopback port nothing listens on (bound, then closed). */
static uint16_t closed_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    socklen_t n = sizeof(a);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &n), 0);
    close(fd);
    return ntohs(a.sin_port);
}

START_TEST(test_proxy_read)
{
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:1;mem:128");
    start_fake_agent();
    agent_address("127.0.0.1", fake_agent_port);
    char target[512];
    snprintf(target, sizeof(target),
             "/agent/%s/files/read?path=fw%%2Ft%%20a%%26b&offset=5&length=9"
             "&evil=1",
             AG.id);
    struct http_fake *f = req(HTTP_GET, target, NULL, NULL);
    ck_assert_int_eq(http_fake_status(f), 200);
    ck_assert_str_eq(http_fake_content_type(f), HTTP_CONTENT_JSON);
    ck_assert_str_eq(mfx_body(f),
                     "{\"path\":\"fw/t a&b\",\"offset\":5,\"len\":9}");
    http_fake_free(f);
    /* The agent's refusals are relayed. */
    snprintf(target, sizeof(target), "/agent/%s/files/browse?path=x", AG.id);
    f = req(HTTP_GET, target, NULL, NULL);
    ck_assert_int_eq(http_fake_status(f), 404);
    ck_assert_str_eq(mfx_body(f), "no such path\n");
    http_fake_free(f);
    /* A download is an attachment of no renderable type. */
    snprintf(target, sizeof(target), "/agent/%s/files/download?path=x.html",
             AG.id);
    f = req(HTTP_GET, target, NULL, NULL);
    ck_assert_int_eq(http_fake_status(f), 200);
    ck_assert_str_eq(http_fake_content_type(f), "application/octet-stream");
    ck_assert_str_eq(http_fake_reply_header(f, "Content-Disposition"),
                     "attachment");
    ck_assert_str_eq(http_fake_reply_header(f, "X-Content-Type-Options"),
                     "nosniff");
    http_fake_free(f);
    http_server_free(fake_agent);
}
END_TEST

START_TEST(test_proxy_unknown_agent)
{
    struct http_fake *f =
        req(HTTP_GET, "/agent/nope-S9/files/read?path=x", NULL, NULL);
    ck_assert_int_eq(http_fake_status(f), 404);
    ck_assert_ptr_nonnull(strstr(mfx_body(f), "no such agent: nope-S9"));
    http_fake_free(f);
}
END_TEST

START_TEST(test_proxy_bad_paths)
{
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:1;mem:128");
    char target[512];
    const char *const tails[] = {"/files/debug", "/files/read/x", "/state", ""};
    for (size_t i = 0; i < sizeof(tails) / sizeof(tails[0]); i++) {
        snprintf(target, sizeof(target), "/agent/%s%s", AG.id, tails[i]);
        ck_assert_int_eq(status_of(target), 404);
    }
    ck_assert_int_eq(status_of("/agent//files/read"), 404);
    struct http_fake *f = req(HTTP_POST, "/agent/x/files/read", NULL, NULL);
    ck_assert_int_eq(http_fake_status(f), 405);
    http_fake_free(f);
    /* An over-long parameter is refused before the agent is asked. */
    size_t n = FILES_PROXY_MAX_PARAM + 64;
    char *big = malloc(n + 512);
    int k = snprintf(big, 512, "/agent/%s/files/read?path=", AG.id);
    memset(big + k, 'a', n);
    big[k + (int)n] = '\0';
    f = req(HTTP_GET, big, NULL, NULL);
    ck_assert_int_eq(http_fake_status(f), 400);
    http_fake_free(f);
    free(big);
}
END_TEST

START_TEST(test_proxy_agent_down)
{
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:1;mem:128");
    agent_address("127.0.0.1", closed_port());
    char target[512];
    snprintf(target, sizeof(target), "/agent/%s/files/read?path=x", AG.id);
    struct http_fake *f = req(HTTP_GET, target, NULL, NULL);
    ck_assert_int_eq(http_fake_status(f), 502);
    ck_assert_ptr_nonnull(strstr(mfx_body(f), "did not answer"));
    http_fake_free(f);
}
END_TEST

START_TEST(test_proxy_pending_at_stop)
{
    /* A request in flight when the master stops is cancelled cleanly (no
     * leak, no callback into a freed master). */
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:1;mem:128");
    start_fake_agent();
    agent_address("127.0.0.1", fake_agent_port);
    char target[512];
    snprintf(target, sizeof(target), "/agent/%s/files/read?path=x", AG.id);
    struct http_fake *f = http_fake_new(X.base, HTTP_GET, target);
    http_fake_dispatch_server(f, X.m->http);
    ck_assert(!http_fake_replied(f));
    http_server_free(fake_agent);
    http_fake_free(f);
    teardown();
}
END_TEST

static Suite *master_webui_suite(void)
{
    Suite *s = suite_create("master_webui");
    TCase *tc = tcase_create("static");
    tcase_add_checked_fixture(tc, setup_ui, teardown_ui);
    tcase_add_test(tc, test_index_at_root);
    tcase_add_test(tc, test_static_file_and_type);
    tcase_add_test(tc, test_head);
    tcase_add_test(tc, test_conditional_get);
    tcase_add_test(tc, test_methods);
    tcase_add_test(tc, test_refused_paths);
    suite_add_tcase(s, tc);
    tc = tcase_create("other");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_test(tc, test_missing_dir);
    tcase_add_test(tc, test_default_dir);
    suite_add_tcase(s, tc);
    tc = tcase_create("types");
    tcase_add_test(tc, test_content_types);
    suite_add_tcase(s, tc);
    tc = tcase_create("proxy");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_proxy_read);
    tcase_add_test(tc, test_proxy_unknown_agent);
    tcase_add_test(tc, test_proxy_bad_paths);
    tcase_add_test(tc, test_proxy_agent_down);
    suite_add_tcase(s, tc);
    tc = tcase_create("proxy_stop");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_proxy_pending_at_stop);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(master_webui_suite)
