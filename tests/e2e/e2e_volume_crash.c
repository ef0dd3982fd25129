/*
 * End-to-end reproduction of issue 14 with the real master and agent: a
 * persistent volume destroyed while its agent is down after a crash in the
 * middle of creating it must not survive on disk.
 *
 * Each round:
 *  1. the operator creates volume "v" (/create-volumes, 202); the agent,
 *     started with OFFERD_TEST_CRASH_AT, kills itself (SIGKILL) at one
 *     crash point of applying that list, so that it dies with the
 *     directory made or not, the list written or not;
 *  2. the operator destroys "v" while the agent is down (/destroy-volumes,
 *     202);
 *  3. the agent restarts (armed for the next round); once it holds the
 *     master's version, v's directory is gone, and volume "keep", listed
 *     all along, is there with its data.
 * The crash point cycles through every point a create passes. Every round
 * uses the same role and id, and a marker is written into v's directory
 * whenever the crash left one, so a stale directory adopted by the next
 * round's volume would be seen.
 *
 * Crash points count their passes since the agent started
 * (<point>:<n>): an agent restarted after a crash first applies the
 * master's list that destroys v (which makes no directory), so the
 * create's points are its second passes, but dir-made's first.
 */
#include "harness.h"
#include "harness_api.h"

#include <check.h>
#include <dirent.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 20

static const char *const MASTER_FLAGS[] = {"--allocation_interval=50ms", NULL};
static const char *const AGENT_FLAGS[] = {
    "--resources=cpus:1;mem:256;disk:1024", "--hostname=agent0", NULL};

#define RESERVATION                                                            \
    "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"eng\","                \
    "\"principal\":\"ops\"}]"
#define RESERVE_JSON                                                           \
    "[{\"name\":\"disk\",\"type\":\"SCALAR\",\"scalar\":{\"value\":512}"       \
    "," RESERVATION "}]"
#define VOLUME_JSON(id)                                                        \
    "[{\"name\":\"disk\",\"type\":\"SCALAR\",\"scalar\":{\"value\":64}"        \
    "," RESERVATION ",\"disk\":{\"persistence\":{\"id\":\"" id "\","           \
    "\"principal\":\"ops\"},\"volume\":{\"container_path\":\"data\","          \
    "\"mode\":\"RW\"}}}]"

/* The crash points a create of one volume passes, in order. */
static const char *const POINTS[] = {"begin", "intent-written", "dir-made",
                                     "list-written", "removing-written"};
#define NPOINTS (sizeof(POINTS) / sizeof(POINTS[0]))

static struct e2e_proc master, agent;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void teardown(void)
{
    unsetenv("OFFERD_TEST_CRASH_AT");
    e2e_proc_cleanup(&agent);
    e2e_proc_cleanup(&master);
}

/* POST a Mesos-style operator form (slaveId and field=json) to the master
 * and assert 202. */
static void operator_form(const char *path, const char *agent_id,
                          const char *field, const char *json)
{
    char reason[1024];
    int status = api_operator_form(master.port, path, agent_id, field, json,
                                   reason, sizeof(reason));
    ck_assert_msg(status == 202, "%s: %d %s", path, status, reason);
}

/* Poll until the agent holds version want. */
static void wait_agent_version(long long want, const char *what)
{
    int64_t deadline = now_ms() + 20000;
    long long v = api_agent_ckpt_version(agent.port);
    while (v != want && now_ms() < deadline) {
        usleep(20000);
        v = api_agent_ckpt_version(agent.port);
    }
    ck_assert_msg(v == want, "%s: the agent holds version %lld, not %lld", what,
                  v, want);
}

/* Path of rel under the agent's work_dir, in buf. */
static const char *in_work(char *buf, size_t len, const char *rel)
{
    snprintf(buf, len, "%s/%s", agent.work_dir, rel);
    return buf;
}

static bool work_exists(const char *rel)
{
    char p[PATH_MAX];
    struct stat st;
    return lstat(in_work(p, sizeof(p), rel), &st) == 0;
}

/* The names in work_dir/rel, comma-separated, into out ("" when missing or
 * empty). */
static void list_names(const char *rel, char *out, size_t outlen)
{
    char p[PATH_MAX];
    out[0] = '\0';
    DIR *d = opendir(in_work(p, sizeof(p), rel));
    if (d == NULL)
        return;
    size_t o = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        int w =
            snprintf(out + o, outlen - o, "%s%s", o > 0 ? "," : "", de->d_name);
        if (w < 0 || (size_t)w >= outlen - o)
            break;
        o += (size_t)w;
    }
    closedir(d);
}

/* How many times needle occurs in the agent's log. */
static int log_count(const char *needle)
{
    FILE *f = fopen(agent.log_path, "r");
    ck_assert_ptr_nonnull(f);
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof(line), f) != NULL)
        if (strstr(line, needle) != NULL)
            n++;
    fclose(f);
    return n;
}

/* Wait (bounded) until the agent's log has at least n lines holding
 * needle. */
static void wait_log_count(const char *needle, int n)
{
    int64_t deadline = now_ms() + 20000;
    while (log_count(needle) < n && now_ms() < deadline)
        usleep(10000);
    ck_assert_msg(log_count(needle) >= n, "the agent never logged '%s'",
                  needle);
}

/* The version of the last CHECKPOINT_RESOURCES the agent's log shows
 * before the line holding needle, or -1. */
static long long log_version_before(const char *needle)
{
    FILE *f = fopen(agent.log_path, "r");
    ck_assert_ptr_nonnull(f);
    char line[4096];
    long long last = -1, at = -1;
    while (fgets(line, sizeof(line), f) != NULL) {
        const char *v = strstr(line, "CHECKPOINT_RESOURCES version ");
        if (v != NULL)
            last =
                strtoll(v + strlen("CHECKPOINT_RESOURCES version "), NULL, 10);
        if (strstr(line, needle) != NULL)
            at = last;
    }
    fclose(f);
    return at;
}

/* Wait (bounded) for the agent to kill itself at its crash point. */
static void wait_agent_crash(const char *point)
{
    int64_t deadline = now_ms() + 10000;
    while (e2e_proc_running(&agent) && now_ms() < deadline)
        usleep(10000);
    ck_assert_msg(agent.pid == 0, "the agent did not crash at %s", point);
    ck_assert_msg(WIFSIGNALED(agent.exit_status) &&
                      WTERMSIG(agent.exit_status) == SIGKILL,
                  "the agent ended with status %d, not SIGKILL, at %s",
                  agent.exit_status, point);
}

/* Restart the agent, armed to crash at round's point (none when round is
 * ROUNDS); restarted tells whether it will first apply the master's list
 * that destroys v. */
static void restart_agent(int round, bool restarted)
{
    if (round < ROUNDS) {
        const char *point = POINTS[(size_t)round % NPOINTS];
        bool per_apply = strcmp(point, "dir-made") != 0;
        char spec[64];
        snprintf(spec, sizeof(spec), "%s:%d", point,
                 restarted && per_apply ? 2 : 1);
        setenv("OFFERD_TEST_CRASH_AT", spec, 1);
    } else {
        unsetenv("OFFERD_TEST_CRASH_AT");
    }
    ck_assert_int_eq(e2e_restart_agent(&agent, master.port, AGENT_FLAGS), 0);
}

START_TEST(test_destroyed_while_down_after_crash)
{
    ck_assert_int_eq(e2e_start_master(&master, MASTER_FLAGS), 0);
    ck_assert_int_eq(e2e_start_agent(&agent, master.port, AGENT_FLAGS), 0);
    ck_assert_msg(e2e_wait_agents(&master, 1, 20000) == 0,
                  "the agent did not register");
    json_t *j = api_get_json(master.port, "/slaves");
    char agent_id[256];
    snprintf(agent_id, sizeof(agent_id), "%s",
             json_string_value(json_object_get(
                 json_array_get(json_object_get(j, "slaves"), 0), "id")));
    json_decref(j);

    /* Reserved disk and a volume that stays listed throughout, with data
     * (versions 1 and 2). */
    operator_form("/reserve", agent_id, "resources", RESERVE_JSON);
    operator_form("/create-volumes", agent_id, "volumes", VOLUME_JSON("keep"));
    long long version = 2;
    wait_agent_version(version, "setup");
    char p[PATH_MAX];
    FILE *f = fopen(in_work(p, sizeof(p), "volumes/roles/eng/keep/data"), "w");
    ck_assert_ptr_nonnull(f);
    fputs("precious\n", f);
    fclose(f);

    /* Armed for round 0 (a clean restart: no list to catch up on). The
     * master must have the agent back before the create: an operation
     * while the agent's SUBSCRIBE is in flight is a race of its own. */
    int registered = log_count("registered with master");
    ck_assert_int_eq(e2e_proc_stop(&agent, SIGTERM, 10000), 0);
    restart_agent(0, false);
    wait_log_count("registered with master", registered + 1);
    int64_t start = now_ms();
    for (int round = 0; round < ROUNDS; round++) {
        const char *point = POINTS[(size_t)round % NPOINTS];
        char what[96], reached[96];
        snprintf(what, sizeof(what), "round %d (crash at %s)", round, point);
        snprintf(reached, sizeof(reached), "crash point %s reached", point);
        int reached_before = log_count(reached);

        /* 1. Create v; the agent dies applying it. */
        operator_form("/create-volumes", agent_id, "volumes", VOLUME_JSON("v"));
        version++;
        wait_agent_crash(point);
        ck_assert_msg(log_count(reached) == reached_before + 1,
                      "%s: the log does not say so", what);
        /* ... while applying the create, not the list before it. */
        ck_assert_msg(log_version_before(reached) == version,
                      "%s: it crashed applying version %lld, not %lld", what,
                      log_version_before(reached), version);
        if (work_exists("volumes/roles/eng/v")) {
            ck_assert_msg(!work_exists("volumes/roles/eng/v/stale"),
                          "%s: v adopted a stale directory", what);
            f = fopen(in_work(p, sizeof(p), "volumes/roles/eng/v/stale"), "w");
            ck_assert_ptr_nonnull(f);
            fclose(f);
        }

        /* 2. Destroy v while the agent is down. */
        operator_form("/destroy-volumes", agent_id, "volumes",
                      VOLUME_JSON("v"));
        version++;

        /* 3. Restart: the master's list holds, and only keep is left. */
        restart_agent(round + 1, true);
        wait_agent_version(version, what);
        char names[512];
        list_names("volumes/roles/eng", names, sizeof(names));
        ck_assert_msg(strcmp(names, "keep") == 0,
                      "%s: volumes/roles/eng holds %s", what, names);
        ck_assert_msg(work_exists("volumes/roles/eng/keep/data"),
                      "%s: keep's data is gone", what);
    }
    fprintf(stderr, "e2e_volume_crash: %d rounds in %lld ms\n", ROUNDS,
            (long long)(now_ms() - start));

    /* Nothing else anywhere under volumes/, nothing awaiting in trash/. */
    char names[512];
    list_names("volumes", names, sizeof(names));
    ck_assert_str_eq(names, "roles");
    list_names("volumes/roles", names, sizeof(names));
    ck_assert_str_eq(names, "eng");
    list_names("meta/trash", names, sizeof(names));
    ck_assert_str_eq(names, "");
    ck_assert_int_eq(e2e_proc_stop(&agent, SIGTERM, 10000), 0);
}
END_TEST

static Suite *volume_crash_suite(void)
{
    Suite *s = suite_create("e2e_volume_crash");
    TCase *tc = tcase_create("volume_crash");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_set_timeout(tc, 90);
    tcase_add_test(tc, test_destroyed_while_down_after_crash);
    suite_add_tcase(s, tc);
    return s;
}

E2E_CHECK_MAIN(volume_crash_suite)
