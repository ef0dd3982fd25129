/*
 * End-to-end: the daemons as systemd runs them (the units in packaging/).
 * Type=notify: offerd and offerd-agent send READY=1 to the NOTIFY_SOCKET
 * the test binds once they serve, and STOPPING=1 on SIGTERM. Configuration
 * carried over from Mesos: MESOS_<FLAG> variables and --flags_dir's one
 * file per flag reach the master's /flags, and a Mesos flag offerd lacks
 * stops it with one line naming the file.
 */
#include "harness.h"
#include "notify_socket.h"

#include "common/fs.h"

#include <check.h>
#include <jansson.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Bind a test NOTIFY_SOCKET in the abstract namespace, its reads bounded
 * to 10 s, and name it in the environment the daemons inherit. */
static int notify_socket(const char *what)
{
    char name[108];
    snprintf(name, sizeof(name), "@offerd-e2e-%s-%ld", what, (long)getpid());
    int fd = notify_socket_bind(name, 10);
    setenv("NOTIFY_SOCKET", name, 1);
    return fd;
}

START_TEST(test_master_notifies_systemd)
{
    int fd = notify_socket("master");
    struct e2e_proc master;
    ck_assert_int_eq(e2e_start_master(&master, NULL), 0);
    unsetenv("NOTIFY_SOCKET");
    /* It answers /health (e2e_start_master waited for it) and said so. */
    notify_socket_expect(fd, "READY=1");
    ck_assert_int_eq(e2e_proc_stop(&master, SIGTERM, 10000), 0);
    notify_socket_expect(fd, "STOPPING=1");
    e2e_proc_cleanup(&master);
    close(fd);
}
END_TEST

START_TEST(test_agent_notifies_systemd)
{
    struct e2e_proc master, agent;
    ck_assert_int_eq(e2e_start_master(&master, NULL), 0);
    int fd = notify_socket("agent");
    ck_assert_int_eq(e2e_start_agent(&agent, master.port, NULL), 0);
    unsetenv("NOTIFY_SOCKET");
    notify_socket_expect(fd, "READY=1");
    ck_assert_int_eq(e2e_wait_agents(&master, 1, 10000), 0);
    ck_assert_int_eq(e2e_proc_stop(&agent, SIGTERM, 10000), 0);
    notify_socket_expect(fd, "STOPPING=1");
    e2e_proc_cleanup(&agent);
    e2e_proc_cleanup(&master);
    close(fd);
}
END_TEST

/* Write content to dir/name. */
static void put(const char *dir, const char *name, const char *content)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    ck_assert_int_eq(fs_write_atomic(path, content, strlen(content)), 0);
}

START_TEST(test_mesos_configuration_carries_over)
{
    char dir[] = "/tmp/offerd-e2e-flags-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char mesos[300], ours[300];
    snprintf(mesos, sizeof(mesos), "%s/mesos-master", dir);
    snprintf(ours, sizeof(ours), "%s/offerd-master", dir);
    char err[256];
    ck_assert_int_eq(fs_mkdirs(mesos, err, sizeof(err)), 0);
    ck_assert_int_eq(fs_mkdirs(ours, err, sizeof(err)), 0);
    /* /etc/mesos-master/hostname, overridden by /etc/offerd-master/. */
    put(mesos, "hostname", "mesos-file.example\n");
    put(ours, "hostname", "offerd-file.example\n");
    put(mesos, "offer_timeout", "30secs\n");
    setenv("MESOS_MAX_COMPLETED_FRAMEWORKS", "7", 1);

    char arg[700];
    snprintf(arg, sizeof(arg), "--flags_dir=%s:%s", mesos, ours);
    const char *args[] = {arg, NULL};
    struct e2e_proc master;
    ck_assert_int_eq(e2e_start_master(&master, args), 0);
    unsetenv("MESOS_MAX_COMPLETED_FRAMEWORKS");
    json_t *j = e2e_get_json(master.port, "/flags");
    ck_assert_ptr_nonnull(j);
    json_t *flags = json_object_get(j, "flags");
    ck_assert_str_eq(json_string_value(json_object_get(flags, "hostname")),
                     "offerd-file.example");
    ck_assert_str_eq(json_string_value(json_object_get(flags, "offer_timeout")),
                     "30secs");
    ck_assert_str_eq(
        json_string_value(json_object_get(flags, "max_completed_frameworks")),
        "7");
    json_decref(j);
    e2e_proc_cleanup(&master);

    /* A Mesos flag offerd does not implement: refused, one line. */
    put(mesos, "registry_strict", "true\n");
    char out[4096];
    const char *bad[] = {arg, "--port=0", NULL};
    ck_assert_int_eq(e2e_run(OFFERD_BIN, bad, out, sizeof(out), 10000), 1);
    char want[512];
    snprintf(want, sizeof(want),
             "offerd: %s/registry_strict: unknown flag '--registry_strict' "
             "(offerd has no such flag)\n",
             mesos);
    ck_assert_msg(strncmp(out, want, strlen(want)) == 0, "got: %s", out);
    ck_assert_int_eq(fs_remove_tree(dir), 0);
}
END_TEST

static Suite *service_suite(void)
{
    Suite *s = suite_create("service");
    TCase *tc = tcase_create("service");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_master_notifies_systemd);
    tcase_add_test(tc, test_agent_notifies_systemd);
    tcase_add_test(tc, test_mesos_configuration_carries_over);
    suite_add_tcase(s, tc);
    return s;
}

E2E_CHECK_MAIN(service_suite)
