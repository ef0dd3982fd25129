/*
 * /state's entities written as text (master/state_write.c) are the bytes
 * the jansson models (state_models.h) dump: agents with attributes,
 * reservations and a persistent volume, frameworks with labels, roles and
 * offers, live tasks with labels and a command user, completed tasks, a
 * completed framework; and /state, written with them, shows what /slaves
 * and /frameworks show, filtered alike when ACLs hide tasks or frameworks.
 */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "common/auth.h"
#include "common/hmap.h"
#include "common/http_fake.h"
#include "common/json_out.h"
#include "master/frameworks.h"
#include "master/master.h"
#include "master/state_models.h"
#include "master/state_stream.h"
#include "master/state_write.h"
#include "master/tasks.h"
#include "master_fixture.h"

static struct mfx X;
static struct mfx_peer FW, FW2, FW3, AG, AG2;

static void teardown(void)
{
    struct mfx_peer *peers[] = {&FW, &FW2, &FW3, &AG, &AG2};
    mfx_teardown(&X, peers, sizeof(peers) / sizeof(peers[0]));
}

static void setup(void)
{
    const char *flags[] = {"--allocation_interval=50ms", NULL};
    mfx_start(&X, flags);
}

/* Launch one task (id) on fw's next offer, with extra TaskInfo members
 * (",\"labels\":..." or ""), using res of it; refuse the rest for
 * refuse seconds. */
static void launch(struct mfx_peer *fw, const char *id, const char *res,
                   const char *extra, int refuse)
{
    char oid[256];
    json_t *ev = mfx_first_offer(&X, fw, oid);
    json_t *of = json_array_get(
        json_object_get(json_object_get(ev, "offers"), "offers"), 0);
    const char *aid = json_string_value(
        json_object_get(json_object_get(of, "agent_id"), "value"));
    char payload[4096];
    snprintf(payload, sizeof(payload),
             "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{\"type\":"
             "\"LAUNCH\",\"launch\":{\"task_infos\":[{\"name\":\"n-%s\","
             "\"task_id\":{\"value\":\"%s\"},\"agent_id\":{\"value\":\"%s\"},"
             "\"resources\":%s%s}]}}],\"filters\":{\"refuse_seconds\":%d}}",
             oid, id, id, aid, res, extra, refuse);
    json_decref(ev);
    ck_assert_int_eq(mfx_framework_call(&X, fw, "ACCEPT", "accept", payload),
                     202);
}

#define SMALL                                                                  \
    "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":0.1}},{"    \
    "\"name\":\"mem\",\"type\":\"SCALAR\",\"scalar\":{\"value\":32.5}}]"

/* Two agents (one with a reservation and a volume on it, one with
 * attributes of both kinds and ports), three frameworks (one torn down:
 * completed), tasks live and completed, offers held. */
static void fill(void)
{
    mfx_agent_subscribe_attrs(
        &X, &AG, "host1", "cpus:4;mem:4096;disk:1000",
        "[{\"name\":\"rack\",\"type\":\"TEXT\",\"text\":{\"value\":\"r\\\"1\"}}"
        ","
        "{\"name\":\"zone\",\"type\":\"SCALAR\",\"scalar\":{\"value\":2.5}}]");
    char call[4096];
    snprintf(call, sizeof(call),
             "{\"type\":\"RESERVE_RESOURCES\",\"reserve_resources\":{"
             "\"agent_id\":{\"value\":\"%s\"},\"resources\":[{\"name\":"
             "\"disk\",\"type\":\"SCALAR\",\"scalar\":{\"value\":300},"
             "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"web\","
             "\"principal\":\"p1\"}]}]}}",
             AG.id);
    struct http_fake *f = mfx_operator(&X, call);
    ck_assert_int_eq(http_fake_status(f), 202);
    http_fake_free(f);
    snprintf(call, sizeof(call),
             "{\"type\":\"CREATE_VOLUMES\",\"create_volumes\":{"
             "\"agent_id\":{\"value\":\"%s\"},\"volumes\":[{\"name\":"
             "\"disk\",\"type\":\"SCALAR\",\"scalar\":{\"value\":100},"
             "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"web\","
             "\"principal\":\"p1\"}],\"disk\":{\"persistence\":{\"id\":"
             "\"v1\",\"principal\":\"p1\"},\"volume\":{\"container_path\":"
             "\"data\",\"mode\":\"RW\"}}}]}}",
             AG.id);
    f = mfx_operator(&X, call);
    ck_assert_int_eq(http_fake_status(f), 202);
    http_fake_free(f);

    mfx_framework_subscribe(
        &X, &FW,
        "{\"user\":\"alice\",\"name\":\"a\",\"roles\":[\"web\"],"
        "\"principal\":\"p1\",\"failover_timeout\":0.25,"
        "\"capabilities\":[{\"type\":\"MULTI_ROLE\"},{\"type\":"
        "\"RESERVATION_REFINEMENT\"}],\"labels\":{\"labels\":[{\"key\":"
        "\"team\",\"value\":\"\\u00e9\\n\"}]}}");
    launch(&FW, "t1", SMALL,
           ",\"labels\":{\"labels\":[{\"key\":\"k\",\"value\":\"v\"}]},"
           "\"command\":{\"value\":\"true\",\"user\":\"carol\"}",
           0);
    launch(&FW, "t2", SMALL, ",\"command\":{\"value\":\"true\"}", 0);
    launch(&FW, "t3", SMALL, ",\"command\":{\"value\":\"true\"}", 0);
    mfx_task_update(&X, &FW, &AG, "t2", "TASK_RUNNING", 0, true);
    mfx_task_update(&X, &FW, &AG, "t3", "TASK_FINISHED", 1, true);

    mfx_framework_subscribe(&X, &FW2,
                            "{\"user\":\"bob\",\"name\":\"b\",\"roles\":["
                            "\"batch\"],\"capabilities\":[{\"type\":"
                            "\"MULTI_ROLE\"}]}");
    /* The newcomer FW2 (no share yet) is offered AG2 first. */
    mfx_agent_subscribe_attrs(&X, &AG2, "host2", "cpus:2;mem:512",
                              "[{\"name\":\"ports\",\"type\":\"RANGES\","
                              "\"ranges\":{\"range\":[{\"begin\":1,\"end\":"
                              "9}]}},{\"name\":\"os\",\"type\":\"SET\","
                              "\"set\":{\"item\":[\"a\",\"b\"]}}]");
    /* FW2 holds its offers: /state lists them. */
    json_decref(mfx_next_event(&X, &FW2, "OFFERS"));

    mfx_framework_subscribe(&X, &FW3,
                            "{\"user\":\"dave\",\"name\":\"c\",\"role\":"
                            "\"c\"}");
    ck_assert_int_eq(mfx_framework_call(&X, &FW3, "TEARDOWN", NULL, NULL), 202);
    ck_assert_uint_eq(X.m->ncompleted, 1);
}

/* The compact text of j (taken). */
static char *dump(json_t *j)
{
    char *s = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    return s;
}

/* w's text as a string (w reset). */
static char *text_of(struct jout *w)
{
    char *s = malloc(w->len + 1);
    memcpy(s, w->buf, w->len);
    s[w->len] = '\0';
    jout_reset(w);
    return s;
}

static void same(char *want, char *got)
{
    ck_assert_str_eq(got, want);
    free(want);
    free(got);
}

/* The framework's model without labels' place checked apart: its fields
 * before "tasks", then the labels, as the model orders them. */
static void check_framework(struct jout *w, const struct framework *fw)
{
    jout_obj_begin(w);
    master_write_framework_fields(w, fw);
    master_write_framework_labels(w, fw);
    jout_obj_end(w);
    same(dump(master_state_framework_json(fw, false)), text_of(w));
}

START_TEST(test_entities_are_the_models_bytes)
{
    fill();
    struct jout w;
    jout_init(&w);
    size_t pos = 0, n = 0;
    void *val;
    while (hmap_next(X.m->agents, &pos, NULL, &val)) {
        jout_obj_begin(&w);
        master_write_agent_fields(&w, X.m, val);
        jout_obj_end(&w);
        same(dump(master_state_agent_json(X.m, val, NULL)), text_of(&w));
        n++;
    }
    ck_assert_uint_eq(n, 2);
    size_t tasks = 0, records = 0, offers = 0;
    const struct hmap *maps[] = {X.m->frameworks, X.m->completed};
    for (size_t k = 0; k < 2; k++) {
        pos = 0;
        while (hmap_next(maps[k], &pos, NULL, &val)) {
            const struct framework *fw = val;
            check_framework(&w, fw);
            size_t tp = 0;
            void *tv;
            while (hmap_next(fw->tasks, &tp, NULL, &tv)) {
                master_write_task(&w, tv);
                same(dump(master_state_task_json(tv)), text_of(&w));
                tasks++;
            }
            for (uint32_t i = 0; i < fw->ncompleted_tasks; i++) {
                const struct task_record *r = master_task_completed_at(fw, i);
                master_write_record(&w, fw, r);
                same(dump(master_state_record_json(fw, r)), text_of(&w));
                records++;
            }
            tp = 0;
            while (hmap_next(fw->offers, &tp, NULL, &tv)) {
                master_write_offer(&w, tv);
                same(dump(master_state_offer_json(tv)), text_of(&w));
                offers++;
            }
        }
    }
    ck_assert_uint_eq(tasks, 2);
    ck_assert_uint_eq(records, 1);
    ck_assert_uint_ge(offers, 1);
    jout_free(&w);
}
END_TEST

static json_t *get_json(const char *target)
{
    struct http_fake *f = mfx_http(&X, HTTP_GET, target, NULL, NULL);
    ck_assert_int_eq(http_fake_status(f), 200);
    json_error_t err;
    json_t *j = json_loads(mfx_body(f), 0, &err);
    ck_assert_msg(j != NULL, "not JSON: %s", err.text);
    http_fake_free(f);
    return j;
}

/* /state's lists against /slaves' and /frameworks' (the models, filtered
 * whole by authz.c for the same reader). */
static void check_state_against_models(void)
{
    json_t *st = get_json("/state");
    json_t *slaves = get_json("/slaves");
    json_t *fws = get_json("/frameworks");
    ck_assert(json_equal(json_object_get(st, "slaves"),
                         json_object_get(slaves, "slaves")));
    ck_assert(json_equal(json_object_get(st, "frameworks"),
                         json_object_get(fws, "frameworks")));
    ck_assert(json_equal(json_object_get(st, "completed_frameworks"),
                         json_object_get(fws, "completed_frameworks")));
    json_decref(st);
    json_decref(slaves);
    json_decref(fws);
}

START_TEST(test_state_is_the_models_document)
{
    fill();
    check_state_against_models();
    /* And slice by slice, one entity each. */
    master_state_stream_tune(X.m, 0, 0, 0);
    check_state_against_models();
}
END_TEST

/* summary's element e (an agent or a framework, borrowed) without the
 * members /state-summary adds, as compact text. */
static char *summary_base(json_t *e, const char *ids_key)
{
    json_t *c = json_deep_copy(e);
    static const char *const added[] = {
        "TASK_STAGING",  "TASK_STARTING",   "TASK_RUNNING", "TASK_KILLING",
        "TASK_FINISHED", "TASK_KILLED",     "TASK_FAILED",  "TASK_LOST",
        "TASK_ERROR",    "TASK_UNREACHABLE"};
    for (size_t i = 0; i < sizeof(added) / sizeof(added[0]); i++)
        ck_assert_int_eq(json_object_del(c, added[i]), 0);
    ck_assert_int_eq(json_object_del(c, ids_key), 0);
    return dump(c);
}

/* model (an agent's or a framework's, taken) without the members
 * /state-summary leaves out (omits), as Mesos's does. */
static json_t *summary_model(json_t *model, bool (*omits)(const char *))
{
    const char *k;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(model, tmp, k, v)
    {
        if (omits(k))
            json_object_del(model, k);
    }
    return model;
}

/* /state-summary, written as text: each agent and framework is the model's
 * bytes, but the members Mesos's /state-summary does not have, followed by
 * its counts and the ids it shares tasks with; what the reader may not see
 * is left out. */
static void check_summary(size_t nfw)
{
    struct http_fake *f = mfx_http(&X, HTTP_GET, "/state-summary", NULL, NULL);
    ck_assert_int_eq(http_fake_status(f), 200);
    json_t *sum = json_loads(mfx_body(f), JSON_PRESERVE_ORDER, NULL);
    http_fake_free(f);
    ck_assert_ptr_nonnull(sum);
    ck_assert_str_eq(json_string_value(json_object_get(sum, "hostname")),
                     X.m->flags->hostname);
    size_t i;
    json_t *e;
    json_t *slaves = json_object_get(sum, "slaves");
    ck_assert_uint_eq(json_array_size(slaves), 2);
    json_array_foreach(slaves, i, e)
    {
        const char *id = json_string_value(json_object_get(e, "id"));
        const struct agent *ag = hmap_get(X.m->agents, id);
        ck_assert_ptr_nonnull(ag);
        same(dump(summary_model(master_state_agent_json(X.m, ag, NULL),
                                master_summary_omits_agent_key)),
             summary_base(e, "framework_ids"));
        /* Mesos's SlaveWriter has no *_full lists. */
        ck_assert_ptr_null(json_object_get(e, "resources_full"));
        ck_assert_ptr_nonnull(json_object_get(e, "unreserved_resources"));
        bool host1 = ag == hmap_get(X.m->agents, AG.id);
        ck_assert_int_eq(json_integer_value(json_object_get(e, "TASK_RUNNING")),
                         host1);
        ck_assert_int_eq(
            json_integer_value(json_object_get(e, "TASK_FINISHED")), host1);
        ck_assert_uint_eq(json_array_size(json_object_get(e, "framework_ids")),
                          host1);
    }
    json_t *fws = json_object_get(sum, "frameworks");
    ck_assert_uint_eq(json_array_size(fws), nfw);
    json_array_foreach(fws, i, e)
    {
        const char *id = json_string_value(json_object_get(e, "id"));
        const struct framework *fw = hmap_get(X.m->frameworks, id);
        ck_assert_ptr_nonnull(fw);
        same(dump(summary_model(master_state_framework_json(fw, false),
                                master_summary_omits_framework_key)),
             summary_base(e, "slave_ids"));
        /* Mesos's Summary<Framework>: no user, roles or labels. */
        ck_assert_ptr_null(json_object_get(e, "user"));
        ck_assert_ptr_nonnull(json_object_get(e, "used_resources"));
        bool a = strcmp(id, FW.id) == 0;
        ck_assert_int_eq(json_integer_value(json_object_get(e, "TASK_STAGING")),
                         a);
        ck_assert_uint_eq(json_array_size(json_object_get(e, "slave_ids")), a);
    }
    json_decref(sum);
}

START_TEST(test_summary_is_the_models_text)
{
    fill();
    check_summary(2);
    struct http_fake *f =
        mfx_http(&X, HTTP_GET, "/state-summary?jsonp=cb", NULL, NULL);
    ck_assert_str_eq(http_fake_content_type(f), "text/javascript");
    const char *start = "cb({\"hostname\":";
    ck_assert(strncmp(mfx_body(f), start, strlen(start)) == 0);
    http_fake_free(f);
    f = mfx_http(&X, HTTP_GET, "/state-summary?jsonp=a(", NULL, NULL);
    ck_assert_int_eq(http_fake_status(f), 400);
    http_fake_free(f);
}
END_TEST

/* ---- With ACLs ------------------------------------------------------------
 */

static char creds_path[64];

/* eve: sees frameworks of alice and dave, not bob's; tasks of alice only
 * (not carol's, t1's command user); no flags. ops: everything. */
static const char ACLS[] =
    "--acls={\"view_frameworks\": [{\"principals\": {\"values\": [\"ops\"]},"
    " \"users\": {\"type\": \"ANY\"}}, {\"principals\": {\"values\": "
    "[\"eve\"]}, \"users\": {\"values\": [\"alice\", \"dave\"]}}, "
    "{\"principals\": {\"type\": \"ANY\"}, \"users\": {\"type\": \"NONE\"}}],"
    " \"view_tasks\": [{\"principals\": {\"values\": [\"ops\"]}, \"users\": "
    "{\"type\": \"ANY\"}}, {\"principals\": {\"values\": [\"eve\"]}, "
    "\"users\": {\"values\": [\"alice\"]}}, {\"principals\": {\"type\": "
    "\"ANY\"}, \"users\": {\"type\": \"NONE\"}}], \"view_flags\": "
    "[{\"principals\": {\"values\": [\"ops\"]}, \"flags\": {\"type\": "
    "\"ANY\"}}, {\"principals\": {\"type\": \"ANY\"}, \"flags\": "
    "{\"type\": \"NONE\"}}]}";

static void acl_setup(void)
{
    snprintf(creds_path, sizeof(creds_path), "/tmp/offerd-creds-XXXXXX");
    int fd = mkstemp(creds_path);
    ck_assert_int_ge(fd, 0);
    const char text[] = "eve se\nops so\n";
    ck_assert_int_eq(write(fd, text, sizeof(text) - 1),
                     (ssize_t)(sizeof(text) - 1));
    close(fd);
    char creds_flag[96];
    snprintf(creds_flag, sizeof(creds_flag), "--credentials=%s", creds_path);
    const char *flags[] = {creds_flag, ACLS, "--allocation_interval=50ms",
                           NULL};
    mfx_start(&X, flags);
}

static void acl_teardown(void)
{
    teardown();
    unlink(creds_path);
}

/* The ids of the elements of arr (a JSON array of objects), joined. */
static void ids_of(json_t *arr, char *out, size_t len)
{
    size_t used = 0, i;
    json_t *e;
    out[0] = '\0';
    json_array_foreach(arr, i, e) used +=
        (size_t)snprintf(out + used, len - used, "%s%s", i ? "," : "",
                         json_string_value(json_object_get(e, "id")));
}

START_TEST(test_state_filtered_as_the_models)
{
    fill();
    mfx_set_principal(&X, "eve", "se");
    check_state_against_models();
    json_t *st = get_json("/state");
    json_t *fws = json_object_get(st, "frameworks");
    ck_assert_uint_eq(json_array_size(fws), 1); /* not bob's */
    json_t *fw = json_array_get(fws, 0);
    char ids[256];
    ids_of(json_object_get(fw, "tasks"), ids, sizeof(ids));
    ck_assert_str_eq(ids, "t2"); /* not carol's t1 */
    ids_of(json_object_get(fw, "completed_tasks"), ids, sizeof(ids));
    ck_assert_str_eq(ids, "t3");
    ck_assert_uint_eq(
        json_array_size(json_object_get(st, "completed_frameworks")), 1);
    ck_assert_ptr_null(json_object_get(st, "flags"));
    json_decref(st);
    check_summary(1); /* not bob's */

    mfx_set_principal(&X, "ops", "so");
    master_state_stream_tune(X.m, 0, 0, 0);
    check_state_against_models();
    st = get_json("/state");
    ck_assert_uint_eq(json_array_size(json_object_get(st, "frameworks")), 2);
    ck_assert_ptr_nonnull(json_object_get(st, "flags"));
    json_decref(st);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("master_state_write");
    TCase *tc = tcase_create("entities");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_entities_are_the_models_bytes);
    tcase_add_test(tc, test_state_is_the_models_document);
    tcase_add_test(tc, test_summary_is_the_models_text);
    suite_add_tcase(s, tc);
    tc = tcase_create("views");
    tcase_add_checked_fixture(tc, acl_setup, acl_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_state_filtered_as_the_models);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(suite)
