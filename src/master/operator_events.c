/*
 * Operator API subscribers and the events they are sent; see
 * operator_events.h. Subscribers are a list on struct master; each event is
 * encoded at most once per encoding and written to every open stream. A
 * stream cut off as too slow (or closed by its peer) is unlinked and freed
 * from its close callback, which the HTTP layer runs at a safe point, never
 * inside a send: so the broadcast loop never sees its list change.
 */
#include "master/operator_events.h"

#include <stdlib.h>

#include "common/clock.h"
#include "common/json_pb.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/task_state.h"
#include "master/operator_state.h"
#include "mesos/v1/master.pb-c.h"

/* One SUBSCRIBE stream. */
struct opev_sub {
    struct master *m;
    struct http_stream *stream; /* owned; released when unlinked */
    enum http_encoding enc;     /* the encoding SUBSCRIBE accepted */
    struct opev_sub *next;
};

static void sub_unlink(struct opev_sub *sub)
{
    struct master *m = sub->m;
    for (struct opev_sub **p = &m->opev_subs; *p != NULL; p = &(*p)->next) {
        if (*p == sub) {
            *p = sub->next;
            m->nopev_subs--;
            break;
        }
    }
    http_stream_close(sub->stream);
    free(sub);
}

static void on_close(struct http_stream *s, enum http_close_reason why,
                     void *arg)
{
    struct opev_sub *sub = arg;
    if (why == HTTP_CLOSE_SLOW) {
        sub->m->metrics.opev_dropped++;
        log_warn("operator subscriber %s dropped: too slow to read its "
                 "events",
                 http_stream_peer(s));
    } else {
        log_info("operator subscriber %s gone", http_stream_peer(s));
    }
    sub_unlink(sub);
}

/* Send ev to one subscriber (only) or to all (only NULL). */
static void send_event(struct master *m, struct opev_sub *only,
                       const Mesos__V1__Master__Event *ev)
{
    uint8_t *buf[2] = {NULL, NULL};
    size_t len[2] = {0, 0};
    for (struct opev_sub *sub = only != NULL ? only : m->opev_subs; sub != NULL;
         sub = only != NULL ? NULL : sub->next) {
        if (http_stream_is_closed(sub->stream))
            continue; /* its close callback follows */
        int e = sub->enc == HTTP_ENC_JSON ? 0 : 1;
        if (buf[e] == NULL)
            buf[e] = jpb_encode(&ev->base, (enum jpb_format)sub->enc, &len[e]);
        http_stream_send_record(sub->stream, buf[e], len[e]);
    }
    free(buf[0]);
    free(buf[1]);
}

static Mesos__V1__Master__Event event_of(Mesos__V1__Master__Event__Type type)
{
    Mesos__V1__Master__Event ev = MESOS__V1__MASTER__EVENT__INIT;
    ev.has_type = true;
    ev.type = type;
    return ev;
}

void master_opev_subscribe(struct master *m, struct http_request *req,
                           enum http_encoding enc)
{
    if (m->nopev_subs >= MASTER_MAX_OPERATOR_SUBSCRIBERS) {
        /* Mesos keeps its subscribers in a circular buffer: the oldest
         * (the list's tail) makes room. */
        struct opev_sub *oldest = m->opev_subs;
        while (oldest->next != NULL)
            oldest = oldest->next;
        log_warn("operator subscriber %s dropped: %u subscribers already",
                 http_stream_peer(oldest->stream), (unsigned)m->nopev_subs);
        sub_unlink(oldest);
    }
    struct opev_sub *sub = xcalloc(1, sizeof(*sub));
    sub->m = m;
    sub->enc = enc;
    sub->stream = http_stream_start(
        req, enc == HTTP_ENC_JSON ? HTTP_CONTENT_JSON : HTTP_CONTENT_PROTOBUF,
        m->opts.operator_stream_cap, on_close, sub);
    sub->next = m->opev_subs;
    m->opev_subs = sub;
    m->nopev_subs++;
    log_info("operator subscriber %s subscribed",
             http_stream_peer(sub->stream));

    Mesos__V1__Master__Event__Subscribed sd =
        MESOS__V1__MASTER__EVENT__SUBSCRIBED__INIT;
    sd.get_state = master_opst_get_state(m);
    sd.has_heartbeat_interval_seconds = true;
    sd.heartbeat_interval_seconds = MASTER_HEARTBEAT_SECS;
    Mesos__V1__Master__Event ev =
        event_of(MESOS__V1__MASTER__EVENT__TYPE__SUBSCRIBED);
    ev.subscribed = &sd;
    send_event(m, sub, &ev);
    protobuf_c_message_free_unpacked(&sd.get_state->base, NULL);
    /* As Mesos's heartbeater: the first one at once, then periodically. */
    Mesos__V1__Master__Event hb =
        event_of(MESOS__V1__MASTER__EVENT__TYPE__HEARTBEAT);
    send_event(m, sub, &hb);
}

void master_opev_heartbeat(struct master *m)
{
    if (m->opev_subs == NULL)
        return;
    Mesos__V1__Master__Event ev =
        event_of(MESOS__V1__MASTER__EVENT__TYPE__HEARTBEAT);
    send_event(m, NULL, &ev);
}

void master_opev_task_added(struct master *m, const struct task *t)
{
    if (m->opev_subs == NULL)
        return;
    Mesos__V1__Master__Event__TaskAdded ta =
        MESOS__V1__MASTER__EVENT__TASK_ADDED__INIT;
    ta.task = master_opst_task(t);
    Mesos__V1__Master__Event ev =
        event_of(MESOS__V1__MASTER__EVENT__TYPE__TASK_ADDED);
    ev.task_added = &ta;
    send_event(m, NULL, &ev);
    protobuf_c_message_free_unpacked(&ta.task->base, NULL);
}

void master_opev_task_updated(struct master *m, const struct task *t,
                              const Mesos__V1__TaskStatus *status)
{
    if (m->opev_subs == NULL)
        return;
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = t->fw->id;
    Mesos__V1__Master__Event__TaskUpdated tu =
        MESOS__V1__MASTER__EVENT__TASK_UPDATED__INIT;
    tu.framework_id = &fid;
    tu.status = (Mesos__V1__TaskStatus *)status;
    tu.state = t->state;
    Mesos__V1__Master__Event ev =
        event_of(MESOS__V1__MASTER__EVENT__TYPE__TASK_UPDATED);
    ev.task_updated = &tu;
    send_event(m, NULL, &ev);
}

void master_opev_agent_added(struct master *m, const struct agent *ag)
{
    if (m->opev_subs == NULL)
        return;
    Mesos__V1__Master__Event__AgentAdded aa =
        MESOS__V1__MASTER__EVENT__AGENT_ADDED__INIT;
    aa.agent = master_opst_agent(ag);
    Mesos__V1__Master__Event ev =
        event_of(MESOS__V1__MASTER__EVENT__TYPE__AGENT_ADDED);
    ev.agent_added = &aa;
    send_event(m, NULL, &ev);
    protobuf_c_message_free_unpacked(&aa.agent->base, NULL);
}

void master_opev_agent_removed(struct master *m, const char *agent_id)
{
    if (m->opev_subs == NULL)
        return;
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = (char *)agent_id;
    Mesos__V1__Master__Event__AgentRemoved ar =
        MESOS__V1__MASTER__EVENT__AGENT_REMOVED__INIT;
    ar.agent_id = &aid;
    Mesos__V1__Master__Event ev =
        event_of(MESOS__V1__MASTER__EVENT__TYPE__AGENT_REMOVED);
    ev.agent_removed = &ar;
    send_event(m, NULL, &ev);
}

void master_opev_framework(struct master *m, const struct framework *fw,
                           bool added)
{
    if (m->opev_subs == NULL)
        return;
    Mesos__V1__Master__Response__GetFrameworks__Framework *f =
        master_opst_framework(fw);
    Mesos__V1__Master__Event__FrameworkAdded fa =
        MESOS__V1__MASTER__EVENT__FRAMEWORK_ADDED__INIT;
    Mesos__V1__Master__Event__FrameworkUpdated fu =
        MESOS__V1__MASTER__EVENT__FRAMEWORK_UPDATED__INIT;
    Mesos__V1__Master__Event ev;
    if (added) {
        fa.framework = f;
        ev = event_of(MESOS__V1__MASTER__EVENT__TYPE__FRAMEWORK_ADDED);
        ev.framework_added = &fa;
    } else {
        fu.framework = f;
        ev = event_of(MESOS__V1__MASTER__EVENT__TYPE__FRAMEWORK_UPDATED);
        ev.framework_updated = &fu;
    }
    send_event(m, NULL, &ev);
    protobuf_c_message_free_unpacked(&f->base, NULL);
}

void master_opev_framework_removing(struct master *m,
                                    const struct framework *fw)
{
    if (m->opev_subs == NULL)
        return;
    /* Mesos kills the tasks of a removed framework with TASK_KILLED from
     * the master (REASON_FRAMEWORK_REMOVED) and tells subscribers so. */
    size_t pos = 0;
    void *val;
    while (hmap_next(fw->tasks, &pos, NULL, &val)) {
        const struct task *t = val;
        if (task_state_is_terminal(t->state))
            continue;
        Mesos__V1__TaskStatus st = MESOS__V1__TASK_STATUS__INIT;
        Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
        st.task_id = t->info->task_id;
        st.state = MESOS__V1__TASK_STATE__TASK_KILLED;
        st.has_source = true;
        st.source = MESOS__V1__TASK_STATUS__SOURCE__SOURCE_MASTER;
        st.has_reason = true;
        st.reason = MESOS__V1__TASK_STATUS__REASON__REASON_FRAMEWORK_REMOVED;
        st.message = "Framework removed";
        st.has_timestamp = true;
        st.timestamp = clock_wall_secs();
        if (t->agent != NULL) {
            aid.value = t->agent->id;
            st.agent_id = &aid;
        }
        Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
        fid.value = fw->id;
        Mesos__V1__Master__Event__TaskUpdated tu =
            MESOS__V1__MASTER__EVENT__TASK_UPDATED__INIT;
        tu.framework_id = &fid;
        tu.status = &st;
        tu.state = MESOS__V1__TASK_STATE__TASK_KILLED;
        Mesos__V1__Master__Event ev =
            event_of(MESOS__V1__MASTER__EVENT__TYPE__TASK_UPDATED);
        ev.task_updated = &tu;
        send_event(m, NULL, &ev);
    }
    Mesos__V1__Master__Event__FrameworkRemoved fr =
        MESOS__V1__MASTER__EVENT__FRAMEWORK_REMOVED__INIT;
    fr.framework_info = fw->info;
    Mesos__V1__Master__Event ev =
        event_of(MESOS__V1__MASTER__EVENT__TYPE__FRAMEWORK_REMOVED);
    ev.framework_removed = &fr;
    send_event(m, NULL, &ev);
}

void master_opev_free_all(struct master *m)
{
    while (m->opev_subs != NULL)
        sub_unlink(m->opev_subs);
}
