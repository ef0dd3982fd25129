/*
 * Offers: creation from the allocator's decisions, rescinds, timeouts. The
 * owner of struct offer: offers.c creates and frees it.
 */
#ifndef OFFERD_MASTER_OFFERS_H
#define OFFERD_MASTER_OFFERS_H

#include "master/master_types.h"

/* The allocator's offer callback (alloc_offer_fn). */
void master_offer_from_alloc(void *arg, void *framework_udata,
                             void *agent_udata, const char *role,
                             const res_list *resources,
                             const struct alloc_unavailability *unav);
/* Send every framework its offers made in this cycle. */
void master_offers_flush(struct master *m);

/* The most bytes of offers (protobuf) one OFFERS event carries: a cycle's
 * offers to a framework are split into events of at most this much (an
 * offer larger than it goes alone). */
#define MASTER_OFFERS_EVENT_MAX_BYTES ((size_t)1 << 20)
/* o as the Offer a framework is sent, a new message of the caller's
 * (release with protobuf_c_message_free_unpacked). */
Mesos__V1__Offer *master_offer_pb(const struct offer *o);
/* Forget an offer and give its resources back (refuse_ns >= 0: with a
 * filter). With rescind, tell the framework (RESCIND). */
void master_offer_remove(struct master *m, struct offer *o, bool rescind,
                         int64_t refuse_ns);
/* Accept o: forget it and add its resources to *into, where they stay
 * allocated to its framework (the caller uses them or recovers them). */
void master_offer_take(struct master *m, struct offer *o, res_list *into);

/* Count o's time from creation to now in the offer_accept_seconds
 * histogram: its framework answered it (master_offer_take does it for an
 * ACCEPT; DECLINE calls it before removing the offer). */
void master_offer_answered(struct master *m, const struct offer *o);
/* At shutdown: free every offer without telling anyone (the allocator and
 * the frameworks are going away too). */
void master_offers_free_all(struct master *m);
/* Remove every offer of fw / on ag. */
void master_offers_of_framework(struct master *m, struct framework *fw,
                                bool rescind);
void master_offers_on_agent(struct master *m, struct agent *ag, bool rescind);

#endif
