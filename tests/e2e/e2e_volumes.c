/*
 * End-to-end test of dynamic reservations and persistent volumes with the
 * real master and agent: the operator reserves resources on the agent
 * (POST /reserve) and creates a persistent volume on them
 * (/create-volumes), as with Mesos's endpoints; the agent checkpoints the
 * list and makes the volume's directory; a framework of the role is
 * offered the volume, launches a task that writes a file into it, then a
 * second task that reads the file back. Then the agent restarts, then the
 * master: the reservation and the volume are still offered, with the data.
 * Last, the operator destroys the volume (/destroy-volumes) and the agent
 * removes its directory.
 *
 * A second test resizes a volume: the framework grows it through an offer
 * (GROW_VOLUME with an operation id), a task writes a file into it, the
 * operator shrinks it (SHRINK_VOLUME on /api/v1); the file stays, and after
 * an agent restart and a master restart /slaves, /state, the agent's
 * /state and the offers show the shrunk volume.
 *
 * The framework is the scripted JSON one of harness_api.h; it acknowledges
 * every status update it reads.
 */
#include "harness.h"
#include "harness_api.h"

#include <check.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *const MASTER_FLAGS[] = {"--allocation_interval=50ms", NULL};
static const char *const AGENT_FLAGS[] = {
    "--resources=cpus:2;mem:512;disk:1024", "--hostname=agent0", NULL};

#define RESERVATION                                                            \
    "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"eng\","                \
    "\"principal\":\"ops\"}]"
#define RESERVE_JSON                                                           \
    "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1}"         \
    "," RESERVATION "},"                                                       \
    "{\"name\":\"mem\",\"type\":\"SCALAR\",\"scalar\":{\"value\":128}"         \
    "," RESERVATION "},"                                                       \
    "{\"name\":\"disk\",\"type\":\"SCALAR\",\"scalar\":{\"value\":256}"        \
    "," RESERVATION "}]"
#define VOLUME_JSON                                                            \
    "[{\"name\":\"disk\",\"type\":\"SCALAR\",\"scalar\":{\"value\":128}"       \
    "," RESERVATION ",\"disk\":{\"persistence\":{\"id\":\"db1\","              \
    "\"principal\":\"ops\"},\"volume\":{\"container_path\":\"data\","          \
    "\"mode\":\"RW\"}}}]"
#define FRAMEWORK_INFO                                                         \
    "{\"user\":\"nobody\",\"name\":\"volumes\",\"roles\":[\"eng\"],"           \
    "\"capabilities\":[{\"type\":\"MULTI_ROLE\"},"                             \
    "{\"type\":\"RESERVATION_REFINEMENT\"}]}"

static struct e2e_proc master, agent;

static void teardown(void)
{
    e2e_proc_cleanup(&agent);
    e2e_proc_cleanup(&master);
}

/* POST a Mesos-style operator form to the master; returns the status,
 * the body in reason. */
static int operator_form(const char *path, const char *agent_id,
                         const char *field, const char *json, char *reason,
                         size_t reasonlen)
{
    return api_operator_form(master.port, path, agent_id, field, json, reason,
                             reasonlen);
}

/* The master's only agent, as /slaves shows it (new reference). */
static json_t *master_agent(void)
{
    json_t *j = api_get_json(master.port, "/slaves");
    json_t *a = json_array_get(json_object_get(j, "slaves"), 0);
    ck_assert_ptr_nonnull(a);
    json_incref(a);
    json_decref(j);
    return a;
}

static long long agent_ckpt_version(void)
{
    return api_agent_ckpt_version(agent.port);
}

static bool volume_file_exists(const char *name)
{
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s/volumes/roles/eng/db1%s%s", agent.work_dir,
             name[0] ? "/" : "", name);
    struct stat st;
    return stat(p, &st) == 0;
}

/* The volume db1 in the first offer of an OFFERS event (borrowed), or
 * NULL. */
static json_t *offered_volume(json_t *ev)
{
    json_t *offer = json_array_get(
        json_object_get(json_object_get(ev, "offers"), "offers"), 0);
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(offer, "resources"), i, r)
    {
        const char *id = json_string_value(json_object_get(
            json_object_get(json_object_get(r, "disk"), "persistence"), "id"));
        if (id != NULL && strcmp(id, "db1") == 0)
            return r;
    }
    return NULL;
}

/* The amount of scalar `name` reserved to "eng" in the first offer. */
static double offered_reserved(json_t *ev, const char *name)
{
    json_t *offer = json_array_get(
        json_object_get(json_object_get(ev, "offers"), "offers"), 0);
    double sum = 0;
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(offer, "resources"), i, r)
    {
        json_t *resv = json_object_get(r, "reservations");
        if (strcmp(json_string_value(json_object_get(r, "name")), name) != 0 ||
            json_array_size(resv) == 0 ||
            json_object_get(json_object_get(r, "disk"), "persistence") != NULL)
            continue;
        const char *role = json_string_value(json_object_get(
            json_array_get(resv, json_array_size(resv) - 1), "role"));
        if (role != NULL && strcmp(role, "eng") == 0)
            sum += json_number_value(
                json_object_get(json_object_get(r, "scalar"), "value"));
    }
    return sum;
}

/* Wait for an offer holding the volume of size (any size when size < 0);
 * decline the others (offers made before a resize are stale, maybe
 * rescinded). Returns the event (caller json_decref's) with the offer's
 * ids copied out. */
static json_t *wait_volume_offer_of(struct conn *fw, double size,
                                    char *offer_id, char *agent_id)
{
    int64_t deadline = e2e_now_ms() + 20000;
    while (e2e_now_ms() < deadline) {
        json_t *ev = api_wait_offer(fw, offer_id, agent_id,
                                    (int)(deadline - e2e_now_ms()));
        if (ev == NULL)
            break;
        json_t *vol = offered_volume(ev);
        if (vol != NULL &&
            (size < 0 || json_number_value(json_object_get(
                             json_object_get(vol, "scalar"), "value")) == size))
            return ev;
        api_decline(fw, master.port, offer_id, 0);
        json_decref(ev);
    }
    ck_abort_msg("no offer with the volume");
    return NULL;
}

static json_t *wait_volume_offer(struct conn *fw, char *offer_id,
                                 char *agent_id)
{
    return wait_volume_offer_of(fw, -1, offer_id, agent_id);
}

/* Launch task_id running cmd on the offer, with the offered volume and
 * a little unreserved cpus and mem. */
static void launch_with_volume(struct conn *fw, json_t *ev,
                               const char *offer_id, const char *agent_id,
                               const char *task_id, const char *cmd)
{
    char *vol = json_dumps(offered_volume(ev), JSON_COMPACT);
    json_t *cmd_str = json_string(cmd);
    char *cmd_json = json_dumps(cmd_str, JSON_ENCODE_ANY);
    json_decref(cmd_str);
    char payload[8192];
    snprintf(payload, sizeof(payload),
             "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{\"type\":"
             "\"LAUNCH\",\"launch\":{\"task_infos\":[{\"name\":\"%s\","
             "\"task_id\":{\"value\":\"%s\"},\"agent_id\":{\"value\":\"%s\"},"
             "\"resources\":[%s,{\"name\":\"cpus\",\"type\":\"SCALAR\","
             "\"scalar\":{\"value\":0.1}},{\"name\":\"mem\",\"type\":"
             "\"SCALAR\",\"scalar\":{\"value\":16}}],"
             "\"command\":{\"value\":%s}}]}}],"
             "\"filters\":{\"refuse_seconds\":0}}",
             offer_id, task_id, task_id, agent_id, vol, cmd_json);
    free(vol);
    free(cmd_json);
    ck_assert_int_eq(api_fw_call(fw, master.port, "ACCEPT", "accept", payload),
                     202);
}

static bool is_terminal(const char *state)
{
    static const char *const terminal[] = {
        "TASK_FINISHED", "TASK_FAILED",      "TASK_KILLED",
        "TASK_LOST",     "TASK_ERROR",       "TASK_DROPPED",
        "TASK_GONE",     "TASK_UNREACHABLE", "TASK_GONE_BY_OPERATOR"};
    for (size_t i = 0; i < sizeof(terminal) / sizeof(terminal[0]); i++)
        if (strcmp(state, terminal[i]) == 0)
            return true;
    return false;
}

/* Decline every offer of an OFFERS event, with no filter. */
static void decline_all(struct conn *fw, json_t *ev)
{
    size_t i;
    json_t *o;
    json_array_foreach(json_object_get(json_object_get(ev, "offers"), "offers"),
                       i, o)
    {
        const char *id = json_string_value(
            json_object_get(json_object_get(o, "id"), "value"));
        if (id != NULL)
            api_decline(fw, master.port, id, 0);
    }
}

/* Read updates (acknowledging each) until task_id is terminal; returns
 * its state, the message in msg. */
static void wait_task_end(struct conn *fw, const char *task_id, char *state,
                          size_t statelen, char *msg, size_t msglen)
{
    int64_t deadline = e2e_now_ms() + 20000;
    while (e2e_now_ms() < deadline) {
        json_t *ev = api_next_event(fw, (int)(deadline - e2e_now_ms()));
        if (ev == NULL)
            break;
        const char *type = json_string_value(json_object_get(ev, "type"));
        if (type != NULL && strcmp(type, "OFFERS") == 0) {
            /* Offers made meanwhile (what the launch left) go back at
             * once: held, they would keep the volume's next offer from
             * coming. */
            decline_all(fw, ev);
            json_decref(ev);
            continue;
        }
        if (type == NULL || strcmp(type, "UPDATE") != 0) {
            json_decref(ev);
            continue;
        }
        json_t *st = json_object_get(json_object_get(ev, "update"), "status");
        const char *uuid = json_string_value(json_object_get(st, "uuid"));
        const char *tid = json_string_value(
            json_object_get(json_object_get(st, "task_id"), "value"));
        const char *s = json_string_value(json_object_get(st, "state"));
        if (uuid != NULL) {
            char payload[1024];
            char *aid =
                json_dumps(json_object_get(st, "agent_id"), JSON_COMPACT);
            snprintf(payload, sizeof(payload),
                     "{\"agent_id\":%s,\"task_id\":{\"value\":\"%s\"},"
                     "\"uuid\":\"%s\"}",
                     aid, tid, uuid);
            free(aid);
            api_fw_call(fw, master.port, "ACKNOWLEDGE", "acknowledge", payload);
        }
        bool done = strcmp(tid, task_id) == 0 && is_terminal(s);
        if (done) {
            snprintf(state, statelen, "%s", s);
            const char *m = json_string_value(json_object_get(st, "message"));
            snprintf(msg, msglen, "%s", m != NULL ? m : "");
        }
        json_decref(ev);
        if (done)
            return;
    }
    ck_abort_msg("task %s did not end", task_id);
}

/* Run a task on the volume (offered at size; any when size < 0) and
 * assert it finishes. */
static void run_on_volume_of(struct conn *fw, double size, const char *task_id,
                             const char *cmd)
{
    char offer_id[256], agent_id[256], state[64], msg[512];
    json_t *ev = wait_volume_offer_of(fw, size, offer_id, agent_id);
    launch_with_volume(fw, ev, offer_id, agent_id, task_id, cmd);
    json_decref(ev);
    wait_task_end(fw, task_id, state, sizeof(state), msg, sizeof(msg));
    ck_assert_msg(strcmp(state, "TASK_FINISHED") == 0, "%s: %s (%s)", task_id,
                  state, msg);
}

static void run_on_volume(struct conn *fw, const char *task_id, const char *cmd)
{
    run_on_volume_of(fw, -1, task_id, cmd);
}

/* The master's agent has (re-)registered after *arg (its
 * reregistered_time) and is active. */
static bool reregistered_after(void *arg)
{
    double after = *(const double *)arg;
    json_t *j = e2e_get_json(master.port, "/slaves");
    json_t *a = json_array_get(json_object_get(j, "slaves"), 0);
    bool ok =
        a != NULL && json_is_true(json_object_get(a, "active")) &&
        json_number_value(json_object_get(a, "reregistered_time")) > after;
    json_decref(j);
    return ok;
}

/* The agent's checkpointed resources are at least version *arg. */
static bool ckpt_version_reached(void *arg)
{
    return agent_ckpt_version() >= *(const long long *)arg;
}

START_TEST(test_volume_lifecycle)
{
    ck_assert_int_eq(e2e_start_master(&master, MASTER_FLAGS), 0);
    ck_assert_int_eq(e2e_start_agent(&agent, master.port, AGENT_FLAGS), 0);
    ck_assert_msg(e2e_wait_agents(&master, 1, 20000) == 0,
                  "the agent did not register");
    json_t *a = master_agent();
    char agent_id[256];
    snprintf(agent_id, sizeof(agent_id), "%s",
             json_string_value(json_object_get(a, "id")));
    json_decref(a);

    /* The operator reserves, then creates a volume, as with Mesos. */
    char reason[1024];
    ck_assert_msg(operator_form("/reserve", agent_id, "resources", RESERVE_JSON,
                                reason, sizeof(reason)) == 202,
                  "/reserve: %s", reason);
    ck_assert_msg(operator_form("/create-volumes", agent_id, "volumes",
                                VOLUME_JSON, reason, sizeof(reason)) == 202,
                  "/create-volumes: %s", reason);
    /* The agent checkpoints version 2 and makes the directory. */
    long long v2 = 2;
    ck_assert(e2e_poll_until(ckpt_version_reached, &v2, 10000));
    ck_assert_int_eq(agent_ckpt_version(), 2);
    ck_assert(volume_file_exists(""));

    /* A framework of the role writes, then reads. */
    struct conn fw;
    api_subscribe_framework(&fw, master.port, FRAMEWORK_INFO);
    run_on_volume(&fw, "writer", "echo hello > data/f");
    ck_assert(volume_file_exists("f"));
    run_on_volume(&fw, "reader", "test \"$(cat data/f)\" = hello");
    api_conn_close(&fw);

    /* The agent restarts. */
    a = master_agent();
    double before = json_number_value(json_object_get(a, "reregistered_time"));
    json_decref(a);
    ck_assert_int_eq(e2e_proc_stop(&agent, SIGTERM, 10000), 0);
    ck_assert_int_eq(e2e_restart_agent(&agent, master.port, AGENT_FLAGS), 0);
    ck_assert_msg(e2e_poll_until(reregistered_after, &before, 20000),
                  "the agent did not re-register");
    ck_assert_int_eq(agent_ckpt_version(), 2);

    /* Then the master. */
    ck_assert_int_eq(e2e_proc_stop(&master, SIGTERM, 10000), 0);
    ck_assert_int_eq(e2e_restart_master(&master, MASTER_FLAGS), 0);
    ck_assert_msg(e2e_wait_agents(&master, 1, 20000) == 0,
                  "the agent did not come back");
    a = master_agent();
    json_t *eng =
        json_object_get(json_object_get(a, "reserved_resources"), "eng");
    ck_assert(json_number_value(json_object_get(eng, "cpus")) == 1.0);
    ck_assert(json_number_value(json_object_get(eng, "disk")) == 256.0);
    json_decref(a);
    ck_assert_int_eq(agent_ckpt_version(), 2);

    /* Still offered, reservation and volume, with the data. */
    api_subscribe_framework(&fw, master.port, FRAMEWORK_INFO);
    char offer_id[256], aid[256];
    json_t *ev = wait_volume_offer(&fw, offer_id, aid);
    ck_assert_str_eq(aid, agent_id);
    ck_assert(offered_reserved(ev, "cpus") == 1.0);
    ck_assert(offered_reserved(ev, "mem") == 128.0);
    ck_assert(offered_reserved(ev, "disk") == 128.0);
    json_t *vol = offered_volume(ev);
    ck_assert(json_number_value(json_object_get(json_object_get(vol, "scalar"),
                                                "value")) == 128.0);
    api_decline(&fw, master.port, offer_id, 0);
    json_decref(ev);
    run_on_volume(&fw, "reader-again", "test \"$(cat data/f)\" = hello");
    api_conn_close(&fw);

    /* The agent's /state shows the reservation. */
    json_t *st = api_get_json(agent.port, "/state");
    json_t *full =
        json_object_get(json_object_get(st, "reserved_resources_full"), "eng");
    ck_assert_uint_eq(json_array_size(full), 4); /* cpus, mem, disk, volume */
    json_decref(st);

    /* The operator destroys the volume: its directory goes. */
    ck_assert_msg(operator_form("/destroy-volumes", agent_id, "volumes",
                                VOLUME_JSON, reason, sizeof(reason)) == 202,
                  "/destroy-volumes: %s", reason);
    long long v3 = 3;
    ck_assert(e2e_poll_until(ckpt_version_reached, &v3, 10000));
    ck_assert_int_eq(agent_ckpt_version(), 3);
    ck_assert(!volume_file_exists(""));
}
END_TEST

/* The size of volume db1 among the Resource objects of arr (-1: none). */
static double volume_size_in(json_t *arr)
{
    size_t i;
    json_t *r;
    json_array_foreach(arr, i, r)
    {
        const char *id = json_string_value(json_object_get(
            json_object_get(json_object_get(r, "disk"), "persistence"), "id"));
        if (id != NULL && strcmp(id, "db1") == 0)
            return json_number_value(
                json_object_get(json_object_get(r, "scalar"), "value"));
    }
    return -1;
}

/* What an agent object of /slaves or /state (or the agent's own /state)
 * shows of role eng: db1's size (reserved_resources_full) into *vol, and
 * all its reserved disk (reserved_resources) into *disk. */
static void eng_disk_of(json_t *a, double *vol, double *disk)
{
    *vol = volume_size_in(
        json_object_get(json_object_get(a, "reserved_resources_full"), "eng"));
    *disk = json_number_value(json_object_get(
        json_object_get(json_object_get(a, "reserved_resources"), "eng"),
        "disk"));
}

/* Assert that /slaves, the master's /state and the agent's /state show db1
 * of vol and eng's reserved disk of disk. */
static void assert_shown(double vol, double disk)
{
    double v, d;
    json_t *a = master_agent();
    eng_disk_of(a, &v, &d);
    json_decref(a);
    ck_assert_msg(v == vol && d == disk, "/slaves: volume %g, disk %g", v, d);
    json_t *st = api_get_json(master.port, "/state");
    eng_disk_of(json_array_get(json_object_get(st, "slaves"), 0), &v, &d);
    json_decref(st);
    ck_assert_msg(v == vol && d == disk, "/state: volume %g, disk %g", v, d);
    st = api_get_json(agent.port, "/state");
    eng_disk_of(st, &v, &d);
    json_decref(st);
    ck_assert_msg(v == vol && d == disk, "agent /state: volume %g, disk %g", v,
                  d);
}

/* Read fw's events until the status of operation op_id, declining offers
 * meanwhile; assert its state is want and acknowledge it. */
static void wait_operation(struct conn *fw, const char *op_id, const char *want)
{
    int64_t deadline = e2e_now_ms() + 20000;
    while (e2e_now_ms() < deadline) {
        json_t *ev = api_next_event(fw, (int)(deadline - e2e_now_ms()));
        if (ev == NULL)
            break;
        const char *type = json_string_value(json_object_get(ev, "type"));
        if (type != NULL && strcmp(type, "OFFERS") == 0)
            decline_all(fw, ev);
        if (type == NULL || strcmp(type, "UPDATE_OPERATION_STATUS") != 0) {
            json_decref(ev);
            continue;
        }
        json_t *st = json_object_get(
            json_object_get(ev, "update_operation_status"), "status");
        const char *id = json_string_value(
            json_object_get(json_object_get(st, "operation_id"), "value"));
        const char *state = json_string_value(json_object_get(st, "state"));
        ck_assert_str_eq(id, op_id);
        ck_assert_msg(strcmp(state, want) == 0, "%s: %s (%s)", op_id, state,
                      json_string_value(json_object_get(st, "message")));
        const char *uuid = json_string_value(
            json_object_get(json_object_get(st, "uuid"), "value"));
        ck_assert_ptr_nonnull(uuid);
        char *aid = json_dumps(json_object_get(st, "agent_id"), JSON_COMPACT);
        char payload[1024];
        snprintf(payload, sizeof(payload),
                 "{\"agent_id\":%s,\"operation_id\":{\"value\":\"%s\"},"
                 "\"uuid\":\"%s\"}",
                 aid, op_id, uuid);
        free(aid);
        ck_assert_int_eq(api_fw_call(fw, master.port,
                                     "ACKNOWLEDGE_OPERATION_STATUS",
                                     "acknowledge_operation_status", payload),
                         202);
        json_decref(ev);
        return;
    }
    ck_abort_msg("no status of operation %s", op_id);
}

START_TEST(test_volume_resize)
{
    ck_assert_int_eq(e2e_start_master(&master, MASTER_FLAGS), 0);
    ck_assert_int_eq(e2e_start_agent(&agent, master.port, AGENT_FLAGS), 0);
    ck_assert_msg(e2e_wait_agents(&master, 1, 20000) == 0,
                  "the agent did not register");
    json_t *a = master_agent();
    char agent_id[256];
    snprintf(agent_id, sizeof(agent_id), "%s",
             json_string_value(json_object_get(a, "id")));
    json_decref(a);
    /* disk 256 reserved to eng, db1 of 128 on it. */
    char reason[1024];
    ck_assert_msg(operator_form("/reserve", agent_id, "resources", RESERVE_JSON,
                                reason, sizeof(reason)) == 202,
                  "/reserve: %s", reason);
    ck_assert_msg(operator_form("/create-volumes", agent_id, "volumes",
                                VOLUME_JSON, reason, sizeof(reason)) == 202,
                  "/create-volumes: %s", reason);
    long long v2 = 2;
    ck_assert(e2e_poll_until(ckpt_version_reached, &v2, 10000));

    /* The framework grows db1 by 64 of eng's reserved disk. */
    struct conn fw;
    api_subscribe_framework(&fw, master.port, FRAMEWORK_INFO);
    char offer_id[256], aid[256];
    json_t *ev = wait_volume_offer(&fw, offer_id, aid);
    char *vol = json_dumps(offered_volume(ev), JSON_COMPACT);
    json_decref(ev);
    char payload[8192];
    snprintf(payload, sizeof(payload),
             "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{\"type\":"
             "\"GROW_VOLUME\",\"id\":{\"value\":\"grow-1\"},\"grow_volume\":{"
             "\"volume\":%s,\"addition\":{\"name\":\"disk\",\"type\":"
             "\"SCALAR\",\"scalar\":{\"value\":64}," RESERVATION
             ",\"allocation_info\":{\"role\":\"eng\"}}}}],"
             "\"filters\":{\"refuse_seconds\":0}}",
             offer_id, vol);
    free(vol);
    ck_assert_int_eq(api_fw_call(&fw, master.port, "ACCEPT", "accept", payload),
                     202);
    wait_operation(&fw, "grow-1", "OPERATION_FINISHED");
    long long v3 = 3;
    ck_assert(e2e_poll_until(ckpt_version_reached, &v3, 10000));
    assert_shown(192, 256);

    /* A task writes into the grown volume. */
    run_on_volume_of(&fw, 192, "writer", "echo resized > data/f");
    ck_assert(volume_file_exists("f"));

    /* The operator shrinks it by 96 (offers holding it are rescinded). */
    char call[4096];
    snprintf(call, sizeof(call),
             "{\"type\":\"SHRINK_VOLUME\",\"shrink_volume\":{\"agent_id\":{"
             "\"value\":\"%s\"},\"volume\":{\"name\":\"disk\",\"type\":"
             "\"SCALAR\",\"scalar\":{\"value\":192}," RESERVATION
             ",\"disk\":{\"persistence\":{\"id\":\"db1\",\"principal\":"
             "\"ops\"},\"volume\":{\"container_path\":\"data\",\"mode\":"
             "\"RW\"}}},\"subtract\":{\"value\":96}}}",
             agent_id);
    int status =
        api_post(master.port, "/api/v1", NULL, call, reason, sizeof(reason));
    ck_assert_msg(status == 202, "SHRINK_VOLUME: %d %s", status, reason);
    long long v4 = 4;
    ck_assert(e2e_poll_until(ckpt_version_reached, &v4, 10000));
    assert_shown(96, 256);
    ck_assert(volume_file_exists("f"));
    run_on_volume_of(&fw, 96, "reader", "test \"$(cat data/f)\" = resized");
    api_conn_close(&fw);

    /* The agent restarts, then the master: still 96, with the data. */
    a = master_agent();
    double before = json_number_value(json_object_get(a, "reregistered_time"));
    json_decref(a);
    ck_assert_int_eq(e2e_proc_stop(&agent, SIGTERM, 10000), 0);
    ck_assert_int_eq(e2e_restart_agent(&agent, master.port, AGENT_FLAGS), 0);
    ck_assert_msg(e2e_poll_until(reregistered_after, &before, 20000),
                  "the agent did not re-register");
    ck_assert_int_eq(e2e_proc_stop(&master, SIGTERM, 10000), 0);
    ck_assert_int_eq(e2e_restart_master(&master, MASTER_FLAGS), 0);
    ck_assert_msg(e2e_wait_agents(&master, 1, 20000) == 0,
                  "the agent did not come back");
    ck_assert_int_eq(agent_ckpt_version(), 4);
    assert_shown(96, 256);
    api_subscribe_framework(&fw, master.port, FRAMEWORK_INFO);
    ev = wait_volume_offer(&fw, offer_id, aid);
    ck_assert(json_number_value(json_object_get(
                  json_object_get(offered_volume(ev), "scalar"), "value")) ==
              96.0);
    ck_assert(offered_reserved(ev, "disk") == 160.0);
    api_decline(&fw, master.port, offer_id, 0);
    json_decref(ev);
    run_on_volume(&fw, "reader-again", "test \"$(cat data/f)\" = resized");
    api_conn_close(&fw);
}
END_TEST

static Suite *volumes_suite(void)
{
    Suite *s = suite_create("e2e_volumes");
    TCase *tc = tcase_create("volumes");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_volume_lifecycle);
    tcase_add_test(tc, test_volume_resize);
    suite_add_tcase(s, tc);
    return s;
}

E2E_CHECK_MAIN(volumes_suite)
