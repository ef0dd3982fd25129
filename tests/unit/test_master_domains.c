/*
 * Fault domains in the master (master/domains.c, --domain): which agents
 * may register (Mesos's rules, docs/fault-domains.md), which frameworks are
 * offered agents of another region (REGION_AWARE only), and the domains in
 * /state and GET_AGENTS. Refusals are checked for their status, reason and
 * the unchanged state.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "allocator/alloc.h"
#include "check_main.h"
#include "common/hmap.h"
#include "master/agents.h"
#include "master_fixture.h"

#define DOMAIN_EU                                                              \
    "{\"fault_domain\":{\"region\":{\"name\":\"eu\"},\"zone\":{\"name\":\"eu-" \
    "a\"}}}"
#define DOMAIN_US                                                              \
    "{\"fault_domain\":{\"region\":{\"name\":\"us\"},\"zone\":{\"name\":\"us-" \
    "b\"}}}"
#define INFO_PLAIN                                                             \
    "{\"user\":\"u\",\"name\":\"plain\",\"roles\":[\"r\"],\"capabilities\":[{" \
    "\"type\":\"MULTI_ROLE\"}]}"
#define INFO_AWARE                                                             \
    "{\"user\":\"u\",\"name\":\"aware\",\"roles\":[\"r\"],\"capabilities\":["  \
    "{\"type\":\"MULTI_ROLE\"},{\"type\":\"REGION_AWARE\"}]}"

MFX_STANDARD_FIXTURE

static void setup_domain(void)
{
    const char *flags[] = {"--domain=" DOMAIN_EU, NULL};
    mfx_start(&X, flags);
}

/* An agent SUBSCRIBE whose AgentInfo carries domain_json (NULL: none). */
static struct http_fake *agent_subscribe_raw(const char *host,
                                             const char *domain_json)
{
    char json[2048];
    snprintf(json, sizeof(json),
             "{\"type\":\"SUBSCRIBE\",\"subscribe\":{\"agent_info\":{"
             "\"hostname\":\"%s\",\"port\":5051,\"resources\":[{\"name\":"
             "\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":2}}]%s%s},"
             "\"version\":\"test\",\"address\":{\"ip\":\"127.0.0.2\","
             "\"port\":5051}}}",
             host, domain_json != NULL ? ",\"domain\":" : "",
             domain_json != NULL ? domain_json : "");
    return mfx_post(&X, master_agent_api, NULL, json);
}

/* Subscribe ag with a domain: the fixture's attributes argument is
 * spliced into the AgentInfo after "attributes":, so an empty list and
 * the domain field go there. */
static void agent_subscribe_domain(struct mfx_peer *ag, const char *host,
                                   const char *domain_json)
{
    char extra[512];
    snprintf(extra, sizeof(extra), "[],\"domain\":%s", domain_json);
    mfx_agent_subscribe_attrs(&X, ag, host, "cpus:2;mem:1024", extra);
}

static uint64_t cycles(void)
{
    struct alloc_stats st;
    alloc_get_stats(X.m->alloc, &st);
    return st.cycles;
}

/* Settle until an allocation cycle ran after `before`. */
static bool cycle_after(void *arg)
{
    return cycles() > *(uint64_t *)arg;
}

static void cycle_ran(uint64_t before)
{
    ck_assert(mfx_run_until(&X, cycle_after, &before));
    mfx_settle(&X);
}

static const char *offer_agent(json_t *ev)
{
    json_t *o = json_array_get(
        json_object_get(json_object_get(ev, "offers"), "offers"), 0);
    return json_string_value(
        json_object_get(json_object_get(o, "agent_id"), "value"));
}

static const char *region_of(json_t *o)
{
    return json_string_value(json_object_get(
        json_object_get(
            json_object_get(json_object_get(o, "domain"), "fault_domain"),
            "region"),
        "name"));
}

/* ---- Admission ----------------------------------------------------------- */

/* Mesos: a master without a domain refuses an agent with one (it cannot
 * tell whether the agent is remote). Nothing is recorded. */
START_TEST(test_agent_domain_refused_without_master_domain)
{
    struct http_fake *f = agent_subscribe_raw("host1", DOMAIN_US);
    ck_assert_int_eq(http_fake_status(f), 403);
    ck_assert_ptr_nonnull(strstr(mfx_body(f), "has a domain (region 'us')"));
    ck_assert_ptr_nonnull(strstr(mfx_body(f), "this master has none"));
    http_fake_free(f);
    ck_assert_uint_eq(hmap_count(X.m->agents), 0);
    struct alloc_stats st;
    alloc_get_stats(X.m->alloc, &st);
    ck_assert_uint_eq(st.agents, 0);
    /* Without a domain the same agent registers. */
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    ck_assert_uint_eq(hmap_count(X.m->agents), 1);
}
END_TEST

/* A fault domain with an empty region or zone name is bad input: 400. */
START_TEST(test_agent_domain_empty_names_refused)
{
    struct http_fake *f = agent_subscribe_raw(
        "host1", "{\"fault_domain\":{\"region\":{\"name\":\"\"},"
                 "\"zone\":{\"name\":\"z\"}}}");
    ck_assert_int_eq(http_fake_status(f), 400);
    ck_assert_ptr_nonnull(
        strstr(mfx_body(f), "subscribe.agent_info.domain.fault_domain"));
    http_fake_free(f);
    ck_assert_uint_eq(hmap_count(X.m->agents), 0);
}
END_TEST

/* ---- Offers ----------------------------------------------------------------
 */

/* An agent of another region is offered only to REGION_AWARE frameworks;
 * an agent of the master's region, or without a domain, to any. */
START_TEST(test_remote_agent_only_to_region_aware)
{
    mfx_framework_subscribe(&X, &FW, INFO_PLAIN);
    uint64_t before = cycles();
    agent_subscribe_domain(&AG, "remote1", DOMAIN_US);
    cycle_ran(before);
    ck_assert(!mfx_has_event(&FW, "OFFERS"));

    mfx_framework_subscribe(&X, &FW2, INFO_AWARE);
    json_t *ev = mfx_next_event(&X, &FW2, "OFFERS");
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(offer_agent(ev), AG.id);
    json_decref(ev);

    agent_subscribe_domain(&AG2, "local1", DOMAIN_EU);
    ev = mfx_next_event(&X, &FW, "OFFERS");
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(offer_agent(ev), AG2.id);
    json_decref(ev);
}
END_TEST

/* An agent without a domain is local to a master with one. */
START_TEST(test_agent_without_domain_is_local)
{
    mfx_framework_subscribe(&X, &FW, INFO_PLAIN);
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    json_t *ev = mfx_next_event(&X, &FW, "OFFERS");
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(offer_agent(ev), AG.id);
    json_decref(ev);
}
END_TEST

/* ---- Reads -----------------------------------------------------------------
 */

/* /state: the master's "domain" and each agent's; GET_AGENTS: the agent's
 * AgentInfo.domain; GET_MASTER: MasterInfo.domain. */
START_TEST(test_domains_in_state_and_get_agents)
{
    agent_subscribe_domain(&AG, "remote1", DOMAIN_US);
    struct http_fake *f = mfx_http(&X, HTTP_GET, "/state", NULL, NULL);
    ck_assert_int_eq(http_fake_status(f), 200);
    json_t *st = json_loads(mfx_body(f), 0, NULL);
    http_fake_free(f);
    ck_assert_ptr_nonnull(st);
    ck_assert_str_eq(region_of(st), "eu");
    json_t *ag = json_array_get(json_object_get(st, "slaves"), 0);
    ck_assert_str_eq(region_of(ag), "us");
    ck_assert_str_eq(
        json_string_value(json_object_get(
            json_object_get(
                json_object_get(json_object_get(ag, "domain"), "fault_domain"),
                "zone"),
            "name")),
        "us-b");
    json_decref(st);

    f = mfx_operator(&X, "{\"type\":\"GET_AGENTS\"}");
    ck_assert_int_eq(http_fake_status(f), 200);
    json_t *r = json_loads(mfx_body(f), 0, NULL);
    http_fake_free(f);
    json_t *info = json_object_get(
        json_array_get(
            json_object_get(json_object_get(r, "get_agents"), "agents"), 0),
        "agent_info");
    ck_assert_str_eq(region_of(info), "us");
    json_decref(r);

    f = mfx_operator(&X, "{\"type\":\"GET_MASTER\"}");
    ck_assert_int_eq(http_fake_status(f), 200);
    r = json_loads(mfx_body(f), 0, NULL);
    http_fake_free(f);
    ck_assert_str_eq(region_of(json_object_get(json_object_get(r, "get_master"),
                                               "master_info")),
                     "eu");
    json_decref(r);
}
END_TEST

/* Without --domain, /state has no "domain" (as Mesos leaves it out). */
START_TEST(test_no_domain_in_state_without_flag)
{
    struct http_fake *f = mfx_http(&X, HTTP_GET, "/state", NULL, NULL);
    json_t *st = json_loads(mfx_body(f), 0, NULL);
    http_fake_free(f);
    ck_assert_ptr_null(json_object_get(st, "domain"));
    json_decref(st);
}
END_TEST

static Suite *domains_suite(void)
{
    Suite *s = suite_create("master_domains");
    TCase *plain = tcase_create("no_domain");
    tcase_add_checked_fixture(plain, setup, teardown);
    tcase_add_test(plain, test_agent_domain_refused_without_master_domain);
    tcase_add_test(plain, test_no_domain_in_state_without_flag);
    suite_add_tcase(s, plain);
    TCase *dom = tcase_create("domain");
    tcase_add_checked_fixture(dom, setup_domain, teardown);
    tcase_add_test(dom, test_agent_domain_empty_names_refused);
    tcase_add_test(dom, test_remote_agent_only_to_region_aware);
    tcase_add_test(dom, test_agent_without_domain_is_local);
    tcase_add_test(dom, test_domains_in_state_and_get_agents);
    suite_add_tcase(s, dom);
    return s;
}

OFFERD_CHECK_MAIN(domains_suite)
