/*
 * The web UI in a real browser: a master (serving the source tree's
 * webui/) and an agent on loopback, with a role weight and quota and a
 * maintenance window set up first; then tests/e2e/webui_driver.py drives
 * headless Chromium over the DevTools protocol through every page, launches
 * a task with offerd-execute while the page is open, waits for it to appear
 * without a reload, and reads the line the task printed in the sandbox's
 * live tail (through the master's /agent/<id>/files proxy). Then it asks
 * for a master restart (a file it creates), which this test does, and
 * checks that the page reconnects by itself and shows the agent and the
 * task again once they re-register. Last, it
 * loads 10,000 agents and 100,000 synthetic tasks into the page and checks
 * that the tables stay virtualized, filter and sort (the timings are
 * printed, not asserted). The driver
 * keeps Chromium's profile under this test's directory, which must be
 * empty afterwards.
 */
#include "harness.h"

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#ifndef OFFERD_EXECUTE_BIN
#define OFFERD_EXECUTE_BIN "offerd-execute"
#endif
#ifndef OFFERD_SOURCE_DIR
#define OFFERD_SOURCE_DIR "."
#endif

/* Debian's interpreter, where python3-websocket is installed (a python3
 * earlier in PATH, e.g. a pyenv one, would not have it). */
#define PYTHON "/usr/bin/python3"
#define DRIVER OFFERD_SOURCE_DIR "/tests/e2e/webui_driver.py"
/* The driver's own deadline, and ours on top of it. */
#define DRIVER_SECS "80"
#define RUN_MS      90000

static void post(uint16_t port, const char *method, const char *path,
                 const char *body, int want)
{
    const char *headers[] = {"Content-Type: application/json", NULL};
    struct e2e_response r;
    ck_assert_int_eq(
        e2e_http(port, method, path, headers, body, strlen(body), 5000, &r), 0);
    ck_assert_msg(r.status == want, "%s %s: %d %s", method, path, r.status,
                  r.body);
    e2e_response_free(&r);
}

/* True when dir holds nothing but "." and "..". */
static bool dir_empty(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(d);
    return n == 0;
}

START_TEST(test_webui_in_chromium)
{
    struct e2e_proc master, agent;
    const char *margs[] = {"--webui_dir=" OFFERD_SOURCE_DIR "/webui", NULL};
    const char *aargs0[] = {"--hostname=webui-agent-1",
                            "--attributes=rack:r1;zone:z9",
                            "--resources=cpus:2;mem:1024;disk:2048", NULL};
    const char *const *aargs[] = {aargs0};
    struct event_base *base =
        e2e_cluster_start(&master, margs, &agent, 1, aargs);

    post(master.port, "PUT", "/weights", "[{\"role\":\"eng\",\"weight\":2.5}]",
         200);
    post(master.port, "POST", "/api/v1",
         "{\"type\":\"UPDATE_QUOTA\",\"update_quota\":{\"quota_configs\":[{"
         "\"role\":\"eng\",\"guarantees\":{\"cpus\":{\"value\":1}},"
         "\"limits\":{\"cpus\":{\"value\":2}}}]}}",
         200);
    /* A window far ahead: the agent is scheduled, not drained. */
    post(master.port, "POST", "/maintenance/schedule",
         "{\"windows\":[{\"machine_ids\":[{\"hostname\":\"webui-agent-1\","
         "\"ip\":\"127.0.0.1\"}],\"unavailability\":{\"start\":{"
         "\"nanoseconds\":4000000000000000000},\"duration\":{"
         "\"nanoseconds\":3600000000000}}}]}",
         200);

    char master_arg[64], tmp_arg[340], tmp[300], restart[320], restart_arg[340];
    snprintf(master_arg, sizeof(master_arg), "--master=127.0.0.1:%u",
             (unsigned)master.port);
    snprintf(tmp, sizeof(tmp), "%s/browser", master.dir);
    ck_assert_int_eq(mkdir(tmp, 0700), 0);
    snprintf(tmp_arg, sizeof(tmp_arg), "--profile_parent=%s", tmp);
    snprintf(restart, sizeof(restart), "%s/restart-now", tmp);
    snprintf(restart_arg, sizeof(restart_arg), "--restart_file=%s", restart);
    const char *args[] = {DRIVER,
                          master_arg,
                          "--execute=" OFFERD_EXECUTE_BIN,
                          "--hostname=webui-agent-1",
                          "--attribute=zone:z9",
                          "--role=eng",
                          "--weight=2.5",
                          "--marker=hello-from-the-webui-task",
                          "--timeout=" DRIVER_SECS,
                          "--scale",
                          tmp_arg,
                          restart_arg,
                          NULL};
    struct e2e_proc driver;
    ck_assert_int_eq(e2e_spawn(&driver, PYTHON, args), 0);
    /* Run the driver; when it asks (the file appears), restart the master
     * on its port so that the page's stream drops and must come back. */
    bool restarted = false;
    int64_t deadline = e2e_now_ms() + RUN_MS;
    while (e2e_proc_running(&driver) && e2e_now_ms() < deadline) {
        if (!restarted && access(restart, F_OK) == 0) {
            ck_assert_int_eq(e2e_proc_stop(&master, SIGTERM, 10000), 0);
            ck_assert_int_eq(e2e_restart_master(&master, margs), 0);
            ck_assert_int_eq(unlink(restart), 0);
            restarted = true;
        }
        e2e_sleep_ms(50);
    }
    int code = e2e_proc_stop(&driver, SIGTERM, 10000);
    /* The driver's progress and the scale figures (ctest -V shows them). */
    e2e_proc_dump_log(&driver, 16384);
    if (code != 0)
        e2e_proc_dump_log(&master, 4000);
    e2e_proc_cleanup(&driver);
    ck_assert_msg(code == 0, "the browser test failed (exit %d)", code);
    ck_assert(restarted);
    /* Chromium's profile and processes are gone. */
    ck_assert(dir_empty(tmp));
    e2e_cluster_stop(&master, &agent, 1, &base);
}
END_TEST

E2E_ONE_TEST_MAIN("webui", "chromium", test_webui_in_chromium, 100)
