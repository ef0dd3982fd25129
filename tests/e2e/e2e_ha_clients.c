/*
 * e2e_ha_clients: the clients follow the leading master (issue 20). Two
 * masters elect a leader in a real ZooKeeper (tests/zk); an agent follows
 * it with --master=zk://...;
 *  - a framework on libofferd with options.master = zk://... launches
 *    tasks; the leader is killed (SIGKILL); the framework drops its stream,
 *    subscribes to the new leader with the same FrameworkID, and its tasks
 *    reconcile as running;
 *  - offerd-execute and offerctl take --master as zk:// and as file://
 *    (holding a zk:// URL, or the standby's host:port, which offerctl gets
 *    redirected from with 307).
 */
#include "harness.h"
#include "harness_fw.h"
#include "zk_harness.h"

#include "common/netport.h"
#include "mesos/v1/mesos.pb-c.h"
#include "offerd/scheduler.h"

#include <check.h>
#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef OFFERCTL_BIN
#define OFFERCTL_BIN "offerctl"
#endif

/* The leader's --zk_session_timeout: its node goes this long after it
 * dies, and the standby takes over. */
#define SESSION_TIMEOUT "2secs"

#define NTASKS 4

static struct zk_ensemble *zk;
static char zk_url[512];
static char zk_flag[560];
static struct e2e_proc masters[2];
static struct e2e_proc agent;
static struct event_base *base;
static struct hfw fw; /* large: static */

/* ---- The cluster ---- */

static bool elected(const struct e2e_proc *m)
{
    return m->pid != 0 && e2e_metric(m->port, "master/elected") == 1;
}

/* The index of the master that leads, or -1. */
static int leader_index(void)
{
    for (int i = 0; i < 2; i++)
        if (elected(&masters[i]))
            return i;
    return -1;
}

static bool cond_leader(void *arg)
{
    (void)arg;
    return leader_index() >= 0;
}

static bool cond_agent_active(void *arg)
{
    (void)arg;
    int l = leader_index();
    return l >= 0 && e2e_metric(masters[l].port, "master/slaves_active") == 1;
}

static void cluster_start(void)
{
    char err[256];
    zk = zk_ensemble_start(1, 30000, err, sizeof(err));
    ck_assert_msg(zk != NULL, "ZooKeeper: %s", err);
    ck_assert_int_eq(zk_ensemble_url(zk, "/offerd", zk_url, sizeof(zk_url)), 0);
    snprintf(zk_flag, sizeof(zk_flag), "--zk=%s", zk_url);
    const char *margs[] = {zk_flag, "--zk_session_timeout=" SESSION_TIMEOUT,
                           "--hostname=localhost", NULL};
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(e2e_start_master(&masters[i], margs), 0);
    ck_assert_msg(e2e_poll_until(cond_leader, NULL, 20000),
                  "no master was elected");
    /* e2e_start_agent's command line names a fixed master: this one is
     * written out whole. */
    char master_flag[600], port_flag[32];
    snprintf(master_flag, sizeof(master_flag), "--master=%s", zk_url);
    uint16_t port = netport_free_loopback();
    snprintf(port_flag, sizeof(port_flag), "--port=%u", (unsigned)port);
    const char *aargs[] = {master_flag,
                           "--ip=127.0.0.1",
                           port_flag,
                           "--work_dir=work",
                           "--registration_backoff_factor=20ms",
                           "--registration_backoff_max=200ms",
                           "--switch_user=false",
                           "--resources=cpus:4;mem:1024",
                           NULL};
    ck_assert_int_eq(e2e_spawn(&agent, OFFERD_AGENT_BIN, aargs), 0);
    agent.port = port;
    ck_assert_int_eq(e2e_wait_healthy(&agent, 20000), 0);
    ck_assert_msg(e2e_poll_until(cond_agent_active, NULL, 20000),
                  "the agent did not register with the leader");
    base = event_base_new();
}

static void cluster_stop(void)
{
    if (fw.s != NULL)
        hfw_free(&fw);
    memset(&fw, 0, sizeof(fw));
    if (base != NULL)
        event_base_free(base);
    base = NULL;
    e2e_proc_cleanup(&agent);
    for (int i = 0; i < 2; i++)
        e2e_proc_cleanup(&masters[i]);
    zk_ensemble_stop(zk);
    zk = NULL;
}

/* ---- The framework follows the leader ---- */

struct running {
    int from; /* updates before this index do not count */
};

static bool all_running_since(void *arg)
{
    const struct running *r = arg;
    for (int t = 0; t < NTASKS; t++) {
        char id[16];
        snprintf(id, sizeof(id), "t%d", t);
        bool seen = false;
        for (int u = r->from; u < fw.nupdates && !seen; u++)
            seen = strcmp(fw.updates[u].task_id, id) == 0 &&
                   fw.updates[u].state == MESOS__V1__TASK_STATE__TASK_RUNNING;
        if (!seen)
            return false;
    }
    return true;
}

static bool cond_resubscribed(void *arg)
{
    (void)arg;
    return fw.subscribed && fw.subscriptions >= 2;
}

START_TEST(test_framework_follows_the_leader)
{
    cluster_start();
    fw.master = zk_url;
    hfw_start(&fw, base, 0, OFFERD_ENCODING_JSON);
    char fid[sizeof(fw.id)];
    snprintf(fid, sizeof(fid), "%s", fw.id);
    for (int t = 0; t < NTASKS; t++) {
        char id[16];
        snprintf(id, sizeof(id), "t%d", t);
        hfw_launch(&fw, id, "sleep 300");
    }
    struct running r = {0};
    ck_assert_msg(e2e_loop_until(base, all_running_since, &r, 30000),
                  "tasks did not start");

    int old = leader_index();
    ck_assert_int_ge(old, 0);
    int64_t t0 = e2e_now_ms();
    e2e_proc_stop(&masters[old], SIGKILL, 5000);
    ck_assert_msg(e2e_loop_until(base, cond_resubscribed, NULL, 30000),
                  "the framework did not subscribe to the new leader");
    int64_t t1 = e2e_now_ms();
    ck_assert_int_eq(leader_index(), 1 - old);
    ck_assert_str_eq(fw.id, fid); /* the same framework */
    fprintf(stderr,
            "e2e_ha_clients: re-subscribed to the new leader %.1f s after "
            "the old one was killed (session timeout " SESSION_TIMEOUT ")\n",
            (double)(t1 - t0) / 1000.0);

    /* The agent follows too; then every task reconciles as running. */
    ck_assert_msg(e2e_poll_until(cond_agent_active, NULL, 30000),
                  "the agent did not re-register with the new leader");
    r.from = fw.nupdates;
    ck_assert_int_eq(offerd_sched_reconcile(fw.s, NULL, 0), 0);
    ck_assert_msg(e2e_loop_until(base, all_running_since, &r, 20000),
                  "tasks did not reconcile as running");
    ck_assert_int_eq(fw.errors, 0);
    cluster_stop();
}
END_TEST

/* ---- offerd-execute and offerctl ---- */

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "%s\n", text);
    ck_assert_int_eq(fclose(f), 0);
}

static void assert_has(const char *out, const char *needle)
{
    ck_assert_msg(strstr(out, needle) != NULL, "'%s' not in:\n%s", needle, out);
}

START_TEST(test_command_lines_find_the_leader)
{
    cluster_start();
    int l = leader_index();
    int standby = 1 - l;
    char zk_file[512], standby_file[512], text[64];
    snprintf(zk_file, sizeof(zk_file), "%s/zk-master", masters[l].dir);
    write_file(zk_file, zk_url);
    snprintf(standby_file, sizeof(standby_file), "%s/standby-master",
             masters[l].dir);
    snprintf(text, sizeof(text), "127.0.0.1:%u",
             (unsigned)masters[standby].port);
    write_file(standby_file, text);

    char m_zk[600], m_zk_file[600], m_standby_file[600];
    snprintf(m_zk, sizeof(m_zk), "--master=%s", zk_url);
    snprintf(m_zk_file, sizeof(m_zk_file), "--master=file://%s", zk_file);
    snprintf(m_standby_file, sizeof(m_standby_file), "--master=file://%s",
             standby_file);
    static char out[65536];

    /* offerd-execute: zk://, and file:// holding it. */
    const char *const masters_of_execute[] = {m_zk, m_zk_file};
    for (int i = 0; i < 2; i++) {
        const char *args[] = {masters_of_execute[i],
                              "--name=ha",
                              "--command=echo from-the-leader",
                              "--resources=cpus:0.1;mem:16",
                              "--subscribe_timeout=20secs",
                              NULL};
        int rc = e2e_run(OFFERD_EXECUTE_BIN, args, out, sizeof(out), 40000);
        ck_assert_msg(rc == 0, "offerd-execute %s: exit %d:\n%s",
                      masters_of_execute[i], rc, out);
        assert_has(out, "TASK_FINISHED");
    }

    /* offerctl: zk://, file:// holding it, and file:// naming the standby
     * (its 307 is followed to the leader). */
    const char *const masters_of_offerctl[] = {m_zk, m_zk_file, m_standby_file};
    for (int i = 0; i < 3; i++) {
        const char *args[] = {masters_of_offerctl[i], "agents", NULL};
        int rc = e2e_run(OFFERCTL_BIN, args, out, sizeof(out), 20000);
        ck_assert_msg(rc == 0, "offerctl %s agents: exit %d:\n%s",
                      masters_of_offerctl[i], rc, out);
        assert_has(out, "127.0.0.1");
    }
    /* A write too, through the standby, then read from the leader. */
    {
        const char *args[] = {m_standby_file, "weights", "set", "ha=2.5", NULL};
        int rc = e2e_run(OFFERCTL_BIN, args, out, sizeof(out), 20000);
        ck_assert_msg(rc == 0, "offerctl weights set: exit %d:\n%s", rc, out);
        const char *get[] = {m_zk, "weights", NULL};
        rc = e2e_run(OFFERCTL_BIN, get, out, sizeof(out), 20000);
        ck_assert_msg(rc == 0, "offerctl weights: exit %d:\n%s", rc, out);
        assert_has(out, "2.5");
    }

    /* No master in that group: a clear error, bounded by --timeout. */
    char empty[600];
    ck_assert_int_eq(
        zk_ensemble_url(zk, "/nobody", empty + 9, sizeof(empty) - 9), 0);
    memcpy(empty, "--master=", 9);
    const char *args[] = {empty, "--timeout=1secs", "agents", NULL};
    int rc = e2e_run(OFFERCTL_BIN, args, out, sizeof(out), 20000);
    ck_assert_int_eq(rc, 3);
    assert_has(out, "no leading master found in ZooKeeper within 1 s");
    cluster_stop();
}
END_TEST

static Suite *ha_clients_suite(void)
{
    Suite *s = suite_create("e2e_ha_clients");
    TCase *tc = tcase_create("follow");
    tcase_set_timeout(tc, 90);
    tcase_add_test(tc, test_framework_follows_the_leader);
    tcase_add_test(tc, test_command_lines_find_the_leader);
    suite_add_tcase(s, tc);
    return s;
}

E2E_CHECK_MAIN(ha_clients_suite)
