/*
 * common/zk (a ZooKeeper session on a libevent loop), common/master_detect
 * (the leader for every --master form) and master/contender (Mesos's
 * json.info_ election), against a real ZooKeeper server (tests/zk): one
 * standalone server for the whole file, each test under a path of its own.
 * The pure parsers have table tests first.
 */
#include "common/master_detect.h"
#include "common/zk.h"
#include "master/contender.h"
#include "zk/zk_harness.h"

#include "check_main.h"

#include <check.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

#define DEADLINE_MS 15000

static struct zk_ensemble *ENS;

static void ens_start(void)
{
    char err[256];
    ENS = zk_ensemble_start(1, 30000, err, sizeof(err));
    if (ENS == NULL) {
        fprintf(stderr, "zookeeper: %s\n", err);
        abort();
    }
}

static void ens_stop(void)
{
    zk_ensemble_stop(ENS);
    ENS = NULL;
}

/* A test that failed while the server was paused must not stop the
 * next ones. */
static void resume_server(void)
{
    zk_server_resume(ENS, 0);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Run base until cond(arg) or deadline_ms pass. */
static bool run_until(struct event_base *base, bool (*cond)(void *), void *arg,
                      int deadline_ms)
{
    int64_t end = now_ms() + deadline_ms;
    while (!cond(arg)) {
        if (now_ms() > end)
            return false;
        struct timeval tv = {0, 20000};
        event_base_loopexit(base, &tv);
        event_base_dispatch(base);
    }
    return true;
}

static void url_of(const char *path, char *out, size_t outlen)
{
    ck_assert_int_eq(zk_ensemble_url(ENS, path, out, outlen), 0);
}

/* ---- pure parts ---------------------------------------------------------- */

START_TEST(test_hostport_forms)
{
    static const struct {
        const char *in;
        int ok;
        const char *host, *ip;
        unsigned port;
    } cases[] = {
        {"10.0.0.1:5050", 1, "10.0.0.1", "10.0.0.1", 5050},
        {"master.example.com:1", 1, "master.example.com", "", 1},
        {"localhost:65535", 1, "localhost", "", 65535},
        {"10.0.0.1", 0, NULL, NULL, 0},
        {":5050", 0, NULL, NULL, 0},
        {"h:", 0, NULL, NULL, 0},
        {"h:0", 0, NULL, NULL, 0},
        {"h:65536", 0, NULL, NULL, 0},
        {"h:5x", 0, NULL, NULL, 0},
        {"a b:5050", 0, NULL, NULL, 0},
        {"h:99999999999999999999", 0, NULL, NULL, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct master_leader l;
        char err[256] = "";
        int rc =
            master_detect_parse_hostport(cases[i].in, &l, err, sizeof(err));
        ck_assert_msg((rc == 0) == cases[i].ok, "%s: %s", cases[i].in, err);
        if (!cases[i].ok) {
            ck_assert(err[0] != '\0');
            continue;
        }
        ck_assert(l.known);
        ck_assert_str_eq(l.hostname, cases[i].host);
        ck_assert_str_eq(l.ip, cases[i].ip);
        ck_assert_uint_eq(l.port, cases[i].port);
        ck_assert_str_eq(master_leader_host(&l),
                         cases[i].ip[0] ? cases[i].ip : cases[i].host);
    }
}
END_TEST

START_TEST(test_parse_info)
{
    struct master_leader l;
    char err[256];
    /* Mesos's JSON MasterInfo: address wins. */
    const char *full =
        "{\"id\":\"m1\",\"ip\":16777343,\"port\":5050,\"hostname\":\"h1\","
        "\"pid\":\"master@127.0.0.1:5050\",\"address\":{\"hostname\":\"h1\","
        "\"ip\":\"10.1.2.3\",\"port\":5051}}";
    ck_assert_int_eq(
        master_detect_parse_info(full, strlen(full), &l, err, sizeof(err)), 0);
    ck_assert_str_eq(l.id, "m1");
    ck_assert_str_eq(l.hostname, "h1");
    ck_assert_str_eq(l.ip, "10.1.2.3");
    ck_assert_uint_eq(l.port, 5051);
    /* Only the packed uint32 (network order, as Mesos writes it). */
    const char *old = "{\"id\":\"m2\",\"ip\":16777343,\"port\":5050}";
    ck_assert_int_eq(
        master_detect_parse_info(old, strlen(old), &l, err, sizeof(err)), 0);
    ck_assert_str_eq(l.ip, "127.0.0.1");
    ck_assert_str_eq(l.hostname, "127.0.0.1");
    ck_assert_uint_eq(l.port, 5050);
    const char *bad[] = {"",
                         "[]",
                         "{\"id\":\"x\"}",
                         "{\"ip\":1}",
                         "{\"port\":70000,\"hostname\":\"h\"}",
                         "{nope"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_int_eq(master_detect_parse_info(bad[i], strlen(bad[i]), &l,
                                                  err, sizeof(err)),
                         -1);
}
END_TEST

START_TEST(test_lowest)
{
    const char *names[] = {"info_0000000001",      "json.info_0000000007",
                           "log_replicas",         "json.info_0000000003",
                           "json.info_00000000x2", "json.info_0000000002x"};
    ck_assert_int_eq(master_detect_lowest(names, 6), 3);
    ck_assert_int_eq(master_detect_lowest(names, 3), 1);
    ck_assert_int_eq(master_detect_lowest(names, 1), -1);
    ck_assert_int_eq(master_detect_lowest(NULL, 0), -1);
    ck_assert_int_eq(zk_sequence_of("x_0000000042"), 42);
    ck_assert_int_eq(zk_sequence_of("x0000000042"), -1);
}
END_TEST

START_TEST(test_resolve_spec_file)
{
    char path[] = "/tmp/zkcore-spec-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    const char text[] = "  zk://127.0.0.1:2181/mesos \n";
    ck_assert_int_eq(write(fd, text, sizeof(text) - 1),
                     (ssize_t)sizeof(text) - 1);
    close(fd);
    char spec[600], out[600], err[256];
    snprintf(spec, sizeof(spec), "file://%s", path);
    ck_assert_int_eq(
        master_detect_resolve_spec(spec, out, sizeof(out), err, sizeof(err)),
        0);
    ck_assert_str_eq(out, "zk://127.0.0.1:2181/mesos");
    unlink(path);
    ck_assert_int_eq(
        master_detect_resolve_spec(spec, out, sizeof(out), err, sizeof(err)),
        -1);
    ck_assert_ptr_nonnull(strstr(err, path));
    ck_assert_int_eq(
        master_detect_resolve_spec("h:1", out, sizeof(out), err, sizeof(err)),
        0);
    ck_assert_str_eq(out, "h:1");
}
END_TEST

/* ---- zk ------------------------------------------------------------------ */

struct zrec {
    int connected, disconnected, expired, child;
    char last_child[256];
    int done;
    int rc;
    char data[256];
    size_t count;
    char created[256];
};

static void zrec_event(struct zk *z, enum zk_event ev, const char *path,
                       void *arg)
{
    (void)z;
    struct zrec *r = arg;
    if (ev == ZK_CONNECTED)
        r->connected++;
    else if (ev == ZK_DISCONNECTED)
        r->disconnected++;
    else if (ev == ZK_EXPIRED)
        r->expired++;
    else if (ev == ZK_NODE_CHILD) {
        r->child++;
        snprintf(r->last_child, sizeof(r->last_child), "%s", path);
    }
}

static void zrec_done(int rc, const struct zk_result *res, void *arg)
{
    struct zrec *r = arg;
    r->done++;
    r->rc = rc;
    r->count = res->count;
    snprintf(r->data, sizeof(r->data), "%s", res->data ? res->data : "");
    snprintf(r->created, sizeof(r->created), "%s", res->path ? res->path : "");
}

static bool is_connected(void *arg)
{
    return ((struct zrec *)arg)->connected > 0;
}

static int want_done;
static bool is_done(void *arg)
{
    return ((struct zrec *)arg)->done >= want_done;
}

static struct zk *open_zk(struct event_base *base, struct zrec *r, int ms)
{
    char err[256];
    struct zk *z = zk_new(base, zk_ensemble_hosts(ENS), NULL, ms, zrec_event, r,
                          err, sizeof(err));
    ck_assert_msg(z != NULL, "%s", err);
    ck_assert(run_until(base, is_connected, r, DEADLINE_MS));
    return z;
}

/* Issue one request and wait for its callback. */
#define WAIT_REQ(base, r, call)                                                \
    do {                                                                       \
        want_done = (r)->done + 1;                                             \
        ck_assert_int_eq((call), ZOK);                                         \
        ck_assert(run_until((base), is_done, (r), DEADLINE_MS));               \
    } while (0)

START_TEST(test_zk_requests_and_watches)
{
    struct event_base *base = event_base_new();
    struct zrec r = {0};
    struct zk *z = open_zk(base, &r, 4000);
    ck_assert(zk_connected(z));
    ck_assert(zk_session_id(z) != 0);

    WAIT_REQ(base, &r,
             zk_create(z, "/t_req/a/b", "hello", 5, ZK_PARENTS, zrec_done, &r));
    ck_assert_int_eq(r.rc, ZOK);
    ck_assert_str_eq(r.created, "/t_req/a/b");
    WAIT_REQ(base, &r, zk_get(z, "/t_req/a/b", false, zrec_done, &r));
    ck_assert_int_eq(r.rc, ZOK);
    ck_assert_str_eq(r.data, "hello");
    /* A children watch fires when a sequential child comes. */
    WAIT_REQ(base, &r, zk_children(z, "/t_req/a", true, zrec_done, &r));
    ck_assert_uint_eq(r.count, 1);
    WAIT_REQ(base, &r,
             zk_create(z, "/t_req/a/s_", "x", 1, ZK_EPHEMERAL | ZK_SEQUENCE,
                       zrec_done, &r));
    ck_assert_int_eq(r.rc, ZOK);
    ck_assert_int_ge(zk_sequence_of(r.created), 0);
    int64_t end = now_ms() + DEADLINE_MS;
    while (r.child == 0 && now_ms() < end) {
        struct timeval tv = {0, 20000};
        event_base_loopexit(base, &tv);
        event_base_dispatch(base);
    }
    ck_assert_int_eq(r.child, 1);
    ck_assert_str_eq(r.last_child, "/t_req/a");
    WAIT_REQ(base, &r, zk_exists(z, "/t_req/a/b", false, zrec_done, &r));
    ck_assert_int_eq(r.rc, ZOK);
    WAIT_REQ(base, &r, zk_delete(z, "/t_req/a/b", -1, zrec_done, &r));
    ck_assert_int_eq(r.rc, ZOK);
    WAIT_REQ(base, &r, zk_get(z, "/t_req/a/b", false, zrec_done, &r));
    ck_assert_int_eq(r.rc, ZNONODE);
    WAIT_REQ(base, &r, zk_create(z, "/t_req/a", NULL, 0, 0, zrec_done, &r));
    ck_assert_int_eq(r.rc, ZNODEEXISTS);
    zk_free(z);
    event_base_free(base);
}
END_TEST

START_TEST(test_zk_free_with_requests_outstanding)
{
    struct event_base *base = event_base_new();
    struct zrec r = {0};
    struct zk *z = open_zk(base, &r, 4000);
    for (int i = 0; i < 50; i++) {
        ck_assert_int_eq(zk_children(z, "/", true, zrec_done, &r), ZOK);
        ck_assert_int_eq(zk_create(z, "/t_free/n_", "x", 1,
                                   ZK_EPHEMERAL | ZK_SEQUENCE | ZK_PARENTS,
                                   zrec_done, &r),
                         ZOK);
    }
    zk_free(z); /* no callback may run after this */
    struct timeval tv = {0, 100000};
    event_base_loopexit(base, &tv);
    event_base_dispatch(base);
    ck_assert_int_eq(r.done, 0);
    event_base_free(base);
}
END_TEST

static bool is_expired_and_back(void *arg)
{
    struct zrec *r = arg;
    return r->expired > 0 && r->connected > 1;
}

static bool is_disconnected(void *arg)
{
    return ((struct zrec *)arg)->disconnected > 0;
}

/* A server that hangs: the connection is lost at once, the session taken
 * as expired after its timeout (no server says so), and a new one made
 * once the server is back. */
START_TEST(test_zk_expiry_when_cut_off)
{
    struct event_base *base = event_base_new();
    struct zrec r = {0};
    struct zk *z = open_zk(base, &r, 1000);
    int64_t old = zk_session_id(z);
    ck_assert_int_eq(zk_server_pause(ENS, 0), 0);
    ck_assert(run_until(base, is_disconnected, &r, DEADLINE_MS));
    int64_t t0 = now_ms();
    bool expired = false;
    while (!expired && now_ms() - t0 < DEADLINE_MS) {
        struct timeval tv = {0, 20000};
        event_base_loopexit(base, &tv);
        event_base_dispatch(base);
        expired = r.expired > 0;
    }
    ck_assert(expired);
    ck_assert_int_eq(zk_server_resume(ENS, 0), 0);
    ck_assert(run_until(base, is_expired_and_back, &r, DEADLINE_MS));
    ck_assert(zk_session_id(z) != old);
    zk_free(z);
    event_base_free(base);
}
END_TEST

/* ---- master_detect ------------------------------------------------------- */

struct drec {
    int reports;
    struct master_leader last;
};

static void drec_cb(const struct master_leader *l, void *arg)
{
    struct drec *d = arg;
    d->reports++;
    d->last = *l;
}

static int want_reports;
static bool has_reports(void *arg)
{
    return ((struct drec *)arg)->reports >= want_reports;
}

START_TEST(test_detect_fixed)
{
    struct event_base *base = event_base_new();
    struct drec d = {0};
    char err[256];
    struct master_detect *md = master_detect_new(base, "m.example.com:5050", 0,
                                                 drec_cb, &d, err, sizeof(err));
    ck_assert_ptr_nonnull(md);
    ck_assert(!master_detect_is_zk(md));
    ck_assert_int_eq(d.reports, 0); /* never from inside _new */
    want_reports = 1;
    ck_assert(run_until(base, has_reports, &d, DEADLINE_MS));
    ck_assert(d.last.known);
    ck_assert_str_eq(d.last.hostname, "m.example.com");
    ck_assert_uint_eq(d.last.port, 5050);
    master_detect_free(md);
    ck_assert_ptr_null(
        master_detect_new(base, "nope", 0, drec_cb, &d, err, sizeof(err)));
    ck_assert_ptr_null(
        master_detect_new(base, "zk://h:1", 0, drec_cb, &d, err, sizeof(err)));
    ck_assert_ptr_null(master_detect_new(base, "file:///no/such/file", 0,
                                         drec_cb, &d, err, sizeof(err)));
    event_base_free(base);
}
END_TEST

static void put_info(struct event_base *base, struct zk *z, struct zrec *r,
                     const char *node, const char *id, unsigned port,
                     char *created, size_t len)
{
    char json[512];
    snprintf(json, sizeof(json),
             "{\"id\":\"%s\",\"hostname\":\"h-%s\",\"port\":%u,"
             "\"address\":{\"ip\":\"127.0.0.1\",\"port\":%u}}",
             id, id, port, port);
    WAIT_REQ(base, r,
             zk_create(z, node, json, strlen(json),
                       ZK_EPHEMERAL | ZK_SEQUENCE | ZK_PARENTS, zrec_done, r));
    ck_assert_int_eq(r->rc, ZOK);
    snprintf(created, len, "%s", r->created);
}

START_TEST(test_detect_zk_group)
{
    struct event_base *base = event_base_new();
    struct zrec r = {0};
    struct zk *z = open_zk(base, &r, 4000);
    struct drec d = {0};
    char url[1024], err[256];
    url_of("/t_detect/group", url, sizeof(url));
    struct master_detect *md =
        master_detect_new(base, url, 4000, drec_cb, &d, err, sizeof(err));
    ck_assert_msg(md != NULL, "%s", err);
    ck_assert(master_detect_is_zk(md));

    /* A protobuf "info_" node (Mesos's other label) is ignored. */
    char n0[256], n1[256], n2[256];
    put_info(base, z, &r, "/t_detect/group/info_", "pb", 1, n0, sizeof(n0));
    put_info(base, z, &r, "/t_detect/group/json.info_", "A", 5001, n1,
             sizeof(n1));
    want_reports = 1;
    ck_assert(run_until(base, has_reports, &d, DEADLINE_MS));
    ck_assert(d.last.known);
    ck_assert_str_eq(d.last.id, "A");
    ck_assert_str_eq(d.last.hostname, "h-A");
    ck_assert_str_eq(d.last.ip, "127.0.0.1");
    ck_assert_uint_eq(d.last.port, 5001);

    /* A later member changes nothing; the leader going hands over. */
    put_info(base, z, &r, "/t_detect/group/json.info_", "B", 5002, n2,
             sizeof(n2));
    WAIT_REQ(base, &r, zk_delete(z, n1, -1, zrec_done, &r));
    want_reports = 2;
    ck_assert(run_until(base, has_reports, &d, DEADLINE_MS));
    ck_assert_str_eq(d.last.id, "B");
    ck_assert_uint_eq(d.last.port, 5002);
    ck_assert_int_eq(d.reports, 2);

    WAIT_REQ(base, &r, zk_delete(z, n2, -1, zrec_done, &r));
    want_reports = 3;
    ck_assert(run_until(base, has_reports, &d, DEADLINE_MS));
    ck_assert(!d.last.known);
    ck_assert(!master_detect_leader(md)->known);

    master_detect_free(md);
    zk_free(z);
    event_base_free(base);
}
END_TEST

/* The group's path does not exist yet: no leader, then one when a master
 * creates it. Reached through file:// as well. */
START_TEST(test_detect_zk_path_appears_via_file)
{
    struct event_base *base = event_base_new();
    struct zrec r = {0};
    struct zk *z = open_zk(base, &r, 4000);
    struct drec d = {0};
    char url[1024], err[256], path[] = "/tmp/zkcore-url-XXXXXX";
    url_of("/t_late/x", url, sizeof(url));
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, url, strlen(url)), (ssize_t)strlen(url));
    close(fd);
    char spec[600];
    snprintf(spec, sizeof(spec), "file://%s", path);
    struct master_detect *md =
        master_detect_new(base, spec, 4000, drec_cb, &d, err, sizeof(err));
    unlink(path);
    ck_assert_msg(md != NULL, "%s", err);
    struct timeval tv = {0, 300000};
    event_base_loopexit(base, &tv);
    event_base_dispatch(base);
    ck_assert_int_eq(d.reports, 0);
    char n[256];
    put_info(base, z, &r, "/t_late/x/json.info_", "L", 7000, n, sizeof(n));
    want_reports = 1;
    ck_assert(run_until(base, has_reports, &d, DEADLINE_MS));
    ck_assert_str_eq(d.last.id, "L");
    master_detect_free(md);
    zk_free(z);
    event_base_free(base);
}
END_TEST

/* ---- contender ----------------------------------------------------------- */

struct crec {
    int elected, lost, suspended, resumed;
};

static void crec_cb(enum contender_event ev, void *arg)
{
    struct crec *c = arg;
    if (ev == CONTENDER_ELECTED)
        c->elected++;
    else if (ev == CONTENDER_LOST)
        c->lost++;
    else if (ev == CONTENDER_SUSPENDED)
        c->suspended++;
    else
        c->resumed++;
}

static bool is_elected(void *arg)
{
    return ((struct crec *)arg)->elected > 0;
}

static bool has_node(void *arg)
{
    return contender_node(arg) != NULL;
}

START_TEST(test_contender_election_and_handover)
{
    struct event_base *base = event_base_new();
    char url[1024], err[256];
    url_of("/t_elect/masters", url, sizeof(url));
    struct crec ca = {0}, cb = {0};
    struct contender *a = contender_new(base, url, 4000,
                                        "{\"id\":\"A\","
                                        "\"hostname\":\"a\",\"port\":1}",
                                        crec_cb, &ca, err, sizeof(err));
    ck_assert_msg(a != NULL, "%s", err);
    ck_assert(run_until(base, is_elected, &ca, DEADLINE_MS));
    ck_assert(contender_elected(a));
    ck_assert_int_eq(strncmp(contender_node(a), "json.info_", 10), 0);

    struct contender *b = contender_new(base, url, 4000,
                                        "{\"id\":\"B\","
                                        "\"hostname\":\"b\",\"port\":2}",
                                        crec_cb, &cb, err, sizeof(err));
    ck_assert_ptr_nonnull(b);
    ck_assert(run_until(base, has_node, b, DEADLINE_MS));
    ck_assert(!contender_elected(b));

    /* The detector reads the same layout. */
    struct drec d = {0};
    struct master_detect *md =
        master_detect_new(base, url, 4000, drec_cb, &d, err, sizeof(err));
    want_reports = 1;
    ck_assert(run_until(base, has_reports, &d, DEADLINE_MS));
    ck_assert_str_eq(d.last.id, "A");

    contender_free(a); /* withdraws: the node goes at once */
    ck_assert(run_until(base, is_elected, &cb, DEADLINE_MS));
    want_reports = 2;
    ck_assert(run_until(base, has_reports, &d, DEADLINE_MS));
    ck_assert_str_eq(d.last.id, "B");
    ck_assert_int_eq(cb.lost, 0);
    master_detect_free(md);
    contender_free(b);
    event_base_free(base);
}
END_TEST

static bool is_elected_twice(void *arg)
{
    return ((struct crec *)arg)->elected > 1;
}

static bool is_lost(void *arg)
{
    return ((struct crec *)arg)->lost > 0;
}

/* Someone deletes the leader's node: leadership is lost (reported), and
 * the contender contends again with a new node. */
START_TEST(test_contender_node_deleted)
{
    struct event_base *base = event_base_new();
    char url[1024], err[256];
    url_of("/t_deleted", url, sizeof(url));
    struct crec ca = {0};
    struct contender *a = contender_new(base, url, 4000, "{\"port\":1}",
                                        crec_cb, &ca, err, sizeof(err));
    ck_assert_ptr_nonnull(a);
    ck_assert(run_until(base, is_elected, &ca, DEADLINE_MS));
    char node[300];
    snprintf(node, sizeof(node), "/t_deleted/%s", contender_node(a));
    struct zrec r = {0};
    struct zk *z = open_zk(base, &r, 4000);
    WAIT_REQ(base, &r, zk_delete(z, node, -1, zrec_done, &r));
    ck_assert(run_until(base, is_lost, &ca, DEADLINE_MS));
    /* It contends again at once, with a new node (and, alone, leads). */
    ck_assert(run_until(base, is_elected_twice, &ca, DEADLINE_MS));
    ck_assert_int_eq(ca.lost, 1);
    ck_assert_ptr_nonnull(contender_node(a));
    ck_assert_str_ne(contender_node(a), strrchr(node, '/') + 1);
    zk_free(z);
    contender_free(a);
    event_base_free(base);
}
END_TEST

static bool is_suspended(void *arg)
{
    return ((struct crec *)arg)->suspended > 0;
}

/* Cut off from ZooKeeper: suspended at once, lost after the session
 * timeout. */
START_TEST(test_contender_cut_off)
{
    struct event_base *base = event_base_new();
    char url[1024], err[256];
    url_of("/t_cut", url, sizeof(url));
    struct crec ca = {0};
    struct contender *a = contender_new(base, url, 1000, "{\"port\":1}",
                                        crec_cb, &ca, err, sizeof(err));
    ck_assert_ptr_nonnull(a);
    ck_assert(run_until(base, is_elected, &ca, DEADLINE_MS));
    ck_assert_int_eq(zk_server_pause(ENS, 0), 0);
    ck_assert(run_until(base, is_suspended, &ca, DEADLINE_MS));
    ck_assert_int_eq(ca.lost, 0);
    int64_t t0 = now_ms();
    ck_assert(run_until(base, is_lost, &ca, DEADLINE_MS));
    ck_assert_int_le(now_ms() - t0, 5000);
    ck_assert_int_eq(zk_server_resume(ENS, 0), 0);
    contender_free(a);
    event_base_free(base);
}
END_TEST

static Suite *zk_core_suite(void)
{
    Suite *s = suite_create("zk_core");
    TCase *pure = tcase_create("pure");
    tcase_add_test(pure, test_hostport_forms);
    tcase_add_test(pure, test_parse_info);
    tcase_add_test(pure, test_lowest);
    tcase_add_test(pure, test_resolve_spec_file);
    suite_add_tcase(s, pure);
    TCase *tc = tcase_create("zookeeper");
    tcase_add_unchecked_fixture(tc, ens_start, ens_stop);
    tcase_add_checked_fixture(tc, resume_server, NULL);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_zk_requests_and_watches);
    tcase_add_test(tc, test_zk_free_with_requests_outstanding);
    tcase_add_test(tc, test_zk_expiry_when_cut_off);
    tcase_add_test(tc, test_detect_fixed);
    tcase_add_test(tc, test_detect_zk_group);
    tcase_add_test(tc, test_detect_zk_path_appears_via_file);
    tcase_add_test(tc, test_contender_election_and_handover);
    tcase_add_test(tc, test_contender_node_deleted);
    tcase_add_test(tc, test_contender_cut_off);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(zk_core_suite)
