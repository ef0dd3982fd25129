/*
 * A master with no sockets for unit tests; see master_fixture.h.
 */
#include "master_fixture.h"

#include <check.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "allocator/alloc.h"
#include "common/auth.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/resources.h"
#include "master/agents.h"
#include "master/master.h"
#include "master/operator_api.h"
#include "master/registry_mem.h"
#include "master/registry_private.h"
#include "master/scheduler_api.h"
#include "master/state_endpoints.h"

static void start_master(struct mfx *x)
{
    struct master_options o = {
        .registry_backend = &registry_mem_backend,
        .registry_where = x->store,
        .no_listen = true,
    };
    char err[512];
    x->m = master_new_with(x->base, &x->flags, &o, err, sizeof(err));
    ck_assert_msg(x->m != NULL, "master_new_with: %s", err);
}

void mfx_start(struct mfx *x, const char *const *extra_flags)
{
    static unsigned seq;
    memset(x, 0, sizeof(*x));
    snprintf(x->store, sizeof(x->store), "mfx-%d-%u", (int)getpid(), seq++);
    x->base = event_base_new();
    ck_assert_ptr_nonnull(x->base);
    master_flags_init(&x->flags);
    char *argv[32];
    int argc = 0;
    argv[argc++] = "offerd";
    argv[argc++] = "--ip=127.0.0.1";
    argv[argc++] = "--port=5050";
    argv[argc++] = "--hostname=mfx";
    argv[argc++] = "--logging_level=ERROR";
    for (size_t i = 0; extra_flags != NULL && extra_flags[i] != NULL; i++) {
        ck_assert_int_lt(argc, 31);
        argv[argc++] = (char *)extra_flags[i];
    }
    argv[argc] = NULL;
    char *env[] = {NULL};
    char err[512];
    ck_assert_msg(master_flags_parse(&x->flags, argc, argv, env, err,
                                     sizeof(err)) == FLAGS_OK,
                  "flags: %s", err);
    log_set_level(x->flags.log_level);
    start_master(x);
}

void mfx_restart(struct mfx *x)
{
    master_free(x->m);
    x->m = NULL;
    start_master(x);
}

void mfx_stop(struct mfx *x)
{
    master_free(x->m);
    x->m = NULL;
    master_flags_fini(&x->flags);
    event_base_free(x->base);
    registry_mem_drop(x->store);
}

void mfx_teardown(struct mfx *x, struct mfx_peer *const *peers, size_t n)
{
    for (size_t i = 0; i < n; i++)
        mfx_peer_free(peers[i]);
    mfx_stop(x);
}

void mfx_settle(struct mfx *x)
{
    for (int i = 0; i < 4; i++) {
        if (x->m != NULL && x->m->registry != NULL)
            registry_test_flush(x->m->registry);
        event_base_loop(x->base, EVLOOP_NONBLOCK);
    }
}

bool mfx_run_until(struct mfx *x, bool (*cond)(void *arg), void *arg)
{
    int64_t deadline =
        clock_monotonic_ns() + (int64_t)MFX_DEADLINE_MS * CLOCK_NS_PER_MS;
    for (;;) {
        mfx_settle(x);
        if (cond(arg))
            return true;
        if (clock_monotonic_ns() > deadline)
            return false;
        /* Let timers (offer timeouts, zero-delay cycles) come due. */
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

static bool replied(void *arg)
{
    return http_fake_replied(arg);
}

struct http_fake *mfx_post(struct mfx *x, http_handler_fn fn,
                           const char *stream_id, const char *json)
{
    struct http_fake *f = http_fake_new(x->base, HTTP_POST, "/api/v1");
    http_fake_add_header(f, "Content-Type", HTTP_CONTENT_JSON);
    http_fake_add_header(f, "Accept", HTTP_CONTENT_JSON);
    if (stream_id != NULL)
        http_fake_add_header(f, "Mesos-Stream-Id", stream_id);
    if (x->auth[0] != '\0')
        http_fake_add_header(f, "Authorization", x->auth);
    http_fake_set_body(f, json, strlen(json));
    http_fake_dispatch(f, fn, x->m);
    ck_assert_msg(mfx_run_until(x, replied, f), "no reply to %s", json);
    return f;
}

void mfx_set_principal(struct mfx *x, const char *principal, const char *secret)
{
    x->auth[0] = '\0';
    if (principal == NULL)
        return;
    char *h = auth_basic_header(principal, secret);
    snprintf(x->auth, sizeof(x->auth), "%s", h);
    free(h);
}

struct http_fake *mfx_http(struct mfx *x, enum http_method method,
                           const char *target, const char *content_type,
                           const char *body)
{
    struct http_fake *f = http_fake_new(x->base, method, target);
    if (content_type != NULL)
        http_fake_add_header(f, "Content-Type", content_type);
    if (x->auth[0] != '\0')
        http_fake_add_header(f, "Authorization", x->auth);
    if (body != NULL)
        http_fake_set_body(f, body, strlen(body));
    http_fake_dispatch_server(f, x->m->http);
    ck_assert_msg(mfx_run_until(x, replied, f), "no reply to %s", target);
    return f;
}

int mfx_post_status(struct mfx *x, http_handler_fn fn, const char *stream_id,
                    const char *json)
{
    struct http_fake *f = mfx_post(x, fn, stream_id, json);
    int status = http_fake_status(f);
    http_fake_free(f);
    return status;
}

const char *mfx_body(const struct http_fake *f)
{
    size_t len;
    return (const char *)http_fake_body(f, &len);
}

/* ---- Events ---- */

size_t mfx_unread(const struct mfx_peer *p)
{
    return http_fake_record_count(p->stream) - p->next;
}

static json_t *record_json(const struct mfx_peer *p, size_t i)
{
    size_t len;
    const uint8_t *r = http_fake_record(p->stream, i, &len);
    if (r == NULL)
        return NULL;
    json_error_t e;
    json_t *j = json_loadb((const char *)r, len, 0, &e);
    ck_assert_msg(j != NULL, "event %zu is not JSON: %s", i, e.text);
    return j;
}

static bool is_type(json_t *ev, const char *type)
{
    const char *t = json_string_value(json_object_get(ev, "type"));
    return t != NULL && strcmp(t, type) == 0;
}

bool mfx_has_event(const struct mfx_peer *p, const char *type)
{
    size_t n = http_fake_record_count(p->stream);
    for (size_t i = p->next; i < n; i++) {
        json_t *ev = record_json(p, i);
        bool yes = is_type(ev, type);
        json_decref(ev);
        if (yes)
            return true;
    }
    return false;
}

struct wait_event {
    struct mfx_peer *p;
    const char *type;
};

static bool event_arrived(void *arg)
{
    struct wait_event *w = arg;
    return mfx_has_event(w->p, w->type);
}

json_t *mfx_next_event(struct mfx *x, struct mfx_peer *p, const char *type)
{
    struct wait_event w = {p, type};
    if (!mfx_run_until(x, event_arrived, &w))
        return NULL;
    size_t n = http_fake_record_count(p->stream);
    for (; p->next < n; p->next++) {
        json_t *ev = record_json(p, p->next);
        if (is_type(ev, type)) {
            p->next++;
            return ev;
        }
        json_decref(ev);
    }
    return NULL;
}

void mfx_peer_free(struct mfx_peer *p)
{
    http_fake_free(p->stream);
    p->stream = NULL;
}

/* ---- Subscriptions ---- */

static void subscribe(struct mfx *x, struct mfx_peer *p, http_handler_fn fn,
                      const char *json, const char *first_event)
{
    memset(p, 0, sizeof(*p));
    p->stream = mfx_post(x, fn, NULL, json);
    ck_assert_msg(http_fake_is_stream(p->stream), "SUBSCRIBE answered %d: %s",
                  http_fake_status(p->stream), mfx_body(p->stream));
    const char *sid = http_fake_reply_header(p->stream, "Mesos-Stream-Id");
    ck_assert_ptr_nonnull(sid);
    snprintf(p->stream_id, sizeof(p->stream_id), "%s", sid);
    json_t *ev = mfx_next_event(x, p, first_event);
    ck_assert_msg(ev != NULL, "no %s event", first_event);
    json_t *id = json_object_get(
        json_object_get(json_object_get(ev, "subscribed"), "framework_id"),
        "value");
    if (id == NULL)
        id = json_object_get(
            json_object_get(json_object_get(ev, "registered"), "agent_id"),
            "value");
    ck_assert_ptr_nonnull(id);
    snprintf(p->id, sizeof(p->id), "%s", json_string_value(id));
    json_decref(ev);
}

void mfx_framework_subscribe(struct mfx *x, struct mfx_peer *fw,
                             const char *info_json)
{
    char *json = NULL;
    ck_assert_int_gt(asprintf(&json,
                              "{\"type\":\"SUBSCRIBE\",\"subscribe\":{"
                              "\"framework_info\":%s}}",
                              info_json),
                     0);
    subscribe(x, fw, master_scheduler_api, json, "SUBSCRIBED");
    free(json);
}

void mfx_framework_subscribe_call(struct mfx *x, struct mfx_peer *fw,
                                  const char *subscribe_json)
{
    char *json = NULL;
    ck_assert_int_gt(asprintf(&json,
                              "{\"type\":\"SUBSCRIBE\",\"subscribe\":%s}",
                              subscribe_json),
                     0);
    subscribe(x, fw, master_scheduler_api, json, "SUBSCRIBED");
    free(json);
}

static char *call_json(const char *id_field, const char *id, const char *type,
                       const char *field, const char *payload_json)
{
    char *json = NULL;
    int n;
    if (field != NULL)
        n = asprintf(&json,
                     "{\"%s\":{\"value\":\"%s\"},\"type\":\"%s\",\"%s\":%s}",
                     id_field, id, type, field, payload_json);
    else
        n = asprintf(&json, "{\"%s\":{\"value\":\"%s\"},\"type\":\"%s\"}",
                     id_field, id, type);
    ck_assert_int_gt(n, 0);
    return json;
}

int mfx_framework_call(struct mfx *x, struct mfx_peer *fw, const char *type,
                       const char *field, const char *payload_json)
{
    char *json = call_json("framework_id", fw->id, type, field, payload_json);
    int status = mfx_post_status(x, master_scheduler_api, fw->stream_id, json);
    free(json);
    return status;
}

void mfx_agent_subscribe(struct mfx *x, struct mfx_peer *ag,
                         const char *hostname, const char *resources)
{
    mfx_agent_subscribe_attrs(x, ag, hostname, resources, NULL);
}

void mfx_agent_subscribe_attrs(struct mfx *x, struct mfx_peer *ag,
                               const char *hostname, const char *resources,
                               const char *attributes_json)
{
    /* Text resources ("cpus:2;mem:1024") as scalar Resource JSON. */
    char res[1024] = "";
    size_t used = 0;
    char *copy = strdup(resources);
    char *save = NULL;
    for (char *tok = strtok_r(copy, ";", &save); tok != NULL;
         tok = strtok_r(NULL, ";", &save)) {
        char *colon = strchr(tok, ':');
        ck_assert_ptr_nonnull(colon);
        *colon = '\0';
        used += (size_t)snprintf(
            res + used, sizeof(res) - used,
            "%s{\"name\":\"%s\",\"type\":\"SCALAR\",\"scalar\":{\"value\":%s}}",
            used > 0 ? "," : "", tok, colon + 1);
        ck_assert_uint_lt(used, sizeof(res));
    }
    free(copy);
    char *json = NULL;
    ck_assert_int_gt(
        asprintf(&json,
                 "{\"type\":\"SUBSCRIBE\",\"subscribe\":{\"agent_info\":{"
                 "\"hostname\":\"%s\",\"port\":5051,\"resources\":[%s]%s%s},"
                 "\"version\":\"test\",\"address\":{\"ip\":\"127.0.0.2\","
                 "\"port\":5051}}}",
                 hostname, res,
                 attributes_json != NULL ? ",\"attributes\":" : "",
                 attributes_json != NULL ? attributes_json : ""),
        0);
    subscribe(x, ag, master_agent_api, json, "REGISTERED");
    free(json);
}

int mfx_agent_call(struct mfx *x, struct mfx_peer *ag, const char *type,
                   const char *field, const char *payload_json)
{
    char *json = call_json("agent_id", ag->id, type, field, payload_json);
    int status = mfx_post_status(x, master_agent_api, ag->stream_id, json);
    free(json);
    return status;
}

struct http_fake *mfx_operator(struct mfx *x, const char *call_json_text)
{
    return mfx_post(x, master_operator_api, NULL, call_json_text);
}

void mfx_task_update(struct mfx *x, struct mfx_peer *fw, struct mfx_peer *ag,
                     const char *task_id, const char *state, int u, bool ack)
{
    char uuid[32];
    /* 16 bytes: 15 zeros and u, base64. */
    snprintf(uuid, sizeof(uuid),
             "AAAAAAAAAAAAAAAAAAAA%c%c==", "ABCDEFGHIJKLMNOP"[(u >> 2) & 15],
             "AQgw"[u % 4]);
    char payload[1024];
    snprintf(payload, sizeof(payload),
             "{\"framework_id\":{\"value\":\"%s\"},\"status\":{\"task_id\":{"
             "\"value\":\"%s\"},\"state\":\"%s\",\"source\":"
             "\"SOURCE_EXECUTOR\",\"uuid\":\"%s\",\"agent_id\":{\"value\":"
             "\"%s\"}}}",
             fw->id, task_id, state, uuid, ag->id);
    ck_assert_int_eq(mfx_agent_call(x, ag, "UPDATE", "update", payload), 202);
    json_decref(mfx_next_event(x, fw, "UPDATE"));
    if (!ack)
        return;
    snprintf(payload, sizeof(payload),
             "{\"agent_id\":{\"value\":\"%s\"},\"task_id\":{\"value\":\"%s\"},"
             "\"uuid\":\"%s\"}",
             ag->id, task_id, uuid);
    ck_assert_int_eq(
        mfx_framework_call(x, fw, "ACKNOWLEDGE", "acknowledge", payload), 202);
}

struct mfx_metric_query {
    const char *name;
    double value;
    bool found;
};

static void mfx_metric_seen(void *arg, const char *name, double value)
{
    struct mfx_metric_query *q = arg;
    if (strcmp(name, q->name) == 0) {
        q->value = value;
        q->found = true;
    }
}

double mfx_metric(struct mfx *x, const char *name)
{
    struct mfx_metric_query q = {name, 0, false};
    master_metrics_collect(x->m, mfx_metric_seen, &q);
    ck_assert_msg(q.found, "no metric %s", name);
    return q.value;
}

json_t *mfx_first_offer(struct mfx *x, struct mfx_peer *fw, char *offer_id)
{
    json_t *ev = mfx_next_event(x, fw, "OFFERS");
    ck_assert_msg(ev != NULL, "no offer");
    json_t *id = json_object_get(
        json_object_get(
            json_array_get(
                json_object_get(json_object_get(ev, "offers"), "offers"), 0),
            "id"),
        "value");
    ck_assert_ptr_nonnull(id);
    snprintf(offer_id, 256, "%s", json_string_value(id));
    return ev;
}

void mfx_fill_resource_names(struct mfx *x)
{
    char *text = xstrdup("cpus:1;mem:1");
    for (int i = 0; i < ALLOC_MAX_NAMES - 2; i++) {
        char *next = xasprintf("%s;x%d:1", text, i);
        free(text);
        text = next;
    }
    res_list names = RES_LIST_INIT;
    char err[256];
    ck_assert_int_eq(res_parse_text(text, NULL, &names, err, sizeof(err)), 0);
    ck_assert_int_eq(alloc_admit_names(x->m->alloc, &names), 0);
    res_list_clear(&names);
    free(text);
}
