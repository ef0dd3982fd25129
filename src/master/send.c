/*
 * Sending events on framework and agent streams; see send.h.
 */
#include "master/send.h"

#include <arpa/inet.h>
#include <stdlib.h>

#include "common/json_pb.h"

void master_fill_info(const struct master *m, Mesos__V1__MasterInfo *info,
                      Mesos__V1__Address *addr)
{
    mesos__v1__master_info__init(info);
    mesos__v1__address__init(addr);
    info->id = (char *)m->id;
    /* Mesos's packed IPv4 (network byte order); the address supersedes it
     * and carries IPv6 too. */
    struct in_addr in;
    info->ip = inet_pton(AF_INET, m->ip, &in) == 1 ? in.s_addr : 0;
    info->port = m->port;
    info->hostname = (char *)m->flags->hostname;
    info->version = OFFERD_VERSION;
    addr->hostname = (char *)m->flags->hostname;
    addr->ip = m->ip;
    addr->port = m->port;
    info->address = addr;
}

int master_send_to_framework(struct framework *fw,
                             const Mesos__V1__Scheduler__Event *ev)
{
    if (fw->stream == NULL)
        return -1;
    size_t len;
    uint8_t *buf = jpb_encode(&ev->base, (enum jpb_format)fw->enc, &len);
    int rc = http_stream_send_record(fw->stream, buf, len);
    free(buf);
    return rc;
}

int master_send_to_agent(struct agent *ag, const Offerd__Agent__Event *ev)
{
    if (ag->stream == NULL)
        return -1;
    size_t len;
    uint8_t *buf = jpb_encode(&ev->base, (enum jpb_format)ag->enc, &len);
    int rc = http_stream_send_record(ag->stream, buf, len);
    free(buf);
    return rc;
}
