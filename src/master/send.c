/*
 * Sending events on framework and agent streams; see send.h.
 */
#include "master/send.h"

#include <arpa/inet.h>
#include <stdlib.h>

#include "common/clock.h"
#include "common/json_pb.h"
#include "common/stream_drain.h"

/* The capabilities of every offerd master, as MasterInfo lists them:
 * agents whose resources change when they re-register (AGENT_UPDATE),
 * DRAIN_AGENT and DEACTIVATE_AGENT (AGENT_DRAINING), quota guarantees and
 * limits set apart (QUOTA_V2). Never written: protobuf-c's types only lack
 * the const. */
static Mesos__V1__MasterInfo__Capability master_caps[] = {
    {PROTOBUF_C_MESSAGE_INIT(&mesos__v1__master_info__capability__descriptor),
     true, MESOS__V1__MASTER_INFO__CAPABILITY__TYPE__AGENT_UPDATE},
    {PROTOBUF_C_MESSAGE_INIT(&mesos__v1__master_info__capability__descriptor),
     true, MESOS__V1__MASTER_INFO__CAPABILITY__TYPE__AGENT_DRAINING},
    {PROTOBUF_C_MESSAGE_INIT(&mesos__v1__master_info__capability__descriptor),
     true, MESOS__V1__MASTER_INFO__CAPABILITY__TYPE__QUOTA_V2},
};
static Mesos__V1__MasterInfo__Capability *master_capp[] = {
    &master_caps[0], &master_caps[1], &master_caps[2]};

void master_fill_info(const struct master *m, Mesos__V1__MasterInfo *info,
                      Mesos__V1__Address *addr)
{
    master_fill_info_of(m->id, m->ip, m->port, m->flags->hostname, info, addr);
    info->domain = m->domain; /* borrowed */
}

void master_fill_info_of(const char *id, const char *ip, uint16_t port,
                         const char *hostname, Mesos__V1__MasterInfo *info,
                         Mesos__V1__Address *addr)
{
    mesos__v1__master_info__init(info);
    mesos__v1__address__init(addr);
    info->id = (char *)id;
    /* Mesos's packed IPv4 (network byte order); the address supersedes it
     * and carries IPv6 too. */
    struct in_addr in;
    info->ip = inet_pton(AF_INET, ip, &in) == 1 ? in.s_addr : 0;
    info->port = port;
    info->hostname = (char *)hostname;
    info->version = OFFERD_VERSION;
    addr->hostname = (char *)hostname;
    addr->ip = (char *)ip;
    addr->port = port;
    info->address = addr;
    info->n_capabilities = sizeof(master_capp) / sizeof(master_capp[0]);
    info->capabilities = master_capp;
}

int master_send_to_framework(struct framework *fw,
                             const Mesos__V1__Scheduler__Event *ev)
{
    if (fw->stream == NULL) {
        fw->m->metrics.dropped_messages++;
        return -1;
    }
    size_t len;
    uint8_t *buf = jpb_encode(&ev->base, (enum jpb_format)fw->enc, &len);
    int rc = http_stream_send_record(fw->stream, buf, len);
    free(buf);
    return rc;
}

int master_send_to_agent(struct agent *ag, const Offerd__Agent__Event *ev)
{
    if (ag->stream == NULL) {
        ag->m->metrics.dropped_messages++;
        return -1;
    }
    size_t len;
    uint8_t *buf = jpb_encode(&ev->base, (enum jpb_format)ag->enc, &len);
    int rc = http_stream_send_record(ag->stream, buf, len);
    free(buf);
    return rc;
}

struct http_stream *master_stream_open(struct http_request *req,
                                       enum http_encoding enc, char *stream_id,
                                       http_stream_close_fn close_cb, void *arg)
{
    id_uuid_v4(stream_id);
    http_reply_header(req, "Mesos-Stream-Id", stream_id);
    struct http_stream *st = http_stream_start(
        req, enc == HTTP_ENC_JSON ? HTTP_CONTENT_JSON : HTTP_CONTENT_PROTOBUF,
        0, close_cb, arg);
    /* A framework or agent is cut for not reading, not for one large
     * burst of events it reads steadily (docs/performance.md). */
    const struct stream_drain_policy policy = {
        MASTER_STREAM_SOFT_CAP, MASTER_STREAM_HARD_CAP,
        MASTER_STREAM_GRACE_SECS * CLOCK_NS_PER_SEC};
    http_stream_set_drain(st, &policy);
    return st;
}

const char *master_close_reason(enum http_close_reason why)
{
    return why == HTTP_CLOSE_SLOW ? "too slow to read its events"
                                  : "connection closed";
}

void master_send_rescind(struct framework *fw, const char *offer_id,
                         bool inverse)
{
    Mesos__V1__OfferID oid = MESOS__V1__OFFER_ID__INIT;
    oid.value = (char *)offer_id;
    Mesos__V1__Scheduler__Event ev = MESOS__V1__SCHEDULER__EVENT__INIT;
    ev.has_type = true;
    Mesos__V1__Scheduler__Event__Rescind r =
        MESOS__V1__SCHEDULER__EVENT__RESCIND__INIT;
    Mesos__V1__Scheduler__Event__RescindInverseOffer ri =
        MESOS__V1__SCHEDULER__EVENT__RESCIND_INVERSE_OFFER__INIT;
    if (inverse) {
        ri.inverse_offer_id = &oid;
        ev.type = MESOS__V1__SCHEDULER__EVENT__TYPE__RESCIND_INVERSE_OFFER;
        ev.rescind_inverse_offer = &ri;
    } else {
        r.offer_id = &oid;
        ev.type = MESOS__V1__SCHEDULER__EVENT__TYPE__RESCIND;
        ev.rescind = &r;
    }
    master_send_to_framework(fw, &ev);
}

void master_send_agent_failure(struct master *m, const char *agent_id)
{
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = (char *)agent_id;
    Mesos__V1__Scheduler__Event__Failure f =
        MESOS__V1__SCHEDULER__EVENT__FAILURE__INIT;
    f.agent_id = &aid;
    Mesos__V1__Scheduler__Event ev = MESOS__V1__SCHEDULER__EVENT__INIT;
    ev.has_type = true;
    ev.type = MESOS__V1__SCHEDULER__EVENT__TYPE__FAILURE;
    ev.failure = &f;
    size_t pos = 0;
    void *val;
    while (hmap_next(m->frameworks, &pos, NULL, &val)) {
        struct framework *fw = val;
        if (fw->stream != NULL)
            master_send_to_framework(fw, &ev);
    }
}
