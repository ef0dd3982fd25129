/*
 * End-to-end test of fault domains: a real master with --domain (region
 * "eu"), an agent in region "us" (--domain from a file://) and one without
 * a domain. A framework without REGION_AWARE is offered only the local
 * agent; one with it gets the remote agent. /state shows both domains. A
 * master without --domain refuses the agent with one. With
 * --require_agent_domain the agent without a domain is refused (and keeps
 * retrying, as Mesos's agent does), the one with a domain registers and its
 * offers carry its domain; the flag without --domain stops the master at
 * start.
 */
#include "harness.h"

#include <check.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EU                                                                     \
    "{\"fault_domain\":{\"region\":{\"name\":\"eu\"},\"zone\":{\"name\":\"eu-" \
    "a\"}}}"
#define US                                                                     \
    "{\"fault_domain\":{\"region\":{\"name\":\"us\"},\"zone\":{\"name\":\"us-" \
    "b\"}}}"

static struct e2e_proc master, remote, local;

/* A framework's SUBSCRIBE stream, JSON. */
static void fw_subscribe(struct e2e_stream *s, const char *name, bool aware)
{
    char body[1024];
    snprintf(body, sizeof(body),
             "{\"type\":\"SUBSCRIBE\",\"subscribe\":{\"framework_info\":{"
             "\"user\":\"u\",\"name\":\"%s\",\"roles\":[\"*\"],"
             "\"capabilities\":[{\"type\":\"MULTI_ROLE\"}%s]}}}",
             name, aware ? ",{\"type\":\"REGION_AWARE\"}" : "");
    const char *h[] = {"Content-Type: application/json",
                       "Accept: application/json", NULL};
    ck_assert_int_eq(e2e_stream_open(master.port, "POST", "/api/v1/scheduler",
                                     h, body, strlen(body), 10000, s),
                     0);
    ck_assert_int_eq(s->head.status, 200);
}

/* Read s's records until an OFFERS event (up to 20 s); return its first
 * offer (a new reference). */
static json_t *next_offer(struct e2e_stream *s)
{
    int64_t deadline = e2e_now_ms() + 20000;
    json_t *offer = NULL;
    while (offer == NULL && e2e_now_ms() < deadline) {
        char *data;
        size_t n;
        int rc = e2e_stream_next(s, 1000, &data, &n);
        ck_assert_int_ne(rc, 0);
        if (rc < 0)
            continue;
        const char *nl = strchr(data, '\n');
        json_t *ev = nl != NULL ? json_loads(nl + 1, 0, NULL) : NULL;
        const char *type = json_string_value(json_object_get(ev, "type"));
        if (type != NULL && strcmp(type, "OFFERS") == 0)
            offer = json_incref(json_array_get(
                json_object_get(json_object_get(ev, "offers"), "offers"), 0));
        json_decref(ev);
        free(data);
    }
    ck_assert_msg(offer != NULL, "no OFFERS within 20 s");
    return offer;
}

/* The hostname of the first offer of s's next OFFERS event (copied into
 * host). */
static void next_offer_host(struct e2e_stream *s, char *host, size_t len)
{
    json_t *o = next_offer(s);
    snprintf(host, len, "%s",
             json_string_value(json_object_get(o, "hostname")));
    json_decref(o);
    ck_assert_msg(host[0] != '\0', "an offer without a hostname");
}

/* The agent of /state's "slaves" with hostname host (borrowed from st). */
static json_t *slave_of(json_t *st, const char *host)
{
    size_t i;
    json_t *sl;
    json_array_foreach(json_object_get(st, "slaves"), i, sl)
    {
        if (strcmp(json_string_value(json_object_get(sl, "hostname")), host) ==
            0)
            return sl;
    }
    return NULL;
}

static const char *region_of(json_t *o)
{
    return json_string_value(json_object_get(
        json_object_get(
            json_object_get(json_object_get(o, "domain"), "fault_domain"),
            "region"),
        "name"));
}

struct runs_arg {
    double target;
};

static bool runs_reached(void *arg)
{
    struct runs_arg *r = arg;
    return e2e_metric(master.port, "allocator/mesos/allocation_runs") >=
           r->target;
}

START_TEST(test_remote_agent_offered_to_region_aware_only)
{
    const char *margs[] = {"--allocation_interval=50ms", "--domain=" EU, NULL};
    ck_assert_int_eq(e2e_start_master(&master, margs), 0);
    char path[400], url[420];
    snprintf(path, sizeof(path), "%s/domain.json", master.dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(US, f);
    fclose(f);
    snprintf(url, sizeof(url), "--domain=file://%s", path);
    const char *rargs[] = {"--hostname=remote", "--resources=cpus:1;mem:256",
                           url, NULL};
    const char *largs[] = {"--hostname=local", "--resources=cpus:1;mem:256",
                           NULL};
    ck_assert_int_eq(e2e_start_agent(&remote, master.port, rargs), 0);
    ck_assert_int_eq(e2e_start_agent(&local, master.port, largs), 0);
    ck_assert_msg(e2e_wait_agents(&master, 2, 20000) == 0,
                  "the agents did not register");

    json_t *st = e2e_get_json(master.port, "/state");
    ck_assert_ptr_nonnull(st);
    ck_assert_str_eq(region_of(st), "eu");
    ck_assert_str_eq(region_of(slave_of(st, "remote")), "us");
    ck_assert_ptr_null(json_object_get(slave_of(st, "local"), "domain"));
    json_decref(st);
    st = e2e_get_json(remote.port, "/state");
    ck_assert_ptr_nonnull(st);
    ck_assert_str_eq(region_of(st), "us");
    json_decref(st);

    /* The plain framework holds the local agent's offer; cycles go on and
     * the remote agent is never offered to it. */
    struct e2e_stream plain, aware;
    fw_subscribe(&plain, "plain", false);
    char host[128];
    next_offer_host(&plain, host, sizeof(host));
    ck_assert_str_eq(host, "local");
    struct runs_arg ra = {
        e2e_metric(master.port, "allocator/mesos/allocation_runs") + 5};
    ck_assert(e2e_poll_until(runs_reached, &ra, 20000));
    st = e2e_get_json(master.port, "/state");
    json_t *offered =
        json_object_get(slave_of(st, "remote"), "offered_resources");
    ck_assert_msg(json_real_value(json_object_get(offered, "cpus")) == 0 &&
                      json_integer_value(json_object_get(offered, "cpus")) == 0,
                  "the remote agent was offered to a framework that is not "
                  "REGION_AWARE");
    json_decref(st);

    /* A REGION_AWARE framework gets it. */
    fw_subscribe(&aware, "aware", true);
    next_offer_host(&aware, host, sizeof(host));
    ck_assert_str_eq(host, "remote");
    e2e_stream_close(&plain);
    e2e_stream_close(&aware);
    e2e_proc_cleanup(&remote);
    e2e_proc_cleanup(&local);
    e2e_proc_cleanup(&master);
}
END_TEST

/* Mesos's rule: a master without a domain refuses an agent with one. */
START_TEST(test_master_without_domain_refuses_agent_with_one)
{
    ck_assert_int_eq(e2e_start_master(&master, NULL), 0);
    const char *rargs[] = {"--hostname=remote", "--resources=cpus:1;mem:256",
                           "--domain=" US, NULL};
    ck_assert_int_eq(e2e_start_agent(&remote, master.port, rargs), 0);
    ck_assert_msg(e2e_wait_log(&remote, "SUBSCRIBE refused with 403", 1, 20000),
                  "the agent was not refused");
    ck_assert_double_eq(e2e_metric(master.port, "master/slaves_active"), 0);
    e2e_proc_cleanup(&remote);
    e2e_proc_cleanup(&master);
}
END_TEST

/* --require_agent_domain: it needs --domain (the master refuses to start
 * without one); with both, an agent without a domain is refused 403 and
 * keeps retrying (Mesos ignores it rather than shut it down), while an
 * agent with a domain registers, and its offers carry that domain. */
START_TEST(test_require_agent_domain)
{
    const char *bad[] = {"--require_agent_domain", "--ip=127.0.0.1", "--port=0",
                         "--registry=in_memory", NULL};
    char out[2048];
    ck_assert_int_eq(e2e_run(OFFERD_BIN, bad, out, sizeof(out), 10000), 1);
    ck_assert_msg(strstr(out, "--require_agent_domain needs --domain") != NULL,
                  "unexpected output: %s", out);

    const char *margs[] = {"--allocation_interval=50ms", "--domain=" EU,
                           "--require_agent_domain", NULL};
    ck_assert_int_eq(e2e_start_master(&master, margs), 0);
    const char *largs[] = {"--hostname=local", "--resources=cpus:1;mem:256",
                           NULL};
    const char *rargs[] = {"--hostname=remote", "--resources=cpus:1;mem:256",
                           "--domain=" US, NULL};
    ck_assert_int_eq(e2e_start_agent(&local, master.port, largs), 0);
    ck_assert_int_eq(e2e_start_agent(&remote, master.port, rargs), 0);
    /* Refused twice: the agent retries. */
    ck_assert_msg(e2e_wait_log(&local,
                               "SUBSCRIBE refused with 403: agent local "
                               "attempted to register without a domain",
                               2, 20000),
                  "the agent without a domain was not refused twice");
    ck_assert(e2e_proc_running(&local));
    ck_assert_msg(e2e_wait_agents(&master, 1, 20000) == 0,
                  "the agent with a domain did not register");
    ck_assert_int_ge(e2e_log_count(&master, "configured to require agent "
                                            "domains: refused"),
                     2);

    json_t *st = e2e_get_json(master.port, "/state");
    ck_assert_ptr_nonnull(st);
    ck_assert_uint_eq(json_array_size(json_object_get(st, "slaves")), 1);
    ck_assert_ptr_nonnull(slave_of(st, "remote"));
    ck_assert_ptr_null(slave_of(st, "local"));
    json_decref(st);

    struct e2e_stream aware;
    fw_subscribe(&aware, "aware", true);
    json_t *o = next_offer(&aware);
    ck_assert_str_eq(json_string_value(json_object_get(o, "hostname")),
                     "remote");
    ck_assert_str_eq(region_of(o), "us");
    json_decref(o);
    e2e_stream_close(&aware);
    e2e_proc_cleanup(&remote);
    e2e_proc_cleanup(&local);
    e2e_proc_cleanup(&master);
}
END_TEST

static Suite *domains_suite(void)
{
    Suite *s = suite_create("e2e_domains");
    TCase *tc = tcase_create("domains");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_remote_agent_offered_to_region_aware_only);
    tcase_add_test(tc, test_master_without_domain_refuses_agent_with_one);
    tcase_add_test(tc, test_require_agent_domain);
    suite_add_tcase(s, tc);
    return s;
}

E2E_CHECK_MAIN(domains_suite)
