/*
 * End-to-end tests of ZooKeeper leader election (issue 20, docs/ha.md).
 *
 * failover: one ZooKeeper server, three masters with --zk and
 * --registry=zk (2 s sessions), two agents with --master=zk://, and a
 * workload framework (harness_wl.h) running 100 long tasks. Before the
 * kills the leader acknowledges a maintenance schedule, a machine taken
 * down, an operator reservation and an agent marked gone. The leader is
 * then killed with SIGKILL at a seeded random point, ROUNDS (10) times
 * (the seed is printed; OFFERD_E2E_SEED replays it), each time just after
 * it acknowledged a new weight and a new quota; the killed master is
 * started again and rejoins as a standby. Each time: a standby serves as
 * the leader within the session timeout + 2 s; the agents follow it by
 * themselves; the framework subscribes again with its id and reconciles;
 * every task is still running and master, agents and framework agree; and
 * every change the old leaders acknowledged is there. Standbys answer 307
 * to the leader meanwhile.
 *
 * partition: a three-server ensemble and two masters; two servers are
 * stopped (the ensemble loses its quorum): the leader stops answering
 * writes with a 2xx at once (503) and later exits with a non-zero status;
 * at no point do both masters answer a write with a 2xx. Once the servers
 * are back, the other master leads.
 */
#include "harness.h"
#include "harness_wl.h"
#include "zk/zk_harness.h"

#include <check.h>
#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define NMASTERS   3
#define NAGENTS    2
#define NTASKS     100
#define ROUNDS     10
#define SESSION_MS 2000

static char zk_url[1024];

static bool elected(uint16_t port)
{
    return e2e_metric(port, "master/elected") == 1;
}

/* The index of the one master that reports itself elected, or -1 (none,
 * or more than one). */
static int the_leader(struct e2e_proc *m, int n)
{
    int found = -1, count = 0;
    for (int i = 0; i < n; i++) {
        if (m[i].pid != 0 && e2e_proc_running(&m[i]) && elected(m[i].port)) {
            found = i;
            count++;
        }
    }
    return count == 1 ? found : -1;
}

static char zk_flag[1100], timeout_flag[64], registry_flag[64];
static const char *master_args[] = {zk_flag,
                                    timeout_flag,
                                    registry_flag,
                                    "--hostname=127.0.0.1",
                                    "--allocation_interval=50ms",
                                    "--agent_reregister_timeout=30secs",
                                    NULL};

static void start_masters(struct e2e_proc *m, int n, const char *registry)
{
    snprintf(zk_flag, sizeof(zk_flag), "--zk=%s", zk_url);
    snprintf(timeout_flag, sizeof(timeout_flag), "--zk_session_timeout=%dms",
             SESSION_MS);
    snprintf(registry_flag, sizeof(registry_flag), "%s", registry);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(e2e_start_master(&m[i], master_args), 0);
}

static int wait_leader(struct e2e_proc *m, int n, int timeout_ms)
{
    int64_t end = e2e_now_ms() + timeout_ms;
    for (;;) {
        int l = the_leader(m, n);
        if (l >= 0)
            return l;
        if (e2e_now_ms() > end)
            return -1;
        e2e_sleep_ms(E2E_POLL_MS);
    }
}

static int http_status(uint16_t port, const char *method, const char *path,
                       const char *body, char *location, size_t loclen)
{
    struct e2e_response r;
    const char *h[] = {"Content-Type: application/json", NULL};
    if (e2e_http(port, method, path, h, body, body ? strlen(body) : 0, 5000,
                 &r) != 0)
        return 0;
    int st = r.status;
    if (location != NULL) {
        const char *l = e2e_response_header(&r, "Location");
        snprintf(location, loclen, "%s", l != NULL ? l : "");
    }
    e2e_response_free(&r);
    return st;
}

static void put_weight(uint16_t port, double w)
{
    char body[128];
    snprintf(body, sizeof(body), "[{\"role\":\"ha\",\"weight\":%.1f}]", w);
    ck_assert_int_eq(http_status(port, "PUT", "/weights", body, NULL, 0), 200);
}

static double get_weight(uint16_t port)
{
    json_t *j = e2e_get_json(port, "/weights");
    ck_assert_ptr_nonnull(j);
    double w = -1;
    size_t i;
    json_t *e;
    json_array_foreach(j, i, e)
    {
        if (strcmp(json_string_value(json_object_get(e, "role")), "ha") == 0)
            w = json_number_value(json_object_get(e, "weight"));
    }
    json_decref(j);
    return w;
}

static const char SCHEDULE[] =
    "{\"windows\":[{\"machine_ids\":[{\"hostname\":\"ha-machine\"}],"
    "\"unavailability\":{\"start\":{\"nanoseconds\":4000000000000000000}}}]}";

static bool has_schedule(uint16_t port)
{
    json_t *j = e2e_get_json(port, "/maintenance/schedule");
    if (j == NULL)
        return false;
    char *s = json_dumps(j, JSON_COMPACT);
    bool ok = s != NULL && strstr(s, "ha-machine") != NULL;
    free(s);
    json_decref(j);
    return ok;
}

/* The registry as the master reports it (/registrar(1)/registry), as
 * compact JSON text for strstr, or NULL. */
static char *registry_text(uint16_t port)
{
    json_t *j = e2e_get_json(port, "/registrar(1)/registry");
    if (j == NULL)
        return NULL;
    char *s = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    return s;
}

static void post_ok(uint16_t port, const char *path, const char *body, int want)
{
    ck_assert_int_eq(http_status(port, "POST", path, body, NULL, 0), want);
}

static void set_quota(uint16_t port, double cpus)
{
    char body[512];
    snprintf(body, sizeof(body),
             "{\"type\":\"UPDATE_QUOTA\",\"update_quota\":{\"quota_configs\":"
             "[{\"role\":\"ha\",\"guarantees\":{\"cpus\":{\"value\":%.1f}},"
             "\"limits\":{\"cpus\":{\"value\":%.1f}}}]}}",
             cpus, cpus);
    post_ok(port, "/api/v1", body, 200);
}

/* The quota guarantee of role "ha" in cpus, or -1. */
static double get_quota(uint16_t port)
{
    json_t *j = e2e_get_json(port, "/quota");
    if (j == NULL)
        return -1;
    char *s = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    double v = -1;
    const char *at = s ? strstr(s, "\"role\":\"ha\"") : NULL;
    const char *g = at ? strstr(at, "\"guarantee\"") : NULL;
    const char *c = g ? strstr(g, "\"value\":") : NULL;
    if (c != NULL)
        v = strtod(c + 8, NULL);
    free(s);
    return v;
}

/* What must survive every failover: the schedule, ha-machine down, the
 * reservation on agent_id, the gone agent. */
static void check_durable(uint16_t port, const char *agent_id,
                          const char *gone_id)
{
    ck_assert(has_schedule(port));
    json_t *st = e2e_get_json(port, "/maintenance/status");
    ck_assert_ptr_nonnull(st);
    char *s = json_dumps(st, JSON_COMPACT);
    json_decref(st);
    const char *down = s ? strstr(s, "\"down_machines\"") : NULL;
    ck_assert_msg(down != NULL && strstr(down, "ha-machine") != NULL,
                  "ha-machine not down: %s", s ? s : "(none)");
    free(s);
    char *reg = registry_text(port);
    ck_assert_ptr_nonnull(reg);
    const char *gone = strstr(reg, "\"gone\"");
    ck_assert_msg(gone != NULL && strstr(gone, gone_id) != NULL,
                  "agent %s not gone in %s", gone_id, reg);
    free(reg);
    /* The reservation is the agent's (checkpointed there and sent again
     * when it re-registers): the new leader knows it. */
    json_t *sl = e2e_get_json(port, "/slaves");
    ck_assert_ptr_nonnull(sl);
    char *t = json_dumps(sl, JSON_COMPACT);
    json_decref(sl);
    const char *ag = t ? strstr(t, agent_id) : NULL;
    ck_assert_msg(ag != NULL && strstr(t, "\"ha\"") != NULL,
                  "no reservation to role ha in /slaves: %s", t ? t : "");
    free(t);
}

static struct e2e_proc masters[NMASTERS], agents[NAGENTS + 1];
static uint16_t agent_ports[NAGENTS];
static struct wl w;

START_TEST(test_failover)
{
    char err[256];
    struct zk_ensemble *ens = zk_ensemble_start(1, 30000, err, sizeof(err));
    ck_assert_msg(ens != NULL, "%s", err);
    ck_assert_int_eq(zk_ensemble_url(ens, "/offerd", zk_url, sizeof(zk_url)),
                     0);
    uint64_t rng = wl_seed("e2e_ha");

    start_masters(masters, NMASTERS, "--registry=zk");
    int leader = wait_leader(masters, NMASTERS, 20000);
    ck_assert_int_ge(leader, 0);
    uint16_t lport = masters[leader].port;

    /* A standby redirects to the leader (protocol-relative, as Mesos). */
    int standby = (leader + 1) % NMASTERS;
    char loc[256], want[256];
    ck_assert_int_eq(http_status(masters[standby].port, "POST",
                                 "/api/v1/scheduler", "{}", loc, sizeof(loc)),
                     307);
    snprintf(want, sizeof(want), "//127.0.0.1:%u/api/v1/scheduler",
             (unsigned)lport);
    ck_assert_str_eq(loc, want);

    char master_flag[1100];
    snprintf(master_flag, sizeof(master_flag), "--master=%s", zk_url);
    const char *aargs[] = {master_flag, "--resources=cpus:8;mem:4096", NULL};
    for (int i = 0; i < NAGENTS; i++) {
        ck_assert_int_eq(e2e_start_agent(&agents[i], lport, aargs), 0);
        agent_ports[i] = agents[i].port;
    }
    ck_assert_int_eq(e2e_wait_agents(&masters[leader], NAGENTS, 20000), 0);

    put_weight(lport, 2.0);
    ck_assert_int_eq(
        http_status(lport, "POST", "/maintenance/schedule", SCHEDULE, NULL, 0),
        200);

    struct event_base *base = event_base_new();
    w.name = "e2e-ha";
    w.task_res = "cpus:0.1;mem:16";
    wl_start(&w, base, lport);
    for (int i = 0; i < NTASKS; i++) {
        char id[32];
        snprintf(id, sizeof(id), "ha-%d", i);
        wl_add(&w, id, "sleep 1000", WL_EXIT_KILLED);
    }
    ck_assert_msg(wl_wait_quiet(&w, agent_ports, NAGENTS, NTASKS, 60000),
                  "the %d tasks did not all start", NTASKS);
    char agent_id[128];
    wl_agent_id(agent_ports[0], agent_id, sizeof(agent_id));

    /* Changes acknowledged once, checked after every failover: ha-machine
     * down, a reservation on agent 0, and a third agent marked gone. */
    post_ok(lport, "/machine/down", "[{\"hostname\":\"ha-machine\"}]", 200);
    char form[1024];
    snprintf(form, sizeof(form),
             "slaveId=%s&resources=[{\"name\":\"cpus\",\"type\":\"SCALAR\","
             "\"scalar\":{\"value\":0.5},\"reservations\":[{\"type\":"
             "\"DYNAMIC\",\"role\":\"ha\",\"principal\":\"ops\"}]}]",
             agent_id);
    {
        const char *fh[] = {"Content-Type: application/x-www-form-urlencoded",
                            NULL};
        struct e2e_response r;
        ck_assert_int_eq(e2e_http(lport, "POST", "/reserve", fh, form,
                                  strlen(form), 5000, &r),
                         0);
        ck_assert_msg(r.status == 202, "/reserve: %d %s", r.status, r.body);
        e2e_response_free(&r);
    }
    const char *gargs[] = {master_flag, "--resources=cpus:1;mem:128", NULL};
    ck_assert_int_eq(e2e_start_agent(&agents[NAGENTS], lport, gargs), 0);
    ck_assert_int_eq(e2e_wait_agents(&masters[leader], NAGENTS + 1, 20000), 0);
    char gone_id[128];
    wl_agent_id(agents[NAGENTS].port, gone_id, sizeof(gone_id));
    e2e_proc_stop(&agents[NAGENTS], SIGKILL, 1000);
    char gone_call[512];
    snprintf(gone_call, sizeof(gone_call),
             "{\"type\":\"MARK_AGENT_GONE\",\"mark_agent_gone\":{"
             "\"agent_id\":{\"value\":\"%s\"}}}",
             gone_id);
    post_ok(lport, "/api/v1", gone_call, 200);
    check_durable(lport, agent_id, gone_id);

    for (int round = 0; round < ROUNDS; round++) {
        /* A change acknowledged just before the kill, at a random point
         * of the framework's steady state. */
        e2e_loop_for(base, wl_rand_between(&rng, 0, 1500));
        double weight = 3.0 + round;
        put_weight(lport, weight);
        double quota = 1.0 + round * 0.5;
        set_quota(lport, quota);
        fprintf(stderr, "round %d: killing leader master %d (port %u)\n", round,
                leader, (unsigned)lport);
        int64_t t0 = e2e_now_ms();
        int killed = leader;
        e2e_proc_stop(&masters[leader], SIGKILL, 1000);
        int next = -1;
        while (next < 0 && e2e_now_ms() - t0 < SESSION_MS + 10000) {
            next = the_leader(masters, NMASTERS);
            if (next < 0)
                e2e_loop_for(base, E2E_POLL_MS);
        }
        int64_t took = e2e_now_ms() - t0;
        ck_assert_msg(next >= 0, "no new leader after %lld ms",
                      (long long)took);
        fprintf(stderr,
                "round %d: master %d leads %lld ms after the kill "
                "(session timeout %d ms)\n",
                round, next, (long long)took, SESSION_MS);
        ck_assert_int_le(took, SESSION_MS + 2000);
        leader = next;
        lport = masters[leader].port;

        /* The agents follow the new leader by themselves. */
        ck_assert_int_eq(e2e_wait_agents(&masters[leader], NAGENTS, 30000), 0);
        /* What the old leaders acknowledged is there. */
        ck_assert(get_weight(lport) == weight);
        ck_assert_msg(get_quota(lport) == quota, "quota %.1f, want %.1f",
                      get_quota(lport), quota);
        check_durable(lport, agent_id, gone_id);
        /* The framework subscribes again and reconciles: all still run. */
        wl_move(&w, lport);
        ck_assert_msg(wl_wait_quiet(&w, agent_ports, NAGENTS, NTASKS, 30000),
                      "round %d: the tasks are not all running", round);
        wl_check_agreement(&w, agent_ports, NAGENTS, agent_id, NTASKS);
        ck_assert_int_eq(wl_terminal_count(&w), 0);
        /* The killed master comes back as a standby. */
        ck_assert_int_eq(e2e_restart_master(&masters[killed], master_args), 0);
    }

    wl_free(&w);
    event_base_free(base);
    for (int i = 0; i < NAGENTS + 1; i++)
        e2e_proc_cleanup(&agents[i]);
    for (int i = 0; i < NMASTERS; i++)
        e2e_proc_cleanup(&masters[i]);
    zk_ensemble_stop(ens);
}
END_TEST

static struct e2e_proc pm[2];

START_TEST(test_partition)
{
    char err[256];
    struct zk_ensemble *ens = zk_ensemble_start(3, 60000, err, sizeof(err));
    ck_assert_msg(ens != NULL, "%s", err);
    ck_assert_int_eq(zk_ensemble_url(ens, "/offerd", zk_url, sizeof(zk_url)),
                     0);
    start_masters(pm, 2, "--registry=in_memory");
    int leader = wait_leader(pm, 2, 20000);
    ck_assert_int_ge(leader, 0);
    int other = 1 - leader;
    put_weight(pm[leader].port, 2.0);

    /* Quorum lost. */
    ck_assert_int_eq(zk_server_stop(ens, 1), 0);
    ck_assert_int_eq(zk_server_stop(ens, 2), 0);
    int64_t t0 = e2e_now_ms();
    int64_t refused_at = -1, exited_at = -1;
    int both = 0;
    while (e2e_now_ms() - t0 < SESSION_MS + 15000) {
        int a = 0, b = 0;
        if (e2e_proc_running(&pm[leader]))
            a = http_status(pm[leader].port, "PUT", "/weights",
                            "[{\"role\":\"ha\",\"weight\":3.0}]", NULL, 0);
        else if (exited_at < 0)
            exited_at = e2e_now_ms() - t0;
        b = http_status(pm[other].port, "PUT", "/weights",
                        "[{\"role\":\"ha\",\"weight\":4.0}]", NULL, 0);
        ck_assert_int_ne(b / 100, 2); /* never elected without a quorum */
        if (a / 100 == 2 && b / 100 == 2)
            both++;
        if (refused_at < 0 && a == 503)
            refused_at = e2e_now_ms() - t0;
        if (exited_at >= 0)
            break;
        e2e_sleep_ms(50);
    }
    fprintf(stderr,
            "partition: writes refused after %lld ms, exit after "
            "%lld ms\n",
            (long long)refused_at, (long long)exited_at);
    ck_assert_int_eq(both, 0);
    ck_assert_msg(refused_at >= 0 && refused_at <= 3000,
                  "the leader kept answering writes (%lld ms)",
                  (long long)refused_at);
    ck_assert_msg(exited_at >= 0, "the deposed leader did not exit");
    ck_assert(WIFEXITED(pm[leader].exit_status));
    /* Its own "lost leadership" exit (status 1), not a crash or a
     * sanitizer's abort. */
    ck_assert_int_eq(WEXITSTATUS(pm[leader].exit_status), 1);

    /* The quorum back: the other master leads. */
    ck_assert_int_eq(zk_server_start(ens, 1, 30000), 0);
    ck_assert_int_eq(zk_server_start(ens, 2, 30000), 0);
    ck_assert_int_eq(wait_leader(pm, 2, 20000), other);
    ck_assert_int_eq(http_status(pm[other].port, "PUT", "/weights",
                                 "[{\"role\":\"ha\",\"weight\":5.0}]", NULL, 0),
                     200);
    for (int i = 0; i < 2; i++)
        e2e_proc_cleanup(&pm[i]);
    zk_ensemble_stop(ens);
}
END_TEST

static Suite *ha_suite(void)
{
    Suite *s = suite_create("e2e_ha");
    TCase *f = tcase_create("failover");
    tcase_set_timeout(f, 400);
    tcase_add_test(f, test_failover);
    suite_add_tcase(s, f);
    TCase *p = tcase_create("partition");
    tcase_set_timeout(p, 90);
    tcase_add_test(p, test_partition);
    suite_add_tcase(s, p);
    return s;
}

E2E_CHECK_MAIN(ha_suite)
