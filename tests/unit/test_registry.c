/*
 * Tests for master/registry (the front: queue, worker, group commit,
 * completions) over the SQLite backend in a temporary work_dir, plus a fake
 * backend where the front's own behaviour needs exact control (a gate that
 * holds the worker inside a commit, a poisoned key, a slow commit).
 *
 * The tests that hold for any store run twice, over SQLite (test case
 * "sqlite") and over the in-memory backend (test case "memory", the store
 * named by the same temporary directory's path): the fixture sets
 * `backend`, and every open goes through it. Tests of SQLite's file (its
 * lock, corruption, crashes of a child process) run over SQLite only.
 *
 * Crash tests fork a child that owns the registry and dies mid-batch (by
 * the _exit hook, or by SIGKILL from the parent at a random moment while it
 * commits big batches); the parent reopens the store and checks that every
 * batch is all there or not there at all, and that every acknowledged one
 * is there. The parent has no registry (so no thread) when it forks.
 */
#include "master/registry.h"
#include "master/registry_mem.h"
#include "master/registry_private.h"
#include "master/registry_sqlite.h"
#include "mesos/v1/maintenance.pb-c.h"
#include "mesos/v1/mesos.pb-c.h"
#include "mesos/v1/quota.pb-c.h"

#include "check_main.h"

#include <check.h>
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static struct event_base *base;
static char dir[64];
static char dbpath[128];
/* The store under test (set by the fixture); `dir` is its `where`. */
static const struct registry_backend *backend;

/* ---- Fixture and loop helpers ---- */

static int rm_entry(const char *path, const struct stat *sb, int flag,
                    struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/offerd-test-registry-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(dbpath, sizeof(dbpath), "%s/%s", dir, REGISTRY_SQLITE_FILE);
    base = event_base_new();
    ck_assert_ptr_nonnull(base);
    backend = &registry_sqlite_backend;
}

static void teardown(void)
{
    event_base_free(base);
    nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static void setup_mem(void)
{
    setup();
    backend = &registry_mem_backend;
}

static void teardown_mem(void)
{
    registry_mem_drop_all();
    teardown();
}

static bool on_sqlite(void)
{
    return backend == &registry_sqlite_backend;
}

static int loop_timed_out;

static void on_loop_deadline(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
    loop_timed_out = 1;
}

/* Run the loop until *counter reaches want or ms pass; returns *counter. */
static int run_until_count(const int *counter, int want, int ms)
{
    struct event *t = evtimer_new(base, on_loop_deadline, NULL);
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    loop_timed_out = 0;
    evtimer_add(t, &tv);
    while (*counter < want && !loop_timed_out)
        event_base_loop(base, EVLOOP_ONCE);
    event_free(t);
    return *counter;
}

/* ---- Completions ---- */

#define MAX_DONE 4096

struct done_log {
    int count;           /* callbacks run */
    int order[MAX_DONE]; /* the tag of each, in the order run */
    bool ok[MAX_DONE];   /* indexed by tag */
    char err[8][256];    /* reasons of the first tags */
    bool on_main[MAX_DONE];
};

static struct done_log dl;
static pthread_t main_thread;
static int tags[MAX_DONE];

static void on_done(bool ok, const char *err, void *arg)
{
    int tag = *(int *)arg;
    dl.order[dl.count++] = tag;
    dl.ok[tag] = ok;
    dl.on_main[tag] = pthread_equal(pthread_self(), main_thread);
    if (tag < 8)
        snprintf(dl.err[tag], sizeof(dl.err[tag]), "%s", ok ? "" : err);
}

static void *tag_arg(int i)
{
    tags[i] = i;
    return &tags[i];
}

static void reset_log(void)
{
    memset(&dl, 0, sizeof(dl));
    main_thread = pthread_self();
}

/* ---- Entities ---- */

static char errbuf[1024];

static int put_agent(struct registry_batch *b, const char *id, const char *host)
{
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    Mesos__V1__AgentInfo info = MESOS__V1__AGENT_INFO__INIT;
    Offerd__Registry__Agent a = OFFERD__REGISTRY__AGENT__INIT;
    aid.value = (char *)id;
    info.hostname = (char *)host;
    info.id = &aid;
    a.info = &info;
    return registry_batch_put(b, REGISTRY_KIND_AGENT, &a.base, errbuf,
                              sizeof(errbuf));
}

static void put_framework(struct registry_batch *b, const char *id,
                          double failover)
{
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    Mesos__V1__FrameworkInfo info = MESOS__V1__FRAMEWORK_INFO__INIT;
    Mesos__V1__TimeInfo t = MESOS__V1__TIME_INFO__INIT;
    Offerd__Registry__Framework f = OFFERD__REGISTRY__FRAMEWORK__INIT;
    fid.value = (char *)id;
    info.user = "root";
    info.name = "marathon";
    info.id = &fid;
    info.has_failover_timeout = 1;
    info.failover_timeout = failover;
    t.nanoseconds = 1234567890;
    f.info = &info;
    f.registered_time = &t;
    ck_assert_int_eq(registry_batch_put(b, REGISTRY_KIND_FRAMEWORK, &f.base,
                                        errbuf, sizeof(errbuf)),
                     0);
}

static void put_marked(struct registry_batch *b, enum registry_kind kind,
                       const char *id, int64_t ns)
{
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    Mesos__V1__TimeInfo t = MESOS__V1__TIME_INFO__INIT;
    aid.value = (char *)id;
    t.nanoseconds = ns;
    int rc;
    if (kind == REGISTRY_KIND_UNREACHABLE) {
        Offerd__Registry__UnreachableAgent u =
            OFFERD__REGISTRY__UNREACHABLE_AGENT__INIT;
        u.id = &aid;
        u.timestamp = &t;
        rc = registry_batch_put(b, kind, &u.base, errbuf, sizeof(errbuf));
    } else {
        Offerd__Registry__GoneAgent g = OFFERD__REGISTRY__GONE_AGENT__INIT;
        g.id = &aid;
        g.timestamp = &t;
        rc = registry_batch_put(b, kind, &g.base, errbuf, sizeof(errbuf));
    }
    ck_assert_int_eq(rc, 0);
}

/* An agent id's hostname in the loaded state, or NULL when absent. */
static const char *agent_host(const Offerd__Registry__Registry *st,
                              const char *id)
{
    for (size_t i = 0; i < st->n_agents; i++)
        if (strcmp(st->agents[i]->info->id->value, id) == 0)
            return st->agents[i]->info->hostname;
    return NULL;
}

/* ---- Registry helpers ---- */

/* registry_open on the store under test, with opts (NULL: defaults) whose
 * backend, when unset, is the fixture's. */
static struct registry *open_store(const struct registry_options *opts,
                                   Offerd__Registry__Registry **st)
{
    struct registry_options o;
    if (opts != NULL)
        o = *opts;
    else
        registry_options_init(&o);
    if (o.backend == NULL)
        o.backend = backend;
    return registry_open(base, dir, &o, st, errbuf, sizeof(errbuf));
}

static struct registry *open_ok(const struct registry_options *opts,
                                Offerd__Registry__Registry **st)
{
    struct registry *reg = open_store(opts, st);
    ck_assert_msg(reg != NULL, "registry_open: %s", errbuf);
    return reg;
}

/* Open, discard the state, close: for checking what is stored. */
static Offerd__Registry__Registry *reload(void)
{
    Offerd__Registry__Registry *st = NULL;
    struct registry *reg = open_ok(NULL, &st);
    registry_close(reg);
    return st;
}

/* Apply b and wait for its completion; returns ok. */
static bool apply_wait(struct registry *reg, struct registry_batch *b)
{
    int before = dl.count;
    registry_apply(reg, b, on_done, tag_arg(MAX_DONE - 1));
    ck_assert_int_eq(run_until_count(&dl.count, before + 1, 20000), before + 1);
    return dl.ok[MAX_DONE - 1];
}

/* open() must fail with a reason containing every one of needles. */
static void expect_open_fails(const char *n1, const char *n2)
{
    Offerd__Registry__Registry *st = NULL;
    struct registry *reg = open_store(NULL, &st);
    ck_assert_msg(reg == NULL, "open should fail (%s)", n1);
    ck_assert_ptr_null(st);
    ck_assert_msg(strstr(errbuf, n1) != NULL, "'%s' not in: %s", n1, errbuf);
    if (n2)
        ck_assert_msg(strstr(errbuf, n2) != NULL, "'%s' not in: %s", n2,
                      errbuf);
    ck_assert_ptr_null(strchr(errbuf, '\n'));
}

/* Run SQL on the closed store, as a damaged or foreign file would look. */
static void sql_on_file(const char *sql)
{
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open(dbpath, &db), SQLITE_OK);
    char *msg = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
    ck_assert_msg(rc == SQLITE_OK, "%s: %s", sql, msg ? msg : "?");
    sqlite3_close(db);
}

static uint32_t crc32_test(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    }
    return c ^ 0xFFFFFFFFu;
}

/* Store a few agents a0..a(n-1) and close. */
static void store_agents(int n, const char *prefix)
{
    reset_log();
    Offerd__Registry__Registry *st = NULL;
    struct registry *reg = open_ok(NULL, &st);
    registry_state_free(st);
    struct registry_batch *b = registry_batch_new();
    for (int i = 0; i < n; i++) {
        char id[32], host[640]; /* prefixes go up to 600 chars */
        snprintf(id, sizeof(id), "a%d", i);
        snprintf(host, sizeof(host), "%s-%d", prefix, i);
        ck_assert_int_eq(put_agent(b, id, host), 0);
    }
    ck_assert(apply_wait(reg, b));
    registry_close(reg);
}

/* ---- Opening ---- */

START_TEST(test_empty_work_dir_starts_empty)
{
    Offerd__Registry__Registry *st = NULL;
    struct registry *reg = open_ok(NULL, &st);
    ck_assert_ptr_nonnull(st);
    ck_assert_uint_eq(st->n_agents, 0);
    ck_assert_uint_eq(st->n_unreachable_agents, 0);
    ck_assert_uint_eq(st->n_gone_agents, 0);
    ck_assert_uint_eq(st->n_frameworks, 0);
    ck_assert_uint_eq(st->n_machines, 0);
    ck_assert_uint_eq(st->n_weights, 0);
    ck_assert_uint_eq(st->n_quota_configs, 0);
    ck_assert_ptr_null(st->schedule);
    ck_assert_uint_eq(st->format_version, 1);
    struct stat sb;
    if (on_sqlite())
        ck_assert_int_eq(stat(dbpath, &sb), 0);
    registry_close(reg);
    registry_state_free(st);
}
END_TEST

START_TEST(test_missing_work_dir_refused)
{
    Offerd__Registry__Registry *st = NULL;
    char missing[128];
    snprintf(missing, sizeof(missing), "%s/nope", dir);
    ck_assert_ptr_null(
        registry_open(base, missing, NULL, &st, errbuf, sizeof(errbuf)));
    ck_assert_ptr_nonnull(strstr(errbuf, "nope"));
    ck_assert_ptr_null(st);
}
END_TEST

START_TEST(test_second_open_refused_while_in_use)
{
    Offerd__Registry__Registry *st = NULL, *st2 = NULL;
    struct registry *reg = open_ok(NULL, &st);
    struct registry *reg2 = open_store(NULL, &st2);
    ck_assert_ptr_null(reg2);
    ck_assert_ptr_null(st2);
    ck_assert_msg(strstr(errbuf, "in use") != NULL, "%s", errbuf);
    registry_close(reg);
    registry_state_free(st);
    /* Free again once the first is closed. */
    st = reload();
    registry_state_free(st);
}
END_TEST

/* ---- Round trips ---- */

START_TEST(test_round_trip_every_kind)
{
    reset_log();
    Offerd__Registry__Registry *st = NULL;
    struct registry *reg = open_ok(NULL, &st);
    registry_state_free(st);

    struct registry_batch *b = registry_batch_new();
    ck_assert_int_eq(put_agent(b, "a1", "host1"), 0);
    ck_assert_int_eq(put_agent(b, "a2", "host2"), 0);
    put_framework(b, "f1", 604800.0);
    put_marked(b, REGISTRY_KIND_UNREACHABLE, "a3", 42);
    put_marked(b, REGISTRY_KIND_GONE, "a4", 43);

    Mesos__V1__MachineID mid = MESOS__V1__MACHINE_ID__INIT;
    Mesos__V1__MachineInfo mi = MESOS__V1__MACHINE_INFO__INIT;
    mid.hostname = "m1";
    mid.ip = "10.0.0.1";
    mi.id = &mid;
    mi.has_mode = 1;
    mi.mode = MESOS__V1__MACHINE_INFO__MODE__DOWN;
    ck_assert_int_eq(registry_batch_put(b, REGISTRY_KIND_MACHINE, &mi.base,
                                        errbuf, sizeof(errbuf)),
                     0);
    Mesos__V1__WeightInfo wi = MESOS__V1__WEIGHT_INFO__INIT;
    wi.weight = 2.5;
    wi.role = "eng";
    ck_assert_int_eq(registry_batch_put(b, REGISTRY_KIND_WEIGHT, &wi.base,
                                        errbuf, sizeof(errbuf)),
                     0);
    Mesos__V1__Quota__QuotaConfig qc = MESOS__V1__QUOTA__QUOTA_CONFIG__INIT;
    qc.role = "eng/web";
    ck_assert_int_eq(registry_batch_put(b, REGISTRY_KIND_QUOTA, &qc.base,
                                        errbuf, sizeof(errbuf)),
                     0);
    /* An empty schedule encodes to zero bytes: stored and loaded all the
     * same. */
    Mesos__V1__Maintenance__Schedule sc =
        MESOS__V1__MAINTENANCE__SCHEDULE__INIT;
    ck_assert_int_eq(registry_batch_put(b, REGISTRY_KIND_SCHEDULE, &sc.base,
                                        errbuf, sizeof(errbuf)),
                     0);
    ck_assert_uint_eq(registry_batch_count(b), 9);
    ck_assert(apply_wait(reg, b));

    /* A second batch deletes one agent. */
    b = registry_batch_new();
    ck_assert_int_eq(
        registry_batch_delete(b, REGISTRY_KIND_AGENT, "a2", errbuf, 1024), 0);
    ck_assert(apply_wait(reg, b));
    registry_close(reg);

    st = reload();
    ck_assert_uint_eq(st->n_agents, 1);
    ck_assert_str_eq(agent_host(st, "a1"), "host1");
    ck_assert_ptr_null(agent_host(st, "a2"));
    ck_assert_uint_eq(st->n_frameworks, 1);
    ck_assert_str_eq(st->frameworks[0]->info->id->value, "f1");
    ck_assert(st->frameworks[0]->info->failover_timeout == 604800.0);
    ck_assert_int_eq(st->frameworks[0]->registered_time->nanoseconds,
                     1234567890);
    ck_assert_uint_eq(st->n_unreachable_agents, 1);
    ck_assert_str_eq(st->unreachable_agents[0]->id->value, "a3");
    ck_assert_int_eq(st->unreachable_agents[0]->timestamp->nanoseconds, 42);
    ck_assert_uint_eq(st->n_gone_agents, 1);
    ck_assert_str_eq(st->gone_agents[0]->id->value, "a4");
    ck_assert_uint_eq(st->n_machines, 1);
    ck_assert_str_eq(st->machines[0]->id->ip, "10.0.0.1");
    ck_assert_int_eq(st->machines[0]->mode,
                     MESOS__V1__MACHINE_INFO__MODE__DOWN);
    ck_assert_uint_eq(st->n_weights, 1);
    ck_assert(st->weights[0]->weight == 2.5);
    ck_assert_uint_eq(st->n_quota_configs, 1);
    ck_assert_str_eq(st->quota_configs[0]->role, "eng/web");
    ck_assert_ptr_nonnull(st->schedule);
    ck_assert_uint_eq(st->schedule->n_windows, 0);
    /* Entities can be taken out of the state before it is freed. */
    Offerd__Registry__Agent *kept = st->agents[0];
    st->agents[0] = NULL;
    registry_state_free(st);
    ck_assert_str_eq(kept->info->hostname, "host1");
    protobuf_c_message_free_unpacked(&kept->base, NULL);
}
END_TEST

START_TEST(test_put_replaces_same_key)
{
    store_agents(3, "old");
    reset_log();
    Offerd__Registry__Registry *st = NULL;
    struct registry *reg = open_ok(NULL, &st);
    ck_assert_uint_eq(st->n_agents, 3);
    registry_state_free(st);
    struct registry_batch *b = registry_batch_new();
    ck_assert_int_eq(put_agent(b, "a1", "new-1"), 0);
    ck_assert(apply_wait(reg, b));
    registry_close(reg);

    st = reload();
    ck_assert_uint_eq(st->n_agents, 3);
    ck_assert_str_eq(agent_host(st, "a0"), "old-0");
    ck_assert_str_eq(agent_host(st, "a1"), "new-1");
    registry_state_free(st);
}
END_TEST

START_TEST(test_ops_apply_in_batch_order)
{
    reset_log();
    Offerd__Registry__Registry *st = NULL;
    struct registry *reg = open_ok(NULL, &st);
    registry_state_free(st);
    struct registry_batch *b = registry_batch_new();
    /* put then delete: gone; delete then put: there; absent delete: fine. */
    ck_assert_int_eq(put_agent(b, "x", "hx"), 0);
    ck_assert_int_eq(registry_batch_delete(b, REGISTRY_KIND_AGENT, "x", errbuf,
                                           sizeof(errbuf)),
                     0);
    ck_assert_int_eq(registry_batch_delete(b, REGISTRY_KIND_AGENT, "y", errbuf,
                                           sizeof(errbuf)),
                     0);
    ck_assert_int_eq(put_agent(b, "y", "hy"), 0);
    ck_assert_int_eq(registry_batch_delete(b, REGISTRY_KIND_FRAMEWORK, "zz",
                                           errbuf, sizeof(errbuf)),
                     0);
    ck_assert(apply_wait(reg, b));
    /* An empty batch completes too. */
    ck_assert(apply_wait(reg, registry_batch_new()));
    registry_close(reg);
    st = reload();
    ck_assert_uint_eq(st->n_agents, 1);
    ck_assert_str_eq(agent_host(st, "y"), "hy");
    registry_state_free(st);
}
END_TEST

/* ---- Refusals when building a batch ---- */

START_TEST(test_put_refusals)
{
    struct registry_batch *b = registry_batch_new();
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    Mesos__V1__AgentInfo info = MESOS__V1__AGENT_INFO__INIT;
    Offerd__Registry__Agent a = OFFERD__REGISTRY__AGENT__INIT;
    Mesos__V1__WeightInfo wi = MESOS__V1__WEIGHT_INFO__INIT;
    a.info = &info;
    info.hostname = "h";

    /* No id. */
    ck_assert_int_eq(registry_batch_put(b, REGISTRY_KIND_AGENT, &a.base, errbuf,
                                        sizeof(errbuf)),
                     -1);
    ck_assert_ptr_nonnull(strstr(errbuf, "no id"));
    /* Wrong message for the kind. */
    info.id = &aid;
    aid.value = "a1";
    ck_assert_int_eq(registry_batch_put(b, REGISTRY_KIND_FRAMEWORK, &a.base,
                                        errbuf, sizeof(errbuf)),
                     -1);
    ck_assert_ptr_nonnull(strstr(errbuf, "must be"));
    /* Bad kind. */
    ck_assert_int_eq(registry_batch_put(b, (enum registry_kind)99, &a.base,
                                        errbuf, sizeof(errbuf)),
                     -1);
    ck_assert_int_eq(registry_batch_delete(b, (enum registry_kind) - 1, "k",
                                           errbuf, sizeof(errbuf)),
                     -1);
    /* A required field unset (AgentInfo.hostname). */
    info.hostname = NULL;
    ck_assert_int_eq(registry_batch_put(b, REGISTRY_KIND_AGENT, &a.base, errbuf,
                                        sizeof(errbuf)),
                     -1);
    ck_assert_ptr_nonnull(strstr(errbuf, "required"));
    /* A weight without a role. */
    ck_assert_int_eq(registry_batch_put(b, REGISTRY_KIND_WEIGHT, &wi.base,
                                        errbuf, sizeof(errbuf)),
                     -1);
    /* A key above the limit. */
    char *longid = malloc(REGISTRY_MAX_KEY_BYTES + 2);
    memset(longid, 'k', REGISTRY_MAX_KEY_BYTES + 1);
    longid[REGISTRY_MAX_KEY_BYTES + 1] = '\0';
    info.hostname = "h";
    aid.value = longid;
    ck_assert_int_eq(registry_batch_put(b, REGISTRY_KIND_AGENT, &a.base, errbuf,
                                        sizeof(errbuf)),
                     -1);
    ck_assert_ptr_nonnull(strstr(errbuf, "too long"));
    ck_assert_int_eq(registry_batch_delete(b, REGISTRY_KIND_AGENT, longid,
                                           errbuf, sizeof(errbuf)),
                     -1);
    /* A key exactly at the limit is fine. */
    longid[REGISTRY_MAX_KEY_BYTES] = '\0';
    ck_assert_int_eq(registry_batch_put(b, REGISTRY_KIND_AGENT, &a.base, errbuf,
                                        sizeof(errbuf)),
                     0);
    free(longid);
    ck_assert_uint_eq(registry_batch_count(b), 1);
    registry_batch_free(b);
}
END_TEST

START_TEST(test_oversized_entity_refused)
{
    struct registry_batch *b = registry_batch_new();
    size_t n = REGISTRY_MAX_ENTITY_BYTES + 1;
    char *host = malloc(n + 1);
    memset(host, 'h', n);
    host[n] = '\0';
    ck_assert_int_eq(put_agent(b, "big", host), -1);
    ck_assert_msg(strstr(errbuf, "above the limit") != NULL, "%s", errbuf);
    ck_assert_uint_eq(registry_batch_count(b), 0);
    /* Just under the limit (with the message's few bytes of framing) is
     * stored. */
    host[REGISTRY_MAX_ENTITY_BYTES - 64] = '\0';
    ck_assert_int_eq(put_agent(b, "big", host), 0);
    free(host);

    reset_log();
    Offerd__Registry__Registry *st = NULL;
    struct registry *reg = open_ok(NULL, &st);
    registry_state_free(st);
    ck_assert(apply_wait(reg, b));
    registry_close(reg);
    st = reload();
    ck_assert_uint_eq(strlen(agent_host(st, "big")),
                      REGISTRY_MAX_ENTITY_BYTES - 64);
    registry_state_free(st);
}
END_TEST

START_TEST(test_key_of_forms)
{
    char key[64];
    Mesos__V1__MachineID mid = MESOS__V1__MACHINE_ID__INIT;
    Mesos__V1__MachineInfo mi = MESOS__V1__MACHINE_INFO__INIT;
    mi.id = &mid;
    mid.hostname = "m1";
    ck_assert_int_eq(registry_key_of(REGISTRY_KIND_MACHINE, &mi.base, key,
                                     sizeof(key), errbuf, sizeof(errbuf)),
                     0);
    ck_assert_str_eq(key, "m1/");
    mid.ip = "10.0.0.2";
    ck_assert_int_eq(registry_key_of(REGISTRY_KIND_MACHINE, &mi.base, key,
                                     sizeof(key), errbuf, sizeof(errbuf)),
                     0);
    ck_assert_str_eq(key, "m1/10.0.0.2");
    mid.hostname = NULL;
    ck_assert_int_eq(registry_key_of(REGISTRY_KIND_MACHINE, &mi.base, key,
                                     sizeof(key), errbuf, sizeof(errbuf)),
                     0);
    ck_assert_str_eq(key, "/10.0.0.2");
    mid.ip = NULL;
    ck_assert_int_eq(registry_key_of(REGISTRY_KIND_MACHINE, &mi.base, key,
                                     sizeof(key), errbuf, sizeof(errbuf)),
                     -1);
    /* Too small a buffer is an error, not a truncated key. */
    mid.hostname = "a-rather-long-hostname.example.com";
    ck_assert_int_eq(registry_key_of(REGISTRY_KIND_MACHINE, &mi.base, key, 8,
                                     errbuf, sizeof(errbuf)),
                     -1);
    Mesos__V1__Maintenance__Schedule sc =
        MESOS__V1__MAINTENANCE__SCHEDULE__INIT;
    ck_assert_int_eq(registry_key_of(REGISTRY_KIND_SCHEDULE, &sc.base, key,
                                     sizeof(key), errbuf, sizeof(errbuf)),
                     0);
    ck_assert_str_eq(key, "");
    ck_assert_str_eq(registry_kind_name(REGISTRY_KIND_UNREACHABLE),
                     "unreachable_agent");
    ck_assert_ptr_null(registry_kind_name(REGISTRY_KIND_COUNT));
}
END_TEST

/* ---- Completions ---- */

START_TEST(test_completions_in_order_on_loop)
{
    reset_log();
    Offerd__Registry__Registry *st = NULL;
    struct registry *reg = open_ok(NULL, &st);
    registry_state_free(st);
    enum { N = 64 };
    for (int i = 0; i < N; i++) {
        struct registry_batch *b = registry_batch_new();
        char id[16];
        snprintf(id, sizeof(id), "a%d", i);
        ck_assert_int_eq(put_agent(b, id, "h"), 0);
        registry_apply(reg, b, on_done, tag_arg(i));
    }
    /* Never inside registry_apply. */
    ck_assert_int_eq(dl.count, 0);
    ck_assert_int_eq(run_until_count(&dl.count, N, 20000), N);
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(dl.order[i], i);
        ck_assert(dl.ok[i]);
        ck_assert(dl.on_main[i]);
    }
    registry_close(reg);
}
END_TEST

/* A random mix of puts and deletes over a few keys, 1,000 batches queued at
 * once: all complete, in order, in fewer transactions than batches, and the
 * store ends exactly as a model of the same operations. */
START_TEST(test_many_batches_group_commit)
{
    enum { N = 1000, KEYS = 40 };
    unsigned seed = (unsigned)time(NULL);
    srand(seed);
    int model[KEYS]; /* version stored under a<k>, or -1 */
    for (int k = 0; k < KEYS; k++)
        model[k] = -1;

    reset_log();
    Offerd__Registry__Registry *st = NULL;
    struct registry *reg = open_ok(NULL, &st);
    registry_state_free(st);
    for (int i = 0; i < N; i++) {
        struct registry_batch *b = registry_batch_new();
        int ops = 1 + rand() % 4;
        for (int j = 0; j < ops; j++) {
            int k = rand() % KEYS;
            char id[16], host[32];
            snprintf(id, sizeof(id), "a%d", k);
            if (rand() % 4 == 0) {
                ck_assert_int_eq(registry_batch_delete(b, REGISTRY_KIND_AGENT,
                                                       id, errbuf, 1024),
                                 0);
                model[k] = -1;
            } else {
                snprintf(host, sizeof(host), "v%d.%d", i, j);
                ck_assert_int_eq(put_agent(b, id, host), 0);
                model[k] = i * 10 + j;
            }
        }
        registry_apply(reg, b, on_done, tag_arg(i));
    }
    ck_assert_int_eq(run_until_count(&dl.count, N, 50000), N);
    for (int i = 0; i < N; i++) {
        ck_assert_msg(dl.order[i] == i, "seed %u: out of order at %d", seed, i);
        ck_assert(dl.ok[i]);
    }
    struct registry_stats s;
    registry_get_stats(reg, &s);
    ck_assert_uint_eq(s.batches_ok, N);
    ck_assert_uint_eq(s.batches_failed, 0);
    ck_assert_uint_eq(s.queued, 0);
    ck_assert_msg(s.commits < N, "seed %u: %llu commits for %d batches", seed,
                  (unsigned long long)s.commits, N);
    registry_close(reg);

    st = reload();
    size_t present = 0;
    for (int k = 0; k < KEYS; k++) {
        char id[16], host[32];
        snprintf(id, sizeof(id), "a%d", k);
        const char *h = agent_host(st, id);
        if (model[k] < 0) {
            ck_assert_msg(h == NULL, "seed %u: %s should be gone", seed, id);
            continue;
        }
        present++;
        snprintf(host, sizeof(host), "v%d.%d", model[k] / 10, model[k] % 10);
        ck_assert_msg(h && strcmp(h, host) == 0, "seed %u: %s is %s, not %s",
                      seed, id, h ? h : "absent", host);
    }
    ck_assert_uint_eq(st->n_agents, present);
    registry_state_free(st);
}
END_TEST

START_TEST(test_group_commit_off_commits_each_batch)
{
    enum { N = 20 };
    struct registry_options o;
    registry_options_init(&o);
    o.max_group = 1;
    reset_log();
    Offerd__Registry__Registry *st = NULL;
    struct registry *reg = open_ok(&o, &st);
    registry_state_free(st);
    for (int i = 0; i < N; i++) {
        struct registry_batch *b = registry_batch_new();
        ck_assert_int_eq(put_agent(b, "same", "h"), 0);
        registry_apply(reg, b, on_done, tag_arg(i));
    }
    ck_assert_int_eq(run_until_count(&dl.count, N, 20000), N);
    struct registry_stats s;
    registry_get_stats(reg, &s);
    ck_assert_uint_eq(s.commits, N);
    registry_close(reg);
}
END_TEST

static int chain_left;
static struct registry *chain_reg;

static void on_chain_done(bool ok, const char *err, void *arg)
{
    (void)err;
    on_done(ok, err, arg);
    if (chain_left-- > 0) {
        struct registry_batch *b = registry_batch_new();
        ck_assert_int_eq(put_agent(b, "chained", "h"), 0);
        registry_apply(chain_reg, b, on_chain_done, tag_arg(dl.count));
    }
}

START_TEST(test_apply_from_done_callback)
{
    reset_log();
    Offerd__Registry__Registry *st = NULL;
    chain_reg = open_ok(NULL, &st);
    registry_state_free(st);
    chain_left = 4;
    registry_apply(chain_reg, registry_batch_new(), on_chain_done, tag_arg(0));
    ck_assert_int_eq(run_until_count(&dl.count, 5, 20000), 5);
    for (int i = 0; i < 5; i++)
        ck_assert(dl.ok[i]);
    registry_close(chain_reg);
}
END_TEST

/* registry_test_flush: every completion, in order, on this thread, without
 * running the loop; chained applies included; the loop then finds none. */
START_TEST(test_flush_delivers_without_loop)
{
    enum { N = 20 };
    reset_log();
    Offerd__Registry__Registry *st = NULL;
    chain_reg = open_ok(NULL, &st);
    registry_state_free(st);
    registry_test_flush(chain_reg); /* nothing queued: returns */
    ck_assert_int_eq(dl.count, 0);
    for (int i = 0; i < N; i++) {
        if (i == 7)
            registry_test_fail_next(chain_reg, 1);
        struct registry_batch *b = registry_batch_new();
        char id[16];
        snprintf(id, sizeof(id), "a%d", i);
        ck_assert_int_eq(put_agent(b, id, "h"), 0);
        registry_apply(chain_reg, b, on_done, tag_arg(i));
    }
    registry_test_flush(chain_reg);
    ck_assert_int_eq(dl.count, N);
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(dl.order[i], i);
        ck_assert(dl.ok[i] == (i != 7));
        ck_assert(dl.on_main[i]);
    }
    chain_left = 3;
    registry_apply(chain_reg, registry_batch_new(), on_chain_done, tag_arg(N));
    registry_test_flush(chain_reg);
    ck_assert_int_eq(dl.count, N + 4);
    event_base_loop(base, EVLOOP_NONBLOCK);
    ck_assert_int_eq(dl.count, N + 4);
    registry_close(chain_reg);
    st = reload();
    ck_assert_uint_eq(st->n_agents, N); /* a7 failed; "chained" is there */
    ck_assert_ptr_null(agent_host(st, "a7"));
    registry_state_free(st);
}
END_TEST

/* ---- Failures ---- */

START_TEST(test_injected_failure_changes_nothing)
{
    store_agents(3, "keep");
    reset_log();
    Offerd__Registry__Registry *st = NULL;
    struct registry *reg = open_ok(NULL, &st);
    registry_state_free(st);

    registry_test_fail_next(reg, 1);
    struct registry_batch *b = registry_batch_new();
    ck_assert_int_eq(put_agent(b, "a0", "changed"), 0);
    ck_assert_int_eq(put_agent(b, "new", "h"), 0);
    ck_assert_int_eq(registry_batch_delete(b, REGISTRY_KIND_AGENT, "a1", errbuf,
                                           sizeof(errbuf)),
                     0);
    registry_apply(reg, b, on_done, tag_arg(0));
    b = registry_batch_new();
    ck_assert_int_eq(put_agent(b, "after", "h"), 0);
    registry_apply(reg, b, on_done, tag_arg(1));
    ck_assert_int_eq(run_until_count(&dl.count, 2, 20000), 2);
    ck_assert(!dl.ok[0]);
    ck_assert_str_eq(dl.err[0], "injected failure");
    ck_assert(dl.ok[1]);
    struct registry_stats s;
    registry_get_stats(reg, &s);
    ck_assert_uint_eq(s.batches_failed, 1);
    registry_close(reg);

    st = reload();
    ck_assert_uint_eq(st->n_agents, 4);
    ck_assert_str_eq(agent_host(st, "a0"), "keep-0");
    ck_assert_str_eq(agent_host(st, "a1"), "keep-1");
    ck_assert_ptr_null(agent_host(st, "new"));
    ck_assert_ptr_nonnull(agent_host(st, "after"));
    registry_state_free(st);
}
END_TEST

START_TEST(test_injected_failure_among_queued_batches)
{
    enum { N = 30 };
    reset_log();
    Offerd__Registry__Registry *st = NULL;
    struct registry *reg = open_ok(NULL, &st);
    registry_state_free(st);
    for (int i = 0; i < N; i++) {
        if (i == 10 || i == 11 || i == 20)
            registry_test_fail_next(reg, 1);
        struct registry_batch *b = registry_batch_new();
        char id[16];
        snprintf(id, sizeof(id), "a%d", i);
        ck_assert_int_eq(put_agent(b, id, "h"), 0);
        registry_apply(reg, b, on_done, tag_arg(i));
    }
    ck_assert_int_eq(run_until_count(&dl.count, N, 20000), N);
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(dl.order[i], i);
        ck_assert_msg(dl.ok[i] == !(i == 10 || i == 11 || i == 20), "batch %d",
                      i);
    }
    registry_close(reg);
    st = reload();
    ck_assert_uint_eq(st->n_agents, N - 3);
    ck_assert_ptr_null(agent_host(st, "a11"));
    ck_assert_ptr_nonnull(agent_host(st, "a12"));
    registry_state_free(st);
}
END_TEST

/* A real write error: the file size limit (RLIMIT_FSIZE) stops the WAL from
 * growing, so a big batch fails with an I/O error, is rolled back, and
 * small batches still commit; once the limit is lifted the big one does. */
START_TEST(test_write_error_rolls_back_and_recovers)
{
    reset_log();
    Offerd__Registry__Registry *st = NULL;
    struct registry *reg = open_ok(NULL, &st);
    registry_state_free(st);
    struct registry_batch *b = registry_batch_new();
    ck_assert_int_eq(put_agent(b, "first", "h"), 0);
    ck_assert(apply_wait(reg, b));

    signal(SIGXFSZ, SIG_IGN);
    struct rlimit old, lim;
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
    lim = old;
    lim.rlim_cur = 512 * 1024;
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);

    char *host = malloc(200 * 1024 + 1);
    memset(host, 'x', 200 * 1024);
    host[200 * 1024] = '\0';
    b = registry_batch_new();
    for (int i = 0; i < 8; i++) {
        char id[16];
        snprintf(id, sizeof(id), "fail%d", i);
        ck_assert_int_eq(put_agent(b, id, host), 0);
    }
    int before = dl.count;
    registry_apply(reg, b, on_done, tag_arg(0));
    ck_assert_int_eq(run_until_count(&dl.count, before + 1, 20000), before + 1);
    ck_assert(!dl.ok[0]);
    ck_assert_msg(strstr(dl.err[0], "registry write failed") != NULL, "%s",
                  dl.err[0]);
    ck_assert_ptr_null(strchr(dl.err[0], '\n'));

    /* Small writes go on working under the limit. */
    b = registry_batch_new();
    ck_assert_int_eq(put_agent(b, "small", "h"), 0);
    ck_assert(apply_wait(reg, b));

    /* The cause goes away: the same big batch now commits. */
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
    b = registry_batch_new();
    for (int i = 0; i < 8; i++) {
        char id[16];
        snprintf(id, sizeof(id), "ok%d", i);
        ck_assert_int_eq(put_agent(b, id, host), 0);
    }
    ck_assert(apply_wait(reg, b));
    free(host);
    registry_close(reg);

    st = reload();
    ck_assert_uint_eq(st->n_agents, 10);
    ck_assert_ptr_null(agent_host(st, "fail0"));
    ck_assert_ptr_nonnull(agent_host(st, "ok7"));
    ck_assert_ptr_nonnull(agent_host(st, "small"));
    registry_state_free(st);
}
END_TEST

/* ---- Corruption ---- */

/* Overwrite len bytes at off in the database file with byte v. */
static void clobber(off_t off, size_t len, int v)
{
    int fd = open(dbpath, O_WRONLY);
    ck_assert_int_ge(fd, 0);
    uint8_t *junk = malloc(len);
    memset(junk, v, len);
    ck_assert_int_eq(pwrite(fd, junk, len, off), (ssize_t)len);
    free(junk);
    close(fd);
}

START_TEST(test_corrupt_header_refused)
{
    store_agents(10, "h");
    clobber(0, 100, 0x5A);
    expect_open_fails("corrupt", "refusing to start");
}
END_TEST

START_TEST(test_corrupt_page_refused)
{
    /* Enough rows for a multi-level b-tree; then page 3 is junk. */
    char prefix[600];
    memset(prefix, 'p', sizeof(prefix) - 1);
    prefix[sizeof(prefix) - 1] = '\0';
    store_agents(400, prefix);
    struct stat sb;
    ck_assert_int_eq(stat(dbpath, &sb), 0);
    ck_assert_int_gt(sb.st_size, 16 * 4096);
    clobber(2 * 4096, 4096, 0xA5);
    expect_open_fails("corrupt", "refusing to start");
}
END_TEST

START_TEST(test_flipped_value_byte_refused)
{
    store_agents(5, "MARKER-host");
    /* Find a value's bytes in the file and change one: SQLite's own checks
     * pass, the per-value checksum does not. */
    FILE *f = fopen(dbpath, "rb");
    ck_assert_ptr_nonnull(f);
    static uint8_t buf[1 << 20];
    size_t n = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    uint8_t *hit = memmem(buf, n, "MARKER-host-3", 13);
    ck_assert_ptr_nonnull(hit);
    clobber(hit - buf + 2, 1, 'Q');
    expect_open_fails("checksum mismatch", "refusing to start");
}
END_TEST

START_TEST(test_foreign_sqlite_file_refused)
{
    sql_on_file("CREATE TABLE t(x); INSERT INTO t VALUES (1);");
    expect_open_fails("not an offerd registry", NULL);
}
END_TEST

START_TEST(test_newer_format_refused)
{
    store_agents(1, "h");
    sql_on_file("UPDATE meta SET value = 99 WHERE name = 'format_version'");
    expect_open_fails("format 99", "newer");
}
END_TEST

/* Rows the front cannot take: unknown kind, undecodable value, a value
 * stored under another entity's key. Each gets a valid checksum (SQLite) so
 * that the front, not the backend, is what refuses. */
START_TEST(test_bad_rows_refused)
{
    static const struct {
        const char *kind, *key;
        const char *value_hex; /* raw bytes of the value */
        const char *expect;
    } cases[] = {
        {"widget", "w1", "", "unknown kind 'widget'"},
        {"agent", "a9", "0aff", "does not decode"},
        /* Agent{info{hostname:"h" id{value:"zz"}}} stored under "a9". */
        {"agent", "a9", "0a090a016832040a027a7a", "does not carry"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        store_agents(1, "h");
        uint8_t val[64];
        size_t len = strlen(cases[i].value_hex) / 2;
        for (size_t j = 0; j < len; j++)
            sscanf(cases[i].value_hex + 2 * j, "%2hhx", &val[j]);
        if (on_sqlite()) {
            char sql[512];
            snprintf(sql, sizeof(sql),
                     "INSERT INTO entities VALUES ('%s', '%s', x'%s', %u)",
                     cases[i].kind, cases[i].key, cases[i].value_hex,
                     crc32_test(val, len));
            sql_on_file(sql);
        } else {
            registry_mem_set(dir, cases[i].kind, cases[i].key, val, len);
        }
        expect_open_fails(cases[i].expect, "refusing to start");
        if (on_sqlite())
            unlink(dbpath);
        else
            ck_assert_int_eq(registry_mem_drop(dir), 0);
    }
}
END_TEST

/* ---- Crashes ---- */

/* In a child: open, store "base", then crash inside the transaction of a
 * big batch (after its statements ran, SQLite has spilled part of it to the
 * WAL). The parent finds "base" and nothing of the big batch. */
START_TEST(test_crash_mid_transaction_leaves_nothing)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        struct event_base *cb = event_base_new();
        Offerd__Registry__Registry *st = NULL;
        char e[512];
        struct registry *reg = registry_open(cb, dir, NULL, &st, e, sizeof(e));
        if (reg == NULL)
            _exit(2);
        base = cb;
        reset_log();
        struct registry_batch *b = registry_batch_new();
        put_agent(b, "base", "h");
        if (!apply_wait(reg, b))
            _exit(3);
        char host[4096];
        memset(host, 'y', sizeof(host) - 1);
        host[sizeof(host) - 1] = '\0';
        b = registry_batch_new();
        for (int i = 0; i < 3000; i++) { /* about 12 MB */
            char id[16];
            snprintf(id, sizeof(id), "big%d", i);
            put_agent(b, id, host);
        }
        registry_test_exit_next(reg);
        apply_wait(reg, b);
        _exit(4); /* not reached: the worker _exit()s first */
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), REGISTRY_FAULT_EXIT_CODE);

    Offerd__Registry__Registry *st = reload();
    ck_assert_uint_eq(st->n_agents, 1);
    ck_assert_ptr_nonnull(agent_host(st, "base"));
    registry_state_free(st);
}
END_TEST

enum { KILL_BATCH = 300, KILL_ROUNDS = 6 };

static int kill_fd;    /* the child's end of the pipe */
static int kill_acked; /* batches acknowledged in the child */
static int kill_numbers[1000];

static void on_kill_done(bool ok, const char *err, void *arg)
{
    (void)err;
    if (!ok)
        _exit(3);
    if (write(kill_fd, arg, sizeof(int)) != sizeof(int))
        _exit(5);
    kill_acked++;
}

/* The child of the SIGKILL test: commit batches first..first+999 of
 * KILL_BATCH agents "b<k>-<j>" each, two in flight at all times so that the
 * worker is nearly always inside a commit, reporting each acknowledged k on
 * fd. */
static void kill_child(int fd, int first)
{
    struct event_base *cb = event_base_new();
    Offerd__Registry__Registry *st = NULL;
    char e[512];
    struct registry *reg = registry_open(cb, dir, NULL, &st, e, sizeof(e));
    if (reg == NULL) {
        fprintf(stderr, "child: %s\n", e);
        _exit(2);
    }
    base = cb;
    kill_fd = fd;
    char host[2048];
    memset(host, 'z', sizeof(host) - 1);
    host[sizeof(host) - 1] = '\0';
    for (int i = 0; i < 1000; i++) {
        struct registry_batch *b = registry_batch_new();
        kill_numbers[i] = first + i;
        for (int j = 0; j < KILL_BATCH; j++) {
            char id[32];
            snprintf(id, sizeof(id), "b%d-%d", first + i, j);
            put_agent(b, id, host);
        }
        registry_apply(reg, b, on_kill_done, &kill_numbers[i]);
        if (i >= 1 && run_until_count(&kill_acked, i, 30000) < i)
            _exit(6);
    }
    _exit(0);
}

/* SIGKILL a child at random moments while it commits big batches; after
 * each kill every batch is stored whole or not at all, and every batch the
 * child saw acknowledged is stored. */
START_TEST(test_sigkill_during_commits_is_atomic)
{
    unsigned seed = (unsigned)time(NULL);
    srand(seed);
    int next = 0; /* first batch number of the next round */
    for (int round = 0; round < KILL_ROUNDS; round++) {
        int pfd[2];
        ck_assert_int_eq(pipe(pfd), 0);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
            close(pfd[0]);
            kill_child(pfd[1], next);
        }
        close(pfd[1]);
        /* Wait for two acknowledgements, then kill after 0..30 ms. */
        int acked = -1, got = 0;
        while (got < 2) {
            struct pollfd p = {.fd = pfd[0], .events = POLLIN};
            ck_assert_msg(poll(&p, 1, 30000) == 1, "seed %u: child silent",
                          seed);
            int k;
            ssize_t r = read(pfd[0], &k, sizeof(k));
            ck_assert_msg(r == sizeof(k), "seed %u: child ended early", seed);
            acked = k;
            got++;
        }
        struct timespec ts = {0, (long)(rand() % 30) * 1000000L};
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        int status;
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        /* Acknowledgements written before the kill. */
        int k;
        while (read(pfd[0], &k, sizeof(k)) == sizeof(k))
            acked = k;
        close(pfd[0]);

        Offerd__Registry__Registry *st = reload();
        int last = -1;
        int *per = calloc(2000 * KILL_ROUNDS, sizeof(int));
        for (size_t i = 0; i < st->n_agents; i++) {
            int bk, bj;
            ck_assert_int_eq(
                sscanf(st->agents[i]->info->id->value, "b%d-%d", &bk, &bj), 2);
            ck_assert_int_lt(bk, 2000 * KILL_ROUNDS);
            per[bk]++;
            if (bk > last)
                last = bk;
        }
        for (int b = 0; b <= last; b++)
            ck_assert_msg(per[b] == KILL_BATCH,
                          "seed %u round %d: batch %d has %d of %d", seed,
                          round, b, per[b], KILL_BATCH);
        ck_assert_msg(last >= acked, "seed %u: acknowledged %d, stored to %d",
                      seed, acked, last);
        free(per);
        registry_state_free(st);
        next = last + 1;
    }
}
END_TEST

/* ---- Close ---- */

START_TEST(test_close_finishes_queued_batches)
{
    enum { N = 100 };
    reset_log();
    Offerd__Registry__Registry *st = NULL;
    struct registry *reg = open_ok(NULL, &st);
    registry_state_free(st);
    for (int i = 0; i < N; i++) {
        struct registry_batch *b = registry_batch_new();
        char id[16];
        snprintf(id, sizeof(id), "a%d", i);
        ck_assert_int_eq(put_agent(b, id, "h"), 0);
        registry_apply(reg, b, on_done, tag_arg(i));
    }
    /* No loop run: close itself commits and delivers. */
    registry_close(reg);
    ck_assert_int_eq(dl.count, N);
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(dl.order[i], i);
        ck_assert(dl.ok[i]);
    }
    st = reload();
    ck_assert_uint_eq(st->n_agents, N);
    registry_state_free(st);
    registry_close(NULL);
    registry_state_free(NULL);
    registry_batch_free(NULL);
}
END_TEST

/* ---- The in-memory backend's own behaviour ---- */

/* A store outlives its registry: a second open (a master "restart") finds
 * what the first committed; other names are other stores. */
START_TEST(test_mem_store_survives_restart)
{
    store_agents(3, "first");
    ck_assert_int_eq(registry_mem_count(dir, NULL), 3);
    ck_assert_int_eq(registry_mem_count(dir, "agent"), 3);
    ck_assert_int_eq(registry_mem_count(dir, "framework"), 0);

    reset_log();
    Offerd__Registry__Registry *st = NULL;
    struct registry *reg = open_ok(NULL, &st);
    ck_assert_uint_eq(st->n_agents, 3);
    /* Loaded in (kind, key) order, as from SQLite. */
    ck_assert_str_eq(st->agents[0]->info->id->value, "a0");
    ck_assert_str_eq(st->agents[2]->info->id->value, "a2");
    registry_state_free(st);
    /* Open: cannot be dropped. */
    ck_assert_int_eq(registry_mem_drop(dir), -1);
    struct registry_batch *b = registry_batch_new();
    put_framework(b, "f1", 60.0);
    ck_assert(apply_wait(reg, b));
    /* Visible to the hooks as soon as the batch is done. */
    size_t len = 0;
    uint8_t *v = registry_mem_get(dir, "framework", "f1", &len);
    ck_assert_ptr_nonnull(v);
    Offerd__Registry__Framework *f =
        offerd__registry__framework__unpack(NULL, len, v);
    ck_assert_ptr_nonnull(f);
    ck_assert_str_eq(f->info->id->value, "f1");
    offerd__registry__framework__free_unpacked(f, NULL);
    free(v);
    ck_assert_ptr_null(registry_mem_get(dir, "framework", "f2", &len));
    ck_assert_ptr_null(registry_mem_get("no such store", "agent", "a0", &len));
    registry_close(reg);

    st = reload();
    ck_assert_uint_eq(st->n_agents, 3);
    ck_assert_uint_eq(st->n_frameworks, 1);
    registry_state_free(st);

    /* Another name is another, empty, store. */
    struct registry_options o;
    registry_options_init(&o);
    o.backend = &registry_mem_backend;
    reg = registry_open(base, "another", &o, &st, errbuf, sizeof(errbuf));
    ck_assert_ptr_nonnull(reg);
    ck_assert_uint_eq(st->n_agents, 0);
    registry_state_free(st);
    registry_close(reg);

    /* Dropped: gone; the name starts empty again. */
    ck_assert_int_eq(registry_mem_drop(dir), 0);
    ck_assert_int_eq(registry_mem_drop(dir), -1);
    ck_assert_int_eq(registry_mem_count(dir, NULL), -1);
    st = reload();
    ck_assert_uint_eq(st->n_agents, 0);
    registry_state_free(st);
}
END_TEST

/* A store set to fail refuses every commit, in order, changing nothing;
 * once it works again so do the writes. */
START_TEST(test_mem_failing_store_changes_nothing)
{
    store_agents(2, "keep");
    reset_log();
    Offerd__Registry__Registry *st = NULL;
    struct registry *reg = open_ok(NULL, &st);
    registry_state_free(st);
    registry_mem_set_failing(dir, true);
    for (int i = 0; i < 4; i++) {
        struct registry_batch *b = registry_batch_new();
        char id[16];
        snprintf(id, sizeof(id), "a%d", i);
        ck_assert_int_eq(put_agent(b, id, "changed"), 0);
        registry_apply(reg, b, on_done, tag_arg(i));
    }
    ck_assert_int_eq(run_until_count(&dl.count, 4, 20000), 4);
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(dl.order[i], i);
        ck_assert(!dl.ok[i]);
        ck_assert_msg(strstr(dl.err[i], "memory store unavailable") != NULL,
                      "%s", dl.err[i]);
    }
    ck_assert_int_eq(registry_mem_count(dir, "agent"), 2);
    registry_mem_set_failing(dir, false);
    struct registry_batch *b = registry_batch_new();
    ck_assert_int_eq(put_agent(b, "a0", "changed"), 0);
    ck_assert(apply_wait(reg, b));
    registry_close(reg);
    st = reload();
    ck_assert_str_eq(agent_host(st, "a0"), "changed");
    ck_assert_str_eq(agent_host(st, "a1"), "keep-1");
    registry_state_free(st);
}
END_TEST

START_TEST(test_mem_hooks)
{
    /* A store needs a name. */
    struct registry_options o;
    registry_options_init(&o);
    o.backend = &registry_mem_backend;
    Offerd__Registry__Registry *st = NULL;
    ck_assert_ptr_null(registry_open(base, "", &o, &st, errbuf, 1024));
    ck_assert_ptr_nonnull(strstr(errbuf, "name"));
    ck_assert_ptr_null(st);
    ck_assert_int_eq(registry_mem_count(dir, NULL), -1);

    /* Seeded before any registry opens it. */
    Mesos__V1__WeightInfo wi = MESOS__V1__WEIGHT_INFO__INIT;
    wi.weight = 3.0;
    wi.role = "ops";
    uint8_t buf[64];
    size_t n = mesos__v1__weight_info__pack(&wi, buf);
    registry_mem_set(dir, "weight", "ops", buf, n);
    ck_assert_int_eq(registry_mem_count(dir, NULL), 1);
    st = reload();
    ck_assert_uint_eq(st->n_weights, 1);
    ck_assert(st->weights[0]->weight == 3.0);
    registry_state_free(st);
}
END_TEST

/* REGISTRY_FAULT_EXIT ends the process before the commit, as with SQLite. */
START_TEST(test_mem_crash_mid_batch_exits)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        Offerd__Registry__Registry *st = NULL;
        struct registry *reg = open_store(NULL, &st);
        if (reg == NULL)
            _exit(2);
        reset_log();
        struct registry_batch *b = registry_batch_new();
        put_agent(b, "base", "h");
        registry_test_exit_next(reg);
        apply_wait(reg, b);
        _exit(4); /* not reached */
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), REGISTRY_FAULT_EXIT_CODE);
}
END_TEST

/* ---- A fake backend, for the front's own behaviour ---- */

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool gate_closed; /* apply waits while set */
    int inside;       /* applies that have started */
    int calls;        /* apply calls */
    size_t max_nops;  /* largest apply */
    int sleep_ms;     /* each apply sleeps this long */
} fake = {
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, 0, 0, 0, 0};

static void *fake_open(const char *where, char *err, size_t errlen)
{
    (void)where;
    (void)err;
    (void)errlen;
    return malloc(1);
}

static int fake_load(void *store, registry_load_fn each, void *arg, char *err,
                     size_t errlen)
{
    (void)store;
    (void)each;
    (void)arg;
    (void)err;
    (void)errlen;
    return 0;
}

static int fake_apply(void *store, const struct registry_op *ops, size_t nops,
                      enum registry_fault fault, char *err, size_t errlen)
{
    (void)store;
    (void)fault;
    pthread_mutex_lock(&fake.mu);
    fake.inside++;
    fake.calls++;
    if (nops > fake.max_nops)
        fake.max_nops = nops;
    pthread_cond_broadcast(&fake.cv);
    while (fake.gate_closed)
        pthread_cond_wait(&fake.cv, &fake.mu);
    pthread_mutex_unlock(&fake.mu);
    if (fake.sleep_ms) {
        struct timespec ts = {fake.sleep_ms / 1000,
                              (fake.sleep_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    for (size_t i = 0; i < nops; i++) {
        if (strcmp(ops[i].key, "poison") == 0) {
            snprintf(err, errlen, "poisoned");
            return -1;
        }
    }
    return 0;
}

static void fake_close(void *store)
{
    free(store);
}

static const struct registry_backend fake_backend = {
    .name = "fake",
    .open = fake_open,
    .load = fake_load,
    .apply = fake_apply,
    .close = fake_close,
};

static struct registry *open_fake(size_t max_group, size_t max_queued,
                                  int64_t close_timeout_ns)
{
    pthread_mutex_lock(&fake.mu);
    fake.gate_closed = false;
    fake.inside = fake.calls = 0;
    fake.max_nops = 0;
    fake.sleep_ms = 0;
    pthread_mutex_unlock(&fake.mu);
    struct registry_options o;
    registry_options_init(&o);
    o.backend = &fake_backend;
    if (max_group)
        o.max_group = max_group;
    if (max_queued)
        o.max_queued_bytes = max_queued;
    if (close_timeout_ns)
        o.close_timeout_ns = close_timeout_ns;
    Offerd__Registry__Registry *st = NULL;
    struct registry *reg = open_ok(&o, &st);
    registry_state_free(st);
    return reg;
}

/* Apply a one-agent batch tagged i; key id. */
static void apply_tagged(struct registry *reg, int i, const char *id,
                         const char *host)
{
    struct registry_batch *b = registry_batch_new();
    ck_assert_int_eq(put_agent(b, id, host), 0);
    registry_apply(reg, b, on_done, tag_arg(i));
}

static void gate_close_and_wait_inside(struct registry *reg)
{
    pthread_mutex_lock(&fake.mu);
    fake.gate_closed = true;
    pthread_mutex_unlock(&fake.mu);
    apply_tagged(reg, 0, "first", "h");
    pthread_mutex_lock(&fake.mu);
    while (fake.inside < 1)
        pthread_cond_wait(&fake.cv, &fake.mu);
    pthread_mutex_unlock(&fake.mu);
}

static void gate_open(void)
{
    pthread_mutex_lock(&fake.mu);
    fake.gate_closed = false;
    pthread_cond_broadcast(&fake.cv);
    pthread_mutex_unlock(&fake.mu);
}

/* A group whose transaction fails is retried batch by batch: only the
 * batch that fails alone is reported failed. */
START_TEST(test_failed_group_retried_one_by_one)
{
    reset_log();
    struct registry *reg = open_fake(0, 0, 0);
    gate_close_and_wait_inside(reg);
    apply_tagged(reg, 1, "ok1", "h");
    apply_tagged(reg, 2, "poison", "h");
    apply_tagged(reg, 3, "ok3", "h");
    gate_open();
    ck_assert_int_eq(run_until_count(&dl.count, 4, 20000), 4);
    ck_assert(dl.ok[0] && dl.ok[1] && !dl.ok[2] && dl.ok[3]);
    ck_assert_str_eq(dl.err[2], "poisoned");
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(dl.order[i], i);
    /* first alone, the group of three, then 1, 2, 3 alone. */
    ck_assert_uint_eq(fake.max_nops, 3);
    ck_assert_int_eq(fake.calls, 5);
    struct registry_stats s;
    registry_get_stats(reg, &s);
    ck_assert_uint_eq(s.commits, 3);
    ck_assert_uint_eq(s.batches_failed, 1);
    registry_close(reg);
}
END_TEST

START_TEST(test_backlog_full_refused_in_order)
{
    reset_log();
    char host[4000];
    memset(host, 'q', sizeof(host) - 1);
    host[sizeof(host) - 1] = '\0';
    struct registry *reg = open_fake(0, 10000, 0);
    gate_close_and_wait_inside(reg);
    apply_tagged(reg, 1, "b1", host); /* ~4 KB queued */
    apply_tagged(reg, 2, "b2", host); /* ~8 KB */
    apply_tagged(reg, 3, "b3", host); /* over 10 KB: refused */
    apply_tagged(reg, 4, "b4", "h");  /* small: fits */
    struct registry_stats s;
    registry_get_stats(reg, &s);
    ck_assert_uint_le(s.queued_bytes, 10000);
    gate_open();
    ck_assert_int_eq(run_until_count(&dl.count, 5, 20000), 5);
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(dl.order[i], i);
    ck_assert(dl.ok[0] && dl.ok[1] && dl.ok[2] && !dl.ok[3] && dl.ok[4]);
    ck_assert_msg(strstr(dl.err[3], "backlog full") != NULL, "%s", dl.err[3]);
    registry_close(reg);
}
END_TEST

/* close waits only so long: the commit under way finishes, the batches
 * still queued after the timeout fail. */
START_TEST(test_close_timeout_fails_the_rest)
{
    reset_log();
    struct registry *reg = open_fake(1, 0, 100 * 1000000LL);
    fake.sleep_ms = 300;
    apply_tagged(reg, 0, "a0", "h");
    apply_tagged(reg, 1, "a1", "h");
    apply_tagged(reg, 2, "a2", "h");
    registry_close(reg);
    ck_assert_int_eq(dl.count, 3);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(dl.order[i], i);
    ck_assert(!dl.ok[2]);
    ck_assert_msg(strstr(dl.err[2], "closed before") != NULL, "%s", dl.err[2]);
    ck_assert_int_le(fake.calls, 1);
}
END_TEST

static struct registry *closing_reg;

static void on_done_apply_more(bool ok, const char *err, void *arg)
{
    on_done(ok, err, arg);
    if (dl.count == 1)
        apply_tagged(closing_reg, 1, "late", "h");
}

START_TEST(test_apply_during_close_fails)
{
    reset_log();
    closing_reg = open_fake(0, 0, 0);
    struct registry_batch *b = registry_batch_new();
    registry_apply(closing_reg, b, on_done_apply_more, tag_arg(0));
    registry_close(closing_reg);
    ck_assert_int_eq(dl.count, 2);
    ck_assert(dl.ok[0]);
    ck_assert(!dl.ok[1]);
    ck_assert_str_eq(dl.err[1], "registry is closed");
}
END_TEST

/* The tests that hold for every store. */
static void add_generic_tests(TCase *tc)
{
    tcase_add_test(tc, test_empty_work_dir_starts_empty);
    tcase_add_test(tc, test_second_open_refused_while_in_use);
    tcase_add_test(tc, test_round_trip_every_kind);
    tcase_add_test(tc, test_put_replaces_same_key);
    tcase_add_test(tc, test_ops_apply_in_batch_order);
    tcase_add_test(tc, test_put_refusals);
    tcase_add_test(tc, test_oversized_entity_refused);
    tcase_add_test(tc, test_key_of_forms);
    tcase_add_test(tc, test_completions_in_order_on_loop);
    tcase_add_test(tc, test_many_batches_group_commit);
    tcase_add_test(tc, test_group_commit_off_commits_each_batch);
    tcase_add_test(tc, test_apply_from_done_callback);
    tcase_add_test(tc, test_flush_delivers_without_loop);
    tcase_add_test(tc, test_injected_failure_changes_nothing);
    tcase_add_test(tc, test_injected_failure_among_queued_batches);
    tcase_add_test(tc, test_bad_rows_refused);
    tcase_add_test(tc, test_close_finishes_queued_batches);
}

static Suite *registry_suite(void)
{
    Suite *s = suite_create("registry");
    TCase *tc = tcase_create("sqlite");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    add_generic_tests(tc);
    tcase_add_test(tc, test_missing_work_dir_refused);
    tcase_add_test(tc, test_write_error_rolls_back_and_recovers);
    tcase_add_test(tc, test_corrupt_header_refused);
    tcase_add_test(tc, test_corrupt_page_refused);
    tcase_add_test(tc, test_flipped_value_byte_refused);
    tcase_add_test(tc, test_foreign_sqlite_file_refused);
    tcase_add_test(tc, test_newer_format_refused);
    tcase_add_test(tc, test_crash_mid_transaction_leaves_nothing);
    tcase_add_test(tc, test_sigkill_during_commits_is_atomic);
    suite_add_tcase(s, tc);

    TCase *mc = tcase_create("memory");
    tcase_add_checked_fixture(mc, setup_mem, teardown_mem);
    tcase_set_timeout(mc, 60);
    add_generic_tests(mc);
    tcase_add_test(mc, test_mem_store_survives_restart);
    tcase_add_test(mc, test_mem_failing_store_changes_nothing);
    tcase_add_test(mc, test_mem_hooks);
    tcase_add_test(mc, test_mem_crash_mid_batch_exits);
    suite_add_tcase(s, mc);

    TCase *fk = tcase_create("front");
    tcase_add_checked_fixture(fk, setup, teardown);
    tcase_set_timeout(fk, 60);
    tcase_add_test(fk, test_failed_group_retried_one_by_one);
    tcase_add_test(fk, test_backlog_full_refused_in_order);
    tcase_add_test(fk, test_close_timeout_fails_the_rest);
    tcase_add_test(fk, test_apply_during_close_fails);
    suite_add_tcase(s, fk);
    return s;
}

OFFERD_CHECK_MAIN(registry_suite)
