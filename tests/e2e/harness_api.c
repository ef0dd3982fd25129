/* Scripted framework and agent for end-to-end tests: see harness_api.h. */
#include "harness_api.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/auth.h"
#include "mesos/v1/master.pb-c.h"

/* ---- Streams of RecordIO events ---------------------------------------------
 */

/* Records are reassembled from the chunks here, though the master sends
 * one record per chunk. */
uint8_t *api_next_record(struct conn *c, int timeout_ms, size_t *len)
{
    for (;;) {
        /* Is a whole record buffered? */
        if (c->npending > 0) {
            char *nl = memchr(c->pending, '\n', c->npending);
            if (nl != NULL) {
                size_t n = strtoul(c->pending, NULL, 10);
                size_t head = (size_t)(nl - c->pending) + 1;
                if (c->npending >= head + n) {
                    uint8_t *rec = malloc(n + 1);
                    ck_assert_ptr_nonnull(rec);
                    memcpy(rec, c->pending + head, n);
                    rec[n] = '\0';
                    memmove(c->pending, c->pending + head + n,
                            c->npending - head - n);
                    c->npending -= head + n;
                    *len = n;
                    return rec;
                }
            }
        }
        char *data;
        size_t n;
        int rc = e2e_stream_next(&c->s, timeout_ms, &data, &n);
        if (rc != 1)
            return NULL;
        c->pending = realloc(c->pending, c->npending + n);
        ck_assert_ptr_nonnull(c->pending);
        memcpy(c->pending + c->npending, data, n);
        c->npending += n;
        free(data);
    }
}

json_t *api_next_event(struct conn *c, int timeout_ms)
{
    size_t len;
    uint8_t *rec = api_next_record(c, timeout_ms, &len);
    if (rec == NULL)
        return NULL;
    json_error_t e;
    json_t *j = json_loadb((const char *)rec, len, 0, &e);
    free(rec);
    ck_assert_msg(j != NULL, "bad event JSON: %s", e.text);
    return j;
}

void api_operator_subscribe(struct conn *c, uint16_t port,
                            const char *media_type)
{
    memset(c, 0, sizeof(*c));
    char ct[64], accept[64];
    snprintf(ct, sizeof(ct), "Content-Type: %s", media_type);
    snprintf(accept, sizeof(accept), "Accept: %s", media_type);
    const char *headers[] = {ct, accept, NULL};
    uint8_t pb[16];
    const void *body = "{\"type\":\"SUBSCRIBE\"}";
    size_t len = strlen(body);
    if (strcmp(media_type, "application/x-protobuf") == 0) {
        Mesos__V1__Master__Call call = MESOS__V1__MASTER__CALL__INIT;
        call.has_type = true;
        call.type = MESOS__V1__MASTER__CALL__TYPE__SUBSCRIBE;
        len = mesos__v1__master__call__pack(&call, pb);
        body = pb;
    }
    ck_assert_int_eq(
        e2e_stream_open(port, "POST", "/api/v1", headers, body, len, T, &c->s),
        0);
    ck_assert_int_eq(c->s.head.status, 200);
    ck_assert_str_eq(e2e_response_header(&c->s.head, "Content-Type"),
                     media_type);
}

/* The next event of the given type, skipping others (heartbeats, pings);
 * NULL when none arrives in time. */
json_t *api_wait_event(struct conn *c, const char *type, int timeout_ms)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        long spent = (now.tv_sec - start.tv_sec) * 1000 +
                     (now.tv_nsec - start.tv_nsec) / 1000000;
        if (spent >= timeout_ms)
            return NULL;
        json_t *ev = api_next_event(c, (int)(timeout_ms - spent));
        if (ev == NULL)
            return NULL;
        const char *t = json_string_value(json_object_get(ev, "type"));
        if (t != NULL && strcmp(t, type) == 0)
            return ev;
        json_decref(ev);
    }
}

void api_conn_close(struct conn *c)
{
    e2e_stream_close(&c->s);
    free(c->pending);
    c->pending = NULL;
    c->npending = 0;
}

/* The "Authorization: ..." line of api_set_credentials, or NULL. */
static char *auth_line;

void api_set_credentials(const char *principal, const char *secret)
{
    free(auth_line);
    auth_line = NULL;
    if (principal == NULL)
        return;
    char *h = auth_basic_header(principal, secret);
    ck_assert_int_gt(asprintf(&auth_line, "Authorization: %s", h), 0);
    free(h);
}

/* POST a JSON body; returns the status (the response is freed). */
int api_post(uint16_t port, const char *path, const char *stream_id,
             const char *body, char *reason, size_t reasonlen)
{
    char sid[200];
    const char *headers[4] = {"Content-Type: application/json", NULL, NULL,
                              NULL};
    size_t n = 1;
    if (stream_id != NULL) {
        snprintf(sid, sizeof(sid), "Mesos-Stream-Id: %s", stream_id);
        headers[n++] = sid;
    }
    headers[n] = auth_line;
    struct e2e_response r;
    ck_assert_int_eq(
        e2e_http(port, "POST", path, headers, body, strlen(body), T, &r), 0);
    int status = r.status;
    if (reason != NULL)
        snprintf(reason, reasonlen, "%s", r.body ? r.body : "");
    e2e_response_free(&r);
    return status;
}

json_t *api_get_json(uint16_t port, const char *path)
{
    struct e2e_response r;
    ck_assert_int_eq(e2e_http(port, "GET", path, NULL, NULL, 0, T, &r), 0);
    ck_assert_int_eq(r.status, 200);
    json_error_t e;
    json_t *j = json_loads(r.body, 0, &e);
    ck_assert_msg(j != NULL, "%s: %s", path, e.text);
    e2e_response_free(&r);
    return j;
}

/* Percent-encode s for a form body into out (outlen bytes; truncated). */
static void form_escape(const char *s, char *out, size_t outlen)
{
    size_t o = 0;
    for (; *s != '\0' && o + 4 < outlen; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
            (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.')
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, outlen - o, "%%%02X", c);
    }
    out[o] = '\0';
}

int api_operator_form(uint16_t port, const char *path, const char *agent_id,
                      const char *field, const char *json, char *reason,
                      size_t reasonlen)
{
    char enc[8192], body[9000];
    form_escape(json, enc, sizeof(enc));
    snprintf(body, sizeof(body), "slaveId=%s&%s=%s", agent_id, field, enc);
    const char *headers[] = {"Content-Type: application/x-www-form-urlencoded",
                             auth_line, NULL};
    struct e2e_response r;
    ck_assert_int_eq(
        e2e_http(port, "POST", path, headers, body, strlen(body), T, &r), 0);
    int status = r.status;
    snprintf(reason, reasonlen, "%s", r.body != NULL ? r.body : "");
    e2e_response_free(&r);
    return status;
}

long long api_agent_ckpt_version(uint16_t agent_port)
{
    json_t *st = api_get_json(agent_port, "/state");
    long long v = json_integer_value(
        json_object_get(st, "checkpointed_resources_version"));
    json_decref(st);
    return v;
}

/* ---- A scripted framework --------------------------------------------------
 */

void api_subscribe_framework(struct conn *c, uint16_t port,
                             const char *framework_info)
{
    char sub[2048];
    snprintf(sub, sizeof(sub), "{\"framework_info\":%s}", framework_info);
    api_subscribe_framework_call(c, port, sub);
}

void api_subscribe_framework_call(struct conn *c, uint16_t port,
                                  const char *subscribe)
{
    memset(c, 0, sizeof(*c));
    char body[4096];
    ck_assert_int_lt(snprintf(body, sizeof(body),
                              "{\"type\":\"SUBSCRIBE\",\"subscribe\":%s}",
                              subscribe),
                     (int)sizeof(body));
    const char *headers[] = {"Content-Type: application/json",
                             "Accept: application/json", auth_line, NULL};
    ck_assert_int_eq(e2e_stream_open(port, "POST", "/api/v1/scheduler", headers,
                                     body, strlen(body), T, &c->s),
                     0);
    ck_assert_int_eq(c->s.head.status, 200);
    const char *sid = e2e_response_header(&c->s.head, "Mesos-Stream-Id");
    ck_assert_ptr_nonnull(sid);
    snprintf(c->stream_id, sizeof(c->stream_id), "%s", sid);
    json_t *ev = api_wait_event(c, "SUBSCRIBED", T);
    ck_assert_ptr_nonnull(ev);
    json_t *sub = json_object_get(ev, "subscribed");
    snprintf(c->id, sizeof(c->id), "%s",
             json_string_value(json_object_get(
                 json_object_get(sub, "framework_id"), "value")));
    ck_assert_double_eq(
        json_real_value(json_object_get(sub, "heartbeat_interval_seconds")),
        15.0);
    json_decref(ev);
}

/* A framework call (type and payload JSON); returns the status. */
int api_fw_call(struct conn *c, uint16_t port, const char *type,
                const char *field, const char *payload)
{
    char body[8192];
    if (field != NULL)
        snprintf(body, sizeof(body),
                 "{\"type\":\"%s\",\"framework_id\":{\"value\":\"%s\"},"
                 "\"%s\":%s}",
                 type, c->id, field, payload);
    else
        snprintf(body, sizeof(body),
                 "{\"type\":\"%s\",\"framework_id\":{\"value\":\"%s\"}}", type,
                 c->id);
    return api_post(port, "/api/v1/scheduler", c->stream_id, body, NULL, 0);
}

/* Wait for an OFFERS event and copy out the first offer's id and agent id. */
json_t *api_wait_offer(struct conn *fw, char *offer_id, char *agent_id,
                       int timeout_ms)
{
    json_t *ev = api_wait_event(fw, "OFFERS", timeout_ms);
    if (ev == NULL)
        return NULL;
    json_t *offer = json_array_get(
        json_object_get(json_object_get(ev, "offers"), "offers"), 0);
    ck_assert_ptr_nonnull(offer);
    snprintf(offer_id, 256, "%s",
             json_string_value(
                 json_object_get(json_object_get(offer, "id"), "value")));
    snprintf(agent_id, 256, "%s",
             json_string_value(
                 json_object_get(json_object_get(offer, "agent_id"), "value")));
    return ev;
}

double api_offered_scalar(json_t *offers_event, const char *name)
{
    json_t *offer = json_array_get(
        json_object_get(json_object_get(offers_event, "offers"), "offers"), 0);
    json_t *res = json_object_get(offer, "resources");
    double sum = 0;
    size_t i;
    json_t *r;
    json_array_foreach(res, i, r)
    {
        if (strcmp(json_string_value(json_object_get(r, "name")), name) == 0)
            sum += json_real_value(
                json_object_get(json_object_get(r, "scalar"), "value"));
    }
    return sum;
}

double api_offered_revocable(json_t *offers_event, const char *name)
{
    json_t *offer = json_array_get(
        json_object_get(json_object_get(offers_event, "offers"), "offers"), 0);
    double sum = 0;
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(offer, "resources"), i, r)
    {
        if (json_object_get(r, "revocable") != NULL &&
            strcmp(json_string_value(json_object_get(r, "name")), name) == 0)
            sum += json_real_value(
                json_object_get(json_object_get(r, "scalar"), "value"));
    }
    return sum;
}

int api_decline(struct conn *fw, uint16_t port, const char *offer_id,
                double refuse_seconds)
{
    char payload[512];
    snprintf(payload, sizeof(payload),
             "{\"offer_ids\":[{\"value\":\"%s\"}],\"filters\":{"
             "\"refuse_seconds\":%g}}",
             offer_id, refuse_seconds);
    return api_fw_call(fw, port, "DECLINE", "decline", payload);
}

/* ACCEPT one offer with one LAUNCH of a task. */
int api_launch(struct conn *fw, uint16_t port, const char *offer_id,
               const char *agent_id, const char *task_id,
               const char *resources_json)
{
    char payload[4096];
    snprintf(payload, sizeof(payload),
             "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{\"type\":"
             "\"LAUNCH\",\"launch\":{\"task_infos\":[{\"name\":\"t\","
             "\"task_id\":{\"value\":\"%s\"},\"agent_id\":{\"value\":\"%s\"},"
             "\"resources\":%s,\"command\":{\"value\":\"true\"}}]}}],"
             "\"filters\":{\"refuse_seconds\":0}}",
             offer_id, task_id, agent_id, resources_json);
    return api_fw_call(fw, port, "ACCEPT", "accept", payload);
}

/* ---- A scripted agent
 * ---------------------------------------------------------- */

void api_subscribe_agent(struct conn *c, uint16_t port, const char *hostname,
                         const char *resources_json)
{
    memset(c, 0, sizeof(*c));
    char body[4096];
    snprintf(body, sizeof(body),
             "{\"type\":\"SUBSCRIBE\",\"subscribe\":{\"agent_info\":{"
             "\"hostname\":\"%s\",\"port\":5051,\"resources\":%s,"
             "\"attributes\":[{\"name\":\"rack\",\"type\":\"TEXT\","
             "\"text\":{\"value\":\"r1\"}}]},\"version\":\"test\"}}",
             hostname, resources_json);
    const char *headers[] = {"Content-Type: application/json", NULL};
    ck_assert_int_eq(e2e_stream_open(port, "POST", "/api/v1/agent", headers,
                                     body, strlen(body), T, &c->s),
                     0);
    ck_assert_int_eq(c->s.head.status, 200);
    const char *sid = e2e_response_header(&c->s.head, "Mesos-Stream-Id");
    ck_assert_ptr_nonnull(sid);
    snprintf(c->stream_id, sizeof(c->stream_id), "%s", sid);
    json_t *ev = api_wait_event(c, "REGISTERED", T);
    ck_assert_ptr_nonnull(ev);
    snprintf(c->id, sizeof(c->id), "%s",
             json_string_value(json_object_get(
                 json_object_get(json_object_get(ev, "registered"), "agent_id"),
                 "value")));
    json_decref(ev);
}

/* Send a status update from the agent; uuid_b64 NULL sends none. */
int api_agent_update(struct conn *ag, uint16_t port, const char *fw_id,
                     const char *task_id, const char *state,
                     const char *uuid_b64)
{
    char body[2048], uuid[128] = "";
    if (uuid_b64 != NULL)
        snprintf(uuid, sizeof(uuid), ",\"uuid\":\"%s\"", uuid_b64);
    snprintf(body, sizeof(body),
             "{\"type\":\"UPDATE\",\"agent_id\":{\"value\":\"%s\"},"
             "\"update\":{\"framework_id\":{\"value\":\"%s\"},\"status\":{"
             "\"task_id\":{\"value\":\"%s\"},\"state\":\"%s\","
             "\"source\":\"SOURCE_EXECUTOR\",\"agent_id\":{\"value\":\"%s\"}%s}"
             ",\"latest_state\":\"%s\"}}",
             ag->id, fw_id, task_id, state, ag->id, uuid, state);
    return api_post(port, "/api/v1/agent", ag->stream_id, body, NULL, 0);
}

int api_agent_pong(struct conn *ag, uint16_t port, json_t *ping)
{
    char body[512];
    snprintf(body, sizeof(body),
             "{\"type\":\"PONG\",\"agent_id\":{\"value\":\"%s\"},\"pong\":{"
             "\"sequence\":%lld}}",
             ag->id,
             (long long)json_integer_value(
                 json_object_get(json_object_get(ping, "ping"), "sequence")));
    return api_post(port, "/api/v1/agent", ag->stream_id, body, NULL, 0);
}

void api_fw_ack_status(struct conn *c, uint16_t port, json_t *status)
{
    const char *uuid = json_string_value(json_object_get(status, "uuid"));
    if (uuid == NULL)
        return;
    json_t *ack = json_object();
    json_object_set(ack, "agent_id", json_object_get(status, "agent_id"));
    json_object_set(ack, "task_id", json_object_get(status, "task_id"));
    json_object_set_new(ack, "uuid", json_string(uuid));
    char *payload = json_dumps(ack, JSON_COMPACT);
    ck_assert_int_eq(
        api_fw_call(c, port, "ACKNOWLEDGE", "acknowledge", payload), 202);
    free(payload);
    json_decref(ack);
}
