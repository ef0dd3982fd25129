/*
 * Sending events: encoding an event in the encoding of the stream it goes
 * on and writing it as one RecordIO record. Every event the master sends to
 * a framework or an agent passes here.
 */
#ifndef OFFERD_MASTER_SEND_H
#define OFFERD_MASTER_SEND_H

#include "master/master_types.h"

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

#endif
