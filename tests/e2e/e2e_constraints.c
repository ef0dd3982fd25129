/*
 * End-to-end tests of placement constraints: a real offerd master, three
 * real agents told apart by --hostname (agent0, agent1 on rack "ra",
 * agent2 on rack "rb"), and offerd-execute with --constraints. They check
 * that hostname:UNIQUE spreads instances over machines, that an instance
 * UNIQUE cannot place waits, as documented, until a machine is free again,
 * and that an attribute constraint in Marathon's JSON form keeps instances
 * on the machines it names; and that the example framework of
 * docs/scheduler-library.md (examples/pool_framework.c) runs as shown.
 */
#include "harness.h"

#include <check.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef OFFERD_EXECUTE_BIN
#define OFFERD_EXECUTE_BIN "offerd-execute"
#endif
#ifndef OFFERD_POOL_EXAMPLE_BIN
#define OFFERD_POOL_EXAMPLE_BIN "offerd-pool-example"
#endif

#define NAGENTS 3

static struct e2e_proc master;
static struct e2e_proc agents[NAGENTS];

static void cluster_start(void)
{
    const char *margs[] = {"--allocation_interval=50ms", NULL};
    ck_assert_int_eq(e2e_start_master(&master, margs), 0);
    for (int i = 0; i < NAGENTS; i++) {
        char hostname[32], attrs[64];
        snprintf(hostname, sizeof(hostname), "--hostname=agent%d", i);
        snprintf(attrs, sizeof(attrs), "--attributes=rack:%s",
                 i < 2 ? "ra" : "rb");
        const char *aargs[] = {"--resources=cpus:2;mem:512;disk:1024", hostname,
                               attrs, NULL};
        ck_assert_int_eq(e2e_start_agent(&agents[i], master.port, aargs), 0);
    }
    ck_assert_msg(e2e_wait_agents(&master, NAGENTS, 20000) == 0,
                  "the agents did not register");
}

static void cluster_stop(void)
{
    for (int i = 0; i < NAGENTS; i++)
        e2e_proc_cleanup(&agents[i]);
    e2e_proc_cleanup(&master);
}

/* The hostname of an agent id, from the master's /slaves (copied into
 * host). */
static void hostname_of(const char *agent_id, char *host, size_t len)
{
    struct e2e_response r;
    ck_assert_int_eq(
        e2e_http(master.port, "GET", "/slaves", NULL, NULL, 0, 5000, &r), 0);
    json_t *j = json_loads(r.body, 0, NULL);
    e2e_response_free(&r);
    ck_assert_ptr_nonnull(j);
    host[0] = '\0';
    size_t i;
    json_t *sl;
    json_array_foreach(json_object_get(j, "slaves"), i, sl)
    {
        const char *id = json_string_value(json_object_get(sl, "id"));
        if (id != NULL && strcmp(id, agent_id) == 0)
            snprintf(host, len, "%s",
                     json_string_value(json_object_get(sl, "hostname")));
    }
    json_decref(j);
    ck_assert_msg(host[0] != '\0', "agent %s not in /slaves", agent_id);
}

/* Run offerd-execute against the cluster with extra flags; returns its
 * exit code, its output in out. */
static int execute(const char *const *extra, char *out, size_t outlen)
{
    char m[64];
    snprintf(m, sizeof(m), "--master=127.0.0.1:%u", (unsigned)master.port);
    const char *args[16] = {m, "--resources=cpus:0.1;mem:16",
                            "--subscribe_timeout=20secs"};
    int n = 3;
    for (; *extra != NULL && n < 15; extra++)
        args[n++] = *extra;
    args[n] = NULL;
    return e2e_run(OFFERD_EXECUTE_BIN, args, out, outlen, 90000);
}

/* One "submitted task <id> to agent <agent>" line of the output. */
struct submission {
    char task[32];
    char agent[128];
    const char *at; /* where the line is in the output */
};

static int submissions(const char *out, struct submission *v, int max)
{
    int n = 0;
    const char *p = out;
    while ((p = strstr(p, "submitted task ")) != NULL && n < max) {
        ck_assert_int_eq(sscanf(p, "submitted task %31s to agent %127s",
                                v[n].task, v[n].agent),
                         2);
        v[n].at = p;
        n++;
        p++;
    }
    return n;
}

START_TEST(test_unique_hostname_uses_three_machines)
{
    cluster_start();
    const char *extra[] = {"--name=u", "--command=sleep 1", "--instances=3",
                           "--constraints=hostname:UNIQUE", NULL};
    char out[16384];
    int rc = execute(extra, out, sizeof(out));
    ck_assert_msg(rc == 0, "exit %d\n%s", rc, out);
    struct submission s[8];
    ck_assert_int_eq(submissions(out, s, 8), 3);
    char hosts[3][64];
    for (int i = 0; i < 3; i++) {
        hostname_of(s[i].agent, hosts[i], sizeof(hosts[i]));
        for (int k = 0; k < i; k++)
            ck_assert_msg(strcmp(hosts[i], hosts[k]) != 0,
                          "two instances on %s\n%s", hosts[i], out);
    }
    ck_assert_ptr_null(strstr(out, "waiting:"));
    for (int i = 0; i < 3; i++) {
        char line[64];
        snprintf(line, sizeof(line), "task u-%d is in state TASK_FINISHED", i);
        ck_assert_msg(strstr(out, line) != NULL, "%s missing\n%s", line, out);
    }
    cluster_stop();
}
END_TEST

START_TEST(test_unique_beyond_the_machines_waits_for_a_free_one)
{
    cluster_start();
    /* The instances outlive the refusal filter of their offers' leftovers
     * (5 s), so that the agents are offered again while all three run. */
    const char *extra[] = {"--name=w", "--command=sleep 6", "--instances=4",
                           "--constraints=[[\"hostname\",\"UNIQUE\"]]", NULL};
    char out[16384];
    int rc = execute(extra, out, sizeof(out));
    /* Documented: the fourth instance cannot run next to the other three;
     * it waits (and says so) until one of them ends, then runs where that
     * one ran. */
    ck_assert_msg(rc == 0, "exit %d\n%s", rc, out);
    const char *waiting = strstr(
        out, "waiting: 1 task cannot be placed on the offered agents under "
             "hostname:UNIQUE");
    ck_assert_msg(waiting != NULL, "no waiting line\n%s", out);
    struct submission s[8];
    ck_assert_int_eq(submissions(out, s, 8), 4);
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < i; k++)
            ck_assert_msg(strcmp(s[i].agent, s[k].agent) != 0, "%s", out);
    ck_assert_str_eq(s[3].task, "w-3");
    ck_assert_msg(waiting < s[3].at, "%s", out);
    /* Before w-3 was submitted, the instance on its agent had finished. */
    bool freed = false;
    for (int i = 0; i < 3; i++) {
        if (strcmp(s[i].agent, s[3].agent) != 0)
            continue;
        char line[128];
        snprintf(line, sizeof(line), "task %.31s is in state TASK_FINISHED",
                 s[i].task);
        const char *fin = strstr(out, line);
        freed = fin != NULL && fin < s[3].at;
    }
    ck_assert_msg(freed, "w-3 ran next to a running instance\n%s", out);
    cluster_stop();
}
END_TEST

START_TEST(test_cluster_on_an_attribute_in_json_form)
{
    cluster_start();
    const char *extra[] = {"--name=c",
                           "--command=true",
                           "--instances=2",
                           "--encoding=json",
                           "--constraints=[[\"rack\", \"CLUSTER\", \"rb\"]]",
                           NULL};
    char out[16384];
    int rc = execute(extra, out, sizeof(out));
    ck_assert_msg(rc == 0, "exit %d\n%s", rc, out);
    struct submission s[8];
    ck_assert_int_eq(submissions(out, s, 8), 2);
    for (int i = 0; i < 2; i++) {
        char host[64];
        hostname_of(s[i].agent, host, sizeof(host));
        ck_assert_msg(strcmp(host, "agent2") == 0, "on %s\n%s", host, out);
    }
    cluster_stop();
}
END_TEST

START_TEST(test_documented_pool_example_spreads)
{
    cluster_start();
    char m[64];
    snprintf(m, sizeof(m), "127.0.0.1:%u", (unsigned)master.port);
    const char *args[] = {m, "3", "true", NULL};
    char out[16384];
    int rc = e2e_run(OFFERD_POOL_EXAMPLE_BIN, args, out, sizeof(out), 60000);
    ck_assert_msg(rc == 0, "exit %d\n%s", rc, out);
    for (int i = 0; i < NAGENTS; i++) {
        char line[64];
        snprintf(line, sizeof(line), "on agent%d\n", i);
        ck_assert_msg(strstr(out, line) != NULL, "nothing %s%s", line, out);
        snprintf(line, sizeof(line), "spread-%d: TASK_FINISHED\n", i);
        ck_assert_msg(strstr(out, line) != NULL, "no %s%s", line, out);
    }
    ck_assert_msg(strstr(out, "spread-3") == NULL, "%s", out);
    ck_assert_msg(strstr(out, "offers: ") != NULL, "%s", out);
    cluster_stop();
}
END_TEST

static Suite *constraints_suite(void)
{
    Suite *s = suite_create("e2e_constraints");
    TCase *tc = tcase_create("execute");
    tcase_set_timeout(tc, 180);
    tcase_add_test(tc, test_unique_hostname_uses_three_machines);
    tcase_add_test(tc, test_unique_beyond_the_machines_waits_for_a_free_one);
    tcase_add_test(tc, test_cluster_on_an_attribute_in_json_form);
    tcase_add_test(tc, test_documented_pool_example_spreads);
    suite_add_tcase(s, tc);
    return s;
}

E2E_CHECK_MAIN(constraints_suite)
