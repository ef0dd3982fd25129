/*
 * The master's side of a framework's allocation options, driven through
 * SUBSCRIBE and UPDATE_FRAMEWORK (master_fixture.h): suppressed_roles,
 * FrameworkInfo.offer_filters (min_allocatable_resources) and
 * offer_constraints. Each case checks the reply, the offers (or their
 * absence after an allocation cycle ran) and, for refusals, that nothing
 * changed.
 */
#include <check.h>
#include <string.h>

#include "allocator/alloc.h"
#include "check_main.h"
#include "common/flags.h"
#include "common/hmap.h"
#include "master/frameworks.h"
#include "master/scheduler_api.h"
#include "master_fixture.h"

#define INFO_WEB                                                               \
    "{\"user\":\"u\",\"name\":\"fw\",\"roles\":[\"web\"],"                     \
    "\"capabilities\":[{\"type\":\"MULTI_ROLE\"}]}"
#define INFO_WEB_BATCH                                                         \
    "{\"user\":\"u\",\"name\":\"fw\",\"roles\":[\"web\",\"batch\"],"           \
    "\"capabilities\":[{\"type\":\"MULTI_ROLE\"}]}"

MFX_STANDARD_FIXTURE

static uint64_t cycles(void)
{
    struct alloc_stats st;
    alloc_get_stats(X.m->alloc, &st);
    return st.cycles;
}

/* Settle and check that an allocation cycle ran since `before`. */
static void cycle_ran(uint64_t before)
{
    mfx_settle(&X);
    ck_assert_uint_gt(cycles(), before);
}

/* The role and agent id of the first offer of an OFFERS event. */
static const char *offer_field(json_t *ev, const char *what)
{
    json_t *o = json_array_get(
        json_object_get(json_object_get(ev, "offers"), "offers"), 0);
    if (strcmp(what, "agent") == 0)
        return json_string_value(
            json_object_get(json_object_get(o, "agent_id"), "value"));
    return json_string_value(
        json_object_get(json_object_get(o, "allocation_info"), "role"));
}

static struct framework *fw_state(void)
{
    return master_framework_find(X.m, FW.id);
}

/* SUBSCRIBE as JSON; returns the exchange (for refusals). */
static struct http_fake *subscribe_raw(const char *subscribe_json)
{
    char json[4096];
    snprintf(json, sizeof(json), "{\"type\":\"SUBSCRIBE\",\"subscribe\":%s}",
             subscribe_json);
    return mfx_post(&X, master_scheduler_api, NULL, json);
}

/* UPDATE_FRAMEWORK of FW with info (its id filled in) and extra fields
 * (",\"suppressed_roles\":[...]" or ""). Returns the exchange. */
static struct http_fake *update(const char *info_without_id, const char *extra)
{
    char info[2048];
    /* Insert the id after the opening brace of the info. */
    snprintf(info, sizeof(info), "{\"id\":{\"value\":\"%s\"},%s", FW.id,
             info_without_id + 1);
    char payload[4096];
    snprintf(payload, sizeof(payload), "{\"framework_info\":%s%s}", info,
             extra);
    char json[8192];
    snprintf(json, sizeof(json),
             "{\"framework_id\":{\"value\":\"%s\"},\"type\":\"UPDATE_"
             "FRAMEWORK\",\"update_framework\":%s}",
             FW.id, payload);
    return mfx_post(&X, master_scheduler_api, FW.stream_id, json);
}

static int update_status(const char *info, const char *extra)
{
    struct http_fake *f = update(info, extra);
    int st = http_fake_status(f);
    http_fake_free(f);
    return st;
}

/* ---- suppressed_roles ---------------------------------------------------- */

/* A framework that subscribes with its role suppressed gets no offers for
 * it until it revives (Mesos: a SUBSCRIBE's suppressed_roles). */
START_TEST(test_subscribe_suppressed_role)
{
    mfx_framework_subscribe_call(&X, &FW,
                                 "{\"framework_info\":" INFO_WEB
                                 ",\"suppressed_roles\":[\"web\"]}");
    ck_assert(
        alloc_framework_is_suppressed(X.m->alloc, fw_state()->alloc, "web"));
    uint64_t before = cycles();
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    cycle_ran(before);
    ck_assert(!mfx_has_event(&FW, "OFFERS"));

    ck_assert_int_eq(mfx_framework_call(&X, &FW, "REVIVE", "revive",
                                        "{\"roles\":[\"web\"]}"),
                     202);
    json_t *ev = mfx_next_event(&X, &FW, "OFFERS");
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(offer_field(ev, "role"), "web");
    json_decref(ev);
}
END_TEST

/* Only the listed roles are suppressed: the other role is offered. */
START_TEST(test_subscribe_suppressed_one_of_two_roles)
{
    mfx_framework_subscribe_call(&X, &FW,
                                 "{\"framework_info\":" INFO_WEB_BATCH
                                 ",\"suppressed_roles\":[\"web\"]}");
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    json_t *ev = mfx_next_event(&X, &FW, "OFFERS");
    ck_assert_ptr_nonnull(ev);
    /* "batch" sorts before "web" anyway; the second agent shows "web" is
     * still suppressed: it too goes to "batch". */
    ck_assert_str_eq(offer_field(ev, "role"), "batch");
    json_decref(ev);
    mfx_agent_subscribe(&X, &AG2, "host2", "cpus:2;mem:1024");
    ev = mfx_next_event(&X, &FW, "OFFERS");
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(offer_field(ev, "role"), "batch");
    json_decref(ev);
}
END_TEST

/* A suppressed role the framework does not subscribe to: 400, and no
 * framework is created. */
START_TEST(test_subscribe_suppressed_role_not_subscribed)
{
    struct http_fake *f = subscribe_raw("{\"framework_info\":" INFO_WEB
                                        ",\"suppressed_roles\":[\"db\"]}");
    ck_assert_int_eq(http_fake_status(f), 400);
    ck_assert_str_eq(mfx_body(f),
                     "subscribe.suppressed_roles: role 'db' is not contained "
                     "in the set of roles\n");
    http_fake_free(f);
    ck_assert_uint_eq(hmap_count(X.m->frameworks), 0);
}
END_TEST

/* UPDATE_FRAMEWORK sets the suppressed roles exactly: listed ones are
 * suppressed, ones no longer listed are revived (Mesos's
 * UpdateFrameworkTest.AddSuppressedRole, and back). */
START_TEST(test_update_framework_suppressed_roles)
{
    mfx_framework_subscribe(&X, &FW, INFO_WEB);
    ck_assert_int_eq(update_status(INFO_WEB, ",\"suppressed_roles\":[\"web\"]"),
                     200);
    ck_assert(
        alloc_framework_is_suppressed(X.m->alloc, fw_state()->alloc, "web"));
    uint64_t before = cycles();
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    cycle_ran(before);
    ck_assert(!mfx_has_event(&FW, "OFFERS"));

    /* A bad list is refused and changes nothing. */
    struct http_fake *f = update(INFO_WEB, ",\"suppressed_roles\":[\"x\"]");
    ck_assert_int_eq(http_fake_status(f), 400);
    ck_assert_ptr_nonnull(strstr(mfx_body(f), "update_framework."));
    http_fake_free(f);
    ck_assert(
        alloc_framework_is_suppressed(X.m->alloc, fw_state()->alloc, "web"));

    ck_assert_int_eq(update_status(INFO_WEB, ""), 200);
    json_t *ev = mfx_next_event(&X, &FW, "OFFERS");
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
}
END_TEST

/* ---- offer_filters.min_allocatable_resources ----------------------------- */

#define INFO_WEB_MIN                                                           \
    "{\"user\":\"u\",\"name\":\"fw\",\"roles\":[\"web\"],"                     \
    "\"capabilities\":[{\"type\":\"MULTI_ROLE\"}],\"offer_filters\":{"         \
    "\"web\":{\"min_allocatable_resources\":{\"quantities\":[{"                \
    "\"quantities\":{\"cpus\":{\"value\":0.001}}}]}}}}"

/* Mesos's MasterAllocatorTest.MinAllocatableResources in small: an agent
 * below the master's --min_allocatable_resources is offered to the
 * framework only once its own offer_filters allow it. */
START_TEST(test_framework_min_allocatable_resources)
{
    mfx_framework_subscribe(&X, &FW, INFO_WEB);
    uint64_t before = cycles();
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:0.005;mem:16");
    cycle_ran(before);
    ck_assert(!mfx_has_event(&FW, "OFFERS"));

    ck_assert_int_eq(update_status(INFO_WEB_MIN, ""), 200);
    json_t *ev = mfx_next_event(&X, &FW, "OFFERS");
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
}
END_TEST

/* A negative quantity is a 400 naming the field; nothing is created. */
START_TEST(test_framework_min_allocatable_invalid)
{
    struct http_fake *f = subscribe_raw(
        "{\"framework_info\":{\"user\":\"u\",\"name\":\"fw\",\"roles\":["
        "\"web\"],\"capabilities\":[{\"type\":\"MULTI_ROLE\"}],"
        "\"offer_filters\":{\"web\":{\"min_allocatable_resources\":{"
        "\"quantities\":[{\"quantities\":{\"cpus\":{\"value\":-1}}}]}}}}}");
    ck_assert_int_eq(http_fake_status(f), 400);
    ck_assert_str_eq(mfx_body(f),
                     "subscribe.framework_info.offer_filters[\"web\"]: "
                     "quantity of 'cpus' must be a non-negative number\n");
    http_fake_free(f);
    ck_assert_uint_eq(hmap_count(X.m->frameworks), 0);
}
END_TEST

/* ---- offer_constraints --------------------------------------------------- */

#define RACK(v)                                                                \
    "[{\"name\":\"rack\",\"type\":\"TEXT\",\"text\":{\"value\":\"" v "\"}}]"

static const char *constraint_sub(const char *predicate)
{
    static char buf[1024];
    snprintf(buf, sizeof(buf),
             "{\"framework_info\":" INFO_WEB
             ",\"offer_constraints\":{\"role_constraints\":{\"web\":{"
             "\"groups\":[{\"attribute_constraints\":[{\"selector\":{"
             "\"attribute_name\":\"rack\"},\"predicate\":%s}]}]}}}}",
             predicate);
    return buf;
}

/* Agents whose attributes fail the role's constraints are never offered to
 * the framework (Mesos's UpdateFrameworkTest.OfferConstraints, at
 * SUBSCRIBE). */
START_TEST(test_offer_constraints_exclude_agent)
{
    mfx_framework_subscribe_call(
        &X, &FW, constraint_sub("{\"text_matches\":{\"regex\":\"r[b-c]\"}}"));
    mfx_agent_subscribe_attrs(&X, &AG, "host1", "cpus:2;mem:1024", RACK("ra"));
    mfx_agent_subscribe_attrs(&X, &AG2, "host2", "cpus:2;mem:1024", RACK("rb"));
    json_t *ev = mfx_next_event(&X, &FW, "OFFERS");
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(offer_field(ev, "agent"), AG2.id);
    json_decref(ev);
    uint64_t before = cycles();
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "REVIVE", NULL, NULL), 202);
    cycle_ran(before);
    /* Everything offered went to host2. */
    while ((ev = mfx_has_event(&FW, "OFFERS")
                     ? mfx_next_event(&X, &FW, "OFFERS")
                     : NULL) != NULL) {
        ck_assert_str_eq(offer_field(ev, "agent"), AG2.id);
        json_decref(ev);
    }

    /* UPDATE_FRAMEWORK without constraints: host1 is offered. */
    ck_assert_int_eq(update_status(INFO_WEB, ""), 200);
    ev = mfx_next_event(&X, &FW, "OFFERS");
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(offer_field(ev, "agent"), AG.id);
    json_decref(ev);
}
END_TEST

/* Invalid constraints refuse the SUBSCRIBE with the reason; no framework
 * is created. */
START_TEST(test_offer_constraints_invalid)
{
    static const struct {
        const char *sub;
        const char *want; /* in the reason */
    } cases[] = {
        {NULL, "bad regex"},
        {"{\"framework_info\":" INFO_WEB ",\"offer_constraints\":{"
         "\"role_constraints\":{\"db\":{\"groups\":[{\"attribute_constraints\""
         ":[{\"selector\":{\"attribute_name\":\"x\"},\"predicate\":{"
         "\"exists\":{}}}]}]}}}}",
         "role_constraints for role 'db' not contained in the set of roles"},
        {"{\"framework_info\":" INFO_WEB ",\"offer_constraints\":{"
         "\"role_constraints\":{\"web\":{\"groups\":[]}}}}",
         "role 'web' has no groups"},
        {"{\"framework_info\":" INFO_WEB ",\"offer_constraints\":{"
         "\"role_constraints\":{\"web\":{\"groups\":[{}]}}}}",
         "an empty group"},
        {"{\"framework_info\":" INFO_WEB ",\"offer_constraints\":{"
         "\"role_constraints\":{\"web\":{\"groups\":[{\"attribute_constraints\""
         ":[{\"selector\":{\"pseudoattribute_type\":\"UNKNOWN\"},"
         "\"predicate\":{\"exists\":{}}}]}]}}}}",
         "unknown pseudoattribute type"},
        {"{\"framework_info\":" INFO_WEB ",\"offer_constraints\":{"
         "\"role_constraints\":{\"web\":{\"groups\":[{\"attribute_constraints\""
         ":[{\"selector\":{\"attribute_name\":\"x\"},\"predicate\":{}}]}]}}}}",
         "unknown predicate type"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *sub =
            cases[i].sub != NULL
                ? cases[i].sub
                : constraint_sub("{\"text_matches\":{\"regex\":\"(\"}}");
        struct http_fake *f = subscribe_raw(sub);
        ck_assert_int_eq(http_fake_status(f), 400);
        ck_assert_msg(strstr(mfx_body(f), cases[i].want) != NULL &&
                          strncmp(mfx_body(f), "subscribe.", 10) == 0,
                      "case %zu: %s", i, mfx_body(f));
        http_fake_free(f);
    }
    ck_assert_uint_eq(hmap_count(X.m->frameworks), 0);
}
END_TEST

/* ---- --role_sorter, --framework_sorter ------------------------------------
 */

START_TEST(test_sorter_flags_refused)
{
    const char *bad[] = {"--role_sorter=fair", "--framework_sorter=DRF"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct master_flags mf;
        master_flags_init(&mf);
        char *argv[] = {"offerd", (char *)bad[i], NULL};
        char *env[] = {NULL};
        char err[256] = "";
        ck_assert_int_eq(
            master_flags_parse(&mf, 2, argv, env, err, sizeof(err)),
            FLAGS_ERROR);
        ck_assert_msg(strstr(err, "unknown sorter") != NULL &&
                          strstr(err, "expected drf or random") != NULL,
                      "%s", err);
        master_flags_fini(&mf);
    }
    ck_assert_str_eq(X.flags.role_sorter, "drf");
    ck_assert_str_eq(X.flags.framework_sorter, "drf");
}
END_TEST

/* The flags are taken, and offers flow under random sorters. */
START_TEST(test_random_sorters_offer)
{
    mfx_stop(&X);
    const char *flags[] = {"--role_sorter=random", "--framework_sorter=random",
                           NULL};
    mfx_start(&X, flags);
    ck_assert_str_eq(X.flags.role_sorter, "random");
    ck_assert_str_eq(X.flags.framework_sorter, "random");
    mfx_framework_subscribe(&X, &FW, INFO_WEB_BATCH);
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    json_t *ev = mfx_next_event(&X, &FW, "OFFERS");
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
}
END_TEST

static Suite *offer_filters_suite(void)
{
    Suite *s = suite_create("master_offer_filters");
    TCase *tc = tcase_create("calls");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_subscribe_suppressed_role);
    tcase_add_test(tc, test_subscribe_suppressed_one_of_two_roles);
    tcase_add_test(tc, test_subscribe_suppressed_role_not_subscribed);
    tcase_add_test(tc, test_update_framework_suppressed_roles);
    tcase_add_test(tc, test_framework_min_allocatable_resources);
    tcase_add_test(tc, test_framework_min_allocatable_invalid);
    tcase_add_test(tc, test_offer_constraints_exclude_agent);
    tcase_add_test(tc, test_offer_constraints_invalid);
    tcase_add_test(tc, test_sorter_flags_refused);
    tcase_add_test(tc, test_random_sorters_offer);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(offer_filters_suite)
