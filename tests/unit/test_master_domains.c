/*
 * Fault domains in the master (master/domains.c, --domain,
 * --require_agent_domain): which agents may register (Mesos's rules,
 * docs/fault-domains.md), which frameworks are offered agents of another
 * region (REGION_AWARE only), the agent's domain in its offers
 * (Offer.domain, JSON and protobuf), and the domains in /state and
 * GET_AGENTS. Refusals are checked for their status, reason and the
 * unchanged state.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "allocator/alloc.h"
#include "check_main.h"
#include "common/hmap.h"
#include "master/agents.h"
#include "master/registry_mem.h"
#include "master/scheduler_api.h"
#include "master_fixture.h"
#include "mesos/v1/scheduler.pb-c.h"

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

static void setup_require(void)
{
    const char *flags[] = {"--domain=" DOMAIN_EU, "--require_agent_domain",
                           NULL};
    mfx_start(&X, flags);
}

/* An agent SUBSCRIBE whose AgentInfo carries the agent id id (NULL: none,
 * a new agent) and domain_json (NULL: none). */
static struct http_fake *agent_subscribe_raw_id(const char *host,
                                                const char *id,
                                                const char *domain_json)
{
    char idf[300] = "";
    if (id != NULL)
        snprintf(idf, sizeof(idf), "\"id\":{\"value\":\"%s\"},", id);
    char json[2048];
    snprintf(json, sizeof(json),
             "{\"type\":\"SUBSCRIBE\",\"subscribe\":{\"agent_info\":{%s"
             "\"hostname\":\"%s\",\"port\":5051,\"resources\":[{\"name\":"
             "\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":2}}]%s%s},"
             "\"version\":\"test\",\"address\":{\"ip\":\"127.0.0.2\","
             "\"port\":5051}}}",
             idf, host, domain_json != NULL ? ",\"domain\":" : "",
             domain_json != NULL ? domain_json : "");
    return mfx_post(&X, master_agent_api, NULL, json);
}

static struct http_fake *agent_subscribe_raw(const char *host,
                                             const char *domain_json)
{
    return agent_subscribe_raw_id(host, NULL, domain_json);
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

/* ---- --require_agent_domain -----------------------------------------------
 */

#define REQUIRE_REASON                                                         \
    "attempted to register without a domain, but this master is "              \
    "configured to require agent domains"

/* The flag needs the master's own domain: without one the master would
 * refuse every agent, so it does not start. */
START_TEST(test_require_flag_needs_master_domain)
{
    static const struct {
        const char *args[3];
        enum flags_result want;
    } cases[] = {
        {{"--require_agent_domain", NULL, NULL}, FLAGS_ERROR},
        {{"--require_agent_domain=true", "--domain=", NULL}, FLAGS_ERROR},
        {{"--require_agent_domain", "--domain=" DOMAIN_EU, NULL}, FLAGS_OK},
        {{"--no-require_agent_domain", NULL, NULL}, FLAGS_OK},
        {{NULL, NULL, NULL}, FLAGS_OK},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct master_flags mf;
        master_flags_init(&mf);
        char *argv[4] = {"offerd", NULL, NULL, NULL};
        int argc = 1;
        for (int k = 0; k < 2 && cases[i].args[k] != NULL; k++)
            argv[argc++] = (char *)cases[i].args[k];
        char *env[] = {NULL};
        char err[512] = "";
        ck_assert_msg(master_flags_parse(&mf, argc, argv, env, err,
                                         sizeof(err)) == cases[i].want,
                      "case %zu: %s", i, err);
        if (cases[i].want == FLAGS_ERROR)
            ck_assert_str_eq(err, "--require_agent_domain needs --domain: a "
                                  "master without a domain would refuse "
                                  "every agent");
        else
            ck_assert_int_eq(mf.require_agent_domain, i == 2);
        master_flags_fini(&mf);
    }
}
END_TEST

/* With the flag, an agent without a domain is refused with Mesos's reason,
 * and nothing is recorded: no agent, no allocator agent, no registry
 * record, no event. An agent with a domain registers. */
START_TEST(test_require_refuses_agent_without_domain)
{
    mfx_framework_subscribe(&X, &FW, INFO_AWARE);
    long stored = registry_mem_count(X.store, NULL);
    struct http_fake *f = agent_subscribe_raw("bare1", NULL);
    ck_assert_int_eq(http_fake_status(f), 403);
    ck_assert(!http_fake_is_stream(f));
    ck_assert_ptr_nonnull(strstr(mfx_body(f), "agent bare1 " REQUIRE_REASON));
    ck_assert_ptr_nonnull(strstr(mfx_body(f), "--require_agent_domain"));
    http_fake_free(f);
    ck_assert_uint_eq(hmap_count(X.m->agents), 0);
    struct alloc_stats st;
    alloc_get_stats(X.m->alloc, &st);
    ck_assert_uint_eq(st.agents, 0);
    ck_assert_int_eq(registry_mem_count(X.store, NULL), stored);
    ck_assert_double_eq(mfx_metric(&X, "master/slaves_active"), 0);
    mfx_settle(&X);
    ck_assert(!mfx_has_event(&FW, "OFFERS"));

    /* Local and remote agents with a domain register. */
    agent_subscribe_domain(&AG, "local1", DOMAIN_EU);
    agent_subscribe_domain(&AG2, "remote1", DOMAIN_US);
    ck_assert_uint_eq(hmap_count(X.m->agents), 2);
    ck_assert_int_eq(registry_mem_count(X.store, "agent"), 2);
}
END_TEST

/* An agent known from before a master restart that comes back without a
 * domain under the flag is refused too (Mesos's reregisterSlave): it stays
 * a recovered agent, not registered, and its record is kept. */
START_TEST(test_require_refuses_reregistration_without_domain)
{
    mfx_agent_subscribe(&X, &AG, "bare1", "cpus:2;mem:1024");
    char id[256];
    snprintf(id, sizeof(id), "%s", AG.id);
    /* The master restarts with the flag turned on (X's flags are those the
     * next master reads). */
    X.flags.require_agent_domain = true;
    mfx_restart(&X);
    ck_assert_ptr_nonnull(hmap_get(X.m->recovered_agents, id));
    long stored = registry_mem_count(X.store, NULL);

    struct http_fake *f = agent_subscribe_raw_id("bare1", id, NULL);
    ck_assert_int_eq(http_fake_status(f), 403);
    ck_assert_ptr_nonnull(strstr(mfx_body(f), REQUIRE_REASON));
    http_fake_free(f);
    ck_assert_ptr_null(master_agent_find(X.m, id));
    ck_assert_ptr_nonnull(hmap_get(X.m->recovered_agents, id));
    ck_assert_int_eq(registry_mem_count(X.store, NULL), stored);
    ck_assert_int_eq(registry_mem_count(X.store, "agent"), 1);
}
END_TEST

/* Without the flag (the default) an agent without a domain registers, to
 * a master with a domain or without. */
START_TEST(test_no_require_flag_admits_agent_without_domain)
{
    ck_assert(!X.flags.require_agent_domain);
    mfx_agent_subscribe(&X, &AG, "bare1", "cpus:2;mem:1024");
    ck_assert_uint_eq(hmap_count(X.m->agents), 1);
    ck_assert_int_eq(registry_mem_count(X.store, "agent"), 1);
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

static json_t *first_offer_of(json_t *ev)
{
    return json_array_get(
        json_object_get(json_object_get(ev, "offers"), "offers"), 0);
}

/* Offer.domain (field 11) is the agent's domain in the OFFERS event (JSON)
 * and in GET_FRAMEWORKS; an agent without a domain gives offers without one. */
START_TEST(test_offer_carries_agent_domain_json)
{
    mfx_framework_subscribe(&X, &FW, INFO_AWARE);
    agent_subscribe_domain(&AG, "remote1", DOMAIN_US);
    json_t *ev = mfx_next_event(&X, &FW, "OFFERS");
    ck_assert_ptr_nonnull(ev);
    json_t *o = first_offer_of(ev);
    ck_assert_str_eq(region_of(o), "us");
    ck_assert_str_eq(
        json_string_value(json_object_get(
            json_object_get(
                json_object_get(json_object_get(o, "domain"), "fault_domain"),
                "zone"),
            "name")),
        "us-b");
    json_decref(ev);

    /* The operator API's copy of the offer (GET_FRAMEWORKS). */
    struct http_fake *f = mfx_operator(&X, "{\"type\":\"GET_FRAMEWORKS\"}");
    ck_assert_int_eq(http_fake_status(f), 200);
    json_t *r = json_loads(mfx_body(f), 0, NULL);
    http_fake_free(f);
    o = json_array_get(
        json_object_get(
            json_array_get(json_object_get(json_object_get(r, "get_frameworks"),
                                           "frameworks"),
                           0),
            "offers"),
        0);
    ck_assert_ptr_nonnull(o);
    ck_assert_str_eq(region_of(o), "us");
    json_decref(r);

    mfx_agent_subscribe(&X, &AG2, "bare1", "cpus:2;mem:1024");
    ev = mfx_next_event(&X, &FW, "OFFERS");
    ck_assert_ptr_nonnull(ev);
    o = first_offer_of(ev);
    ck_assert_str_eq(json_string_value(json_object_get(o, "hostname")),
                     "bare1");
    ck_assert_ptr_null(json_object_get(o, "domain"));
    json_decref(ev);
}
END_TEST

/* More than n records on stream s. */
struct records_past {
    const struct http_fake *s;
    size_t n;
};

static bool has_records_past(void *arg)
{
    const struct records_past *r = arg;
    return http_fake_record_count(r->s) > r->n;
}

/* The next OFFERS event on s, a framework stream that asked for protobuf,
 * from record *next on (advanced past it); NULL when none came in time.
 * Free with mesos__v1__scheduler__event__free_unpacked. */
static Mesos__V1__Scheduler__Event *next_pb_offers(struct http_fake *s,
                                                   size_t *next)
{
    for (;;) {
        struct records_past want = {s, *next};
        if (!mfx_run_until(&X, has_records_past, &want))
            return NULL;
        size_t len;
        const uint8_t *rec = http_fake_record(s, (*next)++, &len);
        Mesos__V1__Scheduler__Event *ev =
            mesos__v1__scheduler__event__unpack(NULL, len, rec);
        ck_assert_ptr_nonnull(ev);
        if (ev->type == MESOS__V1__SCHEDULER__EVENT__TYPE__OFFERS)
            return ev;
        mesos__v1__scheduler__event__free_unpacked(ev, NULL);
    }
}

/* The same in protobuf: the OFFERS event a framework that accepts
 * application/x-protobuf receives carries Offer.domain. */
START_TEST(test_offer_carries_agent_domain_protobuf)
{
    struct http_fake *s = http_fake_new(X.base, HTTP_POST, "/api/v1");
    http_fake_add_header(s, "Content-Type", HTTP_CONTENT_JSON);
    http_fake_add_header(s, "Accept", HTTP_CONTENT_PROTOBUF);
    const char *sub = "{\"type\":\"SUBSCRIBE\",\"subscribe\":{"
                      "\"framework_info\":" INFO_AWARE "}}";
    http_fake_set_body(s, sub, strlen(sub));
    http_fake_dispatch(s, master_scheduler_api, X.m);
    mfx_settle(&X);
    ck_assert(http_fake_is_stream(s));
    agent_subscribe_domain(&AG, "remote1", DOMAIN_US);
    size_t next = 0;
    Mesos__V1__Scheduler__Event *ev = next_pb_offers(s, &next);
    ck_assert_ptr_nonnull(ev);
    ck_assert_uint_ge(ev->offers->n_offers, 1);
    const Mesos__V1__Offer *o = ev->offers->offers[0];
    ck_assert_ptr_nonnull(o->domain);
    ck_assert_ptr_nonnull(o->domain->fault_domain);
    ck_assert_str_eq(o->domain->fault_domain->region->name, "us");
    ck_assert_str_eq(o->domain->fault_domain->zone->name, "us-b");
    mesos__v1__scheduler__event__free_unpacked(ev, NULL);
    http_fake_free(s);
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
    tcase_add_test(plain, test_no_require_flag_admits_agent_without_domain);
    suite_add_tcase(s, plain);
    TCase *flags = tcase_create("flags");
    tcase_add_test(flags, test_require_flag_needs_master_domain);
    suite_add_tcase(s, flags);
    TCase *dom = tcase_create("domain");
    tcase_add_checked_fixture(dom, setup_domain, teardown);
    tcase_add_test(dom, test_agent_domain_empty_names_refused);
    tcase_add_test(dom, test_remote_agent_only_to_region_aware);
    tcase_add_test(dom, test_agent_without_domain_is_local);
    tcase_add_test(dom, test_domains_in_state_and_get_agents);
    tcase_add_test(dom, test_offer_carries_agent_domain_json);
    tcase_add_test(dom, test_offer_carries_agent_domain_protobuf);
    tcase_add_test(dom, test_no_require_flag_admits_agent_without_domain);
    suite_add_tcase(s, dom);
    TCase *req = tcase_create("require_agent_domain");
    tcase_add_checked_fixture(req, setup_require, teardown);
    tcase_add_test(req, test_require_refuses_agent_without_domain);
    suite_add_tcase(s, req);
    /* Starts without the flag and restarts with it. */
    TCase *rereg = tcase_create("require_agent_domain_restart");
    tcase_add_checked_fixture(rereg, setup_domain, teardown);
    tcase_add_test(rereg, test_require_refuses_reregistration_without_domain);
    suite_add_tcase(s, rereg);
    return s;
}

OFFERD_CHECK_MAIN(domains_suite)
