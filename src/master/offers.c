/*
 * Offers: each decision of the allocator becomes an offer held by the
 * master (id, framework, agent, role, resources) until the framework accepts
 * or declines it, it times out (--offer_timeout), or it is rescinded (agent
 * gone or deactivated, framework disconnected). Offers made in one cycle
 * reach each framework as one OFFERS event.
 */
#include "master/offers.h"

#include <event2/event.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/json_pb.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/resources_pb.h"
#include "master/master.h"
#include "master/metrics_counters.h"
#include "master/send.h"

static void on_offer_timeout(evutil_socket_t fd, short what, void *arg);

/* ---- An offer's life ------------------------------------------------------
 * offers.c owns struct offer: offer_new makes one and indexes it in the
 * master's, the framework's and the agent's maps; offer_unlink takes it out
 * of them and stops its timer; offer_free_mem frees the memory. */

static struct offer *offer_new(struct master *m, const char *id,
                               struct framework *fw, struct agent *ag,
                               const char *role, const res_list *resources,
                               const struct alloc_unavailability *unav)
{
    struct offer *o = xcalloc(1, sizeof(*o));
    o->id = xstrdup(id);
    o->fw = fw;
    o->agent = ag;
    o->role = xstrdup(role);
    o->created_ns = clock_monotonic_ns();
    /* One allocation for the list and its strings: the offer's
     * resources are only read until the offer goes. */
    res_list_copy_packed(&o->resources, resources, role);
    if (unav != NULL) {
        o->has_unav = true;
        o->unav = *unav;
    }
    hmap_put(m->offers, o->id, o);
    master_mc_offer_added(m, o);
    hmap_put(fw->offers, o->id, o);
    hmap_put(ag->offers, o->id, o);
    if (m->flags->offer_timeout > 0) {
        o->timer = evtimer_new(m->base, on_offer_timeout, o);
        int64_t ns = m->flags->offer_timeout;
        struct timeval tv = {(time_t)(ns / CLOCK_NS_PER_SEC),
                             (suseconds_t)((ns % CLOCK_NS_PER_SEC) / 1000)};
        evtimer_add(o->timer, &tv);
    }
    return o;
}

static void offer_unlink(struct master *m, struct offer *o)
{
    master_mc_offer_removed(m, o);
    hmap_del(m->offers, o->id);
    hmap_del(o->fw->offers, o->id);
    hmap_del(o->agent->offers, o->id);
    if (o->timer != NULL) {
        event_free(o->timer);
        o->timer = NULL;
    }
}

static void offer_free_mem(struct offer *o)
{
    res_list_free_packed(&o->resources);
    free(o->role);
    free(o->id);
    free(o);
}

void master_offer_answered(struct master *m, const struct offer *o)
{
    prom_hist_observe(&m->metrics.offer_answer,
                      (double)(clock_monotonic_ns() - o->created_ns) /
                          (double)CLOCK_NS_PER_SEC);
}

void master_offer_take(struct master *m, struct offer *o, res_list *into)
{
    master_offer_answered(m, o);
    offer_unlink(m, o);
    res_list_add_all(into, &o->resources);
    offer_free_mem(o);
}

void master_offers_free_all(struct master *m)
{
    size_t pos = 0;
    void *val;
    while (hmap_next(m->offers, &pos, NULL, &val)) {
        struct offer *o = val;
        if (o->timer != NULL)
            event_free(o->timer);
        offer_free_mem(o);
    }
    hmap_free(m->offers, NULL);
    m->offers = NULL;
}

void master_offer_from_alloc(void *arg, void *framework_udata,
                             void *agent_udata, const char *role,
                             const res_list *resources,
                             const struct alloc_unavailability *unav)
{
    struct master *m = arg;
    struct framework *fw = framework_udata;
    struct agent *ag = agent_udata;
    char id[ID_DERIVED_SIZE];
    id_derive(ID_OFFER, m->id, m->next_offer++, id, sizeof(id));

    struct offer *o = offer_new(m, id, fw, ag, role, resources, unav);
    if (fw->npending == 0) {
        if (m->ncycle_fws == m->capcycle_fws) {
            m->capcycle_fws = m->capcycle_fws ? 2 * m->capcycle_fws : 16;
            m->cycle_fws = xreallocarray(m->cycle_fws, m->capcycle_fws,
                                         sizeof(*m->cycle_fws));
        }
        m->cycle_fws[m->ncycle_fws++] = fw;
    }
    if (fw->npending == fw->cappending) {
        fw->cappending = fw->cappending ? 2 * fw->cappending : 8;
        fw->pending_offers = xreallocarray(fw->pending_offers, fw->cappending,
                                           sizeof(*fw->pending_offers));
    }
    fw->pending_offers[fw->npending++] = o;
}

/* ---- Building Offer messages --------------------------------------------- */

/* Storage for one Offer message and what it points to. */
struct offer_msg {
    Mesos__V1__Offer offer;
    Mesos__V1__OfferID id;
    Mesos__V1__FrameworkID fid;
    Mesos__V1__AgentID aid;
    Mesos__V1__URL url;
    Mesos__V1__Address addr;
    Mesos__V1__Unavailability unav;
    Mesos__V1__TimeInfo start;
    Mesos__V1__DurationInfo duration;
    Mesos__V1__Resource__AllocationInfo alloc;
};

static void build_offer(struct offer_msg *om, const struct offer *o)
{
    const struct agent *ag = o->agent;
    mesos__v1__offer__init(&om->offer);
    mesos__v1__offer_id__init(&om->id);
    om->id.value = o->id;
    om->offer.id = &om->id;
    mesos__v1__framework_id__init(&om->fid);
    om->fid.value = o->fw->id;
    om->offer.framework_id = &om->fid;
    mesos__v1__agent_id__init(&om->aid);
    om->aid.value = ag->id;
    om->offer.agent_id = &om->aid;
    om->offer.hostname = ag->info->hostname;
    mesos__v1__url__init(&om->url);
    mesos__v1__address__init(&om->addr);
    om->url.scheme = "http";
    om->addr.hostname = ag->info->hostname;
    om->addr.ip = ag->ip;
    om->addr.port = ag->port;
    om->url.address = &om->addr;
    om->url.path = "/slave(1)";
    om->offer.url = &om->url;
    /* The agent's domain, as Mesos sets Offer.domain (borrowed, as the
     * attributes are). */
    om->offer.domain = ag->info->domain;
    om->offer.resources = res_list_to_pb(&o->resources, o->fw->refinement,
                                         &om->offer.n_resources);
    om->offer.attributes = ag->info->attributes;
    om->offer.n_attributes = ag->info->n_attributes;
    mesos__v1__resource__allocation_info__init(&om->alloc);
    om->alloc.role = o->role;
    om->offer.allocation_info = &om->alloc;
    if (o->has_unav) {
        mesos__v1__unavailability__init(&om->unav);
        mesos__v1__time_info__init(&om->start);
        om->start.nanoseconds = o->unav.start_ns;
        om->unav.start = &om->start;
        if (o->unav.duration_ns >= 0) {
            mesos__v1__duration_info__init(&om->duration);
            om->duration.nanoseconds = o->unav.duration_ns;
            om->unav.duration = &om->duration;
        }
        om->offer.unavailability = &om->unav;
    }
}

Mesos__V1__Offer *master_offer_pb(const struct offer *o)
{
    struct offer_msg om;
    build_offer(&om, o);
    Mesos__V1__Offer *copy =
        jpb_copy(&mesos__v1__offer__descriptor, &om.offer.base);
    res_pb_array_free(om.offer.resources, om.offer.n_resources);
    return copy;
}

/* Send fw the offers ptrs[0..n) in one OFFERS event. */
static void send_offers(struct framework *fw, Mesos__V1__Offer **ptrs,
                        uint32_t n)
{
    Mesos__V1__Scheduler__Event__Offers ofs =
        MESOS__V1__SCHEDULER__EVENT__OFFERS__INIT;
    ofs.offers = ptrs;
    ofs.n_offers = n;
    Mesos__V1__Scheduler__Event ev = MESOS__V1__SCHEDULER__EVENT__INIT;
    ev.has_type = true;
    ev.type = MESOS__V1__SCHEDULER__EVENT__TYPE__OFFERS;
    ev.offers = &ofs;
    master_send_to_framework(fw, &ev);
}

void master_offers_flush(struct master *m)
{
    for (uint32_t i = 0; i < m->ncycle_fws; i++) {
        struct framework *fw = m->cycle_fws[i];
        uint32_t n = fw->npending;
        struct offer_msg *msgs = xcalloc(n, sizeof(*msgs));
        Mesos__V1__Offer **ptrs = xcalloc(n, sizeof(*ptrs));
        for (uint32_t k = 0; k < n; k++) {
            build_offer(&msgs[k], fw->pending_offers[k]);
            ptrs[k] = &msgs[k].offer;
        }
        /* One cycle's offers go out in as few events as fit the bound
         * (a cycle over 10,000 agents with large attributes would make one
         * event of tens of MiB, which clients and the stream's cap refuse);
         * an offer larger than the bound goes alone. */
        uint32_t start = 0;
        size_t bytes = 0;
        for (uint32_t k = 0; k < n; k++) {
            size_t sz = mesos__v1__offer__get_packed_size(ptrs[k]) + 8;
            if (k > start && bytes + sz > MASTER_OFFERS_EVENT_MAX_BYTES) {
                send_offers(fw, ptrs + start, k - start);
                start = k;
                bytes = 0;
            }
            bytes += sz;
        }
        if (n > start)
            send_offers(fw, ptrs + start, n - start);
        for (uint32_t k = 0; k < n; k++)
            res_pb_array_free(msgs[k].offer.resources,
                              msgs[k].offer.n_resources);
        free(ptrs);
        free(msgs);
        fw->npending = 0;
    }
    m->ncycle_fws = 0;
}

/* ---- Removing offers --------------------------------------------------------
 */

void master_offer_remove(struct master *m, struct offer *o, bool rescind,
                         int64_t refuse_ns)
{
    offer_unlink(m, o);
    if (rescind) {
        master_send_rescind(o->fw, o->id, false);
        m->metrics.offers_rescinded++;
    }
    if (o->agent->alloc != NULL && o->fw->alloc != NULL &&
        alloc_recover(m->alloc, o->agent->alloc, o->fw->alloc, &o->resources,
                      refuse_ns, clock_monotonic_ns()) != 0)
        log_error("allocator did not hold offer %s", o->id);
    master_allocate_soon(m);
    offer_free_mem(o);
}

static void on_offer_timeout(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct offer *o = arg;
    struct master *m = o->fw->m;
    log_info("offer %s to framework %s timed out", o->id, o->fw->id);
    master_offer_remove(m, o, true, 0);
}

/* Remove every offer in map (collected first: removal edits the map). */
static void remove_all(struct master *m, struct hmap *map, bool rescind)
{
    size_t n = hmap_count(map);
    if (n == 0)
        return;
    struct offer **v = xcalloc(n, sizeof(*v));
    size_t pos = 0, k = 0;
    void *val;
    while (hmap_next(map, &pos, NULL, &val))
        v[k++] = val;
    for (size_t i = 0; i < k; i++)
        master_offer_remove(m, v[i], rescind, 0);
    free(v);
}

void master_offers_of_framework(struct master *m, struct framework *fw,
                                bool rescind)
{
    remove_all(m, fw->offers, rescind);
}

void master_offers_on_agent(struct master *m, struct agent *ag, bool rescind)
{
    remove_all(m, ag->offers, rescind);
}
