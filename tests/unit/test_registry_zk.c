/*
 * Tests for master/registry_zk (the registry in ZooKeeper) against a real
 * ZooKeeper server: every kind across close and reopen, replace and delete,
 * key escaping, the version guard (a second master's open deposes the
 * first, whose writes then fail and change nothing), entities above
 * ZooKeeper's request limit, injected failures, a server stopped in the
 * middle of a run, a writer that dies between its chunks and its multi,
 * and migration of an SQLite registry. Each test uses its own znode path.
 */
#include "master/flags_master.h"
#include "master/registry.h"
#include "master/registry_copy.h"
#include "master/registry_private.h"
#include "master/registry_sqlite.h"
#include "master/registry_zk.h"
#include "mesos/v1/maintenance.pb-c.h"
#include "mesos/v1/mesos.pb-c.h"
#include "mesos/v1/quota.pb-c.h"
#include "zk_harness.h"

#include "check_main.h"

#include <check.h>
#include <event2/event.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#define THREADED 1
#include <zookeeper/zookeeper.h>

static struct zk_ensemble *zk;
static struct event_base *base;
static char url[512];   /* zk://127.0.0.1:port/offerd-test-<n> */
static char zkpath[64]; /* /offerd-test-<n> */
static char errbuf[1024];
static int test_no;

/* ---- Fixture ---- */

/* The server of test case "zk", started once in Check's parent process
 * (an unchecked fixture), so that each forked test only picks a path. */
static struct zk_ensemble *shared;

static void start_shared(void)
{
    shared = zk_ensemble_start(1, 60000, errbuf, sizeof(errbuf));
    if (shared == NULL) {
        fprintf(stderr, "ZooKeeper: %s\n", errbuf);
        abort();
    }
}

static void stop_shared(void)
{
    zk_ensemble_stop(shared);
    shared = NULL;
}

static void setup_common(void)
{
    /* Before any session exists: the client's INFO lines are noise here. */
    zoo_set_debug_level(ZOO_LOG_LEVEL_WARN);
    snprintf(zkpath, sizeof(zkpath), "/offerd-test-%d-%d", (int)getpid(),
             ++test_no);
    ck_assert_int_eq(zk_ensemble_url(zk, zkpath, url, sizeof(url)), 0);
    base = event_base_new();
    registry_zk_set_session_timeout_ms(4000);
}

static void setup(void)
{
    zk = shared;
    setup_common();
}

static void teardown(void)
{
    event_base_free(base);
}

/* Test case "zk_own": tests that stop the server start their own. */
static void setup_own(void)
{
    zk = zk_ensemble_start(1, 60000, errbuf, sizeof(errbuf));
    ck_assert_msg(zk != NULL, "ZooKeeper: %s", errbuf);
    setup_common();
}

static void teardown_own(void)
{
    event_base_free(base);
    zk_ensemble_stop(zk);
}

/* ---- Completions ---- */

struct done {
    int count;
    bool ok[64];
    char err[64][320];
};

static struct done dn;

static void on_done(bool ok, const char *err, void *arg)
{
    int i = (int)(intptr_t)arg;
    dn.ok[i] = ok;
    snprintf(dn.err[i], sizeof(dn.err[i]), "%s", ok ? "" : err);
    dn.count++;
}

/* Apply b and wait for its completion (registry_test_flush); returns ok. */
static bool apply_wait(struct registry *reg, struct registry_batch *b)
{
    int i = dn.count;
    registry_apply(reg, b, on_done, (void *)(intptr_t)i);
    registry_test_flush(reg);
    ck_assert_int_eq(dn.count, i + 1);
    return dn.ok[i];
}

static const char *last_err(void)
{
    return dn.err[dn.count - 1];
}

/* ---- Entities ---- */

static void put_agent(struct registry_batch *b, const char *id,
                      const char *host)
{
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    Mesos__V1__AgentInfo info = MESOS__V1__AGENT_INFO__INIT;
    Offerd__Registry__Agent a = OFFERD__REGISTRY__AGENT__INIT;
    aid.value = (char *)id;
    info.hostname = (char *)host;
    info.id = &aid;
    a.info = &info;
    ck_assert_msg(registry_batch_put(b, REGISTRY_KIND_AGENT, &a.base, errbuf,
                                     sizeof(errbuf)) == 0,
                  "%s", errbuf);
}

static void del(struct registry_batch *b, enum registry_kind kind,
                const char *key)
{
    ck_assert_int_eq(
        registry_batch_delete(b, kind, key, errbuf, sizeof(errbuf)), 0);
}

static const char *agent_host(const Offerd__Registry__Registry *st,
                              const char *id)
{
    for (size_t i = 0; i < st->n_agents; i++)
        if (strcmp(st->agents[i]->info->id->value, id) == 0)
            return st->agents[i]->info->hostname;
    return NULL;
}

static struct registry *open_at(const char *where,
                                Offerd__Registry__Registry **st)
{
    struct registry_options o;
    registry_options_init(&o);
    o.backend = &registry_zk_backend;
    return registry_open(base, where, &o, st, errbuf, sizeof(errbuf));
}

static struct registry *open_ok(Offerd__Registry__Registry **st)
{
    struct registry *reg = open_at(url, st);
    ck_assert_msg(reg != NULL, "registry_open: %s", errbuf);
    return reg;
}

/* Open without keeping the state. */
static struct registry *open_plain(void)
{
    Offerd__Registry__Registry *st = NULL;
    struct registry *reg = open_ok(&st);
    registry_state_free(st);
    return reg;
}

/* Open, take the state, close. */
static Offerd__Registry__Registry *reload(void)
{
    Offerd__Registry__Registry *st = NULL;
    registry_close(open_ok(&st));
    return st;
}

static char *big_host(size_t n, char c)
{
    char *h = malloc(n + 1);
    memset(h, c, n);
    h[n] = '\0';
    return h;
}

/* A ZooKeeper client of the test's own, to look at the znodes. */
static zhandle_t *peek_open(void)
{
    zhandle_t *zh =
        zookeeper_init(zk_ensemble_hosts(zk), NULL, 4000, NULL, NULL, 0);
    ck_assert_ptr_nonnull(zh);
    for (int i = 0; i < 400 && zoo_state(zh) != ZOO_CONNECTED_STATE; i++)
        usleep(10 * 1000);
    ck_assert_int_eq(zoo_state(zh), ZOO_CONNECTED_STATE);
    return zh;
}

/* Children of <zkpath>/<rel>; -1 when it does not exist. */
static int count_children(const char *rel)
{
    zhandle_t *zh = peek_open();
    char p[512];
    snprintf(p, sizeof(p), "%s/%s", zkpath, rel);
    struct String_vector v = {0, NULL};
    int rc = zoo_get_children(zh, p, 0, &v);
    int n = rc == ZOK ? v.count : -1;
    deallocate_String_vector(&v);
    zookeeper_close(zh);
    return n;
}

static bool znode_exists(const char *rel)
{
    zhandle_t *zh = peek_open();
    char p[4096];
    snprintf(p, sizeof(p), "%s/%s", zkpath, rel);
    int rc = zoo_exists(zh, p, 0, NULL);
    zookeeper_close(zh);
    return rc == ZOK;
}

/* ---- Escaping ---- */

START_TEST(test_escape_round_trips)
{
    char longkey[REGISTRY_MAX_KEY_BYTES + 1];
    memset(longkey, '/', REGISTRY_MAX_KEY_BYTES);
    longkey[REGISTRY_MAX_KEY_BYTES] = '\0';
    const char *keys[] = {
        "",          ".",    "..",           "...",         "a/b",
        "%",         "%41",  "host/1.2.3.4", "r\xc3\xa9le", "a b\tc",
        "zookeeper", longkey};
    const char *want[] = {
        "%",         "%2E",       "%2E%2E",    "%2E%2E%2E",
        "a%2Fb",     "%25",       "%2541",     "host%2F1.2.3.4",
        "r%C3%A9le", "a%20b%09c", "zookeeper", NULL};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        char esc[3 * REGISTRY_MAX_KEY_BYTES + 8],
            back[REGISTRY_MAX_KEY_BYTES + 1];
        ck_assert_int_eq(registry_zk_escape(keys[i], esc, sizeof(esc)), 0);
        if (want[i] != NULL)
            ck_assert_str_eq(esc, want[i]);
        ck_assert_ptr_null(strchr(esc, '/'));
        ck_assert_int_eq(registry_zk_unescape(esc, back, sizeof(back)), 0);
        ck_assert_str_eq(back, keys[i]);
    }
    char out[8];
    ck_assert_int_eq(registry_zk_unescape("a%2", out, sizeof(out)), -1);
    ck_assert_int_eq(registry_zk_unescape("a%00", out, sizeof(out)), -1);
    ck_assert_int_eq(registry_zk_unescape("a b", out, sizeof(out)), -1);
    ck_assert_int_eq(registry_zk_unescape("", out, sizeof(out)), -1);
    ck_assert_int_eq(registry_zk_escape("abcdefgh", out, sizeof(out)), -1);
}
END_TEST

START_TEST(test_registry_zk_flag_needs_zk)
{
    struct master_flags mf;
    char *argv[] = {"offerd", "--registry=zk", "--work_dir=/tmp", NULL};
    master_flags_init(&mf);
    ck_assert_int_eq(
        master_flags_parse(&mf, 3, argv, NULL, errbuf, sizeof(errbuf)),
        FLAGS_ERROR);
    ck_assert_str_eq(errbuf, "--registry=zk needs --zk=zk://host:port/path "
                             "(or file:///path holding it)");
    master_flags_fini(&mf);

    char *argv2[] = {"offerd", "--registry=zk", "--work_dir=/tmp",
                     "--zk=zk://127.0.0.1:2181/offerd", NULL};
    master_flags_init(&mf);
    ck_assert_int_eq(
        master_flags_parse(&mf, 4, argv2, NULL, errbuf, sizeof(errbuf)),
        FLAGS_OK);
    ck_assert_str_eq(mf.registry, "zk");
    master_flags_fini(&mf);
}
END_TEST

/* ---- Round trips ---- */

START_TEST(test_round_trip_every_kind)
{
    struct registry *reg = open_plain();
    struct registry_batch *b = registry_batch_new();
    put_agent(b, "agent/with/slashes", "h1");
    put_agent(b, "..", "dots");

    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    Mesos__V1__TimeInfo t = MESOS__V1__TIME_INFO__INIT;
    aid.value = "u1";
    t.nanoseconds = 42;
    Offerd__Registry__UnreachableAgent u =
        OFFERD__REGISTRY__UNREACHABLE_AGENT__INIT;
    u.id = &aid;
    u.timestamp = &t;
    ck_assert_int_eq(registry_batch_put(b, REGISTRY_KIND_UNREACHABLE, &u.base,
                                        errbuf, sizeof(errbuf)),
                     0);
    Mesos__V1__AgentID gid = MESOS__V1__AGENT_ID__INIT;
    gid.value = "g1";
    Offerd__Registry__GoneAgent g = OFFERD__REGISTRY__GONE_AGENT__INIT;
    g.id = &gid;
    g.timestamp = &t;
    ck_assert_int_eq(registry_batch_put(b, REGISTRY_KIND_GONE, &g.base, errbuf,
                                        sizeof(errbuf)),
                     0);

    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    Mesos__V1__FrameworkInfo fi = MESOS__V1__FRAMEWORK_INFO__INIT;
    Offerd__Registry__Framework f = OFFERD__REGISTRY__FRAMEWORK__INIT;
    fid.value = "fw-1";
    fi.user = "root";
    fi.name = "marathon";
    fi.id = &fid;
    f.info = &fi;
    ck_assert_int_eq(registry_batch_put(b, REGISTRY_KIND_FRAMEWORK, &f.base,
                                        errbuf, sizeof(errbuf)),
                     0);

    Mesos__V1__MachineID mid = MESOS__V1__MACHINE_ID__INIT;
    Mesos__V1__MachineInfo mi = MESOS__V1__MACHINE_INFO__INIT;
    mid.hostname = "host.example";
    mid.ip = "10.0.0.1";
    mi.id = &mid;
    mi.has_mode = 1;
    mi.mode = MESOS__V1__MACHINE_INFO__MODE__DRAINING;
    ck_assert_int_eq(registry_batch_put(b, REGISTRY_KIND_MACHINE, &mi.base,
                                        errbuf, sizeof(errbuf)),
                     0);

    Mesos__V1__WeightInfo w = MESOS__V1__WEIGHT_INFO__INIT;
    w.role = "prod/web";
    w.weight = 2.5;
    ck_assert_int_eq(registry_batch_put(b, REGISTRY_KIND_WEIGHT, &w.base,
                                        errbuf, sizeof(errbuf)),
                     0);
    Mesos__V1__Quota__QuotaConfig q = MESOS__V1__QUOTA__QUOTA_CONFIG__INIT;
    q.role = "dev";
    ck_assert_int_eq(registry_batch_put(b, REGISTRY_KIND_QUOTA, &q.base, errbuf,
                                        sizeof(errbuf)),
                     0);
    Mesos__V1__Maintenance__Schedule sch =
        MESOS__V1__MAINTENANCE__SCHEDULE__INIT;
    ck_assert_int_eq(registry_batch_put(b, REGISTRY_KIND_SCHEDULE, &sch.base,
                                        errbuf, sizeof(errbuf)),
                     0);
    ck_assert(apply_wait(reg, b));
    registry_close(reg);

    Offerd__Registry__Registry *st = reload();
    ck_assert_int_eq(st->n_agents, 2);
    ck_assert_str_eq(agent_host(st, "agent/with/slashes"), "h1");
    ck_assert_str_eq(agent_host(st, ".."), "dots");
    ck_assert_int_eq(st->n_unreachable_agents, 1);
    ck_assert_str_eq(st->unreachable_agents[0]->id->value, "u1");
    ck_assert_int_eq(st->unreachable_agents[0]->timestamp->nanoseconds, 42);
    ck_assert_int_eq(st->n_gone_agents, 1);
    ck_assert_int_eq(st->n_frameworks, 1);
    ck_assert_str_eq(st->frameworks[0]->info->name, "marathon");
    ck_assert_int_eq(st->n_machines, 1);
    ck_assert_str_eq(st->machines[0]->id->ip, "10.0.0.1");
    ck_assert_int_eq(st->machines[0]->mode,
                     MESOS__V1__MACHINE_INFO__MODE__DRAINING);
    ck_assert_int_eq(st->n_weights, 1);
    ck_assert_str_eq(st->weights[0]->role, "prod/web");
    ck_assert_int_eq(st->n_quota_configs, 1);
    ck_assert_ptr_nonnull(st->schedule);
    registry_state_free(st);

    /* The layout docs/registry.md describes. */
    ck_assert(znode_exists("registry/version"));
    ck_assert(znode_exists("registry/agent/agent%2Fwith%2Fslashes"));
    ck_assert(znode_exists("registry/agent/%2E%2E"));
    ck_assert(znode_exists("registry/machine/host.example%2F10.0.0.1"));
    ck_assert(znode_exists("registry/schedule/%"));
}
END_TEST

START_TEST(test_replace_and_delete)
{
    struct registry *reg = open_plain();
    struct registry_batch *b = registry_batch_new();
    put_agent(b, "a1", "first");
    put_agent(b, "a2", "two");
    put_agent(b, "a3", "three");
    ck_assert(apply_wait(reg, b));

    b = registry_batch_new();
    put_agent(b, "a1", "second"); /* a set */
    del(b, REGISTRY_KIND_AGENT, "a2");
    del(b, REGISTRY_KIND_AGENT, "never-there");
    put_agent(b, "a4", "four"); /* put then delete in one batch */
    del(b, REGISTRY_KIND_AGENT, "a4");
    del(b, REGISTRY_KIND_AGENT, "a3"); /* delete then put */
    put_agent(b, "a3", "three again");
    ck_assert(apply_wait(reg, b));
    registry_close(reg);

    Offerd__Registry__Registry *st = reload();
    ck_assert_int_eq(st->n_agents, 2);
    ck_assert_str_eq(agent_host(st, "a1"), "second");
    ck_assert_str_eq(agent_host(st, "a3"), "three again");
    ck_assert_ptr_null(agent_host(st, "a2"));
    ck_assert_ptr_null(agent_host(st, "a4"));
    registry_state_free(st);
    ck_assert_int_eq(count_children("registry/agent"), 2);
}
END_TEST

/* Many batches in flight: group commit keeps each multi bounded. */
START_TEST(test_many_batches_grouped)
{
    struct registry *reg = open_plain();
    char *host = big_host(3000, 'h');
    int n = 300;
    for (int i = 0; i < n; i++) {
        struct registry_batch *b = registry_batch_new();
        char id[16];
        snprintf(id, sizeof(id), "a%d", i);
        put_agent(b, id, host);
        registry_apply(reg, b, NULL, NULL);
    }
    registry_test_flush(reg);
    struct registry_stats rs;
    registry_get_stats(reg, &rs);
    ck_assert_int_eq(rs.batches_ok, (uint64_t)n);
    ck_assert_int_eq(rs.batches_failed, 0);
    registry_close(reg);
    free(host);
    Offerd__Registry__Registry *st = reload();
    ck_assert_int_eq(st->n_agents, (size_t)n);
    registry_state_free(st);
}
END_TEST

/* ---- The version guard ---- */

START_TEST(test_deposed_writer_refused)
{
    struct registry *first = open_plain();
    struct registry_batch *b = registry_batch_new();
    put_agent(b, "a1", "by first");
    ck_assert(apply_wait(first, b));

    /* A second master opens the registry: it claims it. */
    Offerd__Registry__Registry *st = NULL;
    struct registry *second = open_ok(&st);
    ck_assert_str_eq(agent_host(st, "a1"), "by first");
    registry_state_free(st);

    b = registry_batch_new();
    put_agent(b, "a1", "by deposed first");
    put_agent(b, "a2", "by deposed first");
    ck_assert(!apply_wait(first, b));
    ck_assert_str_eq(last_err(), "registry claimed by another master");
    /* And it stays refused. */
    b = registry_batch_new();
    put_agent(b, "a3", "x");
    ck_assert(!apply_wait(first, b));
    ck_assert_str_eq(last_err(), "registry claimed by another master");

    b = registry_batch_new();
    put_agent(b, "a9", "by second");
    ck_assert(apply_wait(second, b));
    registry_close(first);
    registry_close(second);

    st = reload();
    ck_assert_int_eq(st->n_agents, 2);
    ck_assert_str_eq(agent_host(st, "a1"), "by first");
    ck_assert_str_eq(agent_host(st, "a9"), "by second");
    registry_state_free(st);
}
END_TEST

START_TEST(test_bad_url_and_newer_format_refused)
{
    Offerd__Registry__Registry *st = NULL;
    ck_assert_ptr_null(open_at("/var/lib/offerd", &st));
    ck_assert_ptr_nonnull(strstr(errbuf, "is not a zk:// URL"));
    ck_assert_ptr_null(open_at("zk:///path", &st));
    ck_assert_ptr_nonnull(strstr(errbuf, "no host"));

    registry_close(open_plain());
    zhandle_t *zh = peek_open();
    char p[512];
    snprintf(p, sizeof(p), "%s/registry/version", zkpath);
    const char *v = "offerd registry format 9; from the future";
    ck_assert_int_eq(zoo_set(zh, p, v, (int)strlen(v), -1), ZOK);
    zookeeper_close(zh);
    ck_assert_ptr_null(open_at(url, &st));
    ck_assert_ptr_nonnull(strstr(errbuf, "has format 9"));
    ck_assert_ptr_null(st);
}
END_TEST

/* ---- Sizes ---- */

START_TEST(test_big_entities)
{
    struct registry *reg = open_plain();
    /* One entity near the 1 MiB limit, and a batch of several that
     * together are far above ZooKeeper's request limit. */
    char *huge = big_host(REGISTRY_MAX_ENTITY_BYTES - 200, 'x');
    char *mid = big_host(300 * 1000, 'm');
    struct registry_batch *b = registry_batch_new();
    put_agent(b, "huge", huge);
    ck_assert(apply_wait(reg, b));
    b = registry_batch_new();
    for (int i = 0; i < 6; i++) {
        char id[16];
        snprintf(id, sizeof(id), "mid%d", i);
        put_agent(b, id, mid);
    }
    put_agent(b, "small", "s");
    ck_assert(apply_wait(reg, b));
    registry_close(reg);
    ck_assert_int_gt(count_children("registry/chunks"), 4);

    Offerd__Registry__Registry *st = reload();
    ck_assert_int_eq(st->n_agents, 8);
    ck_assert_str_eq(agent_host(st, "huge"), huge);
    ck_assert_str_eq(agent_host(st, "mid5"), mid);
    ck_assert_str_eq(agent_host(st, "small"), "s");
    registry_state_free(st);

    /* Replacing and deleting them takes their chunks away. */
    reg = open_plain();
    b = registry_batch_new();
    put_agent(b, "huge", "now small");
    for (int i = 0; i < 6; i++) {
        char id[16];
        snprintf(id, sizeof(id), "mid%d", i);
        del(b, REGISTRY_KIND_AGENT, id);
    }
    ck_assert(apply_wait(reg, b));
    registry_close(reg);
    ck_assert_int_eq(count_children("registry/chunks"), 0);
    st = reload();
    ck_assert_int_eq(st->n_agents, 2);
    ck_assert_str_eq(agent_host(st, "huge"), "now small");
    registry_state_free(st);
    free(huge);
    free(mid);
}
END_TEST

/* ---- Failures ---- */

START_TEST(test_injected_failure_changes_nothing)
{
    struct registry *reg = open_plain();
    struct registry_batch *b = registry_batch_new();
    put_agent(b, "a1", "kept");
    ck_assert(apply_wait(reg, b));

    char *huge = big_host(600 * 1000, 'x');
    registry_test_fail_next(reg, 1);
    b = registry_batch_new();
    put_agent(b, "a1", "changed");
    put_agent(b, "a2", huge); /* chunks written, then dropped */
    del(b, REGISTRY_KIND_AGENT, "a1");
    ck_assert(!apply_wait(reg, b));
    ck_assert_str_eq(last_err(), "injected failure");
    ck_assert_int_eq(count_children("registry/chunks"), 0);

    /* Still usable. */
    b = registry_batch_new();
    put_agent(b, "a3", "after");
    ck_assert(apply_wait(reg, b));
    registry_close(reg);
    free(huge);

    Offerd__Registry__Registry *st = reload();
    ck_assert_int_eq(st->n_agents, 2);
    ck_assert_str_eq(agent_host(st, "a1"), "kept");
    ck_assert_str_eq(agent_host(st, "a3"), "after");
    registry_state_free(st);
}
END_TEST

/* A writer that dies after writing a big value's chunks, before its multi:
 * nothing of the batch is visible, and the next open drops the chunks. */
START_TEST(test_crash_between_chunks_and_multi)
{
    registry_close(open_plain());
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        struct event_base *cb = event_base_new();
        struct registry_options o;
        registry_options_init(&o);
        o.backend = &registry_zk_backend;
        Offerd__Registry__Registry *st = NULL;
        struct registry *reg =
            registry_open(cb, url, &o, &st, errbuf, sizeof(errbuf));
        if (reg == NULL)
            _exit(1);
        registry_state_free(st);
        struct registry_batch *b = registry_batch_new();
        char *huge = big_host(900 * 1000, 'c');
        put_agent(b, "a1", huge);
        put_agent(b, "a2", "small");
        registry_test_exit_next(reg);
        registry_apply(reg, b, NULL, NULL);
        registry_test_flush(reg);
        _exit(2); /* not reached */
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), REGISTRY_FAULT_EXIT_CODE);
    ck_assert_int_gt(count_children("registry/chunks"), 0);

    Offerd__Registry__Registry *st = reload();
    ck_assert_int_eq(st->n_agents, 0);
    registry_state_free(st);
    ck_assert_int_eq(count_children("registry/chunks"), 0);
}
END_TEST

/* The server goes away mid-run: the write fails, the registry refuses
 * further writes, and after the server is back nothing of the failed batch
 * is there. */
START_TEST(test_server_stopped_mid_run)
{
    struct registry *reg = open_plain();
    struct registry_batch *b = registry_batch_new();
    put_agent(b, "a1", "before");
    ck_assert(apply_wait(reg, b));

    ck_assert_int_eq(zk_server_stop(zk, 0), 0);
    b = registry_batch_new();
    put_agent(b, "a2", "during");
    put_agent(b, "a1", "during");
    ck_assert(!apply_wait(reg, b));
    ck_assert_ptr_nonnull(strstr(last_err(), "registry write failed"));
    ck_assert_ptr_null(strchr(last_err(), '\n'));

    ck_assert_int_eq(zk_server_start(zk, 0, 60000), 0);
    /* Failed closed, or knows the batch was not written: either way a
     * later write either fails or lands whole. */
    b = registry_batch_new();
    put_agent(b, "a3", "after");
    bool later = apply_wait(reg, b);
    registry_close(reg);

    Offerd__Registry__Registry *st = reload();
    ck_assert_str_eq(agent_host(st, "a1"), "before");
    ck_assert_ptr_null(agent_host(st, "a2"));
    ck_assert_int_eq(st->n_agents, later ? 2 : 1);
    registry_state_free(st);
}
END_TEST

static void *resume_later(void *arg)
{
    (void)arg;
    usleep(3500 * 1000);
    zk_server_resume(zk, 0);
    return NULL;
}

/* The server hangs while a multi is in flight and comes back after the
 * client gave the connection up: the outcome, whichever it was, is found
 * out and reported truly (ok exactly when the batch is stored). */
START_TEST(test_hung_server_outcome_resolved)
{
    struct registry *reg = open_plain();
    struct registry_batch *b = registry_batch_new();
    put_agent(b, "a1", "before");
    ck_assert(apply_wait(reg, b));

    pthread_t t;
    ck_assert_int_eq(zk_server_pause(zk, 0), 0);
    ck_assert_int_eq(pthread_create(&t, NULL, resume_later, NULL), 0);
    b = registry_batch_new();
    put_agent(b, "a2", "while hung");
    bool ok2 = apply_wait(reg, b);
    bool unknown = !ok2 && strstr(last_err(), "unknown") != NULL;
    pthread_join(t, NULL);
    b = registry_batch_new();
    put_agent(b, "a3", "after");
    bool ok3 = apply_wait(reg, b);
    registry_close(reg);

    Offerd__Registry__Registry *st = reload();
    ck_assert_str_eq(agent_host(st, "a1"), "before");
    if (!unknown)
        ck_assert_int_eq(agent_host(st, "a2") != NULL, ok2);
    ck_assert_int_eq(agent_host(st, "a3") != NULL, ok3);
    ck_assert(ok3 || unknown);
    registry_state_free(st);
}
END_TEST

START_TEST(test_unreachable_server_refused_at_open)
{
    registry_zk_set_session_timeout_ms(1000);
    ck_assert_int_eq(zk_server_stop(zk, 0), 0);
    Offerd__Registry__Registry *st = NULL;
    ck_assert_ptr_null(open_at(url, &st));
    ck_assert_ptr_nonnull(strstr(errbuf, "cannot reach ZooKeeper"));
}
END_TEST

/* ---- Migration ---- */

static int rm_entry(const char *path, const struct stat *sb, int flag,
                    struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

START_TEST(test_copy_sqlite_to_zk)
{
    char dir[64] = "/tmp/offerd-test-regcopy-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    struct registry_options o;
    registry_options_init(&o);
    Offerd__Registry__Registry *st = NULL;
    struct registry *reg =
        registry_open(base, dir, &o, &st, errbuf, sizeof(errbuf));
    ck_assert_msg(reg != NULL, "%s", errbuf);
    registry_state_free(st);
    struct registry_batch *b = registry_batch_new();
    for (int i = 0; i < 1200; i++) {
        char id[16];
        snprintf(id, sizeof(id), "s%d", i);
        put_agent(b, id, "from sqlite");
    }
    char *huge = big_host(800 * 1000, 'q');
    put_agent(b, "huge", huge);
    ck_assert(apply_wait(reg, b));
    registry_close(reg);

    char from[128];
    snprintf(from, sizeof(from), "sqlite:%s", dir);
    const struct registry_backend *fb, *tb;
    const char *fw, *tw;
    ck_assert_int_eq(
        registry_spec_parse(from, &fb, &fw, errbuf, sizeof(errbuf)), 0);
    ck_assert_int_eq(registry_spec_parse(url, &tb, &tw, errbuf, sizeof(errbuf)),
                     0);
    ck_assert_ptr_eq(tb, &registry_zk_backend);
    ck_assert_int_eq(
        registry_spec_parse("/var/lib", &fb, &fw, errbuf, sizeof(errbuf)), -1);
    ck_assert_int_eq(
        registry_spec_parse(from, &fb, &fw, errbuf, sizeof(errbuf)), 0);

    /* Something in ZooKeeper already: refused without force. */
    reg = open_plain();
    b = registry_batch_new();
    put_agent(b, "stale", "old");
    ck_assert(apply_wait(reg, b));
    registry_close(reg);
    size_t copied = 99;
    ck_assert_int_eq(
        registry_copy(fb, fw, tb, tw, false, &copied, errbuf, sizeof(errbuf)),
        -1);
    ck_assert_ptr_nonnull(strstr(errbuf, "already holds 1 entities"));
    ck_assert_int_eq(copied, 0);
    st = reload();
    ck_assert_int_eq(st->n_agents, 1);
    registry_state_free(st);

    ck_assert_msg(registry_copy(fb, fw, tb, tw, true, &copied, errbuf,
                                sizeof(errbuf)) == 0,
                  "%s", errbuf);
    ck_assert_int_eq(copied, 1201);
    st = reload();
    ck_assert_int_eq(st->n_agents, 1201);
    ck_assert_ptr_null(agent_host(st, "stale"));
    ck_assert_str_eq(agent_host(st, "s1199"), "from sqlite");
    ck_assert_str_eq(agent_host(st, "huge"), huge);
    registry_state_free(st);
    free(huge);
    nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}
END_TEST

static Suite *registry_zk_suite(void)
{
    Suite *s = suite_create("registry_zk");
    TCase *pure = tcase_create("pure");
    tcase_add_test(pure, test_escape_round_trips);
    tcase_add_test(pure, test_registry_zk_flag_needs_zk);
    suite_add_tcase(s, pure);

    TCase *tc = tcase_create("zk");
    tcase_add_unchecked_fixture(tc, start_shared, stop_shared);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 90);
    tcase_add_test(tc, test_round_trip_every_kind);
    tcase_add_test(tc, test_replace_and_delete);
    tcase_add_test(tc, test_many_batches_grouped);
    tcase_add_test(tc, test_deposed_writer_refused);
    tcase_add_test(tc, test_bad_url_and_newer_format_refused);
    tcase_add_test(tc, test_big_entities);
    tcase_add_test(tc, test_injected_failure_changes_nothing);
    tcase_add_test(tc, test_crash_between_chunks_and_multi);
    tcase_add_test(tc, test_copy_sqlite_to_zk);
    suite_add_tcase(s, tc);

    TCase *own = tcase_create("zk_own");
    tcase_add_checked_fixture(own, setup_own, teardown_own);
    tcase_set_timeout(own, 90);
    tcase_add_test(own, test_server_stopped_mid_run);
    tcase_add_test(own, test_hung_server_outcome_resolved);
    tcase_add_test(own, test_unreachable_server_refused_at_open);
    suite_add_tcase(s, own);
    return s;
}

OFFERD_CHECK_MAIN(registry_zk_suite)
