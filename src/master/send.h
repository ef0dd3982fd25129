/*
 * Sending events: encoding an event in the encoding of the stream it goes
 * on and writing it as one RecordIO record. Every event the master sends to
 * a framework or an agent passes here.
 */
#ifndef OFFERD_MASTER_SEND_H
#define OFFERD_MASTER_SEND_H

#include "master/master_types.h"

/* The slow-reader policy of framework and agent streams
 * (common/stream_drain.h): past the soft cap of queued bytes the reader
 * must take some within the grace period; past the hard cap the stream is
 * cut at once. */
#define MASTER_STREAM_SOFT_CAP   ((size_t)16 << 20)
#define MASTER_STREAM_HARD_CAP   ((size_t)512 << 20)
#define MASTER_STREAM_GRACE_SECS 30

/* Encode ev in fw's encoding and send it on fw's stream (dropped if the
 * framework is disconnected). Returns 0 when sent. */
int master_send_to_framework(struct framework *fw,
                             const Mesos__V1__Scheduler__Event *ev);
/* Send ev on ag's stream (dropped if disconnected). */
int master_send_to_agent(struct agent *ag, const Offerd__Agent__Event *ev);
/* Fill a MasterInfo for events (strings borrowed from m; the message lives
 * in *info and *addr, both caller storage). */
void master_fill_info(const struct master *m, Mesos__V1__MasterInfo *info,
                      Mesos__V1__Address *addr);
/* The same from its parts (strings borrowed), for a master that is not
 * leading yet (master/ha.c). */
void master_fill_info_of(const char *id, const char *ip, uint16_t port,
                         const char *hostname, Mesos__V1__MasterInfo *info,
                         Mesos__V1__Address *addr);

/* Answer a SUBSCRIBE (req, consumed) with a new event stream in enc: a
 * fresh Mesos-Stream-Id written to stream_id (ID_UUID_SIZE bytes) and sent
 * as a header, then a 200 chunked reply of RecordIO records. close_cb and
 * arg as for http_stream_start. */
struct http_stream *master_stream_open(struct http_request *req,
                                       enum http_encoding enc, char *stream_id,
                                       http_stream_close_fn close_cb,
                                       void *arg);
/* Why a stream closed, for logs. */
const char *master_close_reason(enum http_close_reason why);
/* Tell fw an offer (inverse false) or inverse offer (true) with offer_id
 * is rescinded. */
void master_send_rescind(struct framework *fw, const char *offer_id,
                         bool inverse);
/* Tell every subscribed framework that agent agent_id was removed (Mesos's
 * FAILURE event with only agent_id set, sent on every agent removal after
 * the updates of its tasks). */
void master_send_agent_failure(struct master *m, const char *agent_id);

#endif
